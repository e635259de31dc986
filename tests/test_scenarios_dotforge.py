"""Scenarios on dotforge's own catalog, unchanged (SPEC §3, §4, §5 compatibility)."""

from __future__ import annotations

from pathlib import Path

import pytest

import forge_policy as fp
from forge_policy.catalog.catalog import Catalog
from tests.helpers import Clock, bash, tool


@pytest.fixture
def dotforge(dotforge_dir: Path) -> Catalog:
    # search-first ships disabled in dotforge's index; these scenarios switch it on
    return fp.load_catalog(dotforge_dir).with_enabled({"search-first": True})


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_search_first_escalates_then_override_by_retry(dotforge: Catalog, clock: Clock) -> None:
    ev = fp.Evaluator(dotforge, clock=clock)
    outcomes = []
    for n in range(5):
        clock.advance(5)
        outcomes.append(
            ev.evaluate(
                tool("Write", tool_use_id=f"toolu_{n}", file_path="/a.py", content="x")
            ).outcome
        )
    assert outcomes == ["nudge", "nudge", "warning", "warning", "soft_block"]

    clock.advance(60)  # the window is inclusive
    sixth = ev.evaluate(tool("Write", tool_use_id="toolu_6", file_path="/a.py", content="x"))
    assert not sixth.blocked
    assert [o["mechanism"] for o in sixth.overrides] == ["retry"]
    assert ev.status("s1").behaviors["search-first"].counter == 5

    seventh = ev.evaluate(tool("Write", tool_use_id="toolu_7", file_path="/b.py", content="y"))
    assert seventh.blocked and seventh.outcome == "soft_block"
    assert seventh.blocking is not None and seventh.blocking.counter == 6


def test_third_identical_call_is_a_new_violation(dotforge: Catalog, clock: Clock) -> None:
    ev = fp.Evaluator(dotforge, clock=clock)
    write = tool("Write", file_path="/a.py", content="x")
    for _ in range(5):
        ev.evaluate(write)
    assert ev.evaluate(write).overrides  # the retry passes once
    third = ev.evaluate(write)
    assert third.blocked and third.blocking is not None and third.blocking.counter == 6


def test_retry_after_the_window_is_blocked_again(dotforge: Catalog, clock: Clock) -> None:
    ev = fp.Evaluator(dotforge, clock=clock)
    write = tool("Write", file_path="/a.py", content="x")
    for _ in range(5):
        ev.evaluate(write)
    clock.advance(60.001)
    late = ev.evaluate(write)
    assert late.blocked and not late.overrides


def test_search_resets_the_need(dotforge: Catalog, clock: Clock) -> None:
    ev = fp.Evaluator(dotforge, clock=clock)
    assert ev.evaluate(tool("Grep", pattern="def foo")).outcome == "allow"
    assert ev.evaluate(tool("Write", file_path="/a.py", content="x")).violations == ()
    # the flag was consumed: the next write violates
    assert ev.evaluate(tool("Write", file_path="/b.py", content="x")).outcome == "nudge"


def test_verify_before_done(dotforge: Catalog, clock: Clock) -> None:
    ev = fp.Evaluator(dotforge, clock=clock)
    assert ev.evaluate(bash("pytest -q")).violations == ()
    assert ev.evaluate(bash("git push origin main")).violations == ()
    outcomes = [ev.evaluate(bash("git push origin main", session="s2")).outcome for _ in range(3)]
    assert outcomes == ["nudge", "warning", "soft_block"]


@pytest.mark.parametrize(
    "command",
    [
        "git push origin main -f",
        "git branch -Df x",
        "git reset --hard HEAD~1",
        "git clean -fd",
        "git push --force origin main",
    ],
)
def test_no_destructive_git_blocks_on_first_call(dotforge: Catalog, command: str) -> None:
    decision = fp.Evaluator(dotforge).evaluate(bash(command))
    assert decision.outcome == "hard_block"
    assert decision.blocked and not decision.override_allowed
    assert decision.blocking is not None and decision.blocking.counter == 1


@pytest.mark.parametrize("command", ["git push origin main", "git clean -n", "git status"])
def test_no_destructive_git_passes_safe_commands(dotforge: Catalog, command: str) -> None:
    ev = fp.Evaluator(dotforge)
    ev.evaluate(bash("pytest"))  # so verify-before-done has nothing to say about a push
    decision = ev.evaluate(bash(command))
    assert [v.behavior_id for v in decision.violations] == []


def test_hard_block_denies_every_time_without_pending(dotforge: Catalog, clock: Clock) -> None:
    ev = fp.Evaluator(dotforge, clock=clock)
    push = bash("git push -f")
    results = [ev.evaluate(push) for _ in range(3)]
    assert all(d.outcome == "hard_block" and not d.overrides for d in results)
    assert [d.blocking.counter for d in results if d.blocking] == [1, 2, 3]
    with pytest.raises(ValueError, match="no override"):
        ev.override("s1", "no-destructive-git", reason="please")


def test_respect_todo_state(dotforge: Catalog, clock: Clock) -> None:
    ev = fp.Evaluator(dotforge, clock=clock)
    assert ev.evaluate(tool("TaskUpdate", taskId="1")).violations == ()
    assert ev.evaluate(tool("TaskCreate", subject="a")).violations == ()
    levels = [ev.evaluate(tool("TaskCreate", subject=str(n))).outcome for n in range(5)]
    assert levels == ["nudge", "nudge", "warning", "warning", "soft_block"]


def test_objection_format_on_prompts(dotforge: Catalog) -> None:
    catalog = dotforge.with_enabled({"objection-format": True})
    ev = fp.Evaluator(catalog, profile="strict")
    prompt = fp.Event("UserPromptSubmit", "s1", prompt="No, stop, that's wrong")
    assert ev.evaluate(prompt).outcome == "nudge"
    calm = fp.Event("UserPromptSubmit", "s1", prompt="Looks good, continue")
    assert ev.evaluate(calm).violations == ()
    # applies_to.profiles: [strict] — under the default profile it is not evaluated
    assert fp.Evaluator(catalog).evaluate(prompt).violations == ()


def test_plan_before_code_starts_silent(dotforge: Catalog) -> None:
    catalog = dotforge.with_enabled({"plan-before-code": True, "search-first": False})
    ev = fp.Evaluator(catalog, profile="strict")
    first = ev.evaluate(tool("Write", file_path="/src/a.py", content=""))
    assert first.outcome == "nudge"  # escalation after 1 is nudge
    ev.evaluate(tool("ExitPlanMode", plan="do it"))
    assert ev.evaluate(tool("Write", file_path="/src/b.py", content="")).violations == ()
    assert ev.evaluate(tool("Write", file_path="/README.md", content="")).violations == ()
