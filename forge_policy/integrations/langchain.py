"""The LangChain adapter (extra ``langchain``): :class:`ForgePolicyMiddleware`, an
``AgentMiddleware`` that puts an :class:`~forge_policy.Evaluator` in front of every tool call of
a ``create_agent`` agent.

``create_agent(model, tools, middleware=[ForgePolicyMiddleware(evaluator)], …)``. For each tool
call, ``wrap_tool_call`` (and ``awrap_tool_call``) decides a PreToolUse event *before* the tool
runs:

- allow → the tool runs; nudges and warnings are appended to its result, so the model reads
  them;
- a block → the tool does not run; the model gets an error ``ToolMessage`` (``status="error"``,
  the call's ``tool_call_id``) carrying the engine's message;
- an ``override: user`` soft block → a LangGraph ``interrupt`` shaped like
  ``HumanInTheLoopMiddleware``'s per-call one (``{"type": "tool_approval", "tool_call_id",
  "name", "args", "description"}``, the description being the engine's reason); resume with
  ``Command(resume={"type": "approve"})`` or ``{"type": "reject", "message": …}``. Interrupts
  need a checkpointer. The node re-runs on resume: the decision taken before the interrupt is
  reused, not taken (and counted) again, as long as the same middleware object resumes it.

After the tool ran, its result is recorded as a PostToolUse event (``PostToolUseFailure`` for
an error result), which keeps token-budget totals and records a user's approval.

The user's prompt: the turn's first model call (the conversation ends with a ``HumanMessage``)
decides it as UserPromptSubmit in ``wrap_model_call``. Nudges and warnings join the system
message of that call; a block answers in the model's place (an ``AIMessage`` with the reason and
no tool call, so the run ends); a prompt that could not be decided goes through with a note.

Tool names: the built-in catalog speaks Claude Code's vocabulary (``Bash`` with ``command``,
``Read`` with ``file_path``…). Map your tools onto it with ``tools=``: ``{"shell": "Bash"}``
keeps the arguments as they are, ``{"run": ("Bash", {"cmd": "command"})}`` renames ``cmd`` to
``command`` too. Unmapped tools keep their LangChain name (a catalog of your own can match it).

**The floor** (SPEC §13): an allowed (or user-approved) call of a shell tool runs with its
command rewritten (``request.override(tool_call=…)``) to run under forge_policy's own sandbox
(:mod:`forge_policy.floor.sandbox`); the engine decided, and PostToolUse records, the original.
``floor=`` chooses (``"own"``, ``"off"``; default: the project's ``floor:`` in
``<FORGE_ROOT>/config.yaml``, where ``harness`` means ``own``: LangChain has no sandbox of its
own). ``shell_tools=`` maps shell tool names onto the argument holding the command (a string,
or a list of strings, each rewritten); by default LangChain's ``ShellToolMiddleware`` tool
(``shell``: ``command``), ``langchain_community``'s ``ShellTool`` (``terminal``: ``commands``)
and every tool ``tools=`` maps onto ``Bash``. ``project=`` is where the commands run (default:
the working directory). A ``ShellToolMiddleware`` session keeps its shell between calls; under
the floor each command runs in a fresh sandboxed ``bash``, so ``cd`` and variables do not carry
over from one call to the next.

The session is ``session_id=`` when given (a string, or a function of the ``ToolCallRequest``,
the ``ModelRequest`` for a prompt), else the LangGraph thread
(``config["configurable"]["thread_id"]``); with neither, one middleware object is one session.
The async path runs the evaluator in a worker thread (:func:`asyncio.to_thread`), so store I/O
never blocks the event loop; calls on one evaluator are serialized. Anything that stops the
evaluation refuses the call (fail closed).

``import forge_policy`` never imports LangChain; importing this module does (without the extra,
building the middleware raises an :class:`ImportError` naming it).

Subagents (issue 27): a ``create_agent`` agent's middleware sees no subagent id or type (a
subagent built as a tool is another agent with its own middleware and ``thread_id``): every
call is the root thread's.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict

from forge_policy.integrations._embedding import could_not_decide as _could_not_decide
from forge_policy.integrations._embedding import evaluate as _evaluate
from forge_policy.integrations._embedding import session as _session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping
    from typing import Any, TypeAlias

    from langchain.agents.middleware import AgentMiddleware, AgentState
    from langchain.agents.middleware.types import ModelRequest, ModelResponse, ToolCallRequest
    from langchain_core.messages import AIMessage, ToolMessage
    from langgraph.types import Command

    from forge_policy.engine.evaluator import Evaluator
    from forge_policy.model import Decision, Event

    #: What a ``tools=`` entry maps a LangChain tool onto: a catalog tool name, or a tool name
    #: and the renaming of its arguments (``("Bash", {"cmd": "command"})``).
    ToolTarget = str | tuple[str, Mapping[str, str]]
    #: A fixed session id, or a function of the ``ToolCallRequest`` (the ``ModelRequest`` for a
    #: user prompt).
    SessionId = str | Callable[[Any], str] | None
    # explicit aliases: without the extra (mypy in a venv without it) they are Any, not errors
    ToolResult: TypeAlias = ToolMessage | Command[Any]
    ModelResult: TypeAlias = ModelResponse[Any] | AIMessage

    _Base: TypeAlias = AgentMiddleware[AgentState[Any], Any, Any]
else:

    def _base() -> type:
        try:
            from langchain.agents.middleware import AgentMiddleware
        except ImportError as exc:  # the extra is missing: say so when the middleware is built
            problem = f"{type(exc).__name__}: {exc}"

            class AgentMiddleware:
                def __init__(self, *args: object, **kwargs: object) -> None:
                    raise ImportError(
                        "ForgePolicyMiddleware needs LangChain: "
                        f"pip install 'forge-policy[langchain]' ({problem})"
                    )

        return AgentMiddleware

    _Base = _base()

#: The name recorded as the events' ``harness`` (and ``agent``).
HARNESS = "langchain"
#: Decisions of calls waiting for the user, kept per middleware for the node's re-run.
_MAX_ASKED = 1024
#: Shell tools and the argument holding their command, besides those ``tools=`` maps onto Bash:
#: ``ShellToolMiddleware``'s ``shell`` and ``langchain_community``'s ``ShellTool``.
SHELL_TOOLS = {"shell": "command", "terminal": "commands"}


class ForgePolicyMiddleware(_Base):
    """Decide every tool call of a ``create_agent`` agent with ``evaluator`` (see the module).

    ``tools`` maps LangChain tool names onto the catalog's (``{"shell": "Bash"}``, or
    ``{"run": ("Bash", {"cmd": "command"})}`` to rename arguments too); ``session_id`` replaces
    the LangGraph thread id; ``floor``, ``shell_tools`` and ``project`` set the floor of shell
    tools (see the module). For example::

        policy = ForgePolicyMiddleware(fp.Evaluator(fp.builtin_catalog()), tools={"sh": "Bash"})
        agent = create_agent(model, [sh], middleware=[policy], checkpointer=InMemorySaver())
        agent.invoke({"messages": [("user", "clean up")]}, {"configurable": {"thread_id": "t"}})
    """

    def __init__(
        self,
        evaluator: Evaluator,
        *,
        session_id: SessionId = None,
        tools: Mapping[str, ToolTarget] | None = None,
        floor: str | None = None,
        shell_tools: Mapping[str, str] | None = None,
        project: str | None = None,
    ) -> None:
        from forge_policy.integrations._floor import ShellFloor

        super().__init__()
        self.evaluator = evaluator
        self.session_id = session_id
        self.tool_names = _check_tools(tools or {})
        self.floor = ShellFloor(floor, project=project, harness=HARNESS)
        self.shell_tools = _shell_tools(self.tool_names, shell_tools)
        self._fallback_session = f"{HARNESS}-{secrets.token_hex(8)}"
        # the sync tool node runs a turn's tool calls in parallel threads
        self._asked: OrderedDict[tuple[str, str], Decision] = OrderedDict()
        self._asked_lock = threading.Lock()

    # -- the user's prompt -----------------------------------------------------------------

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResult],
    ) -> ModelResult:
        """The first model call after a user's message decides it as UserPromptSubmit: a block
        answers in the model's place, nudges and warnings join the system message."""
        if _prompt(request) is None:
            return handler(request)
        decision, notes = self._prompt_decision(request)
        return _prompt_refusal(decision) or handler(_with_system_notes(request, notes))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResult]],
    ) -> ModelResult:
        """:meth:`wrap_model_call` for async agents: the evaluator runs in a worker thread."""
        import asyncio

        if _prompt(request) is None:
            return await handler(request)
        decision, notes = await asyncio.to_thread(self._prompt_decision, request)
        return _prompt_refusal(decision) or await handler(_with_system_notes(request, notes))

    def _prompt_decision(self, request: ModelRequest[Any]) -> tuple[Decision | None, list[str]]:
        """The prompt's decision and the notes for the model; a prompt that could not be
        decided goes through with a note saying so (only a tool call is refused for it)."""
        from forge_policy.model import Event

        try:
            session_id = self._session(request)
            payload = {"hook_event_name": "UserPromptSubmit", "session_id": session_id}
            event = Event(
                "UserPromptSubmit",
                session_id,
                prompt=_prompt(request) or "",
                harness=HARNESS,
                payload=payload,
            )
            decision = _evaluate(self.evaluator, event)
        except Exception as exc:
            return None, [_could_not_decide(exc, refused=False)]
        return decision, _shown(decision)

    # -- the tool call -------------------------------------------------------------------

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolResult],
    ) -> ToolResult:
        """Decide the call, then run it (or answer in its place), then record its result."""
        try:
            event = self._event(request, "PreToolUse")
            decision = self._asked_decision(event)
            if decision is None:
                decision = _evaluate(self.evaluator, event)
        except Exception as exc:  # fail closed: a call that could not be decided is refused
            return _refusal(request, _could_not_decide(exc, refused=True))
        refused = self._gate(request, event, decision)
        if refused is not None:
            return refused
        floored, refused = self._floored(request)
        if refused is not None:
            return refused
        try:
            result = handler(floored)
        except Exception as exc:
            self._after(event, "PostToolUseFailure", f"{type(exc).__name__}: {exc}")
            raise
        notes = self._after(event, *_outcome(result))
        return _with_notes(result, [*_shown(decision), *notes])

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        """:meth:`wrap_tool_call` for async agents: the evaluator runs in a worker thread."""
        import asyncio

        try:
            event = self._event(request, "PreToolUse")
            decision = self._asked_decision(event)
            if decision is None:
                decision = await asyncio.to_thread(_evaluate, self.evaluator, event)
        except Exception as exc:  # fail closed: a call that could not be decided is refused
            return _refusal(request, _could_not_decide(exc, refused=True))
        refused = self._gate(request, event, decision)
        if refused is not None:
            return refused
        floored, refused = await asyncio.to_thread(self._floored, request)
        if refused is not None:
            return refused
        try:
            result = await handler(floored)
        except Exception as exc:
            failure = f"{type(exc).__name__}: {exc}"
            await asyncio.to_thread(self._after, event, "PostToolUseFailure", failure)
            raise
        notes = await asyncio.to_thread(self._after, event, *_outcome(result))
        return _with_notes(result, [*_shown(decision), *notes])

    def _gate(
        self, request: ToolCallRequest, event: Event, decision: Decision
    ) -> ToolMessage | None:
        """None to run the call; else the message the model gets instead. An ``override: user``
        soft block interrupts the graph (the first time: LangGraph re-runs the node on resume,
        and ``interrupt`` then returns the user's answer)."""
        from forge_policy.model import OVERRIDE_BY_USER
        from forge_policy.render.outcome import refusal_reason

        blocking = decision.blocking
        if blocking is None:
            return None
        reason = refusal_reason(decision)
        if blocking.override_mode != OVERRIDE_BY_USER:
            return _refusal(request, reason)
        if not event.tool_use_id:  # the user's approval could not be matched to the call
            return _refusal(request, f"{reason}\n(The call has no id, so it cannot be approved.)")
        key = _key(event)
        with self._asked_lock:
            self._asked[key] = decision
            while len(self._asked) > _MAX_ASKED:
                self._asked.popitem(last=False)
        try:
            answer = _ask(request, reason)  # raises GraphInterrupt until the graph is resumed
        except Exception as exc:
            if _answer_later(exc):
                raise
            with self._asked_lock:
                self._asked.pop(key, None)
            return _refusal(request, f"{reason}\n{_could_not_decide(exc, refused=True)}")
        with self._asked_lock:
            self._asked.pop(key, None)
        if answer.get("type") == "approve":
            return None
        said = answer.get("message")
        refusal = f"{reason}\n\nThe user refused this call" + (f": {said}" if said else ".")
        return _refusal(request, refusal)

    def _floored(self, request: ToolCallRequest) -> tuple[ToolCallRequest, ToolMessage | None]:
        """The request a shell tool runs: its command under the floor (or as it is, when the
        floor is off or the tool no shell); a refusal when the floor cannot be applied."""
        call = request.tool_call
        argument = self.shell_tools.get(call.get("name") or "")
        args = call.get("args")
        if argument is None or not isinstance(args, dict) or argument not in args:
            return request, None
        from forge_policy.integrations._floor import rewrite_argument

        def rewrite(command: str) -> str:
            return self.floor.command(command) or command

        try:
            value = rewrite_argument(args[argument], rewrite)
        except Exception as exc:  # fail closed: a floor that cannot be applied refuses the call
            return request, _refusal(request, _could_not_decide(exc, refused=True))
        if value == args[argument]:
            return request, None
        return request.override(tool_call={**call, "args": {**args, argument: value}}), None

    def _asked_decision(self, event: Event) -> Decision | None:
        """The decision taken before the interrupt this call is waiting on: LangGraph re-runs
        the node on resume, and the call must not be decided (and counted) twice."""
        with self._asked_lock:
            return self._asked.get(_key(event))

    def _after(self, before: Event, event_name: str, response: object) -> list[str]:
        """Record that the call ran (or failed); the messages the model should read."""
        from forge_policy.model import Event

        payload = {**before.payload, "hook_event_name": event_name}
        payload["tool_response" if event_name == "PostToolUse" else "error"] = response
        event = Event(
            event_name,
            before.session_id,
            tool_name=before.tool_name,
            tool_input=before.tool_input,
            tool_use_id=before.tool_use_id,
            harness=HARNESS,
            payload=payload,
        )
        try:
            return list(_evaluate(self.evaluator, event).messages)
        except Exception as exc:  # the tool already ran: say so, refuse nothing
            return [_could_not_decide(exc, refused=False)]

    # -- translation -----------------------------------------------------------------------

    def _event(self, request: ToolCallRequest, event_name: str) -> Event:
        from forge_policy.model import Event

        call = request.tool_call
        name = call.get("name")
        args = call.get("args")
        if not isinstance(name, str) or not name:
            from forge_policy.errors import EventError

            raise EventError(f"tool_call: name: expected a non-empty string, got {name!r}")
        if not isinstance(args, dict):
            from forge_policy.errors import EventError

            raise EventError(f"tool_call: args: expected an object, got {type(args).__name__}")
        tool_name, tool_input = self._translate(name, args)
        call_id = call.get("id") or ""
        session_id = self._session(request)
        payload = {
            "hook_event_name": event_name,
            "session_id": session_id,
            "tool_name": tool_name,
            "tool_input": tool_input,
            "tool_use_id": call_id,
            "langchain_tool_name": name,
        }
        return Event(
            event_name,
            session_id,
            tool_name=tool_name,
            tool_input=tool_input,
            tool_use_id=call_id,
            harness=HARNESS,
            payload=payload,
        )

    def _translate(self, name: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        target = self.tool_names.get(name)
        if target is None:
            return name, args
        tool_name, renames = target
        return tool_name, {renames.get(key, key): value for key, value in args.items()}

    def _session(self, request: ToolCallRequest | ModelRequest[Any]) -> str:
        if self.session_id is not None:
            return _session(self.session_id, request)
        runtime = getattr(request, "runtime", None)
        config = getattr(runtime, "config", None)  # a tool's runtime has it, the model's not
        if config is None:
            from langgraph.config import get_config

            try:
                config = get_config()
            except RuntimeError:  # called outside a graph run
                config = {}
        thread = (config.get("configurable") or {}).get("thread_id")
        if thread is None or thread == "":
            return self._fallback_session
        return str(thread)  # LangGraph accepts a UUID too


def _check_tools(tools: Mapping[str, ToolTarget]) -> dict[str, tuple[str, dict[str, str]]]:
    """``tools=`` as ``{langchain name: (catalog name, argument renames)}``; a
    :class:`TypeError` naming the entry when it is neither form."""
    checked: dict[str, tuple[str, dict[str, str]]] = {}
    for name, target in tools.items():
        renames: object = {}
        if isinstance(target, tuple) and len(target) == 2:
            target, renames = target
        if (
            not isinstance(name, str)
            or not isinstance(target, str)
            or not target
            or not isinstance(renames, dict)
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in renames.items())
        ):
            raise TypeError(
                f"tools[{name!r}]: expected a tool name such as 'Bash', or a tool name and "
                f"argument names such as ('Bash', {{'cmd': 'command'}}), got {tools[name]!r}"
            )
        checked[name] = (target, dict(renames))
    return checked


