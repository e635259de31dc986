"""What a violation says (SPEC §2, §5 templates): the nudge line, the warning, the block reason.

Harness-neutral text: every renderer (Claude Code, the chat channels) shows it word for word.

>>> import forge_policy as fp
>>> from forge_policy.levels import Level
>>> behavior = fp.builtin_catalog()["search-first"]
>>> event = fp.Event("PreToolUse", "s1", tool_name="Write")
>>> text = message(behavior, Level.SOFT_BLOCK, 5, event, 60.0)
>>> text.splitlines()[-1].startswith("To override: repeat the identical call within 60 s")
True
"""

from __future__ import annotations

from collections.abc import Mapping

from forge_policy.events import READ_FROM
from forge_policy.levels import Level, next_threshold
from forge_policy.templates import TemplateValues, render

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from forge_policy.catalog.behavior import Behavior, Trigger
    from forge_policy.model import Event

NUDGE_LIMIT = 120
#: The last line of every hard block's reason.
CANNOT_OVERRIDE = "This block cannot be overridden."
#: The last line of a soft block of an ``override: user`` behavior.
USER_OVERRIDE_LINE = "Overriding needs the user's approval: the user is asked to allow this call."


def message(
    behavior: Behavior,
    level: Level,
    counter: int,
    event: Event,
    override_window: float,
    facts: Callable[[str], object] | None = None,
    totals: Mapping[str, Any] | None = None,
    call_id: str = "",
    trigger: Trigger | None = None,
) -> str:
    """The text of ``behavior``'s violation at ``level`` (the ``counter``-th of the session):
    the nudge (one line, at most :data:`NUDGE_LIMIT` characters), the warning with its
    correction, or the block reason with its correction and how (or that it cannot) be
    overridden; a soft block names its call by ``call_id`` (``override --call``).

    The correction ("Do instead", "Suggested") is the matched ``trigger``'s own ``recovery``
    when it has one, else the behavior's (:meth:`Behavior.recovery_for`)."""
    threshold = next_threshold(counter, behavior.escalation)
    hint, suggested_tool, suggested_action = behavior.recovery_for(trigger)
    values = TemplateValues(
        {
            "behavior_id": behavior.id,
            "behavior_name": behavior.name,
            "counter": counter,
            "tool_name": shown_tool(event),
            "level": level.label,
            "threshold": "max" if threshold is None else threshold,
            "hint": hint,
        },
        facts,
        totals,
        event,
    )
    t = behavior.templates
    if level <= Level.NUDGE:
        text = tagged(behavior.id, " ".join(render(t["nudge_template"], values).split()))
        return text if len(text) <= NUDGE_LIMIT else text[: NUDGE_LIMIT - 1] + "…"
    correction = [f"Do instead: {hint}"] if hint else []
    if suggested_action or suggested_tool:
        tool = f"{suggested_tool}: " if suggested_tool else ""
        correction.append(f"Suggested: {tool}{suggested_action}".rstrip(": "))
    if level is Level.WARNING:
        warning = tagged(behavior.id, render(t["warning_template"], values).strip())
        return "\n".join([warning, *correction])
    reason = tagged(behavior.id, render(t["block_reason"], values).strip())
    lines = [reason, *correction]
    if level is Level.HARD_BLOCK:
        if "cannot be overridden" not in reason:
            lines.append(CANNOT_OVERRIDE)
        return "\n".join(lines)
    prompt = render(t["override_prompt"], values).strip()
    if prompt:
        lines.append(prompt)
    if behavior.override == "user":
        lines.append(USER_OVERRIDE_LINE)
    else:
        lines.append(
            f"To override: repeat the identical call within {int(override_window)} s (once), "
            f"or ask the user to run: forge-policy override {behavior.id} "
            f"--session {event.session_id}{f' --call {call_id}' if call_id else ''} "
            '--reason "..."'
        )
    return "\n".join(lines)


def shown_tool(event: Event) -> str:
    """The tool name a message shows: the harness's, and for an MCP call read as a built-in
    tool (:func:`forge_policy.facts.mcp.read_as`) the tool it was read as.

    >>> import forge_policy as fp
    >>> shown_tool(fp.Event("PreToolUse", "s", tool_name="Bash",
    ...                     payload={"forge_read_from": "mcp__shell__run"}))
    'mcp__shell__run (read as Bash)'
    """
    sent = event.payload.get(READ_FROM)
    if isinstance(sent, str) and sent:
        return f"{sent} (read as {event.tool_name})"
    return event.tool_name


def tagged(behavior_id: str, text: str) -> str:
    """``text`` led by ``[behavior_id]``, unless its template already names it there: every
    message says which behavior spoke (``forge-policy explain``, ``off``, ``override`` take
    the id).

    >>> tagged("search-first", "Search first (1): read before writing")
    '[search-first] Search first (1): read before writing'
    >>> tagged("b", "[b] already tagged")
    '[b] already tagged'
    """
    tag = f"[{behavior_id}]"
    return text if text.startswith(tag) else f"{tag} {text}"
