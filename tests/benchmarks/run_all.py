"""Run every benchmark in this folder and compare its ratios with the recorded ones.

Usage (from a checkout, with the interpreter of the install to measure)::

    python tests/benchmarks/run_all.py [--quick] [--update] [--tolerance 0.25]
        [--only NAME ...] [--skip NAME ...] [--save run.json]

Each benchmark script runs once, in a subprocess, with ``--json`` (see benchjson.py) and the
arguments of its mode (``BENCHMARKS`` below: ``--quick`` is a smaller run, recorded separately).
The scripts that start hook processes get ``--python`` = this interpreter, and the others run
with it, so the install measured is the one this interpreter imports ``forge_policy`` from.

What is compared are the ratios each script measures side by side in one run (warm hook over a
bare ``python -c pass``, forge_policy over a plain ``re`` loop, the cost at 1,000 behaviors over
that at 10, ...), never absolute times: machines are noisy. The recorded ratios are in
``baseline.json`` beside this file, per mode, with the machine, commit and load they were taken
at. A ratio is a regression when it is worse than recorded by more than the tolerance:

- ``lower`` is better (a cost ratio): regression when ``now > recorded * (1 + tolerance)``;
- ``higher`` is better (a throughput ratio): regression when ``now < recorded / (1 + tolerance)``;
- ``zero`` (a count of failures, lost events, differing answers): regression when ``now > 0``,
  whatever was recorded.

The tolerance is ``--tolerance`` (default 0.25, i.e. 25 %), except for the metrics whose
script states their own (counts that must not move: 0; fsync-bound figures: 1.0; the RE2 vs
``re`` sanity ratio: 9.0; each one says why in its ``what``).

A benchmark with a ratio worse than that is run again (``--retries``, default once) and each
ratio keeps its best value over the runs, so a regression must show in every run to be
reported: one disturbed run on a shared machine is not enough (counts of failures are not
retried). Exit status: 0 when nothing regressed, 1 when a ratio regressed, 2 when a benchmark did
not run (no JSON). ``--update`` records this run's ratios (of the benchmarks that ran) as the new
baseline of the mode instead of failing, e.g. after an intended change or on a new machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchjson import target_met  # this folder's shared --json format

HERE = Path(__file__).resolve().parent
BASELINE = HERE / "baseline.json"
DEFAULT_TOLERANCE = 0.25

#: name -> (full-mode arguments, quick-mode arguments, takes --python)
BENCHMARKS: dict[str, tuple[list[str], list[str], bool]] = {
    "bench_engine": ([], [], False),
    "bench_scaling": ([], [], False),
    "bench_peers": (["--rounds", "7"], ["--rounds", "3"], False),
    "bench_history": (
        ["--prior", "10000", "--cycles", "40", "--sessions", "10000"],
        ["--prior", "2000", "--cycles", "10", "--sessions", "1000"],
        False,
    ),
    "bench_stores": (
        ["all", "--trials", "300"],
        ["all", "--trials", "20", "--processes", "4", "--events", "100", "--sizes", "10,1000"],
        False,
    ),
    "hook_imports": (["--repeat", "7"], ["--repeat", "5"], True),
    "hook_latency": (["--runs", "40"], ["--runs", "12"], True),
    "bench_cold_path": (["--runs", "30"], ["--runs", "10"], True),
    "worker_latency": (
        ["--runs", "30", "--rounds", "5", "--fresh-state"],
        ["--runs", "10", "--rounds", "2", "--fresh-state"],
        True,
    ),
    "bench_first_call": (
        ["--reps", "40", "--rounds", "3", "--sessions", "0,1000"],
        ["--reps", "15", "--rounds", "1", "--sessions", "0,1000"],
        False,
    ),
    "serve_latency": (["--requests", "2000", "--rounds", "3"], ["--requests", "500"], False),
    "bench_worker_rss": (["--events", "100000"], ["--events", "10000"], True),
    "bench_floor_launcher": (["--runs", "200"], ["--runs", "40"], False),
    "bench_candidate": (
        ["--runs", "30", "--answers", "300"],
        ["--runs", "8", "--answers", "60"],
        True,
    ),
}


def run_one(name: str, mode: str) -> tuple[dict[str, Any] | None, float, list[str], str]:
    """Run one script with ``--json``; return its document (None if it printed none), the
    seconds it took, its arguments and an error note."""
    full, quick, takes_python = BENCHMARKS[name]
    args = list(quick if mode == "quick" else full)
    if takes_python:
        args += ["--python", sys.executable]
    command = [sys.executable, str(HERE / f"{name}.py"), *args, "--json"]
    start = time.perf_counter()
    result = subprocess.run(command, stdout=subprocess.PIPE, cwd=HERE.parents[1], check=False)
    seconds = time.perf_counter() - start
    text = result.stdout.decode("utf-8", "replace").strip()
    try:
        document = json.loads(text.splitlines()[-1]) if text else None
    except json.JSONDecodeError:
        document = None
    note = "" if result.returncode == 0 else f"exit status {result.returncode}"
    if document is None:
        note = note or "no JSON on stdout"
    return document, seconds, args, note


def verdict(entry: dict[str, Any], recorded: dict[str, Any] | None, tolerance: float) -> str:
    value, better = entry["value"], entry["better"]
    if better == "zero":
        return "REGRESSION" if value > 0 else "ok"
    if recorded is None:
        return "new"
    before = recorded["value"]
    if better == "lower":
        if before <= 0:
            return "REGRESSION" if value > before else "ok"
        return "REGRESSION" if value > before * (1 + tolerance) else "ok"
    if value <= 0:
        return "REGRESSION" if before > 0 else "ok"
    return "REGRESSION" if value < before / (1 + tolerance) else "ok"


def change(entry: dict[str, Any], recorded: dict[str, Any] | None) -> str:
    """How much worse (+) or better (-) than recorded, in the metric's own direction."""
    if recorded is None or entry["better"] == "zero":
        return ""
    before, now = recorded["value"], entry["value"]
    if before == now:
        return "0 %"
    if before <= 0 or now <= 0:
        return "n/a"
    worse = now / before if entry["better"] == "lower" else before / now
    return f"{(worse - 1) * 100:+.0f} %"


