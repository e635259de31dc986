"""A fact that fails, runs out of budget or is cut never makes a blocking behavior's condition
silently false (SPEC §9): the behavior decides as matched, says why, and the block is audited.
A nudge or a warning is not raised on such a fact."""

from __future__ import annotations

import time
from typing import Any

import pytest

import forge_policy as fp
from forge_policy.catalog.behavior import Behavior
from forge_policy.catalog.dsl import Condition, Scope
from forge_policy.facts import FactRegistry, Partial, Unknown, truncated, undetermined
from forge_policy.model import Event

SLEEP = 0.3  # past the wall-clock ceiling of a 20 ms budget (4 x 20 ms)


def sleeper(event: Event) -> list[str]:
    time.sleep(SLEEP)
    return ["rm -rf /"]


def registry(budget_ms: float = 20, **providers: Any) -> FactRegistry:
    facts = FactRegistry()
    for name, provider in providers.items():
        facts.register(name, provider, budget_ms=budget_ms)
    return facts


def behavior(behavior_id: str, level: str, *conditions: tuple[str, str, object],
             logic: str = "all", override: str = "agent",
             escalation: tuple[tuple[int, str], ...] = ()) -> Behavior:  # fmt: skip
    return Behavior({
        "id": behavior_id, "name": behavior_id.title(), "default_level": level,
        "override": override, "escalation": [list(step) for step in escalation],
        "triggers": [{"event": "PreToolUse", "matcher": "*", "logic": logic, "conditions": [
            {"field": f, "operator": o, "value": v} for f, o, v in conditions]}],
    })  # fmt: skip


def evaluate(rules: list[Behavior], facts: FactRegistry, command: str = "ls",
             session: str = "s1", **kw: Any) -> tuple[fp.Decision, fp.Evaluator]:  # fmt: skip
    evaluator = fp.Evaluator(fp.Catalog(rules), facts=facts, clock=lambda: 1000.0, **kw)
    event = fp.Event("PreToolUse", session, tool_name="Bash", tool_input={"command": command})
    return evaluator.evaluate(event), evaluator


def blocks(rule: Behavior) -> fp.Decision:
    decision, _ = evaluate([rule], registry(slow=sleeper))
    return decision


# --- the provider that sleeps past its budget --------------------------------------------------


def test_a_timed_out_fact_blocks_a_hard_block_with_the_reason_and_is_audited() -> None:
    rule = behavior("no-rm", "hard_block", ("facts.slow", "regex_match", "^rm -rf /$"))
    decision, evaluator = evaluate([rule], registry(slow=sleeper))
    assert decision.outcome == "hard_block"
    assert decision.blocking is not None and decision.blocking.behavior_id == "no-rm"
    assert "could not inspect this call within its budget" in decision.blocking.message
    assert "fact 'slow' timed out" in decision.blocking.message
    assert any("fact 'slow' timed out" in line for line in decision.diagnostics)
    records = [r for r in evaluator.audit.records() if r.get("kind") == "block"]
    assert len(records) == 1 and records[0]["behavior_id"] == "no-rm"
    assert records[0]["undetermined"] and "timed out" in records[0]["undetermined"][0]


def test_a_timed_out_fact_raises_no_nudge_and_no_warning() -> None:
    for level in ("nudge", "warning", "silent"):
        rule = behavior(f"b-{level}", level, ("facts.slow", "regex_match", "^rm"))
        decision, evaluator = evaluate([rule], registry(slow=sleeper), record_violations=True)
        assert decision.outcome == "allow" and decision.violations == ()
        assert decision.messages == ()
        assert list(evaluator.audit.records()) == []


@pytest.mark.parametrize(("level", "override", "outcome"), [
    ("soft_block", "agent", "soft_block"),
    ("soft_block", "user", "soft_block"),
])  # fmt: skip
def test_soft_blocks_and_asks_fail_closed_too(level: str, override: str, outcome: str) -> None:
    rule = behavior("b", level, ("facts.slow", "contains", "rm"), override=override)
    decision = blocks(rule)
    assert decision.outcome == outcome and decision.blocking is not None
    assert decision.blocking.override_mode == override


