"""What the PostgreSQL store and audit sink share: the DSN, connections and error mapping.

- **Credentials are never shown.** :func:`mask` replaces a password in a URL or a
  ``key=value`` DSN by ``****``; every message and ``repr`` uses it. A password should not be
  in the DSN at all: libpq reads ``PGPASSWORD`` and ``PGPASSFILE`` itself, and
  ``password_env=NAME`` (a query parameter, or a ``key=value`` pair) names a variable to read
  it from, so that what is written (``FORGE_STORE``, a unit file) holds a reference, never
  the secret.
- **Bounded waits.** Each connection sets ``lock_timeout`` (the store's lock timeout),
  ``statement_timeout`` and ``idle_in_transaction_session_timeout`` (a client stopped inside
  a transaction cannot hold a session's lock for ever) with one ``set_config`` round trip.
- **One error family.** :func:`store_error` maps psycopg's exceptions to
  :class:`~forge_policy.StoreError` / :class:`~forge_policy.LockTimeout`, ``from`` the original.

>>> mask("postgresql://forge:s3cret@db.example:5432/gov?sslmode=require")
'postgresql://forge:****@db.example:5432/gov?sslmode=require'
>>> mask("host=db user=forge password=s3cret dbname=gov")
'host=db user=forge password=**** dbname=gov'
"""

from __future__ import annotations

import os
import re
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from forge_policy.errors import ConfigError, LockTimeout, StoreError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    import psycopg

#: A hung client is cut off after this long inside a transaction (it would hold the lock).
IDLE_IN_TRANSACTION = 30.0
#: A connection attempt gives up after this long (libpq counts whole seconds).
CONNECT_TIMEOUT = 5

_KV_PASSWORD = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)")


def mask(dsn: str) -> str:
    """The DSN with its password replaced by ``****`` (for messages, ``repr``, ``status``)."""
    if "://" in dsn:
        try:
            parts = urlsplit(dsn)
            netloc = parts.netloc
        except ValueError:
            return "postgresql://****"
        if "@" in netloc:
            userinfo, host = netloc.rsplit("@", 1)
            if ":" in userinfo:
                userinfo = userinfo.split(":", 1)[0] + ":****"
            netloc = f"{userinfo}@{host}"
        query = [(k, "****" if k == "password" else v) for k, v in parse_qsl(parts.query, True)]
        return urlunsplit(
            parts._replace(netloc=netloc, query=urlencode(query, safe="*/:", quote_via=quote))
        )
    return _KV_PASSWORD.sub(lambda m: m.group(1) + "****", dsn)


def resolve(dsn: str, environ: Mapping[str, str] | None = None) -> str:
    """The DSN to connect with: a ``password_env=NAME`` reference replaced by the password
    that variable holds (a :class:`~forge_policy.ConfigError` when it is unset).

    >>> resolve("postgresql://forge@db/gov?password_env=PGPW", {"PGPW": "pw"})
    'postgresql://forge@db/gov?password=pw'
    """
    env = os.environ if environ is None else environ
    if "://" in dsn:
        parts = urlsplit(dsn)
        query = parse_qsl(parts.query, True)
        names = [v for k, v in query if k == "password_env"]
        if not names:
            return dsn
        rest = [(k, v) for k, v in query if k != "password_env"]
        rest.append(("password", _secret(names[-1], env, dsn)))
        # %20 for a space, as libpq decodes it (it reads "+" as itself)
        return urlunsplit(parts._replace(query=urlencode(rest, quote_via=quote)))
    found = re.search(r"\bpassword_env\s*=\s*(\S+)", dsn)
    if found is None:
        return dsn
    secret = _secret(found.group(1), env, dsn).replace("\\", "\\\\").replace("'", "\\'")
    return dsn[: found.start()] + f"password='{secret}'" + dsn[found.end() :]


def _secret(name: str, env: Mapping[str, str], dsn: str) -> str:
    value = env.get(name)
    if not value:
        raise ConfigError(f"{mask(dsn)}: password_env names {name!r}, which is not set")
    return value


def session_settings(lock_timeout: float, statement_timeout: float) -> tuple[str, tuple[Any, ...]]:
    """The one statement that bounds every wait of a connection (0 would mean "no limit" to
    PostgreSQL, so the shortest wait is 1 ms)."""
    ms = [f"{max(1, round(s * 1000))}ms" for s in (lock_timeout, statement_timeout)]
    idle = f"{round(IDLE_IN_TRANSACTION * 1000)}ms"
    return (
        "SELECT set_config('lock_timeout', %s, false), set_config('statement_timeout', %s, false),"
        " set_config('idle_in_transaction_session_timeout', %s, false)",
        (ms[0], ms[1], idle),
    )


