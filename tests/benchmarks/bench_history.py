"""History flatness: per-event cost after 10,000 prior events in one session vs after 1, and with
10,000 live sessions in the file store vs 10.

Not collected by pytest. Run:

    .venv/bin/python tests/benchmarks/bench_history.py [--prior 10000] [--cycles 40]
        [--sessions 10000] [--json]

The evaluator is built as the hook builds it (``Config(...).build_evaluator()``, see
``forge_policy/config/env.py``): per store kind (``FORGE_STORE=memory``, ``file``, ``sqlite:``,
``postgresql://…``)
its store with the hook's TTL and lock timeout (``postgres``: a database of a real server this
script starts, ``tests/pg_server.py``, fsync on), and the JSONL audit log ``<root>/audit/
overrides.log`` (fsynced) that every store kind gets. The catalog (written to a temporary folder)
has two behaviors:

- ``retry-gate``: a Bash command starting with ``deploy`` is soft-blocked; the identical call
  repeated within the override window (60 s) is an override (SPEC §4: audited, then recorded in
  the session);
- ``look-first``: a ``Read`` sets a flag, a ``Write`` consumes it (a silent violation without it).

The traffic is one session of cycles of five events, two seconds apart on a fake clock: ``deploy
N`` (blocked), ``deploy N`` again (the override), a ``Read``, a ``Write`` and an allowed Bash
``ls``. 10,000 prior events are 2,000 cycles: 2,000 blocks, 2,000 overrides, 6,000 other events.

- **history**: per store, ``--cycles`` timed cycles after 1 prior event (a fresh session), then
  the session is driven to ``--prior`` events and the same number of cycles is timed again. The
  per-event cost is the median cycle time over 5, wall and CPU (this process's user + system
  time, which leaves out waiting for the disk: the file and SQLite stores and the audit log
  fsync); the ratio after / before is printed for both (flat: 1). The two sessions live in two
  roots, built first, then timed side by side (a cycle in one, a cycle in the other), so the
  machine's noise hits both alike; the fresh session has 1 to 1 + 5 x ``--cycles`` prior events
  while it is timed, the loaded one ``--prior`` to ``--prior`` + 5 x ``--cycles``. The figure
  with a target (issue 28: <= 1.5x, carried as ``target`` in its ``--json`` ratio) is a blocked
  call and its retry: median block + median override, after ``--prior`` over after 1.
- **live sessions** (file store): per-event cost of the same cycles in a new session when the
  store holds 10 or ``--sessions`` other live sessions, each a copy of a session of one cycle
  (5 events, 1 override: ~620 bytes of JSON), the two stores timed side by side likewise.

``--json`` prints the figures and the ratios run_all.py compares (see benchjson.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchjson import emit, ratio  # this folder's shared --json format

import forge_policy as fp
from forge_policy.config.env import Config

STEP = 2.0  # seconds between two events (fake clock)
CYCLE = 5
GATE = """\
schema_version: "1"
id: retry-gate
name: Retry Gate
description: A deploy is soft-blocked; repeating the identical call overrides the block.
category: experimental
scope: session
policy:
  triggers:
    - event: PreToolUse
      matcher: Bash
      conditions:
        - field: command
          operator: regex_match
          value: "^deploy\\\\b"
  enforcement:
    default_level: soft_block
  recovery:
    hint: repeat the identical call within the window to override
"""
LOOK = """\
schema_version: "1"
id: look-first
name: Look First
description: A Read earns the next Write.
category: experimental
scope: session
policy:
  triggers:
    - event: PreToolUse
      matcher: Read
      action: set_flag
      flag: looked
    - event: PreToolUse
      matcher: Write
      action: check_flag
      flag: looked
      on_present: consume
      on_absent: violate
  enforcement:
    default_level: silent
  recovery:
    hint: read the file first
