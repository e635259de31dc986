"""PostgreSQL store benchmark, side by side with SQLite in the same run. Not collected by pytest.

    .venv-test/bin/python tests/benchmarks/bench_postgres.py [--events 200] [--sizes 10,1000,100000]

Starts its own cluster (``tests/pg_server.py``, fsync on: commits are durable, as SQLite FULL's)
unless ``--dsn`` names a database. Two parts, printed as Markdown for RESULTS.md:

- **writers**: 1, 4 and 16 forked processes, each evaluating ``--events`` violating events (a
  state write each) through a real :class:`~forge_policy.Evaluator`, all on one session or each
  on its own; events/s over the wall time, p50/p99 of each event's latency. Stores: SQLite
  (FULL), PostgreSQL with row locks (the default) and with advisory locks.
- **scaling**: the store's per-event cost (one ``transact`` reading and writing a session) with
  10 to 100,000 live sessions in the table (the goal: flat, at most 1.5x).

``--no-fsync`` runs both stores without flushing to disk (SQLite ``synchronous=OFF``, the
cluster with ``fsync=off``): the store's own cost, apart from the disk's.
"""

from __future__ import annotations

import argparse
import io
import json
import multiprocessing
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for stores.harness
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, for tests.*

from stores import harness

import forge_policy as fp
from forge_policy.state import SessionState
from forge_policy.stores.postgres import PostgresStore
from forge_policy.stores.sqlite import SQLiteStore

T0 = 1_800_000_000.0


#: ``--no-fsync``: SQLite ``synchronous=OFF`` beside a cluster with ``fsync=off`` (the store's
#: own cost, without the disk's flush; set before the writers fork)
FSYNC = {"on": True}


def open_store(kind: str, target: str) -> Any:
    if kind == "sqlite":
        return SQLiteStore(target, busy_timeout=60.0, synchronous="FULL" if FSYNC["on"] else "OFF")
    return PostgresStore(target, lock_timeout=60.0, locking=kind.split("-")[1])


def _writer(kind: str, target: str, catalog_dir: str, session: str, events: int, go: Any) -> Any:
    catalog = fp.load_catalog(catalog_dir)
    store = open_store(kind, target)
    ev = fp.Evaluator(catalog, store=store, clock=lambda: T0)
    store.transact(session + "-warm", lambda current: (None, None))  # connect before the start
    go.wait()
    latencies = []
    for i in range(events):
        event = fp.Event(
            "PreToolUse", session, tool_name="Bash", tool_input={"command": f"x {i}", "n": 1}
        )
        start = time.perf_counter()
        decision = ev.evaluate(event)
        latencies.append(time.perf_counter() - start)
        assert not decision.diagnostics, decision.diagnostics  # every event decided with state
    store.close()
    return latencies


def _report(out: Any, *args: Any) -> None:
    out.put(_writer(*args))


def writers(targets: dict[str, str], catalog_dir: str, events: int) -> list[str]:
    rows = [
        "| store | writers | sessions | events/s | p50 ms | p99 ms | counter check |",
        "|---|---|---|---|---|---|---|",
    ]
    ctx = multiprocessing.get_context("fork")
    for shared in (True, False):
        for n in (1, 4, 16):
            for kind, target in targets.items():
                tag = f"{kind}-{n}-{'one' if shared else 'many'}"
                sessions = [tag if shared else f"{tag}-{w}" for w in range(n)]
                go, out = ctx.Event(), ctx.SimpleQueue()

                procs = [
                    ctx.Process(
                        target=_report, args=(out, kind, target, catalog_dir, s, events, go)
                    )
                    for s in sessions
                ]
                for proc in procs:
                    proc.start()
                time.sleep(1.0 + n * 0.1)  # every writer connected and waiting
                start = time.perf_counter()
                go.set()
                results = [out.get() for _ in procs]
                wall = time.perf_counter() - start
                for proc in procs:
                    proc.join()
                latencies = sorted(x for r in results for x in r)
                with open_store(kind, target) as store:
                    total = sum(harness.counter_of(store.load(s)) for s in set(sessions))
                ok = "ok" if total == n * events else f"LOST {n * events - total}"
                p50 = statistics.median(latencies) * 1e3
                p99 = latencies[int(len(latencies) * 0.99) - 1] * 1e3
                rows.append(
                    f"| {kind} | {n} | {'one' if shared else 'one each'} | "
                    f"{n * events / wall:,.0f} | {p50:.2f} | {p99:.2f} | {ok} |"
                )
                print(rows[-1], file=sys.stderr)
    return rows


