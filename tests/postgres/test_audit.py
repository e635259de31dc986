"""The PostgreSQL audit table: append-only by construction (triggers, and a role that can only
INSERT and SELECT, with the GRANTs of docs/how-to/several-machines.md), ``audit --verify``
against it from the CLI, an edit seen, and overrides reconciled from it exactly as from the
JSONL log."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

import forge_policy as fp
from tests.hookrun import SCRIPT
from tests.postgres.test_faults import Clock, _bash, _catalog

psycopg = pytest.importorskip("psycopg", reason="psycopg not installed (the postgres extra)")

from forge_policy.audit.postgres import PostgresAuditSink  # noqa: E402
from forge_policy.stores.postgres import PostgresStore  # noqa: E402

README = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "several-machines.md"


def block(i: int) -> dict[str, Any]:
    return {"kind": "block", "session_id": "s1", "behavior_id": "softy", "counter": i}


def readme_grants() -> list[str]:
    """The SQL of the "Several machines" GRANT block (docs/how-to/several-machines.md, the
    README's until issue 21), statement by statement."""
    text = README.read_text()
    found = re.search(r"<!-- postgres-grants -->\n```sql\n(.*?)```", text, re.S)
    assert found, "docs/how-to/several-machines.md has no postgres-grants block"
    body = "\n".join(line for line in found.group(1).splitlines() if not line.startswith("--"))
    return [s.strip() for s in body.split(";") if s.strip()]


def test_the_tables_refuse_update_delete_and_truncate(pg_dsn: str) -> None:
    sink = PostgresAuditSink(pg_dsn)
    sink.append_many([block(i) for i in range(3)])
    with psycopg.connect(pg_dsn, autocommit=True) as conn:  # even the owner
        for sql in (
            "UPDATE forge_audit SET record = '{}' WHERE seq = 2",
            "DELETE FROM forge_audit WHERE seq = 3",
            "DELETE FROM forge_audit_head",
            "TRUNCATE forge_audit",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
                conn.execute(sql.encode())
    assert sink.verify().ok and sink.verify().records == 3
    sink.close()


def test_an_edit_by_an_owner_who_drops_the_guard_is_seen(pg_dsn: str) -> None:
    sink = PostgresAuditSink(pg_dsn)
    sink.append_many([block(i) for i in range(4)])
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("ALTER TABLE forge_audit DISABLE TRIGGER USER")
        conn.execute("ALTER TABLE forge_audit_head DISABLE TRIGGER USER")
        conn.execute(
            "UPDATE forge_audit SET record = replace(record, '\"counter\":1', '\"counter\":0')"
        )
    edited = sink.verify()
    assert "row seq 2: hash does not match the record (edited)" in edited.problems
    assert "row seq 3: prev does not match" in edited.problems[0]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM forge_audit WHERE seq >= 2")
    cut = sink.verify()
    assert any("removed from the end" in p for p in cut.problems)
    sink.close()


def test_an_insert_only_role_appends_verifies_and_cannot_rewrite(pg: Any, pg_dsn: str) -> None:
    owner = PostgresAuditSink(pg_dsn)
    owner.append_many([block(0)])  # the owner migrates; the appender only appends
    owner.close()
    with PostgresStore(pg_dsn) as owner_store:
        owner_store.session_ids()
    dbname = pg_dsn.rsplit("/", 1)[1]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"DROP ROLE IF EXISTS forge_agent_{dbname}".encode())
        for statement in readme_grants():
            statement = statement.replace("forge_agent", f"forge_agent_{dbname}")
            conn.execute(statement.replace("agent-password", "pw").encode())
        # the fault of the issue: an UPDATE privilege revoked (here: never granted, checked)
        conn.execute(f"REVOKE UPDATE, DELETE ON forge_audit FROM forge_agent_{dbname}".encode())
    agent_dsn = pg.dsn(dbname, user=f"forge_agent_{dbname}", password="pw")
    agent = PostgresAuditSink(agent_dsn)
    agent.append_many([block(i) for i in range(1, 4)])
    report = agent.verify()
    assert report.ok and report.records == 4
    with psycopg.connect(agent_dsn, autocommit=True) as conn:
        for sql in ("UPDATE forge_audit SET kind = 'x'", "DELETE FROM forge_audit_head"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied"):
                conn.execute(sql.encode())
    agent.close()
    with PostgresStore(agent_dsn) as store:  # the same role keeps the state (a cache of the log)
        assert store.transact("s1", lambda cur: (cur, fp.SessionState.new(0.0))) is None
        assert store.purge(1e12, 1.0) == 1


def test_audit_verify_from_the_cli_against_postgres(pg_dsn: str, tmp_path: Path) -> None:
    env = {"FORGE_ROOT": str(tmp_path / ".forge"), "FORGE_AUDIT": pg_dsn, "PATH": "/usr/bin"}
    sink = PostgresAuditSink(pg_dsn)
    sink.append_many([block(i) for i in range(3)])

    def verify() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(SCRIPT), "audit", "--verify"],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=60,
        )

    ok = verify()
    assert ok.returncode == 0, ok.stderr
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("ALTER TABLE forge_audit DISABLE TRIGGER USER")
        conn.execute("UPDATE forge_audit SET session_id = 's2' WHERE seq = 1")
    broken = verify()
    assert broken.returncode != 0
    assert "row seq 1: columns do not match the record (edited)" in broken.stdout + broken.stderr
    assert "pg-test-pw" not in broken.stdout + broken.stderr
    sink.close()


def test_a_lost_state_write_is_reconciled_from_the_table(pg_dsn: str, tmp_path: Path) -> None:
    store = PostgresStore(pg_dsn)
    sink = PostgresAuditSink(pg_dsn)
    ev = fp.Evaluator(_catalog(tmp_path), store=store, audit=sink, clock=Clock())
    assert ev.evaluate(_bash("echo soft-me")).blocked
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        before = conn.execute("SELECT data FROM forge_sessions").fetchone()
    passed = ev.evaluate(_bash("echo soft-me"))
    assert not passed.blocked
    (oid,) = [r["override_id"] for r in sink.records() if r["kind"] == "override"]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:  # the state write "lost"
        conn.execute("UPDATE forge_sessions SET data = %s", (before[0] if before else "",))
    assert store.load("faulty").behavior("softy").overrides == []  # type: ignore[union-attr]
    again = ev.evaluate(_bash("echo soft-me"))
    assert again.blocked  # the override passed exactly one call
    state = store.load("faulty")
    assert state is not None
    assert [o["override_id"] for o in state.behavior("softy").overrides] == [oid]
    assert sink.verify().ok
    store.close()
    sink.close()