def bound_wait(conn: psycopg.Connection[Any], lock_timeout: float) -> None:
    """Within a hook call, bound this transaction's lock waits by the hook's deadline
    (:func:`forge_policy._budget.lock_wait`; a hard block: 1 ms). Call right after ``BEGIN``;
    outside a hook call it sends nothing."""
    from forge_policy._budget import in_hook_call, lock_wait

    if in_hook_call():
        wait = f"{max(1, round(lock_wait(lock_timeout) * 1000))}ms"
        conn.execute("SELECT set_config('lock_timeout', %s, true)", (wait,))


def connect(
    dsn: str, lock_timeout: float, statement_timeout: float, environ: Mapping[str, str] | None
) -> psycopg.Connection[Any]:
    """One autocommit connection (transactions are opened explicitly), its waits bounded."""
    import psycopg

    conn = psycopg.connect(resolve(dsn, environ), autocommit=True, connect_timeout=CONNECT_TIMEOUT)
    try:
        conn.execute(*session_settings(lock_timeout, statement_timeout))
    except BaseException:
        conn.close()
        raise
    return conn


def is_disconnect(exc: BaseException, conn: Any) -> bool:
    """Whether ``exc`` means the connection is gone (a server restart, a dropped socket):
    then nothing was decided on it, and a new connection may be tried once."""
    import psycopg

    return isinstance(exc, psycopg.OperationalError) and bool(
        conn is None or conn.closed or conn.broken
    )


def describe(exc: BaseException, lock_timeout: float) -> str:
    """One line saying what went wrong, without the DSN's password."""
    import psycopg.errors

    from forge_policy.secrets import redact

    if isinstance(exc, psycopg.errors.LockNotAvailable):
        return f"lock not acquired within {lock_timeout:g} s (lock_timeout)"
    if isinstance(exc, psycopg.errors.QueryCanceled):
        return f"statement timeout: {_first_line(exc)}"
    return f"{type(exc).__name__}: {redact(_first_line(exc))}"


def store_error(exc: BaseException, where: str, doing: str, lock_timeout: float) -> StoreError:
    """The :class:`~forge_policy.StoreError` for a psycopg exception (``raise … from exc``):
    a lock wait past ``lock_timeout`` is a :class:`~forge_policy.LockTimeout`."""
    import psycopg.errors

    text = f"{where}: {doing}: {describe(exc, lock_timeout)}"
    if isinstance(exc, psycopg.errors.LockNotAvailable):
        return LockTimeout(text)
    return StoreError(text)


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def need_psycopg(what: str) -> None:
    """Raise :class:`~forge_policy.ConfigError` naming the extra when psycopg is missing."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise ConfigError(
            f"{what}: a postgresql:// backend needs the PostgreSQL extra: "
            "pip install 'forge-policy[postgres]'"
        ) from None


#: The advisory lock key under which schema migrations run (any two-int key outside the
#: sessions' namespace); ``"forg"`` as an int.
MIGRATION_LOCK = 0x666F7267


def schema_version(conn: psycopg.Connection[Any], component: str) -> int:
    """The migrations ``component`` has had in this database (0 for none)."""
    row = conn.execute("SELECT to_regclass('forge_schema') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return 0
    row = conn.execute(
        "SELECT version FROM forge_schema WHERE component = %s", (component,)
    ).fetchone()
    return int(row[0]) if row else 0


def migrate(
    conn: psycopg.Connection[Any],
    component: str,
    migrations: tuple[tuple[str, ...], ...],
    where: str,
) -> None:
    """Run the migrations ``component`` lacks, in one transaction under an advisory lock
    (hosts may race). ``migrations[n]`` takes the schema from version ``n`` to ``n + 1``; the
    ``forge_schema`` table records each component's version. A read when nothing is due, so a
    role without CREATE rights works on a migrated database."""
    if schema_version(conn, component) == len(migrations):
        return
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS forge_schema"
            " (component text PRIMARY KEY, version integer NOT NULL)"
        )
        version = schema_version(conn, component)
        if version > len(migrations):
            raise StoreError(
                f"{where}: schema version {version} of {component} is newer than this "
                f"forge_policy reads ({len(migrations)}); upgrade forge_policy"
            )
        for target in range(version + 1, len(migrations) + 1):
            for statement in migrations[target - 1]:
                conn.execute(statement.encode("utf-8"))
        conn.execute(
            "INSERT INTO forge_schema (component, version) VALUES (%s, %s)"
            " ON CONFLICT (component) DO UPDATE SET version = excluded.version",
            (component, len(migrations)),
        )
