"""A behavior compiled for evaluation: triggers as callables, enforcement as :mod:`levels` data.

Built from the *normalised spec*, the plain-JSON form of a validated behavior file. The loader
produces that form (and the compiled cache stores it), so this module never sees YAML.
"""

from __future__ import annotations

import json

import attrs

from forge_policy.catalog.dsl import (
    Condition,
    Scope,
    as_number,
    compile_matcher,
    compile_names,
    compile_verdict,
    event_only_field,
    matcher_names,
)
from forge_policy.catalog.prefilter import Requirement
from forge_policy.events import MATCHER_SUBJECT, READ_FROM
from forge_policy.levels import Level, Step, escalate
from forge_policy.model import ConditionResult
from forge_policy.templates import DEFAULT_TEMPLATES
from forge_policy.values import Partial

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from forge_policy.model import Event

    #: a condition's verdict, and its place among those an event asks more than once (-1: none)
    _Check = tuple[Callable[[Scope], bool | None], int]

#: at most this many (event name, subject) pairs a behavior remembers its firing triggers for
#: (tool names are the agent's to choose: MCP tools are many)
FIRING_MEMO_LIMIT = 64
ACTIONS = ("evaluate", "set_flag", "check_flag", "accumulate", "reset_total")
#: actions whose match only ever relaxes a rule: an undetermined trigger never takes them
_RELAXING_ACTIONS = frozenset({"set_flag", "reset_total"})
#: ``scope`` values that load (SPEC §5 ``session``; ``agent``: issue 27): whose counter a
#: violation's ladder climbs, the session's or the agent's it came from (the root thread is
#: an agent of its own). Both count toward the session's total.
SESSION_SCOPE = "session"
AGENT_SCOPE = "agent"
SCOPES = (SESSION_SCOPE, AGENT_SCOPE)
CATEGORIES = ("core", "opinionated", "experimental")
PROFILES = ("minimal", "standard", "strict")
DEFAULT_PROFILE = "standard"


def _set_all(instance: object, **values: object) -> None:
    """Fill the compiled (``init=False``) fields of a frozen attrs instance, once, when built."""
    for name, value in values.items():
        object.__setattr__(instance, name, value)


def undetermined_note(reasons: list[str]) -> str:
    """The line a violation decided on an undetermined fact carries (fail closed): a fact out
    of time, or a reading the command model could not complete (SPEC §6), each said as such.

    >>> note = undetermined_note(["fact 'shell_commands' timed out: used 300 ms of CPU"])
    >>> note.startswith("forge-policy could not inspect this call within its budget (fact")
    True
    >>> undetermined_note(["fact 'executed_commands' is incomplete: ${!X}"]).split(" (")[0]
    'forge-policy could not read this call in full'
    """
    if any("timed out" in reason or "budget" in reason for reason in reasons):
        return (
            f"forge-policy could not inspect this call within its budget ({'; '.join(reasons)}), "
            "so the rule decided as if it matched. Split the work into smaller calls, or ask "
            "the user to run it from their own shell."
        )
    return (
        f"forge-policy could not read this call in full ({'; '.join(reasons)}), so the rule "
        "decided as if it matched. Write the command so that what it runs is visible in it (no "
        "program or script computed when it runs), or ask the user to run it from their own "
        "shell."
    )


def _recovery(spec: Mapping[str, str] | None) -> tuple[str, str, str] | None:
    if not spec:
        return None
    return (
        spec.get("hint", ""),
        spec.get("suggested_tool", ""),
        spec.get("suggested_action", ""),
    )


