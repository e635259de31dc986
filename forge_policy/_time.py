"""UTC timestamps: epoch seconds inside the engine, ISO 8601 text in state and audit.

The common case (our own ``YYYY-MM-DDTHH:MM:SS.ffffff+00:00``) is converted with integer
arithmetic, so the hook path does not import :mod:`datetime`; anything else goes through
:func:`datetime.datetime.fromisoformat`.
"""

from __future__ import annotations

import time


def iso(ts: float) -> str:
    """Epoch seconds to ISO 8601 UTC with microseconds.

    >>> iso(1_800_000_000.25)
    '2027-01-15T08:00:00.250000+00:00'
    """
    whole = int(ts // 1)
    micros = round((ts - whole) * 1_000_000)
    if micros >= 1_000_000:
        whole, micros = whole + 1, micros - 1_000_000
    second, prefix = _SECOND[0]
    if second != whole:  # the date and time of a second, formatted once per second
        t = time.gmtime(whole)
        prefix = (
            f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T{t.tm_hour:02d}:{t.tm_min:02d}:"
            f"{t.tm_sec:02d}."
        )
        _SECOND[0] = (whole, prefix)  # one tuple, replaced whole: threads see either
    return f"{prefix}{micros:06d}+00:00"


#: the last second :func:`iso` formatted and its text up to the fraction (a warm process stamps
#: many events a second)
_SECOND: list[tuple[int, str]] = [(-(1 << 62), "")]


def _days_from_civil(year: int, month: int, day: int) -> int:
    # Howard Hinnant's algorithm: days since 1970-01-01 in the proleptic Gregorian calendar
    year -= month <= 2
    era = (year if year >= 0 else year - 399) // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _fast_parse(text: str) -> float | None:
    if len(text) != 32 or text[10] != "T" or not text.endswith("+00:00"):
        return None
    try:
        year, month, day = int(text[0:4]), int(text[5:7]), int(text[8:10])
        hour, minute, second = int(text[11:13]), int(text[14:16]), int(text[17:19])
        micros = int(text[20:26])
    except ValueError:
        return None
    if text[4] != "-" or text[7] != "-" or text[19] != "." or not 1 <= month <= 12:
        return None
    days = _days_from_civil(year, month, day)
    return days * 86400 + hour * 3600 + minute * 60 + second + micros / 1_000_000


# the stamps of the state are parsed several times per event (expiry, touch, windows)
_PARSED: dict[str, float] = {}
_PARSED_MAX = 1024


def parse_iso(text: object, default: float = 0.0) -> float:
    """ISO 8601 text (or a number) to epoch seconds; ``default`` for anything unreadable.

    >>> parse_iso(iso(1_800_000_000.25))
    1800000000.25
    >>> parse_iso("2027-01-15T09:00:00+01:00")
    1800000000.0
    >>> parse_iso("yesterday", default=-1.0)
    -1.0
    """
    if type(text) is str:  # the common case first: a stamp parsed before
        known = _PARSED.get(text)
        if known is not None:
            return known
    elif isinstance(text, bool):
        return default
    elif isinstance(text, int | float):
        return float(text)
    if not isinstance(text, str):
        return default
    fast = _fast_parse(text)
    if fast is not None:
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()  # bounded: a long-lived worker sees endless stamps
        _PARSED[text] = fast
        return fast
    from datetime import UTC, datetime

    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return default
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()
