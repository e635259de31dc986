"""SIGKILL a writer that produces OVERRIDES, then check the triple write (SPEC §4).

Used by ``tests/stores/test_crash_overrides.py`` and by the ``crash-overrides`` part of
``tests/benchmarks/bench_stores.py``. The writer is a real :class:`~forge_policy.Evaluator` over a
durable store (``FileStore`` or ``SQLiteStore``) and a :class:`~forge_policy.JsonlAuditSink`, with
one behavior that soft-blocks every ``Bash`` call. For call after call it evaluates ``X`` (blocked),
then the identical ``X`` again (an override by retry), and reports each decision over a pipe only
once ``evaluate`` has returned: what the parent hears is *acknowledged*.

The parent kills the writer with SIGKILL, either at a random moment or at a targeted point. For a
targeted point the writer's own operations are wrapped (in the child only: instance attributes and
``os`` functions of the forked process; the package is not changed); when the point is reached the
writer tells the parent (message ``P``) and waits, and the parent sends the SIGKILL. Points:

``apply``           inside the store transaction (lock held), before anything is decided
``audit_before``    decided, in the transaction, before the audit append
``audit_torn``      the audit batch half written (a prefix of its bytes, sometimes all but the
                    last newline): the torn tail ``verify()`` must pinpoint
``audit_head``      audit lines written and fsynced, the lock file's head anchor not yet updated
``audit_after``     audit appended (the source of truth), state not written: *between audit and
                    state*
``fsync``           FileStore: the temp file written and fsynced, not renamed
``before_replace``  FileStore: just before the rename over ``state.json``
``after_replace``   FileStore: just after the rename, before the folder fsync
``before_commit``   SQLiteStore: the row written, ``COMMIT`` not run
``after_commit``    SQLiteStore: committed, the transaction not returned
``returned``        ``evaluate`` returned, the acknowledgement not sent
``random``          the parent kills after a random number of acknowledgements and a random delay

The next writer continues the same session on the same root (state accumulates across kills),
either with a brand-new call or by repeating the call that was in flight, as an agent would retry a
call whose hook died. After every kill the parent checks (see :func:`check_triple_write`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import struct
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import forge_policy as fp
from forge_policy._time import parse_iso
from forge_policy.audit.base import session_records
from forge_policy.audit.insights import summarize
from forge_policy.audit.jsonl import JsonlAuditSink
from forge_policy.engine.reconcile import reconcile_session
from forge_policy.errors import AuditIntegrityError, ForgePolicyError
from tests.helpers import write_catalog

from . import harness

SESSION = "override-session"
BEHAVIOR = "retry-gate"

SOFT_BLOCK_BEHAVIOR = """\
schema_version: "1"
id: retry-gate
name: Retry Gate
description: Every Bash call is soft-blocked; repeating the identical call overrides the block.
category: experimental
scope: session
policy:
  triggers:
    - event: PreToolUse
      matcher: Bash
  enforcement:
    default_level: soft_block
  recovery:
    hint: repeat the identical call within the window to override