def _shell_tools(
    tool_names: Mapping[str, tuple[str, dict[str, str]]], shell_tools: Mapping[str, str] | None
) -> dict[str, str]:
    """``{tool name: argument holding its command}``: ``shell_tools`` when given, else
    :data:`SHELL_TOOLS` and every tool ``tools=`` maps onto ``Bash`` (the argument that becomes
    ``command``); a :class:`TypeError` naming a bad entry."""
    if shell_tools is not None:
        for name, argument in shell_tools.items():
            if not isinstance(name, str) or not isinstance(argument, str) or not argument:
                raise TypeError(
                    f"shell_tools[{name!r}]: expected the name of the argument holding the "
                    f"command, such as 'command', got {argument!r}"
                )
        return dict(shell_tools)
    found = dict(SHELL_TOOLS)
    for name, (target, renames) in tool_names.items():
        if target == "Bash":
            found[name] = next((k for k, v in renames.items() if v == "command"), "command")
    return found


def _key(event: Event) -> tuple[str, str]:
    return (event.session_id, event.tool_use_id)


def _ask(request: ToolCallRequest, reason: str) -> dict[str, Any]:
    """The user's answer to a LangGraph interrupt in ``HumanInTheLoopMiddleware``'s per-call
    shape: approve or reject."""
    from typing import Annotated, cast

    from langchain.agents.middleware.human_in_the_loop import ApproveDecision, RejectDecision
    from langgraph.types import interrupt
    from pydantic import Discriminator

    call = request.tool_call
    value = {
        "type": "tool_approval",
        "tool_call_id": call.get("id") or "",
        "name": call["name"],
        "args": call["args"],
        "description": reason,
    }
    schema = Annotated[ApproveDecision | RejectDecision, Discriminator("type")]
    answer = interrupt(value, response_schema=cast("Any", schema))
    return dict(answer) if isinstance(answer, dict) else {"type": "reject"}


