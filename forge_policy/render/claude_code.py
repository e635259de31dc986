"""Render a :class:`~forge_policy.Decision` as a Claude Code hook answer (SPEC §8).

The process always exits 0 and the JSON on stdout decides (Claude Code reads JSON only on exit 0;
exit 1 never blocks and exit 2 ignores the JSON):

====================================  ========================================================
decision                              stdout
====================================  ========================================================
nothing to show                       empty (the normal permission flow applies)
nudge / warning                       ``systemMessage`` (the user) and, where the event takes
                                      it, ``hookSpecificOutput.additionalContext`` (the model)
soft_block, override ``agent``        ``permissionDecision: "deny"`` + reason, hint and how to
                                      override; ``systemMessage``: the reason
soft_block, override ``user``         the same with ``permissionDecision: "ask"`` (the reason is
                                      shown to the user in the prompt)
hard_block                            ``"deny"``, the reason says it cannot be overridden, and
                                      top-level ``"override_allowed": false``
a block on a ``decision`` event       ``{"decision": "block", "reason": …}`` (UserPromptSubmit,
                                      Stop, PostToolUse — where the tool already ran — …)
a shell call rewritten (SPEC §13)     ``permissionDecision: "ask"`` (``"allow"`` under
                                      ``bypassPermissions``) + ``updatedInput``, and the advice
                                      of a nudge / warning (:func:`rewritten`)
====================================  ========================================================

``override_allowed`` is not in Claude Code's output schema: its parser drops unknown top-level
keys (logging them) and keeps the rest, so the deny stands. Events that cannot block get the
message as advice. Nudges on ``Stop``/``SubagentStop`` go to ``systemMessage`` only, because
``additionalContext`` there makes the conversation continue.

>>> from forge_policy import Event, Decision
>>> render(Decision(Event("PreToolUse", "s", tool_name="Read")), None)
('', 0)
"""

from __future__ import annotations

import json

from forge_policy.events import AFTER_TOOL_EVENTS
from forge_policy.model import OVERRIDE_BY_USER, OVERRIDE_NEVER
from forge_policy.render.outcome import override_notes, refusal_reason

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.model import Decision, Event

__all__ = ["advice", "answer", "dumps", "refusal_reason", "refuse", "render", "rewritten"]

#: Events whose ``hookSpecificOutput`` takes ``permissionDecision`` (CLI 2.1.332).
PERMISSION_EVENTS = frozenset({"PreToolUse", "PreSkillShellCommand", "PreModelSwitch"})
#: Events that block with top-level ``{"decision": "block", "reason": …}``.
DECISION_EVENTS = frozenset(
    {
        "UserPromptSubmit",
        "UserPromptExpansion",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "Stop",
        "SubagentStop",
        "ConfigChange",
        "PreCompact",
        "TaskCreated",
    }
)
#: Events that stop with ``{"continue": false, "stopReason": …}``.
CONTINUE_EVENTS = frozenset({"TeammateIdle", "TaskCompleted"})
#: Events whose ``hookSpecificOutput`` takes ``additionalContext`` for advice (Stop and
#: SubagentStop take it too, but there it keeps the conversation going: not advice).
CONTEXT_EVENTS = frozenset(
    {
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "Notification",
        "UserPromptSubmit",
        "UserPromptExpansion",
        "SessionStart",
        "Setup",
        "SubagentStart",
        "PostModelSwitch",
    }
)