"""

COMMON_POINTS = ("apply", "audit_before", "audit_torn", "audit_head", "audit_after")
FILE_POINTS = (*COMMON_POINTS, "fsync", "before_replace", "after_replace", "returned", "random")
SQLITE_POINTS = (*COMMON_POINTS, "before_commit", "after_commit", "returned", "random")


def points_for(kind: str) -> tuple[str, ...]:
    return FILE_POINTS if kind == "file" else SQLITE_POINTS


#: One message from the writer: kind, call number, counter, override id. 49 bytes, below
#: PIPE_BUF, so every write is atomic. Kinds: R ready, S starting an evaluate, B blocked,
#: O overridden (acknowledged), P targeted point reached (waiting for the SIGKILL).
MESSAGE = struct.Struct("<cqq32s")

#: Evaluates a writer runs past its arming index before giving up (then it exits unkilled,
#: which the trial reports): an injection point that is never reached ends the trial.
LIMIT = 40


def write_gate_catalog(folder: Path) -> Path:
    """A one-behavior catalog (SPEC §5 schema): ``retry-gate`` soft-blocks every Bash call."""
    return write_catalog(folder, {BEHAVIOR: SOFT_BLOCK_BEHAVIOR})


def store_path(kind: str, root: Path) -> str:
    return harness.store_path(kind, root / "runtime")


def log_path(root: Path) -> Path:
    return root / "audit" / "overrides.log"


def call(n: int) -> fp.Event:
    """Call number ``n``: a Bash call no other number repeats."""
    return fp.Event("PreToolUse", SESSION, tool_name="Bash", tool_input={"command": f"make t{n}"})


def prepare(kind: str, root: Path) -> fp.Catalog:
    """Lay out a root (catalog, store created and migrated); return the loaded catalog, which
    forked writers inherit."""
    catalog = fp.load_catalog(str(write_gate_catalog(root / "catalog")))
    with harness.open_store(kind, store_path(kind, root)) as store:
        store.load(SESSION)  # SQLite: create and migrate now, outside any trial
    return catalog


# -- the writer (a forked child) ---------------------------------------------------------------


def override_writer(
    kind: str, root: str, catalog: Any, point: str, at: int, start: int, cut: float, ack_fd: int
) -> None:
    """Evaluate call ``start``, ``start + 1``, … each until it goes through (blocked, then the
    identical retry overrides it), reporting over ``ack_fd``; at evaluate number ``at``, stop at
    ``point`` and wait for the parent's SIGKILL. Exits 3 on anything unexpected."""
    real_write, real_fsync, real_replace = os.write, os.fsync, os.replace
    store = harness.open_store(kind, store_path(kind, Path(root)), timeout=10.0)
    sink = JsonlAuditSink(log_path(Path(root)))
    evaluator = fp.Evaluator(catalog, store=store, audit=sink)
    where: dict[str, Any] = {"index": 0, "n": start, "audit": False, "fd": -1, "writing": False}

    def post(kind: bytes, n: int = 0, counter: int = 0, oid: bytes = b"") -> None:
        real_write(ack_fd, MESSAGE.pack(kind, n, counter, oid))

    def strike(name: str) -> None:
        if point == name and where["index"] == at:
            post(b"P", where["n"])
            time.sleep(60)  # the parent's SIGKILL arrives here
            fail(f"not killed at {name}")

    def fail(message: str) -> None:
        print(f"override_writer: {message}", file=sys.stderr, flush=True)
        os._exit(3)

    # -- the injection points (this child only) --
    real_transact, real_open = store.transact, sink._open

    def transact(session_id: str, apply: Any) -> Any:
        def inside(current: Any) -> Any:
            strike("apply")
            return apply(current)

        return real_transact(session_id, inside)

    def appending(real_append: Any) -> Any:
        """``real_append`` with the audit points around it: ``append_many`` (the override),
        and ``append_sync_after_answer`` (the block: a denial, durable here, outside a scope)."""

        def append(records: Any) -> None:
            strike("audit_before")
            where["audit"] = True
            try:
                real_append(records)
            finally:
                where["audit"] = False
            strike("audit_after")

        return append

    def open_(path: Path, flags: int, **options: Any) -> int:
        fd: int = real_open(path, flags, **options)
        if path == sink.path:
            where["fd"] = fd
        return fd

    def write(fd: int, data: Any) -> int:
        if where["audit"] and fd == where["fd"] and point == "audit_torn" and where["index"] == at:
            data = bytes(data)
            # a quarter of the time all but the final newline (an unterminated last record),
            # otherwise a cut anywhere from the first byte to the one before last
            size = len(data) - 1 if cut < 0.25 else 1 + int((cut - 0.25) / 0.75 * (len(data) - 2))
            real_write(fd, data[:size])
            strike("audit_torn")
        return real_write(fd, data)

    def fsync(fd: int) -> None:
        real_fsync(fd)
        if where["audit"] and fd == where["fd"]:
            strike("audit_head")
        elif where["writing"]:
            where["writing"] = False  # the temp file's fsync (the folder's comes later)
            strike("fsync")

    def replace(src: Any, dst: Any, **kwargs: Any) -> None:
        strike("before_replace")
        real_replace(src, dst, **kwargs)
        strike("after_replace")

    store.transact = transact
    sink.append_many = appending(sink.append_many)
    sink.append_sync_after_answer = appending(sink.append_sync_after_answer)
    sink._open = open_
    os.write, os.fsync, os.replace = write, fsync, replace
    if kind == "file":
        real_store_write = store._write

        def store_write(doc: Any) -> None:
            where["writing"] = True
            try:
                real_store_write(doc)
            finally:
                where["writing"] = False

        store._write = store_write
    else:
        real_run = store._run

        def run(conn: Any, sql: str, params: tuple[Any, ...] = ()) -> Any:
            if sql == "COMMIT":
                strike("before_commit")
            row = real_run(conn, sql, params)
            if sql == "COMMIT":
                strike("after_commit")
            return row

        store._run = run

    post(b"R")
    n = start
    while where["index"] < at + LIMIT:
        where["n"] = n
        for _attempt in range(3):  # blocked, then overridden; a retry reconciled away: blocked
            where["index"] += 1
            post(b"S", n)
            try:
                decision = evaluator.evaluate(call(n))
            except Exception as exc:
                fail(f"evaluate raised {type(exc).__name__}: {exc}")
            strike("returned")
            if decision.diagnostics:
                fail(f"call {n}: decided without state: {decision.diagnostics}")
            if decision.blocked:
                blocking = decision.blocking
                assert blocking is not None
                if blocking.behavior_id != BEHAVIOR or not decision.override_allowed:
                    fail(f"call {n}: unexpected block {blocking.behavior_id} {blocking.level}")
                post(b"B", n, blocking.counter)
                continue
            if len(decision.overrides) != 1:
                fail(f"call {n}: allowed with {len(decision.overrides)} overrides")
            record = decision.overrides[0]
            if record.get("behavior_id") != BEHAVIOR or record.get("mechanism") != "retry":
                fail(f"call {n}: unexpected override {record}")
            post(b"O", n, int(record["counter"]), str(record["override_id"]).encode("ascii"))
            break
        else:
            fail(f"call {n}: blocked three times in a row")
        n += 1