@attrs.frozen(eq=False, repr=False)
class Trigger:
    """One compiled entry of ``policy.triggers``: ``Trigger(index, spec)``.

    A frozen attrs class built from its normalised spec; every other attribute is compiled from
    it once, at construction. Compared by identity, like the closures it holds.

    >>> trigger = Trigger(0, {"event": "PreToolUse", "matcher": "Bash", "action": "set_flag",
    ...                       "flag": "searched"})
    >>> trigger.index, trigger.action, trigger.flag, trigger.describe()
    (0, 'set_flag', 'searched', 'PreToolUse[Bash] set_flag(searched)')
    """

    index: int
    spec: Mapping[str, Any]
    event: str = attrs.field(init=False)
    matcher: str = attrs.field(init=False)
    subject_key: str | None = attrs.field(init=False)
    match_subject: Callable[[str], bool] = attrs.field(init=False)
    #: the subjects this trigger can fire on, when its matcher lists names and its event has a
    #: subject (what the catalog indexes); None: any subject may (``*``, a regex, no subject)
    subject_names: frozenset[str] | None = attrs.field(init=False)
    conditions: tuple[Condition, ...] = attrs.field(init=False)
    logic: str = attrs.field(init=False)
    action: str = attrs.field(init=False)
    flag: str = attrs.field(init=False)
    on_present: str = attrs.field(init=False)
    on_absent: str = attrs.field(init=False)
    total: str = attrs.field(init=False)
    value_field: Condition | None = attrs.field(init=False)
    #: ``keys`` (extension): the field whose strings key the flag, one flag per item
    keys_field: Condition | None = attrs.field(init=False)
    #: ``preview`` (extension): the accumulated total holds for this event only
    preview: bool = attrs.field(init=False)
    #: ``recovery`` (extension): ``(hint, suggested_tool, suggested_action)`` shown when this
    #: trigger is the one that matched, in place of the behavior's; None: the behavior's
    recovery: tuple[str, str, str] | None = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        spec = self.spec
        event: str = spec["event"]
        matcher: str = spec.get("matcher") or ""
        action: str = spec.get("action", "evaluate")
        subject_key = MATCHER_SUBJECT.get(event)
        _set_all(
            self,
            event=event,
            matcher=matcher,
            subject_key=subject_key,
            match_subject=compile_matcher(matcher),
            subject_names=matcher_names(matcher) if subject_key is not None else None,
            conditions=tuple(
                Condition(c["field"], c["operator"], c.get("value"))
                for c in spec.get("conditions", ())
            ),
            logic=spec.get("logic", "all"),
            action=action,
            flag=spec.get("flag", ""),
            on_present=spec.get("on_present", ""),
            on_absent=spec.get("on_absent", ""),
            total=spec.get("total", ""),
            value_field=(
                Condition(spec["value"], "exists", None) if action == "accumulate" else None
            ),
            keys_field=Condition(spec["keys"], "exists", None) if spec.get("keys") else None,
            preview=bool(spec.get("preview")),
            recovery=_recovery(spec.get("recovery")),
        )

    def __repr__(self) -> str:
        return f"<Trigger {self.index} {self.describe()}>"

    def fires_on(self, event: Event) -> bool:
        """Whether the event kind and the matcher select this trigger."""
        if event.event_name != self.event:
            return False
        if self.subject_key is None:
            return True
        subject = event.top_level(self.subject_key)
        if self.match_subject(subject if isinstance(subject, str) else ""):
            return True
        # an MCP call read as a built-in tool (facts.mcp.read_as): its own name selects too
        sent = event.payload.get(READ_FROM) if self.subject_key == "tool_name" else None
        return isinstance(sent, str) and self.match_subject(sent)

    def test(self, scope: Scope, explain: bool = False) -> tuple[bool, list[ConditionResult]]:
        """Evaluate the conditions (short-circuit unless ``explain``); empty means always.

        Three-valued (see :mod:`forge_policy.catalog.dsl`): a condition on an undetermined fact
        is unknown, and a trigger left unknown by its conditions matches when
        :meth:`fails_closed` says so. An unknown condition is recorded with the value assumed
        for it and its undetermined fact as ``actual``.

        >>> from forge_policy.catalog.dsl import Scope
        >>> from forge_policy.values import Unknown
        >>> from forge_policy.model import Event
        >>> trigger = Trigger(0, {"event": "PreToolUse", "conditions": [
        ...     {"field": "facts.shell_commands", "operator": "not_regex_match", "value": "^ls"}]})
        >>> event = Event("PreToolUse", "s", tool_name="Bash")
        >>> def scope(fail_closed):
        ...     return Scope(event, 0, {}, {}, lambda name: Unknown("timed out"), fail_closed)
        >>> trigger.test(scope(True))[0], trigger.test(scope(False))[0]
        (True, False)
        """
        results: list[ConditionResult] = []
        if not self.conditions:
            return True, results
        want_all = self.logic == "all"
        decided: bool | None = None
        unknown = False
        for condition in self.conditions:
            matched, actual = condition(scope)
            if matched is None:
                unknown = True
                matched = self.fails_closed(scope)
            else:
                if type(actual) is Partial:
                    actual = list(actual)  # decided by the items found: nothing was assumed
                if matched != want_all and decided is None:
                    decided = not want_all  # all: one false decides; any: one true does
            results.append(
                ConditionResult(
                    condition.field, condition.operator, condition.value, actual, matched
                )
            )
            if decided is not None and not explain:
                break
        if decided is not None:
            return decided, results
        if unknown:
            return self.fails_closed(scope), results
        return want_all, results

    def fails_closed(self, scope: Scope) -> bool:
        """Whether an unknown outcome counts as a match: when the behavior would block
        (``scope.fail_closed``), except for the actions whose match only relaxes a rule
        (``set_flag`` grants what a ``check_flag`` asks for, ``reset_total`` clears a budget),
        which an unknown never triggers."""
        return scope.fail_closed and self.action not in _RELAXING_ACTIONS

    def undetermined(self, results: list[ConditionResult]) -> list[str]:
        """Why a match found by :meth:`test` rests on undetermined facts: the reasons of the
        conditions assumed to match (empty when known conditions decided it alone)."""
        from forge_policy.values import undetermined

        assumed = [reason for r in results if r.matched and (reason := undetermined(r.actual))]
        if not assumed:
            return []
        if self.logic != "all" and any(
            r.matched and undetermined(r.actual) is None for r in results
        ):
            return []  # any: a known condition matched by itself
        return list(dict.fromkeys(assumed))

    def cannot_match(self, scope: Scope) -> bool:
        """True when the conditions surely fail: all are required and the first is false.

        Evaluates only what :meth:`test` evaluates first, so a caller may skip the trigger.
        An unknown first condition is not false: the trigger is evaluated.
        """
        conditions = self.conditions
        if not conditions or self.logic != "all":
            return False
        matched, _actual = conditions[0](scope)
        return matched is False

    def describe(self) -> str:
        """A short human form, e.g. ``PreToolUse[Write|Edit] check_flag(search_ready)``."""
        matcher = f"[{self.matcher}]" if self.matcher else ""
        name = self.flag or self.total
        if name and self.keys_field is not None:
            name = f"{name} per {self.keys_field.field}"
        elif name and self.preview:
            name = f"{name}, preview"
        flag = f"({name})" if name else ""
        return f"{self.event}{matcher} {self.action}{flag}"