"""
KINDS = ("block", "override", "read", "write", "allow")


def write_catalog(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = ['schema_version: "1"', "behaviors:"]
    for behavior_id, text in (("retry-gate", GATE), ("look-first", LOOK)):
        (folder / behavior_id).mkdir(exist_ok=True)
        (folder / behavior_id / "behavior.yaml").write_text(text, encoding="utf-8")
        lines.append(f"  - id: {behavior_id}\n    enabled: true")
    (folder / "index.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def cycle(session: str, n: int) -> list[fp.Event]:
    """Cycle ``n``: block, override, read, write, allow (see the module docstring)."""
    deploy = {"command": f"deploy build-{n}"}
    return [
        fp.Event("PreToolUse", session, tool_name="Bash", tool_input=deploy),
        fp.Event("PreToolUse", session, tool_name="Bash", tool_input=dict(deploy)),
        fp.Event("PreToolUse", session, tool_name="Read", tool_input={"file_path": "/p/a.py"}),
        fp.Event(
            "PreToolUse",
            session,
            tool_name="Write",
            tool_input={"file_path": f"/p/new{n % 50}.py", "content": "X = 1\n"},
        ),
        fp.Event("PreToolUse", session, tool_name="Bash", tool_input={"command": "ls -la"}),
    ]


class Run:
    """One root: the hook's evaluator over a store kind, a fake clock, event counting."""

    def __init__(self, root: Path, catalog: Path, store: str, start: float) -> None:
        self.clock = [start]
        config = Config(root=str(root), behaviors_dir=str(catalog), store=store)
        self.evaluator = config.build_evaluator(clock=lambda: self.clock[0])
        self.overrides = 0
        self.blocks = 0

    def evaluate(self, event: fp.Event) -> fp.Decision:
        self.clock[0] += STEP
        decision = self.evaluator.evaluate(event)
        self.blocks += decision.blocked
        self.overrides += bool(decision.overrides)
        return decision

    def drive(self, session: str, first: int, cycles: int) -> None:
        for n in range(first, first + cycles):
            for event in cycle(session, n):
                self.evaluate(event)

    def timed_cycle(
        self, session: str, n: int, per_kind: dict[str, list[float]]
    ) -> tuple[float, float]:
        """Run cycle ``n``, adding each event's wall seconds to ``per_kind``; return the wall
        and CPU (this process, user + system) seconds of the cycle."""
        total = 0.0
        cpu = time.process_time()
        for kind, event in zip(KINDS, cycle(session, n), strict=True):
            start = time.perf_counter()
            self.evaluate(event)
            spent = time.perf_counter() - start
            per_kind[kind].append(spent)
            total += spent
        return total, time.process_time() - cpu

    def close(self) -> None:
        closer = getattr(self.evaluator.store, "close", None)
        if closer is not None:
            closer()


STORES = {"memory": "memory", "file": "file", "sqlite": "sqlite:", "postgres": ""}
#: a blocked call and its retry after ``--prior`` events over the same in a fresh session (issue 28)
BLOCK_RETRY_TARGET = 1.5
PG: dict[str, Any] = {}  # the PostgreSQL server, started on first use (tests/pg_server.py)


def store_spec(store: str) -> str:
    """``FORGE_STORE`` for ``store``; PostgreSQL: a new database of this script's own server
    (a real one, on 127.0.0.1, fsync on), one per root."""
    if store != "postgres":
        return STORES[store]
    if "server" not in PG:
        import sys

        sys.path.append(str(Path(__file__).resolve().parents[2]))  # the checkout, for tests.*
        from tests.pg_server import PgServer

        PG["server"] = PgServer(fsync=True)
    return str(PG["server"].database())


def side_by_side(
    runs: tuple[Run, Run], sessions: tuple[str, str], firsts: tuple[int, int], cycles: int
) -> tuple[dict[str, float], dict[str, float]]:
    """Time ``cycles`` cycles in each run, alternating (the machine's noise hits both alike):
    per run, the per-event cost (median cycle / 5) and the per-kind medians, in µs."""
    totals: tuple[list[float], list[float]] = ([], [])
    cpus: tuple[list[float], list[float]] = ([], [])
    kinds: tuple[dict[str, list[float]], ...] = ({k: [] for k in KINDS}, {k: [] for k in KINDS})
    for c in range(cycles):
        for i in (0, 1):
            wall, cpu = runs[i].timed_cycle(sessions[i], firsts[i] + c, kinds[i])
            totals[i].append(wall)
            cpus[i].append(cpu)
    out = []
    for i in (0, 1):
        data = {
            "event": statistics.median(totals[i]) / CYCLE * 1e6,
            "event_cpu": statistics.median(cpus[i]) / CYCLE * 1e6,
        }
        data.update({k: statistics.median(v) * 1e6 for k, v in kinds[i].items()})
        out.append(data)
    return out[0], out[1]