# -- the parent ------------------------------------------------------------------------------


class Tracker:
    """What the parent knows of one root across trials: the acknowledged overrides, the call
    in flight (to resume), the next unused call number, and running totals for the report."""

    def __init__(self) -> None:
        self.acked: dict[str, int] = {}  # override id -> call number
        self.next_call = 1
        self.in_flight: int | None = None
        self.kills: Counter[str] = Counter()
        self.retry_kills: Counter[str] = Counter()  # kills while a retry (override) was decided
        self._blocked: int | None = None  # the call whose last acknowledged answer was a block
        self._retrying = False  # the evaluate in flight is the retry of a blocked call
        self.torn = 0
        self.reconciled: set[str] = set()  # audited, never acknowledged, added by reconciling
        self.unreconciled: set[str] = set()  # audited, missing from the state after a check
        self.healed = 0  # of those, found in the state after the next writer (no reconcile call)
        # (blocks in the insights) - (blocks in the reconciled state): the lowest and highest
        # seen, not counting a session whose state does not exist yet (its first block lost)
        self.block_drift = (0, 0)

    def absorb(self, messages: list[tuple[bytes, int, int, str]]) -> None:
        self._retrying = False
        for kind, n, _counter, oid in messages:
            if kind == b"S":
                self.in_flight = n
                self.next_call = max(self.next_call, n + 1)
                self._retrying = self._blocked == n
            elif kind == b"B":
                self.in_flight = n  # its retry is due
                self._blocked, self._retrying = n, False
            elif kind == b"O":
                self.acked[oid] = n
                self.in_flight = self._blocked = None
                self._retrying = False

    def killed(self, point: str) -> None:
        self.kills[point] += 1
        if self._retrying:
            self.retry_kills[point] += 1