class _FactLiterals:
    """Triggers of one behavior that only a ``regex_match`` on one fact (``facts.shell_commands``
    …) can open: their first required condition is one, or (``any``) all their conditions are.
    It holds the literals one of their matches needs, all together
    (:func:`~forge_policy.catalog.prefilter.required_literals`, none holding a newline), so
    that one look at the fact's items joined by newlines refutes them all at once."""

    __slots__ = ("alternatives", "casefold", "fact", "requirement")

    def __init__(self, fact: str, casefold: bool) -> None:
        self.fact = fact
        self.casefold = casefold
        self.alternatives: list[tuple[str, ...]] = []  # gathered, then frozen into requirement
        self.requirement = Requirement((), casefold)

    def refutes(self, scope: Scope) -> bool:
        """True when no trigger of the group can match: the fact is known (a plain list of
        strings, or a string that is not :class:`~forge_policy.values.Unknown`) and holds no
        literal a match of any of them needs. An undetermined fact (Unknown, Partial) or an
        unusual value refutes nothing: the triggers are then asked one by one."""
        value = scope.facts(self.fact)
        if type(value) is list:
            for item in value:  # a loop, not all(): no generator per call
                if type(item) is not str:
                    return False
            text = value[0] if len(value) == 1 else "\n".join(value)
        elif type(value) is str:
            text = value
        else:
            return False
        return not self.requirement.admits(text)


