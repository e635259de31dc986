"""SQLiteStore specifics: WAL, migrations, the index, busy timeouts, bad rows, threads, forks."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import forge_policy as fp
from forge_policy.state import SessionState
from forge_policy.stores import SQLiteStore
from forge_policy.stores import sqlite as sqlite_module

T0 = 1_800_000_000.0


def bump(current: SessionState | None) -> tuple[int, SessionState]:
    state = current if current is not None else SessionState.new(T0)
    state.behavior("b").counter += 1
    return state.behavior("b").counter, state


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "runtime" / "state.db"


@pytest.fixture
def raw(path: Path) -> Iterator[sqlite3.Connection]:
    """A second, plain connection to the same database (after the store created it)."""
    with SQLiteStore(path) as store:
        store.transact("s0", bump)
    conn = sqlite3.connect(path, isolation_level=None)
    yield conn
    conn.close()


def test_wal_synchronous_and_schema(raw: sqlite3.Connection, path: Path) -> None:
    assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert raw.execute("SELECT version FROM schema_version").fetchall() == [(1,)]
    columns = [row[1:3] for row in raw.execute("PRAGMA table_info(sessions)")]
    assert columns == [("id", "TEXT"), ("data", "TEXT"), ("last_accessed_at", "REAL")]
    with SQLiteStore(path, synchronous="normal") as store:
        conn = store._connection()
        assert conn.execute("PRAGMA synchronous").fetchone() == (1,)
    with SQLiteStore(path) as store:
        assert store._connection().execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
    assert {p.stat().st_mode & 0o777 for p in path.parent.iterdir()} == {0o600}


def test_purge_reads_candidates_through_the_index(raw: sqlite3.Connection) -> None:
    plan = raw.execute(
        "EXPLAIN QUERY PLAN SELECT id, last_accessed_at FROM sessions WHERE last_accessed_at < ?",
        (0.0,),
    ).fetchall()
    (detail,) = [row[-1] for row in plan]
    assert detail.startswith("SEARCH sessions USING")  # a range search, not a SCAN
    assert "INDEX sessions_last_accessed_at (last_accessed_at<?)" in detail


def test_forward_migrations_run_once(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with SQLiteStore(path) as store:
        store.transact("s1", bump)
    ran: list[int] = []

    def add_notes(conn: sqlite3.Connection) -> None:
        ran.append(1)
        conn.execute("ALTER TABLE sessions ADD COLUMN note TEXT")

    monkeypatch.setattr(sqlite_module, "MIGRATIONS", (*sqlite_module.MIGRATIONS, add_notes))
    for _ in range(2):
        with SQLiteStore(path) as store:
            assert store.transact("s1", bump) in (2, 3)
    assert ran == [1]
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT version FROM schema_version").fetchall() == [(1,), (2,)]
    assert "note" in [row[1] for row in conn.execute("PRAGMA table_info(sessions)")]
    conn.close()


def test_a_newer_schema_is_refused(raw: sqlite3.Connection, path: Path) -> None:
    raw.execute("INSERT INTO schema_version (version) VALUES (2)")
    with SQLiteStore(path) as store, pytest.raises(fp.StoreError, match="newer"):
        store.load("s0")


def test_busy_database_raises_lock_timeout_and_reads_still_work(
    raw: sqlite3.Connection, path: Path
) -> None:
    raw.execute("BEGIN IMMEDIATE")
    with SQLiteStore(path, busy_timeout=0.05) as store:
        with pytest.raises(fp.LockTimeout, match="database is locked") as caught:
            store.transact("s0", bump)
        assert isinstance(caught.value.__cause__, sqlite3.OperationalError)  # chained
        assert store.load("s0").behavior("b").counter == 1  # WAL: readers are not blocked
        raw.execute("ROLLBACK")
        assert store.transact("s0", bump) == 2


def test_not_a_database_is_moved_aside_and_a_new_one_begins(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 10 route 5: bytes written over the database used to force stateless decisions
    for good. The file is moved aside (never dropped), reported, and a new database begins."""
    path.parent.mkdir(parents=True)
    garbage = b"this is not a database, just bytes " * 100
    path.write_bytes(garbage)
    with SQLiteStore(path) as store:
        assert store.transact("s1", bump) == 1
        assert store.transact("s1", bump) == 2
    [moved] = list(path.parent.glob("state.db.corrupt-*"))
    assert moved.read_bytes() == garbage
    assert "corrupt database moved to" in capsys.readouterr().err


