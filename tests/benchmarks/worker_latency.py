"""Wall time of the hook command ``forge-policy init`` writes, worker warm and cold, next to a bare
``python -c pass`` of the same venv.

The command is read back from the ``.claude/settings.json`` that ``init`` writes in a temporary
project (``python -I -S …/forge_policy/worker/launch.py``). Every sample is a fresh process fed
one Claude Code payload on stdin, as Claude Code runs a command hook:

- ``warm``: the worker of the project is running (started by the warm-up calls);
- ``cold``: ``FORGE_WORKER=off``, the client evaluates in-process (the full engine);
- ``bare``: ``python -c pass`` with the same interpreter (the floor).

The commands run interleaved so that machine noise hits them alike; each median is divided by
bare's (targets: warm <= 1.3x, cold <= 5x). Then 16 clients are started at once, several rounds,
and the median and p99 of their wall times are given for each mode: Claude Code runs hooks in
parallel. The built-in catalog, the durable file store and a fresh session per sample are used:

- ``allow``: a ``Read`` no behavior objects to;
- ``nudge``: a ``Write`` with no search first;
- ``soft_block``: ``npm install left-pad`` (asks the user: a soft block with a ``user`` override);
- ``hard_block``: ``git push --force`` (a block record appended to the audit log, fsynced).

Usage: ``python tests/benchmarks/worker_latency.py [--runs 40] [--rounds 10] [--python PY]
[--fresh-state] [--json]`` (``--json``: the figures and the ratios run_all.py compares, see
benchjson.py)
(benchmark a non-editable install: ``python3 -m venv /tmp/v && /tmp/v/bin/pip install -q .``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchjson import emit, ratio  # this folder's shared --json format

KINDS = ("allow", "nudge", "soft_block", "hard_block")


def payload(kind: str, cwd: str) -> bytes:
    session = str(uuid.uuid4())
    tool, tool_input = {
        "allow": ("Read", {"file_path": f"{cwd}/src/app.py"}),
        "nudge": ("Write", {"file_path": f"{cwd}/src/new.py", "content": "X = 1\n"}),
        "soft_block": ("Bash", {"command": "npm install left-pad"}),
        "hard_block": ("Bash", {"command": "git push --force origin main"}),
    }[kind]
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": f"/home/u/.claude/projects/p/{session}.jsonl",
            "cwd": cwd,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": f"toolu_{uuid.uuid4().hex[:24]}",
        }
    ).encode()


def timed(command: list[str], data: bytes, env: dict[str, str]) -> tuple[float, bytes, bytes]:
    start = time.perf_counter()
    result = subprocess.run(
        command, input=data, capture_output=True, env=env, cwd=env["CLAUDE_PROJECT_DIR"], check=True
    )
    return time.perf_counter() - start, result.stdout, result.stderr


def cpu_of(command: list[str], data: bytes, env: dict[str, str]) -> float:
    """User + system CPU seconds of one child (the worker's share is not in it)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    timed(command, data, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def written_command(python: str, project: Path, env: dict[str, str]) -> list[str]:
    """Run ``forge-policy init`` and return the PreToolUse command it wrote, split."""
    script = Path(python).with_name("forge-policy")
    cli = [str(script)] if script.exists() else [python, "-m", "forge_policy.cli"]
    subprocess.run([*cli, "init"], cwd=project, env=env, check=True, capture_output=True)
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    command: str = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    return shlex.split(command)


def stop_worker(root: Path) -> None:
    for pid_file in (root / "runtime" / "worker").glob("*/worker.pid"):
        pid = int(pid_file.read_text())
        os.kill(pid, 15)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.02)


