"""The OpenAI Agents SDK adapter (extra ``openai-agents``): tool guardrails and a human-approval
check that put an :class:`~forge_policy.Evaluator` in front of an agent's function tools.

The SDK's three mechanisms map onto the engine's answers:

- **before the call** — a ``ToolInputGuardrail``: allow → ``allow()``; a soft block →
  ``reject_content(reason)`` (the tool does not run; the model reads the engine's message); a hard
  block → ``raise_exception()`` (``Runner.run`` raises ``ToolInputGuardrailTripwireTriggered``;
  the decision is in ``exc.output.output_info``).
- **asking the user** — an ``override: user`` soft block becomes the SDK's human approval: the
  tool's ``needs_approval`` answers True, the run stops with the call in ``result.interruptions``,
  and the caller resumes after ``state.approve(item)`` or ``state.reject(item, …)``
  (:meth:`Guard.reason` is the text to show the user). An approved call runs and its PostToolUse
  records the user's override (SPEC §4); a rejected one never runs.
- **after the call** — a ``ToolOutputGuardrail``: the PostToolUse the engine counts (the token
  budget adds up what ran, a user's approval is recorded). Its nudges and warnings, and those of
  the PreToolUse, are appended to a text output, since a guardrail has no other way to add text
  the model reads (``output_info`` is not sent to the model); a block after the call withholds
  the output with the reason.

Use one :class:`Guard` for all three (:meth:`Guard.protect` attaches them to a ``FunctionTool``):
the approval check decides a call once and the input guardrail answers from that decision, so one
call is one decision with the same counters as any harness. That decision is kept in memory
between the two: a ``RunState`` resumed by another process decides the approved call again, and
an ``override: user`` block is then refused with its reason (fail closed); so is a call the SDK
asked about by itself (``needs_approval`` as a function: arguments its validation changed).
:func:`tool_input_guardrail` and :func:`tool_output_guardrail` are the pieces on their own.

**Tool names.** Built-in behaviors speak Claude Code's tool vocabulary (``Bash`` with
``command``, ``Read`` with ``file_path`` …). ``tools`` says which function tool is which: a
catalog name (``{"run_shell": "Bash"}``, arguments as they are) or a name and the renaming of
arguments (``{"run_shell": ("Bash", {"cmd": "command"})}``, others kept). A tool not named there
reaches the engine under its own name and arguments, so behaviors matching it (or ``*``) apply.

**The floor** (SPEC §13). A function tool named as a shell (``shell_tools``: ``{tool name:
argument holding the command}``; by default every tool ``tools`` maps onto ``Bash``, with the
argument that becomes ``command``) runs an allowed or user-approved call with that command
rewritten to run under forge_policy's own sandbox (:mod:`forge_policy.floor.sandbox`):
:meth:`Guard.protect` wraps the tool's ``on_invoke_tool`` (a tool input guardrail can only
allow or refuse, not rewrite), so the guardrails and the engine read the model's command and the
tool runs the rewritten one. :meth:`Guard.protect_shell` gives the SDK's local ``ShellTool`` the
floor by wrapping its executor (each command of a call rewritten); the SDK gives ``ShellTool``
no guardrails, so those calls get the floor but are not decided by the engine. Not covered: the
deprecated ``LocalShellTool`` (its executor receives the model's argv, which it runs itself) and
a hosted ``ShellTool`` (it runs in OpenAI's container, not on this machine). ``floor`` chooses
(``"own"``, ``"off"``; default: the project's ``floor:`` in ``<FORGE_ROOT>/config.yaml``, where
``harness`` means ``own``: the SDK has no sandbox of its own on this machine); the project is
``cwd`` (default: the working directory).

**Session id.** ``session_id`` (a string, or a function of the SDK's ``RunContextWrapper``); else
the run context's ``session_id`` (``Runner.run(…, context=…)``: an attribute or a mapping key
holding a non-empty string); else one session per :class:`Guard`.

The evaluator runs in a worker thread (``asyncio.to_thread``: the SDK runs on asyncio), so store
I/O and lock waits never block the event loop; calls on one evaluator are serialized. Anything
that stops the evaluation refuses the call (fail closed). The SDK is imported when these
functions are called, never by ``import forge_policy`` or ``forge_policy.integrations``.

Subagents (issue 27): the SDK has no subagent id. A handoff moves the run to another agent of
the same run and session; its calls count on the root thread's share (``agent`` stays the
harness name: the agent executing a tool, ``ToolContext.agent``, is not given to the
``needs_approval`` callback that decides the same call, so reading it in one place only could
decide one call two ways).
"""

