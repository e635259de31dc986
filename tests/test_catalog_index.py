"""The catalog's index by (event, subject): an event visits only what can fire on it, and every
observable result is the one a visit of the whole catalog gives."""

from __future__ import annotations

from collections.abc import Iterable

from hypothesis import given
from hypothesis import strategies as st

import forge_policy as fp
from forge_policy.catalog.behavior import Behavior
from forge_policy.catalog.catalog import Catalog
from forge_policy.catalog.dsl import Scope
from forge_policy.engine.decide import decide
from forge_policy.engine.effects import apply_effects
from forge_policy.engine.inputs import FactCache, Settings
from forge_policy.state import SessionState
from tests.strategies import BEHAVIOR_IDS, MATCHERS, PROMPTS, TOOLS, X_VALUES, behavior_specs

#: events with a tool subject, a ``source`` subject, and none (the matcher is ignored)
EVENT_NAMES = ("PreToolUse", "PostToolUse", "SessionStart", "Stop", "UserPromptSubmit")
SOURCES = ("startup", "resume")
SUBJECT_MATCHERS = (*sorted(MATCHERS), "startup", "startup|resume", "res.*")

FACT_CONDITIONS = (
    {"field": "facts.f1", "operator": "equals", "value": ""},
    {"field": "facts.f2", "operator": "regex_match", "value": "z+y"},
    {"field": "facts.f1", "operator": "not_regex_match", "value": "z+y"},
)


class UnindexedCatalog(Catalog):
    """The reference: every event visits every behavior, as before the index."""

    def candidates(self, event: fp.Event, also: Iterable[str] = ()) -> tuple[Behavior, ...]:
        return self.behaviors


@st.composite
def catalogs(draw: st.DrawFn) -> Catalog:
    """Random behaviors whose triggers are spread over events with and without a subject."""
    count = draw(st.integers(1, len(BEHAVIOR_IDS)))
    behaviors = []
    for behavior_id in BEHAVIOR_IDS[:count]:
        spec = draw(behavior_specs(behavior_id))
        for trigger in spec["triggers"]:  # type: ignore[attr-defined]
            if draw(st.booleans()):
                trigger["event"] = draw(st.sampled_from(EVENT_NAMES))
                trigger["matcher"] = draw(st.sampled_from(SUBJECT_MATCHERS))
            if draw(st.booleans()):  # facts without a provider: their diagnostics keep order
                fact = draw(st.sampled_from(FACT_CONDITIONS))
                trigger["conditions"] = [
                    *draw(st.sampled_from(([], [fact]))),
                    *trigger["conditions"],
                ]
        behaviors.append(Behavior(spec))
    return Catalog(behaviors)


@st.composite
def events(draw: st.DrawFn) -> fp.Event:
    name = draw(st.sampled_from(EVENT_NAMES))
    if name == "SessionStart":
        return fp.Event(name, "s1", payload={"source": draw(st.sampled_from(SOURCES))})
    if name == "Stop":
        return fp.Event(name, "s1")
    if name == "UserPromptSubmit":
        return fp.Event(name, "s1", prompt=draw(st.sampled_from(PROMPTS)))
    return fp.Event(
        name,
        "s1",
        tool_name=draw(st.sampled_from((*TOOLS, ""))),
        tool_input={"x": draw(st.sampled_from(X_VALUES)), "n": 1},
    )


@given(catalogs(), events(), st.booleans(), st.integers(0, 3))
def test_candidates_hold_every_behavior_that_can_fire(
    catalog: Catalog, event: fp.Event, flag: bool, counter: int
) -> None:
    """Every enabled behavior with a trigger that fires on the event and matches it (under
    any flags and counter) is a candidate."""
    candidates = catalog.candidates(event)
    scope = Scope(event, counter, {"f1": flag}, {}, FactCache(event, {}))
    firing = [
        b
        for b in catalog
        if b.enabled and any(t.fires_on(event) and t.test(scope)[0] for t in b.triggers)
    ]
    assert set(firing) <= set(candidates)
    positions = [catalog.behaviors.index(b) for b in candidates]
    assert positions == sorted(positions)  # SPEC §3.5: declaration order
    assert catalog.candidates(event) == candidates  # the memo answers the same