def _doc(i: int) -> str:
    state = SessionState.new(T0)
    for behavior in ("search-first", "verify-before-done"):
        bstate = state.behavior(behavior)
        bstate.counter = i % 7
        bstate.record_violation(T0, "Write")
    state.flags["search_context_ready"] = True
    state.totals["tokens"] = i * 13
    return json.dumps(state.to_dict(), separators=(",", ":"))


def populate(kind: str, target: str, sessions: int) -> None:
    """``sessions`` live sessions, written in bulk (COPY / one transaction)."""
    with open_store(kind, target) as store:
        store.session_ids()  # the schema
    if kind == "sqlite":
        import sqlite3

        conn = sqlite3.connect(target)
        with conn:
            conn.execute("DELETE FROM sessions")
            conn.executemany(
                "INSERT INTO sessions VALUES (?, ?, ?)",
                ((f"session-{i:06d}", _doc(i), T0) for i in range(sessions)),
            )
        conn.close()
        return
    import psycopg

    with psycopg.connect(target, autocommit=True) as conn:
        conn.execute("TRUNCATE forge_sessions")
        buffer = io.StringIO()
        for i in range(sessions):
            text = _doc(i).replace("\\", "\\\\")
            buffer.write(f"session-{i:06d}\t{text}\t{T0}\n")
        with conn.cursor() as cur, cur.copy("COPY forge_sessions FROM STDIN") as copy:
            copy.write(buffer.getvalue())
        conn.execute("VACUUM ANALYZE forge_sessions")


def _bump(current: SessionState | None) -> tuple[int, SessionState]:
    """What a counted event does to the store: read the session, count, write it back."""
    state = current if current is not None else SessionState.new(T0)
    bstate = state.behavior(harness.BEHAVIOR)
    bstate.counter += 1
    bstate.record_violation(T0, "Bash")
    state.touch(T0)
    return bstate.counter, state


def scaling(targets: dict[str, str], sizes: list[int], events: int) -> list[str]:
    """The store's part of an event (one ``transact`` that reads and writes a session) among
    ``n`` live sessions: the engine's own cost is the same for every store and is left out
    (the writers table has it)."""
    rows = [
        "| store | " + " | ".join(f"{n:,} sessions" for n in sizes) + " | growth |",
        "|---" * (len(sizes) + 2) + "|",
    ]
    for kind, target in targets.items():
        cells = []
        for n in sizes:
            populate(kind, target, n)
            with open_store(kind, target) as store:
                samples = []
                for attempt in range(3):
                    sid = f"bench-target-{attempt}"  # a new row among the n, then updated
                    start = time.perf_counter()
                    for _ in range(events):
                        store.transact(sid, _bump)
                    samples.append((time.perf_counter() - start) / events)
                cells.append(statistics.median(samples))
            print(kind, n, f"{cells[-1] * 1e6:.0f} us", file=sys.stderr)
        growth = cells[-1] / cells[0]
        shown = " | ".join(f"{c * 1e6:,.0f} µs" for c in cells)
        rows.append(f"| {kind} | {shown} | {growth:.2f}x |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", help="an existing, empty database (else a throwaway cluster)")
    parser.add_argument("--events", type=int, default=200, help="events per writer")
    parser.add_argument("--sizes", default="10,1000,10000,100000")
    parser.add_argument("--part", choices=("writers", "scaling", "all"), default="all")
    parser.add_argument(
        "--no-fsync", action="store_true", help="SQLite synchronous=OFF, PostgreSQL fsync=off"
    )
    args = parser.parse_args()
    FSYNC["on"] = not args.no_fsync
    server = None
    if args.dsn:
        dsn = args.dsn
    else:
        from tests.pg_server import PgServer

        server = PgServer(fsync=FSYNC["on"])
        dsn = server.database()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            catalog_dir = str(harness.write_counting_catalog(Path(tmp) / "catalog"))
            targets = {
                "sqlite": str(Path(tmp) / "state.db"),
                "postgres-row": dsn,
                "postgres-advisory": dsn,
            }
            print(
                f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python "
                f"{platform.python_version()}; PostgreSQL on loopback; "
                + ("durable commits (fsync)\n" if FSYNC["on"] else "no fsync\n")
            )
            if args.part in ("writers", "all"):
                print("\n".join(writers(targets, catalog_dir, args.events)) + "\n")
            if args.part in ("scaling", "all"):
                sizes = [int(s) for s in args.sizes.split(",")]
                print("\n".join(scaling(targets, sizes, 500)))
    finally:
        if server is not None:
            server.close()


if __name__ == "__main__":
    main()