from __future__ import annotations

import collections
import inspect
import json
import threading
from collections.abc import Mapping

from forge_policy.integrations._embedding import could_not_decide as _could_not_decide
from forge_policy.integrations._embedding import session as _session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from typing import Any

    from agents import (
        FunctionTool,
        RunContextWrapper,
        ShellTool,
        ToolApprovalItem,
        ToolContext,
        ToolGuardrailFunctionOutput,
        ToolInputGuardrail,
        ToolInputGuardrailData,
        ToolOutputGuardrail,
        ToolOutputGuardrailData,
    )
    from agents.tool import ShellCommandRequest, ShellResult

    from forge_policy.engine.evaluator import Evaluator
    from forge_policy.integrations._embedding import SessionId
    from forge_policy.model import Decision, Event

    #: ``needs_approval`` as the SDK calls it: ``(run_context, tool_parameters, call_id)``.
    NeedsApproval = Callable[[RunContextWrapper[Any], dict[str, Any], str], Awaitable[bool]]

#: A function tool's catalog name, or its name and the renaming of its arguments.
ToolSpec = str | tuple[str, Mapping[str, str]]

#: The name recorded as the events' ``harness`` (and ``agent``).
HARNESS = "openai-agents"
#: Decisions kept between the approval check and the guardrail, per guard (oldest dropped first:
#: a call the user rejected never reaches the guardrail that would take its entry).
PENDING_LIMIT = 4096


