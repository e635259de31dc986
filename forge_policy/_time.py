"""UTC timestamps: epoch seconds inside the engine, ISO 8601 text in state and audit."""

from __future__ import annotations

from datetime import UTC, datetime


def iso(ts: float) -> str:
    """Epoch seconds to ISO 8601 UTC, e.g. ``2026-11-29T20:01:21.000000+00:00``."""
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="microseconds")


def parse_iso(text: object, default: float = 0.0) -> float:
    """ISO 8601 text (or a number) to epoch seconds; ``default`` for anything unreadable."""
    if isinstance(text, bool):
        return default
    if isinstance(text, int | float):
        return float(text)
    if not isinstance(text, str):
        return default
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return default
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()
