"""The LangChain adapter, through LangChain itself: a real ``create_agent`` graph with a scripted
fake chat model from ``langchain_core``, real tools and LangGraph's in-memory checkpointer. No
network, no model."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command
from pydantic import Field

import forge_policy as fp
from forge_policy.integrations.langchain import ForgePolicyMiddleware
from forge_policy.render.claude_code import refusal_reason
from forge_policy.stores.memory import MemoryStore
from tests.helpers import Clock, behavior_yaml, write_catalog

REPO = Path(__file__).resolve().parents[2]
THREAD = "thread-1"


class ScriptedModel(GenericFakeChatModel):
    """``GenericFakeChatModel`` answers from a script; ``create_agent`` binds the tools to
    it, which the fake (a ``BaseChatModel``) does not implement: the script ignores them.
    ``seen`` keeps what each call was sent."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def calls(*commands: str, tool_name: str = "shell", arg: str = "command") -> Iterator[AIMessage]:
    """One model turn per command, each one tool call, then a closing answer."""
    for i, command in enumerate(commands, start=1):
        yield AIMessage(
            content="", tool_calls=[{"name": tool_name, "args": {arg: command}, "id": f"call_{i}"}]
        )
    yield AIMessage(content="done")


class Shell:
    """A shell tool that only records what it was asked to run."""

    def __init__(self) -> None:
        self.ran: list[str] = []

        @tool
        def shell(command: str) -> str:
            """Run a shell command."""
            self.ran.append(command)
            return f"ran {command}"

        @tool
        def run(cmd: str) -> str:
            """Run a command (another spelling of the argument)."""
            self.ran.append(cmd)
            return f"ran {cmd}"

        self.tools = [shell, run]


def agent(middleware: ForgePolicyMiddleware, script: Iterator[AIMessage], shell: Shell) -> Any:
    return create_agent(
        ScriptedModel(messages=script),
        shell.tools,
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )


CONFIG: Any = {"configurable": {"thread_id": THREAD}}


def tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def deploy_catalog(tmp_path: Path, *, override: str = "agent") -> fp.Catalog:
    """``no-deploy``: any Bash ``deploy …`` soft-blocks; the third violation hard-blocks."""
    text = behavior_yaml(
        "no-deploy",
        triggers=(
            "    - event: PreToolUse\n"
            "      matcher: Bash\n"
            "      conditions:\n"
            "        - field: tool_input.command\n"
            "          operator: starts_with\n"
            "          value: deploy\n"
        ),
        default_level="soft_block",
        escalation=(
            f"    override: {override}\n"
            "    escalation:\n      - after: 3\n        level: hard_block"
        ),
        name="No deploys",
    )
    return fp.load_catalog(write_catalog(tmp_path / "catalog", {"no-deploy": text}))


def builtin_evaluator(**kwargs: Any) -> fp.Evaluator:
    kwargs.setdefault("audit", fp.MemoryAuditSink())
    return fp.Evaluator(fp.builtin_catalog(), clock=Clock(), **kwargs)


def expected_reason(command: str) -> str:
    """What a fresh evaluator says about the call (the engine's own message)."""
    decision = builtin_evaluator().evaluate(
        fp.Event("PreToolUse", "other", tool_name="Bash", tool_input={"command": command})
    )
    assert decision.blocked
    return refusal_reason(decision)


def test_the_middleware_is_an_agent_middleware_with_both_tool_hooks() -> None:
    middleware = ForgePolicyMiddleware(builtin_evaluator())
    assert isinstance(middleware, AgentMiddleware)
    assert type(middleware).wrap_tool_call is not AgentMiddleware.wrap_tool_call
    assert type(middleware).awrap_tool_call is not AgentMiddleware.awrap_tool_call
    assert getattr(middleware, "tools", []) == []  # it registers no tools of its own


