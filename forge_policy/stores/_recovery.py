"""Reporting a recovery: a corrupt state moved aside is told, never silently dropped (SPEC §9)."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


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
