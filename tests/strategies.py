"""Hypothesis strategies shared by the property tests.

Behaviors are generated as *normalised specs*, the plain-JSON form the loader produces and
:class:`forge_policy.catalog.behavior.Behavior` compiles, over a deliberately small vocabulary
(tools ``A B C``, flags ``f1 f2``, one tool-input field ``x``) so that random events hit random
triggers often. :data:`MATCHERS` is the oracle for which tools a matcher selects. The catalogs
and calls of the stateful machine are in :mod:`tests.machine_strategies`.
"""

from __future__ import annotations

from hypothesis import strategies as st

from forge_policy.levels import Level

TOOLS = ("A", "B", "C")
FLAGS = ("f1", "f2")
TOTAL = "t1"
AGENTS = ("claude-code", "sub")
PROFILES = ("minimal", "standard", "strict")
PROMPTS = ("p", "q", "pq")
X_VALUES = ("a", "b", "ab")
BEHAVIOR_IDS = ("alpha", "bravo", "charlie", "delta")
SESSIONS = ("s1", "s2")
TOOL_EVENT = "PreToolUse"
PROMPT_EVENT = "UserPromptSubmit"

#: matcher -> the tools it selects (Claude Code's rule: '*' or '' all, names, else a regex)
MATCHERS: dict[str, frozenset[str]] = {
    "*": frozenset(TOOLS),
    "": frozenset(TOOLS),
    "A": frozenset("A"),
    "A|B": frozenset("AB"),
    "B,C": frozenset("BC"),
    "[BC]": frozenset("BC"),
    "^A$|C": frozenset("AC"),
}

#: templates whose rendering shows the counter, level and threshold the engine computed
MARKED_TEMPLATES = {
    "nudge_template": "N {behavior_id} c={counter} l={level} t={threshold}",
    "warning_template": "W {behavior_id} c={counter} l={level} t={threshold}",
    "block_reason": "B {tool_name}|{behavior_id} c={counter} l={level} t={threshold}",
}

Steps = list[tuple[int, Level]]
#: default levels of generated behaviors; Hypothesis favours the first: soft_block, the level
#: overrides need
DEFAULTS = (Level.SOFT_BLOCK, *Level)


# --- escalation lists --------------------------------------------------------------------------


def escalation_problems_oracle(default: Level, steps: Steps) -> set[tuple[int, str]]:
    """SPEC §3.10: every ``(index, field)`` that breaks a rule, each entry judged against the
    one before it (pairwise order is equivalent to order of the whole list)."""
    problems = set()
    for i, (after, level) in enumerate(steps):
        if after < 1:
            problems.add((i, "after"))
        if level < default:
            problems.add((i, "level"))
        if i and after <= steps[i - 1][0]:
            problems.add((i, "after"))
        if i and level < steps[i - 1][1]:
            problems.add((i, "level"))
    return problems


@st.composite
def valid_escalations(
    draw: st.DrawFn, default: Level, *, min_size: int = 0, max_after: int = 6
) -> Steps:
    """Strictly increasing ``after`` >= 1, non-decreasing levels, none below ``default``."""
    size = draw(st.integers(min_size, 3))
    afters = sorted(draw(st.sets(st.integers(1, max_after), min_size=size, max_size=size)))
    levels = sorted(
        draw(
            st.lists(
                st.sampled_from([lv for lv in Level if lv >= default]), min_size=size, max_size=size
            )
        )
    )
    return list(zip(afters, levels, strict=True))


@st.composite
def invalid_escalations(draw: st.DrawFn, default: Level) -> Steps:
    """A valid list broken by one or two mutations, each violating one rule of SPEC §3.10."""
    steps = draw(valid_escalations(default, min_size=1))
    for _ in range(draw(st.integers(1, 2))):
        kinds = ["after below 1"]
        if len(steps) >= 2:
            kinds += ["after not increasing", "level decreasing"]
        if default > Level.SILENT:
            kinds.append("level below default")
        kind = draw(st.sampled_from(kinds))
        pairwise = kind in ("after not increasing", "level decreasing")
        i = draw(st.integers(1 if pairwise else 0, len(steps) - 1))
        after, level = steps[i]
        if kind == "after below 1":
            steps[i] = (draw(st.integers(-3, 0)), level)
        elif kind == "after not increasing":
            steps[i] = (steps[i - 1][0] - draw(st.integers(0, 2)), level)
        elif kind == "level decreasing":
            low = draw(st.sampled_from(list(Level)[:-1]))
            steps[i - 1] = (steps[i - 1][0], draw(st.sampled_from([x for x in Level if x > low])))
            steps[i] = (after, low)
        else:
            steps[i] = (after, draw(st.sampled_from([x for x in Level if x < default])))
    assert escalation_problems_oracle(default, steps)
    return steps


def any_escalations(default: Level) -> st.SearchStrategy[Steps]:
    """Valid, mutated-invalid, or arbitrary lists (which may be either)."""
    arbitrary = st.lists(st.tuples(st.integers(-2, 7), st.sampled_from(list(Level))), max_size=4)
    return st.one_of(valid_escalations(default), invalid_escalations(default), arbitrary)


