"""The Claude Agent SDK adapter (extra ``claude-agent-sdk``): hook callbacks and a permission
callback that put an :class:`~forge_policy.Evaluator` in front of an SDK agent.

The SDK's hook input carries the same fields as a Claude Code hook payload (it runs the Claude
Code CLI), so the event is read by :meth:`~forge_policy.Event.from_claude_code` and the answer
is :func:`forge_policy.render.claude_code.answer`: the one mapping, as a dict. Two entry points:

- :func:`hooks` — ``ClaudeAgentOptions(hooks=hooks(evaluator))``: PreToolUse, PostToolUse,
  UserPromptSubmit, SessionStart and Stop. A block is a ``deny`` (an ``override: user`` soft
  block an ``ask``, which the CLI then puts to ``can_use_tool`` or the user); nudges and warnings
  are ``systemMessage`` and ``additionalContext``.
- :func:`can_use_tool` — ``ClaudeAgentOptions(can_use_tool=can_use_tool(evaluator))``: the
  permission callback, for a harness that gates tools there instead. Use it with
  ``hooks(evaluator, tools=False)``, or each call is decided (and counted) twice.

The evaluator runs in a worker thread (:func:`anyio.to_thread.run_sync`, the SDK's own async
library, so it works under asyncio and trio alike): store I/O and lock waits never block the
event loop. Calls on one evaluator are serialized, since an evaluator is not thread-safe.
Anything that stops the evaluation refuses a tool call (fail closed) and lets other events
through with a ``systemMessage`` saying so. The SDK is imported when these functions are
called, never by ``import forge_policy`` or ``forge_policy.integrations``.
"""

from __future__ import annotations

from typing import cast

from forge_policy.integrations._embedding import could_not_decide as _could_not_decide
from forge_policy.integrations._embedding import session as _session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from typing import Any

    from claude_agent_sdk import (
        HookContext,
        HookJSONOutput,
        HookMatcher,
        PermissionResult,
        ToolPermissionContext,
    )
    from claude_agent_sdk.types import CanUseTool, HookCallback, HookEvent

    from forge_policy.engine.evaluator import Evaluator
    from forge_policy.integrations._embedding import SessionId
    from forge_policy.model import Decision, Event

    #: The caller's prompt for an ``override: user`` soft block: the SDK's own
    #: ``can_use_tool`` arguments and the engine's reason; allow or deny.
    Ask = Callable[[str, dict[str, Any], ToolPermissionContext, str], Awaitable[PermissionResult]]

#: The name recorded as the events' ``harness`` (and ``agent`` when the SDK names no subagent).
HARNESS = "claude-agent-sdk"
#: The events :func:`hooks` registers. ``SessionStart`` is not in the SDK's ``HookEvent``
#: typing (0.2.189) but the CLI accepts it: the SDK passes the hook names through.
HOOK_EVENTS = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart", "Stop")


def hooks(
    evaluator: Evaluator, *, session_id: SessionId = None, tools: bool = True
) -> dict[HookEvent, list[HookMatcher]]:
    """The hook matchers for ``ClaudeAgentOptions(hooks=…)``.

    ``session_id`` replaces the SDK's session id (a string, or a function of the hook input);
    ``tools=False`` leaves PreToolUse to :func:`can_use_tool`.
    """
    from claude_agent_sdk import HookMatcher

    callback = _hook_callback(evaluator, session_id)
    names = [name for name in HOOK_EVENTS if tools or name != "PreToolUse"]
    matchers = {name: [HookMatcher(matcher=None, hooks=[callback])] for name in names}
    return cast("dict[HookEvent, list[HookMatcher]]", matchers)  # SessionStart: see HOOK_EVENTS


