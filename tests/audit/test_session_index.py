"""The JSONL log's session index (a long-lived process's, :mod:`forge_policy.audit._index`):
``session_records_since`` through it returns exactly what the full backward read returns, whatever
was appended, by which process, and however the log was rotated, truncated, torn or rewritten
between two lookups; a log that cannot be read is an error through it too, never "no records".

The reference is a second sink on the same path without the index: every lookup compares the
two at the same moment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from forge_policy._time import iso
from forge_policy.audit._index import sessions_in
from forge_policy.audit.jsonl import JsonlAuditSink
from forge_policy.audit.verify import GENESIS, canonical, encode_line, line_hash, parse_line
from forge_policy.config.env import Config
from forge_policy.errors import AuditError

NOW = 1_800_000_000.0
#: ids a record may carry: quotes, backslashes and non-ASCII text take the parsing path
SESSIONS = ("s1", "s2", 's"q', "s\\b", "sé", "")
#: ids only a rewrite of the log in place writes: an index that kept the old content misses them
REWRITTEN = ("r1", "r2")
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)


@st.composite
def records(draw: st.DrawFn) -> dict[str, Any]:
    record: dict[str, Any] = {"kind": draw(st.sampled_from(["seen", "violation", "block"]))}
    session = draw(st.sampled_from(SESSIONS) | st.none() | st.integers())
    if session is not None:
        record["session_id"] = session
    stamp = draw(st.none() | st.floats(-300, 300) | st.just("garbage"))
    if isinstance(stamp, float):
        record["timestamp"] = iso(NOW + stamp)
    elif stamp is not None:
        record["timestamp"] = stamp
    if draw(st.booleans()):  # a nested session id is not the record's
        record["detail"] = {"session_id": draw(st.sampled_from(SESSIONS))}
    if draw(st.booleans()):
        record["note"] = draw(st.text(max_size=12))
    return record


operations = st.one_of(
    st.tuples(st.just("append"), st.lists(records(), min_size=1, max_size=4)),
    st.tuples(st.just("torn"), st.binary(min_size=1, max_size=30).filter(lambda b: b"\n" not in b)),
    st.tuples(st.just("raw"), st.binary(max_size=40)),  # anything at all, newline included
    st.tuples(st.just("rotate"), st.just(None)),
    st.tuples(st.just("truncate"), st.integers(0, 10)),
    st.tuples(st.just("rewrite"), st.lists(st.sampled_from(REWRITTEN), min_size=1, max_size=3)),
    st.tuples(
        st.just("lookup"), st.sampled_from((*SESSIONS, *REWRITTEN, "never")), st.floats(-400, 400)
    ),
)


def _lookup_matches(indexed: JsonlAuditSink, plain: JsonlAuditSink) -> None:
    for session in (*SESSIONS, *REWRITTEN, "never"):
        for since in (NOW - 400, NOW, NOW + 400):
            assert indexed.session_records_since(session, since) == plain.session_records_since(
                session, since
            )


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=st.lists(operations, min_size=1, max_size=25))
@example(  # rewritten in place, longer, with a session the index never read
    ops=[
        ("append", [{"kind": "seen", "session_id": "s1", "timestamp": iso(NOW)}]),
        ("lookup", "r1", 0.0),
        ("rewrite", ["r1"]),
    ]
)
def test_the_indexed_lookup_returns_what_the_full_read_returns(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[Any, ...]]
) -> None:
    log = tmp_path_factory.mktemp("index") / "audit" / "overrides.log"
    indexed = JsonlAuditSink(log, fsync=False, session_index=True)
    plain = JsonlAuditSink(log, fsync=False)  # the reference, and the index's answer's check
    writer = JsonlAuditSink(log, fsync=False)  # another process's appends, seen only on disk
    for op in ops:
        kind = op[0]
        if kind == "append":
            writer.append_many(op[1])
        elif kind in ("torn", "raw") and log.exists():
            with open(log, "ab") as handle:
                handle.write(op[1])
        elif kind == "rotate" and log.exists():
            log.rename(log.with_name(f"rotated-{len(os.listdir(log.parent))}"))
        elif kind == "truncate" and log.exists():
            lines = log.read_bytes().split(b"\n")
            log.write_bytes(b"\n".join(lines[: op[1]]))  # in place: the same inode
        elif kind == "rewrite" and log.exists():
            # in place (the same inode), at least as long, with sessions never appended
            size = log.stat().st_size
            with open(log, "r+b") as handle:
                handle.truncate(0)
                prev = GENESIS
                for seq, session in enumerate(op[1], 1):
                    record = {"kind": "block", "session_id": session, "timestamp": iso(NOW)}
                    line = encode_line({**record, "~pad": "x" * (size // len(op[1]))}, seq, prev)
                    handle.write(line + b"\n")
                    prev = line_hash(line)
        elif kind == "lookup":
            _, session, since = op
            expected = plain.session_records_since(session, NOW + since)
            assert indexed.session_records_since(session, NOW + since) == expected
        _lookup_matches(indexed, plain)  # after every change: the index reads on from there


def test_appends_of_another_process_between_lookups_are_seen(tmp_path: Path) -> None:
    log = tmp_path / "audit" / "overrides.log"
    indexed = JsonlAuditSink(log, fsync=False, session_index=True)
    writer = JsonlAuditSink(log, fsync=False)
    writer.append_many([{"kind": "seen", "session_id": "a", "timestamp": iso(NOW)}])
    assert indexed.session_records_since("b", NOW - 60) == []
    script = (
        "import sys; from forge_policy.audit.jsonl import JsonlAuditSink as S; "
        "S(sys.argv[1], fsync=False).append_many("
        "[{'kind': 'violation', 'session_id': 'b', 'timestamp': sys.argv[2]}])"
    )
    subprocess.run([sys.executable, "-c", script, str(log), iso(NOW)], check=True)
    assert [r["kind"] for r in indexed.session_records_since("b", NOW - 60)] == ["violation"]
    assert indexed.session_records_since("c", NOW - 60) == []


def test_an_unterminated_last_record_counts_before_its_newline(tmp_path: Path) -> None:
    """A record written without its newline (kept by the next append, not dropped) is read by
    the full read: the index looks at it though it does not keep it."""
    log = tmp_path / "overrides.log"
    line = encode_line({"kind": "block", "session_id": "a", "timestamp": iso(NOW)}, 1, GENESIS)
    log.write_bytes(line)
    indexed = JsonlAuditSink(log, fsync=False, session_index=True)
    assert len(indexed.session_records_since("a", NOW - 60)) == 1
    assert indexed.session_records_since("b", NOW - 60) == []


@pytest.mark.parametrize("broken", ["folder", "symlink"])
def test_a_log_that_cannot_be_read_is_an_error_not_an_empty_session(
    tmp_path: Path, broken: str
) -> None:
    log = tmp_path / "audit" / "overrides.log"
    indexed = JsonlAuditSink(log, fsync=False, session_index=True)
    indexed.append_many([{"kind": "seen", "session_id": "a", "timestamp": iso(NOW)}])
    assert indexed.session_records_since("b", NOW - 60) == []  # indexed
    log.unlink()
    if broken == "folder":
        log.mkdir()
    else:
        log.symlink_to(tmp_path / "elsewhere.log")
    with pytest.raises(AuditError):
        indexed.session_records_since("b", NOW - 60)
    with pytest.raises(AuditError):
        JsonlAuditSink(log, fsync=False).session_records_since("b", NOW - 60)


keys = st.text(max_size=6) | st.just("session_id")


@given(
    record=st.dictionaries(keys, json_values | st.sampled_from(SESSIONS), max_size=5),
    spelling=st.sampled_from(["canonical", "spaced", "ascii"]),
)
def test_every_session_a_line_holds_is_found(record: dict[str, Any], spelling: str) -> None:
    """:func:`sessions_in` finds at least the ``session_id`` a parsed line holds, however the
    line is spelled (escapes, spaces)."""
    body = {**record, "seq": 1}
    if spelling == "canonical":
        line = canonical(body)
    else:
        line = json.dumps(body, ensure_ascii=spelling == "ascii", indent=None).encode()
        if spelling == "spaced":
            line = line.replace(b'":', b'" :  ')
    parsed = parse_line(line)
    session = parsed.get("session_id") if parsed is not None else None
    if isinstance(session, str):
        assert session in sessions_in(line)
        assert session in sessions_in(b"junk\n" + line + b"\n" + line)


def test_only_a_long_lived_process_keeps_the_index(tmp_path: Path) -> None:
    """The worker and ``serve`` (a connection pool) index the log; a one-call hook process,
    which would read the whole log to build it, reads back from the end as before."""
    config = Config(root=str(tmp_path), store="memory")
    assert config.build_evaluator(pool_size=8).audit.sink()._index is not None  # type: ignore[attr-defined]
    assert config.build_evaluator().audit.sink()._index is None  # type: ignore[attr-defined]


def _writes_without_a_look(long_lived: bool, root: Path) -> list[tuple[str, ...]]:
    """Six writes nothing credited in session s1, its state deleted before each (every one is
    rebuilt from the log), a new session's Read between them; the levels decided."""
    import forge_policy as fp

    evaluator = Config(root=str(root / ".forge")).build_evaluator(pool_size=8 if long_lived else 1)
    levels = []
    for i in range(6):
        (root / ".forge" / "runtime" / "state.json").unlink(missing_ok=True)
        read = {"file_path": str(root / "src" / f"r{i}.py")}
        evaluator.evaluate(fp.Event("PreToolUse", f"new-{i}", tool_name="Read", tool_input=read))
        write = {"file_path": str(root / "src" / f"w{i}.py"), "content": "X = 1\n"}
        decision = evaluator.evaluate(
            fp.Event("PreToolUse", "s1", tool_name="Write", tool_input=write)
        )
        levels.append(tuple(str(v.level) for v in decision.violations))
    return levels


