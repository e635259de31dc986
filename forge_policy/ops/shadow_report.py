"""What the candidate catalog would have decided differently, read back from the audit log's
``shadow`` records (:mod:`forge_policy.engine.candidate`): the live counterpart of
``replay --against``, behind ``forge-policy shadow report`` and the dashboard.

Per behavior, how many events moved in each direction (``would_block``: the candidate blocks
where the active catalog did not; ``would_unblock``: it no longer blocks; ``level``: only the
level, or whether it fired below a block), with the most recent examples (their input summary,
redacted when recorded). The candidate's own problems (``diagnostic`` records of code
``candidate``) come with it, each distinct one once.

>>> record = {"kind": "shadow", "timestamp": "2027-01-15T08:00:00+00:00", "session_id": "s1",
...           "harness": "claude-code", "event": "PreToolUse", "tool_name": "Bash",
...           "input_summary": "Bash: rm -rf build", "catalog": "/p/next",
...           "direction": "would_block",
...           "changes": [{"behavior_id": "risky-commands", "direction": "would_block",
...                        "before": "warning", "after": "soft_block", "counter": 2}],
...           "active": {"outcome": "warning"}, "candidate": {"outcome": "soft_block"}}
>>> report = shadow_report([record], compared=40)
>>> row = report.behaviors[0]
>>> row.behavior_id, row.would_block, row.examples[0].input_summary, report.differed
('risky-commands', 1, 'Bash: rm -rf build', 1)
>>> shadow_report([record], since=1_900_000_000.0).differed
0
"""

from __future__ import annotations

import attrs

from forge_policy.engine.verdict import DIRECTIONS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

#: Examples kept per behavior (the most recent).
EXAMPLES = 5


@attrs.frozen
class Example:
    """One event a behavior moved on: when, where, what, and the two levels (``""``: it did
    not fire)."""

    timestamp: str
    session_id: str
    harness: str
    event: str
    tool_name: str
    input_summary: str
    direction: str
    before: str
    after: str
    active_outcome: str
    candidate_outcome: str
    counter: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return attrs.asdict(self)


@attrs.frozen
class BehaviorShadow:
    """One behavior's differences: a count per direction and the latest examples."""

    behavior_id: str
    would_block: int = 0
    would_unblock: int = 0
    level: int = 0
    examples: tuple[Example, ...] = ()

    @property
    def total(self) -> int:
        """Events on which this behavior moved."""
        return self.would_block + self.would_unblock + self.level

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return {
            "behavior_id": self.behavior_id,
            "total": self.total,
            "would_block": self.would_block,
            "would_unblock": self.would_unblock,
            "level": self.level,
            "examples": [example.to_dict() for example in self.examples],
        }


@attrs.frozen
class ShadowReport:
    """Every difference since ``since``: ``differed`` events (``directions``: per event
    direction) over ``compared`` events compared (None: not known here), per behavior (most
    differences first), the candidate folders seen, and the candidate's problems."""

    since: float | None
    differed: int
    directions: Mapping[str, int]
    behaviors: tuple[BehaviorShadow, ...]
    catalogs: tuple[str, ...]
    sessions: int
    first: str
    last: str
    problems: tuple[str, ...]
    compared: int | None = None

    @property
    def rate(self) -> float | None:
        """``differed / compared``, when both are known and some event was compared."""
        if not self.compared:
            return None
        return self.differed / self.compared

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (``since`` as ISO 8601, or None)."""
        from forge_policy._time import iso

        return {
            "since": iso(self.since) if self.since is not None else None,
            "compared": self.compared,
            "differed": self.differed,
            "rate": round(self.rate, 4) if self.rate is not None else None,
            "directions": dict(self.directions),
            "catalogs": list(self.catalogs),
            "sessions": self.sessions,
            "first": self.first or None,
            "last": self.last or None,
            "behaviors": [behavior.to_dict() for behavior in self.behaviors],
            "problems": list(self.problems),
        }


def shadow_report(
    records: Iterable[Mapping[str, Any]],
    *,
    since: float | None = None,
    compared: int | None = None,
) -> ShadowReport:
    """The :class:`ShadowReport` of ``records`` (any audit records, oldest first; others than
    ``shadow`` and the candidate's ``diagnostic`` are skipped) from ``since`` (epoch seconds)
    on; ``compared``: how many events the candidate compared in that time, when known
    (:func:`forge_policy.engine.candidate.compared_events`)."""
    from forge_policy._time import parse_iso

    directions = dict.fromkeys(DIRECTIONS, 0)
    counts: dict[str, dict[str, int]] = {}
    examples: dict[str, list[Example]] = {}
    catalogs: dict[str, None] = {}
    sessions: set[str] = set()
    problems: dict[str, None] = {}
    first = last = ""
    differed = 0
    for record in records:
        kind = record.get("kind")
        if kind not in ("shadow", "diagnostic"):
            continue
        if since is not None and parse_iso(record.get("timestamp"), default=-1.0) < since:
            continue
        if kind == "diagnostic":
            if record.get("code") == "candidate":
                problems[str(record.get("message", ""))] = None
            continue
        differed += 1
        stamp = str(record.get("timestamp", ""))
        first = first or stamp
        last = stamp
        move = str(record.get("direction", ""))
        directions[move] = directions.get(move, 0) + 1
        catalogs[str(record.get("catalog", ""))] = None
        sessions.add(str(record.get("session_id", "")))
        changes = record.get("changes")
        for change in changes if isinstance(changes, list) else ():
            if not isinstance(change, dict):
                continue
            behavior_id = str(change.get("behavior_id", ""))
            way = str(change.get("direction", "level"))
            row = counts.setdefault(behavior_id, dict.fromkeys(DIRECTIONS, 0))
            row[way if way in row else "level"] += 1
            kept = examples.setdefault(behavior_id, [])
            kept.append(_example(record, change))
            if len(kept) > EXAMPLES:
                del kept[0]
    behaviors = [
        BehaviorShadow(
            behavior_id,
            row["would_block"],
            row["would_unblock"],
            row["level"],
            tuple(reversed(examples[behavior_id])),  # newest first
        )
        for behavior_id, row in counts.items()
    ]
    behaviors.sort(key=lambda b: (-b.total, b.behavior_id))
    return ShadowReport(
        since=since,
        differed=differed,
        directions=directions,
        behaviors=tuple(behaviors),
        catalogs=tuple(catalogs),
        sessions=len(sessions),
        first=first,
        last=last,
        problems=tuple(problems),
        compared=compared,
    )


def _example(record: Mapping[str, Any], change: Mapping[str, Any]) -> Example:
    def outcome(side: str) -> str:
        verdict = record.get(side)
        return str(verdict.get("outcome", "")) if isinstance(verdict, dict) else ""

    counter = change.get("counter")
    return Example(
        timestamp=str(record.get("timestamp", "")),
        session_id=str(record.get("session_id", "")),
        harness=str(record.get("harness", "")),
        event=str(record.get("event", "")),
        tool_name=str(record.get("tool_name", "")),
        input_summary=str(record.get("input_summary", "")),
        direction=str(change.get("direction", "")),
        before=str(change.get("before", "")),
        after=str(change.get("after", "")),
        active_outcome=outcome("active"),
        candidate_outcome=outcome("candidate"),
        counter=counter if isinstance(counter, int) else 0,
    )
