"""A JSONL audit sink that imports and opens :class:`~forge_policy.audit.jsonl.JsonlAuditSink`
only when a record is written or read.

Most hook calls write no audit record; deferring the import keeps :mod:`pathlib`, the hash-chain
code and portalocker off that path.

>>> import tempfile, os
>>> sink = LazyJsonlSink(os.path.join(tempfile.mkdtemp(), "audit", "overrides.log"), fsync=False)
>>> sink.opened
False
>>> sink.append_many([{"kind": "bypass", "behavior_id": "search-first"}])
>>> sink.opened, [r["kind"] for r in sink.records()]
(True, ['bypass'])
"""

from __future__ import annotations

from forge_policy._infra.filelock import DEFAULT_TIMEOUT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    from forge_policy.audit.base import Span
    from forge_policy.audit.jsonl import JsonlAuditSink
    from forge_policy.audit.verify import Appended, Checkpoint, VerifyReport


class LazyJsonlSink:
    """An :class:`~forge_policy.AuditSink` over ``JsonlAuditSink(path, fsync=fsync,
    lock_timeout=lock_timeout, session_index=session_index)``, with its capabilities
    (``verify``, ``records_since``) and :class:`~forge_policy.audit.base.SessionRecords`."""

    __slots__ = ("_sink", "fsync", "lock_timeout", "path", "session_index")

    def __init__(
        self,
        path: str,
        *,
        fsync: bool = True,
        lock_timeout: float = DEFAULT_TIMEOUT,
        session_index: bool = False,
    ) -> None:
        self.path = path
        self.fsync = fsync
        self.lock_timeout = lock_timeout
        self.session_index = session_index
        self._sink: JsonlAuditSink | None = None

    @property
    def opened(self) -> bool:
        """Whether the real sink has been created."""
        return self._sink is not None

    def sink(self) -> JsonlAuditSink:
        """The real sink, created on first use."""
        if self._sink is None:
            from forge_policy.audit.jsonl import JsonlAuditSink

            self._sink = JsonlAuditSink(
                self.path,
                fsync=self.fsync,
                lock_timeout=self.lock_timeout,
                session_index=self.session_index,
            )
        return self._sink

    def append_many(self, records: Iterable[dict[str, Any]]) -> None:
        """Durably append records (see :meth:`JsonlAuditSink.append_many`)."""
        batch = list(records)
        if batch:
            self.sink().append_many(batch)

    def append_unsynced(self, records: Iterable[dict[str, Any]]) -> None:
        """See :meth:`JsonlAuditSink.append_unsynced`."""
        self.sink().append_unsynced(records)

    def append_sync_after_answer(self, records: Iterable[dict[str, Any]]) -> None:
        """See :meth:`JsonlAuditSink.append_sync_after_answer`."""
        self.sink().append_sync_after_answer(records)

    def records(self) -> Iterator[dict[str, Any]]:
        """Every record, oldest first."""
        return self.sink().records()

    def verify(self, checkpoints: Iterable[Checkpoint] = ()) -> VerifyReport:
        """Check the log's hash chain (see :meth:`JsonlAuditSink.verify`)."""
        return self.sink().verify(checkpoints)

    @property
    def last_append(self) -> Appended | None:
        """Where the last append began and ended (see :class:`JsonlAuditSink`)."""
        return self._sink.last_append if self._sink is not None else None

    def records_since(self, since: float) -> list[dict[str, Any]]:
        """The recent records (see :meth:`JsonlAuditSink.records_since`)."""
        return self.sink().records_since(since)

    def session_records_since(self, session_id: str, since: float) -> list[dict[str, Any]]:
        """One session's recent records (see :meth:`JsonlAuditSink.session_records_since`)."""
        return self.sink().session_records_since(session_id, since)

    def session_records_after(self, session_id: str, seq: int, since: float) -> Span | None:
        """Records above ``seq`` (see :meth:`JsonlAuditSink.session_records_after`)."""
        return self.sink().session_records_after(session_id, seq, since)

    def records_newest_first(self) -> Iterator[dict[str, Any]]:
        """Every record, newest first (see :meth:`JsonlAuditSink.records_newest_first`)."""
        return self.sink().records_newest_first()

    def records_for_session(self, session_id: str) -> Iterator[dict[str, Any]]:
        """The records of one session, oldest first."""
        for record in self.records():
            if record.get("session_id") == session_id:
                yield record

    def close(self) -> None:
        """Close the real sink if it was opened."""
        if self._sink is not None:
            self._sink.close()

    def __repr__(self) -> str:
        return f"LazyJsonlSink({self.path!r})"