def _fact_regex(condition: Condition) -> tuple[str, Requirement] | None:
    """``(fact, requirement)`` of a ``regex_match`` on ``facts.NAME`` whose required literals
    hold no newline, else None."""
    if (
        condition.operator != "regex_match"
        or condition.regex is None
        or not condition.field.startswith("facts.")
        or len(condition.field) == len("facts.")
    ):
        return None
    requirement = condition.regex.joinable_requirement()
    return None if requirement is None else (condition.field[len("facts.") :], requirement)


def _opened_by(trigger: Trigger) -> tuple[str, bool, list[tuple[str, ...]]] | None:
    """``(fact, casefold, alternatives)`` when ``trigger`` matches only if that fact holds the
    literals of one of the alternatives: its first required condition (``all``), or every
    condition (``any``, one fact, one casefolding), is a :func:`_fact_regex`."""
    conditions = trigger.conditions
    if not conditions:
        return None
    if trigger.logic == "all":
        conditions = conditions[:1]
    found = [_fact_regex(condition) for condition in conditions]
    facts = {(f[0], f[1].casefold) for f in found if f is not None}
    if None in found or len(facts) != 1:
        return None
    fact, casefold = facts.pop()
    return fact, casefold, [a for f in found if f is not None for a in f[1].alternatives]


def _fact_groups(triggers: tuple[Trigger, ...]) -> tuple[_FactLiterals | None, ...] | None:
    """For each trigger, the :class:`_FactLiterals` it belongs to (None: asked alone); None
    when no group would hold two regexes."""
    groups: dict[tuple[str, bool], _FactLiterals] = {}
    members: dict[tuple[str, bool], int] = {}
    keys: list[tuple[str, bool] | None] = []
    for trigger in triggers:
        opened = _opened_by(trigger)
        if opened is None:
            keys.append(None)
            continue
        fact, casefold, alternatives = opened
        key = (fact, casefold)
        group = groups.get(key)
        if group is None:
            group = groups[key] = _FactLiterals(*key)
        group.alternatives.extend(alternatives)
        # an ``any`` trigger with two regexes is worth one look at its fact already
        regexes = 1 if trigger.logic == "all" else len(trigger.conditions)
        members[key] = members.get(key, 0) + regexes
        keys.append(key)
    if not any(count > 1 for count in members.values()):
        return None
    for group in groups.values():
        group.requirement = Requirement(tuple(group.alternatives), group.casefold)
    return tuple(groups[key] if key is not None and members[key] > 1 else None for key in keys)


def _decided(
    checks: tuple[_Check, ...], want_all: bool, scope: Scope, known: dict[int, bool | None]
) -> bool | None:
    """What :meth:`Trigger.test` decides on known conditions, evaluating the same conditions
    in the same order: True (matched), False (cannot match), None (an undetermined condition
    leaves it to :meth:`Trigger.fails_closed`). ``known``: the verdicts of this event's
    conditions asked before, by their place (see :class:`_Refutation`)."""
    unknown = False
    for verdict, place in checks:
        if place < 0:
            matched = verdict(scope)
        elif place in known:
            matched = known[place]
        else:
            matched = known[place] = verdict(scope)
        if want_all:
            if matched is False:
                return False  # all: one false decides, whatever came before
        elif matched:
            return True  # any: one true does
        if matched is None:
            unknown = True
    return None if unknown else want_all


def _per_event(field: str) -> bool:
    """Whether a condition on ``field`` decides the same all through one event: it reads the
    event or a fact, not the session's counter, flags or totals (which a preview changes)."""
    path = field.split(".")
    return event_only_field(field) or (len(path) >= 2 and path[0] == "facts")


