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

from forge_policy.catalog.behavior import render
from forge_policy.levels import Level, next_threshold

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

    from forge_policy.catalog.behavior import Behavior
    from forge_policy.model import Event

NUDGE_LIMIT = 120
#: The fixed template variables (``{counter}``…); ``{facts.NAME}`` and
#: ``{session.totals.NAME}`` come beside them. ``validate`` warns about any other.
TEMPLATE_VARIABLES = (
    "behavior_id",
    "behavior_name",
    "counter",
    "tool_name",
    "level",
    "threshold",
    "hint",
)
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
) -> str:
    """The text of ``behavior``'s violation at ``level`` (the ``counter``-th of the session):
    the nudge (one line, at most :data:`NUDGE_LIMIT` characters), the warning with its
    correction, or the block reason with its correction and how (or that it cannot) be
    overridden."""
    threshold = next_threshold(counter, behavior.escalation)
    values = TemplateValues(
        {
            "behavior_id": behavior.id,
            "behavior_name": behavior.name,
            "counter": counter,
            "tool_name": event.tool_name,
            "level": level.label,
            "threshold": "max" if threshold is None else threshold,
            "hint": behavior.hint,
        },
        facts,
        totals,
    )
    t = behavior.templates
    if level <= Level.NUDGE:
        text = " ".join(render(t["nudge_template"], values).split())
        return text if len(text) <= NUDGE_LIMIT else text[: NUDGE_LIMIT - 1] + "…"
    correction = [f"Do instead: {behavior.hint}"] if behavior.hint else []
    if behavior.suggested_action or behavior.suggested_tool:
        tool = f"{behavior.suggested_tool}: " if behavior.suggested_tool else ""
        correction.append(f"Suggested: {tool}{behavior.suggested_action}".rstrip(": "))
    if level is Level.WARNING:
        return "\n".join([render(t["warning_template"], values).strip(), *correction])
    reason = render(t["block_reason"], values).strip()
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
            f'--session {event.session_id} --reason "..."'
        )
    return "\n".join(lines)


class TemplateValues(Mapping[str, object]):
    """Template variables: the fixed ones, plus ``{facts.NAME}`` and ``{session.totals.NAME}``
    computed when a template names them (numbers with thousands separators, lists joined by
    commas), so a message can say what the rule measured.

    >>> values = TemplateValues({"counter": 2}, lambda name: [".env", ".npmrc"], {"t": 151000})
    >>> render("{counter}: {facts.files}; {session.totals.t}; {facts}", values)
    '2: .env, .npmrc; 151,000; {facts}'
    """

    __slots__ = ("_base", "_facts", "_totals")

    def __init__(
        self,
        base: dict[str, object],
        facts: Callable[[str], object] | None,
        totals: Mapping[str, Any] | None,
    ) -> None:
        self._base = base
        self._facts = facts
        self._totals = totals

    def __getitem__(self, name: str) -> object:
        if name in self._base:
            return self._base[name]
        if name.startswith("facts.") and len(name) > 6 and self._facts is not None:
            from forge_policy.secrets import redact  # a fact may quote the call's input

            return redact(shown(self._facts(name[6:])))
        if name.startswith("session.totals.") and len(name) > 15 and self._totals is not None:
            return shown(self._totals.get(name[15:], 0))
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        try:
            self[str(name)]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(self._base)

    def __len__(self) -> int:
        return len(self._base)


def shown(value: object) -> str:
    """A fact or total as message text.

    >>> shown(True), shown(1234.0), shown(2.25), shown(list(range(12))), shown(None)
    ('yes', '1,234', '2.2', '0, 1, 2, 3, 4, 5, 6, 7, 8, 9, …', '')
    """
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"
    if isinstance(value, list | tuple):
        items = [str(item) for item in value[:10]]
        return ", ".join(items + (["…"] if len(value) > 10 else []))
    return "" if value is None else str(value)
