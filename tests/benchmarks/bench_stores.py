"""Store benchmarks and stress runs: throughput, growth with live sessions, 16x500 concurrency,
and the SIGKILL crash harness at scale. Not collected by pytest. Run everything:

    .venv/bin/python tests/benchmarks/bench_stores.py

or one part: ``throughput``, ``scaling``, ``stress [--processes 16 --events 500]``,
``crash [--trials 1000]``, ``crash-overrides [--trials 1000]``. Prints Markdown; paste it into
RESULTS.md with the machine it ran on.

``crash-overrides`` is the stress form of ``tests/stores/test_crash_overrides.py`` (SPEC §4 triple
write): per store, ``--trials`` writers producing overrides (a real Evaluator, a JsonlAuditSink)
are SIGKILLed at random or targeted points on one root, and after every kill the audit log, the
state and the insights are checked (``tests/stores/override_harness.py``). Command:

    .venv/bin/python tests/benchmarks/bench_stores.py crash-overrides --trials 1000

It exits 1 when any trial failed (the failures go to stderr).

``--json`` prints the figures and the ratios run_all.py compares instead of Markdown (see
benchjson.py): store costs over MemoryStore's (the no-fsync variants: the fsync ones are
disk-bound), growth with live sessions, and counts of lost events and failed crash trials.
``--sizes 10,1000`` shrinks the scaling part; ``--trials`` applies to both crash parts.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for stores.harness
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, for tests.helpers

from benchjson import emit, ratio  # this folder's shared --json format
from stores import harness, override_harness

import forge_policy as fp
from forge_policy.state import SessionState

T0 = 1_800_000_000.0
STORES: dict[str, Callable[[Path], Any]] = {
    "MemoryStore": lambda folder: fp.MemoryStore(),
    "FileStore fsync": lambda folder: harness.open_store("file", str(folder / "state.json")),
    "FileStore no fsync": lambda folder: harness.open_store(
        "file", str(folder / "state.json"), fsync=False
    ),
    "SQLiteStore FULL": lambda folder: harness.open_store("sqlite", str(folder / "state.db")),
    "SQLiteStore OFF": lambda folder: harness.open_store(
        "sqlite", str(folder / "state.db"), fsync=False
    ),
}


def per_event(ev: fp.Evaluator, events: list[fp.Event], repeat: int = 3) -> float:
    """Median seconds per event over ``repeat`` passes."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for event in events:
            ev.evaluate(event)
        samples.append((time.perf_counter() - start) / len(events))
    return statistics.median(samples)


def write_events(session: str, n: int) -> list[fp.Event]:
    """Violating Bash calls of the counting catalog: every one is a state write."""
    return [
        fp.Event("PreToolUse", session, tool_name="Bash", tool_input={"command": f"x {i}", "n": 1})
        for i in range(n)
    ]


def throughput(n: int = 1000) -> list[str]:
    rows = [
        "| store | write path: events/s | µs/event | allow path (no write): events/s | µs/event |",
        "|---|---|---|---|---|",
    ]
    builtin = fp.builtin_catalog()
    read = fp.Event("PreToolUse", "s", tool_name="Read", tool_input={"file_path": "/a.py"})
    with tempfile.TemporaryDirectory() as tmp:
        counting = fp.load_catalog(str(harness.write_counting_catalog(Path(tmp) / "catalog")))
        for i, (name, make) in enumerate(STORES.items()):
            store = make(Path(tmp) / f"{i}")
            with store:
                write = per_event(fp.Evaluator(counting, store=store), write_events("w", n))
                allow_ev = fp.Evaluator(builtin, store=store, clock=lambda: T0)
                allow = per_event(allow_ev, [read] * n)  # the first Read sets a flag, then none
            FIGURES[f"throughput-{name}-write-us"] = write * 1e6
            FIGURES[f"throughput-{name}-allow-us"] = allow * 1e6
            rows.append(
                f"| {name} | {1 / write:,.0f} | {write * 1e6:,.0f} "
                f"| {1 / allow:,.0f} | {allow * 1e6:,.0f} |"
            )
    return rows


def session_doc(i: int) -> dict[str, Any]:
    """A realistic session: two behaviors with counters, a flag, a total (~500 bytes of JSON)."""
    state = SessionState.new(T0)
    for behavior in ("search-first", "verify-before-done"):
        bstate = state.behavior(behavior)
        bstate.counter = i % 7
        bstate.record_violation(T0, "Write")
    state.flags["search_context_ready"] = True
    state.totals["tokens"] = i * 13
    return state.to_dict()


