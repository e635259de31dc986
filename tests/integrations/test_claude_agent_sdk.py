"""The claude-agent-sdk adapter, through the SDK itself: a ``ClaudeSDKClient`` built from
``ClaudeAgentOptions(hooks=…, can_use_tool=…)`` connects to a stand-in CLI (``sdk_wire``), which
sends the control requests the real CLI sends; the answers are read off the wire, after the
SDK's own conversion. No model, no network."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk")

import anyio
from claude_agent_sdk import (
    ClaudeAgentOptions,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
)

import forge_policy as fp
from forge_policy.catalog.catalog import Catalog
from forge_policy.integrations import claude_agent_sdk as adapter
from forge_policy.render.claude_code import refusal_reason
from forge_policy.stores.memory import MemoryStore
from tests.helpers import Clock, behavior_yaml, write_catalog
from tests.integrations.sdk_wire import FakeCLI, client

REPO = Path(__file__).resolve().parents[2]
SESSION = "sdk-session-1"


def pre_tool(command: str, tool_use_id: str = "toolu_1", session: str = SESSION) -> dict[str, Any]:
    """A PreToolUse hook input as the CLI sends it to an SDK callback."""
    return {
        "session_id": session,
        "transcript_path": f"/home/u/.claude/projects/p/{session}.jsonl",
        "cwd": "/repo",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": tool_use_id,
    }


def post_tool(command: str, tool_use_id: str) -> dict[str, Any]:
    return {
        **pre_tool(command, tool_use_id),
        "hook_event_name": "PostToolUse",
        "tool_response": {"stdout": "", "stderr": "", "interrupted": False},
    }


def run(
    evaluator: fp.Evaluator,
    script: Callable[[FakeCLI], Awaitable[Any]],
    **options: Any,
) -> Any:
    """Connect an SDK client with the adapter's hooks (and ``options``), run ``script``."""
    # the engine's answers are under test; the floor's rewrite: test_sdk_floor
    options.setdefault("hooks", adapter.hooks(evaluator, floor="off"))

    async def main() -> Any:
        sdk, cli = client(ClaudeAgentOptions(**options))
        await sdk.connect()
        try:
            return await script(cli)
        finally:
            await sdk.disconnect()

    return anyio.run(main)


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


def builtin_evaluator() -> fp.Evaluator:
    return fp.Evaluator(fp.builtin_catalog(), audit=fp.MemoryAuditSink(), clock=Clock())


def expected_reason(command: str) -> str:
    """What a fresh evaluator says about the call (the engine's own message)."""
    decision = builtin_evaluator().evaluate(
        fp.Event("PreToolUse", "other", tool_name="Bash", tool_input={"command": command})
    )
    assert decision.blocked
    return refusal_reason(decision)


def test_hooks_register_the_seven_events_with_the_cli() -> None:
    async def script(cli: FakeCLI) -> dict[str, Any]:
        return cli.hooks

    registered = run(builtin_evaluator(), script)
    assert sorted(registered) == sorted(adapter.HOOK_EVENTS)
    assert all(len(m[0]["hookCallbackIds"]) == 1 for m in registered.values())