def report_json(
    args: argparse.Namespace,
    python: str,
    where: str,
    load: str,
    client: list[str],
    samples: dict[str, list[float]],
    cpu: dict[str, list[float]],
    parallel: dict[str, list[float]],
    answers: dict[str, tuple[bytes, bytes, bytes]],
) -> None:
    base = statistics.median(samples["bare"])
    figures: dict[str, float] = {"bare-ms": base * 1000}
    compared: dict[str, dict[str, object]] = {}
    target = {"warm": "1.3x", "cold": "5x"}
    for kind in KINDS:
        for mode in ("warm", "cold"):
            median = statistics.median(samples[f"{mode} {kind}"])
            figures[f"{mode}-{kind}-ms"] = median * 1000
            if mode == "warm" or kind == "allow":
                compared[f"{mode}_{kind}_over_bare"] = ratio(
                    median / base,
                    "lower",
                    f"wall median of the hook command init writes, worker {mode}, {kind}, "
                    f"over `python -c pass` (issue 9: {mode} <= {target[mode]})",
                )
    bare_cpu = statistics.median(cpu["bare"])
    for mode, values in cpu.items():
        figures[f"cpu-{mode}-allow-ms"] = statistics.median(values) * 1000
    compared["warm_cpu_over_bare"] = ratio(
        statistics.median(cpu["warm"]) / bare_cpu,
        "lower",
        "CPU of the hook process on allow, worker warm, over `python -c pass`",
    )
    bare_p99 = pct(parallel["bare"], 0.99)
    for mode, values in parallel.items():
        figures[f"parallel-{mode}-median-ms"] = statistics.median(values) * 1000
        figures[f"parallel-{mode}-p99-ms"] = pct(values, 0.99) * 1000
        figures[f"parallel-{mode}-p99-over-bare"] = pct(values, 0.99) / bare_p99
    compared["parallel_warm_median_over_bare"] = ratio(
        statistics.median(parallel["warm"]) / statistics.median(parallel["bare"]),
        "lower",
        "16 parallel clients: warm median over bare median",
    )
    different = [kind for kind, (warm, cold, _) in answers.items() if warm != cold]
    compared["warm_cold_answers_differing"] = ratio(
        len(different), "zero", "events whose warm and cold answers differ (must be 0)"
    )
    emit(
        "worker_latency",
        figures,
        compared,
        python=python,
        forge_policy=where,
        hook_command=" ".join(client),
        load_before=load,
        runs=args.runs,
        rounds=args.rounds,
        fresh_state=args.fresh_state,
        differing=different,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=40, help="samples per command (default 40)")
    parser.add_argument("--rounds", type=int, default=10, help="rounds of 16 parallel clients")
    parser.add_argument("--python", default=sys.executable, help="interpreter of the venv to test")
    parser.add_argument(
        "--fresh-state",
        action="store_true",
        help="delete state.json before each round: every sample is a new session, and the file "
        "store rewrites the whole file, so without this the last samples pay for hundreds of "
        "sessions (a real project has a few)",
    )
    parser.add_argument("--json", action="store_true", help="print figures and ratios as JSON")
    args = parser.parse_args()
    python = str(Path(args.python).absolute())
    where = subprocess.run(
        [python, "-c", "import forge_policy; print(forge_policy.__file__)"],
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
    ).stdout.strip()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="forge-worker-bench-") as tmp:
        project = Path(tmp) / "project"
        (project / "src").mkdir(parents=True)
        (project / "src" / "app.py").write_text("print('hi')\n")
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("FORGE_", "DISABLE_")) and k != "PYTHONDONTWRITEBYTECODE"
        }
        env.update(CLAUDE_PROJECT_DIR=str(project), XDG_CACHE_HOME=str(Path(tmp) / "cache"))
        cold_env = {**env, "FORGE_WORKER": "off"}
        client = written_command(python, project, env)
        bare = [python, "-c", "pass"]
        try:
            for _ in range(5):  # warm-up: bytecode, catalog cache, state file, the worker
                for kind in KINDS:
                    timed(client, payload(kind, str(project)), env)
                    timed(client, payload(kind, str(project)), cold_env)
                time.sleep(0.2)
            answers = {}
            for kind in KINDS:
                warm_out = timed(client, payload(kind, str(project)), env)
                cold_out = timed(client, payload(kind, str(project)), cold_env)
                answers[kind] = (warm_out[1], cold_out[1], warm_out[2])
            samples: dict[str, list[float]] = {"bare": []}
            for kind in KINDS:
                samples[f"warm {kind}"] = []
                samples[f"cold {kind}"] = []
            state = project / ".forge" / "runtime" / "state.json"
            for _ in range(args.runs):
                if args.fresh_state:
                    state.unlink(missing_ok=True)
                samples["bare"].append(timed(bare, b"", env)[0])
                for kind in KINDS:
                    data = payload(kind, str(project))
                    samples[f"warm {kind}"].append(timed(client, data, env)[0])
                    data = payload(kind, str(project))
                    samples[f"cold {kind}"].append(timed(client, data, cold_env)[0])
            cpu: dict[str, list[float]] = {"bare": [], "warm": [], "cold": []}
            for _ in range(args.runs):
                cpu["bare"].append(cpu_of(bare, b"", env))
                cpu["warm"].append(cpu_of(client, payload("allow", str(project)), env))
                cpu["cold"].append(cpu_of(client, payload("allow", str(project)), cold_env))
            parallel: dict[str, list[float]] = {"bare": [], "warm": [], "cold": []}
            modes = {"bare": (bare, env), "warm": (client, env), "cold": (client, cold_env)}
            with ThreadPoolExecutor(16) as pool:
                for _ in range(args.rounds):
                    for mode, (command, mode_env) in modes.items():
                        jobs = [
                            (command, payload(KINDS[i % 4], str(project)), mode_env)
                            for i in range(16)
                        ]
                        parallel[mode].extend(pool.map(lambda job: timed(*job)[0], jobs))
        finally:
            stop_worker(project / ".forge")

    base = statistics.median(samples["bare"])
    if args.json:
        report_json(args, python, where, load, client, samples, cpu, parallel, answers)
        return
    print(f"machine: {os.cpu_count()} cores, {platform.machine()}, {platform.system()}")
    print(f"python: {python} ({platform.python_implementation()} {platform.python_version()})")
    print(f"forge_policy: {where}")
    print(f"hook command (written by init): {' '.join(client)}")
    print(f"load average before the run: {load}")
    fresh = ", state.json deleted before each round" if args.fresh_state else ""
    print(f"runs: {args.runs} per command, interleaved{fresh}\n")
    print("| event | bare | warm | warm / bare | cold | cold / bare |")
    print("|---|---|---|---|---|---|")
    for kind in KINDS:
        warm = statistics.median(samples[f"warm {kind}"])
        cold = statistics.median(samples[f"cold {kind}"])
        print(
            f"| {kind} | {base * 1000:.1f} ms | {warm * 1000:.1f} ms | {warm / base:.2f}x "
            f"| {cold * 1000:.1f} ms | {cold / base:.2f}x |"
        )
    bare_cpu = statistics.median(cpu["bare"])
    shares = [
        f"{mode} {statistics.median(v) * 1000:.1f} ms ({statistics.median(v) / bare_cpu:.2f}x)"
        for mode, v in cpu.items()
    ]
    print(f"\nCPU (user + system) of the hook process on allow, median: {'; '.join(shares)}")
    print(f"\n16 parallel clients, {args.rounds} rounds ({16 * args.rounds} samples per mode):\n")
    print("| mode | median | p99 | p99 / bare p99 |")
    print("|---|---|---|---|")
    bare_p99 = pct(parallel["bare"], 0.99)
    for mode, values in parallel.items():
        p99 = pct(values, 0.99)
        print(
            f"| {mode} | {statistics.median(values) * 1000:.1f} ms | {p99 * 1000:.1f} ms "
            f"| {p99 / bare_p99:.2f}x |"
        )
    print()
    for kind, (warm_out, cold_out, warm_err) in answers.items():
        same = "identical" if warm_out == cold_out else "DIFFERENT"
        text = warm_out.decode().strip()
        shown = text[:70] + "…" if len(text) > 70 else text or "(empty)"
        print(f"{kind}: warm and cold answers {same}; {shown}")
        if warm_err:
            print(f"  warm stderr: {warm_err.decode().strip()}")


if __name__ == "__main__":
    main()
