"""The PostgreSQL audit sink: the hash chain of the JSONL log, in a table other hosts share.

::

    forge_audit(seq bigint PRIMARY KEY, ts, kind, override_id UNIQUE, session_id,
                record text (canonical JSON), prev_hash, hash)
    forge_audit_head(seq bigint PRIMARY KEY, hash)     one row per append: the chain's end

Rows are those of the SQLite sink (:mod:`forge_policy.audit._rows`), so both verify alike.
Append-only by construction, twice over:

- **Privileges.** An appender needs INSERT and SELECT only (the README's "Several machines"
  section shows the GRANTs): the head is a table appended to, never updated, and appends are
  serialised by a transaction-scoped advisory lock, which needs no privilege (``LOCK TABLE``
  would need UPDATE). A host whose role cannot UPDATE or DELETE cannot rewrite what it wrote.
- **Triggers.** ``UPDATE``, ``DELETE`` and ``TRUNCATE`` on either table raise, whoever runs
  them, until an owner drops the trigger; and then :meth:`PostgresAuditSink.verify` sees the
  edit, as it does for the JSONL log.

Each :meth:`~PostgresAuditSink.append_many` is one transaction, durable at its commit.

>>> PostgresAuditSink("postgresql://auditor:s3cret@db.example/gov")
PostgresAuditSink('postgresql://auditor:****@db.example/gov')
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time

from forge_policy._infra import pg as _pg
from forge_policy._infra.filelock import DEFAULT_TIMEOUT
from forge_policy._time import iso
from forge_policy.audit._rows import chain_rows, verify_rows
from forge_policy.audit.verify import CHAIN_KEYS, GENESIS, Appended, VerifyReport
from forge_policy.errors import AuditError, AuditIntegrityError, ForgePolicyError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from typing import Any

    import psycopg

    from forge_policy.audit.base import Span
    from forge_policy.audit.verify import Checkpoint

_APPEND_ONLY = """CREATE FUNCTION forge_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit table % is append-only', TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END $$"""

#: ``MIGRATIONS[n]`` takes the sink's schema from version ``n`` to ``n + 1``. Append, never edit.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        "CREATE TABLE forge_audit (seq bigint PRIMARY KEY, ts text, kind text NOT NULL,"
        " override_id text UNIQUE, session_id text, record text NOT NULL,"
        " prev_hash text NOT NULL, hash text NOT NULL)",
        "CREATE INDEX forge_audit_session ON forge_audit (session_id, seq)",
        "CREATE TABLE forge_audit_head (seq bigint PRIMARY KEY, hash text NOT NULL)",
        _APPEND_ONLY,
        *(
            f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table}"
            " FOR EACH ROW EXECUTE FUNCTION forge_audit_append_only()"
            for table in ("forge_audit", "forge_audit_head")
        ),
        *(
            f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}"
            " FOR EACH STATEMENT EXECUTE FUNCTION forge_audit_append_only()"
            for table in ("forge_audit", "forge_audit_head")
        ),
    ),
)
#: The advisory lock key that serialises appends (``"fpau"`` as an int).
_APPEND_LOCK = 0x66706175
#: Rows read per round trip by the newest-first scans.
_BATCH = 256

_INSERT = (
    "INSERT INTO forge_audit (seq, ts, kind, override_id, session_id, record, prev_hash, hash)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
)


