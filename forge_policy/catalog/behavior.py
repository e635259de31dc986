"""A behavior compiled for evaluation: triggers as callables, enforcement as :mod:`levels` data.

Built from the *normalised spec*, the plain-JSON form of a validated behavior file. The loader
produces that form (and the compiled cache stores it), so this module never sees YAML.
"""

from __future__ import annotations

from forge_policy.catalog.dsl import Condition, compile_matcher
from forge_policy.events import MATCHER_SUBJECT
from forge_policy.levels import Level, Step
from forge_policy.model import ConditionResult

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from forge_policy.catalog.dsl import Scope
    from forge_policy.model import Event

ACTIONS = ("evaluate", "set_flag", "check_flag", "accumulate", "reset_total")
CATEGORIES = ("core", "opinionated", "experimental")
PROFILES = ("minimal", "standard", "strict")
DEFAULT_PROFILE = "standard"

#: Used where a behavior file has no template of its own. ``{hint}`` (the recovery hint) is an
#: extra variable beside SPEC §5's six.
DEFAULT_TEMPLATES: dict[str, str] = {
    "nudge_template": "{behavior_name} ({counter}): {hint}",
    "warning_template": "[{behavior_id}] {behavior_name}: violation {counter} in this session "
    "(next escalation at {threshold}).",
    "block_reason": "[{behavior_id}] {behavior_name}: this call is refused.",
    "override_prompt": "",
}
TEMPLATE_LIMITS: dict[str, int] = {
    "nudge_template": 120,
    "warning_template": 500,
    "block_reason": 200,
    "override_prompt": 500,
}


def render(template: str, values: Mapping[str, object]) -> str:
    """Literal ``{name}`` substitution: values are inserted verbatim, never re-interpreted.

    Unknown ``{names}`` and stray braces are kept as written.

    >>> render("{tool_name} x{counter}", {"tool_name": "a{b}&|\\\\", "counter": 2})
    'a{b}&|\\\\ x2'
    """
    out: list[str] = []
    i = 0
    n = len(template)
    while i < n:
        start = template.find("{", i)
        if start < 0:
            out.append(template[i:])
            break
        end = template.find("}", start + 1)
        if end < 0:
            out.append(template[i:])
            break
        name = template[start + 1 : end]
        out.append(template[i:start])
        if name in values:
            out.append(str(values[name]))
            i = end + 1
        else:
            out.append("{")
            i = start + 1
    return "".join(out)


class Trigger:
    """One compiled entry of ``policy.triggers``."""

    __slots__ = (
        "action",
        "conditions",
        "event",
        "flag",
        "index",
        "logic",
        "match_subject",
        "matcher",
        "on_absent",
        "on_present",
        "subject_key",
        "total",
        "value_field",
    )

    def __init__(self, index: int, spec: Mapping[str, Any]) -> None:
        self.index = index
        self.event: str = spec["event"]
        self.matcher: str = spec.get("matcher") or ""
        self.subject_key = MATCHER_SUBJECT.get(self.event)
        self.match_subject: Callable[[str], bool] = compile_matcher(self.matcher)
        self.conditions = tuple(
            Condition(c["field"], c["operator"], c.get("value")) for c in spec.get("conditions", ())
        )
        self.logic: str = spec.get("logic", "all")
        self.action: str = spec.get("action", "evaluate")
        self.flag: str = spec.get("flag", "")
        self.on_present: str = spec.get("on_present", "")
        self.on_absent: str = spec.get("on_absent", "")
        self.total: str = spec.get("total", "")
        self.value_field = (
            Condition(spec["value"], "exists", None) if self.action == "accumulate" else None
        )

    def fires_on(self, event: Event) -> bool:
        """Whether the event kind and the matcher select this trigger."""
        if event.event_name != self.event:
            return False
        if self.subject_key is None:
            return True
        subject = event.top_level(self.subject_key)
        return self.match_subject(subject if isinstance(subject, str) else "")

    def test(self, scope: Scope, explain: bool = False) -> tuple[bool, list[ConditionResult]]:
        """Evaluate the conditions (short-circuit unless ``explain``); empty means always."""
        results: list[ConditionResult] = []
        if not self.conditions:
            return True, results
        want_all = self.logic == "all"
        outcome = want_all
        for condition in self.conditions:
            matched, actual = condition(scope)
            results.append(
                ConditionResult(
                    condition.field, condition.operator, condition.value, actual, matched
                )
            )
            if matched != want_all:
                outcome = not want_all
                if not explain:
                    break
        return outcome, results

    def describe(self) -> str:
        """A short human form, e.g. ``PreToolUse[Write|Edit] check_flag(search_ready)``."""
        matcher = f"[{self.matcher}]" if self.matcher else ""
        flag = f"({self.flag or self.total})" if self.flag or self.total else ""
        return f"{self.event}{matcher} {self.action}{flag}"