class _Refutation:
    """How :meth:`Behavior.refute` shows that none of one tuple of firing triggers acts on an
    event, compiled once: for each trigger its group of regexes on one fact, its conditions,
    and whether it is a ``preview`` accumulate (which changes only this event's totals, and is
    carried out here: its total is what the refutation returns). A condition that several
    triggers hold alike (token-budget's ``tool_name`` test) is asked once per event when it
    does not read the session."""

    __slots__ = ("always", "groups", "shared", "steps")

    def __init__(self, triggers: tuple[Trigger, ...]) -> None:
        grouped = _fact_groups(triggers) or (None,) * len(triggers)
        #: each group once, in the order its first trigger comes
        self.groups = tuple({id(g): g for g in grouped if g is not None}.values())
        places = {id(g): n for n, g in enumerate(self.groups)}
        alike: dict[tuple[str, str, str], list[Condition]] = {}
        for trigger in triggers:
            for condition in trigger.conditions:
                if _per_event(condition.field):
                    value = json.dumps(condition.value, sort_keys=True, default=str)
                    alike.setdefault((condition.field, condition.operator, value), []).append(
                        condition
                    )
        shared = [same for same in alike.values() if len(same) > 1]
        place_of = {id(c): n for n, same in enumerate(shared) for c in same}
        #: whether some condition is asked by several triggers (see :func:`_decided`)
        self.shared = bool(shared)
        steps = []
        always = False
        for trigger, group in zip(triggers, grouped, strict=True):
            preview = trigger.action == "accumulate" and trigger.preview
            if not trigger.conditions and not preview:
                always = True  # matched whatever the event holds: its action is taken
            checks = tuple(
                (compile_verdict(c), place_of.get(id(c), -1)) for c in trigger.conditions
            )
            place = -1 if group is None else places[id(group)]
            steps.append((place, checks, trigger.logic == "all", preview, trigger))
        #: some trigger always acts: nothing to evaluate
        self.always = always
        self.steps: tuple[tuple[int, tuple[_Check, ...], bool, bool, Trigger], ...] = tuple(steps)

    def __call__(self, scope: Scope) -> tuple[tuple[str, float], ...] | None:
        if self.always:
            return None
        # allocated only when the plan has what they hold (most plans: one trigger, no group)
        refuted: list[bool | None] = [None] * len(self.groups) if self.groups else []
        known: dict[int, bool | None] = {} if self.shared else _NOTHING_SHARED
        previewed: list[tuple[str, float]] = []
        totals: dict[str, Any] | None = None
        for place, checks, want_all, preview, trigger in self.steps:
            if place >= 0:
                # refuted together when the first of them is reached (so facts are computed
                # in the order the triggers would compute them)
                verdict = refuted[place]
                if verdict is None:
                    verdict = refuted[place] = self.groups[place].refutes(scope)
                if verdict:
                    continue
            matched = _decided(checks, want_all, scope, known) if checks else True
            if matched is False:
                continue
            if matched is None or not preview:
                return None  # it may act: the behavior is run
            if totals is None:  # later triggers see the totals as this one leaves them
                totals = dict(scope.totals)
                scope = Scope(
                    scope.event, scope.counter, scope.flags, totals, scope.facts, scope.fail_closed
                )
            previewed += _preview(trigger, scope, totals)
        return tuple(previewed) if previewed else ()


#: the ``known`` of a plan without a condition asked twice (never written: no place is >= 0)
_NOTHING_SHARED: dict[int, bool | None] = {}


def _preview(trigger: Trigger, scope: Scope, totals: dict[str, Any]) -> list[tuple[str, float]]:
    """A matched ``preview`` accumulate, as the engine carries it out (``decide._act``): its
    value added to ``totals`` for this event; the total it sets, if any."""
    value_field = trigger.value_field
    amount = as_number(value_field.resolve(scope)) if value_field else None
    if amount is None:
        return []
    total = (as_number(totals.get(trigger.total)) or 0) + amount
    totals[trigger.total] = total
    return [(trigger.total, total)]


def firing_key(event: Event) -> tuple[str, str, str | None]:
    """What decides which triggers fire on ``event`` (:meth:`Behavior.firing`): its name, its
    matcher subject and the name an MCP call read as a built-in tool was sent under."""
    name = event.event_name
    subject_key = MATCHER_SUBJECT.get(name)
    subject: object = "" if subject_key is None else event.top_level(subject_key)
    sent = event.payload.get(READ_FROM) if subject_key == "tool_name" else None
    return (
        name,
        subject if isinstance(subject, str) else "",
        sent if isinstance(sent, str) else None,
    )


