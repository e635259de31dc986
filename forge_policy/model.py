"""The values that cross the engine's boundary: :class:`Event` in, :class:`Decision` out.

Plain slotted classes rather than dataclasses: this module is on every hook call's import path
and ``dataclasses`` alone costs more to import than the rest of the hot path together.
"""

from __future__ import annotations

import json

from forge_policy.errors import EventError
from forge_policy.events import TOOL_EVENTS
from forge_policy.levels import Level

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any


def canonical_json(value: object) -> str:
    """SPEC §4: sorted keys, compact separators, UTF-8 (non-ASCII kept as is)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256_hex(data: bytes) -> str:
    # the builtin module avoids importing hashlib, which loads OpenSSL (~3 ms per hook process)
    try:
        from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]  # 3.12+
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
        except ImportError:  # pragma: no cover - an interpreter without the builtin
            from hashlib import sha256
    digest: str = sha256(data).hexdigest()
    return digest


def call_hash(tool_name: str, tool_input: object) -> str:
    """The identity of a tool call for override-by-retry: sha256 of name + canonical input.

    Harness per-call ids (``tool_use_id``) are not part of ``tool_input``, so two attempts of the
    same call hash alike.

    >>> call_hash("Write", {"b": 1, "a": "x"}) == call_hash("Write", {"a": "x", "b": 1})
    True
    """
    text = canonical_json([tool_name, tool_input])
    return sha256_hex(text.encode("utf-8"))


class Event:
    """One harness event, in Claude Code's vocabulary (other harnesses' adapters translate).

    >>> ev = Event("PreToolUse", "s1", tool_name="Bash", tool_input={"command": "ls"})
    >>> ev.tool_name, ev.agent
    ('Bash', 'claude-code')
    """

    __slots__ = (
        "agent",
        "cwd",
        "event_name",
        "harness",
        "payload",
        "permission_mode",
        "prompt",
        "session_id",
        "tool_input",
        "tool_name",
        "tool_use_id",
    )

    def __init__(
        self,
        event_name: str,
        session_id: str,
        *,
        tool_name: str = "",
        tool_input: Mapping[str, Any] | None = None,
        prompt: str = "",
        agent: str = "",
        cwd: str = "",
        tool_use_id: str = "",
        permission_mode: str = "",
        harness: str = "claude-code",
        payload: Mapping[str, Any] | None = None,
    ) -> None:
        self.event_name = event_name
        self.session_id = session_id
        self.tool_name = tool_name
        self.tool_input: Mapping[str, Any] = tool_input if tool_input is not None else {}
        self.prompt = prompt
        self.harness = harness
        self.agent = agent or harness
        self.cwd = cwd
        self.tool_use_id = tool_use_id
        self.permission_mode = permission_mode
        self.payload: Mapping[str, Any] = payload if payload is not None else {}

    @property
    def is_tool_event(self) -> bool:
        """Whether this event is about a tool call."""
        return self.event_name in TOOL_EVENTS

    def call_hash(self) -> str:
        """See :func:`call_hash`."""
        return call_hash(self.tool_name, self.tool_input)

    def top_level(self, key: str) -> object:
        """A top-level key of the event as the harness sent it, or the named attribute."""
        if key in self.payload:
            return self.payload[key]
        if key in _ATTRIBUTE_KEYS:
            value: object = getattr(self, _ATTRIBUTE_KEYS[key])
            return value
        return None

    @classmethod
    def from_claude_code(cls, payload: object) -> Event:
        """Build an event from a Claude Code hook payload (the JSON object read from stdin).

        Raises :class:`~forge_policy.EventError` naming the field when the payload is unusable.

        >>> ev = Event.from_claude_code({"session_id": "s", "hook_event_name": "PreToolUse",
        ...     "tool_name": "Write", "tool_input": {"file_path": "/a.py"}, "tool_use_id": "t1"})
        >>> ev.tool_input["file_path"], ev.tool_use_id
        ('/a.py', 't1')
        """
        if not isinstance(payload, dict):
            raise EventError(f"event: expected a JSON object, got {_kind(payload)}")
        event_name = _text(payload, "hook_event_name", required=True)
        session_id = _text(payload, "session_id", required=True)
        tool_input = payload.get("tool_input")
        if tool_input is None:
            tool_input = {}
        elif not isinstance(tool_input, dict):
            raise EventError(f"event: tool_input: expected an object, got {_kind(tool_input)}")
        tool_name = _text(payload, "tool_name", required=event_name in TOOL_EVENTS)
        return cls(
            event_name,
            session_id,
            tool_name=tool_name,
            tool_input=tool_input,
            prompt=_text(payload, "prompt"),
            agent=_text(payload, "agent_type"),
            cwd=_text(payload, "cwd"),
            tool_use_id=_text(payload, "tool_use_id"),
            permission_mode=_text(payload, "permission_mode"),
            harness="claude-code",
            payload=payload,
        )

    def __repr__(self) -> str:
        subject = f" {self.tool_name}" if self.tool_name else ""
        return f"<Event {self.event_name}{subject} session={self.session_id!r}>"


_ATTRIBUTE_KEYS = {
    "hook_event_name": "event_name",
    "session_id": "session_id",
    "tool_name": "tool_name",
    "prompt": "prompt",
    "agent_type": "agent",
    "agent": "agent",
    "cwd": "cwd",
    "tool_use_id": "tool_use_id",
    "permission_mode": "permission_mode",
}


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
    }.get(type(value), type(value).__name__)


def _text(payload: Mapping[str, Any], key: str, *, required: bool = False) -> str:
    value = payload.get(key)
    if value is None:
        if required:
            raise EventError(f"event: {key}: required field missing")
        return ""
    if not isinstance(value, str):
        raise EventError(f"event: {key}: expected a string, got {_kind(value)}")
    if required and not value:
        raise EventError(f"event: {key}: must not be empty")
    return value


class ConditionResult:
    """How one condition of a trigger evaluated, for explanations (Cedar-style diagnostics)."""

    __slots__ = ("actual", "field", "matched", "operator", "value")

    def __init__(
        self, field: str, operator: str, value: object, actual: object, matched: bool
    ) -> None:
        self.field = field
        self.operator = operator
        self.value = value
        self.actual = actual
        self.matched = matched

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        actual = self.actual
        if isinstance(actual, str) and len(actual) > 200:
            actual = actual[:197] + "..."
        return {
            "field": self.field,
            "operator": self.operator,
            "value": self.value,
            "actual": actual,
            "matched": self.matched,
        }

    def __repr__(self) -> str:
        return (
            f"ConditionResult({self.field} {self.operator} {self.value!r}: "
            f"{'matched' if self.matched else 'no match'})"
        )


class Violation:
    """One behavior's violation on one event, with the level it reached and why it fired.

    ``shadow`` violations (``policy.enforcement.mode: shadow``) are counted and recorded but
    neither shown nor blocking: ``level`` is what *would have* happened.
    ``overridden`` names the override mechanism (``retry``, ``explicit``, ``user``) when the call
    was let through, else ``""``.
    """

    __slots__ = (
        "behavior_id",
        "behavior_name",
        "conditions",
        "counter",
        "level",
        "message",
        "overridden",
        "shadow",
        "trigger_index",
    )

    def __init__(
        self,
        behavior_id: str,
        behavior_name: str,
        level: Level,
        counter: int,
        message: str,
        *,
        trigger_index: int = -1,
        conditions: Sequence[ConditionResult] = (),
        shadow: bool = False,
        overridden: str = "",
    ) -> None:
        self.behavior_id = behavior_id
        self.behavior_name = behavior_name
        self.level = level
        self.counter = counter
        self.message = message
        self.trigger_index = trigger_index
        self.conditions = tuple(conditions)
        self.shadow = shadow
        self.overridden = overridden

    @property
    def blocks(self) -> bool:
        """Whether this violation refused the call."""
        return self.level.blocks and not self.shadow and not self.overridden

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        return {
            "behavior_id": self.behavior_id,
            "level": self.level.label,
            "counter": self.counter,
            "message": self.message,
            "trigger_index": self.trigger_index,
            "conditions": [c.to_dict() for c in self.conditions],
            "shadow": self.shadow,
            "overridden": self.overridden or None,
            "blocks": self.blocks,
        }

    def __repr__(self) -> str:
        extra = " shadow" if self.shadow else ""
        extra += f" overridden={self.overridden}" if self.overridden else ""
        return f"<Violation {self.behavior_id} {self.level.label} counter={self.counter}{extra}>"


class Decision:
    """The engine's answer for one event.

    ``level`` is the highest level the agent is shown (``SILENT`` when nothing is shown);
    ``messages`` are in display order: a block's reason first, then the non-blocking messages of
    the behaviors before it, in index order.
    """

    __slots__ = ("blocking", "diagnostics", "event", "messages", "overrides", "violations")

    def __init__(
        self,
        event: Event,
        violations: Sequence[Violation] = (),
        messages: Sequence[str] = (),
        *,
        blocking: Violation | None = None,
        overrides: Sequence[Mapping[str, Any]] = (),
        diagnostics: Sequence[str] = (),
    ) -> None:
        self.event = event
        self.violations = tuple(violations)
        self.messages = tuple(messages)
        self.blocking = blocking
        self.overrides = tuple(overrides)
        self.diagnostics = tuple(diagnostics)

    @property
    def blocked(self) -> bool:
        """Whether the call is refused."""
        return self.blocking is not None

    @property
    def level(self) -> Level:
        """The highest level shown to the agent for this event."""
        if self.blocking is not None:
            return self.blocking.level
        shown = [v.level for v in self.violations if not v.shadow and not v.overridden]
        return max(shown, default=Level.SILENT)

    @property
    def outcome(self) -> str:
        """``allow`` when nothing is shown, else the level's name (``nudge`` … ``hard_block``)."""
        level = self.level
        return "allow" if level is Level.SILENT else level.label

    @property
    def override_allowed(self) -> bool:
        """Whether the block can be overridden (soft_block only; never for hard_block)."""
        return self.blocking is not None and self.blocking.level is Level.SOFT_BLOCK

    @property
    def message(self) -> str:
        """All messages joined by a blank line (what the agent reads)."""
        return "\n\n".join(self.messages)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form, used by ``forge-policy explain --json`` and the audit."""
        return {
            "event": self.event.event_name,
            "session_id": self.event.session_id,
            "tool_name": self.event.tool_name or None,
            "outcome": self.outcome,
            "blocked": self.blocked,
            "override_allowed": self.override_allowed,
            "blocking_behavior": self.blocking.behavior_id if self.blocking else None,
            "messages": list(self.messages),
            "violations": [v.to_dict() for v in self.violations],
            "overrides": [dict(o) for o in self.overrides],
            "diagnostics": list(self.diagnostics),
        }

    def __repr__(self) -> str:
        return f"<Decision {self.outcome} violations={len(self.violations)}>"
