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

**The floor** (SPEC §13): an allowed ``Bash`` call comes back with ``updatedInput`` (the SDK's
``PreToolUseHookSpecificOutput.updatedInput``; ``PermissionResultAllow.updated_input`` from
:func:`can_use_tool`), its ``command`` rewritten to run under forge_policy's own sandbox
(:mod:`forge_policy.floor.sandbox`); the engine decided the original. ``floor=`` chooses
(``"own"``, ``"off"``; default: the project's ``floor:``, as for the hook).
Under ``floor: harness`` the Claude Code sandbox counts when it holds: in the settings files the
CLI reads (:func:`forge_policy.floor.status.harness_sandbox_on`; the SDK loads them unless
``setting_sources`` leaves them out, so pass ``floor="own"`` then), or in the
``ClaudeAgentOptions(sandbox=…)`` you pass here as ``sandbox=`` too, which then decides alone
(it is the CLI's highest settings layer): ``enabled: True``, ``failIfUnavailable: True``,
``allowUnsandboxedCommands: False``. The SDK's ``SandboxSettings`` (0.2.189) has no filesystem
rules, so the floor's paths are the settings files' to set.
``shell_tools`` names the tools whose ``command`` is rewritten (default ``("Bash",)``).
An ``override: user`` ask carries the rewrite too, so what the user approves runs under it.

The evaluator runs in a worker thread (:func:`anyio.to_thread.run_sync`, the SDK's own async
library, so it works under asyncio and trio alike): store I/O and lock waits never block the
event loop. Calls on one evaluator are serialized, since an evaluator is not thread-safe.
Anything that stops the evaluation refuses a tool call (fail closed) and lets other events
through with a ``systemMessage`` saying so. The SDK is imported when these functions are
called, never by ``import forge_policy`` or ``forge_policy.integrations``.
"""

from __future__ import annotations

from collections.abc import Mapping
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
    from forge_policy.integrations._floor import ShellFloor
    from forge_policy.model import Decision, Event

    #: The caller's prompt for an ``override: user`` soft block: the SDK's own
    #: ``can_use_tool`` arguments and the engine's reason; allow or deny.
    Ask = Callable[[str, dict[str, Any], ToolPermissionContext, str], Awaitable[PermissionResult]]

#: The name recorded as the events' ``harness`` (and ``agent`` when the SDK names no subagent).
HARNESS = "claude-agent-sdk"
#: The events :func:`hooks` registers. ``SessionStart`` is not in the SDK's ``HookEvent``
#: typing (0.2.189) but the CLI accepts it: the SDK passes the hook names through.
#: ``SubagentStart``/``SubagentStop`` (issue 27): the session remembers its subagents, and a
#: behavior on ``SubagentStop`` keeps a subagent going as one on ``Stop`` keeps the agent. Tool
#: events inside a subagent carry its ``agent_id``/``agent_type`` (the hook input's
#: ``_SubagentContextMixin``; ``ToolPermissionContext.agent_id`` for :func:`can_use_tool`).
HOOK_EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "SessionStart",
    "Stop",
    "SubagentStart",
    "SubagentStop",
)
#: The tools whose ``command`` runs under the floor unless ``shell_tools=`` says otherwise.
SHELL_TOOLS = ("Bash",)


def hooks(
    evaluator: Evaluator,
    *,
    session_id: SessionId = None,
    tools: bool = True,
    floor: str | None = None,
    shell_tools: tuple[str, ...] = SHELL_TOOLS,
    project: str | None = None,
    sandbox: Mapping[str, Any] | None = None,
) -> dict[HookEvent, list[HookMatcher]]:
    """The hook matchers for ``ClaudeAgentOptions(hooks=…)``.

    ``session_id`` replaces the SDK's session id (a string, or a function of the hook input);
    ``tools=False`` leaves PreToolUse to :func:`can_use_tool`. The floor (see the module):
    ``floor`` (``"own"``, ``"off"``, None for the project's ``floor:``), ``shell_tools``,
    ``project`` (default: the hook input's ``cwd``, the CLI's working directory) and
    ``sandbox`` (the ``ClaudeAgentOptions.sandbox`` you pass the SDK).
    """
    from claude_agent_sdk import HookMatcher

    shell = _shell_floor(floor, project, sandbox)
    callback = _hook_callback(evaluator, session_id, shell, tuple(shell_tools))
    names = [name for name in HOOK_EVENTS if tools or name != "PreToolUse"]
    matchers = {name: [HookMatcher(matcher=None, hooks=[callback])] for name in names}
    return cast("dict[HookEvent, list[HookMatcher]]", matchers)  # SessionStart: see HOOK_EVENTS


def can_use_tool(
    evaluator: Evaluator,
    *,
    session_id: SessionId = None,
    ask: Ask | None = None,
    floor: str | None = None,
    shell_tools: tuple[str, ...] = SHELL_TOOLS,
    project: str | None = None,
    sandbox: Mapping[str, Any] | None = None,
) -> CanUseTool:
    """The permission callback for ``ClaudeAgentOptions(can_use_tool=…)``.

    Allow → ``PermissionResultAllow()``; a soft block → ``PermissionResultDeny(message=…)``;
    a hard block → the same with ``interrupt=True`` (the turn stops); an ``override: user``
    soft block → ``ask(tool_name, input, context, reason)``, by default a deny with the reason.
    The SDK gives this callback no session id: pass the one :func:`hooks` uses (by default
    every callback made here is one session of its own). An allowed (or user-approved) shell
    call's ``updated_input`` carries the floor's rewrite (``floor``, ``shell_tools``, ``sandbox``
    as for :func:`hooks`; ``project`` defaults to the working directory: the SDK gives this
    callback no ``cwd``).
    """
    from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny

    from forge_policy.engine.evaluator import random_id
    from forge_policy.model import OVERRIDE_BY_USER, OVERRIDE_NEVER, Event
    from forge_policy.render.claude_code import refusal_reason

    fixed = f"{HARNESS}-{random_id()}"
    shell = _shell_floor(floor, project, sandbox)
    shells = tuple(shell_tools)

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
            return _floored(PermissionResultAllow(), tool_name, tool_input, shell, shells)
        reason = refusal_reason(decision)
        if blocking.override_mode == OVERRIDE_BY_USER:
            if ask is None:
                return PermissionResultDeny(message=reason)
            try:
                answer = await ask(tool_name, tool_input, context, reason)
            except Exception as exc:  # a prompt that broke approved nothing
                return PermissionResultDeny(message=f"{reason}\n{_could_not_decide(exc)}")
            return _floored(answer, tool_name, tool_input, shell, shells)
        return PermissionResultDeny(
            message=reason, interrupt=blocking.override_mode == OVERRIDE_NEVER
        )

    return decide


def _shell_floor(
    floor: str | None, project: str | None, sandbox: Mapping[str, Any] | None
) -> ShellFloor:
    """The floor of one adapter; ``sandbox`` (``ClaudeAgentOptions.sandbox``) holds on the
    terms :func:`~forge_policy.floor.status.harness_sandbox_on` sets for the settings files."""
    from forge_policy.integrations._floor import ShellFloor

    holds = None  # the settings files say
    if isinstance(sandbox, Mapping):  # the CLI's highest settings layer: it says
        holds = (
            sandbox.get("enabled") is True
            and sandbox.get("failIfUnavailable") is True
            and sandbox.get("allowUnsandboxedCommands") is False
        )
    return ShellFloor(floor, project=project, harness="claude-code", sandbox_holds=holds)


def _rewritten_input(
    shell: ShellFloor, tool_input: Mapping[str, Any], cwd: object
) -> dict[str, Any] | None:
    """The whole tool input (``updatedInput`` replaces it) with its ``command`` under the
    floor, or None to leave the call as it is; :class:`FloorUnavailable` passes through."""
    command = tool_input.get("command")
    if not isinstance(command, str):
        return None
    rewritten = shell.command(command, cwd if isinstance(cwd, str) and cwd else None)
    return None if rewritten is None else {**tool_input, "command": rewritten}


def _floored(
    result: PermissionResult,
    tool_name: str,
    tool_input: dict[str, Any],
    shell: ShellFloor,
    shells: tuple[str, ...],
) -> PermissionResult:
    """An allow for a shell tool with its command (or the user's edit of it) under the floor;
    a deny when the floor was asked for and cannot hold."""
    from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny

    if tool_name not in shells or not isinstance(result, PermissionResultAllow):
        return result
    given = result.updated_input if result.updated_input is not None else tool_input
    try:
        updated = _rewritten_input(shell, given, None)
    except Exception as exc:  # fail closed: a floor that cannot be applied refuses the call
        return PermissionResultDeny(message=_could_not_decide(exc, refused=True))
    if updated is None:
        return result
    import dataclasses

    return dataclasses.replace(result, updated_input=updated)  # the caller's answer kept as it is


def _hook_callback(
    evaluator: Evaluator, session_id: SessionId, shell: ShellFloor, shells: tuple[str, ...]
) -> HookCallback:
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
            if name == "PreToolUse" and payload.get("tool_name") in shells:
                _with_floor(out, decision, payload, shell)
        except Exception as exc:  # fail closed where a tool call can still be refused
            if name in BLOCKABLE_TOOL_EVENTS:
                reason = _could_not_decide(exc, refused=True)
                out = refuse(name, reason, reason)
            else:
                out = {"systemMessage": _could_not_decide(exc, refused=False)}
        return cast("HookJSONOutput", out)  # the CLI's schema, which the TypedDicts mirror

    return callback


def _with_floor(
    out: dict[str, Any], decision: Decision, payload: dict[str, Any], shell: ShellFloor
) -> None:
    """Add ``updatedInput`` to a PreToolUse answer that lets the shell call run (allowed, or
    put to the user): the command under the floor. A denied call is left as it is."""
    from forge_policy.model import OVERRIDE_BY_USER

    blocking = decision.blocking
    if blocking is not None and blocking.override_mode != OVERRIDE_BY_USER:
        return
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return
    updated = _rewritten_input(shell, tool_input, payload.get("cwd"))
    if updated is not None:
        specific = out.setdefault("hookSpecificOutput", {"hookEventName": "PreToolUse"})
        specific["updatedInput"] = updated


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
