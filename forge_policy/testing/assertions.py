"""Assertions on decisions and session state, with failure messages that say what happened.

Levels are given as their YAML spelling (``"soft_block"``) or as :class:`~forge_policy.Level`.

>>> from forge_policy.model import Decision, Event
>>> assert_allows(Decision(Event("PreToolUse", "s", tool_name="Read")))
>>> assert_blocks(Decision(Event("PreToolUse", "s", tool_name="Read")))
Traceback (most recent call last):
AssertionError: expected a block, got allow (no violations)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from forge_policy.levels import Level

if TYPE_CHECKING:
    from forge_policy.engine.evaluator import Evaluator
    from forge_policy.model import Decision

LevelLike = Level | str


def _level(value: LevelLike, where: str) -> Level:
    if isinstance(value, Level):
        return value
    try:
        return Level.parse(value)
    except ValueError:
        names = ", ".join(level.label for level in Level)
        raise ValueError(
            f"{where}: level must be one of {names} or a Level, got {value!r}"
        ) from None


def describe(decision: Decision) -> str:
    """One line per fact a failing assertion needs: outcome, blocking behavior, violations."""
    parts = [decision.outcome]
    if decision.blocking is not None:
        parts.append(f"by {decision.blocking.behavior_id}")
    shown = [
        f"{v.behavior_id}={v.level.label}"
        + (" shadow" if v.shadow else "")
        + (f" overridden={v.overridden}" if v.overridden else "")
        for v in decision.violations
    ]
    parts.append(f"(violations: {', '.join(shown)})" if shown else "(no violations)")
    text = " ".join(parts)
    if decision.message:
        text += f"\nmessage: {decision.message}"
    return text


def assert_allows(decision: Decision) -> None:
    """The call goes through: nothing refused it (nudges and warnings may still be shown)."""
    __tracebackhide__ = True
    if decision.blocked:
        raise AssertionError(f"expected the call to be allowed, got {describe(decision)}")


def assert_blocks(
    decision: Decision, *, behavior: str | None = None, level: LevelLike | None = None
) -> None:
    """The call is refused; by ``behavior`` and at ``level`` when given."""
    __tracebackhide__ = True
    wanted = None if level is None else _level(level, "assert_blocks")
    blocking = decision.blocking
    if blocking is None:
        raise AssertionError(f"expected a block, got {describe(decision)}")
    if behavior is not None and blocking.behavior_id != behavior:
        raise AssertionError(f"expected a block by {behavior}, got {describe(decision)}")
    if wanted is not None and blocking.level is not wanted:
        raise AssertionError(f"expected a {wanted.label} block, got {describe(decision)}")


def _row(evaluator: Evaluator, session: str, behavior: str, where: str) -> tuple[int, Level | None]:
    if behavior not in evaluator.catalog:
        known = ", ".join(evaluator.catalog.ids) or "none"
        raise AssertionError(f"{where}: no behavior {behavior!r} in the catalog (known: {known})")
    row = evaluator.status(session).behaviors.get(behavior)
    # a session never seen (or expired) has no rows: nothing counted yet
    return (0, None) if row is None else (row.counter, row.level)


def assert_level(
    evaluator: Evaluator, session: str, behavior: str, level: LevelLike | None
) -> None:
    """``behavior`` has reached ``level`` in ``session`` (None: no violation yet)."""
    __tracebackhide__ = True
    wanted = None if level is None else _level(level, "assert_level")
    counter, actual = _row(evaluator, session, behavior, "assert_level")
    if actual is not wanted:
        shown = "no level" if actual is None else actual.label
        expected = "no level" if wanted is None else wanted.label
        raise AssertionError(
            f"{behavior} in session {session!r}: expected {expected}, got {shown}"
            f" (counter {counter})"
        )


def assert_counter(evaluator: Evaluator, session: str, behavior: str, n: int) -> None:
    """``behavior`` has counted ``n`` violations in ``session``."""
    __tracebackhide__ = True
    counter, actual = _row(evaluator, session, behavior, "assert_counter")
    if counter != n:
        shown = "no level" if actual is None else actual.label
        raise AssertionError(
            f"{behavior} in session {session!r}: expected counter {n}, got {counter} ({shown})"
        )