def test_an_escalating_behavior_fails_closed_once_its_next_violation_would_block() -> None:
    rule = behavior("esc", "nudge", ("facts.word", "contains", "rm"),
                    escalation=((2, "soft_block"),))  # fmt: skip
    # a budget no loaded machine runs out of: only the second provider may time out
    facts = registry(budget_ms=60_000, word=lambda event: event.tool_input["command"])
    evaluator = fp.Evaluator(fp.Catalog([rule]), facts=facts, clock=lambda: 1000.0)
    first = evaluator.evaluate(Event("PreToolUse", "s", tool_name="Bash",
                                     tool_input={"command": "rm x"}))  # fmt: skip
    assert first.outcome == "nudge"
    evaluator.facts = registry(word=sleeper)  # the second violation would soft-block
    second = evaluator.evaluate(Event("PreToolUse", "s", tool_name="Bash",
                                      tool_input={"command": "ls"}))  # fmt: skip
    assert second.outcome == "soft_block"


# --- three-valued logic: negations, all, any ----------------------------------------------------


@pytest.mark.parametrize("operator", ["not_regex_match", "not_contains", "not_exists"])
def test_a_negation_of_an_unknown_is_unknown(operator: str) -> None:
    rule = behavior("neg", "hard_block", ("facts.slow", operator, "rm"))
    assert blocks(rule).outcome == "hard_block"  # fail closed, not "not matched"
    nudge = behavior("neg-nudge", "nudge", ("facts.slow", operator, "rm"))
    assert blocks(nudge).outcome == "allow"  # and no false nudge from "not rm"


def test_all_with_a_known_false_is_false_whatever_the_unknown() -> None:
    rule = behavior("all", "hard_block", ("facts.slow", "contains", "rm"),
                    ("command", "equals", "something else"))  # fmt: skip
    assert blocks(rule).outcome == "allow"


def test_any_with_a_known_true_matches_without_an_assumption() -> None:
    rule = behavior("any", "hard_block", ("facts.slow", "contains", "rm"),
                    ("command", "equals", "ls"), logic="any")  # fmt: skip
    decision = blocks(rule)
    assert decision.outcome == "hard_block" and decision.blocking is not None
    assert "could not inspect" not in decision.blocking.message  # ls decided it alone


def test_any_with_only_known_falses_fails_closed_on_the_unknown() -> None:
    rule = behavior("any", "hard_block", ("facts.slow", "contains", "rm"),
                    ("command", "equals", "other"), logic="any")  # fmt: skip
    decision = blocks(rule)
    assert decision.outcome == "hard_block" and decision.blocking is not None
    assert "could not inspect" in decision.blocking.message


def scope(value: object, fail_closed: bool = True) -> Scope:
    event = Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "x"})
    return Scope(event, 0, {}, {}, lambda name: value, fail_closed)


@pytest.mark.parametrize(("operator", "value", "found", "missing"), [
    ("regex_match", "^rm", True, None),
    ("not_regex_match", "^rm", False, None),
    ("contains", "rm", True, None),
    ("not_contains", "rm", False, None),
    ("exists", None, True, None),
    ("not_exists", None, False, None),
    ("equals", "rm -rf /", True, None),
])  # fmt: skip
def test_a_partial_list_decides_when_its_items_do(
    operator: str, value: object, found: bool, missing: None
) -> None:
    condition = Condition("facts.cmds", operator, value)
    assert condition(scope(Partial(["ls", "rm -rf /"], "cut")))[0] is found
    empty_or_other = Partial([] if operator in ("exists", "not_exists") else ["ls"], "cut")
    assert condition(scope(empty_or_other))[0] is missing


