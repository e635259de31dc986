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

A shell call forge_policy's own floor holds (SPEC §13) is let through rewritten at
``preToolUse`` only, the one event whose output has ``updated_input`` (with ``permission``);
``beforeShellExecution`` answers a permission and messages, so there the call is only decided.
Cursor may still ask for a command outside the user's allow-list after a hook's ``allow``.

>>> from forge_policy.harness.registry import get
>>> to_event = get("cursor").adapter.to_event
>>> ev = to_event({"conversation_id": "c1", "hook_event_name": "beforeShellExecution",
...     "command": "git push --force", "cwd": "/p"})
>>> ev.event_name, ev.tool_name, ev.tool_input["command"], ev.session_id
('PreToolUse', 'Bash', 'git push --force', 'c1')
>>> ev = to_event({"conversation_id": "c2", "hook_event_name": "subagentStart",
...     "subagent_id": "sa1", "subagent_type": "explore", "parent_conversation_id": "c1"})
>>> ev.event_name, ev.session_id, ev.agent_id, ev.agent
('SubagentStart', 'c1', 'sa1', 'explore')
"""

from __future__ import annotations

from forge_policy.harness.common import (
    CommandHookAdapter,
    arguments,
    mcp_name,
    text,
    with_aliases,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.harness.registry import Harness
    from forge_policy.render.outcome import Outcome

#: Events answered with ``permission`` (before a call).
PERMISSION_EVENTS = frozenset(
    {"preToolUse", "beforeShellExecution", "beforeMCPExecution", "beforeReadFile"}
)
#: Events answered with ``followup_message``.
FOLLOWUP_EVENTS = frozenset({"stop", "subagentStop"})
#: Events whose answer takes ``additional_context``.
CONTEXT_EVENTS = frozenset({"postToolUse", "sessionStart"})


class CursorAdapter(CommandHookAdapter):
    """Cursor: each kind of call under its own event, the session as ``conversation_id``; the
    answer's fields differ by event (``permission``, ``continue``, ``followup_message``,
    ``additional_context``)."""

    __slots__ = ()

    def fields(self, payload: dict[str, Any], native: str, event: str) -> dict[str, Any]:
        roots = payload.get("workspace_roots")
        root = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else ""
        tool, args = _tool(self.harness, native, payload)
        fields: dict[str, Any] = {
            "session_id": text(payload, "conversation_id", "session_id"),
            "cwd": text(payload, "cwd") or root,
            "tool_name": tool,
            "tool_input": args,
        }
        if native in FOLLOWUP_EVENTS:
            loops = payload.get("loop_count")
            fields["stop_hook_active"] = isinstance(loops, int) and loops > 0
        if native in ("subagentStart", "subagentStop"):
            fields.update(_subagent(payload, native))
        return fields

    def advice(self, name: str, said: Outcome) -> dict[str, Any] | None:
        return _advice(name, said.advice)

    def refusal(self, name: str, said: Outcome) -> dict[str, Any] | None:
        if name in PERMISSION_EVENTS:
            return _permission(name, said)
        if name == "beforeSubmitPrompt":
            return {"continue": False, "user_message": said.reason}
        if name in FOLLOWUP_EVENTS:
            return {"followup_message": said.reason}
        if name in CONTEXT_EVENTS:
            reason = f"The tool call already ran, but it broke a policy.\n{said.reason}"
            return {"additional_context": reason}
        return _advice(name, said.reason)

    def rewrite(self, name: str, said: Outcome | None, new_input: dict[str, Any]) -> dict[str, Any]:
        """``permission: "allow"`` with ``updated_input`` (``preToolUse``'s output), the nudge
        or warning kept as ``user_message``/``agent_message``."""
        out = _advice(name, said.advice) if said is not None and said.advice else None
        out = dict(out or {})
        out.update({"permission": "allow", "updated_input": new_input})
        return out

    def error_refusal(self, name: str, reason: str) -> dict[str, Any] | None:
        """``FORGE_ON_ERROR=deny`` refuses a call before it runs."""
        if name in PERMISSION_EVENTS:
            return {"permission": "deny", "user_message": reason, "agent_message": reason}
        return None

    def error_notice(self, name: str, notice: str) -> dict[str, Any] | None:
        """A notice if Cursor shows one at that event."""
        return _advice(name or "preToolUse", notice)


def _subagent(payload: dict[str, Any], native: str) -> dict[str, Any]:
    """A subagent's start and stop (issue 27): ``subagentStart`` names it (``subagent_id``,
    ``subagent_type``) and its parent (``parent_conversation_id``), so the start is recorded
    in the parent's session under the subagent's id; ``subagentStop`` gives only its type.
    Cursor's hook inputs inside a subagent name no subagent (the docs list no such field):
    its tool calls are the session's that their ``conversation_id`` names, on the root
    thread's share."""
    fields: dict[str, Any] = {"agent_type": text(payload, "subagent_type") or None}
    if native == "subagentStart":
        fields["agent_id"] = text(payload, "subagent_id") or None
        parent = text(payload, "parent_conversation_id")
        if parent:
            fields["session_id"] = parent
    return fields


def _tool(
    harness: Harness, native: str, payload: dict[str, Any]
) -> tuple[str, dict[str, Any] | None]:
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
        return harness.tools.get(tool, tool), with_aliases(
            arguments(payload.get("tool_input"), "tool_input")
        )
    return "", None


def _permission(name: str, said: Outcome) -> dict[str, Any]:
    """The answer before a call: ``ask`` where Cursor enforces it, else ``deny``."""
    if said.ask:
        out = {"permission": "ask", "user_message": said.reason, "agent_message": said.reason}
    else:
        out = {"permission": "deny", "user_message": said.summary, "agent_message": said.reason}
    if name == "beforeReadFile":
        out.pop("agent_message")  # beforeReadFile answers permission and user_message only
        out["user_message"] = said.reason
    return out


def _advice(name: str, message: str) -> dict[str, Any] | None:
    if name in PERMISSION_EVENTS:
        return {"user_message": message, "agent_message": message}
    if name in CONTEXT_EVENTS:
        return {"additional_context": message}
    if name in ("beforeSubmitPrompt", "preCompact"):
        return {"user_message": message}
    return None  # Cursor reads nothing else at this event