@attrs.frozen(eq=False, repr=False)
class Behavior:
    """One governance rule, compiled: ``Behavior(spec)``; see :func:`forge_policy.load_catalog`.

    A frozen attrs class whose one constructor argument is the normalised spec (what the loader
    returns and the compiled cache stores); every other attribute is compiled from it once.
    Compared by identity: two loads of one file give two behaviors.

    >>> behavior = Behavior({"id": "aa", "name": "A", "default_level": "warning",
    ...                      "triggers": [{"event": "Stop"}], "escalation": [[3, "soft_block"]]})
    >>> behavior.id, sorted(behavior.events), behavior.escalation[0].level.label
    ('aa', ['Stop'], 'soft_block')
    >>> behavior.with_enabled(False)
    <Behavior aa warning disabled>
    """

    spec: Mapping[str, Any]
    id: str = attrs.field(init=False)
    name: str = attrs.field(init=False)
    description: str = attrs.field(init=False)
    category: str = attrs.field(init=False)
    scope: str = attrs.field(init=False)
    enabled: bool = attrs.field(init=False)
    source: str = attrs.field(init=False)
    triggers: tuple[Trigger, ...] = attrs.field(init=False)
    events: frozenset[str] = attrs.field(init=False)
    default_level: Level = attrs.field(init=False)
    escalation: tuple[Step, ...] = attrs.field(init=False)
    override: str = attrs.field(init=False)
    mode: str = attrs.field(init=False)
    bypass: str = attrs.field(init=False)
    #: project tuning "relaxed" (catalog/tuning.py) caps the level even when an earlier
    #: escalation in the session went higher
    level_cap: Level | None = attrs.field(init=False)
    hint: str = attrs.field(init=False)
    suggested_tool: str = attrs.field(init=False)
    suggested_action: str = attrs.field(init=False)
    templates: dict[str, str] = attrs.field(init=False)
    applies_tools: frozenset[str] = attrs.field(init=False)
    #: ``applies_to.tools`` compiled: names, and MCP globs (``mcp__github__*``)
    admits_tool: Callable[[str], bool] = attrs.field(init=False)
    applies_agents: frozenset[str] = attrs.field(init=False)
    applies_profiles: frozenset[str] = attrs.field(init=False)
    #: :meth:`firing`'s answers by what decides them (the event name, subject and sent name)
    _firing: dict[tuple[str, str, str | None], tuple[Trigger, ...]] = attrs.field(init=False)
    #: :meth:`refute`'s plans, by the same keys as ``_firing``
    _refutations: dict[tuple[str, str, str | None], _Refutation] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        spec = self.spec
        triggers = tuple(Trigger(i, t) for i, t in enumerate(spec["triggers"]))
        cap = spec.get("level_cap")
        applies = spec.get("applies_to", {})
        _set_all(
            self,
            id=spec["id"],
            name=spec["name"],
            description=spec.get("description", ""),
            category=spec.get("category", "core"),
            scope=spec.get("scope", "session"),
            enabled=spec.get("enabled", True),
            source=spec.get("source", ""),
            triggers=triggers,
            events=frozenset(t.event for t in triggers),
            default_level=Level.parse(spec["default_level"]),
            escalation=tuple(
                Step(after, Level.parse(level)) for after, level in spec.get("escalation", ())
            ),
            override=spec.get("override", "agent"),
            mode=spec.get("mode", "enforce"),
            bypass=spec.get("bypass", "allowed"),
            level_cap=Level.parse(cap) if cap else None,
            hint=spec.get("hint", ""),
            suggested_tool=spec.get("suggested_tool", ""),
            suggested_action=spec.get("suggested_action", ""),
            templates={**DEFAULT_TEMPLATES, **spec.get("templates", {})},
            applies_tools=frozenset(applies.get("tools", ())),
            admits_tool=compile_names(frozenset(applies.get("tools", ()))),
            applies_agents=frozenset(applies.get("agents", ())),
            applies_profiles=frozenset(applies.get("profiles", ())),
            _firing={},
            _refutations={},
        )

    def firing(
        self, event: Event, key: tuple[str, str, str | None] | None = None
    ) -> tuple[Trigger, ...]:
        """The triggers that :meth:`Trigger.fires_on` selects for ``event``, in order.

        What they are depends only on the event name, its matcher subject and the name an MCP
        call was sent under (:meth:`Trigger.fires_on` reads nothing else), and the triggers
        never change: the answer is kept by those three, for a bounded number of them.

        >>> from forge_policy.model import Event
        >>> rule = Behavior({"id": "r", "name": "R", "default_level": "warning", "triggers": [
        ...     {"event": "PreToolUse", "matcher": "Bash"}, {"event": "Stop"}]})
        >>> [t.index for t in rule.firing(Event("PreToolUse", "s", tool_name="Bash"))]
        [0]
        >>> rule.firing(Event("PreToolUse", "s", tool_name="Edit"))
        ()

        ``key``: :func:`firing_key` of ``event``, when the caller asks for several behaviors.
        """
        if key is None:
            key = firing_key(event)
        memo = self._firing
        found = memo.get(key)
        if found is None:
            found = tuple(t for t in self.triggers if t.fires_on(event))
            if len(memo) < FIRING_MEMO_LIMIT:
                memo[key] = found
        return found

    def recovery_for(self, trigger: Trigger | None) -> tuple[str, str, str]:
        """``(hint, suggested_tool, suggested_action)`` for a violation found by ``trigger``:
        the trigger's own ``recovery`` when it has one, else the behavior's.

        >>> rule = Behavior({"id": "r", "name": "R", "default_level": "warning",
        ...     "hint": "in general", "triggers": [{"event": "Stop"},
        ...     {"event": "Stop", "recovery": {"hint": "this one", "suggested_tool": "Bash",
        ...                                    "suggested_action": "ls"}}]})
        >>> rule.recovery_for(rule.triggers[0]), rule.recovery_for(rule.triggers[1])
        (('in general', '', ''), ('this one', 'Bash', 'ls'))
        """
        if trigger is not None and trigger.recovery is not None:
            return trigger.recovery
        return self.hint, self.suggested_tool, self.suggested_action

    def applies_to(self, event: Event, profile: str) -> bool:
        """The ``applies_to`` filters; an empty list admits everything.

        The tool filter only concerns events that name a tool; it holds names and MCP globs
        (``mcp__github__*``), and an MCP call read as a built-in tool
        (:func:`forge_policy.facts.mcp.read_as`) passes it by either name. A ``bypass: never``
        behavior belongs to every profile (SPEC §7): ``FORGE_PROFILE=minimal`` cannot drop it.

        >>> rule = Behavior({"id": "r", "name": "R", "default_level": "hard_block",
        ...     "bypass": "never", "triggers": [{"event": "Stop"}], "applies_to": {
        ...     "profiles": ["standard", "strict"]}})
        >>> from forge_policy.model import Event
        >>> rule.applies_to(Event("Stop", "s"), "minimal")
        True
        """
        if self.applies_tools and event.tool_name and not self.admits_tool(event.tool_name):
            # an MCP call read as a built-in tool is admitted by either name
            sent = event.payload.get(READ_FROM)
            if not (isinstance(sent, str) and self.admits_tool(sent)):
                return False
        if self.applies_agents and event.agent not in self.applies_agents:
            return False
        profiles = self.applies_profiles  # excluded_by, inline: asked of every behavior visited
        return not profiles or profile in profiles or self.bypass == "never"

    def excluded_by(self, profile: str) -> bool:
        """Whether ``applies_to.profiles`` leaves this behavior out under ``profile`` (enabled
        or not: ``list``, ``on`` and ``status`` say so, a lint warns).

        >>> Behavior({"id": "r", "name": "R", "default_level": "nudge",
        ...     "triggers": [{"event": "Stop"}], "applies_to": {"profiles": ["strict"]}}
        ...     ).excluded_by("standard")
        True
        """
        return bool(
            self.applies_profiles
            and profile not in self.applies_profiles
            and self.bypass != "never"
        )

    def level_at(self, previous: Level | None, counter: int) -> Level:
        """The level of the ``counter``-th violation after an effective level of ``previous``
        (SPEC §3.3-3.4), never above a relaxed behavior's cap.

        >>> rule = Behavior({"id": "r", "name": "R", "default_level": "nudge",
        ...     "triggers": [{"event": "Stop"}], "escalation": [[3, "soft_block"]]})
        >>> rule.level_at(None, 1).label, rule.level_at(None, 3).label
        ('nudge', 'soft_block')
        """
        level = escalate(previous, counter, self.default_level, self.escalation)
        if self.level_cap is not None and level > self.level_cap:
            level = self.level_cap
        return level

    def fails_closed(self, previous: Level | None, counter: int) -> bool:
        """Whether an undetermined trigger counts as matched for the ``counter``-th violation:
        when that violation would block (soft_block, hard_block, ask the user), shadow mode
        included (it records what enforcing would do). A nudge or a warning is not raised on a
        fact that could not be computed."""
        return self.level_at(previous, counter).blocks

    def cannot_fire(
        self, event: Event, scope: Scope, key: tuple[str, str, str | None] | None = None
    ) -> bool:
        """True when this behavior surely does nothing with ``event``: :meth:`refute` shows
        that no trigger acts on it and none previews a total.

        >>> from forge_policy.catalog.dsl import Scope
        >>> from forge_policy.model import Event
        >>> rule = Behavior({"id": "r", "name": "R", "default_level": "warning", "triggers": [
        ...     {"event": "PreToolUse", "matcher": "Bash", "conditions": [
        ...         {"field": "command", "operator": "regex_match", "value": "git push"}]}]})
        >>> def scope(command):
        ...     event = Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": command})
        ...     return event, Scope(event, 0, {}, {}, lambda name: "")
        >>> rule.cannot_fire(*scope("ls")), rule.cannot_fire(*scope("git push"))
        (True, False)
        """
        return self.refute(event, scope, key) == ()

    def refute(
        self, event: Event, scope: Scope, key: tuple[str, str, str | None] | None = None
    ) -> tuple[tuple[str, float], ...] | None:
        """What running this behavior on ``event`` would do, when that is surely nothing but
        ``preview`` totals: the ``(total, value)`` pairs they set for this event's later
        triggers (in order; usually none). None: some trigger may act, run the behavior.

        Each trigger that fires on the event is decided as :meth:`Trigger.test` decides it
        from known conditions, evaluating the same conditions in the same order (so the facts
        computed are those running it would compute, in that order); an undetermined one is
        never refuted. Triggers whose first required condition (all of whose conditions, with
        ``any``) is a regex on one fact are refuted together, by one look for the literals
        their matches need. A matched ``preview`` accumulate is carried out as the engine
        would (it changes nothing but this event's totals), and later triggers see its total.
        Only known false conditions refute: a skipped behavior changes nothing, as a trigger
        that does not match takes no action.

        >>> from forge_policy.catalog.dsl import Scope
        >>> from forge_policy.model import Event
        >>> rule = Behavior({"id": "r", "name": "R", "default_level": "warning", "triggers": [
        ...     {"event": "Stop", "action": "accumulate", "total": "t", "value": "facts.n",
        ...      "preview": True},
        ...     {"event": "Stop", "conditions": [
        ...         {"field": "session.totals.t", "operator": "gt", "value": 10}]}]})
        >>> def scope(n):
        ...     return Scope(Event("Stop", "s"), 0, {}, {"t": 4}, lambda name: n)
        >>> rule.refute(Event("Stop", "s"), scope(2)), rule.refute(Event("Stop", "s"), scope(7))
        ((('t', 6.0),), None)
        """
        if key is None:
            key = firing_key(event)
        plan = self._refutations.get(key)
        if plan is None:
            plan = _Refutation(self.firing(event, key))
            if len(self._refutations) < FIRING_MEMO_LIMIT:
                self._refutations[key] = plan
        return plan(scope)

    def with_enabled(self, enabled: bool) -> Behavior:
        """A copy with another ``enabled`` value."""
        return Behavior({**self.spec, "enabled": enabled})

    def __repr__(self) -> str:
        state = "" if self.enabled else " disabled"
        return f"<Behavior {self.id} {self.default_level.label}{state}>"
