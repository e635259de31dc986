"""Per-call overhead of the LangChain adapter over a bare ``Evaluator.evaluate``.

Not collected by pytest (and not in run_all.py: it needs the ``langchain`` extra). Run:

    .venv/bin/python tests/benchmarks/bench_langchain.py [--runs 2000] [--turns 200]

Part 1, one tool call decided in isolation, the ways interleaved, each call in a session of its
own (memory store, a fresh memory audit each round): ``bare`` builds the PreToolUse event and
calls ``evaluate``; ``bare+post`` also evaluates the PostToolUse the middleware records after
an allowed tool ran (the same engine work the middleware does); ``wrap`` calls
``wrap_tool_call`` with a handler returning a ``ToolMessage``; ``awrap`` awaits
``awrap_tool_call`` (the evaluator in a worker thread) on a running event loop; ``hops`` times
the empty ``asyncio.to_thread`` round trips awrap makes (two for an allowed call, one for a
refused one). Medians in µs, for an allowed ``Read`` and a refused force push.

Part 2, a whole ``create_agent`` loop (a scripted fake chat model, one tool call per model
turn, all in one thread): the time per tool call with no policy, with a minimal middleware that
calls ``evaluate`` for PreToolUse and PostToolUse by hand, and with ``ForgePolicyMiddleware``;
sync ``invoke``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Sequence
from importlib.metadata import version
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.prebuilt.tool_node import ToolCallRequest

import forge_policy as fp
from forge_policy.integrations.langchain import ForgePolicyMiddleware

KINDS = {
    "allow": ("read_file", "Read", {"file_path": "/repo/src/app.py"}),
    "hard_block": ("shell", "Bash", {"command": "git push --force origin main"}),
}
TOOLS = {"read_file": "Read", "shell": "Bash"}


class ScriptedModel(GenericFakeChatModel):
    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self


@tool
def read_file(file_path: str) -> str:
    """Read a file."""
    return "x = 1\n"


async def measure_calls(runs: int) -> dict[str, dict[str, float]]:
    """Inside a running event loop, as an async agent calls ``awrap_tool_call``."""
    catalog = fp.builtin_catalog()
    results: dict[str, dict[str, float]] = {}
    if True:
        for kind, (name, tool_name, args) in KINDS.items():
            times: dict[str, list[float]] = {
                "bare": [],
                "bare+post": [],
                "wrap": [],
                "awrap": [],
                "hops": [],
            }
            for i in range(runs):
                # a fresh audit log each round: a long in-memory log would weigh on every append
                evaluator = fp.Evaluator(catalog, audit=fp.MemoryAuditSink())
                # untimed: the first decision of a fresh evaluator (and audit) costs more
                evaluator.evaluate(
                    fp.Event("PreToolUse", f"warm-{i}", tool_name=tool_name, tool_input=args)
                )
                for way in times:
                    session = f"{kind}-{way}-{i}"
                    middleware = ForgePolicyMiddleware(evaluator, session_id=session, tools=TOOLS)
                    call: Any = {"name": name, "args": args, "id": f"call_{i}"}
                    request = ToolCallRequest(tool_call=call, tool=None, state={}, runtime=None)  # type: ignore[arg-type]
                    start = time.perf_counter()
                    if way.startswith("bare"):
                        pre = fp.Event("PreToolUse", session, tool_name=tool_name, tool_input=args)
                        decision = evaluator.evaluate(pre)
                        if way == "bare+post" and not decision.blocked:
                            post = fp.Event(
                                "PostToolUse", session, tool_name=tool_name, tool_input=args
                            )
                            evaluator.evaluate(post)
                    elif way == "hops":  # the worker-thread round trips awrap makes
                        for _ in range(1 if kind == "hard_block" else 2):
                            await asyncio.to_thread(_nothing)
                    elif way == "wrap":
                        middleware.wrap_tool_call(request, _handler)
                    else:
                        await middleware.awrap_tool_call(request, _ahandler)
                    times[way].append(time.perf_counter() - start)
            results[kind] = {way: statistics.median(t) * 1e6 for way, t in times.items()}
    return results


def _nothing() -> None:
    return None


def _handler(request: ToolCallRequest) -> ToolMessage:
    return ToolMessage(content="x = 1\n", tool_call_id=request.tool_call["id"] or "")


async def _ahandler(request: ToolCallRequest) -> ToolMessage:
    return _handler(request)


class BareMiddleware(AgentMiddleware):  # type: ignore[type-arg]
    """The engine work alone, inside the loop: PreToolUse and PostToolUse by hand."""

    def __init__(self, evaluator: fp.Evaluator) -> None:
        super().__init__()
        self.evaluator = evaluator

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        call = request.tool_call
        session = request.runtime.config["configurable"]["thread_id"]
        pre = fp.Event("PreToolUse", session, tool_name="Read", tool_input=call["args"])
        if self.evaluator.evaluate(pre).blocked:
            return ToolMessage(content="refused", tool_call_id=call["id"], status="error")
        result = handler(request)
        post = fp.Event("PostToolUse", session, tool_name="Read", tool_input=call["args"])
        self.evaluator.evaluate(post)
        return result


def measure_loop(turns: int, repeat: int) -> dict[str, float]:
    """µs per tool call of a whole agent run, best of ``repeat``: no policy, the engine called
    by hand from a minimal middleware, and ForgePolicyMiddleware."""
    best: dict[str, float] = {}
    for _ in range(repeat):
        for way in ("plain", "bare", "middleware"):
            evaluator = fp.Evaluator(fp.builtin_catalog(), audit=fp.MemoryAuditSink())
            script = [
                AIMessage(
                    content="",
                    tool_calls=[
                        {"name": "read_file", "args": {"file_path": f"/r/{i}.py"}, "id": f"c{i}"}
                    ],
                )
                for i in range(turns)
            ]
            model = ScriptedModel(messages=iter([*script, AIMessage(content="done")]))
            middleware: list[Any] = {
                "plain": [],
                "bare": [BareMiddleware(evaluator)],
                "middleware": [ForgePolicyMiddleware(evaluator, tools=TOOLS)],
            }[way]
            agent = create_agent(model, [read_file], middleware=middleware)
            start = time.perf_counter()
            agent.invoke(
                {"messages": [("user", "go")]},
                {"configurable": {"thread_id": way}, "recursion_limit": 4 * turns + 10},
            )
            per_call = (time.perf_counter() - start) / turns * 1e6
            best[way] = min(best.get(way, per_call), per_call)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    calls = asyncio.run(measure_calls(args.runs))
    print(
        f"langchain {version('langchain')}, langgraph {version('langgraph')}, "
        f"{args.runs} calls per cell, median µs"
    )
    print(
        f"{'kind':12s} {'bare':>8s} {'bare+post':>10s} {'wrap':>8s} {'+wrap':>8s}"
        f" {'awrap':>8s} {'+awrap':>8s} {'hops':>8s}"
    )
    for kind, row in calls.items():
        base = row["bare+post"] if kind == "allow" else row["bare"]
        print(
            f"{kind:12s} {row['bare']:8.1f} {row['bare+post']:10.1f} {row['wrap']:8.1f}"
            f" {row['wrap'] - base:8.1f} {row['awrap']:8.1f} {row['awrap'] - base:8.1f}"
            f" {row['hops']:8.1f}"
        )
    print("(+wrap, +awrap: over bare+post for an allowed call, over bare for a refused one;")
    print(" hops: the empty asyncio.to_thread round trips awrap makes, 2 allowed, 1 refused)")
    loop = measure_loop(args.turns, args.repeat)
    print(
        f"\ncreate_agent loop, {args.turns} tool calls in one thread, best of {args.repeat}, "
        f"µs per tool call: no policy {loop['plain']:.0f}, engine by hand {loop['bare']:.0f}, "
        f"ForgePolicyMiddleware {loop['middleware']:.0f} "
        f"(+{loop['middleware'] - loop['bare']:.0f} over by hand, "
        f"x{loop['middleware'] / loop['bare']:.2f})"
    )


if __name__ == "__main__":
    main()
