"""The OpenAI Agents SDK adapter, through the SDK itself: real ``Agent``s, ``FunctionTool``s and
``Runner.run`` loops with a scripted ``Model`` (``agents_model``) that makes the tool calls and
keeps what it was shown; guardrails called with the SDK's own data types. No network."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import (
    Agent,
    RunConfig,
    Runner,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrail,
    ToolInputGuardrailData,
    ToolInputGuardrailTripwireTriggered,
    ToolOutputGuardrail,
    function_tool,
)
from agents.run_config import ToolExecutionConfig
from agents.tool_context import ToolContext

import forge_policy as fp
from forge_policy.errors import ConfigError
from forge_policy.integrations import openai_agents as adapter
from forge_policy.render.claude_code import refusal_reason
from forge_policy.stores.memory import MemoryStore
from tests.helpers import Clock, behavior_yaml, write_catalog
from tests.integrations.agents_model import QUIET, TurnModel, agent, read_tool, shell_tool

REPO = Path(__file__).resolve().parents[2]
SESSION = "oa-session-1"
SHELL = {"run_shell": ("Bash", {"cmd": "command"})}


def deploy_text(override: str = "agent") -> str:
    """``no-deploy``: any Bash ``deploy …`` soft-blocks; the third violation hard-blocks."""
    return behavior_yaml(
        "no-deploy",
        triggers=(
            "    - event: PreToolUse\n      matcher: Bash\n      conditions:\n"
            "        - field: tool_input.command\n          operator: starts_with\n"
            "          value: deploy\n"
        ),
        default_level="soft_block",
        escalation=(
            f"    override: {override}\n"
            "    escalation:\n      - after: 3\n        level: hard_block"
        ),
        name="No deploys",
    )


def deploy_catalog(tmp_path: Path, *, override: str = "agent") -> fp.Catalog:
    return fp.load_catalog(
        write_catalog(tmp_path / "catalog", {"no-deploy": deploy_text(override)})
    )


def evaluator(catalog: fp.Catalog | None = None, **kw: Any) -> fp.Evaluator:
    kw.setdefault("audit", fp.MemoryAuditSink())
    kw.setdefault("clock", Clock())
    return fp.Evaluator(catalog or fp.builtin_catalog(), **kw)


def expected_reason(command: str) -> str:
    """What a fresh evaluator says about the call (the engine's own message)."""
    decision = evaluator().evaluate(
        fp.Event("PreToolUse", "other", tool_name="Bash", tool_input={"command": command})
    )
    assert decision.blocked
    return refusal_reason(decision)


def shell(ev: fp.Evaluator, ran: list[str], **kw: Any) -> tuple[adapter.Guard, Any]:
    kw.setdefault("session_id", SESSION)
    kw.setdefault("tools", SHELL)
    kw.setdefault("floor", "off")  # the engine's words are under test; the floor: test_sdk_floor
    guard = adapter.guard(ev, **kw)
    return guard, guard.protect(shell_tool(ran))


def run(coder: Agent[Any], start: Any, config: RunConfig = QUIET, **kw: Any) -> Any:
    return asyncio.run(Runner.run(coder, start, run_config=config, **kw))


def kinds(ev: fp.Evaluator) -> list[tuple[str, str | None]]:
    return [(r["kind"], r.get("mechanism")) for r in ev.audit.records()]


# --- the SDK's own types in and out ---------------------------------------------------------


def tool_data(command: str, call_id: str = "call_1") -> ToolInputGuardrailData:
    context = ToolContext(
        context=None,
        tool_name="run_shell",
        tool_call_id=call_id,
        tool_arguments=f'{{"cmd": "{command}"}}',
    )
    return ToolInputGuardrailData(context=context, agent=Agent(name="coder"))


@pytest.mark.parametrize(
    ("command", "behavior"),
    [("ls -la", "allow"), ("deploy api", "reject_content"), ("rm -rf /", "raise_exception")],
)
def test_the_input_guardrail_answers_with_the_sdks_own_output(
    tmp_path: Path, command: str, behavior: str
) -> None:
    dangerous = REPO / "forge_policy/catalog/builtin/dangerous-commands/behavior.yaml"
    behaviors = {"no-deploy": deploy_text(), "dangerous-commands": dangerous.read_text()}
    catalog = fp.load_catalog(write_catalog(tmp_path / "c", behaviors))
    guardrail = adapter.tool_input_guardrail(evaluator(catalog), session_id=SESSION, tools=SHELL)
    assert isinstance(guardrail, ToolInputGuardrail)
    out = asyncio.run(guardrail.run(tool_data(command)))
    assert isinstance(out, ToolGuardrailFunctionOutput)
    assert out.behavior["type"] == behavior
    assert out.output_info["session_id"] == SESSION
    if behavior == "reject_content":
        assert out.behavior["message"].startswith("[no-deploy]")  # type: ignore[typeddict-item]
    if behavior == "raise_exception":
        assert out.output_info["blocking_behavior"] == "dangerous-commands"


def test_the_output_guardrail_is_the_sdks_type() -> None:
    guardrail = adapter.tool_output_guardrail(evaluator(), session_id=SESSION)
    assert isinstance(guardrail, ToolOutputGuardrail)


def test_a_malformed_tools_entry_is_refused_with_its_name() -> None:
    with pytest.raises(ConfigError, match=r"tools\['run_shell'\]: expected a catalog tool name"):
        adapter.guard(evaluator(), tools={"run_shell": ("Bash", {"cmd": 3})})  # type: ignore[dict-item]


# --- full agent loops -------------------------------------------------------------------------


def test_a_destructive_call_stops_the_run_with_the_engines_message() -> None:
    ran: list[str] = []
    ev = evaluator()
    _, tool = shell(ev, ran)
    model = TurnModel([[("run_shell", {"cmd": "ls"})], [("run_shell", {"cmd": "rm -rf /"})]])
    with pytest.raises(ToolInputGuardrailTripwireTriggered) as raised:
        run(agent(model, tool), "clean up")
    assert ran == ["ls"]
    info = raised.value.output.output_info
    assert info["blocking_behavior"] == "dangerous-commands"
    assert "\n\n".join(info["messages"]) in expected_reason("rm -rf /")
    assert kinds(ev) == [("block", None)]


def test_a_soft_block_is_refused_to_the_model_with_the_engines_message(tmp_path: Path) -> None:
    ran: list[str] = []
    ev = evaluator(deploy_catalog(tmp_path))
    _, tool = shell(ev, ran)
    model = TurnModel([[("run_shell", {"cmd": "deploy api"})], "gave up"])
    result = run(agent(model, tool), "ship it")
    assert result.final_output == "gave up" and ran == []
    shown = model.outputs["call_1"]
    assert shown.startswith("[no-deploy]") and "override" in shown
    rejected = [r.output.behavior["type"] for r in result.tool_input_guardrail_results]
    assert rejected == ["reject_content"]


def test_without_the_mapping_a_shell_tool_is_not_bash(tmp_path: Path) -> None:
    """Why ``tools`` exists: ``run_shell(cmd=…)`` is not the catalog's ``Bash(command=…)``."""
    ran: list[str] = []
    _, tool = shell(evaluator(), ran, tools={})
    run(agent(TurnModel([[("run_shell", {"cmd": "git push --force origin main"})]]), tool), "go")
    assert ran == ["git push --force origin main"]


def test_a_repeated_violation_escalates_to_a_hard_block(tmp_path: Path) -> None:
    ran: list[str] = []
    ev = evaluator(deploy_catalog(tmp_path))
    _, tool = shell(ev, ran)
    turns = [[("run_shell", {"cmd": f"deploy {x}"})] for x in ("api", "web", "db")]
    model = TurnModel(turns)
    with pytest.raises(ToolInputGuardrailTripwireTriggered) as raised:
        run(agent(model, tool), "ship it")
    assert ran == []
    assert all(model.outputs[c].startswith("[no-deploy]") for c in ("call_1", "call_2"))
    info = raised.value.output.output_info
    assert info["blocking_behavior"] == "no-deploy" and info["outcome"] == "hard_block"
    row = ev.status(SESSION).behaviors["no-deploy"]
    assert row.counter == 3 and row.level is fp.Level.HARD_BLOCK


def test_a_retry_within_the_window_passes_as_an_override_and_is_audited(tmp_path: Path) -> None:
    ran: list[str] = []
    clock = Clock()
    ev = evaluator(deploy_catalog(tmp_path), clock=clock)
    _, tool = shell(ev, ran)
    model = TurnModel([[("run_shell", {"cmd": "deploy api"})]])
    run(agent(model, tool), "ship it")
    assert ran == []
    clock.advance(5)
    model.play([("run_shell", {"cmd": "deploy api"})], "shipped")
    run(agent(model, tool), "ship it anyway")
    assert ran == ["deploy api"]
    assert "[no-deploy] Let through by an override (retry)" in model.outputs["call_2"]
    overrides = [r for r in ev.audit.records() if r["kind"] == "override"]
    assert [(r["behavior_id"], r["mechanism"], r["session_id"]) for r in overrides] == [
        ("no-deploy", "retry", SESSION)
    ]
    assert ev.status(SESSION).behaviors["no-deploy"].counter == 1


def test_each_call_is_decided_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: list[tuple[str, str]] = []
    ev = evaluator(deploy_catalog(tmp_path, override="user"))
    decide = ev.evaluate

    def counting(event: fp.Event) -> fp.Decision:
        seen.append((event.event_name, event.tool_use_id))
        return decide(event)

    monkeypatch.setattr(ev, "evaluate", counting)
    _, tool = shell(ev, [])
    model = TurnModel([[("run_shell", {"cmd": "ls"}), ("run_shell", {"cmd": "pwd"})]])
    run(agent(model, tool), "look")
    assert sorted(seen) == [
        ("PostToolUse", "call_1"),
        ("PostToolUse", "call_2"),
        ("PreToolUse", "call_1"),
        ("PreToolUse", "call_2"),
    ]


@pytest.mark.parametrize("theirs", [False, True, "sync", "async"])
def test_protect_keeps_the_tools_own_approval_and_is_idempotent(theirs: Any) -> None:
    async def asks(ctx: Any, params: dict[str, Any], call_id: str) -> bool:
        return params["cmd"] == "ls"

    tool = shell_tool([])
    tool.needs_approval = {"sync": lambda c, p, i: p["cmd"] == "ls", "async": asks}.get(
        theirs, theirs
    )
    guard = adapter.guard(evaluator(), session_id=SESSION, tools=SHELL)
    assert guard.protect(guard.protect(tool)) is tool
    assert tool.tool_input_guardrails == [guard.input_guardrail]
    assert tool.tool_output_guardrails == [guard.output_guardrail]
    result = run(agent(TurnModel([[("run_shell", {"cmd": "ls"})]]), tool), "look")
    assert len(result.interruptions) == (0 if theirs is False else 1)
    assert result.interruptions == [] or guard.reason(result.interruptions[0]) is None


# --- the user's approval ----------------------------------------------------------------------


def interrupted(tmp_path: Path, config: RunConfig = QUIET) -> tuple[Any, ...]:
    ran: list[str] = []
    ev = evaluator(deploy_catalog(tmp_path, override="user"))
    guard, tool = shell(ev, ran)
    model = TurnModel([[("run_shell", {"cmd": "deploy api"})], "shipped"])
    coder = agent(model, tool)
    result = run(coder, "ship it", config)
    assert ran == [] and len(result.interruptions) == 1
    return ev, guard, model, coder, result, ran


@pytest.mark.parametrize(
    "config",
    [
        QUIET,
        RunConfig(
            tracing_disabled=True,
            tool_execution=ToolExecutionConfig(pre_approval_tool_input_guardrails=True),
        ),
    ],
    ids=["default", "pre-approval-guardrails"],
)
def test_a_user_mode_block_asks_and_an_approval_runs_the_call_on_the_record(
    tmp_path: Path, config: RunConfig
) -> None:
    ev, guard, model, coder, result, ran = interrupted(tmp_path, config)
    item = result.interruptions[0]
    assert (item.tool_name, item.call_id) == ("run_shell", "call_1")
    assert (guard.reason(item) or "").startswith("[no-deploy]")
    state = result.to_state()
    state.approve(item)
    resumed = run(coder, state, config)
    assert ran == ["deploy api"] and resumed.final_output == "shipped"
    assert model.outputs["call_1"] == "ran: deploy api"
    assert kinds(ev) == [("block", None), ("override", "user")]
    assert ev.status(SESSION).behaviors["no-deploy"].counter == 1


def test_a_rejected_call_never_runs_and_its_retry_is_asked_again(tmp_path: Path) -> None:
    ev, _, model, coder, result, ran = interrupted(tmp_path)
    state = result.to_state()
    state.reject(result.interruptions[0], rejection_message="not today")
    model.turns.insert(0, [("run_shell", {"cmd": "deploy api"})])
    again = run(coder, state)
    assert ran == [] and model.outputs["call_1"] == "not today"
    assert [i.call_id for i in again.interruptions] == ["call_2"]  # asked again, not passed
    assert [k for k, _ in kinds(ev)] == ["block", "block"]


def test_an_approval_the_guard_did_not_ask_for_passes_no_block() -> None:
    """The SDK asks by itself about a call whose arguments its validation changes (here a
    default filled in) when ``needs_approval`` is a function; the user's yes to that question
    is not a yes to the engine: the guardrail still decides the call."""
    ran: list[str] = []

    @function_tool
    def run_shell(cmd: str, timeout: int = 60) -> str:
        """Run a shell command."""
        ran.append(cmd)
        return "ran"

    ev = evaluator()
    guard = adapter.guard(ev, session_id=SESSION, tools=SHELL)
    coder = agent(
        TurnModel([[("run_shell", {"cmd": "git push --force"})]]), guard.protect(run_shell)
    )
    result = run(coder, "push")
    [item] = result.interruptions
    assert guard.reason(item) is None  # the SDK asked, not the engine
    state = result.to_state()
    state.approve(item)
    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        run(coder, state)
    assert ran == [] and kinds(ev) == [("block", None)]


def test_a_guardrail_alone_refuses_a_user_mode_block(tmp_path: Path) -> None:
    ran: list[str] = []
    tool = shell_tool(ran)
    ev = evaluator(deploy_catalog(tmp_path, override="user"))
    tool.tool_input_guardrails = [adapter.tool_input_guardrail(ev, session_id=SESSION, tools=SHELL)]
    model = TurnModel([[("run_shell", {"cmd": "deploy api"})]])
    run(agent(model, tool), "ship it")
    assert ran == [] and model.outputs["call_1"].startswith("[no-deploy]")


# --- sessions, output accounting and advice ----------------------------------------------------


@dataclass
class AppContext:
    session_id: str


@pytest.mark.parametrize("context", [AppContext("ctx-7"), {"session_id": "ctx-7"}])
def test_the_session_id_comes_from_the_run_context(context: Any) -> None:
    ev = evaluator()
    _, tool = shell(ev, [], session_id=None)
    model = TurnModel([[("run_shell", {"cmd": "git push --force origin main"})]])
    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        run(agent(model, tool), "go", context=context)
    assert [r["session_id"] for r in ev.audit.records()] == ["ctx-7"]


def test_without_a_session_id_one_guard_is_one_session(tmp_path: Path) -> None:
    ev = evaluator(deploy_catalog(tmp_path))
    _, tool = shell(ev, [], session_id=None)
    model = TurnModel(
        [[("run_shell", {"cmd": "deploy a"})], "x", [("run_shell", {"cmd": "deploy b"})]]
    )
    run(agent(model, tool), "one")
    run(agent(model, tool), "two")
    sessions = {r["session_id"] for r in ev.audit.records()}
    assert len(sessions) == 1 and sessions.pop().startswith("openai-agents-")


def test_reads_that_ran_add_to_the_token_budget(tmp_path: Path) -> None:
    big = tmp_path / "notes.txt"
    big.write_text("word " * 20_000, encoding="utf-8")
    ev = evaluator()
    guard = adapter.guard(
        ev, session_id=SESSION, tools={"read_file": ("Read", {"path": "file_path"})}
    )
    model = TurnModel([[("read_file", {"path": str(big)})]])
    run(agent(model, guard.protect(read_tool())), "read it")
    assert model.outputs["call_1"].startswith("word word")
    assert ev.status(SESSION).totals["read_tokens"] > 10_000


def test_nudges_are_appended_to_the_output_the_model_reads(tmp_path: Path) -> None:
    text = behavior_yaml(
        "mind-the-shell",
        triggers="    - event: PreToolUse\n      matcher: Bash\n",
        default_level="nudge",
        name="Mind the shell",
    )
    ev = evaluator(fp.load_catalog(write_catalog(tmp_path / "c", {"mind-the-shell": text})))
    _, tool = shell(ev, [])
    model = TurnModel([[("run_shell", {"cmd": "ls"})]])
    run(agent(model, tool), "look")
    shown = model.outputs["call_1"]
    assert shown.startswith("ran: ls\n\n[mind-the-shell] Mind the shell (1): do the right thing")


# --- failing closed ---------------------------------------------------------------------------


class BrokenStore(MemoryStore):
    """A store with a bug: every transaction raises something no store should."""

    def transact(self, session_id: str, apply: Callable[..., Any]) -> Any:
        raise RuntimeError("disk on fire")


@pytest.mark.parametrize("override", ["agent", "user"])
def test_a_failing_store_refuses_the_call(tmp_path: Path, override: str) -> None:
    ran: list[str] = []
    ev = evaluator(deploy_catalog(tmp_path, override=override), store=BrokenStore())
    _, tool = shell(ev, ran)
    model = TurnModel([[("run_shell", {"cmd": "deploy api"})]])
    result = run(agent(model, tool), "ship it")
    assert ran == [] and not result.interruptions  # refused, not asked
    assert "could not evaluate this call, so it is refused" in model.outputs["call_1"]
    assert "RuntimeError: disk on fire" in model.outputs["call_1"]


class FailsAfter(MemoryStore):
    """A store that breaks after ``n`` transactions (here: after the call was allowed)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.left = n

    def transact(self, session_id: str, apply: Callable[..., Any]) -> Any:
        self.left -= 1
        if self.left < 0:
            raise RuntimeError("disk on fire")
        return super().transact(session_id, apply)


def test_output_the_engine_could_not_account_for_is_withheld() -> None:
    ran: list[str] = []
    _, tool = shell(evaluator(store=FailsAfter(1)), ran)
    model = TurnModel([[("run_shell", {"cmd": "cat README.md"})]])
    run(agent(model, tool), "look")
    assert ran == ["cat README.md"]
    shown = model.outputs["call_1"]
    assert shown.startswith("The tool call ran, but its output is withheld.\n")
    assert "ran: cat" not in shown and "RuntimeError: disk on fire" in shown


def test_a_bad_session_id_callable_refuses_the_call() -> None:
    ran: list[str] = []
    _, tool = shell(evaluator(), ran, session_id=lambda ctx: "")
    model = TurnModel([[("run_shell", {"cmd": "ls"})]])
    run(agent(model, tool), "look")
    assert ran == []
    assert "session_id: expected a non-empty string" in model.outputs["call_1"]


class SlowStore(MemoryStore):
    """A store whose transaction waits, as a contended file lock does."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: list[int] = []

    def transact(self, session_id: str, apply: Callable[..., Any]) -> Any:
        self.threads.append(threading.get_ident())
        time.sleep(0.3)
        return super().transact(session_id, apply)


def test_the_evaluation_runs_off_the_event_loop() -> None:
    store = SlowStore()
    guardrail = adapter.tool_input_guardrail(
        evaluator(store=store), session_id=SESSION, tools=SHELL
    )
    ticks: list[float] = []

    async def main() -> ToolGuardrailFunctionOutput:
        async def heartbeat() -> None:
            for _ in range(20):
                ticks.append(time.monotonic())
                await asyncio.sleep(0.01)

        beat = asyncio.create_task(heartbeat())
        out = await guardrail.run(tool_data("rm -rf /"))
        await beat
        assert store.threads and threading.get_ident() not in store.threads
        return out

    assert asyncio.run(main()).behavior["type"] == "raise_exception"
    assert len(ticks) == 20 and ticks[-1] - ticks[0] < 0.6


def test_importing_forge_policy_does_not_import_the_sdk() -> None:
    probe = (
        "import sys\n"
        "import forge_policy, forge_policy.harness, forge_policy.integrations\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('agents', 'openai')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