@given(catalogs(), st.lists(events(), min_size=1, max_size=12))
def test_indexed_decisions_equal_the_full_walk(catalog: Catalog, sequence: list[fp.Event]) -> None:
    """Decision, effects (counters, flags, pending blocks) and audit records are those of a
    walk over every behavior, event after event of one session."""
    reference = UnindexedCatalog(catalog.behaviors)
    state = SessionState.new(0.0)
    settings = Settings()
    for step, event in enumerate(sequence):
        now = float(step)
        fast = decide(catalog, event, state, now, settings, FactCache(event, {}))
        full = decide(reference, event, state, now, settings, FactCache(event, {}))
        assert fast.decision.to_dict() == full.decision.to_dict()
        assert fast.effects == full.effects
        assert fast.audit == full.audit
        apply_effects(state, fast.effects)


def _soft_block_on_startup() -> Catalog:
    return Catalog(
        [
            Behavior(
                {
                    "id": "startup-check",
                    "name": "Startup check",
                    "default_level": "soft_block",
                    "override": "agent",
                    "triggers": [{"event": "SessionStart", "matcher": "startup"}],
                }
            )
        ]
    )


def test_a_pending_block_is_released_by_a_retry_the_matcher_does_not_select() -> None:
    """The retry of a SessionStart has the same call identity whatever its source: a behavior
    with a pending block is visited even when its matcher would not select the event."""
    catalog = _soft_block_on_startup()
    state = SessionState.new(0.0)
    settings = Settings()
    startup = fp.Event("SessionStart", "s", payload={"source": "startup"})
    resume = fp.Event("SessionStart", "s", payload={"source": "resume"})
    assert catalog.candidates(resume) == ()
    first = decide(catalog, startup, state, 0.0, settings, FactCache(startup, {}))
    assert first.decision.outcome == "soft_block"
    apply_effects(state, first.effects)
    retry = decide(catalog, resume, state, 1.0, settings, FactCache(resume, {}))
    reference = UnindexedCatalog(catalog.behaviors)
    full = decide(reference, resume, state, 1.0, settings, FactCache(resume, {}))
    assert retry.decision.to_dict() == full.decision.to_dict()
    assert retry.effects == full.effects
    assert retry.decision.overrides  # the retry passed the pending block


def test_an_event_visits_only_its_tools_behaviors() -> None:
    catalog = fp.builtin_catalog()
    task = fp.Event("PreToolUse", "s", tool_name="TaskUpdate")
    bash = fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "git push -f"})
    listing = fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "ls"})
    task_ids = [b.id for b in catalog.candidates(task)]
    bash_ids = [b.id for b in catalog.candidates(bash)]
    # its regex reads facts.shell_commands, not `command`: a git command need not spell the
    # word ("g""it" reset --hard), so every Bash call visits the behavior
    assert "no-destructive-git" in [b.id for b in catalog.candidates(listing)]
    assert "respect-todo-state" in task_ids and "respect-todo-state" not in bash_ids
    assert "no-destructive-git" in bash_ids and "no-destructive-git" not in task_ids
    assert "dangerous-commands" in task_ids and "dangerous-commands" in bash_ids  # matcher "*"
    assert "plan-before-code" not in bash_ids  # disabled
    assert catalog.candidates(fp.Event("Notification", "s")) == ()


def test_explain_still_lists_every_behavior() -> None:
    catalog = fp.builtin_catalog()
    event = fp.Event("PreToolUse", "s", tool_name="TaskUpdate", agent="sub")
    state = SessionState.new(0.0)
    outcome = decide(catalog, event, state, 0.0, Settings(), FactCache(event, {}), explain=True)
    listed = {line["behavior_id"] for line in outcome.trace if "behavior_id" in line}
    assert "no-destructive-git" in listed  # a Bash-only behavior, traced though it cannot fire