def test_a_destructive_call_is_refused_with_the_engines_message_and_never_runs() -> None:
    evaluator = builtin_evaluator()
    shell = Shell()
    graph = agent(
        ForgePolicyMiddleware(evaluator, tools={"shell": "Bash"}, floor="off"),
        calls("rm -rf /"),
        shell,
    )
    result = graph.invoke({"messages": [("user", "clean up")]}, CONFIG)
    (refused,) = tool_messages(result)
    assert refused.status == "error" and refused.tool_call_id == "call_1"
    assert refused.content == expected_reason("rm -rf /")
    assert "cannot be overridden" in refused.content
    assert shell.ran == []
    assert [(r["kind"], r["session_id"]) for r in evaluator.audit.records()] == [("block", THREAD)]
    assert result["messages"][-1].content == "done"


def test_async_agents_are_refused_the_same_way() -> None:
    evaluator = builtin_evaluator()
    shell = Shell()
    graph = agent(
        ForgePolicyMiddleware(evaluator, tools={"shell": "Bash"}, floor="off"),
        calls("rm -rf /", "ls"),
        shell,
    )
    result = asyncio.run(graph.ainvoke({"messages": [("user", "clean up")]}, CONFIG))
    refused, allowed = tool_messages(result)
    assert refused.status == "error" and refused.content == expected_reason("rm -rf /")
    assert allowed.status == "success" and allowed.content == "ran ls"
    assert shell.ran == ["ls"]


def test_without_the_mapping_an_unknown_argument_name_is_not_read_as_a_command() -> None:
    shell = Shell()
    graph = agent(
        ForgePolicyMiddleware(builtin_evaluator()),
        calls("rm -rf /", tool_name="run", arg="cmd"),
        shell,
    )
    graph.invoke({"messages": [("user", "clean up")]}, CONFIG)
    assert shell.ran == ["rm -rf /"]  # the catalog reads ``command``: map ``cmd`` onto it


def test_argument_names_are_mapped_too() -> None:
    shell = Shell()
    middleware = ForgePolicyMiddleware(
        builtin_evaluator(), tools={"run": ("Bash", {"cmd": "command"})}
    )
    graph = agent(middleware, calls("rm -rf /", tool_name="run", arg="cmd"), shell)
    (refused,) = tool_messages(graph.invoke({"messages": [("user", "go")]}, CONFIG))
    assert refused.status == "error" and refused.content == expected_reason("rm -rf /")
    assert shell.ran == []


@pytest.mark.parametrize(
    "tools",
    [{"shell": ""}, {"shell": 3}, {"shell": ("Bash", {"cmd": 1})}, {"shell": ("Bash",)}],
)
def test_a_bad_tool_mapping_is_a_clear_type_error(tools: Any) -> None:
    with pytest.raises(TypeError, match=r"tools\['shell'\]: expected a tool name"):
        ForgePolicyMiddleware(builtin_evaluator(), tools=tools)


def test_a_repeated_violation_escalates_to_a_hard_block(tmp_path: Path) -> None:
    evaluator = fp.Evaluator(deploy_catalog(tmp_path), audit=fp.MemoryAuditSink(), clock=Clock())
    shell = Shell()
    middleware = ForgePolicyMiddleware(evaluator, tools={"shell": "Bash"}, floor="off")
    graph = agent(middleware, calls("deploy api", "deploy web", "deploy db"), shell)
    first, second, third = tool_messages(graph.invoke({"messages": [("user", "ship")]}, CONFIG))
    assert all(m.status == "error" for m in (first, second, third))
    assert first.content.startswith("[no-deploy]") and "cannot be overridden" not in first.content
    assert "cannot be overridden" in third.content
    row = evaluator.status(THREAD).behaviors["no-deploy"]
    assert row.counter == 3 and row.level is fp.Level.HARD_BLOCK
    assert shell.ran == []


