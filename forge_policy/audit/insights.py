"""Reading helpers written only against the :class:`~forge_policy.AuditSink` interface.

The aggregated insights of SPEC §4's triple write are computed from the audit log itself, so
they always agree with it: per behavior, violations, blocks, overrides and the override rate
(overrides / blocks) with its band (SPEC §11): healthy < 0.3 ≤ review ≤ 0.7 < ineffective.

>>> records = [
...     {"kind": "block", "session_id": "s1", "behavior_id": "search-first", "counter": 5},
...     {"kind": "override", "override_id": "o1", "session_id": "s1",
...      "behavior_id": "search-first", "counter": 5, "mechanism": "retry"},
... ]
>>> s = summarize(records).behaviors["search-first"]
>>> s.violations, s.blocks, s.overrides, s.override_rate, s.band
(5, 1, 1, 1.0, 'ineffective')
"""

from __future__ import annotations

import attrs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from forge_policy.audit.base import AuditSink
    from forge_policy.reports.insights import GovernanceSummary, SessionTally

HEALTHY_BELOW = 0.3
INEFFECTIVE_ABOVE = 0.7


def band(rate: float | None) -> str | None:
    """The health band of an override rate (None when there were no blocks).

    >>> [band(r) for r in (None, 0.0, 0.29, 0.3, 0.7, 0.71)]
    [None, 'healthy', 'healthy', 'review', 'review', 'ineffective']
    """
    if rate is None:
        return None
    if rate < HEALTHY_BELOW:
        return "healthy"
    return "review" if rate <= INEFFECTIVE_ABOVE else "ineffective"


def override_ids(sink: AuditSink) -> set[str]:
    """The ids of every override recorded by ``sink``.

    >>> from forge_policy.audit.memory import MemoryAuditSink
    >>> sink = MemoryAuditSink()
    >>> sink.append_many([{"kind": "override", "override_id": "o1"}, {"kind": "block"}])
    >>> override_ids(sink)
    {'o1'}
    """
    return {
        str(r["override_id"])
        for r in sink.records()
        if r.get("kind") == "override" and r.get("override_id")
    }


class _Tally:
    """Counts of one behavior in one session."""

    __slots__ = (
        "blocks",
        "counted",
        "decisions",
        "mechanisms",
        "overrides",
        "run_max",
        "runs",
        "seen",
    )

    def __init__(self) -> None:
        self.decisions: set[tuple[str, object, object]] = set()
        self.blocks = 0
        self.counted = 0  # violation and block records
        self.overrides: set[str] = set()
        self.mechanisms: dict[str, int] = {}
        self.runs = 0  # violations of finished counter runs (a counter that dropped = new run)
        self.run_max = 0
        self.seen = 0  # the last counter seen

    def counter(self, value: object) -> None:
        if not isinstance(value, int) or isinstance(value, bool):
            return
        if value < self.seen:  # the session expired and its counters restarted
            self.runs += self.run_max
            self.run_max = 0
            self.decisions.clear()
        self.seen = value
        self.run_max = max(self.run_max, value)

    @property
    def violations(self) -> int:
        return max(self.runs + self.run_max, self.counted)

    def to_tally(self) -> SessionTally:
        from forge_policy.reports.insights import SessionTally

        return SessionTally(self.violations, self.blocks, len(self.overrides))


def _rate(overrides: int, blocks: int) -> float | None:
    return overrides / blocks if blocks else None


def summarize(
    records: Iterable[dict[str, Any]], catalog_ids: Iterable[str] | None = None
) -> GovernanceSummary:
    """Aggregate audit records into governance insights.

    ``violations`` per behavior is the sum, over sessions, of the highest counter recorded
    (counters include silent violations that leave no record), and never less than the number
    of violation and block records. Overrides are counted once per ``override_id``.
    ``catalog_ids`` lists installed behaviors, so those never seen appear with zeros (first, in
    that order; behaviors seen only in the log follow).

    >>> summarize([], catalog_ids=["search-first"]).behaviors["search-first"].band is None
    True
    """
    from forge_policy.reports.insights import (
        BehaviorInsight,
        GovernanceSummary,
        GovernanceTotals,
    )

    tallies: dict[tuple[str, str], _Tally] = {}
    kinds: dict[str, int] = {}
    count = 0
    for record in records:
        count += 1
        kind = str(record.get("kind", ""))
        kinds[kind] = kinds.get(kind, 0) + 1
        behavior_id = record.get("behavior_id")
        if kind not in ("violation", "block", "override") or not isinstance(behavior_id, str):
            continue
        key = (str(record.get("session_id") or ""), behavior_id)
        tally = tallies.get(key)
        if tally is None:
            tally = tallies[key] = _Tally()
        tally.counter(record.get("counter"))
        if kind == "override":
            override_id = str(record.get("override_id") or f"#{count}")
            if override_id not in tally.overrides:
                tally.overrides.add(override_id)
                mechanism = str(record.get("mechanism") or "unknown")
                tally.mechanisms[mechanism] = tally.mechanisms.get(mechanism, 0) + 1
        else:
            # one decision per (counter, overridden): a block whose state write was lost in a
            # crash is decided again at the same counter, and the state counts it once
            counter = record.get("counter")
            if isinstance(counter, int) and not isinstance(counter, bool):
                seen = (kind, counter, record.get("overridden"))
                if seen in tally.decisions:
                    continue
                tally.decisions.add(seen)
            tally.counted += 1
            tally.blocks += kind == "block"

    sums: dict[str, _Sum] = {behavior_id: _Sum() for behavior_id in catalog_ids or ()}
    sessions: dict[str, dict[str, SessionTally]] = {}
    for (session_id, behavior_id), tally in sorted(tallies.items()):
        total = sums.setdefault(behavior_id, _Sum())
        total.violations += tally.violations
        total.blocks += tally.blocks
        total.overrides += len(tally.overrides)
        for mechanism, n in tally.mechanisms.items():
            total.mechanisms[mechanism] = total.mechanisms.get(mechanism, 0) + n
        sessions.setdefault(session_id, {})[behavior_id] = tally.to_tally()
    behaviors = {
        behavior_id: BehaviorInsight(
            violations=total.violations,
            blocks=total.blocks,
            overrides=total.overrides,
            override_rate=_rate(total.overrides, total.blocks),
            band=band(_rate(total.overrides, total.blocks)),
            mechanisms=total.mechanisms,
        )
        for behavior_id, total in sums.items()
    }
    blocks = sum(b.blocks for b in behaviors.values())
    overrides = sum(b.overrides for b in behaviors.values())
    totals = GovernanceTotals(
        violations=sum(b.violations for b in behaviors.values()),
        blocks=blocks,
        overrides=overrides,
        override_rate=_rate(overrides, blocks),
        band=band(_rate(overrides, blocks)),
    )
    return GovernanceSummary(behaviors, sessions, totals, records=count, kinds=kinds)


@attrs.define(eq=False)
class _Sum:
    """One behavior's counts summed over sessions, while :func:`summarize` adds them up."""

    violations: int = 0
    blocks: int = 0
    overrides: int = 0
    #: override mechanism -> count
    mechanisms: dict[str, int] = attrs.Factory(dict)
