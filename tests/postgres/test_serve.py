"""``forge-policy serve`` on a shared PostgreSQL store and audit table: its threads share one
pool, and concurrent requests of one session lose no count."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.cli_support import Project, decision_of, tool_event
from tests.serve_support import Server, free_port

pytest.importorskip("psycopg", reason="psycopg not installed (the postgres extra)")

from forge_policy.audit.postgres import PostgresAuditSink
from forge_policy.stores.postgres import PostgresStore

REQUESTS = 24


def test_serve_counts_every_concurrent_request_in_postgres(pg_dsn: str, tmp_path: Path) -> None:
    project = Project(tmp_path, FORGE_STORE=pg_dsn, FORGE_AUDIT=pg_dsn)
    project.run("init", "--serve", "--port", str(free_port()))
    server = Server(project, "--port", "0")
    try:

        def push(i: int) -> tuple[int, bytes]:
            event = tool_event("Bash", "served", command=f"git push --force origin b{i}")
            return server.request("POST", "/hook", json.dumps(event).encode())

        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(push, range(REQUESTS)))
    finally:
        code, err = server.stop()
    assert code == 0, err
    assert all(status == 200 for status, _ in answers)
    assert all(decision_of(json.loads(body)) == "deny" for _, body in answers)
    with PostgresStore(pg_dsn) as store:
        state = store.load("served")
    assert state is not None
    assert state.behavior("no-destructive-git").counter == REQUESTS
    sink = PostgresAuditSink(pg_dsn)
    blocks = [r for r in sink.records() if r["kind"] == "block"]
    assert len(blocks) == REQUESTS and sink.verify().ok
    sink.close()
