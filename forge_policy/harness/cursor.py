"""The Cursor adapter (``forge-policy hook --harness cursor``).

Sources, read 2026-12-01: the Cursor "Hooks" docs page (cursor.com/docs/agent/hooks, stored
copy of ≈ mid-2026 with ``preToolUse``, ``workspaceOpen`` and ``failClosed``), as vetted in
``harness-protocols.md`` §3.3.

Input: every event has ``conversation_id`` (the session), ``generation_id``,
``hook_event_name``, ``workspace_roots``, ``transcript_path``. The agent's tool calls arrive
twice: once generic (``preToolUse`` with ``tool_name`` ``Shell``/``Read``/``Write``/… and
``tool_input``) and once per kind: ``beforeShellExecution`` (``command``, ``cwd``) → ``Bash``,
``beforeReadFile`` (``file_path``, ``content``) → ``Read``, ``beforeMCPExecution``
(``tool_name``, ``tool_input`` as JSON text, ``mcp_server_name``) → ``mcp__<server>__<tool>``;
after the call ``postToolUse``, ``afterShellExecution``, ``afterMCPExecution``,
``afterFileEdit`` (``file_path``, ``edits``) → ``PostToolUse``. ``beforeSubmitPrompt`` is
``UserPromptSubmit``; ``stop`` is ``Stop``.

Output, exit 0 with JSON: ``{"permission": "deny", "user_message": …, "agent_message": …}``
before a call; ``"ask"`` is enforced only by ``beforeShellExecution`` and
``beforeMCPExecution`` (``preToolUse`` accepts it but does not enforce it: a deny there);
``{"continue": false, "user_message": …}`` refuses a prompt; ``{"followup_message": …}`` keeps
the agent going after ``stop``; ``additional_context`` informs the model after a call and at
``sessionStart``. Advice before a call is ``user_message``/``agent_message`` without a
``permission``, so Cursor's own approval flow is unchanged. Cursor fails open when a hook
crashes or times out unless the entry says ``"failClosed": true``.

>>> ev = to_event({"conversation_id": "c1", "hook_event_name": "beforeShellExecution",
...     "command": "git push --force", "cwd": "/p"})
>>> ev.event_name, ev.tool_name, ev.tool_input["command"], ev.session_id
('PreToolUse', 'Bash', 'git push --force', 'c1')
"""

from __future__ import annotations

from forge_policy.harness.common import (
    arguments,
    catalog_event,
    claude_payload,
    dumps,
    mcp_name,
    native_event,
    text,
    with_aliases,
)
from forge_policy.harness.registry import CURSOR

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.model import Decision, Event

NAME = CURSOR.name
#: Events answered with ``permission`` (before a call).
PERMISSION_EVENTS = frozenset(
    {"preToolUse", "beforeShellExecution", "beforeMCPExecution", "beforeReadFile"}
)
#: Events answered with ``followup_message``.
FOLLOWUP_EVENTS = frozenset({"stop", "subagentStop"})
#: Events whose answer takes ``additional_context``.
CONTEXT_EVENTS = frozenset({"postToolUse", "sessionStart"})


def normalize(payload: dict[str, Any], event: str = "") -> dict[str, Any]:
    """The Cursor payload in the catalog's vocabulary."""
    native = text(payload, "hook_event_name") or event
    name = catalog_event(CURSOR, native)
    roots = payload.get("workspace_roots")
    root = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else ""
    tool, args = _tool(native, payload)
    fields: dict[str, Any] = {}
    if native in FOLLOWUP_EVENTS:
        loops = payload.get("loop_count")
        fields["stop_hook_active"] = isinstance(loops, int) and loops > 0
    return claude_payload(
        payload,
        harness_event=native,
        event=name,
        session_id=text(payload, "conversation_id", "session_id"),
        cwd=text(payload, "cwd") or root,
        tool_name=tool,
        tool_input=args,
        **fields,
    )


