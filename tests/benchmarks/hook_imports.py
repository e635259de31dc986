"""What one ``forge-policy hook`` process imports, per decision path (``python -X importtime``).

Each path runs in a fresh temporary project with the default file store, after one warm-up run
that fills the compiled catalog cache, so the figure is a warm hook's, not a first run's. For each
path it prints the number of modules imported, the summed top-level cumulative import time
(median of ``--repeat`` runs: ``-X importtime`` itself inflates it, so compare runs of the same
command side by side, never against wall-time figures), and which heavy packages were loaded.

Usage: ``python tests/benchmarks/hook_imports.py [--python VENV/bin/python] [--repeat 7] [--json]``
(``--python`` several times compares installs in one run; ``--json`` prints the figures of each
install and, for the first, the ratios run_all.py compares: see benchjson.py; the import times
there are divided by those of a fixed set of standard-library imports, ``REFERENCE``, run
interleaved with the hook's).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import tempfile

from benchjson import emit, ratio  # this folder's shared --json format
from hook_latency import payload  # this folder's scripts share their events

HEAVY = (
    "attr",
    "cattrs",
    "ruamel",
    "portalocker",
    "pathspec",
    "argparse",
    "typing",
    "dataclasses",
    "pathlib",
    "hashlib",
    "sqlite3",
    "re2",
)

PATHS = ("allow", "nudge", "hard_block")  # the events of hook_latency.payload


def parse(stderr: str) -> tuple[list[str], int]:
    """Module names and the summed cumulative time (µs) of the top-level imports."""
    names: list[str] = []
    total = 0
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        _, cumulative, name = line.split("|", 2)
        names.append(name.strip())
        if not name.startswith("  "):  # top level: one space after the bar
            total += int(cumulative)
    return names, total


#: A fixed set of standard-library imports, the yardstick of ``--json``'s ratios: measured the
#: same way, interleaved with the hook's runs. ``python -c pass`` alone (its ``site``, a few ms)
#: moved by 2x between two runs of the same install, too small to divide by.
REFERENCE = (
    "import argparse, json, logging, email.parser, http.client, decimal, typing, dataclasses"
)
REFERENCE_TOTALS: list[int] = []


def measure(python: str, kind: str, repeat: int) -> tuple[int, float, list[str]]:
    with tempfile.TemporaryDirectory() as project:
        os.makedirs(os.path.join(project, "src"))
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("FORGE_", "PYTHON", "CLAUDE"))
        }
        env["CLAUDE_PROJECT_DIR"] = project
        env["FORGE_WORKER"] = "off"  # the in-process hook is what this measures
        command = [python, "-X", "importtime", "-m", "forge_policy.cli", "hook"]
        subprocess.run(
            command,
            input=payload(kind, project),
            capture_output=True,
            env=env,
            cwd=project,
            check=False,
        )  # warm-up: fills the catalog cache
        totals: list[int] = []
        names: list[str] = []
        for _ in range(repeat):
            result = subprocess.run(
                command,
                input=payload(kind, project),
                capture_output=True,
                env=env,
                cwd=project,
                check=False,
            )
            names, total = parse(result.stderr.decode())
            totals.append(total)
            reference = subprocess.run(
                [python, "-X", "importtime", "-c", REFERENCE], capture_output=True, check=False
            )
            REFERENCE_TOTALS.append(parse(reference.stderr.decode())[1])
        heavy = sorted({n.split(".")[0] for n in names if n.split(".")[0] in HEAVY})
        return len(names), statistics.median(totals) / 1000, heavy


def bare(python: str, repeat: int) -> tuple[int, float]:
    """Modules and summed top-level import time (ms, median) of ``python -c pass`` (its site)."""
    totals: list[int] = []
    count = 0
    for _ in range(repeat):
        result = subprocess.run(
            [python, "-X", "importtime", "-c", "pass"], capture_output=True, check=False
        )
        names, total = parse(result.stderr.decode())
        count = len(names)
        totals.append(total)
    return count, statistics.median(totals) / 1000


def as_json(pythons: list[str], repeat: int) -> None:
    figures: dict[str, float] = {}
    compared: dict[str, dict[str, object]] = {}
    heavy_sets: dict[str, list[str]] = {}
    for n, python in enumerate(pythons):
        prefix = "" if n == 0 else f"install{n}-"
        REFERENCE_TOTALS.clear()
        bare_count, bare_ms = bare(python, repeat)
        figures[f"{prefix}bare-modules"] = bare_count
        figures[f"{prefix}bare-import-ms"] = bare_ms
        for kind in PATHS:
            count, millis, heavy = measure(python, kind, repeat)
            figures[f"{prefix}{kind}-modules"] = count
            figures[f"{prefix}{kind}-import-ms"] = millis
            figures[f"{prefix}{kind}-heavy"] = len(heavy)
            heavy_sets[f"{prefix}{kind}"] = heavy
        reference_ms = statistics.median(REFERENCE_TOTALS) / 1000
        figures[f"{prefix}reference-import-ms"] = reference_ms
        for kind in PATHS:
            if n:
                continue
            compared[f"{kind}_import_over_reference"] = ratio(
                figures[f"{kind}-import-ms"] / reference_ms,
                "lower",
                f"summed top-level import time of the in-process {kind} hook over that of a "
                "fixed set of standard-library imports (both under -X importtime, interleaved)",
            )
            compared[f"{kind}_modules"] = ratio(
                figures[f"{kind}-modules"],
                "lower",
                f"modules the in-process {kind} hook imports (a count)",
                tolerance=0.1,
            )
            compared[f"{kind}_heavy_packages"] = ratio(
                len(heavy_sets[kind]),
                "lower",
                f"heavy packages ({', '.join(HEAVY)}) the {kind} hook loads (a count)",
                tolerance=0.0,
            )
    emit("hook_imports", figures, compared, pythons=pythons, heavy=heavy_sets)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append", help="interpreter of an install (repeatable)")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print figures and ratios as JSON")
    args = parser.parse_args()
    pythons = args.python or [os.path.join(os.path.dirname(__file__), "../../.venv-run/bin/python")]
    if args.json:
        as_json(pythons, args.repeat)
        return
    print(
        f"# {platform.node()} · {platform.machine()} · {os.cpu_count()} cores · "
        f"Python {platform.python_version()} · median of {args.repeat}"
    )
    print("| install | path | modules | import time (ms) | heavy packages loaded |")
    print("|---|---|---|---|---|")
    for python in pythons:
        for kind in PATHS:
            count, millis, heavy = measure(python, kind, args.repeat)
            print(f"| {python} | {kind} | {count} | {millis:.1f} | {', '.join(heavy) or '-'} |")


if __name__ == "__main__":
    main()
