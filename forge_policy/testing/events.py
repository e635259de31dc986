"""Builders of valid harness payloads, turned into :class:`~forge_policy.Event` the way the hook
does (``Event.from_claude_code``), so a test exercises the same parsing as production.

>>> ev = claude_code_event("Bash", command="git push -f", session_id="s1")
>>> ev.event_name, ev.tool_name, ev.tool_input["command"], ev.session_id
('PreToolUse', 'Bash', 'git push -f', 's1')
>>> claude_code_event("Bash", event="PostToolUse", command="ls").payload["tool_response"]
{}
>>> claude_code_prompt("hello").prompt
'hello'
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from forge_policy.model import Event

DEFAULT_SESSION = "test-session"
DEFAULT_CWD = "/home/user/project"

# events that carry a tool call (and so need tool_name, tool_input, tool_use_id)
_TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest")
_ids = itertools.count(1)


def _common(event: str, session_id: str, cwd: str, permission_mode: str) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "transcript_path": f"/home/user/.claude/projects/{session_id}/transcript.jsonl",
        "cwd": cwd,
        "permission_mode": permission_mode,
        "hook_event_name": event,
    }


def claude_code_payload(
    tool: str,
    *,
    session_id: str = DEFAULT_SESSION,
    event: str = "PreToolUse",
    cwd: str = DEFAULT_CWD,
    permission_mode: str = "default",
    tool_use_id: str | None = None,
    tool_response: object = None,
    agent_type: str | None = None,
    **tool_input: Any,
) -> dict[str, Any]:
    """The JSON object Claude Code sends on stdin for one tool event (see
    :func:`claude_code_event`)."""
    if event not in _TOOL_EVENTS:
        raise ValueError(
            f"claude_code_payload: event must be one of {', '.join(_TOOL_EVENTS)}, got {event!r}"
            " (use claude_code_prompt or claude_code_lifecycle for the others)"
        )
    payload = _common(event, session_id, cwd, permission_mode)
    payload["tool_name"] = tool
    payload["tool_input"] = dict(tool_input)
    if event != "PermissionRequest":  # the one tool event without a tool_use_id
        payload["tool_use_id"] = tool_use_id or f"toolu_test{next(_ids):06d}"
    if event == "PostToolUse":
        payload["tool_response"] = {} if tool_response is None else tool_response
    elif event == "PostToolUseFailure":
        payload["error"] = "failed" if tool_response is None else str(tool_response)
    if agent_type:
        payload["agent_type"] = agent_type
    return payload


def claude_code_event(
    tool: str,
    *,
    session_id: str = DEFAULT_SESSION,
    event: str = "PreToolUse",
    cwd: str = DEFAULT_CWD,
    permission_mode: str = "default",
    tool_use_id: str | None = None,
    tool_response: object = None,
    agent_type: str | None = None,
    **tool_input: Any,
) -> Event:
    """A Claude Code tool event: ``tool`` with ``tool_input`` from the keyword arguments.

    ``event`` is ``PreToolUse`` (default), ``PostToolUse`` (with ``tool_response``),
    ``PostToolUseFailure`` (``tool_response`` is the error text) or ``PermissionRequest``.
    """
    return Event.from_claude_code(
        claude_code_payload(
            tool,
            session_id=session_id,
            event=event,
            cwd=cwd,
            permission_mode=permission_mode,
            tool_use_id=tool_use_id,
            tool_response=tool_response,
            agent_type=agent_type,
            **tool_input,
        )
    )


def claude_code_prompt(
    prompt: str,
    *,
    session_id: str = DEFAULT_SESSION,
    cwd: str = DEFAULT_CWD,
    permission_mode: str = "default",
) -> Event:
    """A Claude Code ``UserPromptSubmit`` event."""
    payload = _common("UserPromptSubmit", session_id, cwd, permission_mode)
    payload["prompt"] = prompt
    return Event.from_claude_code(payload)


def claude_code_lifecycle(
    event: str,
    *,
    session_id: str = DEFAULT_SESSION,
    cwd: str = DEFAULT_CWD,
    permission_mode: str = "default",
    **fields: Any,
) -> Event:
    """Any other Claude Code event (``SessionStart``, ``Stop``, …) with sensible defaults for
    the fields the two common ones require; ``fields`` add or replace top-level keys.

    >>> claude_code_lifecycle("Stop").payload["stop_hook_active"]
    False
    """
    payload = _lifecycle_payload(event, session_id, cwd, permission_mode)
    payload.update(fields)
    return Event.from_claude_code(payload)


def _lifecycle_payload(
    event: str, session_id: str, cwd: str, permission_mode: str
) -> dict[str, Any]:
    payload = _common(event, session_id, cwd, permission_mode)
    if event == "SessionStart":
        payload["source"] = "startup"
    elif event in ("Stop", "SubagentStop"):
        payload["stop_hook_active"] = False
    return payload


def claude_code_payload_from(
    fields: Mapping[str, Any],
    *,
    session_id: str = DEFAULT_SESSION,
    cwd: str = DEFAULT_CWD,
) -> dict[str, Any]:
    """A whole payload from some of its fields (a behavior test's event): what the other
    builders fill in (``transcript_path``, a ``tool_use_id``, a ``SessionStart``'s source…) is
    added, ``hook_event_name`` is ``PreToolUse`` when absent, and ``fields`` win over it all
    but ``session_id``.

    >>> payload = claude_code_payload_from({"tool_name": "Bash", "tool_input": {"command": "ls"}},
    ...                                    session_id="s9")
    >>> payload["hook_event_name"], payload["session_id"], payload["tool_use_id"][:9]
    ('PreToolUse', 's9', 'toolu_tes')
    >>> claude_code_payload_from({"hook_event_name": "SessionStart"})["source"]
    'startup'
    """
    event = str(fields.get("hook_event_name") or "PreToolUse")
    permission_mode = str(fields.get("permission_mode") or "default")
    if event in _TOOL_EVENTS:
        payload = claude_code_payload(
            str(fields.get("tool_name", "")),
            session_id=session_id,
            event=event,
            cwd=cwd,
            permission_mode=permission_mode,
        )
    else:
        payload = _lifecycle_payload(event, session_id, cwd, permission_mode)
    payload.update(fields)
    payload["hook_event_name"] = event
    payload["session_id"] = session_id
    return payload
