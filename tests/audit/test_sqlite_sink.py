"""The SQLite audit sink: schema, the shared hash chain, tamper detection, error mapping."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

import pytest

from forge_policy.audit.jsonl import JsonlAuditSink
from forge_policy.audit.sqlite import SQLiteAuditSink
from forge_policy.audit.verify import GENESIS
from forge_policy.errors import AuditError

from .conftest import block, override

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "audit" / "audit.db"


@pytest.fixture
def sink(db: Path) -> Iterator[SQLiteAuditSink]:
    s = SQLiteAuditSink(db)
    s.append_many([block(1), override("o1", counter=1), block(2, session="s2")])
    s.append_many([block(3), block(4)])
    yield s
    s.close()


def tamper(db: Path, sql: str, *params: object) -> None:
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(sql, params)
    conn.close()


def test_schema_and_columns(sink: SQLiteAuditSink, db: Path) -> None:
    conn = sqlite3.connect(db)
    columns = [row[1] for row in conn.execute("PRAGMA table_info(audit)")]
    assert columns == [
        "seq",
        "ts",
        "kind",
        "override_id",
        "session_id",
        "record",
        "prev_hash",
        "hash",
    ]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    rows = conn.execute(
        "SELECT seq, kind, override_id, session_id, prev_hash FROM audit ORDER BY seq"
    ).fetchall()
    conn.close()
    assert rows[0] == (1, "block", None, "s1", GENESIS)
    assert rows[1][:4] == (2, "override", "o1", "s1")
    assert [r["seq"] for r in sink.records()] == [1, 2, 3, 4, 5]
    assert sink.verify().ok


def test_same_chain_as_the_jsonl_log(sink: SQLiteAuditSink, db: Path, tmp_path: Path) -> None:
    log = JsonlAuditSink(tmp_path / "overrides.log")
    log.append_many([block(1), override("o1", counter=1), block(2, session="s2")])
    log.append_many([block(3), block(4)])
    conn = sqlite3.connect(db)
    hashes = [row[0] for row in conn.execute("SELECT prev_hash FROM audit ORDER BY seq")]
    conn.close()
    assert hashes == [r["prev"] for r in _raw(log)]
    assert list(sink.records()) == list(log.records())


def _raw(log: JsonlAuditSink) -> list[dict[str, object]]:
    import json

    return [json.loads(line) for line in log.path.read_bytes().splitlines()]


def test_duplicate_override_id_appends_nothing(sink: SQLiteAuditSink) -> None:
    with pytest.raises(AuditError, match="duplicate override_id") as info:
        sink.append_many([block(5), override("o1")])
    assert isinstance(info.value.__cause__, sqlite3.IntegrityError)
    assert len(list(sink.records())) == 5
    assert sink.verify().ok


def test_records_for_session_is_indexed(sink: SQLiteAuditSink) -> None:
    assert [r["seq"] for r in sink.records_for_session("s2")] == [3]
    assert [r["seq"] for r in sink.records_for_session("nobody")] == []


@pytest.mark.parametrize(
    ("sql", "params", "expected"),
    [
        (
            "UPDATE audit SET record = replace(record, '\"counter\":3', '\"counter\":1') "
            "WHERE seq = 4",
            (),
            "row seq 4: hash does not match the record (edited)",
        ),
        (
            "UPDATE audit SET hash = ? WHERE seq = 2",
            ("f" * 64,),
            "row seq 2: hash does not match the record (edited)",
        ),
        (
            "UPDATE audit SET kind = 'violation' WHERE seq = 1",
            (),
            "row seq 1: columns do not match the record (edited)",
        ),
        ("DELETE FROM audit WHERE seq = 3", (), "row seq 4: seq 4, expected 3"),
        (
            "DELETE FROM audit WHERE seq = 5",
            (),
            "log ends at seq 4 but the head records seq 5: records were removed from the end",
        ),
        (
            "UPDATE audit SET record = 'not json' WHERE seq = 2",
            (),
            "row seq 2: not a JSON object with a seq",
        ),
    ],
)
def test_verify_detects_tampering(
    sink: SQLiteAuditSink, db: Path, sql: str, params: tuple[object, ...], expected: str
) -> None:
    tamper(db, sql, *params)
    report = sink.verify()
    assert not report.ok
    assert any(p.startswith(expected) for p in report.problems), report.problems


def test_verify_detects_swapped_rows(sink: SQLiteAuditSink, db: Path) -> None:
    conn = sqlite3.connect(db)
    with conn:
        a = conn.execute("SELECT record, prev_hash, hash FROM audit WHERE seq = 2").fetchone()
        b = conn.execute("SELECT record, prev_hash, hash FROM audit WHERE seq = 3").fetchone()
        conn.execute(
            "UPDATE audit SET record = ?, prev_hash = ?, hash = ?, override_id = NULL "
            "WHERE seq = 2",
            b,
        )
        conn.execute("UPDATE audit SET record = ?, prev_hash = ?, hash = ? WHERE seq = 3", a)
    conn.close()
    problems = sink.verify().problems
    assert any(p.startswith("row seq 2: prev does not match") for p in problems)
    assert any(p.startswith("row seq 4: prev does not match") for p in problems)


def test_errors_are_audit_errors(tmp_path: Path) -> None:
    (tmp_path / "dir.db").mkdir()
    with pytest.raises(AuditError) as info:
        SQLiteAuditSink(tmp_path / "dir.db").append_many([block(1)])
    assert isinstance(info.value.__cause__, sqlite3.Error)
    (tmp_path / "real.db").write_bytes(b"")
    (tmp_path / "link.db").symlink_to(tmp_path / "real.db")
    with pytest.raises(AuditError, match="symlink"):
        SQLiteAuditSink(tmp_path / "link.db")


def test_reopen_and_close(sink: SQLiteAuditSink, db: Path) -> None:
    sink.close()
    sink.close()
    sink.append_many([block(6)])  # reconnects
    again = SQLiteAuditSink(db)
    assert [r["seq"] for r in again.records()] == [1, 2, 3, 4, 5, 6]
    again.close()


def test_append_after_deleting_the_last_rows_records_them_missing(
    sink: SQLiteAuditSink, db: Path
) -> None:
    tamper(db, "DELETE FROM audit WHERE seq >= 4")
    sink.append_many([block(9)])
    records = list(sink.records())
    assert [r["kind"] for r in records] == ["block", "override", "block", "recovery", "block"]
    assert (records[3]["head_seq"], records[3]["log_seq"]) == (5, 3)
    report = sink.verify()  # rows 4 and 5 are lost: an integrity failure, for good
    assert not report.ok and any("removed from the end of the log" in p for p in report.problems)


def test_reading_a_missing_database_creates_nothing(tmp_path: Path) -> None:
    sink = SQLiteAuditSink(tmp_path / "none" / "audit.db")
    assert list(sink.records()) == []
    assert sink.verify().ok
    assert not (tmp_path / "none").exists()
