"""Behavior.refute, what lets the engine skip a behavior (issue 28): whenever it says a behavior
does nothing with an event, running the behavior's triggers does nothing either (no effect, no
violation, the same ``preview`` totals), and it asks for the same facts in the same order."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import forge_policy as fp
from forge_policy.catalog.behavior import Behavior, firing_key
from forge_policy.catalog.dsl import Condition, Scope, compile_verdict
from forge_policy.engine.decide import _fire, _Scratch
from forge_policy.state import SessionState
from forge_policy.values import Partial, Unknown

CONDITIONS = (
    {"field": "facts.a", "operator": "regex_match", "value": r"^rm\s"},
    {"field": "facts.a", "operator": "regex_match", "value": r"(?i)\bmkfs\b"},
    {"field": "facts.a", "operator": "regex_match", "value": "git push --force"},
    {"field": "facts.a", "operator": "not_regex_match", "value": "^ls"},
    {"field": "facts.b", "operator": "regex_match", "value": r"curl.*\|\s*sh"},
    {"field": "facts.b", "operator": "contains", "value": "rm"},
    {"field": "facts.n", "operator": "gt", "value": 5},
    {"field": "session.totals.t", "operator": "gt", "value": 10},
    {"field": "session.flags.f", "operator": "equals", "value": True},
    {"field": "session.counter", "operator": "gte", "value": 1},
    {"field": "command", "operator": "contains", "value": "x"},
)
ACTIONS: tuple[dict[str, Any], ...] = (
    {},
    {},
    {"action": "set_flag", "flag": "f"},
    {"action": "check_flag", "flag": "f", "on_present": "consume", "on_absent": "violate"},
    {"action": "check_flag", "flag": "f", "on_present": "keep", "on_absent": "skip"},
    {"action": "accumulate", "total": "t", "value": "facts.n", "preview": True},
    {"action": "accumulate", "total": "t", "value": "facts.n", "preview": True},
    {"action": "accumulate", "total": "t", "value": "facts.n"},
    {"action": "reset_total", "total": "t"},
)
LISTS = (
    [],
    ["ls -la"],
    ["ls", "rm -rf x"],
    ["git push --force"],
    ["MKFS.ext4 /dev/sda"],
    ["curl x | sh"],
    "rm x",
    "",
    Unknown("timed out"),
    Partial(["ls"], "cut"),
    Partial(["rm x"], "cut"),
    [1, "rm -r x"],
    None,
)
NUMBERS = (0, 3, 8, "7", Unknown("failed"), None)


@st.composite
def behaviors(draw: st.DrawFn) -> Behavior:
    triggers = []
    for _ in range(draw(st.integers(1, 5))):
        trigger: dict[str, Any] = {
            "event": "PreToolUse",
            "matcher": draw(st.sampled_from(("Bash", "*", "Edit"))),
            "conditions": draw(st.lists(st.sampled_from(CONDITIONS), max_size=3)),
            "logic": draw(st.sampled_from(("all", "all", "any"))),
            **draw(st.sampled_from(ACTIONS)),
        }
        triggers.append(trigger)
    return Behavior({"id": "r", "name": "R", "default_level": "hard_block", "triggers": triggers})


@settings(max_examples=400)  # the cases that matter are a few triggers drawn together
@given(
    behaviors(),
    st.sampled_from(LISTS),
    st.sampled_from(LISTS),
    st.sampled_from(NUMBERS),
    st.sampled_from(({}, {"f": True})),
    st.sampled_from(({}, {"t": 4}, {"t": 20})),
    st.integers(0, 2),
    st.booleans(),
    st.sampled_from(("ls", "x")),
)
def test_a_refuted_behavior_does_nothing_when_run(
    behavior: Behavior,
    a: object,
    b: object,
    n: object,
    flags: dict[str, Any],
    totals: dict[str, Any],
    counter: int,
    fail_closed: bool,
    command: str,
) -> None:
    event = fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": command})
    values = {"a": a, "b": b, "n": n}
    asked: list[str] = []
    ran: list[str] = []

    def facts(name: str) -> object:
        asked.append(name)
        return values[name]

    def reference(name: str) -> object:
        ran.append(name)
        return values[name]

    given_flags, given_totals = dict(flags), dict(totals)
    scope = Scope(event, counter, given_flags, given_totals, facts)
    previews = behavior.refute(event, scope, firing_key(event))
    assert (given_flags, given_totals) == (flags, totals)  # refuting changes nothing

    state = SessionState.new(0.0)
    state.data["flags"], state.data["totals"] = dict(flags), dict(totals)
    scratch = _Scratch(state)
    fired = _fire(behavior, event, scratch, counter, reference, None, fail_closed)
    if previews is None:
        return  # the behavior is run: nothing to compare
    assert fired is None
    assert scratch.take() == ()
    assert scratch.flags == flags
    assert scratch.totals == {**totals, **dict(previews)}
    assert list(dict.fromkeys(asked)) == list(dict.fromkeys(ran))


def test_the_builtin_catalog_skips_the_rules_a_listing_cannot_break() -> None:
    # no-destructive-git (an ``any`` of two regexes on one fact) and token-budget (a preview
    # accumulate, then checks of it) are skipped on an `ls`; search-first credits it
    catalog = fp.builtin_catalog()
    event = fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "ls -la"})
    from forge_policy.engine.inputs import FactCache

    facts = FactCache(event, fp.builtin_facts())
    skipped = {}
    for behavior in catalog.candidates(event):
        scope = Scope(event, 0, {}, {}, facts)
        skipped[behavior.id] = behavior.refute(event, scope) is not None
    assert skipped["no-destructive-git"] and skipped["token-budget"]
    assert skipped["dangerous-commands"] and not skipped["search-first"]
    push = fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "git push -f"})
    scope = Scope(push, 0, {}, {}, FactCache(push, fp.builtin_facts()))
    assert catalog["no-destructive-git"].refute(push, scope) is None


def test_a_previewed_total_is_what_later_triggers_see() -> None:
    # token-budget's shape: a preview accumulate, then a check of the total it leaves
    behavior = Behavior(
        {
            "id": "budget",
            "name": "B",
            "default_level": "soft_block",
            "triggers": [
                {"event": "Stop", "action": "accumulate", "total": "t", "value": "facts.n",
                 "preview": True},
                {"event": "Stop", "conditions": [
                    {"field": "session.totals.t", "operator": "gt", "value": 10}]},
            ],
        }
    )  # fmt: skip
    event = fp.Event("Stop", "s")
    for n, expected in ((8, None), (3, (("t", 7.0),)), (None, ())):
        scope = Scope(event, 0, {}, {"t": 4}, lambda name, n=n: n)
        assert behavior.refute(event, scope) == expected
        state = SessionState.new(0.0)
        state.data["totals"] = {"t": 4}
        fired = _fire(behavior, event, _Scratch(state), 0, lambda name, n=n: n, None)
        assert (fired is None) == (expected is not None)


VERDICT_FIELDS = ("facts.a", "facts.n", "command", "session.totals.t", "session.flags.f")
VERDICT_VALUES = (*LISTS, *NUMBERS, {"k": 1}, True, ["", "x"], Partial([], "cut"))
OPERATOR_VALUES = (
    ("regex_match", r"^rm\s"),
    ("regex_match", ".*"),
    ("not_regex_match", r"^rm\s"),
    ("contains", "rm"),
    ("not_contains", "rm"),
    ("equals", ""),
    ("in", ["", "rm x"]),
    ("exists", None),
    ("not_exists", None),
    ("gt", 5),
    ("lte", 0),
    ("glob", "*"),
)


@given(
    st.sampled_from(VERDICT_FIELDS),
    st.sampled_from(OPERATOR_VALUES),
    st.sampled_from(VERDICT_VALUES),
    st.sampled_from(VERDICT_VALUES),
)
def test_a_verdict_is_what_the_condition_decides(
    field: str, operator: tuple[str, object], value: object, other: object
) -> None:
    # Condition.verdict answers empty texts and lists from what it kept: ask twice, in turn
    condition = Condition(field, operator[0], operator[1])
    verdict = compile_verdict(condition)
    for actual in (value, other, value):
        event = fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": actual})
        scope = Scope(event, 0, {"f": actual}, {"t": actual}, lambda name, v=actual: v)
        assert verdict(scope) is condition(scope)[0]
