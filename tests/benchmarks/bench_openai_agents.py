"""Per-call overhead of the OpenAI Agents SDK adapter over a bare ``Evaluator.evaluate``.

Not collected by pytest (and not in run_all.py: it needs the ``openai-agents`` extra). Run:

    .venv/bin/python tests/benchmarks/bench_openai_agents.py [--runs 2000]

Three ways of deciding the same PreToolUse call, interleaved, each call in a session of its own
(memory store and audit): ``bare`` builds the event and calls ``evaluate``; ``guardrail`` awaits
the input guardrail's ``run`` as the SDK does (the SDK's ``ToolContext`` with the raw JSON
arguments, the tool mapping, a worker thread, a ``ToolGuardrailFunctionOutput``); ``protected``
awaits what :meth:`Guard.protect` installs, in the SDK's order: the ``needs_approval`` check
(which decides) and then the input guardrail (which answers from that decision). A fresh
evaluator every ``ROTATE`` calls keeps the memory audit small (see there). Prints the
median per call in µs for an allowed ``Read`` and a refused force push, and the extra time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from importlib.metadata import version
from typing import Any

from agents import Agent, ToolInputGuardrailData
from agents.tool_context import ToolContext

import forge_policy as fp
from forge_policy.integrations.openai_agents import guard

KINDS = {
    "allow": ("read_file", {"path": "/repo/src/app.py"}, "Read", {"file_path": "/repo/src/app.py"}),
    "hard_block": (
        "run_shell",
        {"cmd": "git push --force origin main"},
        "Bash",
        {"command": "git push --force origin main"},
    ),
}
#: calls per evaluator: a new session's first counted event rebuilds it from the audit, and
#: ``MemoryAuditSink`` copies every record it holds to answer (O(records)), which would swamp
#: the adapter's cost as the run goes on
ROTATE = 50
TOOLS = {"read_file": ("Read", {"path": "file_path"}), "run_shell": ("Bash", {"cmd": "command"})}


def fresh() -> tuple[fp.Evaluator, Any]:
    evaluator = fp.Evaluator(fp.builtin_catalog(), audit=fp.MemoryAuditSink())
    return evaluator, guard(
        evaluator, tools=TOOLS, session_id=lambda ctx: ctx.context["session_id"]
    )


async def measure(runs: int) -> dict[str, dict[str, float]]:
    agent = Agent(name="bench")
    results: dict[str, dict[str, float]] = {}
    for kind, (name, arguments, catalog_tool, tool_input) in KINDS.items():
        times: dict[str, list[float]] = {"bare": [], "guardrail": [], "protected": []}
        raw = json.dumps(arguments)
        for i in range(runs):
            if i % ROTATE == 0:  # a new session's first block reads the whole memory audit
                evaluator, forge = fresh()
                needs = forge.needs_approval(name)
            for way in times:
                session, call_id = f"{kind}-{way}-{i}", f"call_{i}"
                start = time.perf_counter()
                if way == "bare":
                    event = fp.Event(
                        "PreToolUse",
                        session,
                        tool_name=catalog_tool,
                        tool_input=tool_input,
                        tool_use_id=call_id,
                    )
                    evaluator.evaluate(event)
                    times[way].append(time.perf_counter() - start)
                    continue
                context = ToolContext(
                    context={"session_id": session},
                    tool_name=name,
                    tool_call_id=call_id,
                    tool_arguments=raw,
                )
                if way == "protected":
                    await needs(context, arguments, call_id)
                data = ToolInputGuardrailData(context=context, agent=agent)
                await forge.input_guardrail.run(data)
                times[way].append(time.perf_counter() - start)
        results[kind] = {way: statistics.median(t) * 1e6 for way, t in times.items()}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    runs = parser.parse_args().runs
    results = asyncio.run(measure(runs))
    print(f"openai-agents {version('openai-agents')}, {runs} calls per cell, median µs")
    print(
        f"{'kind':12s} {'bare':>8s} {'guard':>8s} {'+guard':>8s} {'protect':>8s} {'+protect':>9s}"
    )
    for kind, row in results.items():
        print(
            f"{kind:12s} {row['bare']:8.1f} {row['guardrail']:8.1f}"
            f" {row['guardrail'] - row['bare']:8.1f} {row['protected']:8.1f}"
            f" {row['protected'] - row['bare']:9.1f}"
        )


if __name__ == "__main__":
    main()