def can_use_tool(
    evaluator: Evaluator, *, session_id: SessionId = None, ask: Ask | None = None
) -> CanUseTool:
    """The permission callback for ``ClaudeAgentOptions(can_use_tool=…)``.

    Allow → ``PermissionResultAllow()``; a soft block → ``PermissionResultDeny(message=…)``;
    a hard block → the same with ``interrupt=True`` (the turn stops); an ``override: user``
    soft block → ``ask(tool_name, input, context, reason)``, by default a deny with the reason.
    The SDK gives this callback no session id: pass the one :func:`hooks` uses (by default
    every callback made here is one session of its own).
    """
    from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny

    from forge_policy.engine.evaluator import random_id
    from forge_policy.model import OVERRIDE_BY_USER, OVERRIDE_NEVER, Event
    from forge_policy.render.claude_code import refusal_reason

    fixed = f"{HARNESS}-{random_id()}"

    async def decide(
        tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResult:
        try:
            # the PreToolUse payload the CLI would have sent a hook: conditions read its fields
            payload = {
                "hook_event_name": "PreToolUse",
                "session_id": _session(session_id, {}) if session_id is not None else fixed,
                "tool_name": tool_name,
                "tool_input": tool_input,
                "tool_use_id": context.tool_use_id or "",
            }
            if context.agent_id:
                payload["agent_id"] = context.agent_id
            event = Event.from_claude_code(payload, harness=HARNESS)
            decision = await _evaluate(evaluator, event)
        except Exception as exc:  # fail closed: a call that could not be decided is refused
            return PermissionResultDeny(message=_could_not_decide(exc, refused=True))
        blocking = decision.blocking
        if blocking is None:
            return PermissionResultAllow()
        reason = refusal_reason(decision)
        if blocking.override_mode == OVERRIDE_BY_USER:
            if ask is None:
                return PermissionResultDeny(message=reason)
            try:
                return await ask(tool_name, tool_input, context, reason)
            except Exception as exc:  # a prompt that broke approved nothing
                return PermissionResultDeny(message=f"{reason}\n{_could_not_decide(exc)}")
        return PermissionResultDeny(
            message=reason, interrupt=blocking.override_mode == OVERRIDE_NEVER
        )

    return decide


def _hook_callback(evaluator: Evaluator, session_id: SessionId) -> HookCallback:
    from forge_policy.events import BLOCKABLE_TOOL_EVENTS
    from forge_policy.harness.payload import derive_session
    from forge_policy.model import Event
    from forge_policy.render.claude_code import answer, refuse

    async def callback(
        input_data: Any, tool_use_id: str | None, context: HookContext
    ) -> HookJSONOutput:
        name = input_data.get("hook_event_name") if isinstance(input_data, dict) else None
        name = name if isinstance(name, str) else ""
        try:
            payload = dict(input_data)
            if session_id is not None:
                payload["session_id"] = _session(session_id, input_data)
            if tool_use_id and not payload.get("tool_use_id"):
                payload["tool_use_id"] = tool_use_id
            notes: list[dict[str, Any]] = []
            if payload.get("session_id") in (None, ""):
                payload, note = derive_session(payload)
                notes.append(note)
            event = Event.from_claude_code(payload, harness=HARNESS)
            decision = await _evaluate(evaluator, event, notes)
            out = answer(decision, event) or {}
        except Exception as exc:  # fail closed where a tool call can still be refused
            if name in BLOCKABLE_TOOL_EVENTS:
                reason = _could_not_decide(exc, refused=True)
                out = refuse(name, reason, reason)
            else:
                out = {"systemMessage": _could_not_decide(exc, refused=False)}
        return cast("HookJSONOutput", out)  # the CLI's schema, which the TypedDicts mirror

    return callback


async def _evaluate(
    evaluator: Evaluator, event: Event, notes: list[dict[str, Any]] | None = None
) -> Decision:
    """The decision, evaluated in a worker thread (``anyio``: the SDK's own async library, so
    asyncio and trio alike) under the evaluator's lock."""
    import functools

    import anyio.to_thread

    from forge_policy.integrations._embedding import evaluate

    decision: Decision = await anyio.to_thread.run_sync(
        functools.partial(evaluate, evaluator, event, notes)
    )
    return decision  # a name with its type: anyio is Any in a venv without the extra
