"""Governance insights computed from audit records (SPEC §4 triple write, §11 bands)."""

from __future__ import annotations

import pytest

from forge_policy.audit.insights import band, summarize
from forge_policy.engine.reports import SessionTally

from .conftest import block, override


def violation(
    counter: int, session: str = "s1", behavior: str = "search-first"
) -> dict[str, object]:
    return {"kind": "violation", "session_id": session, "behavior_id": behavior, "counter": counter}


@pytest.mark.parametrize(
    ("rate", "expected"),
    [
        (None, None),
        (0.0, "healthy"),
        (0.2999, "healthy"),
        (0.3, "review"),
        (0.5, "review"),
        (0.7, "review"),
        (0.7001, "ineffective"),
        (2.0, "ineffective"),
    ],
)
def test_bands(rate: float | None, expected: str | None) -> None:
    assert band(rate) == expected


def test_per_behavior_and_per_session() -> None:
    records = [
        block(5),
        override("o1"),
        block(6),
        block(7),  # s1: 3 blocks, 1 override
        block(5, session="s2"),
        override("o2", session="s2"),
        override("o2", session="s2"),  # the same override twice: counted once
        violation(2, behavior="verify-before-done"),
        {"kind": "recovery", "dropped_bytes": 3},
    ]
    result = summarize(records, catalog_ids=["search-first", "verify-before-done", "quiet"])
    sf = result.behaviors["search-first"]
    assert (sf.violations, sf.blocks, sf.overrides) == (12, 4, 2)
    assert sf.override_rate == 0.5 and sf.band == "review"
    assert sf.mechanisms == {"retry": 2}
    vbd = result.behaviors["verify-before-done"]
    assert (vbd.violations, vbd.blocks, vbd.override_rate, vbd.band) == (2, 0, None, None)
    assert result.behaviors["quiet"].violations == 0
    assert result.sessions["s2"]["search-first"] == SessionTally(
        violations=5, blocks=1, overrides=1
    )
    assert result.sessions["s1"]["search-first"].blocks == 3
    assert result.totals.blocks == 4 and result.totals.overrides == 2
    assert result.kinds == {"block": 4, "override": 3, "violation": 1, "recovery": 1}
    assert result.records == 9


def test_counter_restart_after_expiry_starts_a_new_run() -> None:
    records = [violation(1), violation(2), block(5), violation(1), violation(2)]
    assert summarize(records).behaviors["search-first"].violations == 7


def test_violations_never_below_recorded_count() -> None:
    records = [{"kind": "block", "session_id": "s", "behavior_id": "b"}] * 3
    assert summarize(records).behaviors["b"].violations == 3


def test_healthy_rate() -> None:
    records = [block(i) for i in range(5, 15)] + [override("o1")]
    assert summarize(records).behaviors["search-first"].band == "healthy"


def test_a_counter_decided_twice_counts_once_but_a_new_run_counts_again() -> None:
    # a crash lost the state write of the block at counter 2, so counter 2 was decided again
    records = [block(1), block(2), block(2), override("o1", counter=2)]
    entry = summarize(records).behaviors["search-first"]
    assert (entry.blocks, entry.violations, entry.overrides) == (2, 2, 1)
    # after the session expired its counters restart: counter 1 is a new decision
    restarted = [*records, block(1)]
    assert summarize(restarted).behaviors["search-first"].blocks == 3