def _answer_later(exc: Exception) -> bool:
    """Whether ``exc`` is LangGraph pausing for the user (``GraphInterrupt``) or rejecting an
    answer that does not fit the schema (nothing is saved: the user answers again). Anything
    else (no graph run to pause, say) refuses the call."""
    from langgraph.errors import GraphBubbleUp
    from pydantic import ValidationError

    return isinstance(exc, GraphBubbleUp | ValidationError)


def _refusal(request: ToolCallRequest, text: str) -> ToolMessage:
    from langchain_core.messages import ToolMessage

    call = request.tool_call
    return ToolMessage(
        content=text, name=call.get("name"), tool_call_id=call.get("id") or "", status="error"
    )


def _prompt(request: ModelRequest[Any]) -> str | None:
    """The user's prompt when the conversation ends with it (the turn's first model call;
    later ones follow tool results), else None."""
    from langchain_core.messages import HumanMessage

    last = request.messages[-1] if request.messages else None
    return str(last.text) if isinstance(last, HumanMessage) else None


def _prompt_refusal(decision: Decision | None) -> AIMessage | None:
    """The answer in the model's place for a blocked prompt: the engine's reason, no tool call
    (so the run ends there)."""
    if decision is None or decision.blocking is None:
        return None
    from langchain_core.messages import AIMessage

    from forge_policy.render.outcome import refusal_reason

    return AIMessage(content=refusal_reason(decision), name="forge-policy")