def test_many_literals_of_one_field_are_found_at_once() -> None:
    """Past the threshold, a field's key literals are matched by one set: overlapping
    literals (tool1, tool10) are all found, and a text with none visits nothing."""
    rules = [
        Behavior(
            {
                "id": f"deny-{i}",
                "name": f"Deny {i}",
                "default_level": "hard_block",
                "triggers": [
                    {
                        "event": "PreToolUse",
                        "matcher": "Bash",
                        "conditions": [
                            {"field": "command", "operator": "regex_match", "value": f"tool{i}"}
                        ],
                    }
                ],
            }
        )
        for i in range(60)
    ]
    catalog = Catalog(rules)

    def bash(command: str) -> fp.Event:
        return fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": command})

    assert [b.id for b in catalog.candidates(bash("tool10 x"))] == ["deny-1", "deny-10"]
    assert catalog.candidates(bash("ls")) == ()
    assert catalog.candidates(bash("")) == ()


def test_the_firing_triggers_kept_per_subject_are_those_fires_on_selects() -> None:
    # Behavior.firing keeps its answer by event name, subject and sent name (issue 28): a
    # second event with the same three gets the same triggers, another subject its own
    from forge_policy.catalog.behavior import FIRING_MEMO_LIMIT
    from forge_policy.events import READ_FROM

    catalog = fp.builtin_catalog()
    events = [
        fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "ls"}),
        fp.Event("PreToolUse", "s", tool_name="Edit", tool_input={"file_path": "a"}),
        fp.Event("PreToolUse", "s", tool_name="Read", tool_input={"file_path": "a"}),
        fp.Event("PostToolUse", "s", tool_name="Bash", tool_input={"command": "ls"}),
        fp.Event(
            "PreToolUse",
            "s",
            tool_name="Write",
            tool_input={"file_path": "a"},
            payload={READ_FROM: "mcp__fs__write_file"},
        ),
        fp.Event("Stop", "s"),
        fp.Event("UserPromptSubmit", "s", prompt="hi"),
    ]
    for _ in range(2):  # the second round answers from what the first kept
        for event in events:
            for behavior in catalog.behaviors:
                expected = tuple(t for t in behavior.triggers if t.fires_on(event))
                assert behavior.firing(event) == expected, (behavior.id, event.tool_name)
    many = [fp.Event("PreToolUse", "s", tool_name=f"mcp__t{i}__x") for i in range(100)]
    behavior = catalog.behaviors[0]
    for event in many:
        assert behavior.firing(event) == tuple(t for t in behavior.triggers if t.fires_on(event))
    assert len(behavior._firing) <= FIRING_MEMO_LIMIT


def test_triggers_refuted_together_by_their_fact_decide_as_one_by_one() -> None:
    # Behavior.cannot_fire looks for the literals of the regexes several triggers have on one
    # fact at once (issue 28): the answer, and which facts are computed in which order, are
    # those of asking each trigger in turn, whatever the facts hold (undetermined included)
    from itertools import product

    from forge_policy.values import Partial, Unknown

    def trigger(field: str, pattern: str) -> dict:
        condition = {"field": field, "operator": "regex_match", "value": pattern}
        return {"event": "PreToolUse", "matcher": "Bash", "conditions": [condition]}

    behavior = Behavior(
        {
            "id": "grouped",
            "name": "G",
            "default_level": "hard_block",
            "triggers": [
                trigger("facts.a", r"^rm\s"),
                trigger("facts.b", r"(?i)\bmkfs\b"),
                trigger("facts.a", r"^git push --force"),
                trigger("facts.b", r"(?i)shutdown"),
                trigger("facts.a", r"curl.*\|\s*sh"),
                trigger("facts.c", r"x"),
            ],
        }
    )
    values = (
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
        [1, "rm -r x"],
        None,
    )
    event = fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "x"})
    firing = behavior.firing(event)
    for a, b, c in product(values, values, values[:3]):
        facts = {"a": a, "b": b, "c": c}
        asked: list[str] = []
        reference: list[str] = []

        def grouped(name: str, asked: list[str] = asked, facts: dict = facts) -> object:
            asked.append(name)
            return facts[name]

        def alone(name: str, reference: list[str] = reference, facts: dict = facts) -> object:
            reference.append(name)
            return facts[name]

        expected = all(t.cannot_match(Scope(event, 0, {}, {}, alone)) for t in firing)
        assert behavior.cannot_fire(event, Scope(event, 0, {}, {}, grouped)) == expected, facts
        assert list(dict.fromkeys(asked)) == list(dict.fromkeys(reference)), facts
