"""One suite over every audit sink: memory (the oracle), JSONL and SQLite."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import pytest

import forge_policy as fp
from forge_policy.audit.base import AuditSink, Checkpointed, Verifiable, session_records
from forge_policy.audit.insights import override_ids, summarize

from .conftest import FakeClock, block, make_sink, override

# an AWS key id, built here so that the file itself holds none (AKIA…EXAMPLE is a placeholder)
AWS_ID = "AKIA" + "IOSFODNN7EXAMPL3"

if TYPE_CHECKING:
    from pathlib import Path


def plain(records: Any) -> list[dict[str, Any]]:
    """Records without the ``seq`` the persistent sinks add."""
    return [{k: v for k, v in r.items() if k != "seq"} for r in records]


def test_is_an_audit_sink(sink: Any) -> None:
    assert isinstance(sink, AuditSink)


def test_empty(sink: Any) -> None:
    assert list(sink.records()) == []
    sink.append_many([])
    assert list(sink.records()) == []


def test_append_and_read_back_in_order(sink: Any) -> None:
    first = [block(1), override("o1"), {"kind": "bypass", "behaviors": ["a", "b"], "n": None}]
    second = [block(2), {"kind": "violation", "nested": {"x": [1, 2.5, True]}}]
    sink.append_many(first)
    sink.append_many(iter(second))  # any iterable
    assert plain(sink.records()) == first + second


def test_a_verifiable_sink_numbers_its_records_from_one(sink: Any, backend: str) -> None:
    assert isinstance(sink, Verifiable) == (backend != "memory")
    sink.append_many([block(i) for i in range(10)])
    sink.append_many([{**block(10), "seq": 99, "prev": "forged"}])  # the sink's keys, replaced
    seqs = [r.get("seq") for r in sink.records()]
    if isinstance(sink, Verifiable):
        assert seqs == list(range(1, 12))
        assert sink.verify().ok
    else:
        assert seqs == [None] * 10 + [99]


def test_a_checkpointed_sink_says_where_each_append_began_and_ended(sink: Any) -> None:
    if not isinstance(sink, Checkpointed):
        pytest.skip(f"{sink!r} keeps no checkpoints (an optional capability)")
    assert sink.last_append is None
    sink.append_many([block(0), block(1)])
    first = sink.last_append
    assert first is not None and (first.before, first.seq) == (0, 2)
    sink.append_many([block(2)])
    second = sink.last_append
    assert second is not None and (second.before, second.seq) == (2, 3)
    assert second.origin == first.origin != second.hash  # the first line names the log
    checkpoints = [("s", 1, first.origin), ("s", 2, first.hash), ("s", 3, second.hash)]
    assert sink.verify(checkpoints).ok


def test_checkpoints_the_log_does_not_hold_fail_verify(backend: str, tmp_path: Path) -> None:
    sink = make_sink(backend, tmp_path)
    if not isinstance(sink, Checkpointed):
        pytest.skip(f"{sink!r} keeps no checkpoints (an optional capability)")
    sink.append_many([block(i) for i in range(3)])
    seen = sink.last_append
    assert seen is not None
    sink.close()
    for path in (tmp_path / "audit").iterdir():  # the log and its anchor, deleted together
        path.unlink()
    sink = make_sink(backend, tmp_path)
    assert sink.verify().ok  # alone, an empty log is a fine log...
    ahead = sink.verify([("s1", seen.seq, seen.hash)])
    assert not ahead.ok and "saw it reach seq 3" in ahead.problems[0]  # ...but s1 saw 3 records
    sink.append_many([block(i) for i in range(10, 15)])  # and a new chain past it is another log
    replaced = sink.verify([("s1", 1, seen.origin), ("s1", seen.seq, seen.hash)])
    assert len(replaced.problems) == 2
    assert all("not the record session 's1' saw written" in p for p in replaced.problems)
    sink.close()


def test_caller_records_are_not_mutated(sink: Any) -> None:
    record = block(1)
    before = dict(record)
    sink.append_many([record])
    assert record == before
    read = next(iter(sink.records()))
    read["kind"] = "changed"
    assert next(iter(sink.records()))["kind"] == "block"


def test_nested_values_read_back_are_copies(sink: Any) -> None:
    record = {"kind": "bypass", "behaviors": ["a"], "nested": {"x": [1]}}
    sink.append_many([record])
    record["behaviors"].append("changed after the append")
    read = next(iter(sink.records()))
    read["behaviors"].append("b")
    read["nested"]["x"].append(2)
    assert plain(sink.records()) == [{"kind": "bypass", "behaviors": ["a"], "nested": {"x": [1]}}]


def test_persistent_sinks_survive_reopening(backend: str, tmp_path: Path) -> None:
    if backend == "memory":
        return
    sink = make_sink(backend, tmp_path)
    sink.append_many([block(1), override("o1")])
    sink.close()
    sink.close()
    again = make_sink(backend, tmp_path)
    again.append_many([block(2)])
    assert plain(again.records()) == [block(1), override("o1"), block(2)]
    assert again.verify().ok
    again.close()


def test_threads_keep_every_record_and_their_order(sink: Any) -> None:
    def work(t: int) -> None:
        for i in range(25):
            sink.append_many([{"kind": "block", "thread": t, "i": i}])

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    records = list(sink.records())
    assert len(records) == 100
    for t in range(4):
        assert [r["i"] for r in records if r["thread"] == t] == list(range(25))
    if isinstance(sink, Verifiable):
        assert sink.verify().ok


def test_reading_helpers_agree_over_sinks(sink: Any) -> None:
    records = [
        block(5),
        override("o1"),
        block(6, session="s2"),
        override("o2", session="s2"),
        {"kind": "recovery"},
    ]
    sink.append_many(records)
    assert override_ids(sink) == {"o1", "o2"}
    assert plain(session_records(sink, "s2")) == records[2:4]
    assert summarize(sink.records()) == summarize(records)


def test_evaluator_writes_blocks_and_a_retry_override(sink: Any, clock: FakeClock) -> None:
    ev = fp.Evaluator(fp.builtin_catalog(), audit=sink, clock=clock)
    for i in range(5):
        clock.advance(1)
        decision = ev.evaluate(
            fp.Event(
                "PreToolUse",
                "s1",
                tool_name="Write",
                tool_input={"file_path": f"/src/m{i}.py", "content": "x = 1\n"},
            )
        )
    assert decision.blocked
    clock.advance(10)
    retry = ev.evaluate(
        fp.Event(
            "PreToolUse",
            "s1",
            tool_name="Write",
            tool_input={"file_path": "/src/m4.py", "content": "x = 1\n"},
            tool_use_id="toolu_other",
        )
    )
    assert not retry.blocked
    # every counted violation is on the record (the source of truth), then the block it led to
    violations = [r for r in sink.records() if r["kind"] == "violation"]
    assert [r["counter"] for r in violations if r["behavior_id"] == "search-first"] == [1, 2, 3, 4]
    records = [r for r in sink.records() if r["kind"] != "violation"]
    assert [r["kind"] for r in records] == ["block", "override"]
    assert records[0]["counter"] == 5
    (oid,) = override_ids(sink)
    assert ev.status("s1").behaviors["search-first"].overrides == 1
    assert summarize(records).behaviors["search-first"].override_rate == 1.0
    assert oid == records[1]["override_id"]


def test_secrets_never_reach_the_sink(
    sink: Any, backend: str, request: pytest.FixtureRequest
) -> None:
    sink.append_many(
        [
            {
                "kind": "override",
                "reason": "key sk-abcdefghijklmnopqrstuvwx",
                "input_summary": f'Bash: export AWS={AWS_ID} password="pw12345"',
            }
        ]
    )
    text = repr(list(sink.records()))
    for secret in ("sk-abcdefghijklmnopqrstuvwx", AWS_ID, "pw12345"):
        assert secret not in text


def _stamped(i: int, session: str, at: float, **extra: Any) -> dict[str, Any]:
    from forge_policy._time import iso

    return {**block(i, session), "timestamp": iso(at), **extra}


def test_one_sessions_recent_records_are_those_of_the_recent_records(sink: Any) -> None:
    """A sink's ``session_records_since`` (a cheaper read of one session) returns at least
    what ``records_since`` returns for that session; here, in order, exactly that."""
    from forge_policy.audit.base import RecordsSince, SessionRecordsSince, recent_records

    t0 = 1_800_000_000.0
    records = [_stamped(i, f"s{i % 3}", t0 + i) for i in range(30)]
    # another session's record holding an older nested stamp must not end the scan early
    records.insert(25, _stamped(99, "s2", t0 + 25, nested={"timestamp": "2000-01-01T00:00:00Z"}))
    records.append({"kind": "diagnostic", "session_id": "s1"})  # unstamped: never ends it
    sink.append_many(records)
    for session in ("s0", "s1", "s2", "nobody", 's"1'):
        for since in (0.0, t0 + 10.5, t0 + 24.5, t0 + 100):
            expected = [
                r
                for r in (sink.records_since(since) if isinstance(sink, RecordsSince) else [])
                if r.get("session_id") == session
            ]
            if isinstance(sink, SessionRecordsSince):
                assert list(sink.session_records_since(session, since)) == expected
            if isinstance(sink, RecordsSince):
                assert list(recent_records(sink, session, since)) == expected
