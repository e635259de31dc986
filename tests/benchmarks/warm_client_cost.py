"""What a warm hook call costs outside the worker, counted instead of timed: the instructions
(callgrind) and system calls (strace) of the launcher and the client for one call answered by a
running worker, next to ``python -I -S -c pass``.

Wall times on a shared machine move with the load; these counts do not (the exchange's polls
aside: a few hundred instructions). Each tree (``--tree DIR``, as in ``worker_latency.py``:
``init`` runs with ``PYTHONPATH=DIR``, so the record names that tree's client) gets its own
project and worker; its ``PreToolUse`` entry is run as Claude Code runs it (exec form, no
shell: :func:`worker_latency.as_claude_code`), an ongoing session's ``Read`` on stdin:

- ``client``: instructions of the process after the launcher's ``exec`` (``python -I -S
  …/launch.py``: interpreter start, the client's imports, the exchange); callgrind follows the
  ``exec`` but drops what ran before it, so
- ``launcher``: the committed launcher's ``sh`` alone, counted on a copy whose ``exec`` line is
  ``exit 0`` (everything it does before the ``exec``: start, reading the record, its tests);
- ``syscalls``: ``strace -f -c`` of the whole entry (launcher and client), and the launcher's
  share (the system calls before the ``exec``, from ``strace -f``).

``bare``: ``python -I -S -c pass`` (with its teardown, which the client skips) and ``sh -c :``.

Usage: ``python tests/benchmarks/warm_client_cost.py [--tree DIR ...] [--repeat 3] [--json]``
(needs ``valgrind`` and ``strace``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchjson import emit, ratio  # this folder's shared --json format
from worker_latency import ONGOING, Install, stop_worker


def instructions(argv: list[str], data: bytes, env: dict[str, str], cwd: str) -> int:
    """Callgrind's instruction total of ``argv`` (children followed across ``exec``)."""
    with tempfile.TemporaryDirectory(prefix="cg-") as out:
        subprocess.run(
            ["valgrind", "-q", "--tool=callgrind", "--trace-children=yes",
             f"--callgrind-out-file={out}/cg.%p", *argv],
            input=data, capture_output=True, env=env, cwd=cwd, check=True,
        )  # fmt: skip
        total = 0
        for path in Path(out).iterdir():
            found = re.search(r"^summary: (\d+)", path.read_text(errors="replace"), re.M)
            total += int(found.group(1)) if found else 0
        return total


def syscalls(argv: list[str], data: bytes, env: dict[str, str], cwd: str) -> tuple[int, int]:
    """System calls of ``argv`` and its children (``strace -f``): all, and those before the
    first ``exec`` the program itself makes (the launcher's share)."""
    with tempfile.TemporaryDirectory(prefix="st-") as out:
        log = Path(out, "trace")
        subprocess.run(
            ["strace", "-f", "-o", str(log), *argv],
            input=data, capture_output=True, env=env, cwd=cwd, check=True,
        )  # fmt: skip
        lines = [x for x in log.read_text(errors="replace").splitlines() if "(" in x]
        calls = [x for x in lines if not re.match(r"^\d+\s+(\+\+\+|---)", x)]
        execs = [i for i, x in enumerate(calls) if " execve(" in x]
        before = execs[1] if len(execs) > 1 else len(calls)
        return len(calls), before - 1  # the launcher's own execve is the strace's start


