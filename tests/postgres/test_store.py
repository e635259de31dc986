"""The PostgreSQL store under the concurrency and crash suites' workers (``tests/stores/harness``),
and its own promises: the lock bounded by ``lock_timeout``, versioned migrations, expiry through
the index, the password never shown. A real server throughout (``tests/pg_server.py``)."""

from __future__ import annotations

import multiprocessing
import random
from collections import Counter
from typing import Any

import pytest

import forge_policy as fp
from tests.stores import harness

psycopg = pytest.importorskip("psycopg", reason="psycopg not installed (the postgres extra)")

from forge_policy.stores.postgres import MIGRATIONS, PostgresStore  # noqa: E402

PROCESSES, EVENTS = 8, 100
TRIALS = 40


def assert_lock_free(dsn: str) -> None:
    """Nobody holds the session: its row and advisory locks are taken at once."""
    store = PostgresStore(dsn, lock_timeout=0.001)
    try:
        store.transact(harness.SESSION, lambda current: (None, None))
    finally:
        store.close()


def test_processes_never_lose_an_increment(pg_dsn: str, tmp_path: Any) -> None:
    catalog_dir = str(harness.write_counting_catalog(tmp_path / "catalog"))
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(PROCESSES) as pool:
        args = [("postgres", pg_dsn, catalog_dir, EVENTS, 60.0)] * PROCESSES
        stateful = pool.starmap(harness.counting_worker, args)
    assert stateful == [EVENTS] * PROCESSES
    state = harness.load_session("postgres", pg_dsn)
    assert harness.counter_of(state) == PROCESSES * EVENTS
    assert state is not None and state.totals == {"calls": PROCESSES * EVENTS}
    assert_lock_free(pg_dsn)


def test_sigkill_at_any_point_keeps_the_state_whole(pg_dsn: str) -> None:
    ctx = multiprocessing.get_context("fork")
    rng = random.Random("crash-postgres")  # seeded: a failure replays
    results = [harness.run_crash_trial(ctx, "postgres", pg_dsn, rng) for _ in range(TRIALS)]
    assert [r for r in results if not r["ok"]] == []
    assert set(Counter(r["point"] for r in results)) == set(harness.POSTGRES_CRASH_POINTS)
    assert any(r["after"] == r["before"] + r["acknowledged"] + 1 for r in results)
    assert_lock_free(pg_dsn)


@pytest.mark.parametrize("locking", ["row", "advisory"])
def test_a_live_holder_makes_the_engine_decide_statelessly(pg_dsn: str, locking: str) -> None:
    harness.load_session("postgres", pg_dsn)  # the schema, so the holder's row lock is the wait
    ctx = multiprocessing.get_context("fork")
    ready, release, result = ctx.Event(), ctx.Event(), ctx.SimpleQueue()
    holder = ctx.Process(
        target=harness.hold_lock, args=("postgres", pg_dsn, ready, release, result)
    )
    holder.start()
    try:
        assert ready.wait(10), "the holder never took the lock"
        store = PostgresStore(pg_dsn, lock_timeout=0.2, locking=locking)
        ev = fp.Evaluator(fp.builtin_catalog(), store=store)
        push = fp.Event(
            "PreToolUse",
            harness.SESSION,
            tool_name="Bash",
            tool_input={"command": "git push --force origin main"},
        )
        decision = ev.evaluate(push)
        assert decision.blocked and decision.outcome == "hard_block"  # fail closed
        assert "decided statelessly" in decision.diagnostics[0]
        assert "lock_timeout" in decision.diagnostics[0]
        with pytest.raises(fp.LockTimeout):
            store.transact(harness.SESSION, lambda current: (None, None))
        store.close()
    finally:
        release.set()
        holder.join(10)
    assert holder.exitcode == 0 and result.get() == 1  # the holder was never robbed
    assert harness.counter_of(harness.load_session("postgres", pg_dsn)) == 1
    assert_lock_free(pg_dsn)


def test_migrations_are_versioned_in_the_database(pg: Any, pg_dsn: str) -> None:
    store = PostgresStore(pg_dsn)
    store.session_ids()
    store.close()
    with psycopg.connect(pg_dsn) as conn:
        rows = conn.execute("SELECT component, version FROM forge_schema").fetchall()
        assert rows == [("store", len(MIGRATIONS))]
        conn.execute("UPDATE forge_schema SET version = 99")
    newer = PostgresStore(pg_dsn)
    with pytest.raises(fp.StoreError, match="schema version 99 of store is newer"):
        newer.session_ids()


def test_purge_reads_only_the_index(pg_dsn: str) -> None:
    store = PostgresStore(pg_dsn)
    for i in range(300):
        harness_put(store, f"s{i}", 1_800_000_000.0 + i)
    with psycopg.connect(pg_dsn) as conn:
        conn.execute("ANALYZE forge_sessions")
        conn.execute("SET enable_seqscan = off")  # what the planner does at scale, forced here
        plan = conn.execute(
            "EXPLAIN SELECT id, last_accessed_at FROM forge_sessions"
            " WHERE last_accessed_at < 1800000010 FOR UPDATE SKIP LOCKED"
        ).fetchall()
    assert "forge_sessions_last_accessed_at" in " ".join(row[0] for row in plan)
    # ttl 100 s plus the touch slack of 1 s: s0..s198 are past it
    assert store.purge(1_800_000_000.0 + 300.0, 100.0) == 199
    assert len(store.session_ids()) == 101
    store.close()


def harness_put(store: PostgresStore, session_id: str, now: float) -> None:
    def apply(current: fp.SessionState | None) -> tuple[None, fp.SessionState]:
        state = current or fp.SessionState.new(now)
        state.touch(now)
        return None, state

    store.transact(session_id, apply)


def test_a_write_purges_expired_sessions_now_and_then(pg_dsn: str) -> None:
    clock = [1_800_000_000.0]
    store = PostgresStore(pg_dsn, ttl=100.0, clock=lambda: clock[0])
    harness_put(store, "old", clock[0])
    clock[0] += 1000.0
    harness_put(store, "new", clock[0])
    assert store.session_ids() == ["new"]
    clock[0] += 1000.0
    harness_put(store, "newer", clock[0])  # a minute has passed since the last purge
    assert store.session_ids() == ["newer"]
    store.close()