def dumps(value: dict[str, Any]) -> str:
    """Compact JSON with non-ASCII kept, one line, as written to stdout."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def advice(event_name: str, text: str) -> dict[str, Any]:
    """``systemMessage`` for the user, plus ``additionalContext`` where the event takes it.

    >>> advice("PreToolUse", "hi")["hookSpecificOutput"]
    {'hookEventName': 'PreToolUse', 'additionalContext': 'hi'}
    >>> advice("Stop", "hi")
    {'systemMessage': 'hi'}
    """
    out: dict[str, Any] = {"systemMessage": text}
    if event_name in CONTEXT_EVENTS:
        out["hookSpecificOutput"] = {"hookEventName": event_name, "additionalContext": text}
    return out


def refuse(event_name: str, reason: str, summary: str, *, ask: bool = False) -> dict[str, Any]:
    """The blocking answer for ``event_name``: ``reason`` goes to the model (or the user's
    prompt for ``ask``), ``summary`` to the user's ``systemMessage``.

    >>> refuse("Stop", "run the tests first", "tests not run")
    {'decision': 'block', 'reason': 'run the tests first', 'systemMessage': 'tests not run'}
    """
    if event_name in PERMISSION_EVENTS:
        specific: dict[str, Any] = {
            "hookEventName": event_name,
            "permissionDecision": "ask" if ask else "deny",
            "permissionDecisionReason": reason,
        }
        return {"hookSpecificOutput": specific, "systemMessage": summary}
    if event_name == "PermissionRequest":
        if ask:  # the user is being asked already: leave the prompt to them, with the reason
            return {"systemMessage": reason}
        return {
            "hookSpecificOutput": {
                "hookEventName": event_name,
                "decision": {"behavior": "deny", "message": reason},
            },
            "systemMessage": summary,
        }
    if event_name in DECISION_EVENTS:
        if event_name in AFTER_TOOL_EVENTS:
            reason = f"The tool call already ran, but it broke a policy.\n{reason}"
        return {"decision": "block", "reason": reason, "systemMessage": summary}
    if event_name in CONTINUE_EVENTS:
        return {"continue": False, "stopReason": reason, "systemMessage": summary}
    return advice(event_name, reason)  # this event cannot block: say it


#: Shown in the permission prompt of a rewritten call (``permissionDecisionReason`` of an ask).
REWRITE_REASON = (
    "forge-policy runs this command inside its sandbox (the enforcement floor): it cannot write "
    "governance files, git hooks or the installation, nor read credential folders"
)


def rewritten(event: Event, new_input: dict[str, Any], text: str = "") -> dict[str, Any]:
    """A ``PreToolUse`` call let through with ``new_input`` (SPEC §13: the shell command under
    forge_policy's floor), the nudge or warning ``text`` kept as advice.

    ``updatedInput`` takes effect only with a ``permissionDecision`` (anthropics/claude-code
    #32060, closed unimplemented 2026): ``"allow"`` would also skip the user's permission
    prompt, and the user's allow/deny rules are matched against the rewritten command (#65393),
    so the answer is ``"ask"``: the user sees and approves the rewritten command ("combine
    with ``ask`` to modify the input and show it to the user for confirmation", hooks
    reference, 2026-01-12). Under ``bypassPermissions`` the user chose not to be asked: there
    it is ``"allow"``, which grants nothing that mode does not.

    >>> from forge_policy import Event
    >>> out = rewritten(Event("PreToolUse", "s", tool_name="Bash"), {"command": "bwrap …"})
    >>> out["hookSpecificOutput"]["permissionDecision"], out["hookSpecificOutput"]["updatedInput"]
    ('ask', {'command': 'bwrap …'})
    """
    auto = event.permission_mode == "bypassPermissions"
    specific: dict[str, Any] = {
        "hookEventName": event.event_name,
        "permissionDecision": "allow" if auto else "ask",
        "permissionDecisionReason": REWRITE_REASON,
        "updatedInput": new_input,
    }
    out: dict[str, Any] = {}
    if text:
        out["systemMessage"] = text
        specific["additionalContext"] = text
    out["hookSpecificOutput"] = specific
    return out


def render(decision: Decision, event: Event | None = None) -> tuple[str, int]:
    """``(stdout_text, exit_code)`` for one decision; the exit code is always 0.

    ``event`` defaults to ``decision.event``. The blocking violation's ``override_mode`` says
    whether to deny or ask.
    """
    out = answer(decision, event)
    return (dumps(out) if out is not None else ""), 0


def answer(decision: Decision, event: Event | None = None) -> dict[str, Any] | None:
    """The hook answer as a JSON-ready dict, or None when there is nothing to say (the form
    an in-process harness such as the Claude Agent SDK returns from its hook callback)."""
    event = event if event is not None else decision.event
    name = event.event_name
    notes = override_notes(decision)
    blocking = decision.blocking
    if blocking is None:
        text = "\n\n".join([*decision.messages, *notes])
        if decision.updated_input is not None and name == "PreToolUse":
            return rewritten(event, dict(decision.updated_input), text)
        return advice(name, text) if text else None
    summary = blocking.message.split("\n", 1)[0]
    # under bypassPermissions the engine already turned such a block into allow + advisory
    ask = blocking.override_mode == OVERRIDE_BY_USER
    out = refuse(name, refusal_reason(decision), summary, ask=ask)
    if notes:
        out["systemMessage"] = "\n\n".join([out["systemMessage"], *notes])
    if blocking.override_mode == OVERRIDE_NEVER:
        out["override_allowed"] = False
    return out