def _tool(native: str, payload: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """The catalog tool name and arguments of a tool event (``("", None)`` otherwise)."""
    if native in ("beforeShellExecution", "afterShellExecution"):
        args = {"command": payload.get("command", "")}
        if native == "afterShellExecution":
            args["output"] = payload.get("output")
        return "Bash", args
    if native == "beforeReadFile":
        return "Read", {"file_path": payload.get("file_path", "")}
    if native == "afterFileEdit":
        edits = payload.get("edits")
        first = edits[0] if isinstance(edits, list) and edits and isinstance(edits[0], dict) else {}
        args = {"file_path": payload.get("file_path", ""), "edits": edits}
        args.update({k: first[k] for k in ("old_string", "new_string") if k in first})
        return "Edit", args
    if native in ("beforeMCPExecution", "afterMCPExecution"):
        server = text(payload, "mcp_server_name")
        tool = text(payload, "tool_name")
        args = arguments(payload.get("tool_input"), "tool_input")
        return (mcp_name(server, tool) if server else tool), args
    if native in ("preToolUse", "postToolUse", "postToolUseFailure"):
        tool = text(payload, "tool_name")
        if tool.startswith("MCP:"):
            tool = f"mcp__{tool[4:]}"
        return CURSOR.tools.get(tool, tool), with_aliases(
            arguments(payload.get("tool_input"), "tool_input")
        )
    return "", None


def to_event(payload: dict[str, Any], event: str = "") -> Event:
    """The :class:`~forge_policy.Event` of a Cursor hook payload."""
    from forge_policy.model import Event

    return Event.from_claude_code(normalize(payload, event), harness=NAME)


def render(decision: Decision, event: Event) -> tuple[str, int]:
    """``(stdout, exit code)`` for Cursor (see the module docstring)."""
    from forge_policy.render.outcome import outcome

    name = native_event(event)
    said = outcome(decision, can_ask=name in CURSOR.ask_events, title=CURSOR.title)
    if said is None:
        return "", 0
    if not said.blocked:
        return _advice(name, said.advice), 0
    if name in PERMISSION_EVENTS:
        if said.ask:
            out = {"permission": "ask", "user_message": said.reason, "agent_message": said.reason}
        else:
            out = {"permission": "deny", "user_message": said.summary, "agent_message": said.reason}
        if name == "beforeReadFile":
            out.pop("agent_message")  # beforeReadFile answers permission and user_message only
            out["user_message"] = said.reason
        return dumps(out), 0
    if name == "beforeSubmitPrompt":
        return dumps({"continue": False, "user_message": said.reason}), 0
    if name in FOLLOWUP_EVENTS:
        return dumps({"followup_message": said.reason}), 0
    if name in CONTEXT_EVENTS:
        reason = f"The tool call already ran, but it broke a policy.\n{said.reason}"
        return dumps({"additional_context": reason}), 0
    return _advice(name, said.reason), 0


def _advice(name: str, message: str) -> str:
    if name in PERMISSION_EVENTS:
        return dumps({"user_message": message, "agent_message": message})
    if name in CONTEXT_EVENTS:
        return dumps({"additional_context": message})
    if name in ("beforeSubmitPrompt", "preCompact"):
        return dumps({"user_message": message})
    return ""  # Cursor reads nothing else at this event


def failure(event_name: str, on_error: str, problem: str) -> tuple[str, int]:
    """``FORGE_ON_ERROR=deny`` refuses a call before it runs; elsewhere a notice if Cursor
    shows one at that event."""
    from forge_policy.render.outcome import error_notice, error_refusal

    if on_error == "deny" and event_name in PERMISSION_EVENTS:
        reason = error_refusal(problem)
        return dumps({"permission": "deny", "user_message": reason, "agent_message": reason}), 0
    return _advice(event_name or "preToolUse", error_notice(on_error, problem)), 0
