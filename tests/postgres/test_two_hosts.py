"""Two "hosts" sharing one governance state: two projects with their own ``FORGE_ROOT``,
catalog and warm worker, one PostgreSQL database (store and audit) and one session id.

Hook clients are real processes (``python -I -S launch.py``, as Claude Code runs them), 16
streams at once, half per host. The issue's full size, 16 x 500 = 8,000 violating events, runs
with ``FORGE_PG_STRESS=1``; by default each stream sends 15 (240 hook processes) to keep the
suite fast.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.hookrun import ClientProject, stop_workers, worker_pids

pytest.importorskip("psycopg", reason="psycopg not installed (the postgres extra)")

from forge_policy.audit.postgres import PostgresAuditSink
from forge_policy.stores.postgres import PostgresStore

STREAMS = 16
# read at import: the suite's autouse fixture clears FORGE_* before each test
EVENTS = int(
    os.environ.get("FORGE_PG_STRESS_EVENTS", 500 if os.environ.get("FORGE_PG_STRESS") else 15)
)


@pytest.fixture
def hosts(pg_dsn: str, tmp_path: Path) -> Iterator[tuple[ClientProject, ClientProject]]:
    laptop, vps = ClientProject(tmp_path / "laptop"), ClientProject(tmp_path / "vps")
    vps.session = laptop.session
    for host in (laptop, vps):
        host.env.update(FORGE_STORE=pg_dsn, FORGE_AUDIT=pg_dsn)
    yield laptop, vps
    for host in (laptop, vps):
        stop_workers(host.root)
        assert worker_pids(host.root) == []


def _denied(stdout: bytes) -> bool:
    if not stdout.strip():
        return False
    output = json.loads(stdout).get("hookSpecificOutput", {})
    return output.get("permissionDecision") == "deny"


def test_two_hosts_count_every_violation_and_grant_each_override_once(
    hosts: tuple[ClientProject, ClientProject], pg_dsn: str, request: pytest.FixtureRequest
) -> None:
    laptop, vps = hosts
    for host in hosts:  # each host's first call starts its worker
        host.call(host.bash("ls"))
        host.wait_worker()

    def stream(n: int) -> list[Any]:
        host = hosts[n % 2]
        return [host.call(host.bash(f"echo nudge-me {n} {i}")) for i in range(EVENTS)]

    with ThreadPoolExecutor(STREAMS) as pool:
        answers = [a for batch in pool.map(stream, range(STREAMS)) for a in batch]
    assert [a.stderr for a in answers if a.stderr] == []  # nothing decided statelessly
    assert all(b"[nudger] nudger: Bash (" in a.stdout for a in answers)
    seen = sorted(int(json.loads(a.stdout)["systemMessage"].split("(")[1][:-1]) for a in answers)
    assert seen == list(range(1, STREAMS * EVENTS + 1))  # each count handed out exactly once
    with PostgresStore(pg_dsn) as store:
        state = store.load(laptop.session)
    assert state is not None and state.behavior("nudger").counter == STREAMS * EVENTS
    assert laptop.requests() > EVENTS and vps.requests() > EVENTS  # both workers answered

    # a block on the laptop, then 8 identical retries at once from both hosts. Serialised, they
    # alternate: each pending block lets exactly one retry by and the next identical call is a
    # new violation (B P B P …). A retry whose clock reading predates the block it waits behind
    # is a new violation too (the window starts at the block), so only these hold for sure:
    retry = laptop.bash("echo soft-me now")
    assert _denied(laptop.call(retry).stdout)

    def again(n: int) -> Any:
        host = hosts[n % 2]
        return host.call({**retry, "tool_use_id": f"toolu_retry_{n}"})

    with ThreadPoolExecutor(8) as pool:
        retried = list(pool.map(again, range(8)))
    assert [a.stderr for a in retried if a.stderr] == []
    passes = [_denied(a.stdout) for a in retried].count(False)
    blocks = 1 + 8 - passes
    with PostgresStore(pg_dsn) as store:
        softy = store.load(laptop.session).behavior("softy")  # type: ignore[union-attr]
    sink = PostgresAuditSink(pg_dsn)
    request.addfinalizer(sink.close)  # closed even when an assertion below fails
    overrides = [r for r in sink.records() if r["kind"] == "override"]
    assert 1 <= passes <= 4 and passes < blocks  # never two passes on one block
    assert len(overrides) == passes == len({r["override_id"] for r in overrides})
    assert sorted(o["override_id"] for o in softy.overrides) == sorted(
        r["override_id"] for r in overrides
    )
    assert softy.counter == blocks  # every refused call counted, on whichever host

    # an explicit override granted on the VPS lets the laptop's next blocked call through, once
    # (SPEC §4): a retry of a call still waiting in its window passes by retry and keeps the
    # grant, so the grant goes to the retry when no call waits, else to the next call that blocks
    granted = vps.run_cli(
        "override", "softy", "--session", vps.session, "--reason", "user approved"
    )
    assert "softy" in granted.stdout
    assert not _denied(laptop.call({**retry, "tool_use_id": "toolu_after_grant"}).stdout)
    laptop.call(laptop.bash("echo soft-me much later"))
    assert _denied(laptop.call(laptop.bash("echo soft-me later still")).stdout)
    explicit = [
        r for r in sink.records() if r["kind"] == "override" and r["mechanism"] == "explicit"
    ]
    assert len(explicit) == 1  # the grant is spent once, on whichever host
    report = sink.verify()
    assert report.ok, report.problems
    sink.close()