def history(store: str, prior: int, cycles: int, start: float) -> dict[str, Any]:
    """Per-event cost in a session after 1 prior event and in one after ``prior``, each in a
    root of its own, timed side by side."""
    with tempfile.TemporaryDirectory(prefix="forge-history-") as tmp:
        catalog = write_catalog(Path(tmp) / "catalog")
        fresh_run = Run(Path(tmp) / "fresh" / ".forge", catalog, store_spec(store), start)
        loaded_run = Run(Path(tmp) / "loaded" / ".forge", catalog, store_spec(store), start)
        try:
            session = "history-session"
            for run in (fresh_run, loaded_run):
                run.drive("warm-up", 10**6, 2)  # another session: files created, sink opened
                run.evaluate(cycle(session, 0)[2])  # the 1 prior event: a Read
            # the loaded session: up to ``prior`` prior events (whole cycles, the rest Reads)
            full, rest = divmod(prior - 1, CYCLE)
            loaded_run.drive(session, 0, full)
            for _ in range(rest):
                loaded_run.evaluate(cycle(session, 0)[2])
            prior_overrides = loaded_run.overrides
            fresh, loaded = side_by_side(
                (fresh_run, loaded_run), (session, session), (0, full), cycles
            )
            state = loaded_run.evaluator.store.load(session)
            doc = json.dumps(state.to_dict()) if state is not None else ""
            log = Path(tmp) / "loaded" / ".forge" / "audit" / "overrides.log"
            return {
                "fresh": fresh,
                "loaded": loaded,
                "prior_overrides": prior_overrides,
                "state_bytes": len(doc),
                "audit_bytes": log.stat().st_size if log.exists() else 0,
            }
        finally:
            fresh_run.close()
            loaded_run.close()


def populated(root: Path, catalog: Path, count: int, start: float) -> Run:
    """A file store holding ``count`` live sessions (copies of one cycle's session)."""
    run = Run(root, catalog, "file", start)
    run.drive("template", 0, 1)  # a session of 5 events, 1 override
    run.close()
    path = root / "runtime" / "state.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    sessions = doc.get("sessions")
    if not isinstance(sessions, dict) or "template" not in sessions:
        raise SystemExit(f"bench_history: unexpected state.json layout: {sorted(doc)}")
    template = sessions.pop("template")
    for i in range(count):
        sessions[f"live-{i:06d}"] = template
    path.write_text(json.dumps(doc), encoding="utf-8")
    run = Run(root, catalog, "file", run.clock[0])
    run.drive("probe", 0, 1)  # warm: the first read of the document, the lazy sink
    return run