class Behavior:
    """One governance rule, compiled. Build with :func:`forge_policy.load_catalog`."""

    __slots__ = (
        "applies_agents",
        "applies_profiles",
        "applies_tools",
        "bypass",
        "category",
        "default_level",
        "description",
        "enabled",
        "escalation",
        "events",
        "hint",
        "id",
        "level_cap",
        "mode",
        "name",
        "override",
        "scope",
        "source",
        "spec",
        "suggested_action",
        "suggested_tool",
        "templates",
        "triggers",
    )

    def __init__(self, spec: Mapping[str, Any]) -> None:
        self.spec = spec
        self.id: str = spec["id"]
        self.name: str = spec["name"]
        self.description: str = spec.get("description", "")
        self.category: str = spec.get("category", "core")
        self.scope: str = spec.get("scope", "session")
        self.enabled: bool = spec.get("enabled", True)
        self.source: str = spec.get("source", "")
        self.triggers = tuple(Trigger(i, t) for i, t in enumerate(spec["triggers"]))
        self.events = frozenset(t.event for t in self.triggers)
        self.default_level = Level.parse(spec["default_level"])
        self.escalation = tuple(
            Step(after, Level.parse(level)) for after, level in spec.get("escalation", ())
        )
        self.override: str = spec.get("override", "agent")
        self.mode: str = spec.get("mode", "enforce")
        self.bypass: str = spec.get("bypass", "allowed")
        # project tuning "relaxed" (catalog/tuning.py) caps the level even when an earlier
        # escalation in the session went higher
        cap = spec.get("level_cap")
        self.level_cap: Level | None = Level.parse(cap) if cap else None
        self.hint: str = spec.get("hint", "")
        self.suggested_tool: str = spec.get("suggested_tool", "")
        self.suggested_action: str = spec.get("suggested_action", "")
        self.templates: dict[str, str] = {**DEFAULT_TEMPLATES, **spec.get("templates", {})}
        applies = spec.get("applies_to", {})
        self.applies_tools = frozenset(applies.get("tools", ()))
        self.applies_agents = frozenset(applies.get("agents", ()))
        self.applies_profiles = frozenset(applies.get("profiles", ()))

    def applies_to(self, event: Event, profile: str) -> bool:
        """The ``applies_to`` filters; an empty list admits everything.

        The tool filter only concerns events that name a tool.
        """
        if self.applies_tools and event.tool_name and event.tool_name not in self.applies_tools:
            return False
        if self.applies_agents and event.agent not in self.applies_agents:
            return False
        return not self.applies_profiles or profile in self.applies_profiles

    def with_enabled(self, enabled: bool) -> Behavior:
        """A copy with another ``enabled`` value."""
        return Behavior({**self.spec, "enabled": enabled})

    def __repr__(self) -> str:
        state = "" if self.enabled else " disabled"
        return f"<Behavior {self.id} {self.default_level.label}{state}>"
