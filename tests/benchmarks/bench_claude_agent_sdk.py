"""Per-call overhead of the claude-agent-sdk adapter over a bare ``Evaluator.evaluate``.

Not collected by pytest (and not in run_all.py: it needs the ``claude-agent-sdk`` extra). Run:

    .venv/bin/python tests/benchmarks/bench_claude_agent_sdk.py [--runs 2000]

Three ways of deciding the same PreToolUse call, interleaved, each call in a session of its own
(memory store and audit): ``bare`` builds the event and calls ``evaluate``; ``hook`` awaits the
PreToolUse callback of ``hooks()`` as the SDK does (event from the hook input, a worker thread,
the answer dict); ``can_use_tool`` awaits the permission callback. Prints the median per call
in µs for an allowed ``Read`` and a refused force push, and the adapter's extra time.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from importlib.metadata import version
from typing import Any

from claude_agent_sdk import ToolPermissionContext

import forge_policy as fp
from forge_policy.integrations.claude_agent_sdk import can_use_tool, hooks

KINDS = {
    "allow": ("Read", {"file_path": "/repo/src/app.py"}),
    "hard_block": ("Bash", {"command": "git push --force origin main"}),
}


async def measure(runs: int) -> dict[str, dict[str, float]]:
    evaluator = fp.Evaluator(fp.builtin_catalog(), audit=fp.MemoryAuditSink())
    pre = hooks(evaluator)["PreToolUse"][0].hooks[0]
    results: dict[str, dict[str, float]] = {}
    for kind, (tool, tool_input) in KINDS.items():
        times: dict[str, list[float]] = {"bare": [], "hook": [], "can_use_tool": []}
        for i in range(runs):
            for way in times:
                session = f"{kind}-{way}-{i}"
                payload: dict[str, Any] = {
                    "session_id": session,
                    "transcript_path": "/t.jsonl",
                    "cwd": "/repo",
                    "hook_event_name": "PreToolUse",
                    "tool_name": tool,
                    "tool_input": tool_input,
                    "tool_use_id": f"toolu_{i}",
                }
                start = time.perf_counter()
                if way == "bare":
                    evaluator.evaluate(fp.Event.from_claude_code(payload))
                elif way == "hook":
                    await pre(payload, payload["tool_use_id"], {"signal": None})
                else:
                    decide = can_use_tool(evaluator, session_id=session)
                    await decide(tool, tool_input, ToolPermissionContext(tool_use_id="t"))
                times[way].append(time.perf_counter() - start)
        results[kind] = {way: statistics.median(t) * 1e6 for way, t in times.items()}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    runs = parser.parse_args().runs
    results = asyncio.run(measure(runs))
    print(f"claude-agent-sdk {version('claude-agent-sdk')}, {runs} calls per cell, median µs")
    print(f"{'kind':12s} {'bare':>8s} {'hook':>8s} {'+hook':>8s} {'can_use':>8s} {'+can_use':>9s}")
    for kind, row in results.items():
        print(
            f"{kind:12s} {row['bare']:8.1f} {row['hook']:8.1f} {row['hook'] - row['bare']:8.1f}"
            f" {row['can_use_tool']:8.1f} {row['can_use_tool'] - row['bare']:9.1f}"
        )


if __name__ == "__main__":
    main()