def live_sessions(
    counts: tuple[int, int], cycles: int, start: float
) -> tuple[dict[str, float], dict[str, float]]:
    """File store: per-event cost in a new session when ``counts`` other sessions are live,
    the two stores timed side by side."""
    with tempfile.TemporaryDirectory(prefix="forge-live-") as tmp:
        catalog = write_catalog(Path(tmp) / "catalog")
        roots = [Path(tmp) / f"live-{n}" / ".forge" for n in counts]
        runs = (
            populated(roots[0], catalog, counts[0], start),
            populated(roots[1], catalog, counts[1], start),
        )
        try:
            small, big = side_by_side(runs, ("probe", "probe"), (1, 1), cycles)
        finally:
            for run in runs:
                run.close()
        for data, root in ((small, roots[0]), (big, roots[1])):
            data["state_bytes"] = (root / "runtime" / "state.json").stat().st_size
        return small, big


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prior", type=int, default=10_000, help="prior events (default 10000)")
    parser.add_argument("--cycles", type=int, default=40, help="timed cycles of 5 events")
    parser.add_argument("--sessions", type=int, default=10_000, help="live sessions (file store)")
    parser.add_argument("--stores", default="memory,file,sqlite,postgres")
    parser.add_argument("--json", action="store_true", help="print figures and ratios as JSON")
    args = parser.parse_args()
    say = (lambda *a, **k: None) if args.json else print
    # the fake clock ends before the real one: nothing is stamped in the future
    start = time.time() - STEP * (args.prior + 100 * args.cycles) - 3600
    load = os.getloadavg()[0]
    figures: dict[str, float] = {}
    compared: dict[str, dict[str, object]] = {}
    say(
        f"Machine: {os.cpu_count()} cores, {platform.machine()}, "
        f"{platform.python_implementation()} {platform.python_version()}, {platform.system()}, "
        f"load average {load:.2f}"
    )
    say(f"forge_policy: {fp.__file__}\n")
    say(
        f"History: one session, {args.cycles} timed cycles of 5 events after 1 and after "
        f"{args.prior:,} prior events (µs per event; per-kind medians)\n"
    )
    say(
        "| store | wall after 1 | wall after N | ratio | CPU after 1 | CPU after N | ratio "
        "| block | override | read | write | allow | overrides before | state | audit log |"
    )
    say("|---" * 15 + "|")
    retries: dict[str, float] = {}
    for store in args.stores.split(","):
        try:
            result = history(store, args.prior, args.cycles, start)
        finally:
            if store == "postgres" and "server" in PG:
                PG.pop("server").close()
        fresh, loaded = result["fresh"], result["loaded"]
        growth = loaded["event"] / fresh["event"]
        for when, data in (("after-1", fresh), (f"after-{args.prior}", loaded)):
            for kind, value in data.items():
                figures[f"history-{store}-{when}-{kind}-us"] = value
        figures[f"history-{store}-prior-overrides"] = result["prior_overrides"]
        figures[f"history-{store}-state-bytes"] = result["state_bytes"]
        figures[f"history-{store}-audit-bytes"] = result["audit_bytes"]
        compared[f"history_{store}_after_{args.prior}_over_after_1"] = ratio(
            growth,
            "lower",
            f"{store} store: per-event cost after {args.prior:,} prior events in the session "
            f"({result['prior_overrides']:,} overrides) over that after 1 (flat: 1)",
        )
        cpu_growth = loaded["event_cpu"] / fresh["event_cpu"]
        compared[f"history_{store}_cpu_after_{args.prior}_over_after_1"] = ratio(
            cpu_growth,
            "lower",
            f"{store} store: CPU per event (this process: no disk waits) after {args.prior:,} "
            "prior events over that after 1 (flat: 1)",
        )
        retry = (loaded["block"] + loaded["override"]) / (fresh["block"] + fresh["override"])
        entry = ratio(
            retry,
            "lower",
            f"{store} store: a blocked call and its retry (median block + median override) after "
            f"{args.prior:,} prior events over the same after 1 (target <= {BLOCK_RETRY_TARGET}x)",
        )
        entry["target"] = BLOCK_RETRY_TARGET
        compared[f"history_{store}_block_retry_after_{args.prior}_over_after_1"] = entry
        retries[store] = retry
        kinds = " | ".join(f"{fresh[k]:,.0f} → {loaded[k]:,.0f}" for k in KINDS)
        say(
            f"| {store} | {fresh['event']:,.0f} | {loaded['event']:,.0f} | {growth:.2f}x "
            f"| {fresh['event_cpu']:,.0f} | {loaded['event_cpu']:,.0f} | {cpu_growth:.2f}x "
            f"| {kinds} | {result['prior_overrides']:,} | {result['state_bytes']:,} B "
            f"| {result['audit_bytes']:,} B |"
        )
    say(
        f"\nA blocked call and its retry after {args.prior:,} prior events over after 1 (median "
        f"block + median override; target <= {BLOCK_RETRY_TARGET}x): "
        + ", ".join(
            f"{store} {value:.2f}x ({'met' if value <= BLOCK_RETRY_TARGET else 'NOT met'})"
            for store, value in retries.items()
        )
    )
    small, big = live_sessions((10, args.sessions), args.cycles, start)
    growth = big["event"] / small["event"]
    cpu_growth = big["event_cpu"] / small["event_cpu"]
    compared[f"live_file_cpu_{args.sessions}_over_10"] = ratio(
        cpu_growth,
        "lower",
        f"file store: CPU per event with {args.sessions:,} live sessions over 10",
    )
    for count, data in ((10, small), (args.sessions, big)):
        for kind, value in data.items():
            figures[f"live-file-{count}-{kind}"] = value
    compared[f"live_file_{args.sessions}_over_10"] = ratio(
        growth,
        "lower",
        f"file store: per-event cost with {args.sessions:,} live sessions over 10 "
        "(issue 9: <= 1.5x)",
    )
    say(f"\nLive sessions, file store ({args.cycles} timed cycles in a new session):\n")
    say(
        "| live sessions | state.json | wall µs per event | CPU µs per event | block | override "
        "| read | write | allow |"
    )
    say("|---" * 9 + "|")
    for count, data in ((10, small), (args.sessions, big)):
        kinds = " | ".join(f"{data[k]:,.0f}" for k in KINDS)
        say(
            f"| {count:,} | {data['state_bytes']:,.0f} B | {data['event']:,.0f} "
            f"| {data['event_cpu']:,.0f} | {kinds} |"
        )
    say(
        f"\nper-event cost, {args.sessions:,} live sessions over 10: wall {growth:.2f}x, "
        f"CPU {cpu_growth:.2f}x"
    )
    if args.json:
        emit(
            "bench_history",
            figures,
            compared,
            prior=args.prior,
            cycles=args.cycles,
            sessions=args.sessions,
            load_before=load,
        )


if __name__ == "__main__":
    main()
