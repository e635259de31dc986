"""Added wall time per shell call of forge_policy's own floor (SPEC §13): the same command run
as a harness runs it (``/bin/bash -c TEXT``), plain and rewritten by
:func:`forge_policy.floor.sandbox.command_for` for each method this machine offers.

- ``plain``: ``/bin/bash -c true``;
- ``bwrap``: ``/bin/bash -c 'bwrap … -- /bin/bash -c true'`` (inline, no Python);
- ``landlock``: ``/bin/bash -c 'python -I -S …/floor/launch.py FLOOR true'`` (the launcher's
  interpreter start, ``_json`` and ``ctypes`` imports, four system calls, ``exec``);
- ``python``: ``/bin/bash -c 'python -I -S -c pass'`` with the launcher's interpreter, for
  scale: the part of Landlock's cost that is the interpreter's own start;
- ``bwrap-minimal`` (``bwrap --ro-bind / / /bin/bash -c true``) and ``bwrap-base`` (the
  rewrite's fixed options, :data:`~forge_policy.floor.sandbox.BWRAP_BASE`, without the floor's
  mounts), for scale: where bubblewrap's cost goes.

Besides wall time, the CPU time (user + system) of each call's process tree is given: on a
loaded machine it moves less than wall time.

The floor is :func:`~forge_policy.floor.derive.floor_for` of a temporary project. The commands
run interleaved so that machine noise hits them alike; for each, the median and p95 of
``--runs`` samples, and the added cost (sandboxed minus plain, median and p95). Target: at most
5 ms added at the median.

Usage: ``python tests/benchmarks/bench_floor_launcher.py [--runs 200] [--json]`` (``--json``:
the figures and the ratios run_all.py compares, see benchjson.py).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from benchjson import emit, ratio  # this folder's shared --json format

from forge_policy.floor.derive import floor_for
from forge_policy.floor.sandbox import BWRAP_BASE, command_for, methods_available

TARGET_MS = 5.0


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def sample(text: str) -> tuple[float, float]:
    """Wall and CPU milliseconds of one ``/bin/bash -c text``."""
    before = cpu()
    start = time.perf_counter()
    subprocess.run(["/bin/bash", "-c", text], check=True, stdin=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000.0, (cpu() - before) * 1000.0


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="samples per command")
    parser.add_argument("--json", action="store_true", help="print figures and ratios as JSON")
    args = parser.parse_args()
    project = tempfile.mkdtemp(prefix="bench-floor-")
    os.chdir(project)
    floor = floor_for(project, os.environ)
    texts = {"plain": "true"}
    methods = methods_available(os.environ)
    for method in ("bwrap", "landlock"):
        if method in methods:
            texts[method] = command_for(floor, "true", method)
    texts["python"] = f"{sys.executable} -I -S -c pass"
    if "bwrap" in texts:
        program = texts["bwrap"].split(" ", 1)[0]
        texts["bwrap-minimal"] = f"{program} --ro-bind / / /bin/bash -c true"
        texts["bwrap-base"] = " ".join([program, *BWRAP_BASE, "--", "/bin/bash", "-c", "true"])
    for text in texts.values():  # warm-up: page cache, bytecode of the launcher
        for _ in range(3):
            sample(text)
    times: dict[str, list[float]] = {name: [] for name in texts}
    cpus: dict[str, list[float]] = {name: [] for name in texts}
    for _ in range(args.runs):
        for name, text in texts.items():
            wall, used = sample(text)
            times[name].append(wall)
            cpus[name].append(used)
    plain = times["plain"]
    figures: dict[str, float] = {}
    for name, values in cpus.items():
        figures[f"{name}_cpu_p50_ms"] = statistics.median(values)
    for name, values in times.items():
        figures[f"{name}_p50_ms"] = statistics.median(values)
        figures[f"{name}_p95_ms"] = p95(values)
        if name != "plain":
            figures[f"{name}_added_p50_ms"] = statistics.median(values) - statistics.median(plain)
            figures[f"{name}_added_p95_ms"] = p95(values) - p95(plain)
    if args.json:
        ratios = {
            f"{name}_over_plain_p50": ratio(
                figures[f"{name}_p50_ms"] / figures["plain_p50_ms"],
                "lower",
                f"{name} shell call / plain shell call, median",
            )
            for name in texts
            if name in ("bwrap", "landlock")
        }
        notes = [f"methods available: {', '.join(methods) or 'none'}"]
        emit("bench_floor_launcher", figures, ratios, notes, runs=args.runs)
        return
    print(
        f"Machine: {os.cpu_count()} cores, {platform.machine()}, Python "
        f"{platform.python_version()}, {platform.system()} {platform.release()}, load average "
        f"{os.getloadavg()[0]:.1f}. {args.runs} interleaved samples each; ms of wall time.\n"
    )
    print("| command | p50 | p95 | added p50 | added p95 | CPU p50 | target (≤ 5 ms added p50) |")
    print("|---|---|---|---|---|---|---|")
    for name in texts:
        line = f"| {name} | {figures[f'{name}_p50_ms']:.2f} | {figures[f'{name}_p95_ms']:.2f} |"
        used = f" {figures[f'{name}_cpu_p50_ms']:.1f} |"
        if name == "plain":
            print(line + " - | - |" + used + " - |")
            continue
        added = figures[f"{name}_added_p50_ms"]
        verdict = "met" if added <= TARGET_MS else "missed"
        if name not in ("bwrap", "landlock"):
            verdict = "(scale only)"
        print(line + f" {added:.2f} | {figures[f'{name}_added_p95_ms']:.2f} |{used} {verdict} |")


if __name__ == "__main__":
    main()