def _with_system_notes(request: ModelRequest[Any], notes: list[str]) -> ModelRequest[Any]:
    """The request with the engine's notes after its system message (for this call only)."""
    if not notes:
        return request
    from langchain_core.messages import SystemMessage

    text = "\n\n".join(notes)
    system = request.system_message
    if system is None:
        return request.override(system_message=SystemMessage(content=text))
    content: Any = system.content
    if isinstance(content, str):
        content = f"{content}\n\n{text}" if content else text
    else:
        content = [*content, {"type": "text", "text": text}]
    return request.override(system_message=SystemMessage(content=content))


def _shown(decision: Decision) -> list[str]:
    """What the model is shown beside an event that goes on: its messages, and the notices (a
    last known good catalog enforcing: LangChain has no channel to the user of its own)."""
    return [*decision.messages, *decision.notices] if decision.blocking is None else []


def _outcome(result: ToolResult) -> tuple[str, object]:
    """The after-tool event of a result and what it carries: its content."""
    message = _tool_message(result)
    if message is None:
        return "PostToolUse", {}
    if message.status == "error":
        return "PostToolUseFailure", message.content
    return "PostToolUse", message.content


def _tool_message(result: ToolResult) -> ToolMessage | None:
    from langchain_core.messages import ToolMessage

    if isinstance(result, ToolMessage):
        return result
    update = getattr(result, "update", None)
    messages = update.get("messages") if isinstance(update, dict) else None
    found = [m for m in messages or () if isinstance(m, ToolMessage)]
    return found[-1] if found else None


def _with_notes(result: ToolResult, notes: list[str]) -> ToolResult:
    """The tool's result with the engine's nudges and warnings after it (a ``Command`` is
    returned as it is: its messages are the tool's own)."""
    from langchain_core.messages import ToolMessage

    if not notes or not isinstance(result, ToolMessage):
        return result
    text = "\n\n".join(notes)
    content: Any = result.content
    if isinstance(content, str):
        content = f"{content}\n\n{text}" if content else text
    elif all(isinstance(block, str) for block in content):
        content = [*content, text]
    else:
        content = [*content, {"type": "text", "text": text}]
    return result.model_copy(update={"content": content})