def test_a_retry_within_the_window_passes_as_an_override_and_is_audited(tmp_path: Path) -> None:
    clock = Clock()
    audit = fp.MemoryAuditSink()
    evaluator = fp.Evaluator(deploy_catalog(tmp_path), audit=audit, clock=clock)
    shell = Shell()

    @tool
    def wait() -> str:
        """Wait a little."""
        clock.advance(5)
        return "waited"

    script = iter(
        [
            AIMessage(content="", tool_calls=[_call("shell", {"command": "deploy api"}, "c1")]),
            AIMessage(content="", tool_calls=[_call("wait", {}, "c2")]),
            AIMessage(content="", tool_calls=[_call("shell", {"command": "deploy api"}, "c3")]),
            AIMessage(content="done"),
        ]
    )
    graph = create_agent(
        ScriptedModel(messages=script),
        [*shell.tools, wait],
        middleware=[ForgePolicyMiddleware(evaluator, tools={"shell": "Bash"}, floor="off")],
        checkpointer=InMemorySaver(),
    )
    blocked, waited, retried = tool_messages(graph.invoke({"messages": [("user", "ship")]}, CONFIG))
    assert blocked.status == "error" and waited.content == "waited"
    assert retried.status == "success" and retried.content == "ran deploy api"
    assert shell.ran == ["deploy api"]
    overrides = [r for r in audit.records() if r["kind"] == "override"]
    assert [(r["behavior_id"], r["mechanism"], r["session_id"]) for r in overrides] == [
        ("no-deploy", "retry", THREAD)
    ]
    assert evaluator.status(THREAD).behaviors["no-deploy"].counter == 1


def _call(name: str, args: dict[str, Any], call_id: str) -> Any:
    return {"name": name, "args": args, "id": call_id}


def user_mode(tmp_path: Path) -> tuple[fp.Evaluator, Shell, Any]:
    evaluator = fp.Evaluator(
        deploy_catalog(tmp_path, override="user"), audit=fp.MemoryAuditSink(), clock=Clock()
    )
    shell = Shell()
    middleware = ForgePolicyMiddleware(evaluator, tools={"shell": "Bash"}, floor="off")
    return evaluator, shell, agent(middleware, calls("deploy api"), shell)


def test_a_user_mode_soft_block_interrupts_and_an_approval_runs_the_call_once(
    tmp_path: Path,
) -> None:
    evaluator, shell, graph = user_mode(tmp_path)
    paused = graph.invoke({"messages": [("user", "ship")]}, CONFIG, version="v2")
    (pending,) = paused.interrupts
    assert pending.value["type"] == "tool_approval"
    assert pending.value["tool_call_id"] == "call_1"
    assert (pending.value["name"], pending.value["args"]) == ("shell", {"command": "deploy api"})
    assert pending.value["description"].startswith("[no-deploy]")
    assert shell.ran == []

    result = graph.invoke(Command(resume={"type": "approve"}), CONFIG)
    (ran,) = tool_messages(result)
    assert ran.status == "success" and ran.content == "ran deploy api"
    assert shell.ran == ["deploy api"]
    # the re-run of the node on resume reused the decision: one violation, not two
    assert evaluator.status(THREAD).behaviors["no-deploy"].counter == 1
    overrides = [r for r in evaluator.audit.records() if r["kind"] == "override"]
    assert [(r["mechanism"], r["session_id"]) for r in overrides] == [("user", THREAD)]


def test_a_user_mode_soft_block_the_user_rejects_is_refused(tmp_path: Path) -> None:
    evaluator, shell, graph = user_mode(tmp_path)
    graph.invoke({"messages": [("user", "ship")]}, CONFIG)
    result = graph.invoke(Command(resume={"type": "reject", "message": "not today"}), CONFIG)
    (refused,) = tool_messages(result)
    assert refused.status == "error" and refused.tool_call_id == "call_1"
    assert refused.content.startswith("[no-deploy]")
    assert refused.content.endswith("The user refused this call: not today")
    assert shell.ran == []
    assert [r for r in evaluator.audit.records() if r["kind"] == "override"] == []
    assert evaluator.status(THREAD).behaviors["no-deploy"].counter == 1


