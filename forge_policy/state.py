"""Session state: the JSON document a store keeps per session (dotforge-compatible shape).

::

    {"created_at": ISO, "last_accessed_at": ISO,
     "flags": {NAME: true}, "totals": {NAME: number},
     "behaviors": {ID: {"counter": int, "effective_level": LEVEL | null,
                        "last_violation_at": ISO | null, "last_violation_tool": str | null,
                        "pending_block": {...} | null, "grant": {...} | null,
                        "overrides": [OVERRIDE RECORD, ...], "blocks": int}}}

The document is kept as plain JSON values so that keys this version does not know survive a
read-modify-write untouched. :class:`SessionState` is a thin typed view over it.
"""

from __future__ import annotations

from forge_policy._time import iso, parse_iso
from forge_policy.levels import Level

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SCHEMA_VERSION = 1


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (cheaper to import than :mod:`copy`)."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value


def touch_interval(ttl: float) -> float:
    """How often the allow path refreshes a session's last access: at most every this many
    seconds, so that it rarely writes (``min(300 s, ttl / 100)``).

    >>> touch_interval(86400.0), touch_interval(60.0)
    (300.0, 0.6)
    """
    return min(300.0, ttl / 100)


def is_expired(last_accessed_at: float, now: float, ttl: float) -> bool:
    """The one expiry rule (SPEC §3.9), for the evaluator, every store's purge, ``purge`` and
    ``off --session`` alike.

    A session expires ``ttl`` seconds after its last access. The recorded last access can lag
    the real one by up to :func:`touch_interval` (the allow path does not write every time), so
    that much slack is allowed: a session expires late by at most that, never early.

    >>> is_expired(0.0, 86400.0 + 300.0, 86400.0), is_expired(0.0, 86400.0 + 300.5, 86400.0)
    (False, True)
    """
    return now - last_accessed_at > ttl + touch_interval(ttl)


class BehaviorState:
    """A typed view of ``behaviors[ID]`` of one session; writes go to the underlying dict."""

    __slots__ = ("data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    @property
    def counter(self) -> int:
        value = self.data.get("counter", 0)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    @counter.setter
    def counter(self, value: int) -> None:
        self.data["counter"] = value

    @property
    def effective_level(self) -> Level | None:
        """The level reached so far in this session; None before the first violation."""
        value = self.data.get("effective_level")
        try:
            return Level.parse(value) if value is not None else None
        except ValueError:
            return None

    @effective_level.setter
    def effective_level(self, level: Level) -> None:
        self.data["effective_level"] = level.label

    @property
    def pending_block(self) -> dict[str, Any] | None:
        value = self.data.get("pending_block")
        return value if isinstance(value, dict) else None

    @pending_block.setter
    def pending_block(self, value: dict[str, Any] | None) -> None:
        self.data["pending_block"] = value

    @property
    def grant(self) -> dict[str, Any] | None:
        """An explicit override waiting for the next blocked call."""
        value = self.data.get("grant")
        return value if isinstance(value, dict) else None

    @grant.setter
    def grant(self, value: dict[str, Any] | None) -> None:
        self.data["grant"] = value

    @property
    def overrides(self) -> list[dict[str, Any]]:
        value = self.data.get("overrides")
        if not isinstance(value, list):
            value = self.data["overrides"] = []
        return value

    @property
    def blocks(self) -> int:
        value = self.data.get("blocks", 0)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    def record_violation(self, now: float, tool_name: str) -> None:
        self.data["last_violation_at"] = iso(now)
        self.data["last_violation_tool"] = tool_name or None

    def record_block(self) -> None:
        self.data["blocks"] = self.blocks + 1


class SessionState:
    """One session's state document with typed accessors.

    >>> s = SessionState.new(0.0)
    >>> s.behavior("search-first").counter
    0
    >>> s.flags["search_context_ready"] = True
    >>> SessionState(s.to_dict()).flags
    {'search_context_ready': True}
    """

    __slots__ = ("data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    @classmethod
    def new(cls, now: float) -> SessionState:
        stamp = iso(now)
        return cls(
            {
                "created_at": stamp,
                "last_accessed_at": stamp,
                "flags": {},
                "totals": {},
                "behaviors": {},
            }
        )

    def copy(self) -> SessionState:
        return SessionState(copy_json(self.data))

    def to_dict(self) -> dict[str, Any]:
        return self.data

    @property
    def created_at(self) -> float:
        return parse_iso(self.data.get("created_at"))

    @property
    def last_accessed_at(self) -> float:
        return parse_iso(self.data.get("last_accessed_at"), default=self.created_at)

    def touch(self, now: float) -> None:
        self.data["last_accessed_at"] = iso(now)

    def expired(self, now: float, ttl: float) -> bool:
        """SPEC §3.9: expired ``ttl`` seconds after the last access (see :func:`is_expired`)."""
        return is_expired(self.last_accessed_at, now, ttl)

    def _mapping(self, key: str) -> dict[str, Any]:
        value = self.data.get(key)
        if not isinstance(value, dict):
            value = self.data[key] = {}
        return value

    @property
    def flags(self) -> dict[str, Any]:
        return self._mapping("flags")

    @property
    def totals(self) -> dict[str, Any]:
        return self._mapping("totals")

    def behavior(self, behavior_id: str) -> BehaviorState:
        """The state of one behavior, created empty on first use."""
        behaviors = self._mapping("behaviors")
        data = behaviors.get(behavior_id)
        if not isinstance(data, dict):
            data = behaviors[behavior_id] = {
                "counter": 0,
                "effective_level": None,
                "last_violation_at": None,
                "last_violation_tool": None,
                "pending_block": None,
                "overrides": [],
            }
        return BehaviorState(data)

    @property
    def disabled(self) -> frozenset[str]:
        """Behaviors switched off for this session only (``forge-policy off ID --session``)."""
        value = self.data.get("disabled")
        if not isinstance(value, list):
            return frozenset()
        return frozenset(v for v in value if isinstance(v, str))

    def behavior_ids(self) -> list[str]:
        return list(self._mapping("behaviors"))
