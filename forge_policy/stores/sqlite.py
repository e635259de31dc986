"""The SQLite store (SPEC §9): one row per session in a WAL database.

Why it is built this way:

- WAL lets readers (``status``, :meth:`SQLiteStore.load`) run while a hook writes.
- ``BEGIN IMMEDIATE`` takes the write lock when the transaction starts, so two hooks never both
  read the old counter; the busy timeout bounds the wait, then :class:`~forge_policy.LockTimeout`.
- ``sessions.last_accessed_at`` is a column with an index, so expiry finds candidates without
  reading every row, and an event costs two B-tree lookups however many sessions exist.
- Migrations are a tuple of functions; the ``schema_version`` table records which have run.
- Every statement is a constant with ``?`` parameters: no SQL is ever built from input.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sqlite3
import threading
import time

from forge_policy._budget import lock_wait
from forge_policy._infra.filelock import DEFAULT_TIMEOUT
from forge_policy.errors import InvalidArgument, LockTimeout, StoreError
from forge_policy.secrets import redact_json
from forge_policy.state import SessionState, is_expired
from forge_policy.stores._recovery import quarantine, report, report_quarantine

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T")


def _migrate_1(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, data TEXT NOT NULL,"
        " last_accessed_at REAL NOT NULL)"
    )
    conn.execute("CREATE INDEX sessions_last_accessed_at ON sessions (last_accessed_at)")
    # rows whose data is not a session document are moved here, never dropped
    conn.execute(
        "CREATE TABLE quarantine (id TEXT NOT NULL, data TEXT, reason TEXT NOT NULL,"
        " moved_at REAL NOT NULL)"
    )


#: ``MIGRATIONS[n]`` takes the schema from version ``n`` to ``n + 1``. Append, never edit.
MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_migrate_1,)

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
#: A bad row moves to the quarantine table (:func:`~forge_policy.stores._recovery.quarantine`).
_QUARANTINE = (
    "INSERT INTO quarantine (id, data, reason, moved_at) VALUES (?, ?, ?, ?)",
    "DELETE FROM sessions WHERE id = ?",
)

#: The only ``synchronous`` settings, as whole statements: the caller's text never reaches SQL.
_SYNCHRONOUS = {
    "OFF": "PRAGMA synchronous = OFF",
    "NORMAL": "PRAGMA synchronous = NORMAL",
    "FULL": "PRAGMA synchronous = FULL",
    "EXTRA": "PRAGMA synchronous = EXTRA",
}


def _dumps(state: SessionState) -> str:
    return json.dumps(
        redact_json(state.to_dict()), ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )


class SQLiteStore:
    """Session state in a SQLite database, safe for concurrent hook processes and threads.

    ``busy_timeout`` bounds the wait for the write lock (then :class:`~forge_policy.LockTimeout`);
    ``synchronous`` is ``FULL`` (durable across power loss), ``NORMAL``, ``EXTRA`` or ``OFF``.
    The database is opened (and migrated) on first use, so a bad path surfaces as
    :class:`~forge_policy.StoreError` there, where the evaluator can fall back.

    Expiry: :meth:`purge` reads only the candidates the index finds. With ``ttl`` set, every write
    also purges: through the index it costs one lookup when nothing has expired. A row that is not
    a session document is moved to the ``quarantine`` table and reported to ``on_recovery``.

    >>> store = SQLiteStore(":memory:")
    >>> store.transact("s1", lambda cur: (cur is None, SessionState.new(0.0)))
    True
    >>> store.session_ids()
    ['s1']
    >>> store.close()
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = DEFAULT_TIMEOUT,
        synchronous: str = "FULL",
        on_recovery: Callable[[dict[str, Any]], None] | None = None,
        ttl: float | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if synchronous.upper() not in _SYNCHRONOUS:
            raise InvalidArgument(f"synchronous must be one of {', '.join(_SYNCHRONOUS)}")
        self.path = os.fspath(path)
        self.busy_timeout = busy_timeout
        self.synchronous = synchronous.upper()
        self.on_recovery = on_recovery
        self.ttl = ttl
        self.clock = clock
        self._conn: sqlite3.Connection | None = None
        self._pid = 0
        self._inherited: list[sqlite3.Connection] = []
        self._closed = False
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"

    # -- the RuntimeStore protocol ---------------------------------------------------------

    def transact(
        self, session_id: str, apply: Callable[[SessionState | None], tuple[T, SessionState | None]]
    ) -> T:
        with self._lock:
            conn = self._connection()
            self._run(conn, f"PRAGMA busy_timeout = {round(lock_wait(self.busy_timeout) * 1000)}")
            self._run(conn, "BEGIN IMMEDIATE")
            try:
                current, recovered = self._select(conn, session_id)
                result, new_state = apply(current)
                if new_state is not None:
                    self._upsert(conn, session_id, new_state)
                    if self.ttl is not None:
                        self._purge(conn, self.clock(), self.ttl, keep=session_id)
                if new_state is not None or recovered:
                    self._run(conn, "COMMIT")
            finally:
                _rollback(conn)  # apply raised, or there was nothing to write
            if recovered:
                report_quarantine(recovered, self.on_recovery)
            return result

    def load(self, session_id: str) -> SessionState | None:
        with self._lock:
            conn = self._connection()
            row = self._run(conn, "SELECT data FROM sessions WHERE id = ?", (session_id,))
        if row is None:
            return None
        state = SessionState.from_json(row[0])
        if state is None:  # move the bad row aside, under the write lock
            return self.transact(session_id, lambda current: (current, None))
        return state

    def session_ids(self) -> list[str]:
        with self._lock:
            conn = self._connection()
            try:
                return [row[0] for row in conn.execute("SELECT id FROM sessions ORDER BY id")]
            except sqlite3.Error as exc:
                raise self._error(exc, "cannot list sessions") from exc

    def purge(self, now: float, ttl: float) -> int:
        with self._lock:
            conn = self._connection()
            self._run(conn, "BEGIN IMMEDIATE")
            try:
                removed = self._purge(conn, now, ttl, keep=None)
                self._run(conn, "COMMIT")
            finally:
                _rollback(conn)
            return removed

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- the connection --------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        try:
            return self._open_connection()
        except StoreError as exc:
            if self.path == ":memory:" or not _corrupt(exc):
                raise
        # not a database (overwritten, truncated): moved aside, never dropped, and a new one
        # begins; the evaluator rebuilds each session from the audit log (SPEC §9)
        self._quarantine_file()
        return self._open_connection()

    def _quarantine_file(self) -> None:
        """Move the database file (and its -wal, -shm) aside and report it."""
        now = time.time()
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z"
        target = f"{self.path}.corrupt-{stamp}"
        try:
            for suffix in ("-wal", "-shm", ""):
                if os.path.lexists(self.path + suffix):
                    os.rename(self.path + suffix, target + suffix)
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot move the corrupt database aside: {exc}") from exc
        from forge_policy._time import iso
        from forge_policy.audit import records

        reason = "not a SQLite database (or a malformed one)"
        record = records.to_dict(
            records.Recovery(timestamp=iso(now), path=self.path, moved_to=target, reason=reason)
        )
        message = f"{self.path}: corrupt database moved to {target}; starting afresh"
        report(record, message, self.on_recovery)

    def _open_connection(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreError(f"{self.path}: the store is closed")
        if self._conn is not None:
            if self._pid == os.getpid():
                return self._conn
            # a forked child must not use, nor close, its parent's connection (SQLite's rule)
            self._inherited.append(self._conn)
            self._conn = None
        try:
            if self.path != ":memory:":
                os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
                # created private, as FileStore's state is (SQLite gives -wal/-shm the same mode);
                # an empty file is an empty database
                os.close(os.open(self.path, os.O_RDWR | os.O_CREAT | _CLOEXEC, 0o600))
            conn = sqlite3.connect(
                self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"{self.path}: cannot open: {exc}") from exc
        try:
            self._run(conn, "PRAGMA journal_mode = WAL")
            self._run(conn, _SYNCHRONOUS[self.synchronous])
            self._migrate(conn)
        except BaseException:
            conn.close()
            raise
        self._conn, self._pid = conn, os.getpid()
        return conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """Run the migrations this database lacks, in one transaction (others may race us)."""
        if self._version(conn) == len(MIGRATIONS):
            return  # the common case: a read, no write lock
        self._run(conn, "BEGIN IMMEDIATE")
        try:
            self._run(conn, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            version = self._version(conn)
            if version > len(MIGRATIONS):
                raise StoreError(
                    f"{self.path}: schema version {version} is newer than this forge_policy "
                    f"reads ({len(MIGRATIONS)}); upgrade forge_policy"
                )
            for target in range(version + 1, len(MIGRATIONS) + 1):
                MIGRATIONS[target - 1](conn)
                self._run(conn, "INSERT INTO schema_version (version) VALUES (?)", (target,))
            self._run(conn, "COMMIT")
        except sqlite3.Error as exc:
            raise self._error(exc, "cannot migrate") from exc
        finally:
            _rollback(conn)

    def _version(self, conn: sqlite3.Connection) -> int:
        row = self._run(
            conn,
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'",
        )
        if not row or not row[0]:
            return 0
        row = self._run(conn, "SELECT max(version) FROM schema_version")
        return int(row[0] or 0) if row else 0

    # -- statements ------------------------------------------------------------------------

    def _run(self, conn: sqlite3.Connection, sql: str, params: tuple[Any, ...] = ()) -> Any:
        """Execute one constant statement; return its first row. sqlite3 errors are mapped."""
        try:
            return conn.execute(sql, params).fetchone()
        except sqlite3.Error as exc:
            raise self._error(exc, sql.split(" (")[0]) from exc

    def _select(
        self, conn: sqlite3.Connection, session_id: str
    ) -> tuple[SessionState | None, dict[str, Any] | None]:
        """The session, or None; a bad row is quarantined (in this transaction) and reported."""
        row = self._run(conn, "SELECT data FROM sessions WHERE id = ?", (session_id,))
        if row is None:
            return None, None
        state = SessionState.from_json(row[0])
        if state is not None:
            return state, None
        execute = functools.partial(self._run, conn)
        return None, quarantine(execute, _QUARANTINE, session_id, row[0], self.path, "quarantine")

    def _upsert(self, conn: sqlite3.Connection, session_id: str, state: SessionState) -> None:
        try:
            data = _dumps(state)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"{self.path}: session state is not JSON: {exc}") from exc
        self._run(
            conn,
            "INSERT INTO sessions (id, data, last_accessed_at) VALUES (?, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET data = excluded.data,"
            " last_accessed_at = excluded.last_accessed_at",
            (session_id, data, state.last_accessed_at),
        )

    def _purge(self, conn: sqlite3.Connection, now: float, ttl: float, keep: str | None) -> int:
        # the index narrows the candidates (a second of slack for float rounding); the exact
        # test is the one expiry rule, so every store expires the same sessions
        try:
            rows = conn.execute(
                "SELECT id, last_accessed_at FROM sessions WHERE last_accessed_at < ?",
                (now - ttl + 1.0,),
            ).fetchall()
            expired = [(sid,) for sid, last in rows if sid != keep and is_expired(last, now, ttl)]
            conn.executemany("DELETE FROM sessions WHERE id = ?", expired)
        except sqlite3.Error as exc:
            raise self._error(exc, "cannot purge") from exc
        return len(expired)

    def _error(self, exc: sqlite3.Error, doing: str) -> StoreError:
        name = getattr(exc, "sqlite_errorname", "")
        if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(exc):
            return LockTimeout(
                f"{self.path}: database is locked: not acquired within {self.busy_timeout:g} s"
            )
        return StoreError(f"{self.path}: {doing}: {exc}")


def _corrupt(exc: StoreError) -> bool:
    """Whether ``exc`` says the file is not a (sound) SQLite database."""
    cause = exc.__cause__
    text = str(cause).lower()
    return isinstance(cause, sqlite3.DatabaseError) and (
        "file is not a database" in text or "malformed" in text
    )


def _rollback(conn: sqlite3.Connection) -> None:
    """End an open transaction without writing; a failure here must not hide the first one."""
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.rollback()
