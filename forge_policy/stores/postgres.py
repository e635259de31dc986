"""The PostgreSQL store (SPEC §9): one governance state for several machines.

Why it is built this way:

- **One transaction per event, the session locked.** ``locking="row"`` (the default) takes
  the session's row with ``SELECT … FOR UPDATE``; a session with no row yet is serialised by a
  transaction-scoped advisory lock on its id first, then read again (a row lock cannot lock a
  row that does not exist). ``locking="advisory"`` always takes the advisory lock, then reads:
  one more round trip per event (``tests/benchmarks/bench_postgres.py`` measures both; see
  ``tests/benchmarks/RESULTS.md``). Either way the read that feeds ``apply`` is a statement
  started after the lock was granted, so under READ COMMITTED it sees the last commit.
- **Bounded waits, failing closed.** ``lock_timeout`` is the store's lock timeout
  (:class:`~forge_policy.LockTimeout`), ``statement_timeout`` bounds every statement and
  ``idle_in_transaction_session_timeout`` frees a lock whose holder stopped; each is a
  :class:`~forge_policy.StoreError`, on which the evaluator decides statelessly.
- **Reconnect.** A connection found dead (the server restarted, the socket dropped) before
  ``apply`` ran is replaced once; after ``apply`` ran, the error is raised (``apply`` is called
  once). A cold hook process opens one connection on first use; the worker and serve pass
  ``pool_size`` > 1 for a psycopg pool shared by their threads.
- **Expiry by index.** ``last_accessed_at`` is an indexed column; a write purges at most once a
  minute per store, after its commit, skipping locked rows, so a purge never waits nor fails an
  event. Migrations are versioned in the ``forge_schema`` table. Every statement is a constant.

>>> PostgresStore("postgresql://forge:s3cret@db.example/gov")
PostgresStore('postgresql://forge:****@db.example/gov')
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time

from forge_policy._infra import pg as _pg
from forge_policy._infra.filelock import DEFAULT_TIMEOUT
from forge_policy.errors import ConfigError, InvalidArgument, StoreError
from forge_policy.secrets import redact_json
from forge_policy.state import SessionState, is_expired
from forge_policy.stores._recovery import quarantine, report, report_quarantine

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, TypeVar

    import psycopg
    import psycopg_pool

    T = TypeVar("T")

#: ``MIGRATIONS[n]`` takes the store's schema from version ``n`` to ``n + 1``. Append, never edit.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        "CREATE TABLE forge_sessions (id text PRIMARY KEY, data text NOT NULL,"
        " last_accessed_at double precision NOT NULL)",
        "CREATE INDEX forge_sessions_last_accessed_at ON forge_sessions (last_accessed_at)",
        # rows whose data is not a session document are moved here, never dropped
        "CREATE TABLE forge_quarantine (id text NOT NULL, data text, reason text NOT NULL,"
        " moved_at double precision NOT NULL)",
    ),
)
LOCKING = ("row", "advisory")
#: The first key of the sessions' advisory locks (the second is ``hashtext(session id)``):
#: ``"fpss"`` as an int, apart from the migration lock's.
_SESSION_LOCKS = 0x66707373
#: A bad row moves to forge_quarantine (:func:`~forge_policy.stores._recovery.quarantine`).
_QUARANTINE = (
    "INSERT INTO forge_quarantine (id, data, reason, moved_at) VALUES (%s, %s, %s, %s)",
    "DELETE FROM forge_sessions WHERE id = %s",
)
#: A write purges expired sessions at most this often (seconds) per store.
PURGE_EVERY = 60.0


def _dumps(state: SessionState) -> str:
    # ASCII: a lone surrogate in a document is escaped, never an encoding error at the server
    return json.dumps(redact_json(state.to_dict()), separators=(",", ":"), allow_nan=False)


class PostgresStore:
    """Session state in PostgreSQL, shared by every host that reaches the database.

    ``dsn`` is a libpq URL or ``key=value`` string; its password (better: ``PGPASSWORD``,
    ``PGPASSFILE`` or ``password_env=NAME``, see :mod:`forge_policy._infra.pg`) is never
    shown. Nothing connects before the first call, so an unreachable server surfaces as
    :class:`~forge_policy.StoreError` there, where the evaluator falls back.

    >>> store = PostgresStore("host=db.example dbname=gov password=s3cret", pool_size=4)
    >>> store.locking, store.pool_size, "s3cret" in repr(store)
    ('row', 4, False)
    """

    def __init__(
        self,
        dsn: str,
        *,
        lock_timeout: float = DEFAULT_TIMEOUT,
        statement_timeout: float | None = None,
        locking: str = "row",
        pool_size: int = 1,
        ttl: float | None = None,
        clock: Callable[[], float] = time.time,
        on_recovery: Callable[[dict[str, Any]], None] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        if locking not in LOCKING:
            raise InvalidArgument(f"locking must be one of {', '.join(LOCKING)}, got {locking!r}")
        if pool_size < 1:
            raise InvalidArgument(f"pool_size must be 1 or more, got {pool_size}")
        self.dsn = dsn
        self.where = _pg.mask(dsn)
        self.lock_timeout = lock_timeout
        # longer than the lock wait, so that a wait ends as a LockTimeout, not a cancel
        self.statement_timeout = (
            statement_timeout if statement_timeout is not None else lock_timeout + 5.0
        )
        self.locking = locking
        self.pool_size = pool_size
        self.ttl = ttl
        self.clock = clock
        self.on_recovery = on_recovery
        self.environ = environ
        self._lock = threading.RLock()
        self._conn: psycopg.Connection[Any] | None = None
        self._pool: psycopg_pool.ConnectionPool[Any] | None = None
        self._pid = 0
        self._inherited: list[object] = []
        self._closed = False
        self._next_purge = 0.0
        self._unreachable = False
        self._migrated = False

    def __repr__(self) -> str:
        return f"PostgresStore({self.where!r})"

    # -- the RuntimeStore protocol ---------------------------------------------------------

    def transact(
        self, session_id: str, apply: Callable[[SessionState | None], tuple[T, SessionState | None]]
    ) -> T:
        for attempt in (1, 2):
            with self._session() as conn:
                try:
                    current, recovered = self._begin(conn, session_id)
                except Exception as exc:
                    _rollback(conn)
                    if attempt == 1 and _pg.is_disconnect(exc, conn):
                        self._discard(conn)
                        continue  # nothing was decided on the dead connection: once more
                    raise self._error(exc, "cannot read the session") from exc
                try:
                    result, new_state = apply(current)
                    if new_state is not None:
                        self._upsert(conn, session_id, new_state)
                    if new_state is not None or recovered:
                        self._run(conn, "COMMIT")
                finally:
                    _rollback(conn)  # apply raised, or there was nothing to write
                if new_state is not None:
                    self._purge_now_and_then(conn, keep=session_id)
            if recovered:
                report_quarantine(recovered, self.on_recovery)
            return result
        raise StoreError(f"{self.where}: the connection was lost twice")  # pragma: no cover

    def load(self, session_id: str) -> SessionState | None:
        row = self._read(
            lambda conn: conn.execute(
                "SELECT data FROM forge_sessions WHERE id = %s", (session_id,)
            ).fetchone(),
            "cannot read the session",
        )
        if row is None:
            return None
        state = SessionState.from_json(row[0])
        if state is None:  # move the bad row aside, under the session's lock
            return self.transact(session_id, lambda current: (current, None))
        return state

    def session_ids(self) -> list[str]:
        # the C collation sorts by code point, as Python does
        rows = self._read(
            lambda conn: conn.execute(
                'SELECT id FROM forge_sessions ORDER BY id COLLATE "C"'
            ).fetchall(),
            "cannot list sessions",
        )
        return [row[0] for row in rows]

    def purge(self, now: float, ttl: float) -> int:
        with self._session() as conn:
            return self._purge(conn, now, ttl, keep=None)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._pid == os.getpid():
                if self._conn is not None:
                    self._conn.close()
                if self._pool is not None:
                    self._pool.close()
            self._conn = self._pool = None

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- connections -----------------------------------------------------------------------

    def _read(self, query: Callable[[psycopg.Connection[Any]], Any], doing: str) -> Any:
        """One read-only statement; a connection found dead is replaced once (a read decides
        nothing, so it may run again)."""
        for attempt in (1, 2):
            with self._session() as conn:
                try:
                    return query(conn)
                except Exception as exc:
                    if attempt == 1 and _pg.is_disconnect(exc, conn):
                        self._discard(conn)
                        continue
                    raise self._error(exc, doing) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    @contextlib.contextmanager
    def _session(self) -> Any:
        """A connection for one call: the store's own (held under its lock), or the pool's."""
        if self.pool_size > 1:
            pool = self._open_pool()
            # waiting for a pooled connection is waiting for the server: bounded like a lock
            # wait, and short while the server is known to be unreachable (every event would
            # wait in full otherwise), until a connection is had again
            wait = 0.2 if self._unreachable else min(self.lock_timeout, _pg.CONNECT_TIMEOUT)
            try:
                conn = pool.getconn(timeout=wait)
            except Exception as exc:
                self._unreachable = pool.get_stats().get("pool_size", 0) == 0
                raise self._error(exc, "cannot connect") from exc
            self._unreachable = False
            try:
                if not self._migrated:
                    _pg.migrate(conn, "store", MIGRATIONS, self.where)
                    self._migrated = True
            except Exception as exc:
                pool.putconn(conn)
                raise self._error(exc, "cannot migrate") from exc
            try:
                yield conn
            finally:
                _rollback(conn)
                pool.putconn(conn)  # a broken connection is discarded by the pool
            return
        with self._lock:
            yield self._connection()

    def _connection(self) -> psycopg.Connection[Any]:
        if self._closed:
            raise StoreError(f"{self.where}: the store is closed")
        if self._conn is not None and self._pid != os.getpid():
            # a forked child must not use, nor close, its parent's connection (libpq's rule)
            self._inherited.append(self._conn)
            self._conn = None
        if self._conn is not None and (self._conn.closed or self._conn.broken):
            self._conn = None
        if self._conn is None:
            try:
                _pg.need_psycopg("FORGE_STORE")
            except ConfigError as exc:  # inside a transaction: the evaluator's error family
                raise StoreError(str(exc)) from exc
            try:
                conn = _pg.connect(
                    self.dsn, self.lock_timeout, self.statement_timeout, self.environ
                )
            except StoreError:
                raise
            except Exception as exc:
                raise self._error(exc, "cannot connect") from exc
            try:
                _pg.migrate(conn, "store", MIGRATIONS, self.where)
            except StoreError:
                conn.close()
                raise
            except Exception as exc:
                conn.close()
                raise self._error(exc, "cannot migrate") from exc
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def _open_pool(self) -> psycopg_pool.ConnectionPool[Any]:
        """The pool, created on first use; it connects in the background, so a server that is
        down makes :meth:`_session` wait (boundedly) for a connection, not this."""
        with self._lock:
            if self._closed:
                raise StoreError(f"{self.where}: the store is closed")
            if self._pool is None or self._pid != os.getpid():
                try:
                    import psycopg_pool
                except ImportError as exc:
                    raise StoreError(
                        f"{self.where}: a pool needs psycopg-pool: "
                        "pip install 'forge-policy[postgres]'"
                    ) from exc
                if self._pool is not None:
                    self._inherited.append(self._pool)  # a forked child leaves it alone
                settings = _pg.session_settings(self.lock_timeout, self.statement_timeout)

                def configure(conn: psycopg.Connection[Any]) -> None:
                    conn.execute(*settings)

                try:
                    self._pool = psycopg_pool.ConnectionPool(
                        _pg.resolve(self.dsn, self.environ),
                        min_size=1,
                        max_size=self.pool_size,
                        kwargs={"autocommit": True, "connect_timeout": _pg.CONNECT_TIMEOUT},
                        configure=configure,
                        check=psycopg_pool.ConnectionPool.check_connection,
                        open=False,
                    )
                    self._pool.open(wait=False)
                except Exception as exc:
                    self._pool = None
                    raise self._error(exc, "cannot connect") from exc
                self._pid, self._migrated = os.getpid(), False
            return self._pool

    def _discard(self, conn: psycopg.Connection[Any]) -> None:
        with contextlib.suppress(Exception):
            conn.close()
        if conn is self._conn:
            self._conn = None

    # -- statements ------------------------------------------------------------------------

    def _run(self, conn: psycopg.Connection[Any], sql: Any, params: tuple[Any, ...] = ()) -> Any:
        """Execute one constant statement; return its first row. psycopg errors are mapped."""
        try:
            cursor = conn.execute(sql, params)
            return cursor.fetchone() if cursor.description else None
        except (UnicodeError, ValueError) as exc:
            raise StoreError(f"{self.where}: cannot store this text: {exc}") from exc
        except Exception as exc:
            raise self._error(exc, str(sql).split(" (")[0][:60]) from exc

    def _begin(
        self, conn: psycopg.Connection[Any], session_id: str
    ) -> tuple[SessionState | None, dict[str, Any] | None]:
        """Open the event's transaction with the session locked; its state (or None), and the
        record of a bad row moved aside. Raises psycopg's errors unmapped (the caller decides
        whether the connection is worth another try)."""
        conn.execute("BEGIN")
        _pg.bound_wait(conn, self.lock_timeout)
        if self.locking == "row":
            row = conn.execute(
                "SELECT data FROM forge_sessions WHERE id = %s FOR UPDATE", (session_id,)
            ).fetchone()
            if row is None:
                row = self._lock_absent(conn, session_id)
        else:
            row = self._lock_absent(conn, session_id)
        if row is None:
            return None, None
        state = SessionState.from_json(row[0])
        if state is not None:
            return state, None
        record = quarantine(
            conn.execute, _QUARANTINE, session_id, row[0], self.where, "forge_quarantine"
        )
        return None, record

    def _lock_absent(self, conn: psycopg.Connection[Any], session_id: str) -> Any:
        """The advisory lock on the session id, then its row (a statement begun after the
        lock: under READ COMMITTED it sees every earlier commit)."""
        conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_SESSION_LOCKS, session_id))
        return conn.execute(
            "SELECT data FROM forge_sessions WHERE id = %s FOR UPDATE", (session_id,)
        ).fetchone()

    def _upsert(self, conn: psycopg.Connection[Any], session_id: str, state: SessionState) -> None:
        try:
            data = _dumps(state)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"{self.where}: session state is not JSON: {exc}") from exc
        self._run(
            conn,
            "INSERT INTO forge_sessions (id, data, last_accessed_at) VALUES (%s, %s, %s)"
            " ON CONFLICT (id) DO UPDATE SET data = excluded.data,"
            " last_accessed_at = excluded.last_accessed_at",
            (session_id, data, state.last_accessed_at),
        )

    def _purge_now_and_then(self, conn: psycopg.Connection[Any], keep: str) -> None:
        """With ``ttl`` set, purge after a write at most every :data:`PURGE_EVERY` seconds;
        the event is already committed, so a failure here is only reported."""
        if self.ttl is None:
            return
        now = self.clock()
        if now < self._next_purge:
            return
        self._next_purge = now + PURGE_EVERY
        try:
            self._purge(conn, now, self.ttl, keep=keep)
        except StoreError as exc:
            report({}, f"{self.where}: purge skipped: {exc}", None)

    def _purge(
        self, conn: psycopg.Connection[Any], now: float, ttl: float, keep: str | None
    ) -> int:
        # the index narrows the candidates (a second of slack for float rounding); the exact
        # test is the one expiry rule, so every store expires the same sessions. A locked row
        # is in use right now, hence not expired: skipped, never waited for.
        self._run(conn, "BEGIN")
        try:
            cursor = conn.execute(
                "SELECT id, last_accessed_at FROM forge_sessions WHERE last_accessed_at < %s"
                " FOR UPDATE SKIP LOCKED",
                (now - ttl + 1.0,),
            )
            expired = [sid for sid, last in cursor if sid != keep and is_expired(last, now, ttl)]
            if expired:
                conn.execute("DELETE FROM forge_sessions WHERE id = ANY(%s)", (expired,))
            conn.execute("COMMIT")
        except Exception as exc:
            raise self._error(exc, "cannot purge") from exc
        finally:
            _rollback(conn)
        return len(expired)

    def _error(self, exc: BaseException, doing: str) -> StoreError:
        if isinstance(exc, StoreError):
            return exc
        return _pg.store_error(exc, self.where, doing, self.lock_timeout)


def _rollback(conn: psycopg.Connection[Any]) -> None:
    """End an open transaction without writing; a failure here must not hide the first one."""
    import psycopg.pq

    if conn.closed or conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
        return
    with contextlib.suppress(Exception):
        conn.execute("ROLLBACK")
