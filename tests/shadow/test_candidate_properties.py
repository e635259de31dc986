"""Whatever the candidate catalog, every decision is the one made without it (a Hypothesis
property over generated event sequences against the built-in catalog), and a candidate that
raises leaves it too."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import forge_policy as fp
from forge_policy.audit.memory import MemoryAuditSink
from forge_policy.catalog.catalog import Catalog
from forge_policy.engine.candidate import Candidate
from forge_policy.engine.inputs import FactCache
from forge_policy.testing.clock import FakeClock
from forge_policy.testing.strategies import catalogs, claude_code_events

BUILTIN = fp.builtin_catalog()
#: candidates: generated catalogs, the built-in one with a subset of its behaviors, or itself
CANDIDATES = st.one_of(
    catalogs(max_size=3),
    st.sets(st.sampled_from([b.id for b in BUILTIN.behaviors])).map(
        lambda gone: Catalog([b for b in BUILTIN.behaviors if b.id not in gone])
    ),
    st.just(BUILTIN),
)


def _run(
    events: list[fp.Event], candidate: Candidate | None, known: list[dict[str, object]]
) -> tuple[list[Any], list[Any]]:
    """Every decision (without the diagnostics, which a candidate may add) and the audit
    records other than ``shadow``, of one evaluator over ``events``. ``known``: each event's
    fact values, filled by the first run and given to the next (a fact cut by its time budget
    on a loaded machine must not make two runs differ: only the candidate may)."""
    clock = FakeClock(1_800_000_000.0)
    ids = iter(range(1 << 30))
    audit = MemoryAuditSink()
    evaluator = fp.Evaluator(
        BUILTIN,
        audit=audit,
        clock=clock,
        random_id=lambda: f"{next(ids):016x}",
        candidate=candidate,
    )
    decisions = []
    for index, event in enumerate(events):
        clock.advance(7.0)
        facts = FactCache(event, evaluator.facts)
        if index < len(known):
            facts.values.update(known[index])
        decision = evaluator.evaluate(event, facts=facts)
        if index == len(known):
            known.append(facts.values)
        decisions.append((decision.outcome, decision.messages, decision.violations))
        decisions.append((decision.blocking, decision.overrides, decision.bypasses))
    kept = [
        {k: v for k, v in r.items() if k != "timestamp"}
        for r in audit.records()
        if r["kind"] != "shadow"
    ]
    return decisions, kept


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=st.lists(claude_code_events(sessions=("s1",)), min_size=1, max_size=8),
    candidate=CANDIDATES,
)
def test_a_candidate_never_changes_a_decision(events: list[fp.Event], candidate: Catalog) -> None:
    known: list[dict[str, object]] = []
    without = _run(events, None, known)
    shadow = Candidate.of(candidate)
    assert _run(events, shadow, known) == without
    assert shadow.compared == len(events)


def test_a_candidate_that_raises_leaves_the_decision() -> None:
    events = [
        fp.Event("PreToolUse", "s1", tool_name="Bash", tool_input={"command": "git push -f"}),
        fp.Event("PreToolUse", "s1", tool_name="Bash", tool_input={"command": "ls"}),
    ]
    candidate = Candidate.of(BUILTIN)
    assert candidate.evaluator is not None
    candidate.evaluator.evaluate = None  # type: ignore[assignment,method-assign]
    known: list[dict[str, object]] = []
    without = _run(events, None, known)[0]
    decisions, records = _run(events, candidate, known)
    assert decisions == without
    problems = [r for r in records if r["kind"] == "diagnostic"]
    assert len(problems) == 1 and "raised TypeError" in problems[0]["message"]


def test_a_candidate_too_close_to_the_hook_deadline_is_skipped() -> None:
    import time

    from forge_policy._budget import hook_deadline

    event = fp.Event("PreToolUse", "s1", tool_name="Bash", tool_input={"command": "git push -f"})
    candidate = Candidate.of(Catalog([]))
    audit = MemoryAuditSink()
    evaluator = fp.Evaluator(BUILTIN, audit=audit, candidate=candidate)
    # the waits end 1 s (the answer's reserve) before the deadline: 0.1 s from now
    with hook_deadline(time.monotonic() + 1.1, 1.1):
        decision = evaluator.evaluate(event)
    assert decision.outcome == "hard_block" and candidate.compared == 0
    assert any("the hook's deadline is near" in note for note in decision.diagnostics)
    assert [r["code"] for r in audit.records() if r["kind"] == "diagnostic"] == ["candidate"]
    decision = evaluator.evaluate(event)  # outside a hook call: compared
    assert candidate.compared == 1 and not decision.diagnostics
