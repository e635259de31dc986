"""The SQLite audit sink: the same hash chain as the JSONL log, one row per record.

::

    audit(seq INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT, kind TEXT, override_id TEXT UNIQUE,
          session_id TEXT, record TEXT (JSON), prev_hash TEXT, hash TEXT)

``hash`` is the sha256 of the record's canonical line (the record with ``seq`` and
``prev = prev_hash``, exactly as the JSONL sink would write it), so both sinks verify alike.
``AUTOINCREMENT`` keeps the highest seq ever used in ``sqlite_sequence``: rows deleted from the
end are reported by :meth:`SQLiteAuditSink.verify`. WAL, ``synchronous=FULL`` and one
``BEGIN IMMEDIATE`` transaction per :meth:`~SQLiteAuditSink.append_many`.

>>> import tempfile, pathlib
>>> sink = SQLiteAuditSink(pathlib.Path(tempfile.mkdtemp()) / "audit.db")
>>> sink.append_many([{"kind": "override", "override_id": "o1", "reason": ""}])
>>> [(r["seq"], r["override_id"]) for r in sink.records()]
[(1, 'o1')]
>>> sink.verify().ok
True
>>> sink.close()
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from pathlib import Path

from forge_policy._budget import lock_wait
from forge_policy._time import iso
from forge_policy.audit._rows import chain_rows, verify_rows
from forge_policy.audit.verify import CHAIN_KEYS, GENESIS, Appended, VerifyReport
from forge_policy.errors import AuditError, AuditIntegrityError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

    from forge_policy.audit.base import Span
    from forge_policy.audit.verify import Checkpoint

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS audit (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        ts TEXT,
        kind TEXT NOT NULL,
        override_id TEXT UNIQUE,
        session_id TEXT,
        record TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS audit_session ON audit (session_id, seq)",
)
_SCHEMA_VERSION = 1
#: Rows one descending read fetches (``records_newest_first``).
_BATCH = 256


class SQLiteAuditSink:
    """A hash-chained audit table in a SQLite database, safe across threads and processes."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        timeout: float = 10.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self.clock = clock
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        #: where this sink's last append began and ended
        #: (:class:`~forge_policy.audit.base.Checkpointed`), None before the first
        self.last_append: Appended | None = None
        if self.path.is_symlink():
            raise AuditError(f"audit database path is a symlink, refused: {str(self.path)!r}")

    def __repr__(self) -> str:
        return f"SQLiteAuditSink({str(self.path)!r})"

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            if self.path.is_symlink():
                raise AuditError(f"audit database path is a symlink, refused: {str(self.path)!r}")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
                if conn.execute("PRAGMA user_version").fetchone()[0] < _SCHEMA_VERSION:
                    conn.execute("BEGIN IMMEDIATE")
                    for statement in _SCHEMA:
                        conn.execute(statement)
                    conn.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
                    conn.execute("COMMIT")
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def _exists(self) -> bool:
        """Whether there is a database to read (reading never creates one)."""
        return self._conn is not None or self.path.exists()

    def append_many(self, records: Iterable[dict[str, Any]]) -> None:
        """Append records in one transaction (durable at commit), as given (see
        :func:`forge_policy.audit.base.write`).

        An ``override_id`` already in the table raises :class:`~forge_policy.AuditError` and
        appends nothing. Rows deleted from the end are first noted by a ``recovery`` record.
        """
        batch = [{k: v for k, v in r.items() if k not in CHAIN_KEYS} for r in records]
        if not batch:
            return
        with self._lock, _mapped(self.path, "append to"):
            conn = self._connect()
            conn.execute(f"PRAGMA busy_timeout = {round(lock_wait(self.timeout) * 1000)}")
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute(
                    "SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1"
                ).fetchone()
                seq, prev = (row[0], row[1]) if row else (0, GENESIS)
                before = seq
                top = conn.execute(
                    "SELECT seq FROM sqlite_sequence WHERE name = 'audit'"
                ).fetchone()
                if top is not None and top[0] > seq:  # rows were deleted from the end
                    from forge_policy.audit.records import Recovery, to_dict

                    note = Recovery(
                        timestamp=iso(self.clock()),
                        reason="records missing from the end of the log",
                        head_seq=top[0],
                        log_seq=seq,
                    )
                    batch = [to_dict(note), *batch]
                rows, prev = chain_rows(batch, seq, prev)
                seq += len(rows)
                conn.executemany(
                    "INSERT INTO audit (seq, ts, kind, override_id, session_id, "
                    "record, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
                first = conn.execute("SELECT hash FROM audit ORDER BY seq LIMIT 1").fetchone()
                conn.execute("COMMIT")
                self.last_append = Appended(before, seq, prev, first[0])
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise

    def records(self) -> Iterator[dict[str, Any]]:
        """Every record oldest first, with its ``seq``."""
        return iter(self._query("", ()))

    def records_for_session(self, session_id: str) -> Iterator[dict[str, Any]]:
        """The records of one session, oldest first (an indexed query; the optional
        capability :func:`forge_policy.audit.base.session_records` uses)."""
        return iter(self._query("WHERE session_id = ?", (session_id,)))

    def records_newest_first(self) -> Iterator[dict[str, Any]]:
        """Every record, newest first (:class:`~forge_policy.audit.base.NewestFirst`): rows
        by descending ``seq``, :data:`_BATCH` at a time, so a page of the latest costs a page."""
        below = 2**62
        while True:
            rows = self._query("WHERE seq < ? ORDER BY seq DESC LIMIT ?", (below, _BATCH), "")
            yield from rows
            if len(rows) < _BATCH:
                return
            below = rows[-1]["seq"]

    def records_since(self, since: float) -> list[dict[str, Any]]:
        """The records stamped at or after ``since`` (epoch seconds), oldest first (the
        optional capability :func:`forge_policy.audit.base.recent_records` uses): rows are read
        newest first and the scan stops at the first one older than ``since``, so the cost is
        proportional to the recent records, not the table's size."""
        from forge_policy.audit.base import newest_since

        if not self._exists():
            return []
        with self._lock, _mapped(self.path, "read"):
            cursor = self._connect().execute("SELECT seq, record FROM audit ORDER BY seq DESC")
            try:
                return newest_since((self._record(seq, text) for seq, text in cursor), since)
            finally:
                cursor.close()

    def session_records_since(self, session_id: str, since: float) -> list[dict[str, Any]]:
        """One session's records stamped at or after ``since``, oldest first
        (:class:`~forge_policy.audit.base.SessionRecordsSince`): its rows newest first through
        the session index, to the first one older than ``since``."""
        from forge_policy.audit.base import newest_since

        if not self._exists():
            return []
        with self._lock, _mapped(self.path, "read"):
            cursor = self._connect().execute(
                "SELECT seq, record FROM audit WHERE session_id = ? ORDER BY seq DESC",
                (session_id,),
            )
            try:
                return newest_since((self._record(seq, text) for seq, text in cursor), since)
            finally:
                cursor.close()

    def session_records_after(self, session_id: str, seq: int, since: float) -> Span | None:
        """One session's records above ``seq`` (and from ``since`` on), oldest first, with the
        table's last ``seq`` and first row's hash (:class:`~forge_policy.audit.base.
        SessionRecordsAfter`): one read transaction, the session's rows above ``seq`` through the
        session index (``seq`` 0: to the first one older than ``since``)."""
        from forge_policy.audit.base import Span, newest_since

        if not self._exists():
            return Span([], 0, GENESIS) if seq <= 0 else None
        with self._lock, _mapped(self.path, "read"):
            conn = self._connect()
            conn.execute("BEGIN")  # one snapshot: the end and the rows read agree
            try:
                last = conn.execute("SELECT seq FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
                first = conn.execute("SELECT hash FROM audit ORDER BY seq LIMIT 1").fetchone()
                end = last[0] if last else 0
                if end < seq:
                    return None
                cursor = conn.execute(
                    "SELECT seq, record FROM audit WHERE session_id = ? AND seq > ? AND seq <= ? "
                    "ORDER BY seq DESC",
                    (session_id, max(seq, 0), end),
                )
                try:
                    found = newest_since((self._record(n, text) for n, text in cursor), since)
                finally:
                    cursor.close()
            finally:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("COMMIT")
        return Span(found, end, first[0] if first else GENESIS)

    def _query(
        self, where: str, params: tuple[Any, ...], order: str = "ORDER BY seq"
    ) -> list[dict[str, Any]]:
        # ``where`` and ``order`` are this module's literals, never caller text
        if not self._exists():
            return []
        with self._lock, _mapped(self.path, "read"):
            rows = (
                self._connect()
                .execute(f"SELECT seq, record FROM audit {where} {order}", params)
                .fetchall()
            )
        return [self._record(seq, text) for seq, text in rows]

    def _record(self, seq: int, text: str) -> dict[str, Any]:
        """One row as the record it stores, with its ``seq``."""
        try:
            record = json.loads(text)
        except (ValueError, RecursionError):
            record = None
        if not isinstance(record, dict):
            raise AuditIntegrityError(f"{self.path}: row seq {seq}: unreadable audit record")
        record["seq"] = seq
        return record

    def verify(self, checkpoints: Iterable[Checkpoint] = ()) -> VerifyReport:
        """Check every row: JSON, ``seq`` continuity, the hash chain, the columns, that no
        row was deleted from the end, and the sessions' ``checkpoints``."""
        if not self._exists():
            return verify_rows((), None, checkpoints)
        with self._lock, _mapped(self.path, "verify"):
            conn = self._connect()
            conn.execute("BEGIN")
            try:
                rows = conn.execute(
                    "SELECT seq, ts, kind, override_id, session_id, record, "
                    "prev_hash, hash FROM audit ORDER BY seq"
                ).fetchall()
                top = conn.execute(
                    "SELECT seq FROM sqlite_sequence WHERE name = 'audit'"
                ).fetchone()
            finally:
                conn.execute("COMMIT")
        return verify_rows(rows, None if top is None else int(top[0]), checkpoints)

    def close(self) -> None:
        """Close the connection (it reopens on the next call)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class _mapped:
    """Map sqlite3 and OS errors to :class:`~forge_policy.AuditError` (``raise ... from``)."""

    def __init__(self, path: Path, action: str) -> None:
        self.path = path
        self.action = action

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: object
    ) -> None:
        if isinstance(exc, sqlite3.IntegrityError):
            raise AuditError(
                f"cannot {self.action} audit database {str(self.path)!r}: "
                f"duplicate override_id ({exc})"
            ) from exc
        if isinstance(exc, sqlite3.Error | OSError):
            raise AuditError(
                f"cannot {self.action} audit database {str(self.path)!r}: {exc}"
            ) from exc
