"""The Claude Code adapter: the reference harness, whose payload already is the catalog's shape.

Its answer is :func:`forge_policy.render.claude_code.render` (always exit 0, the JSON decides);
this module gives it the adapter interface every harness in :mod:`~forge_policy.harness.registry`
has: ``normalize`` (payload → Claude Code-shaped payload), ``to_event``, ``render`` and
``failure`` (the ``FORGE_ON_ERROR`` answer). Wire format: ``/work/shared``-vetted Claude Code
hooks reference (CLI 2.1.332, docs of 2026-08-22), SPEC §8.

>>> ev = to_event({"session_id": "s", "hook_event_name": "Stop"})
>>> ev.event_name, ev.harness
('Stop', 'claude-code')
>>> failure("PreToolUse", "deny", "broken")[0][:60]
'{"hookSpecificOutput":{"hookEventName":"PreToolUse","permiss'
"""

from __future__ import annotations

import json

from forge_policy.events import BLOCKABLE_TOOL_EVENTS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.model import Decision, Event

NAME = "claude-code"


def normalize(payload: dict[str, Any], event: str = "") -> dict[str, Any]:
    """The payload itself (``event`` from the command line is not needed: Claude Code names it)."""
    return payload


def to_event(payload: dict[str, Any], event: str = "") -> Event:
    """The :class:`~forge_policy.Event` of a Claude Code payload."""
    from forge_policy.model import Event

    return Event.from_claude_code(normalize(payload, event))


def render(decision: Decision, event: Event) -> tuple[str, int]:
    """``(stdout, exit code)``: the Claude Code answer, exit 0."""
    from forge_policy.render.claude_code import render as render_claude

    return render_claude(decision, event)


def failure(event_name: str, on_error: str, problem: str) -> tuple[str, int]:
    """A refusal at a tool call that can still be refused (``deny``); a notice elsewhere."""
    from forge_policy.render.outcome import error_notice, error_refusal

    if on_error == "deny" and event_name in BLOCKABLE_TOOL_EVENTS:
        from forge_policy.render.claude_code import dumps, refuse

        reason = error_refusal(problem)
        return dumps(refuse(event_name, reason, reason)), 0
    return json.dumps({"systemMessage": error_notice(on_error, problem)}, ensure_ascii=False), 0