def suspects(document: dict[str, Any], recorded: dict[str, Any], tolerance: float) -> list[str]:
    """The relative ratios of ``document`` worse than recorded (a count of failures is never
    retried: it is not noise)."""
    before = recorded.get("ratios", {})
    return [
        metric
        for metric, entry in document["ratios"].items()
        if entry["better"] != "zero"
        and verdict(entry, before.get(metric), entry.get("tolerance", tolerance)) == "REGRESSION"
    ]


def merge(document: dict[str, Any], again: dict[str, Any], runs: int) -> None:
    """Keep each ratio's best value over the runs (for a count of failures: the worst)."""
    for metric, entry in document["ratios"].items():
        other = again["ratios"].get(metric)
        if other is None:
            continue
        values = (entry["value"], other["value"])
        best = min(values) if entry["better"] == "lower" else max(values)
        entry["value"] = max(values) if entry["better"] == "zero" else best
    document["run_all_runs"] = runs
    document.setdefault("notes", []).append(f"run {runs} times: best ratio of the runs kept")


def fmt(value: float) -> str:
    if value == int(value) and abs(value) < 1e6:
        return f"{int(value):,}"
    return f"{value:.4g}" if abs(value) < 1000 else f"{value:,.0f}"


def forge_location() -> str:
    probe = "import forge_policy; print(forge_policy.__file__)"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=tempfile.gettempdir()
    )
    return out.stdout.strip() or out.stderr.strip().splitlines()[-1]