def _read(pipe: Any) -> tuple[bytes, int, int, str] | None:
    chunk = pipe.read(MESSAGE.size)
    if len(chunk) < MESSAGE.size:
        return None  # EOF: the writer is dead
    kind, n, counter, oid = MESSAGE.unpack(chunk)
    return kind, n, counter, oid.rstrip(b"\0").decode("ascii")


def run_trial(
    ctx: Any,
    kind: str,
    root: Path,
    catalog: Any,
    rng: Any,
    tracker: Tracker,
    points: tuple[str, ...] = (),
    *,
    resume_rate: float = 0.5,
    persist_rate: float = 0.5,
) -> dict[str, Any]:
    """One writer, one SIGKILL, then :func:`check_triple_write`. Returns what happened and
    ``problems`` (empty when every invariant held)."""
    point = rng.choice(points or points_for(kind))
    at = rng.randint(1, 4)
    resume = tracker.in_flight is not None and rng.random() < resume_rate
    start = tracker.in_flight if resume and tracker.in_flight is not None else tracker.next_call
    cut = rng.random()
    read_fd, write_fd = os.pipe()
    args = (kind, str(root), catalog, point, at, start, cut, write_fd)
    proc = ctx.Process(target=override_writer, args=args)
    proc.start()
    os.close(write_fd)
    messages: list[tuple[bytes, int, int, str]] = []
    reached = False
    with os.fdopen(read_fd, "rb") as pipe:
        if point == "random":
            target, acks = rng.randint(0, 5), 0  # let it acknowledge a few calls...
            while (message := _read(pipe)) is not None:
                messages.append(message)
                acks += message[0] in (b"B", b"O")
                if message[0] != b"S" and acks >= target:
                    break
            deadline = time.perf_counter() + rng.uniform(0, 0.004)
            while time.perf_counter() < deadline:  # ...then a busy wait of random length
                pass
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)
            reached = True
        else:
            while (message := _read(pipe)) is not None:
                messages.append(message)
                if message[0] == b"P":
                    os.kill(proc.pid, signal.SIGKILL)
                    reached = True
                    break
        while (message := _read(pipe)) is not None:
            messages.append(message)
    proc.join()
    tracker.absorb(messages)
    problems: list[str] = []
    if not reached or proc.exitcode != -signal.SIGKILL:
        problems.append(f"writer not killed at {point} (exit code {proc.exitcode})")
    else:
        tracker.killed(point)
    persist = rng.random() < persist_rate
    facts = check_triple_write(kind, root, catalog, tracker, persist=persist)
    problems += facts.pop("problems")
    return {
        "point": point,
        "at": at,
        "resume": resume,
        "start": start,
        "acknowledged": sum(1 for m in messages if m[0] in (b"B", b"O")),
        "overrides_acknowledged": sum(1 for m in messages if m[0] == b"O"),
        "exitcode": proc.exitcode,
        **facts,
        "problems": problems,
        "ok": not problems,
    }


def _duplicates(items: list[str]) -> list[str]:
    return sorted(item for item, n in Counter(items).items() if n > 1)


def _override_ids(state: Any) -> list[str]:
    """The override ids the state keeps (the latest few: the state is bounded)."""
    if state is None or BEHAVIOR not in state.behavior_ids():
        return []
    return [str(o.get("override_id")) for o in state.behavior(BEHAVIOR).overrides]


def _accounted(state: Any, overrides: list[dict[str, Any]]) -> tuple[list[str], int]:
    """The override ids the state accounts for — those it keeps, and those of the log it
    dropped (made up to its horizon) — and its count of every override."""
    kept = _override_ids(state)
    if state is None or BEHAVIOR not in state.behavior_ids():
        return kept, 0
    bstate = state.behavior(BEHAVIOR)
    horizon = bstate.override_horizon
    dropped = [
        str(r.get("override_id"))
        for r in overrides
        if horizon is not None and parse_iso(r.get("timestamp"), -1.0) <= horizon
    ]
    return kept + [i for i in dropped if i not in kept], bstate.override_count


