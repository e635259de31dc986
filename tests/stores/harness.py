"""Multi-process helpers for the store tests and ``tests/benchmarks/bench_stores.py``.

Workers are module-level functions so that both the ``fork`` and the ``spawn`` start methods can
run them. Nothing here sleeps to synchronise: processes signal readiness over pipes and events.
"""

from __future__ import annotations

import os
import random
import signal
import struct
import sys
from pathlib import Path
from typing import Any

import forge_policy as fp
from forge_policy.state import SessionState
from forge_policy.stores.file import FileStore
from forge_policy.stores.sqlite import SQLiteStore
from tests.helpers import write_catalog

SESSION = "shared-session"
BEHAVIOR = "always-count"

COUNTING_BEHAVIOR = """\
schema_version: "1"
id: always-count
name: Always Count
description: Every Bash call is a silent violation; it also sets a flag and adds to a total.
category: experimental
scope: session
policy:
  triggers:
    - event: PreToolUse
      matcher: Bash
      action: set_flag
      flag: seen_bash
    - event: PreToolUse
      matcher: Bash
      action: accumulate
      total: calls
      value: n
    - event: PreToolUse
      matcher: Bash
  enforcement:
    default_level: silent
  recovery:
    hint: nothing to correct; this behavior only counts
"""


def write_counting_catalog(root: Path) -> Path:
    """A one-behavior catalog (SPEC §5 schema) whose behavior violates on every Bash call."""
    return write_catalog(root, {BEHAVIOR: COUNTING_BEHAVIOR})


def open_store(kind: str, path: str, *, timeout: float = 2.0, fsync: bool = True) -> Any:
    """A durable store of ``kind`` (``file``, ``sqlite`` or ``postgres``) over ``path`` (a DSN
    for ``postgres``)."""
    if kind == "postgres":
        from forge_policy.stores.postgres import PostgresStore

        return PostgresStore(path, lock_timeout=timeout)
    if kind == "file":
        return FileStore(path, lock_timeout=timeout, fsync=fsync)
    if kind == "sqlite":
        return SQLiteStore(path, busy_timeout=timeout, synchronous="FULL" if fsync else "OFF")
    raise ValueError(kind)


def store_path(kind: str, folder: Path) -> str:
    return str(folder / ("state.json" if kind == "file" else "state.db"))


def counting_worker(kind: str, path: str, catalog_dir: str, events: int, timeout: float) -> int:
    """Evaluate ``events`` violating Bash calls on the shared session; return how many were
    decided with state (a stateless fallback would lose an increment, so callers expect all)."""
    catalog = fp.load_catalog(catalog_dir)
    store = open_store(kind, path, timeout=timeout)
    evaluator = fp.Evaluator(catalog, store=store, clock=lambda: 1_800_000_000.0)
    stateful = 0
    with store:
        for i in range(events):
            command = {"command": f"echo {os.getpid()} {i}", "n": 1}
            decision = evaluator.evaluate(
                fp.Event("PreToolUse", SESSION, tool_name="Bash", tool_input=command)
            )
            if not decision.diagnostics:
                stateful += 1
    return stateful


def counter_of(state: SessionState | None, behavior: str = BEHAVIOR) -> int:
    if state is None or behavior not in state.behavior_ids():
        return 0
    return state.behavior(behavior).counter


def _increment(current: SessionState | None) -> tuple[int, SessionState]:
    state = current if current is not None else SessionState.new(1_800_000_000.0)
    bstate = state.behavior(BEHAVIOR)
    bstate.counter = bstate.counter + 1
    state.totals["writes"] = bstate.counter  # must always agree with the counter
    return bstate.counter, state


#: Where an injected crash strikes: inside ``apply`` (lock held, nothing written), after the
#: temp file's fsync, just before and just after the rename (FileStore only), after the commit
#: but before the acknowledgement (the one increment in flight), or at a random moment.
CRASH_POINTS = ("apply", "fsync", "before_replace", "after_replace", "after_commit", "random")
SQLITE_CRASH_POINTS = ("apply", "after_commit", "random")
#: PostgreSQL's own WAL covers its writes: a killed client's transaction is rolled back.
POSTGRES_CRASH_POINTS = SQLITE_CRASH_POINTS


