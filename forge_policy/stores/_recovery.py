"""Reporting a recovery: a corrupt state moved aside is told, never silently dropped (SPEC §9).

:func:`quarantine` moves a session row that is not a session document aside, for the SQLite and
PostgreSQL stores alike; :func:`report` tells the operator and the audit log.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: Why a session row is quarantined: it does not parse as a session document.
NOT_A_SESSION = "data is not a JSON object"


def quarantine(
    execute: Callable[[str, tuple[Any, ...]], object],
    statements: tuple[str, str],
    session_id: str,
    data: object,
    where: str,
    table: str,
) -> dict[str, Any]:
    """Move the row of ``session_id`` (its raw ``data``) to the quarantine ``table``, inside
    the caller's transaction, and return the ``recovery`` record to :func:`report` once it
    commits. ``statements`` are the store's own: the insert into ``table`` (id, data, reason,
    moved_at) and the delete from its sessions table; ``where`` names the store.

    >>> done = []
    >>> record = quarantine(lambda sql, params: done.append(sql.split()[0]), ("INSERT", "DELETE"),
    ...                     "s1", "[]", "/s/state.db", "quarantine")
    >>> done, record["moved_to"], record["session_id"], record["reason"]
    (['INSERT', 'DELETE'], 'quarantine', 's1', 'data is not a JSON object')
    """
    import time

    from forge_policy._time import iso
    from forge_policy.audit import records

    now = time.time()
    insert, delete = statements
    execute(insert, (session_id, data, NOT_A_SESSION, now))
    execute(delete, (session_id,))
    recovery = records.Recovery(
        timestamp=iso(now), path=where, moved_to=table, session_id=session_id, reason=NOT_A_SESSION
    )
    return records.to_dict(recovery)


def report_quarantine(
    record: dict[str, Any], callback: Callable[[dict[str, Any]], None] | None
) -> None:
    """:func:`report` the ``record`` :func:`quarantine` returned, once its transaction
    committed."""
    import json

    where = json.dumps(str(record["session_id"])[:40])
    message = (
        f"{record['path']}: session {where} was not a session document; moved to the "
        f"{record['moved_to']} table"
    )
    report(record, message, callback)


def report(
    record: dict[str, Any], message: str, callback: Callable[[dict[str, Any]], None] | None
) -> None:
    """One line on stderr for the operator, and ``record`` to ``callback`` (e.g. the audit log).

    The data is already safe when this runs, so a failing callback is reported, never raised.

    >>> report({"kind": "recovery", "reason": "not valid JSON"}, "state moved aside", print)
    {'kind': 'recovery', 'reason': 'not valid JSON'}
    """
    print(f"forge_policy: {' '.join(message.split())}", file=sys.stderr)
    if callback is None:
        return
    try:
        callback(record)
    except Exception as exc:
        print(f"forge_policy: on_recovery failed: {type(exc).__name__}: {exc}", file=sys.stderr)