def check_triple_write(
    kind: str, root: Path, catalog: Any, tracker: Tracker, *, persist: bool
) -> dict[str, Any]:
    """The invariants after a kill (SPEC §4 triple write, §9):

    1. ``verify()`` is ok, or its only problem is the torn tail (``report.torn_tail``);
    2. the state loads (nothing moved aside, nothing quarantined);
    3. every acknowledged override id is in the audit log;
    4. every acknowledged override id is in the state, the state holds no override the log
       lacks, and after reconciliation (a dry run on a copy; with ``persist``, also
       :meth:`Evaluator.reconcile`, checked idempotent) the state holds exactly the log's
       overrides, and ``summarize`` counts each of them for the behavior;
    5. no override id appears twice (log, state, reconciled state), each override follows a
       block of its counter and no block is overridden twice, and overrides <= blocks.
    """
    problems: list[str] = []
    sink = JsonlAuditSink(log_path(root))
    report = sink.verify()
    torn_only = report.torn_tail and all(
        "torn tail" in p or "no trailing newline" in p for p in report.problems
    )
    if not (report.ok or torn_only):
        problems.append(f"verify: {report!r}")
    if report.torn_tail:
        tracker.torn += 1
    try:
        records = list(sink.records())
    except (AuditIntegrityError, ForgePolicyError) as exc:
        return {"problems": [*problems, f"audit records unreadable: {exc}"], "torn": False}
    mine = [r for r in records if r.get("session_id") == SESSION]
    overrides = [r for r in mine if r.get("kind") == "override"]
    audit_ids = [str(r.get("override_id")) for r in overrides]
    audit_set = set(audit_ids)
    if dups := _duplicates(audit_ids):
        problems.append(f"override ids twice in the audit log: {dups}")
    blocked: set[int] = set()
    overridden: list[int] = []
    for record in mine:
        if record.get("kind") == "block":
            blocked.add(record["counter"])
        elif record.get("kind") == "override":
            if record.get("counter") not in blocked:
                problems.append(f"override {record['override_id']} follows no block of its counter")
            overridden.append(record["counter"])
    if dups := _duplicates([str(c) for c in overridden]):
        problems.append(f"blocks overridden twice (counters): {dups}")
    acked = set(tracker.acked)
    if missing := sorted(acked - audit_set):
        problems.append(f"acknowledged overrides missing from the audit log: {missing}")

    path = store_path(kind, root)
    try:
        with harness.open_store(kind, path) as store:
            state = store.load(SESSION)
    except ForgePolicyError as exc:
        return {"problems": [*problems, f"state does not load: {exc}"], "torn": report.torn_tail}
    if kind == "file":
        if moved := sorted(p.name for p in Path(path).parent.glob("*.corrupt-*")):
            problems.append(f"state moved aside: {moved}")
    else:
        conn = sqlite3.connect(path)
        try:
            (quarantined,) = conn.execute("SELECT count(*) FROM quarantine").fetchone()
        finally:
            conn.close()
        if quarantined:
            problems.append(f"{quarantined} rows quarantined")
    if dups := _duplicates(_override_ids(state)):
        problems.append(f"override ids twice in the state: {dups}")
    state_ids, _count = _accounted(state, overrides)
    if missing := sorted(acked - set(state_ids)):
        problems.append(f"acknowledged overrides missing from the state: {missing}")
    if ahead := sorted(set(state_ids) - audit_set):
        problems.append(f"overrides in the state but not in the audit log: {ahead}")

    # what the last check left unreconciled, the writer since has brought in by itself (it
    # reconciles before it grants an override) or still misses
    tracker.healed += len(tracker.unreconciled & set(state_ids))
    added: list[str] = []
    state_blocks = 0
    if state is not None:
        dry = state.copy()
        added = reconcile_session(dry, session_records(sink, SESSION))
        if dups := _duplicates(_override_ids(dry)):
            problems.append(f"override ids twice after reconciliation: {dups}")
        dry_ids, dry_count = _accounted(dry, overrides)
        if dry_count != len(dry_ids):
            problems.append(f"reconciled state counts {dry_count} overrides, accounts {dry_ids}")
        if set(dry_ids) != audit_set:
            problems.append(
                f"reconciled state and audit log disagree: state only "
                f"{sorted(set(dry_ids) - audit_set)}, log only {sorted(audit_set - set(dry_ids))}"
            )
        if BEHAVIOR in dry.behavior_ids():
            bstate = dry.behavior(BEHAVIOR)
            state_blocks = bstate.blocks
            born = dry.created_at
            counters = [
                r["counter"]
                for r in mine
                if r.get("kind") == "block" and parse_iso(r.get("timestamp"), -1.0) >= born
            ]
            if counters and bstate.counter != max(counters):
                problems.append(
                    f"reconciled counter {bstate.counter}, the log's last block {max(counters)}"
                )
        if persist:
            with harness.open_store(kind, path) as store:
                evaluator = fp.Evaluator(catalog, store=store, audit=sink)
                got = evaluator.reconcile(SESSION)
                again = evaluator.reconcile(SESSION)
                persisted, persisted_count = _accounted(store.load(SESSION), overrides)
            if got != added or again:
                problems.append(f"Evaluator.reconcile: {got}, then {again}; dry run {added}")
            if set(persisted) != audit_set or persisted_count != len(audit_set):
                problems.append(f"persisted reconciliation: {persisted} vs log {audit_ids}")
    elif audit_set:
        problems.append(f"no session state, yet the log holds overrides {sorted(audit_set)}")
    tracker.reconciled |= set(added) - acked
    tracker.unreconciled = set() if persist else set(added)

    summary = summarize(records).behaviors.get(BEHAVIOR)
    if summary is not None:
        if summary.overrides != len(audit_set):
            problems.append(f"insights count {summary.overrides} overrides, log {audit_set}")
        if summary.overrides > summary.blocks:
            problems.append(f"insights: {summary.overrides} overrides > {summary.blocks}")
        if state is not None:  # a session's lost first block has no state to agree with yet
            drift = summary.blocks - state_blocks
            low, high = tracker.block_drift
            tracker.block_drift = (min(low, drift), max(high, drift))
    elif audit_set:
        problems.append("insights do not count the behavior")
    return {"problems": problems, "torn": report.torn_tail, "reconciled": added}


