"""Faults of a real server: stopped mid-run, a statement timeout, a dropped connection.

Blocks still block, statelessly and audited (the JSONL log beside the shared store keeps the
record); counting resumes after the restart on the same store object, with every acknowledged
override still in the state; nothing acknowledged is lost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import forge_policy as fp
from tests.helpers import behavior_yaml, write_catalog

psycopg = pytest.importorskip("psycopg", reason="psycopg not installed (the postgres extra)")

from forge_policy.stores.postgres import PostgresStore  # noqa: E402

SESSION = "faulty"
T0 = 1_800_000_000.0


def _contains(word: str) -> str:
    return (
        "    - event: PreToolUse\n      matcher: Bash\n      conditions:\n"
        f"        - {{field: command, operator: contains, value: {word}}}\n"
    )


def _catalog(tmp_path: Path) -> fp.Catalog:
    folder = write_catalog(
        tmp_path / "behaviors",
        {
            "counted": behavior_yaml(
                "counted", default_level="nudge", triggers=_contains("count-me")
            ),
            "softy": behavior_yaml(
                "softy", default_level="soft_block", triggers=_contains("soft-me")
            ),
        },
    )
    return fp.load_catalog(folder)


def _bash(command: str) -> fp.Event:
    return fp.Event("PreToolUse", SESSION, tool_name="Bash", tool_input={"command": command})


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        self.now += 0.01
        return self.now


@pytest.mark.parametrize("pool_size", [1, 4])
def test_server_stopped_mid_run(pg: Any, pg_dsn: str, tmp_path: Path, pool_size: int) -> None:
    store = PostgresStore(pg_dsn, lock_timeout=2.0, pool_size=pool_size)
    audit = fp.JsonlAuditSink(tmp_path / "audit" / "overrides.log")
    ev = fp.Evaluator(_catalog(tmp_path), store=store, audit=audit, clock=Clock())
    for i in range(5):
        assert not ev.evaluate(_bash(f"echo count-me {i}")).blocked
    assert ev.evaluate(_bash("echo soft-me")).blocked
    passed = ev.evaluate(_bash("echo soft-me"))  # the retry: an acknowledged override
    assert not passed.blocked and [o["mechanism"] for o in passed.overrides] == ["retry"]
    pg.stop()
    try:
        down = ev.evaluate(_bash("git push --force origin main && echo soft-me"))
        assert down.blocked  # the soft block still blocks, decided statelessly
        assert "decided statelessly" in " ".join(down.diagnostics) or "rebuilt" in " ".join(
            down.diagnostics
        )
        assert "pg-test-pw" not in " ".join(down.diagnostics)  # the password never shown
        degraded = [r for r in audit.records() if r.get("degraded")]
        assert [r["behavior_id"] for r in degraded if r["kind"] == "block"] == ["softy"]
        with pytest.raises(fp.StoreError):
            store.transact(SESSION, lambda current: (None, None))
    finally:
        pg.start()
    # the same store object reconnects; counting resumes where the database left it
    after = ev.evaluate(_bash("echo count-me again"))
    assert not after.blocked and not after.diagnostics
    state = store.load(SESSION)
    assert state is not None
    assert state.behavior("counted").counter == 6  # 5 before the stop, 1 after
    assert [o["mechanism"] for o in state.behavior("softy").overrides] == ["retry"]
    # the block decided while the server was down was audited (degraded) and is counted now:
    # the state is reconciled from the log, so no count is lost
    assert state.behavior("softy").counter == 2
    assert audit.verify().ok
    store.close()


def test_a_statement_timeout_fails_closed_and_writes_nothing(pg_dsn: str, tmp_path: Path) -> None:
    store = PostgresStore(pg_dsn, lock_timeout=1.0, statement_timeout=0.3)
    store.session_ids()  # the schema
    with psycopg.connect(pg_dsn, autocommit=True) as conn:  # a server too slow to write
        conn.execute(
            "CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS"
            " $$ BEGIN PERFORM pg_sleep(2); RETURN NEW; END $$"
        )
        conn.execute(
            "CREATE TRIGGER slow BEFORE INSERT OR UPDATE ON forge_sessions"
            " FOR EACH ROW EXECUTE FUNCTION slow()"
        )
    with pytest.raises(fp.StoreError, match="statement timeout") as caught:
        store.transact(SESSION, lambda current: (None, fp.SessionState.new(T0)))
    assert not isinstance(caught.value, fp.LockTimeout)
    ev = fp.Evaluator(fp.builtin_catalog(), store=store, clock=Clock())
    decision = ev.evaluate(_bash("git push --force origin main"))
    assert decision.blocked and decision.outcome == "hard_block"
    assert any("statement timeout" in line for line in decision.diagnostics)
    assert store.session_ids() == []  # nothing half-written
    store.close()


@pytest.mark.parametrize("pool_size", [1, 4])
def test_a_dropped_connection_is_replaced_without_losing_a_count(
    pg: Any, pg_dsn: str, pool_size: int
) -> None:
    store = PostgresStore(pg_dsn, pool_size=pool_size)

    def bump(current: fp.SessionState | None) -> tuple[int, fp.SessionState]:
        state = current or fp.SessionState.new(T0)
        state.behavior("b").counter += 1
        return state.behavior("b").counter, state

    assert store.transact(SESSION, bump) == 1
    dbname = pg_dsn.rsplit("/", 1)[1]
    with pg.admin() as admin:  # the server drops every connection of the store
        killed = admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = %s AND pid <> pg_backend_pid()",
            (dbname,),
        ).fetchone()
    assert killed is not None and killed[0] >= 1
    loaded = store.load(SESSION)  # a read on the dead connection: replaced, read again
    assert loaded is not None and loaded.behavior("b").counter == 1
    assert [store.transact(SESSION, bump) for _ in range(3)] == [2, 3, 4]
    with pg.admin() as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = %s AND pid <> pg_backend_pid()",
            (dbname,),
        )
    assert [store.transact(SESSION, bump) for _ in range(2)] == [5, 6]  # and a write too
    store.close()
