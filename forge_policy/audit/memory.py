"""The in-memory audit sink (tests, embedding, and the default when none is given)."""

from __future__ import annotations

import bisect
import os
import threading

from forge_policy.state import copy_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    from forge_policy.audit.base import Span


class MemoryAuditSink:
    """Audit records in a list: the reference :class:`~forge_policy.AuditSink` (records
    carry no ``seq``; its optional capabilities are the reads ``records_since``,
    ``records_for_session``, ``session_records_since``, ``session_records_after`` and
    ``records_newest_first``).

    A record's place in the list is its position for ``session_records_after`` (the first
    record is 1, as a ``seq``; the record itself does not carry it), and the log's origin is a
    random token of this sink: a state caught up against another sink (another evaluator's
    default, a process earlier) is read by time again, never from a position that is not
    this log's.

    >>> sink = MemoryAuditSink()
    >>> sink.append_many([{"kind": "override"}])
    >>> [r["kind"] for r in sink.records()]
    ['override']
    """

    def __init__(self) -> None:
        self._records: list[dict[str, Any]] = []
        # each session's records (the same objects), so that reading one session costs its
        # records, not every session's: a new session's rebuild reads its own history
        self._by_session: dict[str, list[dict[str, Any]]] = {}
        # the position (1-based index in ``_records``) of each of a session's records, in step
        # with ``_by_session``: a catch-up from a position costs what was appended since
        self._positions: dict[str, list[int]] = {}
        self._origin = os.urandom(16).hex()
        self._lock = threading.Lock()

    def append_many(self, records: Iterable[dict[str, Any]]) -> None:
        copies = [copy_json(dict(r)) for r in records]  # the caller's records stay theirs
        with self._lock:
            for record in copies:
                self._records.append(record)
                session_id = record.get("session_id")
                if isinstance(session_id, str):
                    self._by_session.setdefault(session_id, []).append(record)
                    self._positions.setdefault(session_id, []).append(len(self._records))

    def records_for_session(self, session_id: str) -> list[dict[str, Any]]:
        """One session's records, oldest first."""
        with self._lock:
            return [copy_json(r) for r in self._by_session.get(session_id, ())]

    def session_records_since(self, session_id: str, since: float) -> list[dict[str, Any]]:
        """One session's records stamped at or after ``since`` (as :meth:`records_since`)."""
        from forge_policy.audit.base import newest_since

        with self._lock:
            recent = newest_since(reversed(self._by_session.get(session_id, [])), since)
        return [copy_json(record) for record in recent]

    def session_records_after(self, session_id: str, seq: int, since: float) -> Span | None:
        """One session's records after position ``seq`` (``seq`` 0: those stamped from
        ``since`` on, as :meth:`session_records_since`), oldest first, with the log's end
        (:class:`~forge_policy.audit.base.SessionRecordsAfter`); None when the log is shorter
        than ``seq`` (not the log the position was taken on)."""
        from forge_policy.audit.base import Span, newest_since

        with self._lock:
            end = len(self._records)
            if end < seq:
                return None
            mine = self._by_session.get(session_id, [])
            if seq > 0:
                start = bisect.bisect_right(self._positions.get(session_id, []), seq)
                found = mine[start:]
            else:
                found = newest_since(reversed(mine), since)
        return Span([copy_json(record) for record in found], end, self._origin)

    def records(self) -> Iterator[dict[str, Any]]:
        with self._lock:
            # deep copies: a caller changing a nested value must not rewrite the record
            return iter([copy_json(r) for r in self._records])

    def records_newest_first(self) -> Iterator[dict[str, Any]]:
        """Every record, newest first (:class:`~forge_policy.audit.base.NewestFirst`)."""
        with self._lock:
            snapshot = list(self._records)
        return (copy_json(record) for record in reversed(snapshot))

    def records_since(self, since: float) -> list[dict[str, Any]]:
        """The records stamped at or after ``since``, oldest first: read from the newest back
        to the first older one, so a reconcile costs the recent records, not the history."""
        from forge_policy.audit.base import newest_since

        with self._lock:
            recent = newest_since(reversed(self._records), since)
        return [copy_json(record) for record in recent]

    def close(self) -> None:
        pass
