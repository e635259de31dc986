"""The hook's answer to an allowed shell call with the floor's rewrite vs without (SPEC §13,
issue 24: "within noise on the warm path").

Two projects with the built-in catalog and the durable file store, alike but for the floor:

- ``rewrite``: no harness sandbox, so forge_policy's own floor holds: the answer carries the
  command rewritten under bubblewrap and a ``floor`` audit record is appended;
- ``plain``: Claude Code's sandbox block is on (``sandbox.enabled``, ``failIfUnavailable``,
  ``allowUnsandboxedCommands: false``), so the harness holds the floor: the answer is empty.

Both answer ``ls -la`` (allowed) for a Claude Code payload. Measured two ways, interleaved so
that machine noise hits both alike:

- ``client``: wall time of the warm-worker client process (``python -I -S
  forge_policy/worker/launch.py``, the command ``init`` writes) with its worker running;
- ``answer``: :meth:`forge_policy.serve.warm.Warm.answer` called in this process (the worker's
  own work per call, without process start-up), one warm evaluator per project.

Usage: ``python tests/benchmarks/floor_rewrite.py [--runs 60] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchjson import emit, ratio  # this folder's shared --json format

CLIENT = Path(__file__).resolve().parents[2] / "forge_policy" / "worker" / "launch.py"
SANDBOX = {"enabled": True, "failIfUnavailable": True, "allowUnsandboxedCommands": False}


def project(base: Path, name: str, sandbox: bool) -> dict[str, str]:
    folder = base / name
    (folder / ".forge").mkdir(parents=True)
    if sandbox:
        (folder / ".claude").mkdir()
        (folder / ".claude" / "settings.json").write_text(json.dumps({"sandbox": SANDBOX}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGE_", "CLAUDE_"))}
    env.update(FORGE_ROOT=str(folder / ".forge"), CLAUDE_PROJECT_DIR=str(folder))
    return env


def payload(cwd: str) -> bytes:
    session = str(uuid.uuid4())
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": f"/home/u/.claude/projects/p/{session}.jsonl",
            "cwd": cwd,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "ls -la", "description": "list"},
            "tool_use_id": f"toolu_{uuid.uuid4().hex[:24]}",
        }
    ).encode()


def client(env: dict[str, str]) -> tuple[float, bytes]:
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-I", "-S", str(CLIENT)],
        input=payload(env["CLAUDE_PROJECT_DIR"]),
        capture_output=True,
        env=env,
        cwd=env["CLAUDE_PROJECT_DIR"],
        check=True,
    )
    return time.perf_counter() - start, result.stdout


def stop_worker(root: str) -> None:
    for pid_file in (Path(root) / "runtime" / "worker").glob("*/worker.pid"):
        os.kill(int(pid_file.read_text()), 15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=60, help="samples per mode (default 60)")
    parser.add_argument("--json", action="store_true", help="print figures and ratios as JSON")
    args = parser.parse_args()
    from forge_policy.config.env import Config
    from forge_policy.serve.warm import Warm

    with tempfile.TemporaryDirectory() as tmp:
        envs = {
            "rewrite": project(Path(tmp), "rewrite", sandbox=False),
            "plain": project(Path(tmp), "plain", sandbox=True),
        }
        answers = {mode: client(env)[1] for mode, env in envs.items()}  # starts the workers
        assert b"updatedInput" in answers["rewrite"] and answers["plain"] == b"", answers
        time.sleep(0.5)
        wall: dict[str, list[float]] = {mode: [] for mode in envs}
        inner: dict[str, list[float]] = {mode: [] for mode in envs}
        warms = {}
        for mode, env in envs.items():
            os.chdir(env["CLAUDE_PROJECT_DIR"])  # Config.from_env reads the project from here
            warms[mode] = Warm(Config.from_env(env))
        for _ in range(args.runs):
            for mode, env in envs.items():
                wall[mode].append(client(env)[0])
                os.chdir(env["CLAUDE_PROJECT_DIR"])
                data = payload(env["CLAUDE_PROJECT_DIR"])
                start = time.perf_counter()
                text, _, _ = warms[mode].answer(data)
                inner[mode].append(time.perf_counter() - start)
                assert ("updatedInput" in text) == (mode == "rewrite"), text
        for env in envs.values():
            stop_worker(env["FORGE_ROOT"])
        os.chdir(tempfile.gettempdir())
    figures = {}
    for mode in envs:
        figures[f"client-{mode}-median-ms"] = statistics.median(wall[mode]) * 1000
        figures[f"answer-{mode}-median-ms"] = statistics.median(inner[mode]) * 1000
    client_ratio = figures["client-rewrite-median-ms"] / figures["client-plain-median-ms"]
    answer_ratio = figures["answer-rewrite-median-ms"] / figures["answer-plain-median-ms"]
    if args.json:
        emit(
            "floor_rewrite",
            figures,
            {
                "client_rewrite_over_plain": ratio(
                    client_ratio, "lower", "warm-worker client wall median, rewrite over none"
                ),
                "answer_rewrite_over_plain": ratio(
                    answer_ratio, "lower", "Warm.answer median, rewrite over none"
                ),
            },
            runs=args.runs,
        )
        return
    for name, value in figures.items():
        print(f"{name:32} {value:8.3f}")
    print(f"client wall, rewrite / plain: {client_ratio:.3f}")
    print(f"Warm.answer, rewrite / plain: {answer_ratio:.3f}")


if __name__ == "__main__":
    main()