def test_async_interrupt_and_resume(tmp_path: Path) -> None:
    evaluator, shell, graph = user_mode(tmp_path)

    async def main() -> Any:
        paused = await graph.ainvoke({"messages": [("user", "ship")]}, CONFIG, version="v2")
        assert len(paused.interrupts) == 1 and shell.ran == []
        return await graph.ainvoke(Command(resume={"type": "approve"}), CONFIG)

    (ran,) = tool_messages(asyncio.run(main()))
    assert ran.content == "ran deploy api" and shell.ran == ["deploy api"]
    assert [r["mechanism"] for r in evaluator.audit.records() if r["kind"] == "override"] == [
        "user"
    ]


class BrokenStore(MemoryStore):
    """A store with a bug: every read and transaction raises something no store should."""

    def load(self, session_id: str) -> Any:
        raise RuntimeError("disk on fire")

    def transact(self, session_id: str, apply: Callable[..., Any]) -> Any:
        raise RuntimeError("disk on fire")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_an_evaluation_that_fails_refuses_the_call(mode: str) -> None:
    shell = Shell()
    middleware = ForgePolicyMiddleware(
        builtin_evaluator(store=BrokenStore()), tools={"shell": "Bash"}, floor="off"
    )
    graph = agent(middleware, calls("ls"), shell)
    state = {"messages": [("user", "look")]}
    result = (
        graph.invoke(state, CONFIG) if mode == "sync" else asyncio.run(graph.ainvoke(state, CONFIG))
    )
    (refused,) = tool_messages(result)
    assert refused.status == "error"
    assert refused.content.startswith("forge-policy could not evaluate this call, so it is refused")
    assert "RuntimeError: disk on fire" in refused.content
    assert shell.ran == []


def test_a_bad_session_id_callable_refuses_the_call() -> None:
    shell = Shell()
    middleware = ForgePolicyMiddleware(builtin_evaluator(), session_id=lambda request: "")
    (refused,) = tool_messages(
        agent(middleware, calls("ls"), shell).invoke({"messages": [("user", "x")]}, CONFIG)
    )
    assert "session_id: expected a non-empty string" in refused.content and shell.ran == []


def test_the_session_is_the_callers_when_given() -> None:
    evaluator = builtin_evaluator()
    seen: list[Any] = []

    def session_of(request: Any) -> str:
        seen.append(request)
        return "mine"

    middleware = ForgePolicyMiddleware(
        evaluator, session_id=session_of, tools={"shell": "Bash"}, floor="off"
    )
    agent(middleware, calls("rm -rf /"), Shell()).invoke({"messages": [("user", "x")]}, CONFIG)
    assert [r["session_id"] for r in evaluator.audit.records()] == ["mine"]
    # the prompt's ModelRequest, then the tool call's ToolCallRequest
    assert [type(r) for r in seen] == [ModelRequest, ToolCallRequest]


def test_without_a_thread_id_one_middleware_is_one_session(tmp_path: Path) -> None:
    evaluator = fp.Evaluator(deploy_catalog(tmp_path), audit=fp.MemoryAuditSink(), clock=Clock())
    middleware = ForgePolicyMiddleware(evaluator, tools={"shell": "Bash"}, floor="off")
    for command in ("deploy a", "deploy b"):
        graph = create_agent(
            ScriptedModel(messages=calls(command)), Shell().tools, middleware=[middleware]
        )
        graph.invoke({"messages": [("user", "ship")]})
    sessions = {r["session_id"] for r in evaluator.audit.records()}
    assert len(sessions) == 1 and next(iter(sessions)).startswith("langchain-")