def test_a_database_that_cannot_be_opened_is_a_store_error(path: Path) -> None:
    path.mkdir(parents=True)  # a folder where the file should be: nothing to move aside
    with SQLiteStore(path) as store, pytest.raises(fp.StoreError, match="cannot open"):
        store.transact("s1", bump)
    ev = fp.Evaluator(fp.builtin_catalog(), store=SQLiteStore(path))
    push = fp.Event("PreToolUse", "s1", tool_name="Bash", tool_input={"command": "git push -f"})
    decision = ev.evaluate(push)
    assert decision.outcome == "hard_block" and "statelessly" in decision.diagnostics[0]


def test_bad_rows_are_quarantined_and_reported(
    raw: sqlite3.Connection, path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw.execute("INSERT INTO sessions VALUES ('bad', '[1, 2]', 0)")
    raw.execute("INSERT INTO sessions VALUES ('worse', '{not json', 0)")
    records: list[dict[str, Any]] = []
    with SQLiteStore(path, on_recovery=records.append) as store:
        assert store.load("bad") is None
        assert store.transact("worse", bump) == 1  # a fresh state begins
    assert [r["session_id"] for r in records] == ["bad", "worse"]
    assert all(r["kind"] == "recovery" and r["moved_to"] == "quarantine" for r in records)
    kept = raw.execute("SELECT id, data FROM quarantine ORDER BY id").fetchall()
    assert kept == [("bad", "[1, 2]"), ("worse", "{not json")]
    assert capsys.readouterr().err.count("moved to the quarantine table\n") == 2


def test_no_sql_from_caller_text(path: Path) -> None:
    with pytest.raises(ValueError, match="synchronous"):
        SQLiteStore(path, synchronous="FULL; DROP TABLE sessions")
    with SQLiteStore(path) as store:
        sid = "x'); DROP TABLE sessions; --"
        store.transact(sid, bump)
        assert store.session_ids() == [sid]


def test_closed_store_refuses_use(path: Path) -> None:
    store = SQLiteStore(path)
    store.transact("s1", bump)
    store.close()
    store.close()
    with pytest.raises(fp.StoreError, match="closed"):
        store.load("s1")


def test_folder_in_place_of_database_is_a_store_error(path: Path) -> None:
    path.mkdir(parents=True)
    with SQLiteStore(path) as store, pytest.raises(fp.StoreError, match="cannot open"):
        store.transact("s1", bump)


def test_threads_share_one_store(path: Path) -> None:
    with SQLiteStore(path, busy_timeout=30) as store:
        threads = [
            threading.Thread(target=lambda: [store.transact("s", bump) for _ in range(50)])
            for _ in range(8)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert store.load("s").behavior("b").counter == 400


def _child_bumps(store: SQLiteStore, queue: Any) -> None:
    queue.put(store.transact("s", bump))


def test_a_forked_child_opens_its_own_connection(path: Path) -> None:
    with SQLiteStore(path) as store:
        assert store.transact("s", bump) == 1
        ctx = multiprocessing.get_context("fork")
        queue = ctx.SimpleQueue()
        proc = ctx.Process(target=_child_bumps, args=(store, queue))
        proc.start()
        proc.join()
        assert proc.exitcode == 0 and queue.get() == 2
        assert store.transact("s", bump) == 3  # the parent's connection is intact


def test_opportunistic_purge_on_write(path: Path) -> None:
    clock = [T0]
    with SQLiteStore(path, ttl=100.0, clock=lambda: clock[0]) as store:
        store.transact("old", lambda cur: (None, SessionState.new(T0 - 1000)))
        assert store.session_ids() == ["old"]  # the session being written is never purged
        store.transact("s1", bump)
        assert store.session_ids() == ["s1"]