class Guard:
    """One evaluator in front of an agent's function tools (see the module docstring).

    ``tools`` maps function tools onto catalog tools; ``session_id`` is a string or a function
    of the ``RunContextWrapper``; ``cwd`` is where the tools run (relative paths and git facts
    are read there, and it is the floor's project; by default the process's working
    directory); ``floor`` and ``shell_tools`` set the floor of shell tools (see the module).
    """

    def __init__(
        self,
        evaluator: Evaluator,
        *,
        session_id: SessionId = None,
        tools: Mapping[str, ToolSpec] | None = None,
        cwd: str = "",
        floor: str | None = None,
        shell_tools: Mapping[str, str] | None = None,
    ) -> None:
        from forge_policy.engine.evaluator import random_id
        from forge_policy.integrations._floor import ShellFloor

        _require_sdk()
        self.evaluator = evaluator
        self.session_id = session_id
        self.tools = _check_tools(tools or {})
        self.cwd = cwd
        self.floor = ShellFloor(floor, project=cwd or None, harness=HARNESS)
        self.shell_tools = _shell_tools(self.tools, shell_tools)
        self._fallback_session = f"{HARNESS}-{random_id()}"
        # (session, tool, call id) -> the PreToolUse decision (or what stopped it) and
        # whether the approval check asked the user about it
        self._pending: collections.OrderedDict[
            tuple[str, str, str], tuple[Decision | Exception, bool]
        ] = collections.OrderedDict()
        self._advice: collections.OrderedDict[tuple[str, str, str], str] = collections.OrderedDict()
        self._guard = threading.Lock()
        self._input: ToolInputGuardrail[Any] | None = None
        self._output: ToolOutputGuardrail[Any] | None = None

    # --- the SDK's objects --------------------------------------------------------------------

    @property
    def input_guardrail(self) -> ToolInputGuardrail[Any]:
        """The ``ToolInputGuardrail`` (one per guard)."""
        if self._input is None:
            from agents import ToolInputGuardrail

            self._input = ToolInputGuardrail(self._check_input, name="forge_policy")
        return self._input

    @property
    def output_guardrail(self) -> ToolOutputGuardrail[Any]:
        """The ``ToolOutputGuardrail`` (one per guard)."""
        if self._output is None:
            from agents import ToolOutputGuardrail

            self._output = ToolOutputGuardrail(self._check_output, name="forge_policy")
        return self._output

    def needs_approval(self, tool_name: str) -> NeedsApproval:
        """``needs_approval`` for the function tool ``tool_name``: True for an ``override:
        user`` soft block, which the SDK then puts to the user."""

        async def needs(ctx: RunContextWrapper[Any], params: dict[str, Any], call_id: str) -> bool:
            try:
                event = self.event("PreToolUse", ctx, tool_name, params, call_id)
            except Exception:  # the input guardrail meets the same error and refuses
                return False
            key = (event.session_id, tool_name, call_id)
            try:
                decision = await self._decide(event)
            except Exception as exc:  # fail closed: the guardrail refuses the call
                self._remember(key, exc, asked=False)
                return False
            asks = _asks_user(decision)
            self._remember(key, decision, asked=asks)
            return asks

        return needs

    def protect(self, tool: FunctionTool) -> FunctionTool:
        """Attach the guardrails (first, so the engine decides before the tool's own) and the
        approval check to ``tool``, in place; a ``needs_approval`` it had still asks too.
        Protecting a tool twice with one guard changes nothing (a call is decided once)."""
        if self.input_guardrail in (tool.tool_input_guardrails or []):
            return tool
        tool.tool_input_guardrails = [self.input_guardrail, *(tool.tool_input_guardrails or [])]
        tool.tool_output_guardrails = [
            self.output_guardrail,
            *(tool.tool_output_guardrails or []),
        ]
        ours, theirs = self.needs_approval(tool.name), tool.needs_approval

        async def needs(ctx: RunContextWrapper[Any], params: dict[str, Any], call_id: str) -> bool:
            if await ours(ctx, params, call_id):
                return True
            if not callable(theirs):
                return bool(theirs)
            answer = theirs(ctx, params, call_id)
            return bool(await answer) if inspect.isawaitable(answer) else bool(answer)

        tool.needs_approval = needs
        argument = self.shell_tools.get(tool.name)
        if argument is not None:
            self._floor_invocation(tool, argument)
        return tool

    def protect_shell(self, tool: ShellTool) -> ShellTool:
        """Give the SDK's local ``ShellTool`` the floor, in place: its executor runs each command
        rewritten (see the module: these calls are not decided by the engine). A
        :class:`ValueError` for a hosted ``ShellTool``, which does not run on this machine."""
        environment: Mapping[str, Any] = tool.environment or {}
        if environment.get("type", "local") != "local" or tool.executor is None:
            raise ValueError(
                f"protect_shell: {tool.name!r} runs in a hosted container, not on this machine: "
                "forge_policy's floor cannot hold there"
            )
        if getattr(tool.executor, "__forge_policy_floor__", False):
            return tool
        executor = tool.executor

        async def execute(request: ShellCommandRequest) -> str | ShellResult:
            import asyncio
            import dataclasses

            try:
                commands = await asyncio.to_thread(self._rewritten, request.data.action.commands)
            except Exception as exc:  # fail closed: a floor that cannot be applied runs nothing
                return _could_not_decide(exc, refused=True)
            action = dataclasses.replace(request.data.action, commands=commands)
            data = dataclasses.replace(request.data, action=action)
            answer = executor(dataclasses.replace(request, data=data))
            return await answer if inspect.isawaitable(answer) else answer

        execute.__forge_policy_floor__ = True  # type: ignore[attr-defined]
        tool.executor = execute
        return tool

    def _rewritten(self, commands: list[str]) -> list[str]:
        """``commands``, each under the floor (as it is when the floor leaves it)."""
        return [self.floor.command(command) or command for command in commands]

    def _floor_invocation(self, tool: FunctionTool, argument: str) -> None:
        """Run ``tool``'s calls with the command argument under the floor (the guardrails ran
        before, on the model's arguments; a refused call never gets here).

        A ``function_tool`` keeps the SDK's own invoker (its approval checks compare the
        arguments they validated with those of the call, openai-agents 0.24.0): the floor wraps
        the implementation it calls, and drops the arguments prepared from the model's text
        when the text is rewritten, so they are read again. Any other ``on_invoke_tool`` is
        wrapped as it is."""
        import asyncio
        import functools

        from forge_policy.integrations._floor import rewrite_argument

        def floored(arguments: str) -> str:
            parsed = json.loads(arguments) if arguments.strip() else {}
            if not isinstance(parsed, dict) or argument not in parsed:
                return arguments
            value = rewrite_argument(parsed[argument], lambda c: self.floor.command(c) or c)
            if value == parsed[argument]:
                return arguments
            return json.dumps({**parsed, argument: value})

        def wrap(
            invoke: Callable[[ToolContext[Any], str], Awaitable[Any]],
        ) -> Callable[[ToolContext[Any], str], Awaitable[Any]]:
            @functools.wraps(invoke)  # keeps the SDK's markers (prepared arguments, wrapped fn)
            async def invoke_floored(ctx: ToolContext[Any], arguments: str) -> Any:
                try:
                    rewritten = await asyncio.to_thread(floored, arguments)
                except Exception as exc:  # fail closed: the model reads why nothing ran
                    return _could_not_decide(exc, refused=True)
                if rewritten != arguments and hasattr(ctx, "_function_tool_arguments"):
                    ctx._function_tool_arguments = None  # prepared from the model's text
                return await invoke(ctx, rewritten)

            invoke_floored.__forge_policy_floor__ = True  # type: ignore[attr-defined]
            return invoke_floored

        invoker = tool.on_invoke_tool
        inner = getattr(invoker, "_invoke_tool_impl", None)
        if callable(inner):
            if not getattr(inner, "__forge_policy_floor__", False):
                invoker._invoke_tool_impl = wrap(inner)  # type: ignore[attr-defined]
        elif not getattr(invoker, "__forge_policy_floor__", False):
            tool.on_invoke_tool = wrap(invoker)

    def reason(self, item: ToolApprovalItem) -> str | None:
        """Why the engine asks about an interrupted call (``result.interruptions``): the text to
        show the user before ``approve``/``reject``; None when it did not ask about it."""
        from forge_policy.render.outcome import refusal_reason

        call_id, name = item.call_id or "", item.tool_name or ""
        with self._guard:
            for (_session_id, tool_name, pending_id), (decision, asked) in self._pending.items():
                if asked and (tool_name, pending_id) == (name, call_id):
                    assert not isinstance(decision, Exception)
                    return refusal_reason(decision)
        return None

    # --- the engine's event -------------------------------------------------------------------

    def event(
        self,
        event_name: str,
        ctx: RunContextWrapper[Any],
        tool_name: str,
        arguments: str | Mapping[str, Any] | None,
        call_id: str,
        **extra: Any,
    ) -> Event:
        """The engine's event for one function-tool call (``arguments`` as the model sent them:
        a JSON object, or its text); :class:`~forge_policy.EventError` when unusable."""
        from forge_policy.errors import EventError
        from forge_policy.model import Event

        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError as exc:
                raise EventError(f"tool_arguments: not JSON ({exc})") from None
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            raise EventError(f"tool_arguments: expected an object, got {type(arguments).__name__}")
        name, tool_input = self._catalog_call(tool_name, arguments)
        payload: dict[str, Any] = {
            "session_id": self._session_of(ctx),
            "cwd": self.cwd,
            "hook_event_name": event_name,
            "tool_name": name,
            "tool_input": tool_input,
            "tool_use_id": call_id,
            **extra,
        }
        return Event.from_claude_code(payload, harness=HARNESS)

    def _catalog_call(
        self, tool_name: str, arguments: Mapping[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        spec = self.tools.get(tool_name)
        if spec is None:
            return tool_name, dict(arguments)
        if isinstance(spec, str):
            return spec, dict(arguments)
        name, renames = spec
        return name, {renames.get(key, key): value for key, value in arguments.items()}

    def _session_of(self, ctx: RunContextWrapper[Any]) -> str:
        if self.session_id is not None:
            return _session(self.session_id, ctx)
        context = getattr(ctx, "context", None)
        found = (
            context.get("session_id")
            if isinstance(context, Mapping)
            else getattr(context, "session_id", None)
        )
        return found if isinstance(found, str) and found else self._fallback_session

    # --- the guardrails -----------------------------------------------------------------------

    async def _check_input(self, data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        from agents import ToolGuardrailFunctionOutput as Out

        from forge_policy.model import OVERRIDE_NEVER
        from forge_policy.render.outcome import refusal_reason

        ctx = data.context
        asked = approved = False
        try:
            event = self.event(
                "PreToolUse", ctx, ctx.tool_name, ctx.tool_arguments, ctx.tool_call_id
            )
            key = (event.session_id, ctx.tool_name, ctx.tool_call_id)
            with self._guard:
                decided, asked = self._pending.get(key, (None, False))
                if asked:
                    status = ctx.is_tool_approved(ctx.tool_name, ctx.tool_call_id)
                    if status is None:  # checked before the SDK asks: the user decides
                        return Out.allow(_info(decided))
                    approved = status
                if decided is not None:
                    del self._pending[key]
            if isinstance(decided, Exception):
                raise decided
            decision = decided if decided is not None else await self._decide(event)
        except Exception as exc:  # fail closed: a call that could not be decided is refused
            reason = _could_not_decide(exc, refused=True)
            return Out.reject_content(reason, output_info={"error": reason})
        blocking = decision.blocking
        if blocking is None:
            self._remember_advice(key, decision)
            return Out.allow(_info(decision))
        if asked and approved:  # the user said yes: it runs, and PostToolUse records that
            return Out.allow(_info(decision))
        if blocking.override_mode == OVERRIDE_NEVER:
            return Out.raise_exception(_info(decision))
        return Out.reject_content(refusal_reason(decision), _info(decision))

    async def _check_output(self, data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        from agents import ToolGuardrailFunctionOutput as Out

        from forge_policy.model import OVERRIDE_NEVER
        from forge_policy.render.outcome import refusal_reason

        ctx, output = data.context, data.output
        try:
            event = self.event(
                "PostToolUse",
                ctx,
                ctx.tool_name,
                ctx.tool_arguments,
                ctx.tool_call_id,
                tool_response=_response(output),
            )
            key = (event.session_id, ctx.tool_name, ctx.tool_call_id)
            with self._guard:
                before = self._advice.pop(key, "")
            decision = await self._decide(event)
        except Exception as exc:  # fail closed: output the engine could not account is withheld
            reason = "The tool call ran, but its output is withheld.\n" + _could_not_decide(exc)
            return Out.reject_content(reason, output_info={"error": reason})
        blocking = decision.blocking
        if blocking is not None:
            if blocking.override_mode == OVERRIDE_NEVER:
                return Out.raise_exception(_info(decision))
            reason = f"The tool call ran, but its output is withheld.\n{refusal_reason(decision)}"
            return Out.reject_content(reason, _info(decision))
        advice = "\n\n".join(text for text in (before, _advice_text(decision)) if text)
        if advice and isinstance(output, str):
            # the only way a guardrail adds text the model reads: the output, with the advice
            return Out.reject_content(f"{output}\n\n{advice}", _info(decision))
        return Out.allow(_info(decision))

    # --- shared -------------------------------------------------------------------------------

    async def _decide(self, event: Event) -> Decision:
        import asyncio

        from forge_policy.integrations._embedding import evaluate

        return await asyncio.to_thread(evaluate, self.evaluator, event)

    def _remember(
        self, key: tuple[str, str, str], decided: Decision | Exception, *, asked: bool
    ) -> None:
        with self._guard:
            self._pending[key] = (decided, asked)
            while len(self._pending) > PENDING_LIMIT:
                self._pending.popitem(last=False)

    def _remember_advice(self, key: tuple[str, str, str], decision: Decision) -> None:
        text = _advice_text(decision)
        if text:
            with self._guard:
                self._advice[key] = text
                while len(self._advice) > PENDING_LIMIT:
                    self._advice.popitem(last=False)


def guard(
    evaluator: Evaluator,
    *,
    session_id: SessionId = None,
    tools: Mapping[str, ToolSpec] | None = None,
    cwd: str = "",
    floor: str | None = None,
    shell_tools: Mapping[str, str] | None = None,
) -> Guard:
    """A :class:`Guard`: ``guard(ev, tools={"sh": ("Bash", {"cmd": "command"})}).protect(tool)``."""
    return Guard(
        evaluator,
        session_id=session_id,
        tools=tools,
        cwd=cwd,
        floor=floor,
        shell_tools=shell_tools,
    )


def tool_input_guardrail(
    evaluator: Evaluator,
    *,
    session_id: SessionId = None,
    tools: Mapping[str, ToolSpec] | None = None,
    cwd: str = "",
) -> ToolInputGuardrail[Any]:
    """A ``ToolInputGuardrail`` on its own: allow, ``reject_content`` for a soft block (an
    ``override: user`` one too: nothing asks the user without :meth:`Guard.needs_approval`),
    ``raise_exception`` for a hard block."""
    return Guard(evaluator, session_id=session_id, tools=tools, cwd=cwd).input_guardrail


def tool_output_guardrail(
    evaluator: Evaluator,
    *,
    session_id: SessionId = None,
    tools: Mapping[str, ToolSpec] | None = None,
    cwd: str = "",
) -> ToolOutputGuardrail[Any]:
    """A ``ToolOutputGuardrail`` on its own: the PostToolUse accounting."""
    return Guard(evaluator, session_id=session_id, tools=tools, cwd=cwd).output_guardrail


def _require_sdk() -> None:
    """The SDK, or an ImportError that names the extra to install."""
    try:
        import agents  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "forge_policy.integrations.openai_agents needs the OpenAI Agents SDK: "
            'pip install "forge-policy[openai-agents]"'
        ) from exc


def _check_tools(tools: Mapping[str, ToolSpec]) -> dict[str, ToolSpec]:
    """``tools`` checked: a :class:`~forge_policy.ConfigError` names the entry that is wrong."""
    from forge_policy.errors import ConfigError

    checked: dict[str, ToolSpec] = {}
    for sdk_name, spec in tools.items():
        where = f"tools[{sdk_name!r}]"
        if isinstance(spec, str) and spec:
            checked[sdk_name] = spec
            continue
        if (
            isinstance(spec, tuple)
            and len(spec) == 2
            and isinstance(spec[0], str)
            and spec[0]
            and isinstance(spec[1], Mapping)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in spec[1].items())
        ):
            checked[sdk_name] = (spec[0], dict(spec[1]))
            continue
        raise ConfigError(
            f"{where}: expected a catalog tool name or (name, {{argument: catalog_argument}}), "
            f"got {spec!r}"
        )
    return checked


def _shell_tools(
    tools: Mapping[str, ToolSpec], shell_tools: Mapping[str, str] | None
) -> dict[str, str]:
    """``{function tool: argument holding its command}``: ``shell_tools`` when given, else
    every tool ``tools`` maps onto ``Bash``; a :class:`~forge_policy.ConfigError` names a bad
    entry."""
    from forge_policy.errors import ConfigError

    if shell_tools is not None:
        for name, argument in shell_tools.items():
            if not isinstance(argument, str) or not argument:
                raise ConfigError(
                    f"shell_tools[{name!r}]: expected the name of the argument holding the "
                    f"command, such as 'command', got {argument!r}"
                )
        return dict(shell_tools)
    found: dict[str, str] = {}
    for name, spec in tools.items():
        target, renames = (spec, {}) if isinstance(spec, str) else spec
        if target == "Bash":
            found[name] = next((k for k, v in renames.items() if v == "command"), "command")
    return found


def _asks_user(decision: Decision) -> bool:
    from forge_policy.model import OVERRIDE_BY_USER

    return decision.blocking is not None and decision.blocking.override_mode == OVERRIDE_BY_USER


def _advice_text(decision: Decision) -> str:
    """The nudges and warnings of an allowed call, and a line per audited override."""
    from forge_policy.render.outcome import override_notes

    return "\n\n".join([*decision.messages, *override_notes(decision)])


def _info(decision: Decision | Exception | None) -> dict[str, object] | None:
    """``output_info``: the decision in its JSON form (the run's guardrail results keep it)."""
    if decision is None or isinstance(decision, Exception):
        return None
    return decision.to_dict()


def _response(output: object) -> object:
    """The tool's output as PostToolUse's ``tool_response``: JSON-ready, else its text."""
    if output is None or isinstance(output, str | int | float | bool | list | dict):
        try:
            json.dumps(output)
        except (TypeError, ValueError):
            return str(output)
        return output
    return str(output)