class SlowStore(MemoryStore):
    """A store whose transaction waits, as a contended file lock does."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: list[int] = []

    def transact(self, session_id: str, apply: Callable[..., Any]) -> Any:
        self.threads.append(threading.get_ident())
        time.sleep(0.3)
        return super().transact(session_id, apply)


def test_the_async_evaluation_runs_off_the_event_loop() -> None:
    store = SlowStore()
    middleware = ForgePolicyMiddleware(
        builtin_evaluator(store=store), tools={"shell": "Bash"}, floor="off"
    )
    request = ToolCallRequest(
        tool_call=_call("shell", {"command": "rm -rf /"}, "c1"), tool=None, state={}, runtime=None
    )
    ticks: list[float] = []

    async def handler(request: ToolCallRequest) -> ToolMessage:
        raise AssertionError("a refused call must not run")

    async def main() -> Any:
        loop_thread = threading.get_ident()

        async def heartbeat() -> None:
            for _ in range(20):
                ticks.append(time.monotonic())
                await asyncio.sleep(0.01)

        beat = asyncio.create_task(heartbeat())
        answer = await middleware.awrap_tool_call(request, handler)
        await beat
        assert store.threads and loop_thread not in store.threads
        return answer

    answer = asyncio.run(main())
    assert isinstance(answer, ToolMessage) and answer.status == "error"
    assert len(ticks) == 20 and ticks[-1] - ticks[0] < 0.6


def test_importing_forge_policy_does_not_import_langchain() -> None:
    probe = (
        "import sys\n"
        "import forge_policy, forge_policy.harness, forge_policy.integrations\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('langchain', 'langchain_core', 'langgraph', 'pydantic')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_without_langchain_building_the_middleware_names_the_extra() -> None:
    probe = (
        "import sys\n"
        "sys.modules['langchain'] = None  # as if the extra were not installed\n"
        "import forge_policy as fp\n"
        "from forge_policy.integrations.langchain import ForgePolicyMiddleware\n"
        "try:\n"
        "    ForgePolicyMiddleware(fp.Evaluator(fp.builtin_catalog()))\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert "pip install 'forge-policy[langchain]'" in out.stdout


def test_the_example_refuses_escalates_overrides_and_asks() -> None:
    # run by the suite here, beside the adapter's tests (tests/test_examples.py runs the others)
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "langchain_middleware.py")],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    out = done.stdout
    assert " 3. shell(git push --force origin main) -> REFUSED" in out
    assert " 8. write_file(/repo/lib/last.py) -> REFUSED" in out
    assert " 9. write_file(/repo/lib/last.py) -> ALLOWED" in out
    assert "read_file(/repo/.env) -> ASK THE USER" in out
    assert "10. read_file(/repo/.env) -> REFUSED" in out
    assert "Audited overrides: ['retry']" in out
    assert "The model's last word: All done." in out


def prompt_catalog(tmp_path: Path, level: str) -> fp.Catalog:
    """``no-friday``: a prompt that mentions Friday deploys is met at ``level``."""
    text = behavior_yaml(
        "no-friday",
        triggers=(
            "    - event: UserPromptSubmit\n"
            "      conditions:\n"
            "        - field: prompt\n"
            "          operator: contains\n"
            "          value: friday\n"
        ),
        default_level=level,
        name="No Friday deploys",
    )
    return fp.load_catalog(write_catalog(tmp_path / "catalog", {"no-friday": text}))


def prompt_agent(evaluator: fp.Evaluator, **kwargs: Any) -> tuple[ScriptedModel, Any]:
    model = ScriptedModel(messages=calls("ls"), seen=[])
    middleware = ForgePolicyMiddleware(evaluator, tools={"shell": "Bash"}, floor="off", **kwargs)
    graph = create_agent(
        model, Shell().tools, system_prompt="You are careful.", middleware=[middleware]
    )
    return model, graph


def test_a_prompt_nudge_joins_the_system_message_of_the_turns_first_model_call(
    tmp_path: Path,
) -> None:
    evaluator = fp.Evaluator(prompt_catalog(tmp_path, "nudge"), clock=Clock())
    model, graph = prompt_agent(evaluator)
    graph.invoke({"messages": [("user", "deploy on friday")]}, CONFIG)
    first, second = model.seen
    assert isinstance(first[0], SystemMessage)
    assert first[0].content.startswith("You are careful.\n\n[no-friday] No Friday deploys (1): ")
    assert second[0].content == "You are careful."  # after the tool result: no prompt
    assert evaluator.status(THREAD).behaviors["no-friday"].counter == 1


def test_a_blocked_prompt_answers_in_the_models_place(tmp_path: Path) -> None:
    evaluator = fp.Evaluator(prompt_catalog(tmp_path, "soft_block"), clock=Clock())
    model, graph = prompt_agent(evaluator)
    result = asyncio.run(graph.ainvoke({"messages": [("user", "deploy on friday")]}, CONFIG))
    assert model.seen == []
    last = result["messages"][-1]
    assert isinstance(last, AIMessage) and not last.tool_calls
    assert last.content.startswith("[no-friday]")


def test_a_prompt_that_cannot_be_decided_goes_through_with_a_note() -> None:
    model, graph = prompt_agent(builtin_evaluator(), session_id=lambda request: "")
    result = graph.invoke({"messages": [("user", "look around")]}, CONFIG)
    note = model.seen[0][0].content
    assert note.startswith("You are careful.\n\nforge-policy could not evaluate this event and ")
    assert "EventError: session_id: expected a non-empty string" in note
    (refused,) = tool_messages(result)  # the tool call is refused all the same
    assert refused.status == "error"


def test_two_asks_in_one_turn_are_answered_each_by_its_interrupt_id(tmp_path: Path) -> None:
    evaluator = fp.Evaluator(
        deploy_catalog(tmp_path, override="user"), audit=fp.MemoryAuditSink(), clock=Clock()
    )
    shell = Shell()
    turn = AIMessage(
        content="",
        tool_calls=[
            _call("shell", {"command": "deploy api"}, "c1"),
            _call("shell", {"command": "deploy web"}, "c2"),
        ],
    )
    graph = agent(
        ForgePolicyMiddleware(evaluator, tools={"shell": "Bash"}, floor="off"),
        iter([turn, AIMessage(content="done")]),
        shell,
    )
    paused = graph.invoke({"messages": [("user", "ship")]}, CONFIG, version="v2")
    by_call = {i.value["tool_call_id"]: i.id for i in paused.interrupts}
    assert sorted(by_call) == ["c1", "c2"]
    answers = {by_call["c1"]: {"type": "approve"}, by_call["c2"]: {"type": "reject"}}
    approved, rejected = tool_messages(graph.invoke(Command(resume=answers), CONFIG))
    assert approved.content == "ran deploy api" and shell.ran == ["deploy api"]
    assert rejected.status == "error" and rejected.content.endswith("The user refused this call.")
    assert evaluator.status(THREAD).behaviors["no-deploy"].counter == 2  # once per call
    # (the engine keeps one pending block per behavior, c2's, so c1's approval is not matched
    # to an ask: an engine matter, the same for parallel Claude Code calls)


def test_a_bad_answer_is_refused_by_langgraph_and_can_be_answered_again(tmp_path: Path) -> None:
    from pydantic import ValidationError

    evaluator, shell, graph = user_mode(tmp_path)
    graph.invoke({"messages": [("user", "ship")]}, CONFIG)
    with pytest.raises(ValidationError):
        graph.invoke(Command(resume={"type": "maybe"}), CONFIG)
    assert shell.ran == []
    (ran,) = tool_messages(graph.invoke(Command(resume={"type": "approve"}), CONFIG))
    assert ran.content == "ran deploy api"
    assert evaluator.status(THREAD).behaviors["no-deploy"].counter == 1


def test_a_user_mode_block_outside_a_graph_run_is_refused(tmp_path: Path) -> None:
    evaluator = fp.Evaluator(deploy_catalog(tmp_path, override="user"), clock=Clock())
    middleware = ForgePolicyMiddleware(
        evaluator, session_id="s", tools={"shell": "Bash"}, floor="off"
    )
    request = ToolCallRequest(
        tool_call=_call("shell", {"command": "deploy api"}, "c1"), tool=None, state={}, runtime=None
    )

    def handler(request: ToolCallRequest) -> ToolMessage:
        raise AssertionError("a refused call must not run")

    answer = middleware.wrap_tool_call(request, handler)
    assert isinstance(answer, ToolMessage) and answer.status == "error"
    assert answer.content.startswith("[no-deploy]")
    assert "could not evaluate this call, so it is refused: RuntimeError" in answer.content