def commit() -> str:
    out = subprocess.run(
        ["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    dirty = subprocess.run(
        ["git", "-C", str(HERE), "status", "--porcelain", "--", "../../forge_policy"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    return (out.stdout.strip() or "unknown") + (" (forge_policy/ modified)" if dirty else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs (their own baseline)")
    parser.add_argument("--update", action="store_true", help="record this run as the baseline")
    parser.add_argument(
        "--tolerance",
        type=float,
        default=DEFAULT_TOLERANCE,
        help=f"relative tolerance of metrics without their own (default {DEFAULT_TOLERANCE})",
    )
    parser.add_argument("--only", action="append", choices=sorted(BENCHMARKS), default=[])
    parser.add_argument("--skip", action="append", choices=sorted(BENCHMARKS), default=[])
    parser.add_argument("--baseline", type=Path, default=BASELINE, help="recorded figures")
    parser.add_argument("--save", type=Path, help="write this run's documents to a JSON file")
    parser.add_argument(
        "--retries",
        type=int,
        default=1,
        help="runs again a benchmark whose ratio looks like a regression, this many times, "
        "keeping each ratio's best value (default 1; never with --update)",
    )
    args = parser.parse_args(argv)
    mode = "quick" if args.quick else "full"
    names = [n for n in BENCHMARKS if (not args.only or n in args.only) and n not in args.skip]

    baseline: dict[str, Any] = {}
    if args.baseline.exists():
        baseline = json.loads(args.baseline.read_text(encoding="utf-8"))
    recorded_mode = baseline.get("modes", {}).get(mode, {})
    recorded = recorded_mode.get("benchmarks", {})
    location = forge_location()
    load = [round(x, 2) for x in os.getloadavg()]
    print(f"run_all: {mode} mode, {len(names)} benchmarks, interpreter {sys.executable}")
    print(f"forge_policy: {location}; checkout {commit()}; load average {load}")
    if recorded_mode:
        machine = recorded_mode.get("machine", {})
        print(
            f"baseline ({args.baseline.name}, {mode}): recorded {recorded_mode.get('recorded')} "
            f"at {recorded_mode.get('commit')} on {machine.get('cores')} cores "
            f"{machine.get('arch')} {machine.get('python')}, load "
            f"{recorded_mode.get('load_average')}"
        )
    else:
        print(f"baseline ({args.baseline.name}): nothing recorded for the {mode} mode")
    print(flush=True)

    documents: dict[str, dict[str, Any]] = {}
    failed: dict[str, str] = {}
    started = time.perf_counter()
    for i, name in enumerate(names, 1):
        print(f"[{i}/{len(names)}] {name} ...", flush=True)
        document, seconds, bench_args, note = run_one(name, mode)
        if document is None:
            failed[name] = note
            print(f"[{i}/{len(names)}] {name}: FAILED ({note}) after {seconds:.0f} s", flush=True)
            continue
        document["seconds"] = round(seconds, 1)
        document["args"] = bench_args
        if note:
            document.setdefault("notes", []).append(note)
        documents[name] = document
        print(f"[{i}/{len(names)}] {name}: {seconds:.0f} s{f' ({note})' if note else ''}")
        for attempt in range(args.retries):
            flagged = suspects(document, recorded.get(name, {}), args.tolerance)
            if args.update or not flagged:
                break
            print(f"    {', '.join(flagged)} worse than recorded: running {name} again", flush=True)
            again, seconds, _, note = run_one(name, mode)
            if again is None:
                break
            merge(document, again, attempt + 2)

    rows: list[tuple[str, str, str, str, str, str, str, str]] = []
    regressions: list[str] = []
    for name, document in documents.items():
        before = recorded.get(name, {}).get("ratios", {})
        for metric, entry in document["ratios"].items():
            tolerance = entry.get("tolerance", args.tolerance)
            result = verdict(entry, before.get(metric), tolerance)
            if result == "REGRESSION":
                regressions.append(f"{name}.{metric}")
            old = before.get(metric)
            runs = document.get("run_all_runs", 1)
            rows.append(
                (
                    f"{name}.{metric}" + (f" (best of {runs} runs)" if runs > 1 else ""),
                    entry["better"],
                    fmt(old["value"]) if old else "-",
                    fmt(entry["value"]),
                    change(entry, old),
                    "-" if entry["better"] == "zero" else f"{tolerance * 100:.0f} %",
                    result,
                    target_met(entry) or "-",
                )
            )
        for metric in sorted(set(before) - set(document["ratios"])):
            rows.append(
                (
                    f"{name}.{metric}",
                    "",
                    fmt(before[metric]["value"]),
                    "-",
                    "",
                    "",
                    "not measured",
                    "",
                )
            )
    print(
        f"\n## Ratios, {mode} mode (worse than recorded by more than the tolerance: REGRESSION)\n"
    )
    print("| metric | better | recorded | now | worse by | tolerance | verdict | target |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    for name, document in documents.items():
        skipped = document.get("skipped")
        if skipped:
            for what, why in skipped.items():
                print(f"\n{name}: {what} skipped: {why}")
    print(f"\n{len(documents)} benchmarks ran in {time.perf_counter() - started:.0f} s", end="")
    print(f"; failed to run: {', '.join(failed)}" if failed else "")

    if args.save:
        args.save.write_text(
            json.dumps({"mode": mode, "load_average": load, "benchmarks": documents}, indent=1)
            + "\n",
            encoding="utf-8",
        )
    if args.update:
        modes = baseline.setdefault("modes", {})
        entry = modes.setdefault(mode, {})
        now, checkout = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), commit()
        command = " ".join(["python", "tests/benchmarks/run_all.py", *(argv or sys.argv[1:])])
        if len(documents) == len(BENCHMARKS):  # a whole run: it describes the mode
            entry.update(
                recorded=now,
                commit=checkout,
                command=command,
                forge_policy=location,
                machine=next(iter(documents.values()))["machine"],
                load_average=load,
                default_tolerance=args.tolerance,
            )
        else:  # some benchmarks only: each one's entry says when it was recorded
            entry.setdefault("partial_updates", []).append(
                {"recorded": now, "commit": checkout, "command": command, "load_average": load}
            )
        benchmarks = entry.setdefault("benchmarks", {})
        for name, document in documents.items():
            benchmarks[name] = {
                "recorded": now,
                "commit": checkout,
                "args": document["args"],
                "seconds": document["seconds"],
                "load_average": document["machine"].get("load_average"),
                "ratios": document["ratios"],
                "figures": document["figures"],
                "notes": document.get("notes", []),
            }
        baseline["about"] = (
            "Recorded benchmark ratios, per run_all.py mode; written by "
            "`python tests/benchmarks/run_all.py [--quick] --update`, read by run_all.py."
        )
        baseline = {"about": baseline.pop("about"), **baseline}
        args.baseline.write_text(json.dumps(baseline, indent=1) + "\n", encoding="utf-8")
        print(f"\nrecorded the {mode} baseline of {len(documents)} benchmarks in {args.baseline}")
        return 2 if failed else 0
    if regressions:
        print(f"\nREGRESSION: {', '.join(regressions)}")
    if failed:
        return 2
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