def test_every_operator_of_an_unknown_is_unknown() -> None:
    from forge_policy.catalog.dsl import OPERATORS

    for operator in OPERATORS:
        value: object = ["a"] if operator == "in" else "1"
        assert Condition("facts.x", operator, value)(scope(Unknown("failed")))[0] is None


# --- skipping: the prefilter and cannot_fire ------------------------------------------------


def test_an_unknown_first_condition_is_never_skipped() -> None:
    rule = behavior("first", "hard_block", ("facts.slow", "regex_match", "^rm"))
    event = Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "ls"})
    assert not rule.cannot_fire(event, scope(Unknown("timed out")))
    assert rule.cannot_fire(event, scope(["ls"]))  # a known miss is still skipped
    catalog = fp.Catalog([rule])
    assert [b.id for b in catalog.candidates(event)] == ["first"]  # facts are never indexed


def test_the_literal_prefilter_skips_only_on_known_event_fields() -> None:
    # the first condition (an event field without the literal) is known false: the trigger
    # cannot match whatever the unknown fact, so skipping it is exact
    rule = behavior("lit", "hard_block", ("command", "regex_match", "curl"),
                    ("facts.slow", "contains", "x"))  # fmt: skip
    catalog = fp.Catalog([rule])
    event = Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "ls"})
    assert catalog.candidates(event) == ()
    assert evaluate([rule], registry(slow=sleeper), command="curl x")[0].outcome == "hard_block"


# --- budgets: CPU time, a wall-clock ceiling, cuts --------------------------------------------


def test_a_provider_that_waits_within_the_wall_ceiling_keeps_its_value() -> None:
    # a loaded machine delays a provider without it using CPU: that is not running out of budget
    def waits(event: Event) -> str:
        time.sleep(0.6)
        return "ok"

    facts = FactRegistry()
    # 0.6 s of wall clock (past the 0.5 s budget: its CPU time is read), ~0 ms of CPU, 1.4 s
    # short of the wall-clock ceiling (2 s), which a sleep on a loaded machine does not overrun
    facts.register("waits", waits, budget_ms=500)
    value, diagnostics = facts["waits"].evaluate(Event("Stop", "s"))
    assert value == "ok" and diagnostics == []


def test_a_provider_that_spins_past_its_cpu_budget_times_out() -> None:
    def spins(event: Event) -> str:
        end = time.thread_time() + 0.05
        while time.thread_time() < end:
            pass
        return "late"

    facts = FactRegistry()
    facts.register("spins", spins, budget_ms=20)
    value, diagnostics = facts["spins"].evaluate(Event("Stop", "s"))
    assert value == "" and type(value) is Unknown and "timed out" in diagnostics[0]
    # CPU time, unless the machine is so loaded that the wall-clock ceiling came first
    assert "of CPU" in diagnostics[0] or "wall-clock" in diagnostics[0]


def test_a_cut_list_is_partial_with_its_reason() -> None:
    def cut(event: Event) -> list[str]:
        truncated("more than 2 items")
        return ["a", "b"]

    facts = FactRegistry()
    facts.register("cut", cut)
    value, diagnostics = facts["cut"].evaluate(Event("Stop", "s"))
    assert value == ["a", "b"] and isinstance(value, Partial)
    assert undetermined(value) == "fact 'cut' is incomplete: more than 2 items" == diagnostics[0]


def test_the_shell_commands_cap_is_a_cut_not_a_silent_end() -> None:
    from forge_policy.facts.commands import MAX_COMMANDS

    command = "".join(f"echo {n}; " for n in range(MAX_COMMANDS + 5)) + "rm -rf /"
    facts = FactRegistry.with_builtins()
    value, _ = facts["shell_commands"].evaluate(
        Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": command})
    )
    assert isinstance(value, Partial) and "rm -rf /" not in value
    decision, _ = evaluate(list(fp.builtin_catalog().behaviors), FactRegistry.with_builtins(),
                           command=command)  # fmt: skip
    assert decision.blocked  # rm -rf / was not listed, and is not let through for that