def crash_writer(kind: str, path: str, point: str, at: int, ack_fd: int) -> None:
    """Increment the counter, writing each acknowledged value (8 bytes, atomic on a pipe) to
    ``ack_fd``; SIGKILL ourselves at ``point`` during increment number ``at``. A writer that
    was not killed exits 0, which the trial reports as a failure."""
    store = open_store(kind, path, timeout=5.0)
    done = 0

    def die() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    def armed() -> bool:
        return point != "random" and done + 1 == at

    real_replace, real_fsync = os.replace, os.fsync

    def replace(src: Any, dst: Any, **kwargs: Any) -> None:
        if armed() and point == "before_replace":
            die()
        real_replace(src, dst, **kwargs)
        if armed() and point == "after_replace":
            die()

    def fsync(fd: int) -> None:
        real_fsync(fd)
        if armed() and point == "fsync":
            die()

    os.replace, os.fsync = replace, fsync  # type: ignore[assignment]  # this child only

    def apply(current: SessionState | None) -> tuple[int, SessionState]:
        if armed() and point == "apply":
            die()
        return _increment(current)

    os.write(ack_fd, struct.pack("<q", -1))  # ready
    while done < at + 1000:  # an injection point never reached ends the trial, not the suite
        value = store.transact(SESSION, apply)
        if armed() and point == "after_commit":
            die()
        done += 1
        os.write(ack_fd, struct.pack("<q", value))


def load_session(kind: str, path: str) -> SessionState | None:
    with open_store(kind, path) as store:
        return store.load(SESSION)  # type: ignore[no-any-return]


def _read_acks(pipe: Any, limit: int | None = None) -> list[int]:
    acks: list[int] = []
    while limit is None or len(acks) < limit:
        chunk = pipe.read(8)
        if len(chunk) < 8:  # EOF: the writer is dead (a partial record cannot happen: 8 bytes
            break  # are below PIPE_BUF, so each write is atomic)
        acks.append(struct.unpack("<q", chunk)[0])
    return acks


def run_crash_trial(
    ctx: Any, kind: str, path: str, rng: random.Random, points: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Start a writer, kill it (by injection or at a random moment), and check the invariants:
    the state loads, ``before + acknowledged <= counter <= before + acknowledged + 1`` (at most
    the one transaction in flight), and the document agrees with itself (``totals.writes``)."""
    before = counter_of(load_session(kind, path))
    # SQLite's own journal covers its file operations; only ours can be injected into
    point = rng.choice(points or (CRASH_POINTS if kind == "file" else SQLITE_CRASH_POINTS))
    at = rng.randint(1, 4)
    read_fd, write_fd = os.pipe()
    proc = ctx.Process(target=crash_writer, args=(kind, path, point, at, write_fd))
    proc.start()
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        ready = _read_acks(pipe, 1)
        acks = []
        if ready and point == "random":
            acks = _read_acks(pipe, rng.randint(0, 6))  # let it commit a few...
            for _ in range(rng.randint(0, 20_000)):  # ...then a busy spin of random length
                pass
            os.kill(proc.pid, signal.SIGKILL)
        acks += _read_acks(pipe)
    proc.join()
    state = load_session(kind, path)
    after = counter_of(state)
    writes = state.totals.get("writes", 0) if state is not None else 0
    ok = before + len(acks) <= after <= before + len(acks) + 1 and writes == after
    return {
        "point": point,
        "at": at,
        "before": before,
        "acknowledged": len(acks),
        "after": after,
        "consistent": writes == after,
        "ok": ok and proc.exitcode == -signal.SIGKILL,
        "exitcode": proc.exitcode,
    }


def hold_lock(kind: str, path: str, ready: Any, release: Any, result: Any) -> None:
    """Hold the store's lock (inside a transaction that increments) until ``release`` is set."""

    def apply(current: SessionState | None) -> tuple[int, SessionState]:
        ready.set()
        release.wait(30)
        return _increment(current)

    store = open_store(kind, path, timeout=5.0)
    try:
        result.put(store.transact(SESSION, apply))
    except BaseException as exc:  # report, never hang the parent
        result.put(repr(exc))
        sys.exit(1)
