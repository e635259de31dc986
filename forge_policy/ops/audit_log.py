"""The audit records themselves, for a person (``forge-policy audit log``) and for
``explain --record N``: newest first, filtered, numbered.

A record's number is its ``seq`` in a hash-chained log (JSONL, SQLite, PostgreSQL: stable, the
position ``audit --verify`` names), else its position from the oldest, 1 first. Records are
read from the newest back (:func:`forge_policy.audit.base.newest_first`), so a page of the
latest costs a page, and ``since`` ends the read at the first record stamped before it
(records are appended in decision order; a record folded late from the JSONL spool, marked
``spooled``, never ends it).

>>> from forge_policy.audit.memory import MemoryAuditSink
>>> sink = MemoryAuditSink()
>>> sink.append_many([{"kind": "block", "session_id": "a", "behavior_id": "x"},
...                   {"kind": "override", "session_id": "b", "behavior_id": "x"}])
>>> page = read_log(sink, LogQuery(behavior="x"))
>>> [(n, r["kind"]) for n, r in page.records], page.more
([(2, 'override'), (1, 'block')], False)
"""

from __future__ import annotations

import attrs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from forge_policy.audit.base import AuditSink

#: The record kinds (:mod:`forge_policy.audit.records`), for ``--kind``'s choices and help.
KINDS = (
    "block",
    "violation",
    "override",
    "grant",
    "bypass",
    "floor",
    "recovery",
    "integrity",
    "diagnostic",
    "tuning",
    "shadow",
    "seen",
)
#: Kinds a listing shows only when asked for by name (``audit log --kind seen``): one ``seen``
#: record per tool call would bury the records a person reads the log for.
HIDDEN_KINDS = frozenset({"seen"})


@attrs.frozen
class LogQuery:
    """Which records ``audit log`` shows: all filters must hold (``kinds``: any of them; none
    given: every kind but :data:`HIDDEN_KINDS`); ``since`` is epoch seconds; ``limit`` 0
    shows every match."""

    session: str | None = None
    behavior: str | None = None
    kinds: tuple[str, ...] = ()
    since: float | None = None
    limit: int = 0

    def matches(self, record: dict[str, Any]) -> bool:
        """Whether ``record`` passes the session, behavior and kind filters."""
        if self.session is not None and record.get("session_id") != self.session:
            return False
        if self.behavior is not None and record.get("behavior_id") != self.behavior:
            return False
        if not self.kinds:
            return record.get("kind") not in HIDDEN_KINDS
        return record.get("kind") in self.kinds


@attrs.frozen
class LogPage:
    """The records shown, newest first, each ``(number, record)``; ``more`` is whether
    ``limit`` left matching records out."""

    records: tuple[tuple[int, dict[str, Any]], ...]
    more: bool


def numbered(sink: AuditSink) -> Iterator[tuple[int, dict[str, Any]]]:
    """Every record newest first with its number (see the module docstring)."""
    from forge_policy.audit.base import newest_first

    reader = newest_first(sink)
    first = next(reader, None)
    if first is None:
        return
    if isinstance(first.get("seq"), int):
        yield first["seq"], first
        for record in reader:
            seq = record.get("seq")
            yield (seq if isinstance(seq, int) else 0), record
        return
    rest = [first, *reader]  # a sink that numbers nothing: positions, counted from the oldest
    for index, record in enumerate(rest):
        yield len(rest) - index, record


def read_log(sink: AuditSink, query: LogQuery) -> LogPage:
    """The records ``query`` selects, newest first (see the module docstring)."""
    from forge_policy._time import parse_iso

    found: list[tuple[int, dict[str, Any]]] = []
    more = False
    for number, record in numbered(sink):
        if query.since is not None:
            stamp = parse_iso(record.get("timestamp"), default=-1.0)
            if 0 <= stamp < query.since and "spooled" not in record:
                break
        if not query.matches(record):
            continue
        if query.limit and len(found) == query.limit:
            more = True
            break
        found.append((number, record))
    return LogPage(tuple(found), more)


def find_record(sink: AuditSink, number: int) -> dict[str, Any] | None:
    """The record numbered ``number`` (see :func:`numbered`), or None."""
    for n, record in numbered(sink):
        if n == number:
            return record
        if 0 < n < number:  # numbers fall as the read goes back: it is not there
            return None
    return None


def brief(number: int, record: dict[str, Any]) -> dict[str, Any]:
    """One record as ``audit log --json`` and ``audit --json``'s ``recent`` list it: its number
    and the fields a reader scans, plus the record itself (``record``).

    >>> brief(3, {"kind": "override", "mechanism": "retry", "reason": "needed", "seq": 3})["what"]
    'retry: needed'
    """
    kind = str(record.get("kind", ""))
    return {
        "number": number,
        "timestamp": record.get("timestamp"),
        "kind": kind,
        "session_id": record.get("session_id"),
        "behavior_id": record.get("behavior_id"),
        "level": _level(record),
        "what": what(record),
        "record": {k: v for k, v in record.items() if k != "prev"},
    }


def _level(record: dict[str, Any]) -> str | None:
    level = record.get("level")
    if isinstance(level, str):
        return level
    if record.get("kind") == "bypass" and "enabled" in record:
        return "on" if record.get("enabled") else "off"
    return None


def what(record: dict[str, Any]) -> str:
    """The one line that says what a record is about: the call, the reason, the message.

    >>> what({"kind": "block", "input_summary": "Bash: git push -f"})
    'Bash: git push -f'
    >>> what({"kind": "bypass", "scope": "project", "variable": "forge-policy off"})
    'forge-policy off (project)'
    >>> what({"kind": "seen", "tool_name": "Read", "tool_use_id": "toolu_1", "outcome": "allow"})
    'Read toolu_1: allow'
    """
    kind = record.get("kind")
    parts: list[str] = []
    if kind == "override":
        mechanism = str(record.get("mechanism") or "")
        reason = str(record.get("reason") or "")
        parts.append(f"{mechanism}: {reason}" if reason else mechanism)
    elif kind == "grant":
        parts.append(f"granted: {record.get('reason') or ''}".strip())
    elif kind == "bypass" and "scope" in record:
        parts.append(f"{record.get('variable') or 'switched'} ({record.get('scope')})")
    elif kind == "floor":
        parts.append(f"floor {record.get('floor')}")
    elif kind == "tuning":
        parts.append(f"applied suggestion {record.get('suggestion')}: {record.get('title')}")
    elif kind == "seen":  # the call's id and outcome: its input is not recorded, only a digest
        call = " ".join(str(record.get(k) or "") for k in ("tool_name", "tool_use_id")).strip()
        parts.append(f"{call}: {record.get('outcome') or ''}")
    elif kind in ("recovery", "integrity", "diagnostic"):
        parts.append(str(record.get("message") or record.get("reason") or record.get("code") or ""))
    summary = record.get("input_summary")
    if isinstance(summary, str) and summary:
        parts.append(summary)
    return "; ".join(p for p in parts if p)
