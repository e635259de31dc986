"""Wall time of one ``forge-policy hook`` process, next to a bare ``python -c pass``.

Every sample is a fresh process fed one Claude Code payload on stdin, as Claude Code runs a
command hook. The commands run interleaved (bare, allow, nudge, hard_block, bare, …) so that
machine noise hits them alike; the figure that matters is each median's ratio to bare's
(goal: at most 3x). The child's CPU time (user + system, from ``getrusage``) is reported
beside the wall time: on a busy machine it is the steadier figure.

- ``bare``: ``python -c pass`` with the same interpreter (the floor: interpreter start-up);
- ``allow``: a ``Read`` no behavior objects to (reads state, writes nothing);
- ``nudge``: a ``Write`` with no search first, in a new session (state written, no audit);
- ``hard_block``: ``git push --force`` (state written, a block record appended to the audit log,
  both fsynced).

The default durable file store is used, the catalog cache is warmed first, and the children may
write bytecode (``PYTHONDONTWRITEBYTECODE`` is dropped) as an installed package has it. Then the
imports of the hook path are listed (``-X importtime``).

Usage: ``python tests/benchmarks/hook_latency.py [--runs 60] [--python .venv-run/bin/python]
[--json]`` (``--json``: the figures and the ratios run_all.py compares, see benchjson.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchjson import emit, ratio  # this folder's shared --json format

HEAVY = ("ruamel", "portalocker", "argparse", "typing", "dataclasses", "pathlib", "sqlite3")


def payload(kind: str, cwd: str) -> bytes:
    session = str(uuid.uuid4())
    tool, tool_input = {
        "allow": ("Read", {"file_path": f"{cwd}/src/app.py"}),
        "nudge": ("Write", {"file_path": f"{cwd}/src/new.py", "content": "X = 1\n"}),
        "hard_block": ("Bash", {"command": "git push --force origin main"}),
    }[kind]
    event = {
        "session_id": session,
        "transcript_path": f"/home/u/.claude/projects/p/{session}.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": f"toolu_{uuid.uuid4().hex[:24]}",
    }
    return json.dumps(event).encode()


def timed(command: list[str], data: bytes, env: dict[str, str]) -> tuple[float, float, bytes]:
    """Wall time, CPU time (user + system) of the child, and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(
        command, input=data, capture_output=True, env=env, cwd=env["CLAUDE_PROJECT_DIR"], check=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, result.stdout


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def imports(
    command: list[str], data: bytes, env: dict[str, str], repeat: int = 7
) -> list[tuple[int, str]]:
    """(cumulative µs, module) from ``-X importtime`` (PYTHONPROFILEIMPORTTIME), the smallest
    of ``repeat`` runs for each module (single runs are too noisy to rank)."""
    best: dict[str, int] = {}
    for _ in range(repeat):
        result = subprocess.run(
            command,
            input=data,
            capture_output=True,
            env={**env, "PYTHONPROFILEIMPORTTIME": "1"},
            cwd=env["CLAUDE_PROJECT_DIR"],
        )
        for line in result.stderr.decode().splitlines():
            parts = line.split("|")
            if len(parts) == 3 and parts[1].strip().isdigit():
                micros, module = int(parts[1]), parts[2].rstrip()
                best[module] = min(micros, best.get(module, micros))
    return [(micros, module) for module, micros in best.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=60, help="samples per command (default 60)")
    parser.add_argument("--python", default=sys.executable, help="interpreter of the venv to test")
    parser.add_argument("--json", action="store_true", help="print figures and ratios as JSON")
    args = parser.parse_args()
    python = str(Path(args.python).absolute())
    script = Path(python).with_name("forge-policy")
    hook = [str(script), "hook"] if script.exists() else [python, "-m", "forge_policy.hook"]
    probe = "import forge_policy, sys; print(forge_policy.__file__)"
    where = subprocess.run(
        [python, "-c", probe], capture_output=True, text=True, cwd=tempfile.gettempdir()
    ).stdout.strip()

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="forge-bench-") as tmp:
        project = Path(tmp) / "project"
        (project / "src").mkdir(parents=True)
        (project / "src" / "app.py").write_text("print('hi')\n")
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("FORGE_", "DISABLE_")) and k != "PYTHONDONTWRITEBYTECODE"
        }
        env.update(
            FORGE_ROOT=str(project / ".forge"),
            CLAUDE_PROJECT_DIR=str(project),
            XDG_CACHE_HOME=str(Path(tmp) / "cache"),
        )
        commands = {
            "bare": ([python, "-c", "pass"], lambda: b""),
            "allow": (hook, lambda: payload("allow", str(project))),
            "nudge": (hook, lambda: payload("nudge", str(project))),
            "hard_block": (hook, lambda: payload("hard_block", str(project))),
        }
        for _ in range(5):  # warm-up: bytecode, catalog cache, state file
            for command, make in commands.values():
                timed(command, make(), env)
        outputs = {name: timed(c, m(), env)[2] for name, (c, m) in commands.items()}
        samples: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, (command, make) in commands.items():
                wall, used, _ = timed(command, make(), env)
                samples[name].append(wall)
                cpu[name].append(used)
        allow_imports = imports(hook, payload("allow", str(project)), env)
        block_imports = imports(hook, payload("hard_block", str(project)), env, repeat=1)
        bare_imports = imports([python, "-c", "pass"], b"", env, repeat=1)
        module_imports = imports([python, "-c", "import forge_policy.hook"], b"", env)

    bare = statistics.median(samples["bare"])
    bare_cpu = statistics.median(cpu["bare"])

    def heavy(rows: list[tuple[int, str]]) -> list[str]:
        return sorted({m.strip() for _, m in rows if m.strip().split(".")[0] in HEAVY})

    if args.json:
        figures: dict[str, float] = {}
        compared: dict[str, dict[str, object]] = {}
        for name, values in samples.items():
            figures[f"{name}-wall-median-ms"] = statistics.median(values) * 1000
            figures[f"{name}-wall-p90-ms"] = pct(values, 0.9) * 1000
            figures[f"{name}-cpu-median-ms"] = statistics.median(cpu[name]) * 1000
            if name == "bare":
                continue
            compared[f"{name}_wall_over_bare"] = ratio(
                statistics.median(values) / bare,
                "lower",
                f"wall median of one `forge-policy hook` process ({name}) over `python -c pass`",
            )
            compared[f"{name}_cpu_over_bare"] = ratio(
                statistics.median(cpu[name]) / bare_cpu,
                "lower",
                f"CPU median of one hook process ({name}) over `python -c pass`",
            )
        compared["allow_heavy_packages"] = ratio(
            len({m.split(".")[0] for m in heavy(allow_imports)}),
            "lower",
            f"heavy packages ({', '.join(HEAVY)}) on the allow path (a count)",
            tolerance=0.0,
        )
        emit(
            "hook_latency",
            figures,
            compared,
            python=python,
            forge_policy=where,
            runs=args.runs,
            load_before=load,
            heavy_allow=heavy(allow_imports),
        )
        return
    print(f"machine: {os.cpu_count()} cores, {platform.machine()}, {platform.system()}")
    print(f"python: {python} ({platform.python_implementation()} {platform.python_version()})")
    print(f"forge_policy: {where}")
    print(f"hook command: {' '.join(Path(c).name if '/' in c else c for c in hook)}")
    print(f"load average before the run: {load}")
    print(f"runs: {args.runs} per command, interleaved\n")
    print("| command | wall median | wall p90 | median / bare | CPU median | CPU / bare |")
    print("|---|---|---|---|---|---|")
    for name, values in samples.items():
        median = statistics.median(values)
        used = statistics.median(cpu[name])
        print(
            f"| {name} | {median * 1000:.1f} ms | {pct(values, 0.9) * 1000:.1f} ms "
            f"| {median / bare:.2f}x | {used * 1000:.1f} ms | {used / bare_cpu:.2f}x |"
        )
    print()
    for name in ("allow", "nudge", "hard_block"):
        answer = outputs[name].decode().strip()
        print(f"{name} answer: {answer[:90] + '…' if len(answer) > 90 else answer or '(empty)'}")

    bare_names = {m.strip() for _, m in bare_imports}
    print(f"\nallow path imports beyond bare python: {len(allow_imports) - len(bare_imports)}")
    print(f"heavy modules on the allow path: {heavy(allow_imports) or 'none'}")
    print(f"heavy modules on the hard_block path: {heavy(block_imports) or 'none'}")
    print(f"(already imported by bare python's site: {sorted(bare_names & set(HEAVY)) or 'none'})")
    print(
        '\ntop cumulative imports of `python -X importtime -c "import forge_policy.hook"` '
        "(best of 7):"
    )
    for micros, module in sorted(module_imports, reverse=True)[:12]:
        print(f"  {micros / 1000:6.1f} ms  {module}")
    print("\ntop cumulative imports of an allow-path hook process, beyond site (best of 7):")
    for micros, module in sorted(allow_imports, reverse=True)[:14]:
        if module.strip() not in bare_names:
            print(f"  {micros / 1000:6.1f} ms  {module}")


if __name__ == "__main__":
    main()
