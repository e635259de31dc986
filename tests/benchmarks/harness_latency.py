"""Wall time of the hook per harness, side by side: what an adapter costs over Claude Code's.

For each harness one recorded payload (``tests/harness/fixtures``) is sent to
``forge-policy hook --harness NAME`` in a fresh process (in-process evaluation, the full engine),
and to the warm worker's client (``python -I -S …/worker/launch.py --harness NAME``) once its
worker runs. The commands run interleaved, each sample a fresh session; medians are divided by
Claude Code's in the same mode (target: within 1.1x, the adapter is a dict translation).

- ``allow``: ``ls -la``, which no built-in behavior objects to;
- ``block``: ``git push --force origin main`` (a hard block, audited).

Usage: ``python tests/benchmarks/harness_latency.py [--runs 15] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchjson import emit, ratio  # this folder's shared --json format

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "harness" / "fixtures"
CLIENT = HERE.parent.parent / "forge_policy" / "worker" / "launch.py"
#: harness → (fixture, --event)
HARNESSES = {
    "claude-code": ("", ""),
    "codex": ("codex/pre_tool_use", ""),
    "gemini": ("gemini/before_tool", ""),
    "cursor": ("cursor/before_shell_execution", ""),
    "copilot": ("copilot/pre_tool_use", "preToolUse"),
    "antigravity": ("antigravity/pre_tool_use", "PreToolUse"),
}
COMMANDS = {"allow": "ls -la", "block": "git push --force origin main"}


def payload(harness: str, command: str, cwd: str) -> bytes:
    session = str(uuid.uuid4())
    name = HARNESSES[harness][0]
    if not name:
        data = {
            "session_id": session,
            "transcript_path": f"/home/u/.claude/projects/p/{session}.jsonl",
            "cwd": cwd,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_use_id": f"toolu_{uuid.uuid4().hex[:24]}",
        }
        return json.dumps(data).encode()
    text = (FIXTURES / f"{name}.json").read_text()
    for key, value in (("{{SESSION}}", session), ("{{CWD}}", cwd), ("{{COMMAND}}", command)):
        text = text.replace(key, value)
    return text.encode()


def options(harness: str) -> list[str]:
    event = HARNESSES[harness][1]
    return ["--harness", harness, *(["--event", event] if event else [])]


def timed(command: list[str], data: bytes, env: dict[str, str], cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(command, input=data, capture_output=True, env=env, cwd=cwd, check=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    script = Path(sys.executable).with_name("forge-policy")
    hook = [str(script), "hook"] if script.exists() else [sys.executable, "-m", "forge_policy.hook"]
    samples: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "p"
        project.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGE_", "CLAUDE"))}
        env.update(CLAUDE_PROJECT_DIR=str(project), XDG_CACHE_HOME=str(Path(tmp) / "xdg"))
        cwd = str(project)
        client = [sys.executable, "-I", "-S", str(CLIENT)]
        for harness in HARNESSES:  # warm-up: caches, and each harness's worker request once
            timed([*hook, *options(harness)], payload(harness, "ls", cwd), env, cwd)
            timed([*client, *options(harness)], payload(harness, "ls", cwd), env, cwd)
        time.sleep(1.0)
        for _ in range(args.runs):
            for harness in HARNESSES:
                for kind, command in COMMANDS.items():
                    for mode, base in (("cold", hook), ("warm", client)):
                        data = payload(harness, command, cwd)
                        key = f"{mode} {kind} {harness}"
                        samples.setdefault(key, []).append(
                            timed([*base, *options(harness)], data, env, cwd)
                        )
        subprocess.run(
            [str(script), "worker", "stop"], env=env, cwd=cwd, capture_output=True, check=False
        )
    medians = {key: statistics.median(values) for key, values in samples.items()}
    compared: dict[str, dict[str, object]] = {}
    lines = []
    for mode in ("cold", "warm"):
        for kind in COMMANDS:
            reference = medians[f"{mode} {kind} claude-code"]
            for harness in HARNESSES:
                value = medians[f"{mode} {kind} {harness}"]
                lines.append(
                    f"{mode:4} {kind:5} {harness:12} {value * 1000:7.1f} ms  "
                    f"{value / reference:5.2f}x claude-code"
                )
                if harness != "claude-code":
                    compared[f"{mode}_{kind}_{harness}_over_claude_code"] = ratio(
                        value / reference,
                        "lower",
                        f"hook wall median, {mode} ({'worker' if mode == 'warm' else 'in-process'})"
                        f", {kind}, --harness {harness} over claude-code (target <= 1.1x)",
                    )
    if args.json:
        figures = {key.replace(" ", "-") + "-ms": v * 1000 for key, v in medians.items()}
        emit("harness_latency", figures, compared)
        return 0
    print(
        f"{platform.python_version()} on {platform.machine()}, {os.cpu_count()} cpus, "
        f"{args.runs} runs each"
    )
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
