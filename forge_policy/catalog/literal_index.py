"""Which of an event's candidate behaviors can match it, found by the literals they need.

Most behaviors of a large catalog deny one thing: their trigger's first condition is a regex (or
``contains``) on a field of the event, such as ``command``. Such a trigger matches only if the
field's text holds one of the pattern's required literals
(:func:`forge_policy.catalog.prefilter.required_literals`). A :class:`LiteralPlan` collects, for
one event name and matcher subject, one key literal per alternative of each such trigger; for
an event it resolves each field once and looks all its key literals up at once (one
``re2.Set`` match when there are many, ``in`` when few), so the cost stays flat as the catalog
grows. Behaviors it cannot reason about (facts, session fields, ``any`` logic, unmodelled
patterns) are always visited; a behavior of this plan that no key literal selects would change
nothing: a trigger whose first required condition fails takes no action.

Only fields of the event itself are indexed, never ``facts.*``: an event field is always known,
so a first condition found false here is false, and a trigger whose first condition names a fact
that could not be computed (undetermined, see :mod:`forge_policy.catalog.dsl`) is always
visited, never skipped into an allow.
"""

from __future__ import annotations

from types import MappingProxyType

from forge_policy.catalog.dsl import Scope, as_text, event_only_field
from forge_policy.catalog.prefilter import required_literals
from forge_policy.values import Unknown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from forge_policy.catalog.behavior import Behavior, Trigger
    from forge_policy.model import Event

#: a field with fewer key literals is searched with ``in``; more, with one ``re2.Set`` (the
#: crossover measured: 8 literals 0.41 µs by ``in``, 0.52 µs by the set; 24: 0.87 vs 0.53)
SET_THRESHOLD = 12


def _facts_unused(_name: str) -> object:
    return ""  # never called: only fields without a session or facts namespace are indexed


#: the flags and totals of the scope a field is read through: never read either (event fields
#: only), so one read-only empty mapping serves every event instead of two new dicts each
_NO_VALUES: Mapping[str, Any] = MappingProxyType({})


def _fires(trigger: Trigger, event: Event, subject: str | None) -> bool:
    if subject is None:
        return trigger.fires_on(event)
    if trigger.event != event.event_name:
        return False
    return trigger.subject_key is None or trigger.match_subject(subject)


def _key_literals(trigger: Trigger) -> tuple[str, bool, list[str]] | None:
    """(field, casefold, one literal per alternative) that a match of ``trigger`` needs."""
    conditions = trigger.conditions
    if not conditions or trigger.logic != "all":
        return None
    first = conditions[0]
    if not event_only_field(first.field):
        return None
    if first.operator == "contains":
        literal = as_text(first.value)
        return (first.field, False, [literal]) if literal else None
    if first.operator != "regex_match":
        return None
    requirement = required_literals(as_text(first.value))
    if requirement is None:
        return None
    literals = [max(alternative, key=len) for alternative in requirement.alternatives]
    return first.field, requirement.casefold, literals


def _escaped(literal: str) -> str:
    return "".join(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):x}}}" for c in literal)


class _FieldLiterals:
    """The key literals looked for in one field (casefolded or not), with their behaviors."""

    __slots__ = ("_set", "casefold", "literals", "owners", "resolve")

    def __init__(self, resolve: Callable[[Scope], object], casefold: bool) -> None:
        self.resolve = resolve
        self.casefold = casefold
        self.literals: list[str] = []
        self.owners: list[set[int]] = []
        self._set: Any = None

    def add(self, literal: str, position: int) -> None:
        if literal in self.literals:
            self.owners[self.literals.index(literal)].add(position)
        else:
            self.literals.append(literal)
            self.owners.append({position})

    def text(self, event: Event) -> str | None:
        """The field's text to look the literals up in; None when the field could not be
        read (an MCP call's unreadable argument, :mod:`forge_policy.facts.mcp`): every
        literal is then taken as found (undetermined is never skipped into an allow)."""
        value = self.resolve(Scope(event, 0, _NO_VALUES, _NO_VALUES, _facts_unused))
        if type(value) is Unknown:
            return None
        # a list matches when one item does: joined, each item's literals are still found
        text = "\n".join(as_text(v) for v in value) if isinstance(value, list) else as_text(value)
        return text.casefold() if self.casefold else text

    def present(self, text: str) -> list[int]:
        """The indices of the literals found in ``text``."""
        literals = self.literals
        if len(literals) < SET_THRESHOLD:
            return [i for i, literal in enumerate(literals) if literal in text]
        if self._set is None:
            from forge_policy.catalog.dsl import compile_literal_set

            self._set = compile_literal_set([_escaped(literal) for literal in literals])
        found: list[int] | None = self._set.Match(text)  # None when nothing is found
        return found or []


class LiteralPlan:
    """For one event name and subject: the candidates (declaration positions) to visit.

    >>> from forge_policy.catalog.behavior import Behavior
    >>> from forge_policy.model import Event
    >>> rules = [Behavior({"id": f"r{i}", "name": "R", "default_level": "hard_block",
    ...     "triggers": [{"event": "PreToolUse", "conditions": [
    ...         {"field": "command", "operator": "regex_match", "value": f"tool{i}\\\\s"}]}]})
    ...     for i in range(3)]
    >>> def bash(command):
    ...     return Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": command})
    >>> plan = LiteralPlan(rules, [0, 1, 2], bash(""))
    >>> plan.visit(bash("tool2 --go")), plan.visit(bash("ls"))
    ([2], [])
    """

    __slots__ = ("always", "fields")

    def __init__(self, behaviors: tuple[Behavior, ...] | list[Behavior], positions: list[int],
                 event: Event, subject: str | None = None) -> None:  # fmt: skip
        self.always: list[int] = []
        self.fields: dict[tuple[str, bool], _FieldLiterals] = {}
        for position in positions:
            behavior = behaviors[position]
            # fires_on depends only on the event name and subject: the same for every event
            # this plan serves (``subject``: this one only, not also the name an MCP call
            # read as a built-in tool was sent under)
            firing = [t for t in behavior.triggers if _fires(t, event, subject)]
            if not firing:
                continue
            keys = [_key_literals(trigger) for trigger in firing]
            if any(key is None for key in keys):
                self.always.append(position)
                continue
            for trigger, key in zip(firing, keys, strict=True):
                assert key is not None
                field, casefold, literals = key
                group = self.fields.get((field, casefold))
                if group is None:
                    resolve = trigger.conditions[0].resolve
                    group = self.fields[(field, casefold)] = _FieldLiterals(resolve, casefold)
                for literal in literals:
                    group.add(literal, position)

    def visit(self, event: Event) -> list[int]:
        """The positions to visit for ``event``, in declaration order."""
        if not self.fields:
            return self.always
        live = set(self.always)
        for group in self.fields.values():
            try:
                text = group.text(event)
                found = group.present(text) if text is not None else range(len(group.literals))
            except Exception:  # an odd text the set cannot search: visit them all (safe)
                found = range(len(group.literals))
            for index in found:
                live |= group.owners[index]
        return sorted(live) if live else []  # most events of a deny catalog: no literal found