class PostgresAuditSink:
    """A hash-chained audit table in PostgreSQL, safe across threads, processes and hosts.

    ``dsn`` as for :class:`~forge_policy.stores.postgres.PostgresStore` (its password is never
    shown). Nothing connects before the first call.
    """

    def __init__(
        self,
        dsn: str,
        *,
        lock_timeout: float = DEFAULT_TIMEOUT,
        statement_timeout: float | None = None,
        clock: Callable[[], float] = time.time,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.dsn = dsn
        self.where = _pg.mask(dsn)
        self.lock_timeout = lock_timeout
        self.statement_timeout = (
            statement_timeout if statement_timeout is not None else lock_timeout + 5.0
        )
        self.clock = clock
        self.environ = environ
        self._conn: psycopg.Connection[Any] | None = None
        self._pid = 0
        self._inherited: list[object] = []
        self._lock = threading.RLock()
        #: where this sink's last append began and ended
        #: (:class:`~forge_policy.audit.base.Checkpointed`), None before the first
        self.last_append: Appended | None = None

    def __repr__(self) -> str:
        return f"PostgresAuditSink({self.where!r})"

    # -- connection ------------------------------------------------------------------------

    def _connect(self) -> psycopg.Connection[Any]:
        if self._conn is not None and self._pid != os.getpid():
            self._inherited.append(self._conn)  # a forked child leaves its parent's alone
            self._conn = None
        if self._conn is not None and (self._conn.closed or self._conn.broken):
            self._conn = None
        if self._conn is None:
            try:
                _pg.need_psycopg("FORGE_AUDIT")
                conn = _pg.connect(
                    self.dsn, self.lock_timeout, self.statement_timeout, self.environ
                )
            except ForgePolicyError as exc:
                raise AuditError(f"cannot open audit database {self.where}: {exc}") from exc
            except Exception as exc:
                raise self._error(exc, "connect to") from exc
            try:
                _pg.migrate(conn, "audit", MIGRATIONS, self.where)
            except Exception as exc:
                conn.close()
                raise self._error(exc, "migrate") from exc
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def _error(self, exc: BaseException, action: str) -> AuditError:
        import psycopg.errors

        if isinstance(exc, AuditError):
            return exc
        if isinstance(exc, psycopg.errors.UniqueViolation):
            return AuditError(f"cannot {action} audit database {self.where}: duplicate override_id")
        detail = _pg.describe(exc, self.lock_timeout)
        return AuditError(f"cannot {action} audit database {self.where}: {detail}")

    def _rollback(self, conn: psycopg.Connection[Any]) -> None:
        import psycopg.pq

        if conn.closed or conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
            return
        with contextlib.suppress(Exception):
            conn.execute("ROLLBACK")

    # -- the AuditSink protocol ------------------------------------------------------------

    def append_many(self, records: Iterable[dict[str, Any]]) -> None:
        """Append records in one transaction (durable at commit), as given (see
        :func:`forge_policy.audit.base.write`).

        An ``override_id`` already in the table raises :class:`~forge_policy.AuditError` and
        appends nothing. Rows missing from the end are first noted by a ``recovery`` record.
        A connection found dead before anything was sent is replaced once.
        """
        batch = [{k: v for k, v in r.items() if k not in CHAIN_KEYS} for r in records]  # as given
        if not batch:
            return
        with self._lock:
            for attempt in (1, 2):
                conn = self._connect()
                try:
                    conn.execute("BEGIN")
                    _pg.bound_wait(conn, self.lock_timeout)
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_APPEND_LOCK,))
                except Exception as exc:
                    self._rollback(conn)
                    if attempt == 1 and _pg.is_disconnect(exc, conn):
                        self._conn = None
                        continue
                    raise self._error(exc, "append to") from exc
                try:
                    self._append(conn, batch)
                    return
                except Exception as exc:
                    raise self._error(exc, "append to") from exc
                finally:
                    self._rollback(conn)

    def _append(self, conn: psycopg.Connection[Any], batch: list[dict[str, Any]]) -> None:
        row = conn.execute("SELECT seq, hash FROM forge_audit ORDER BY seq DESC LIMIT 1").fetchone()
        seq, prev = (int(row[0]), str(row[1])) if row else (0, GENESIS)
        before = seq
        top = conn.execute("SELECT max(seq) FROM forge_audit_head").fetchone()
        if top is not None and top[0] is not None and top[0] > seq:  # rows gone from the end
            from forge_policy.audit.records import Recovery, to_dict

            note = Recovery(
                timestamp=iso(self.clock()),
                reason="records missing from the end of the log",
                head_seq=int(top[0]),
                log_seq=seq,
            )
            batch = [to_dict(note), *batch]
        rows, prev = chain_rows(batch, seq, prev)
        seq += len(rows)
        with conn.cursor() as cursor:
            cursor.executemany(_INSERT, rows)
        conn.execute("INSERT INTO forge_audit_head (seq, hash) VALUES (%s, %s)", (seq, prev))
        first = conn.execute("SELECT hash FROM forge_audit ORDER BY seq LIMIT 1").fetchone()
        conn.execute("COMMIT")
        self.last_append = Appended(before, seq, prev, str(first[0]) if first else prev)

    def records(self) -> Iterator[dict[str, Any]]:
        """Every record oldest first, with its ``seq``."""
        return iter(self._query("SELECT seq, record FROM forge_audit ORDER BY seq", ()))

    def records_for_session(self, session_id: str) -> Iterator[dict[str, Any]]:
        """The records of one session, oldest first (an indexed query: the optional capability
        :func:`forge_policy.audit.base.session_records` uses)."""
        return iter(
            self._query(
                "SELECT seq, record FROM forge_audit WHERE session_id = %s ORDER BY seq",
                (session_id,),
            )
        )

    def records_newest_first(self) -> Iterator[dict[str, Any]]:
        """Every record, newest first (:class:`~forge_policy.audit.base.NewestFirst`), a batch
        of rows at a time."""
        return self._newest_first(None)

    def records_since(self, since: float) -> list[dict[str, Any]]:
        """The records stamped at or after ``since`` (epoch seconds), oldest first: rows are read
        newest first, a batch at a time, to the first one older than ``since``."""
        from forge_policy.audit.base import newest_since

        return newest_since(self._newest_first(None), since)

    def session_records_since(self, session_id: str, since: float) -> list[dict[str, Any]]:
        """One session's records stamped at or after ``since``, oldest first
        (:class:`~forge_policy.audit.base.SessionRecordsSince`), through the session index."""
        from forge_policy.audit.base import newest_since

        return newest_since(self._newest_first(session_id), since)

    def session_records_after(self, session_id: str, seq: int, since: float) -> Span | None:
        """One session's records above ``seq`` (and from ``since`` on), oldest first, with the
        table's last ``seq`` and first row's hash (:class:`~forge_policy.audit.base.
        SessionRecordsAfter`): the end is read first, then the session's rows above ``seq`` up
        to it through the session index (appends are serialised: a later one has a higher
        ``seq``); with ``seq`` 0, back to the first row older than ``since``."""
        from forge_policy.audit.base import Span, newest_since

        with self._lock:
            conn = self._connect()
            try:
                row = conn.execute(
                    "SELECT (SELECT max(seq) FROM forge_audit),"
                    " (SELECT hash FROM forge_audit ORDER BY seq LIMIT 1)"
                ).fetchone()
            except Exception as exc:
                raise self._error(exc, "read") from exc
        end = int(row[0]) if row is not None and row[0] is not None else 0
        origin = str(row[1]) if row is not None and row[1] is not None else GENESIS
        if end < seq:
            return None
        if seq <= 0:
            found = newest_since(self._newest_first(session_id), since)
            return Span(found, end, origin)  # rows above ``end``: read again next time
        rows = self._query(
            "SELECT seq, record FROM forge_audit WHERE session_id = %s AND seq > %s"
            " AND seq <= %s ORDER BY seq DESC",
            (session_id, seq, end),
        )
        return Span(newest_since(rows, since), end, origin)

    def _newest_first(self, session_id: str | None) -> Iterator[dict[str, Any]]:
        below = None
        while True:
            params: tuple[Any, ...]
            if session_id is None:
                sql = (
                    "SELECT seq, record FROM forge_audit WHERE seq < %s ORDER BY seq DESC LIMIT %s"
                )
                params = (below if below is not None else 2**62, _BATCH)
            else:
                sql = (
                    "SELECT seq, record FROM forge_audit WHERE session_id = %s AND seq < %s"
                    " ORDER BY seq DESC LIMIT %s"
                )
                params = (session_id, below if below is not None else 2**62, _BATCH)
            rows = self._query(sql, params)
            yield from rows
            if len(rows) < _BATCH:
                return
            below = rows[-1]["seq"]

    def _query(self, sql: Any, params: tuple[Any, ...]) -> list[dict[str, Any]]:
        with self._lock:
            conn = self._connect()
            try:
                rows = conn.execute(sql, params).fetchall()
            except Exception as exc:
                raise self._error(exc, "read") from exc
        return [self._record(seq, text) for seq, text in rows]

    def _record(self, seq: int, text: str) -> dict[str, Any]:
        """One row as the record it stores, with its ``seq``."""
        try:
            record = json.loads(text)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            raise AuditIntegrityError(f"{self.where}: row seq {seq}: unreadable audit record")
        record["seq"] = seq
        return record

    def verify(self, checkpoints: Iterable[Checkpoint] = ()) -> VerifyReport:
        """Check every row (:func:`~forge_policy.audit._rows.verify_rows`) in one snapshot, as
        of one moment: appenders are not blocked, and none is seen half-written."""
        with self._lock:
            conn = self._connect()
            try:
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                rows = conn.execute(
                    "SELECT seq, ts, kind, override_id, session_id, record, prev_hash, hash"
                    " FROM forge_audit ORDER BY seq"
                ).fetchall()
                top = conn.execute("SELECT max(seq) FROM forge_audit_head").fetchone()
                conn.execute("COMMIT")
            except Exception as exc:
                raise self._error(exc, "verify") from exc
            finally:
                self._rollback(conn)
        head = None if top is None or top[0] is None else int(top[0])
        return verify_rows(rows, head, checkpoints)

    def close(self) -> None:
        """Close the connection (it reopens on the next call)."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None
