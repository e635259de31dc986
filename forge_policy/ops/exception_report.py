"""The configured exceptions as ``forge-policy status`` lists them (SPEC §10).

An exception (``exceptions:`` of a configuration layer: ``{behavior, match, until, reason}``)
is an audited, expiring allowance; the team must see it before it expires, not find it in a
YAML file. :func:`rows` gives each one: the behavior, what it matches, the last day it holds,
the days left, the reason, where it is written (``file:line``), and how often the audit log
saw it used (``kind: "exception"`` records of that origin). An expired one is kept and
flagged: it does nothing, and its entry is still in the file. One the loader refuses (a locked
or ``bypass: never`` behavior) is not listed here: ``forge-policy config`` names it.

>>> import datetime
>>> from forge_policy.config.layers import ExceptionRule
>>> rule = ExceptionRule("risky-commands", "command", "npm install left-pad",
...                      datetime.date(2030, 1, 10), "vendored", "/p/.forge/config.yaml:7")
>>> row = row_of(rule, datetime.date(2030, 1, 1), {})
>>> row["days_left"], row["expired"], line_of(row)
(9, False, 'risky-commands  command: npm install left-pad  until 2030-01-10 (9 days left)  \
vendored  /p/.forge/config.yaml:7  used 0 times')
"""

from __future__ import annotations

import datetime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from forge_policy.audit.base import AuditSink
    from forge_policy.config.env import Config
    from forge_policy.config.layers import ExceptionRule

#: how many audit records at most are read to count uses (a long log is not read to its start)
MAX_RECORDS = 100_000


def rows(
    config: Config, audit: AuditSink | None = None, today: datetime.date | None = None
) -> list[dict[str, Any]]:
    """Every configured exception (soonest to expire first), as :func:`row_of` gives it."""
    settings = config.current_settings()
    if settings is None or not settings.exceptions:
        return []
    day = today or datetime.date.today()
    uses = _uses(audit.records() if audit is not None else ())
    ordered = sorted(settings.exceptions, key=lambda r: (r.until, r.behavior, r.origin))
    return [row_of(rule, day, uses) for rule in ordered]


def row_of(
    rule: ExceptionRule, today: datetime.date, uses: Mapping[str, tuple[int, str]]
) -> dict[str, Any]:
    """One exception as JSON: its fields, ``expired``, ``days_left``, ``used`` and
    ``last_used`` (the timestamp of its latest audit record, None when never used)."""
    count, last = uses.get(rule.origin, (0, ""))
    return {
        **rule.to_dict(),
        "expired": rule.expired(today),
        "days_left": (rule.until - today).days,
        "used": count,
        "last_used": last or None,
    }


def line_of(row: Mapping[str, Any]) -> str:
    """One exception as a line of ``status``."""
    ((kind, value),) = row["match"].items()
    days = int(row["days_left"])
    if row["expired"]:
        when = f"EXPIRED {row['until']} (does nothing; remove it or extend 'until')"
    elif days == 0:
        when = f"until {row['until']} (last day)"
    else:
        when = f"until {row['until']} ({days} day{'s' if days != 1 else ''} left)"
    used = f"used {row['used']} time{'s' if row['used'] != 1 else ''}"
    return f"{row['behavior']}  {kind}: {value}  {when}  {row['reason']}  {row['origin']}  {used}"


def _uses(records: Iterable[dict[str, Any]]) -> dict[str, tuple[int, str]]:
    """origin -> (how many ``exception`` records, the latest timestamp)."""
    found: dict[str, tuple[int, str]] = {}
    for index, record in enumerate(records):
        if index >= MAX_RECORDS:
            break
        if record.get("kind") != "exception":
            continue
        origin = str(record.get("origin", ""))
        count, last = found.get(origin, (0, ""))
        found[origin] = (count + 1, max(last, str(record.get("timestamp", ""))))
    return found