# --- behaviors as normalised specs -------------------------------------------------------------


def _conditions() -> st.SearchStrategy[dict[str, object]]:
    def cond(field: str, operator: str, values: tuple[object, ...]) -> st.SearchStrategy:
        return st.builds(
            lambda v: {"field": field, "operator": operator, "value": v}, st.sampled_from(values)
        )

    return st.one_of(
        cond("x", "equals", X_VALUES),
        cond("x", "contains", ("a", "b")),
        cond("prompt", "contains", ("p", "q")),
        cond("session.flags.f1", "equals", ("true", "false")),
        cond("session.counter", "gte", (1, 2)),
    )


@st.composite
def triggers(draw: st.DrawFn) -> dict[str, object]:
    """One normalised trigger of the small vocabulary."""
    event = draw(st.sampled_from([TOOL_EVENT, TOOL_EVENT, TOOL_EVENT, PROMPT_EVENT]))
    action = draw(
        st.sampled_from(
            [
                "evaluate",
                "evaluate",
                "evaluate",
                "set_flag",
                "check_flag",
                "check_flag",
                "accumulate",
            ]
        )
    )
    trigger: dict[str, object] = {
        "event": event,
        "matcher": draw(st.sampled_from(sorted(MATCHERS))),
        "conditions": draw(st.one_of(st.just([]), st.lists(_conditions(), min_size=1, max_size=2))),
        "logic": draw(st.sampled_from(["all", "any"])),
        "action": action,
    }
    if action in ("set_flag", "check_flag"):
        trigger["flag"] = draw(st.sampled_from(FLAGS))
    if action == "check_flag":
        trigger["on_present"] = draw(st.sampled_from(["consume", "keep"]))
        trigger["on_absent"] = draw(st.sampled_from(["violate", "skip"]))
    if action == "accumulate":
        trigger["total"] = TOTAL
        trigger["value"] = "n"
    return trigger


@st.composite
def _subset(draw: st.DrawFn, choices: tuple[str, ...]) -> list[str]:
    """Mostly empty (no filter), so that random events reach the triggers often."""
    if draw(st.integers(0, 3)):
        return []
    return sorted(draw(st.lists(st.sampled_from(choices), min_size=1, unique=True)))


@st.composite
def behavior_specs(
    draw: st.DrawFn,
    behavior_id: str = "alpha",
    *,
    modes: tuple[str, ...] = ("enforce", "enforce", "enforce", "shadow"),
    overrides: tuple[str, ...] = ("agent",),
    defaults: tuple[Level, ...] = DEFAULTS,
    max_after: int = 6,
) -> dict[str, object]:
    """A random valid behavior, exactly as :func:`forge_policy.load_catalog` normalises it."""
    default = draw(st.sampled_from(defaults))
    escalation = draw(valid_escalations(default, max_after=max_after))
    return {
        "source": f"<generated {behavior_id}>",
        "id": behavior_id,
        "name": f"Rule {behavior_id}",
        "description": f"generated behavior {behavior_id}",
        "category": "core",
        "scope": draw(st.sampled_from(["session", "session", "agent"])),
        "enabled": draw(st.sampled_from([True, True, True, False])),
        "triggers": draw(st.lists(triggers(), min_size=1, max_size=3)),
        "default_level": default.label,
        "escalation": [[after, level.label] for after, level in escalation],
        "override": draw(st.sampled_from(overrides)),
        "mode": draw(st.sampled_from(modes)),
        "bypass": "allowed",
        "hint": f"Fix {behavior_id} first.",
        "suggested_tool": draw(st.sampled_from(["", "Grep"])),
        "suggested_action": draw(st.sampled_from(["", "Search before writing."])),
        "templates": dict(draw(st.sampled_from([{}, MARKED_TEMPLATES, MARKED_TEMPLATES]))),
        "applies_to": {
            "tools": draw(_subset(TOOLS)),
            "agents": draw(_subset(AGENTS)),
            "profiles": draw(_subset(PROFILES)),
        },
    }


def spec_to_document(spec: dict[str, object]) -> dict[str, object]:
    """The behavior-file document (schema v1) whose normalised spec is ``spec``."""
    s: dict = dict(spec)
    recovery = {"hint": s["hint"]}
    for key in ("suggested_tool", "suggested_action"):
        if s[key]:
            recovery[key] = s[key]
    enforcement = {
        "default_level": s["default_level"],
        "escalation": [{"after": a, "level": lv} for a, lv in s["escalation"]],
        "override": s["override"],
        "mode": s["mode"],
        "bypass": s["bypass"],
    }
    return {
        "schema_version": "1",
        "id": s["id"],
        "name": s["name"],
        "description": s["description"],
        "category": s["category"],
        "scope": s["scope"],
        "enabled": s["enabled"],
        "policy": {"triggers": s["triggers"], "enforcement": enforcement, "recovery": recovery},
        "rendering": s["templates"],
        "applies_to": s["applies_to"],
    }
