"""The JSONL audit log: layout, hash chain, tamper detection, torn-tail repair, redaction."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import pytest

from forge_policy.audit.base import write
from forge_policy.audit.jsonl import JsonlAuditSink, default_path
from forge_policy.audit.lazy import LazyJsonlSink
from forge_policy.audit.verify import GENESIS, line_hash
from forge_policy.errors import AuditError, AuditIntegrityError, LockTimeout

from .conftest import FakeClock, block

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "forge" / "audit" / "overrides.log"


def filled(log: Path, n: int = 5, **kwargs: Any) -> JsonlAuditSink:
    sink = JsonlAuditSink(log, **kwargs)
    for i in range(1, n + 1):
        sink.append_many([block(i)])
    return sink


def lines(log: Path) -> list[bytes]:
    return log.read_bytes().splitlines()


def write_lines(log: Path, rows: list[bytes]) -> None:
    log.write_bytes(b"".join(row + b"\n" for row in rows))


def test_default_path_follows_forge_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert default_path().as_posix() == ".forge/audit/overrides.log"
    monkeypatch.setenv("FORGE_ROOT", str(tmp_path / "root"))
    assert JsonlAuditSink().path == tmp_path / "root" / "audit" / "overrides.log"


def test_lines_are_canonical_and_chained(log: Path) -> None:
    sink = JsonlAuditSink(log)
    sink.append_many([{"kind": "block", "z": 1, "a": "é"}, {"kind": "override"}])
    sink.append_many([{"kind": "block"}])
    rows = lines(log)
    assert [json.loads(r)["seq"] for r in rows] == [1, 2, 3]
    assert json.loads(rows[0])["prev"] == GENESIS
    assert [json.loads(r)["prev"] for r in rows[1:]] == [line_hash(r) for r in rows[:-1]]
    expected = '{"a":"é","kind":"block","prev":"' + GENESIS + '","seq":1,"z":1}'
    assert rows[0] == expected.encode("utf-8")
    assert [r["seq"] for r in sink.records()] == [1, 2, 3]
    assert all("prev" not in r for r in sink.records())
    assert sink.verify().ok


def test_one_write_and_one_fsync_per_batch(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sink = JsonlAuditSink(log)
    sink.append_many([block(0)])  # creates the file (and fsyncs its directory)
    calls: list[str] = []
    real_write, real_fsync = os.write, os.fsync

    def write(fd: int, data: Any) -> int:
        calls.append("write-log" if b'"kind"' in bytes(data) else "write-head")
        return real_write(fd, data)

    def fsync(fd: int) -> None:
        calls.append("fsync")
        real_fsync(fd)

    monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "fsync", fsync)
    if hasattr(os, "pwrite"):  # the head is written in place (one pwrite)
        real_pwrite = os.pwrite

        def pwrite(fd: int, data: Any, offset: int) -> int:
            calls.append("write-head" if offset == 0 and b'"kind"' not in data else "pwrite")
            return real_pwrite(fd, data, offset)

        monkeypatch.setattr(os, "pwrite", pwrite)
    sink.append_many([block(i) for i in range(1, 51)])
    assert calls == ["write-log", "fsync", "write-head"]
    calls.clear()
    JsonlAuditSink(log, fsync=False).append_many([block(99)])
    assert calls == ["write-log", "write-head"]


def test_secrets_are_redacted_before_writing(log: Path) -> None:
    secrets = [
        "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
        "AKIA" + "IOSFODNN7EXAMPL3",
        "hunter2hunter2",
    ]
    sink = JsonlAuditSink(log)
    write(
        sink,
        [
            {
                "kind": "override",
                "input_summary": f"Bash: curl -H 'Authorization: {secrets[0]}'",
                "nested": {
                    "env": [f"AWS_ACCESS_KEY_ID={secrets[1]}"],
                    secrets[1]: f'password="{secrets[2]}"',
                },
            }
        ],
    )
    raw = log.read_bytes().decode("utf-8")
    for secret in secrets:
        assert secret not in raw
    record = next(sink.records())
    assert record["input_summary"] == "Bash: curl -H 'Authorization: [REDACTED]'"
    assert record["nested"] == {
        "env": ["AWS_ACCESS_KEY_ID=[REDACTED]"],
        "[REDACTED]": 'password="[REDACTED]"',
    }
    assert sink.verify().ok


def test_non_json_values_and_reserved_keys(log: Path) -> None:
    sink = JsonlAuditSink(log)
    source = {
        "kind": "block",
        "seq": 99,
        "prev": "x",
        "nan": float("nan"),
        "t": (1, 2),
        "obj": Exception("boom"),
        "bad": "\ud800",
    }
    write(sink, [source])
    record = next(sink.records())
    assert source["seq"] == 99  # the caller's dict is not mutated
    assert record["seq"] == 1 and record["nan"] == "nan" and record["t"] == [1, 2]
    assert record["bad"] == "?" and record["obj"] == "boom"
    assert sink.verify().ok


@pytest.mark.parametrize("value", [Exception("boom"), "\ud800", {1, 2}])
def test_a_record_that_bypassed_write_and_is_not_json_is_refused_whole(
    log: Path, value: object
) -> None:
    sink = JsonlAuditSink(log)
    write(sink, [{"kind": "block"}])
    with pytest.raises(AuditError, match="not JSON"):
        sink.append_many([{"kind": "block", "n": 1}, {"kind": "block", "bad": value}])
    assert [r["seq"] for r in sink.records()] == [1]  # nothing of the batch was written
    assert sink.verify().ok


def test_verify_detects_an_edited_middle_line(log: Path) -> None:
    sink = filled(log)
    rows = lines(log)
    rows[2] = rows[2].replace(b'"counter":3', b'"counter":1')
    write_lines(log, rows)
    report = sink.verify()
    assert not report.ok
    assert any(p.startswith("line 4: prev does not match") for p in report.problems)


def test_verify_detects_an_edited_last_line_through_the_head(log: Path) -> None:
    sink = filled(log)
    rows = lines(log)
    rows[-1] = rows[-1].replace(b'"counter":5', b'"counter":0')
    write_lines(log, rows)
    report = sink.verify()
    assert report.problems == ["line 5: last record does not match the head hash (edited)"]


def test_verify_detects_a_removed_middle_line(log: Path) -> None:
    sink = filled(log)
    rows = lines(log)
    del rows[1]
    write_lines(log, rows)
    report = sink.verify()
    assert not report.ok and report.records == 4
    assert report.problems[0].startswith("line 2: seq 3, expected 2")
    assert report.problems[1].startswith("line 2: prev does not match")


def test_verify_detects_swapped_lines(log: Path) -> None:
    sink = filled(log)
    rows = lines(log)
    rows[1], rows[2] = rows[2], rows[1]
    write_lines(log, rows)
    problems = sink.verify().problems
    assert {p.split(":")[0] for p in problems} == {"line 2", "line 3", "line 4"}


def test_verify_detects_a_garbage_line(log: Path) -> None:
    sink = filled(log)
    rows = lines(log)
    rows.insert(2, b"not json at all")
    write_lines(log, rows)
    report = sink.verify()
    assert "line 3: not a JSON object with a seq" in report.problems
    with pytest.raises(AuditIntegrityError, match=r"overrides\.log:3: unreadable"):
        list(sink.records())


def test_verify_detects_truncation_at_a_line_boundary(log: Path) -> None:
    sink = filled(log)
    write_lines(log, lines(log)[:3])
    report = sink.verify()
    assert report.problems == [
        "log ends at seq 3 but the head records seq 5: records were removed from the end"
    ]
    log.unlink()
    assert not sink.verify().ok  # the whole log deleted: still reported


def test_truncated_mid_line_is_a_torn_tail_repaired_by_the_next_append(
    log: Path, clock: FakeClock
) -> None:
    sink = filled(log, clock=clock)
    data = log.read_bytes()
    cut = len(data) - 40
    log.write_bytes(data[:cut])
    report = sink.verify()
    assert report.torn_tail and not report.ok
    assert report.problems[-1].startswith("line 5: torn tail (")
    assert [r["i"] for r in sink.records()] == [1, 2, 3, 4]
    sink.append_many([block(6)])
    records = list(sink.records())
    # record 5 had been acknowledged (the head says so): both the torn bytes and the missing
    # record are put on the record
    assert [r["kind"] for r in records] == ["block"] * 4 + ["recovery"] * 2 + ["block"]
    torn, missing = records[4:6]
    dropped = data[data.rindex(b"\n", 0, len(data) - 1) + 1 : cut]
    assert torn["dropped_bytes"] == len(dropped)
    assert torn["dropped_sha256"] == line_hash(dropped)
    assert torn["timestamp"].startswith("2027-01-15")
    assert (missing["head_seq"], missing["log_seq"]) == (5, 4)
    assert [r["seq"] for r in records] == [1, 2, 3, 4, 5, 6, 7]
    assert lines(log)[:4] == data.splitlines()[:4]  # earlier records kept byte for byte
    # an acknowledged record is gone: the log stays failed, never laundered (issue 10 route 7)
    report = sink.verify()
    assert not report.ok and not report.torn_tail
    assert [p for p in report.problems if "removed from the end" in p] == [
        "line 6: records 4+1..5 were removed from the end of the log before this append"
    ]


@pytest.mark.parametrize(
    "tail", [b'{"kind":"blo', b"\x00" * 300, b"garbage\n", b"\x00" * 9 + b"\n"]
)
def test_crash_debris_after_the_last_record_is_repaired(log: Path, tail: bytes) -> None:
    sink = filled(log, n=3)
    with log.open("ab") as f:  # a crash during an append: the head was not advanced
        f.write(tail)
    assert sink.verify().torn_tail
    assert len(list(sink.records())) == 3
    sink.append_many([block(4)])
    records = list(sink.records())
    assert [r["kind"] for r in records] == ["block"] * 3 + ["recovery", "block"]
    assert records[3]["dropped_bytes"] == len(tail)
    assert sink.verify().ok


def test_complete_last_record_missing_its_newline_is_kept(log: Path) -> None:
    sink = filled(log, n=3)
    log.write_bytes(log.read_bytes()[:-1])
    report = sink.verify()
    assert report.torn_tail and report.records == 3
    assert [r["i"] for r in sink.records()] == [1, 2, 3]
    sink.append_many([block(4)])
    assert [r["i"] for r in sink.records()] == [1, 2, 3, 4]  # no record dropped, no recovery
    assert sink.verify().ok


def test_symlinked_log_is_refused(log: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.log"
    target.write_bytes(b"")
    log.parent.mkdir(parents=True)
    log.symlink_to(target)
    with pytest.raises(AuditError, match="symlink"):
        JsonlAuditSink(log)
    log.unlink()
    sink = JsonlAuditSink(log)
    log.symlink_to(target)  # swapped in after construction
    with pytest.raises(AuditError, match="symlink"):
        sink.append_many([block(1)])
    assert target.read_bytes() == b""


def test_os_errors_become_audit_errors(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(AuditError) as info:
        JsonlAuditSink(tmp_path / "file" / "overrides.log").append_many([block(1)])
    assert isinstance(info.value.__cause__, OSError)


def test_lock_timeout_is_an_audit_error(log: Path) -> None:
    import portalocker

    sink = filled(log, n=1, lock_timeout=0.05)
    with open(sink.lock_path, "rb+") as held:
        portalocker.lock(held, portalocker.LockFlags.EXCLUSIVE)
        with pytest.raises(AuditError, match=r"lock not acquired within 0\.05 s") as info:
            sink.append_many([block(2)])
        assert isinstance(info.value.__cause__, LockTimeout)  # the one lock's own error
        assert sink.verify().ok  # verify reads unlocked when the lock is held
    sink.append_many([block(2)])
    assert len(list(sink.records())) == 2


def test_the_lock_timeout_is_forge_lock_timeout(tmp_path: Path) -> None:
    from forge_policy.config.env import Config

    assert JsonlAuditSink(tmp_path / "a.log").lock_timeout == 15.0  # the store's default too
    sink = Config.from_env({"FORGE_LOCK_TIMEOUT": "0.5"}, cwd=str(tmp_path)).open_audit()
    assert isinstance(sink, LazyJsonlSink)
    assert sink.sink().lock_timeout == 0.5


def test_a_symlinked_lock_file_is_refused_and_its_target_untouched(
    log: Path, tmp_path: Path
) -> None:
    sink = filled(log, n=1)
    target = tmp_path / "elsewhere"
    target.write_text("keep")
    sink.lock_path.unlink()
    sink.lock_path.symlink_to(target)
    with pytest.raises(AuditError, match="symlink"):
        sink.append_many([block(2)])
    assert target.read_text() == "keep"
    sink.lock_path.unlink()
    assert len(list(sink.records())) == 1


def test_missing_log_reads_empty(log: Path) -> None:
    sink = JsonlAuditSink(log)
    assert list(sink.records()) == []
    assert sink.verify().ok and sink.verify().records == 0
    assert not log.parent.exists()
    log.parent.mkdir(parents=True)
    assert sink.verify().ok
    assert list(log.parent.iterdir()) == []  # verify creates no lock file


def test_append_after_truncation_records_the_missing_records(log: Path) -> None:
    sink = filled(log)
    write_lines(log, lines(log)[:3])
    sink.append_many([block(6)])
    records = list(sink.records())
    assert [r["kind"] for r in records] == ["block"] * 3 + ["recovery", "block"]
    assert records[3]["head_seq"] == 5 and records[3]["log_seq"] == 3
    # the chain is whole again, but records 4 and 5 are lost: an integrity failure, for good
    report = sink.verify()
    assert not report.ok and len(report.problems) == 1
    assert "removed from the end of the log" in report.problems[0]


def test_records_since_reads_only_the_recent_tail(log: Path) -> None:
    from forge_policy._time import iso

    sink = JsonlAuditSink(log, fsync=False)
    padding = "x" * 300  # several 64 KiB blocks, so the backward read crosses block edges
    sink.append_many(
        [
            {"kind": "block", "timestamp": iso(1_000.0 + i), "i": i, "pad": padding}
            for i in range(1_000)
        ]
    )
    recent = sink.records_since(1_000.0 + 990)
    assert [r["i"] for r in recent] == list(range(990, 1_000))
    assert sink.records_since(0.0) == list(sink.records())
    assert sink.records_since(5_000.0) == []
    with open(log, "ab") as handle:  # a torn tail is skipped, not fatal
        handle.write(b'{"kind": "blo')
    assert [r["i"] for r in sink.records_since(1_000.0 + 998)] == [998, 999]
    assert JsonlAuditSink(log.with_name("missing.log")).records_since(0.0) == []


def test_a_line_nested_too_deeply_is_a_finding_not_a_crash(log: Path) -> None:
    """Issue 15: every JSON a command reads is depth-safe; a tampered line is a finding."""
    sink = filled(log, 3)
    rows = lines(log)
    rows[1] = b'{"seq": 2, "x": ' + b"[" * 100000 + b"]" * 100000 + b"}"
    write_lines(log, rows)
    report = sink.verify()
    assert not report.ok
    assert report.problems[0] == "line 2: not a JSON object with a seq"
