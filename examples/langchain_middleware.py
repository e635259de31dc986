"""Govern a LangChain agent with forge_policy (extra: ``forge-policy[langchain]``).

A real ``create_agent`` graph runs with :class:`ForgePolicyMiddleware`; a scripted fake chat
model from ``langchain_core`` stands in for the LLM and asks for the tool calls below, each
decided before the tool runs. The tools' names are mapped onto the catalog's vocabulary
(``shell`` is ``Bash``, ``write_file(path=…)`` is ``Write(file_path=…)``…). Reading ``.env``
asks the user: the graph pauses on a LangGraph interrupt, and the script answers for the user.
Run:

    python examples/langchain_middleware.py
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

import forge_policy as fp
from forge_policy.integrations.langchain import ForgePolicyMiddleware
from forge_policy.testing import FakeClock

THREAD = "langchain-demo-thread"
CLOCK = FakeClock()  # seconds advance by hand, so the run reads the same every time

# what the scripted model asks for: (seconds since the previous turn, tool, arguments)
SCRIPT: list[tuple[float, str, dict[str, Any]]] = [
    (0, "grep", {"pattern": "def parse_config", "path": "/repo/src/"}),
    (4, "read_file", {"path": "/repo/src/config.py"}),
    (7, "shell", {"command": "git push --force origin main"}),
    (3, "write_file", {"path": "/repo/lib/util.py", "content": "def helper(): ..."}),
    (5, "write_file", {"path": "/repo/lib/extra.py", "content": "X = 1"}),
    (5, "write_file", {"path": "/repo/lib/more.py", "content": "Y = 2"}),
    (5, "write_file", {"path": "/repo/lib/again.py", "content": "Z = 3"}),
    (5, "write_file", {"path": "/repo/lib/last.py", "content": "W = 4"}),
    (20, "write_file", {"path": "/repo/lib/last.py", "content": "W = 4"}),  # identical retry
    (3, "read_file", {"path": "/repo/.env"}),  # asks the user
]

#: LangChain tool names (and argument names) in the catalog's vocabulary.
TOOLS = {
    "shell": "Bash",
    "grep": "Grep",
    "read_file": ("Read", {"path": "file_path"}),
    "write_file": ("Write", {"path": "file_path"}),
}


class ScriptedModel(GenericFakeChatModel):
    """The fake chat model, with the two things an agent loop needs from a real one: it accepts
    the tools ``create_agent`` binds, and time passes between its turns."""

    delays: list[float]

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        if self.delays:
            CLOCK.advance(self.delays.pop(0))
        return super()._generate(messages, *args, **kwargs)


@tool
def grep(pattern: str, path: str) -> str:
    """Search files for a pattern."""
    return f"{path}config.py:12: {pattern}(text):"


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"<contents of {path}>"


@tool
def write_file(path: str, content: str) -> str:
    """Write a file."""
    return f"wrote {len(content)} bytes to {path}"


@tool
def shell(command: str) -> str:
    """Run a shell command."""
    return f"ran {command}"


def main() -> None:
    audit = fp.MemoryAuditSink()
    evaluator = fp.Evaluator(fp.builtin_catalog(), clock=CLOCK, audit=audit)
    turns = [
        AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call_{i:02d}"}])
        for i, (_, name, args) in enumerate(SCRIPT, start=1)
    ]
    model = ScriptedModel(
        messages=iter([*turns, AIMessage(content="All done.")]),
        delays=[delay for delay, _, _ in SCRIPT],
    )
    agent = create_agent(
        model,
        [grep, read_file, write_file, shell],
        middleware=[ForgePolicyMiddleware(evaluator, tools=TOOLS)],
        checkpointer=InMemorySaver(),  # interrupts need one
    )
    config: Any = {"configurable": {"thread_id": THREAD}}  # the thread is the session
    print(f"langchain demo: {len(SCRIPT)} tool calls in thread {THREAD!r}\n")
    result = agent.invoke({"messages": [("user", "tidy up the config code")]}, config, version="v2")
    for pending in result.interrupts:  # one per call that needs the user's approval
        ask = pending.value
        print(f"    ? {ask['name']}({ask['args']['path']}) -> ASK THE USER")
        print(f"    | {ask['description'].splitlines()[0]}")
        print("    ! the user refuses")
        answer = {"type": "reject", "message": "secrets stay out of the context"}
        result = agent.invoke(Command(resume=answer), config, version="v2")
    messages = result.value["messages"]
    answers = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    for step, (_, name, args) in enumerate(SCRIPT, start=1):
        message = answers[f"call_{step:02d}"]
        subject = args.get("command") or args.get("path")
        verdict = "REFUSED" if message.status == "error" else "ALLOWED"
        print(f"{step:2d}. {name}({subject}) -> {verdict}")
        # a refusal is the engine's message; an allowed result may end with a nudge
        parts = str(message.content).split("\n\n")
        shown = parts[0] if verdict == "REFUSED" else "\n\n".join(parts[1:])
        if shown:
            print(f"    | {shown.splitlines()[0]}")
    overrides = [r["mechanism"] for r in audit.records() if r["kind"] == "override"]
    print(f"\nAudited overrides: {overrides}")
    print(f"The model's last word: {messages[-1].content}")


if __name__ == "__main__":
    main()