def finish(kind: str, root: Path, catalog: Any, tracker: Tracker) -> list[str]:
    """After the last kill: one clean blocked-then-overridden call in this process. The
    override is granted only after the evaluator reconciled from the log, so the state must
    then equal the log with no explicit reconcile, and the next append repaired any torn tail."""
    problems: list[str] = []
    sink = JsonlAuditSink(log_path(root))
    n = tracker.next_call
    with harness.open_store(kind, store_path(kind, root)) as store:
        evaluator = fp.Evaluator(catalog, store=store, audit=sink)
        decisions = [evaluator.evaluate(call(n)) for _ in range(2)]
        state = store.load(SESSION)
    if not decisions[0].blocked or decisions[1].blocked or len(decisions[1].overrides) != 1:
        problems.append(f"clean call {n}: {[d.outcome for d in decisions]}")
    else:
        tracker.acked[str(decisions[1].overrides[0]["override_id"])] = n
    report = sink.verify()
    if not report.ok:
        problems.append(f"verify after a clean append: {report!r}")
    overrides = [
        r for r in sink.records() if r.get("kind") == "override" and r.get("session_id") == SESSION
    ]
    audit_ids = [str(r["override_id"]) for r in overrides]
    state_ids, count = _accounted(state, overrides)
    if sorted(state_ids) != sorted(audit_ids) or _duplicates(audit_ids) or count != len(audit_ids):
        problems.append(f"state {len(state_ids)} overrides, log {len(audit_ids)}")
    if missing := sorted(set(tracker.acked) - set(state_ids)):
        problems.append(f"acknowledged overrides missing: {missing}")
    return problems