def test_destructive_bash_is_refused_by_the_pre_tool_use_hook_with_the_engines_message() -> None:
    async def script(cli: FakeCLI) -> dict[str, Any]:
        return await cli.hook(pre_tool("rm -rf /"))

    answer = run(builtin_evaluator(), script)
    specific = answer["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert specific["permissionDecisionReason"] == expected_reason("rm -rf /")
    assert "cannot be overridden" in specific["permissionDecisionReason"]
    assert answer["systemMessage"].startswith("[dangerous-commands] Refused")


def test_destructive_bash_is_refused_by_can_use_tool_and_interrupts_the_turn() -> None:
    evaluator = builtin_evaluator()

    async def script(cli: FakeCLI) -> dict[str, Any]:
        return await cli.can_use_tool("Bash", {"command": "rm -rf /"}, "toolu_9")

    answer = run(
        evaluator,
        script,
        hooks=adapter.hooks(evaluator, tools=False),
        can_use_tool=adapter.can_use_tool(evaluator, session_id=SESSION),
    )
    assert answer == {
        "behavior": "deny",
        "message": expected_reason("rm -rf /"),
        "interrupt": True,
    }
    assert [r["kind"] for r in evaluator.audit.records()] == ["block"]


def test_an_allowed_call_passes_both_entry_points() -> None:
    evaluator = builtin_evaluator()

    async def script(cli: FakeCLI) -> tuple[dict[str, Any], dict[str, Any]]:
        hook = await cli.hook(pre_tool("ls -la"))
        permission = await cli.can_use_tool("Bash", {"command": "ls -la"}, "toolu_2")
        return hook, permission

    hook, permission = run(
        evaluator,
        script,
        can_use_tool=adapter.can_use_tool(evaluator, session_id=SESSION, floor="off"),
    )
    assert hook == {}
    assert permission == {"behavior": "allow", "updatedInput": {"command": "ls -la"}}


def test_a_repeated_violation_escalates_to_a_hard_block(tmp_path: Path) -> None:
    evaluator = fp.Evaluator(deploy_catalog(tmp_path), audit=fp.MemoryAuditSink(), clock=Clock())

    async def script(cli: FakeCLI) -> list[dict[str, Any]]:
        commands = ["deploy api", "deploy web", "deploy db"]
        return [await cli.hook(pre_tool(c, f"toolu_{i}")) for i, c in enumerate(commands)]

    first, second, third = run(evaluator, script)
    for answer in (first, second, third):
        assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "override_allowed" not in first and "override_allowed" not in second
    assert third["override_allowed"] is False
    assert "cannot be overridden" in third["hookSpecificOutput"]["permissionDecisionReason"]
    row = evaluator.status(SESSION).behaviors["no-deploy"]
    assert row.counter == 3 and row.level is fp.Level.HARD_BLOCK


def test_a_retry_within_the_window_passes_as_an_override_and_is_audited(tmp_path: Path) -> None:
    clock = Clock()
    audit = fp.MemoryAuditSink()
    evaluator = fp.Evaluator(deploy_catalog(tmp_path), audit=audit, clock=clock)

    async def script(cli: FakeCLI) -> tuple[dict[str, Any], dict[str, Any]]:
        blocked = await cli.hook(pre_tool("deploy api", "toolu_1"))
        clock.advance(5)
        retried = await cli.hook(pre_tool("deploy api", "toolu_2"))
        return blocked, retried

    blocked, retried = run(evaluator, script)
    assert blocked["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "permissionDecision" not in retried.get("hookSpecificOutput", {})
    assert "[no-deploy] Let through by an override (retry)" in retried["systemMessage"]
    overrides = [r for r in audit.records() if r["kind"] == "override"]
    assert [(r["behavior_id"], r["mechanism"]) for r in overrides] == [("no-deploy", "retry")]
    assert overrides[0]["session_id"] == SESSION


def test_a_user_mode_soft_block_asks_through_the_callers_prompt(tmp_path: Path) -> None:
    audit = fp.MemoryAuditSink()
    evaluator = fp.Evaluator(deploy_catalog(tmp_path, override="user"), audit=audit, clock=Clock())
    asked: list[tuple[str, dict[str, Any], str | None, str]] = []

    async def ask(
        tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext, reason: str
    ) -> PermissionResultAllow | PermissionResultDeny:
        asked.append((tool_name, tool_input, context.tool_use_id, reason))
        return PermissionResultAllow()

    async def script(cli: FakeCLI) -> tuple[dict[str, Any], dict[str, Any]]:
        permission = await cli.can_use_tool("Bash", {"command": "deploy api"}, "toolu_1")
        ran = await cli.hook(post_tool("deploy api", "toolu_1"))
        return permission, ran

    permission, ran = run(
        evaluator,
        script,
        hooks=adapter.hooks(evaluator, tools=False),
        can_use_tool=adapter.can_use_tool(evaluator, session_id=SESSION, ask=ask, floor="off"),
    )
    assert permission == {"behavior": "allow", "updatedInput": {"command": "deploy api"}}
    assert len(asked) == 1 and asked[0][:3] == ("Bash", {"command": "deploy api"}, "toolu_1")
    assert asked[0][3].startswith("[no-deploy]")
    # the PostToolUse of the call the user allowed records the approval
    overrides = [r for r in audit.records() if r["kind"] == "override"]
    assert [(r["session_id"], r["mechanism"]) for r in overrides] == [(SESSION, "user")]
    assert ran == {} or "override" in ran.get("systemMessage", "")


def test_an_ask_callback_that_raises_denies(tmp_path: Path) -> None:
    evaluator = fp.Evaluator(deploy_catalog(tmp_path, override="user"), clock=Clock())

    async def ask(*args: Any) -> PermissionResultAllow:
        raise OSError("no terminal")

    decide = adapter.can_use_tool(evaluator, session_id=SESSION, ask=ask)
    result = anyio.run(decide, "Bash", {"command": "deploy api"}, ToolPermissionContext())
    assert isinstance(result, PermissionResultDeny)
    assert result.message.startswith("[no-deploy]") and "OSError: no terminal" in result.message


def test_the_pre_tool_use_hook_asks_for_a_user_mode_soft_block(tmp_path: Path) -> None:
    evaluator = fp.Evaluator(deploy_catalog(tmp_path, override="user"), clock=Clock())

    async def script(cli: FakeCLI) -> dict[str, Any]:
        return await cli.hook(pre_tool("deploy api"))

    specific = run(evaluator, script)["hookSpecificOutput"]
    assert specific["permissionDecision"] == "ask"
    assert specific["permissionDecisionReason"].startswith("[no-deploy]")


def test_without_an_ask_callback_a_user_mode_soft_block_is_denied_with_the_reason(
    tmp_path: Path,
) -> None:
    evaluator = fp.Evaluator(deploy_catalog(tmp_path, override="user"), clock=Clock())
    decide = adapter.can_use_tool(evaluator, session_id=SESSION)
    result = anyio.run(decide, "Bash", {"command": "deploy api"}, ToolPermissionContext())
    assert isinstance(result, PermissionResultDeny)
    assert result.message.startswith("[no-deploy]") and result.interrupt is False


def test_nudges_reach_the_model_and_the_user(tmp_path: Path) -> None:
    text = behavior_yaml(
        "mind-the-prompt",
        triggers="    - event: UserPromptSubmit\n",
        default_level="nudge",
        name="Mind the prompt",
    )
    catalog = fp.load_catalog(write_catalog(tmp_path / "c", {"mind-the-prompt": text}))
    evaluator = fp.Evaluator(catalog, clock=Clock())
    prompt = {
        "session_id": SESSION,
        "transcript_path": "/t.jsonl",
        "cwd": "/repo",
        "hook_event_name": "UserPromptSubmit",
        "prompt": "ship it",
    }

    async def script(cli: FakeCLI) -> dict[str, Any]:
        return await cli.hook(prompt)

    answer = run(evaluator, script)
    assert answer["systemMessage"].startswith(
        "[mind-the-prompt] Mind the prompt (1): do the right thing"
    )
    assert answer["hookSpecificOutput"] == {
        "hookEventName": "UserPromptSubmit",
        "additionalContext": answer["systemMessage"],
    }
    assert "decision" not in answer


def test_session_start_and_stop_with_nothing_to_say_answer_empty() -> None:
    base = {"session_id": SESSION, "transcript_path": "/t.jsonl", "cwd": "/repo"}

    async def script(cli: FakeCLI) -> list[dict[str, Any]]:
        start = await cli.hook({**base, "hook_event_name": "SessionStart", "source": "startup"})
        stop = await cli.hook({**base, "hook_event_name": "Stop", "stop_hook_active": False})
        return [start, stop]

    assert run(fp.Evaluator(Catalog([]), clock=Clock()), script) == [{}, {}]


def test_the_session_id_comes_from_the_caller_when_given() -> None:
    evaluator = builtin_evaluator()

    async def script(cli: FakeCLI) -> dict[str, Any]:
        return await cli.hook(pre_tool("rm -rf /", session="sdk-given"))

    run(evaluator, script, hooks=adapter.hooks(evaluator, session_id=lambda data: "mine"))
    assert [r["session_id"] for r in evaluator.audit.records()] == ["mine"]


class BrokenStore(MemoryStore):
    """A store with a bug: every transaction raises something no store should."""

    def transact(self, session_id: str, apply: Callable[..., Any]) -> Any:
        raise RuntimeError("disk on fire")


def test_a_failing_store_refuses_the_tool_call() -> None:
    evaluator = fp.Evaluator(fp.builtin_catalog(), store=BrokenStore(), clock=Clock())

    async def script(cli: FakeCLI) -> dict[str, Any]:
        return await cli.hook(pre_tool("ls"))

    tool = run(evaluator, script)
    assert tool["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "could not evaluate this call, so it is refused" in tool["systemMessage"]
    assert "RuntimeError: disk on fire" in tool["systemMessage"]


def test_a_failing_store_refuses_in_can_use_tool() -> None:
    evaluator = fp.Evaluator(fp.builtin_catalog(), store=BrokenStore(), clock=Clock())
    decide = adapter.can_use_tool(evaluator, session_id=SESSION)
    result = anyio.run(decide, "Bash", {"command": "ls"}, ToolPermissionContext(tool_use_id="t"))
    assert isinstance(result, PermissionResultDeny)
    assert "could not evaluate this call, so it is refused" in result.message


def test_a_bad_session_id_callable_refuses_a_tool_call_and_lets_a_prompt_through() -> None:
    evaluator = builtin_evaluator()

    async def script(cli: FakeCLI) -> tuple[dict[str, Any], dict[str, Any]]:
        tool = await cli.hook(pre_tool("ls"))
        prompt = await cli.hook(
            {**pre_tool("x"), "hook_event_name": "UserPromptSubmit", "prompt": "hello"}
        )
        return tool, prompt

    tool, prompt = run(evaluator, script, hooks=adapter.hooks(evaluator, session_id=lambda _: ""))
    assert tool["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "session_id: expected a non-empty string" in tool["systemMessage"]
    assert prompt == {
        "systemMessage": "forge-policy could not evaluate this event and let it through: "
        "EventError: session_id: expected a non-empty string, got ''"
    }


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
    evaluator = fp.Evaluator(fp.builtin_catalog(), store=store, clock=Clock())
    callback = adapter.hooks(evaluator)["PreToolUse"][0].hooks[0]
    ticks: list[float] = []

    async def main() -> dict[str, Any]:
        loop_thread = threading.get_ident()

        async def heartbeat() -> None:
            for _ in range(20):
                ticks.append(time.monotonic())
                await anyio.sleep(0.01)

        async with anyio.create_task_group() as group:
            group.start_soon(heartbeat)
            answer = await callback(pre_tool("rm -rf /"), "toolu_1", {"signal": None})
        assert store.threads and loop_thread not in store.threads
        return dict(answer)

    answer = anyio.run(main)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert len(ticks) == 20 and ticks[-1] - ticks[0] < 0.6


def test_importing_forge_policy_does_not_import_the_sdk() -> None:
    probe = (
        "import sys\n"
        "import forge_policy, forge_policy.harness, forge_policy.integrations\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('claude_agent_sdk', 'anyio', 'mcp')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_a_subagents_hook_inputs_name_it_in_the_session_and_the_log() -> None:
    """Issue 27: the SDK's hook inputs inside a subagent carry ``agent_id``/``agent_type``
    (``_SubagentContextMixin``), and SubagentStart names it: the violation is the root
    session's, the breakdown and the record name the subagent."""
    evaluator = builtin_evaluator()
    sub = {"agent_id": "a-7", "agent_type": "Explore"}

    async def script(cli: FakeCLI) -> dict[str, Any]:
        start = {**pre_tool("x"), "hook_event_name": "SubagentStart", **sub}
        for key in ("tool_name", "tool_input", "tool_use_id"):
            start.pop(key)
        await cli.hook(start)
        return await cli.hook({**pre_tool("git push --force"), **sub})

    answer = run(evaluator, script)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    status = evaluator.status(SESSION)
    assert status.agents == {"a-7": "Explore"}
    (share,) = [a for a in status.behaviors["no-destructive-git"].agents if not a.root]
    assert (share.agent_id, share.type, share.counter, share.blocks) == ("a-7", "Explore", 1, 1)
    (block,) = [r for r in evaluator.audit.records() if r["kind"] == "block"]
    assert (block["agent_id"], block["agent"]) == ("a-7", "Explore")
