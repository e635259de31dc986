"""The typed public results (:mod:`forge_policy.engine.reports`): built from the catalog and a
session state's accessors, and unstructured to plain JSON by the one converter."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import forge_policy as fp
from forge_policy._time import iso
from forge_policy.audit.insights import band, summarize
from forge_policy.engine.reports import OverrideRecord, status_of, to_json
from forge_policy.levels import Level, next_threshold
from tests.helpers import Clock

CATALOG = fp.builtin_catalog()
IDS = CATALOG.ids


def plain_json(value: Any) -> bool:
    """True when ``value`` is made of JSON types only (no tuples, enums or objects)."""
    return json.loads(json.dumps(value)) == value


behavior_states = st.fixed_dictionaries(
    {
        "counter": st.integers(0, 12),
        "effective_level": st.none() | st.sampled_from([lv.label for lv in Level]),
        "pending_block": st.none() | st.just({"at": 1.0, "call_hash": "h"}),
        "grant": st.none() | st.just({"at": 1.0, "granted_at": "2026-01-01T00:00:00Z"}),
        "overrides": st.lists(st.just({"override_id": "o"}), max_size=3),
        "blocks": st.integers(0, 5),
    }
)
states = st.fixed_dictionaries(
    {
        "created_at": st.just("2026-01-01T00:00:00Z"),
        "last_accessed_at": st.just("2026-01-01T00:00:05Z"),
        "flags": st.dictionaries(st.sampled_from(["a", "b", "c"]), st.just(True)),
        "totals": st.dictionaries(st.sampled_from(["read_tokens"]), st.integers(0, 10**6)),
        "behaviors": st.dictionaries(st.sampled_from(IDS), behavior_states),
        "disabled": st.lists(st.sampled_from(IDS), unique=True).map(sorted),
    }
)


@given(states)
def test_status_reads_every_accessor_and_unstructures_to_plain_json(data: dict[str, Any]) -> None:
    state = fp.SessionState(data)
    status = status_of(CATALOG, "s1", state)
    assert list(status.behaviors) == IDS  # the catalog's order, known to the state or not
    assert status.flags == tuple(sorted(state.flags)) and status.totals == state.totals
    assert status.disabled == tuple(data["disabled"])
    for behavior in CATALOG.behaviors:
        row = status.behaviors[behavior.id]
        known = behavior.id in data["behaviors"]
        b = state.behavior(behavior.id) if known else None
        assert row.counter == (b.counter if b else 0)
        assert row.level is (b.effective_level if b else None)
        assert row.next_threshold == next_threshold(row.counter, behavior.escalation)
        assert row.pending_block is bool(b and b.pending_block)
        assert (row.overrides, row.blocks) == ((len(b.overrides), b.blocks) if b else (0, 0))
        assert row.session_disabled is (behavior.id in data["disabled"])
        assert row.enabled is (behavior.enabled and not row.session_disabled)
        assert row.override_granted == ((b.grant.granted_at or None) if b and b.grant else None)
    out = to_json(status)
    assert plain_json(out)
    for behavior_id, row in out["behaviors"].items():
        level = status.behaviors[behavior_id].level
        assert row["level"] == (level.label if level is not None else None)  # silent is 0


records = st.lists(
    st.fixed_dictionaries(
        {
            "kind": st.sampled_from(["violation", "block", "override", "bypass"]),
            "session_id": st.sampled_from(["s1", "s2"]),
            "behavior_id": st.sampled_from(["a", "b"]),
            "counter": st.integers(1, 8),
            "override_id": st.sampled_from(["o1", "o2", "o3"]),
            "mechanism": st.sampled_from(["retry", "explicit"]),
        }
    ),
    max_size=30,
)


@given(records)
def test_the_summary_adds_up_and_unstructures_to_plain_json(log: list[dict[str, Any]]) -> None:
    summary = summarize(log, catalog_ids=["a", "c"])
    assert list(summary.behaviors)[:2] == ["a", "c"]  # installed first, never seen included
    for behavior_id, insight in summary.behaviors.items():
        tallies = [s[behavior_id] for s in summary.sessions.values() if behavior_id in s]
        assert insight.blocks == sum(t.blocks for t in tallies)
        assert (
            insight.overrides
            == sum(t.overrides for t in tallies)
            == sum(insight.mechanisms.values())
        )
        assert insight.violations == sum(t.violations for t in tallies)
        rate = insight.overrides / insight.blocks if insight.blocks else None
        assert (insight.override_rate, insight.band) == (rate, band(rate))
    totals = summary.totals
    for key in ("violations", "blocks", "overrides"):
        assert getattr(totals, key) == sum(getattr(b, key) for b in summary.behaviors.values())
    assert (summary.records, sum(summary.kinds.values())) == (len(log), len(log))
    assert plain_json(to_json(summary))


SPEC_OVERRIDE_FIELDS = (
    *("override_id", "timestamp", "session_id", "behavior_id", "tool_name", "input_summary"),
    *("counter", "mechanism", "reason"),
)


def test_override_records_of_a_decision_type_without_loss() -> None:
    clock = Clock(1_000.0)
    ev = fp.Evaluator(CATALOG, clock=clock)
    write = fp.Event("PreToolUse", "s1", tool_name="Write", tool_input={"file_path": "/a.py"})
    for _ in range(5):
        decision = ev.evaluate(write)
    assert decision.blocked
    [raw] = ev.evaluate(write).overrides  # the identical retry within the window
    record = OverrideRecord.from_record(raw)
    assert (record.behavior_id, record.mechanism, record.counter) == ("search-first", "retry", 5)
    # the SPEC §4 fields, in the audit record's order; bookkeeping keys such as "kind" are not
    assert to_json(record) == {k: v for k, v in raw.items() if k in SPEC_OVERRIDE_FIELDS}
    assert list(to_json(record)) == list(SPEC_OVERRIDE_FIELDS)


def test_a_grant_names_its_window() -> None:
    # SPEC §4 (issue 23): a grant lives grant_seconds, independent of the retry window
    ev = fp.Evaluator(CATALOG, clock=Clock(1_000.0), override_window=30, grant_seconds=30)
    grant = ev.override("s1", "search-first", reason="user approved")
    assert (grant.session_id, grant.behavior_id, grant.reason) == (
        "s1",
        "search-first",
        "user approved",
    )
    assert (grant.granted_at, grant.valid_until) == (iso(1_000.0), iso(1_030.0))
    assert ev.status("s1").behaviors["search-first"].override_granted == grant.granted_at