def populate(kind: str, path: str, sessions: int) -> None:
    """Write ``sessions`` sessions directly (one write, not one transaction each)."""
    if kind == "file":
        docs = {f"session-{i:06d}": session_doc(i) for i in range(sessions)}
        Path(path).write_text(json.dumps({"schema_version": 1, "sessions": docs}))
        return
    with harness.open_store("sqlite", path) as store:
        store.transact("session-000000", lambda cur: (None, SessionState(session_doc(0))))
    conn = sqlite3.connect(path)
    with conn:
        conn.executemany(
            "INSERT OR REPLACE INTO sessions VALUES (?, ?, ?)",
            ((f"session-{i:06d}", json.dumps(session_doc(i)), T0) for i in range(sessions)),
        )
    conn.close()


def scaling(sizes: tuple[int, ...] = (10, 1_000, 10_000)) -> list[str]:
    rows = [
        "| store | "
        + " | ".join(f"{n:,} sessions" for n in sizes)
        + f" | growth {sizes[0]:,}→{sizes[-1]:,} |",
        "|---" * (len(sizes) + 2) + "|",
    ]
    for kind, label in (("sqlite", "SQLiteStore FULL"), ("file", "FileStore fsync")):
        cells = []
        for n in sizes:
            with tempfile.TemporaryDirectory() as tmp:
                catalog = fp.load_catalog(str(harness.write_counting_catalog(Path(tmp) / "cat")))
                path = harness.store_path(kind, Path(tmp))
                populate(kind, path, n)
                with harness.open_store(kind, path) as store:
                    ev = fp.Evaluator(catalog, store=store)
                    events = 300 if kind == "sqlite" else max(20, 2000 // max(1, n // 100))
                    cells.append(per_event(ev, write_events("session-000001", events)))
        growth = cells[-1] / cells[0]
        for n, cell in zip(sizes, cells, strict=True):
            FIGURES[f"scaling-{kind}-{n}-us"] = cell * 1e6
        FIGURES[f"scaling-{kind}-growth-{sizes[0]}-to-{sizes[-1]}"] = growth
        shown = " | ".join(f"{c * 1e6:,.0f} µs" for c in cells)
        rows.append(f"| {label} | {shown} | {growth:.2f}x |")
    return rows


def stress(processes: int = 16, events: int = 500) -> list[str]:
    rows = [
        f"| store | processes x events | counter (expected {processes * events:,}) "
        "| stateful decisions | wall time | events/s |",
        "|---|---|---|---|---|---|",
    ]
    ctx = multiprocessing.get_context("fork")
    for kind in ("file", "sqlite"):
        with tempfile.TemporaryDirectory() as tmp:
            catalog_dir = str(harness.write_counting_catalog(Path(tmp) / "catalog"))
            path = harness.store_path(kind, Path(tmp))
            start = time.perf_counter()
            with ctx.Pool(processes) as pool:
                args = [(kind, path, catalog_dir, events, 120.0)] * processes
                stateful = sum(pool.starmap(harness.counting_worker, args))
            elapsed = time.perf_counter() - start
            state = harness.load_session(kind, path)
            counter = harness.counter_of(state)
            total = state.totals.get("calls") if state else None
            ok = counter == total == stateful == processes * events
            FIGURES[f"stress-{kind}-lost"] = processes * events - min(counter, total or 0, stateful)
            FIGURES[f"stress-{kind}-events-per-s"] = processes * events / elapsed
            rows.append(
                f"| {kind} | {processes} x {events} | {counter:,} ({'ok' if ok else 'LOST'}) "
                f"| {stateful:,} | {elapsed:.1f} s | {processes * events / elapsed:,.0f} |"
            )
    return rows


def crash(trials: int = 1000, seed: int = 0) -> list[str]:
    rows = [
        "| store | trials | failures | kills by point | max in flight |",
        "|---|---|---|---|---|",
    ]
    ctx = multiprocessing.get_context("fork")
    for kind in ("file", "sqlite"):
        with tempfile.TemporaryDirectory() as tmp:
            path = harness.store_path(kind, Path(tmp))
            rng = random.Random(f"{seed}-{kind}")
            results = [harness.run_crash_trial(ctx, kind, path, rng) for _ in range(trials)]
            failures = [r for r in results if not r["ok"]]
            for failure in failures[:5]:
                print(f"FAILED {kind}: {failure}", file=sys.stderr)
            points = ", ".join(
                f"{k} {v}" for k, v in sorted(Counter(r["point"] for r in results).items())
            )
            flight = max(r["after"] - r["before"] - r["acknowledged"] for r in results)
            corrupt = len(list(Path(tmp).glob("*.corrupt-*")))
            FIGURES[f"crash-{kind}-failures"] = len(failures)
            FIGURES[f"crash-{kind}-corrupt"] = corrupt
            rows.append(
                f"| {kind} | {trials:,} | {len(failures)} (corrupt files: {corrupt}) "
                f"| {points} | {flight} |"
            )
    return rows


def crash_overrides(trials: int = 1000, seed: int = 0) -> list[str]:
    rows = [
        "| store | trials | failures | kills by point (of which during a retry) "
        "| torn tails seen by verify() "
        "| overrides acknowledged | audited, unacknowledged, reconciled | of those, healed by "
        "the next writer | blocks drift (insights - state), min..max | wall time |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    ctx = multiprocessing.get_context("fork")
    for kind in ("file", "sqlite"):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            catalog = override_harness.prepare(kind, root)
            rng = random.Random(f"{seed}-overrides-{kind}")
            tracker = override_harness.Tracker()
            start = time.perf_counter()
            results = [
                override_harness.run_trial(ctx, kind, root, catalog, rng, tracker)
                for _ in range(trials)
            ]
            final = override_harness.finish(kind, root, catalog, tracker)
            elapsed = time.perf_counter() - start
            failures = [r for r in results if not r["ok"]]
            for failure in failures[:5]:
                print(f"FAILED {kind}: {failure}", file=sys.stderr)
            if final:
                print(f"FAILED {kind} (clean writer after the last kill): {final}", file=sys.stderr)
                FAILED.append(kind)
            if failures:
                FAILED.append(kind)
            FIGURES[f"crash-overrides-{kind}-failures"] = len(failures) + (1 if final else 0)
            FIGURES[f"crash-overrides-{kind}-seconds"] = elapsed
            points = ", ".join(
                f"{k} {v} ({tracker.retry_kills[k]})" for k, v in sorted(tracker.kills.items())
            )
            rows.append(
                f"| {kind} | {trials:,} | {len(failures)}{' + final' if final else ''} "
                f"| {points} | {tracker.torn} | {len(tracker.acked):,} "
                f"| {len(tracker.reconciled):,} | {tracker.healed:,} "
                f"| {tracker.block_drift[0]}..{tracker.block_drift[1]} "
                f"| {elapsed:.1f} s |"
            )
    return rows


FAILED: list[str] = []
FIGURES: dict[str, float] = {}


def ratios_of(figures: dict[str, float]) -> dict[str, dict[str, object]]:
    """What run_all.py compares, from the parts that ran."""
    out: dict[str, dict[str, object]] = {}
    memory = "MemoryStore"
    for name in ("FileStore no fsync", "SQLiteStore OFF"):
        key = name.split()[0]
        for path in ("write", "allow"):
            mine = figures.get(f"throughput-{name}-{path}-us")
            base = figures.get(f"throughput-{memory}-{path}-us")
            if mine is not None and base:
                out[f"{key}_nofsync_{path}_over_memory"] = ratio(
                    mine / base,
                    "lower",
                    f"{name}: µs per event on the {path} path over MemoryStore's",
                )
    for name, growth in figures.items():
        if name.startswith("scaling-") and "-growth-" in name:
            kind, sizes = name.split("-")[1], name.split("-growth-")[1].replace("-to-", " to ")
            out[name.replace("-", "_")] = ratio(
                growth,
                "lower",
                f"{kind} store: write-path cost with {sizes} live sessions (issue 9: <= 1.5x)",
            )
    for name, value in figures.items():
        if name.endswith(("-lost", "-failures", "-corrupt")):
            out[name.replace("-", "_")] = ratio(value, "zero", f"{name} (must be 0)")
    return out


def machine() -> str:
    return (
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, "
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"{platform.system()} {platform.release()}, SQLite {sqlite3.sqlite_version}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "part",
        nargs="?",
        default="all",
        choices=["all", "throughput", "scaling", "stress", "crash", "crash-overrides"],
    )
    parser.add_argument("--trials", type=int, default=1000, help="crash trials per store")
    parser.add_argument("--processes", type=int, default=16)
    parser.add_argument("--events", type=int, default=500, help="events per stress process")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--sizes", default="10,1000,10000", help="live sessions of the scaling part (comma list)"
    )
    parser.add_argument("--json", action="store_true", help="print figures and ratios as JSON")
    args = parser.parse_args(argv)
    sizes = tuple(int(x) for x in args.sizes.split(","))
    if args.json:
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()):
            run_parts(args, sizes)
        emit("bench_stores", FIGURES, ratios_of(FIGURES), part=args.part, trials=args.trials)
        if FAILED:
            sys.exit(1)
        return
    print(machine() + "\n")
    run_parts(args, sizes)
    if FAILED:
        sys.exit(1)


def run_parts(args: argparse.Namespace, sizes: tuple[int, ...]) -> None:
    parts: dict[str, Callable[[], list[str]]] = {
        "throughput": throughput,
        "scaling": lambda: scaling(sizes),
        "stress": lambda: stress(args.processes, args.events),
        "crash": lambda: crash(args.trials, args.seed),
        "crash-overrides": lambda: crash_overrides(args.trials, args.seed),
    }
    for name, run in parts.items():
        if args.part in ("all", name):
            start = time.perf_counter()
            print(f"### {name}\n")
            print("\n".join(run()))
            print(f"\n({time.perf_counter() - start:.1f} s)\n", flush=True)


if __name__ == "__main__":
    main()
