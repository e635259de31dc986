"""What behavior tests cost (issue 15): parsing the built-in catalog with its ``tests`` and
without them (the compiled cache's rebuild; a warm hook never parses YAML), side by side in one
run, and how long ``forge-policy test`` takes on the built-in catalog.

    .venv-test/bin/python tests/benchmarks/bench_behavior_tests.py [--rounds 15] [--json]

The copy without tests is the built-in catalog with each behavior file cut before its
``tests:`` key; the two are parsed alternately, best of ``--rounds``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchjson

from forge_policy.catalog.loader import BUILTIN_DIR, read_catalog
from forge_policy.testing.behavior_tests import run_behavior_tests


def _without_tests(target: Path) -> Path:
    shutil.copytree(BUILTIN_DIR, target, ignore=shutil.ignore_patterns("__pycache__"))
    for path in target.glob("*/behavior.yaml"):
        text = path.read_text(encoding="utf-8")
        cut = text.find("\ntests:\n")
        if cut >= 0:
            path.write_text(text[: cut + 1], encoding="utf-8")
    return target


def _parse(root: Path) -> float:
    start = time.perf_counter()
    _specs, _sources, issues = read_catalog(root)
    elapsed = time.perf_counter() - start
    assert not issues, issues
    return elapsed


def _bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.glob("*/behavior.yaml"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        bare = _without_tests(Path(folder) / "catalog")
        _parse(bare), _parse(BUILTIN_DIR)  # imports and first compiles
        with_tests, without = [], []
        for _ in range(args.rounds):
            without.append(_parse(bare))
            with_tests.append(_parse(BUILTIN_DIR))
        sizes = (_bytes(bare), _bytes(BUILTIN_DIR))
    start = time.perf_counter()
    run = run_behavior_tests()
    run_seconds = time.perf_counter() - start
    events = sum(len(r.events) for r in run.results)
    best_with, best_without = min(with_tests), min(without)
    figures = {
        "parse_without_tests_ms": best_without * 1000,
        "parse_with_tests_ms": best_with * 1000,
        "bytes_without_tests": sizes[0],
        "bytes_with_tests": sizes[1],
        "test_run_s": run_seconds,
        "tests": len(run.results),
        "events": events,
        "failed": run.failed,
    }
    ratios = {
        "parse_with_over_without_tests": benchjson.ratio(
            best_with / best_without,
            "lower",
            "YAML parse of the built-in catalog with its tests / without them",
        ),
        "failed_builtin_tests": benchjson.ratio(run.failed, "zero", "built-in tests that fail"),
    }
    if args.json:
        benchjson.emit("bench_behavior_tests", figures, ratios)
        return 0
    print(f"machine: {benchjson.machine()}")
    print(
        f"parse without tests: {best_without * 1000:.1f} ms ({sizes[0]} bytes); "
        f"with tests: {best_with * 1000:.1f} ms ({sizes[1]} bytes); "
        f"ratio {best_with / best_without:.2f}"
    )
    print(
        f"forge-policy test, built-in catalog: {len(run.results)} tests, {events} events, "
        f"{run.failed} failed, {run_seconds:.2f} s ({run_seconds / events * 1000:.1f} ms/event)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
