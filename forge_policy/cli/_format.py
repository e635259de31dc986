"""Small text helpers shared by the command modules."""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any


def table(
    header: Sequence[str],
    rows: Sequence[Sequence[object]],
    tone: Callable[[int, str], str] | None = None,
) -> str:
    """Left-aligned columns, two spaces apart; ``None`` shows as ``-``. ``tone(column, text)``
    may colour a body cell (:mod:`forge_policy.cli._color`): widths count the text alone.

    >>> print(table(["id", "n"], [["a", 1], ["bcd", None]]))
    id   n
    a    1
    bcd  -
    >>> table(["k"], [["x"]], tone=lambda i, t: f"<{t}>").splitlines()[1]
    '<x>'
    """
    cells = [[_cell(v) for v in row] for row in [header, *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]

    def shown(line: int, i: int, text: str, width: int) -> str:
        pad = " " * (width - len(text))
        return (tone(i, text) if tone and line and text else text) + pad

    return "\n".join(
        "  ".join(
            shown(n, i, c, w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for n, row in enumerate(cells)
    )


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def dumps(value: object) -> str:
    """Indented JSON for ``--json`` output; typed results are unstructured first (see
    :func:`to_json`), and every string (keys too) is redacted
    (:func:`forge_policy.audit.verify.clean`): a secret never reaches the output.

    >>> from forge_policy.reports.insights import SessionTally
    >>> print(dumps({"tally": SessionTally(2, 1, 0)}))
    {
      "tally": {
        "violations": 2,
        "blocks": 1,
        "overrides": 0
      }
    }
    """
    from forge_policy.audit.verify import clean

    return json.dumps(clean(to_json(value)), indent=2, ensure_ascii=False)


def to_json(value: object) -> Any:
    """The JSON-ready form of a value (:func:`forge_policy.reports.json.to_json`; imported
    here on first use, since it brings cattrs)."""
    from forge_policy.reports.json import to_json as unstructure

    return unstructure(value)


def short(value: object, limit: int = 60) -> str:
    """``repr``-like, redacted, then cut to ``limit`` characters (cutting first could leave a
    secret its pattern no longer recognizes).

    >>> short("x" * 80, 10)
    "'xxxxxxx…'"
    >>> print(short('password="correct horse battery staple"', 20))
    'password="[REDACT…'
    """
    from forge_policy.audit.verify import clean

    value = clean(value)
    text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 2] + "…" + text[-1]


def local_time(stamp: object, *, tz: bool = False) -> str:
    """A stored UTC stamp (ISO 8601, or epoch seconds) as local time to the second, for a
    person reading a terminal (``-`` when unreadable); ``tz`` adds the zone's name.

    >>> import os, time
    >>> os.environ["TZ"] = "UTC"; time.tzset()
    >>> local_time("2027-01-15T08:00:00.250000+00:00")
    '2027-01-15 08:00:00'
    >>> local_time(None)
    '-'
    """
    import time

    from forge_policy._time import parse_iso

    seconds = parse_iso(stamp, default=-1.0)
    if seconds < 0:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S" + (" %Z" if tz else ""), time.localtime(seconds))


def ago(stamp: object, now: float) -> str:
    """How long before ``now`` a stamp is, in the largest whole unit (``-`` when unreadable).

    >>> ago(1_000.0, 1_000.0 + 59), ago(0.0, 7_300.0), ago(0.0, 3 * 86_400.0)
    ('59 s ago', '2 h ago', '3 d ago')
    """
    from forge_policy._time import parse_iso

    seconds = parse_iso(stamp, default=-1.0)
    if seconds < 0:
        return "-"
    delta = max(0.0, now - seconds)
    for unit, size in (("d", 86_400), ("h", 3_600), ("min", 60)):
        if delta >= size:
            return f"{int(delta // size)} {unit} ago"
    return f"{int(delta)} s ago"


#: ``--since`` durations: a number and one of these units.
_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3_600, "d": 86_400, "w": 604_800}


def parse_since(text: str, now: float) -> float:
    """``--since`` as epoch seconds: a duration back from ``now`` (``90s``, ``30m``, ``2h``,
    ``3d``, ``1w``) or an ISO 8601 date or time (local time when it names no zone). A
    :class:`ValueError` says what is accepted.

    >>> parse_since("2h", 10_000.0), parse_since("3d", 300_000.0)
    (2800.0, 40800.0)
    >>> parse_since("2027-01-15T08:00:00+00:00", 0.0)
    1800000000.0
    >>> parse_since("yesterday", 0.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: --since 'yesterday': give a duration (30m, 2h, 3d, 1w) or an ISO date ...
    """
    import re

    value = text.strip()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(s|m|min|h|d|w)", value)
    if match:
        return now - float(match.group(1)) * _UNITS[match.group(2)]
    import datetime

    try:
        when = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"--since {text!r}: give a duration (30m, 2h, 3d, 1w) or an ISO date "
            "(2026-01-31, 2026-01-31T09:00)"
        ) from None
    return when.timestamp()  # naive: local time, as the user reads their clock


def since_time(text: str) -> float:
    """An argparse type for ``--since``: epoch seconds (:func:`parse_since`; a bad one: exit 2)."""
    import argparse
    import time

    try:
        return parse_since(text, time.time())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix(f"--since {text!r}: ")) from None


def limit_count(text: str) -> int:
    """An argparse type for ``--limit``: a whole number, 0 or more (a bad one: exit 2)."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative (0 shows every one)")
    return value