def test_the_worker_rebuilds_a_logged_session_as_a_hook_process_does(tmp_path: Path) -> None:
    """Through the evaluator the worker builds (its sink indexed), a session with no state
    is rebuilt from its records as the one-call hook rebuilds it: its count goes on."""
    indexed = _writes_without_a_look(True, tmp_path / "worker")
    assert indexed == _writes_without_a_look(False, tmp_path / "hook")
    assert indexed[-1] == ("soft_block",)  # the sixth violation: counted on the five before


def test_a_log_over_the_cap_is_read_back_without_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from forge_policy.audit import _index

    log = tmp_path / "overrides.log"
    indexed = JsonlAuditSink(log, fsync=False, session_index=True)
    indexed.append_many([{"kind": "block", "session_id": "a", "timestamp": iso(NOW)}])
    assert indexed.session_records_since("b", NOW - 60) == []
    monkeypatch.setattr(_index, "MAX_BYTES", log.stat().st_size)  # at the cap: still indexed
    indexed.append_many([{"kind": "block", "session_id": "b", "timestamp": iso(NOW)}])
    assert [r["session_id"] for r in indexed.session_records_since("b", NOW - 60)] == ["b"]
    assert [r["session_id"] for r in indexed.session_records_since("a", NOW - 60)] == ["a"]
    assert indexed.session_records_since("c", NOW - 60) == []
