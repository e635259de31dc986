"""The in-memory audit sink (tests, embedding, and the default when none is given)."""

from __future__ import annotations

import threading

from forge_policy.state import copy_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any


class MemoryAuditSink:
    """Audit records in a list: the reference :class:`~forge_policy.AuditSink` (records
    carry no ``seq``; its one optional capability is ``records_since``).

    >>> sink = MemoryAuditSink()
    >>> sink.append_many([{"kind": "override"}])
    >>> [r["kind"] for r in sink.records()]
    ['override']
    """

    def __init__(self) -> None:
        self._records: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def append_many(self, records: Iterable[dict[str, Any]]) -> None:
        copies = [copy_json(dict(r)) for r in records]  # the caller's records stay theirs
        with self._lock:
            self._records.extend(copies)

    def records(self) -> Iterator[dict[str, Any]]:
        with self._lock:
            # deep copies: a caller changing a nested value must not rewrite the record
            return iter([copy_json(r) for r in self._records])

    def records_since(self, since: float) -> list[dict[str, Any]]:
        """The records stamped at or after ``since``, oldest first: read from the newest back
        to the first older one, so a reconcile costs the recent records, not the history."""
        from forge_policy.audit.base import newest_since

        with self._lock:
            recent = newest_since(reversed(self._records), since)
        return [copy_json(record) for record in recent]

    def close(self) -> None:
        pass