def launcher_alone(install: Install, tmp: Path) -> list[str]:
    """A copy of the install's launcher and record whose ``exec`` of the client is ``exit 0``."""
    root = tmp / f"{install.label}-launcher" / ".forge"
    (root / "bin").mkdir(parents=True)
    (root / "runtime").mkdir()
    text = (install.project / ".forge" / "bin" / "forge-policy-hook").read_text()
    cut = text.replace('exec "$program" -I -S "$script" "$@"', "exit 0")
    assert cut != text, "the launcher's exec line changed: update this benchmark"
    target = root / "bin" / "forge-policy-hook"
    target.write_text(cut)
    target.chmod(0o755)
    record = install.project / ".forge" / "runtime" / "hook-client"
    shutil.copy(record, root / "runtime" / "hook-client")
    return [str(target)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", action="append", default=[], help="a source tree to measure")
    parser.add_argument("--repeat", type=int, default=3, help="runs per count (median)")
    parser.add_argument("--python", default=sys.executable, help="interpreter of the venv")
    parser.add_argument("--json", action="store_true", help="print figures and ratios as JSON")
    args = parser.parse_args()
    for tool in ("valgrind", "strace"):
        if shutil.which(tool) is None:
            sys.exit(f"warm_client_cost: {tool} is not installed")
    python = str(Path(args.python).absolute())
    trees = [str(Path(tree).resolve()) for tree in args.tree]
    rows: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="forge-client-cost-") as name:
        tmp = Path(name)
        labels = [(f"tree{i}", tree) for i, tree in enumerate(trees)] or [("installed", None)]
        installs = [Install(label, tree, python, tmp) for label, tree in labels]
        env = installs[0].env
        cwd = str(installs[0].project)
        bare = [python, "-I", "-S", "-c", "pass"]
        rows["bare"] = {
            "client": statistics.median(
                instructions(bare, b"", env, cwd) for _ in range(args.repeat)
            ),
            "launcher": instructions(["/bin/sh", "-c", ":"], b"", env, cwd),
            "syscalls": syscalls(bare, b"", env, cwd)[0],
            "launcher_syscalls": syscalls(["/bin/sh", "-c", ":"], b"", env, cwd)[0],
        }
        try:
            for install in installs:
                data = install.payload(ONGOING)
                for _ in range(3):  # the worker starts, then answers
                    subprocess.run(install.full, input=data, capture_output=True, env=install.env,
                                   cwd=install.project, check=True)  # fmt: skip
                    time.sleep(0.3)
                refusals = install.project / ".forge" / "runtime" / "worker" / "refusals.log"
                before = refusals.read_bytes() if refusals.exists() else b""
                where = str(install.project)
                client = [instructions(install.full, data, install.env, where)]
                client += [
                    instructions(install.full, data, install.env, where)
                    for _ in range(args.repeat - 1)
                ]
                alone = launcher_alone(install, tmp)
                counted = [syscalls(install.full, data, install.env, where)]
                after = refusals.read_bytes() if refusals.exists() else b""
                assert after == before, f"a call was not answered by the worker: {after!r}"
                rows[install.label] = {
                    "client": statistics.median(client),
                    "launcher": instructions(alone, data, install.env, where),
                    "syscalls": counted[0][0],
                    "launcher_syscalls": counted[0][1],
                }
        finally:
            for install in installs:
                stop_worker(install.project / ".forge")
    figures: dict[str, float] = {}
    for label, row in rows.items():
        for key, value in row.items():
            figures[f"{label}-{key}"] = value
    compared = {}
    if len(installs) > 1:
        first, last = rows[installs[0].label], rows[installs[-1].label]
        for key in ("client", "launcher", "syscalls"):
            compared[f"{key}_last_over_first"] = ratio(
                last[key] / first[key], "lower", f"{key} of the last tree over the first's"
            )
    if args.json:
        emit("warm_client_cost", figures, compared, trees=trees, repeat=args.repeat)
        return
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; python {python}")
    print("| | client instructions | launcher sh instructions | system calls (launcher's) |")
    print("|---|---|---|---|")
    for label, row in rows.items():
        tree = dict(labels).get(label) or (
            "python -I -S -c pass; sh -c :" if label == "bare" else ""
        )
        print(
            f"| {label} {tree} | {row['client'] / 1e6:.2f}M | {row['launcher'] / 1e6:.3f}M | "
            f"{row['syscalls']:.0f} ({row['launcher_syscalls']:.0f}) |"
        )


if __name__ == "__main__":
    main()
