"""The values that cross the engine's boundary: :class:`Event` in, :class:`Decision` out.

attrs classes, frozen: a decision is a value, and nothing downstream of the engine may change
what it decided. (``dataclasses`` would cost more to import on the hook's path than attrs.)
"""

from __future__ import annotations

import json

import attrs

from forge_policy.errors import EventError, InvalidArgument, UnknownEventError
from forge_policy.events import EVENTS, GIT_HOOK_EVENTS, TOOL_EVENTS
from forge_policy.levels import Level

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any


def canonical_json(value: object) -> str:
    """SPEC §4: sorted keys, compact separators, UTF-8 (non-ASCII kept as is)."""
    return _CANONICAL.encode(value)


#: :func:`json.dumps`'s encoder for :func:`canonical_json`'s options, made once (``dumps`` with
#: any option builds one per call; its ``encode`` keeps no state between calls)
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
)


def _sha256_constructor() -> Any:
    # the builtin module avoids importing hashlib, which loads OpenSSL (~3 ms per hook process)
    try:
        from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]  # 3.12+
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
        except ImportError:  # pragma: no cover - an interpreter without the builtin
            from hashlib import sha256
    return sha256


_sha256: list[Any] = []  # found once: a failed import is searched for again on every call


def sha256_hex(data: bytes) -> str:
    """The sha256 of ``data`` in hex, without importing :mod:`hashlib`.

    >>> sha256_hex(b"")[:16]
    'e3b0c44298fc1c14'
    """
    if not _sha256:
        _sha256.append(_sha256_constructor())
    digest: str = _sha256[0](data).hexdigest()
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


def _mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return value if value is not None else {}


# typed converters (a bare ``tuple`` converter loses the element type for mypy)
def _strings(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


def _conditions(values: Iterable[ConditionResult]) -> tuple[ConditionResult, ...]:
    return tuple(values)


def _violations(values: Iterable[Violation]) -> tuple[Violation, ...]:
    return tuple(values)


def _records(values: Iterable[Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...]:
    return tuple(values)


@attrs.frozen(eq=False, repr=False)
class Event:
    """One harness event, in Claude Code's vocabulary (other harnesses' adapters translate).

    ``agent`` defaults to the harness name when the harness reports no subagent type;
    ``agent_id`` names the subagent the event comes from (Claude Code's ``agent_id``), empty on
    the root thread: a subagent's events carry its root session's ``session_id``. An
    ``event_name`` the engine does not know raises :class:`~forge_policy.errors.UnknownEventError`
    (an :class:`~forge_policy.EventError`): a misspelled name would match no behavior and allow
    anything.

    >>> ev = Event("PreToolUse", "s1", tool_name="Bash", tool_input={"command": "ls"})
    >>> ev.tool_name, ev.agent
    ('Bash', 'claude-code')
    >>> try:
    ...     Event("PreTooluse", "s1")
    ... except EventError as exc:
    ...     print(exc)
    event: hook_event_name: unknown event 'PreTooluse' (did you mean 'PreToolUse'?)
    """

    event_name: str
    session_id: str
    tool_name: str = attrs.field(default="", kw_only=True)
    tool_input: Mapping[str, Any] = attrs.field(default=None, converter=_mapping, kw_only=True)
    prompt: str = attrs.field(default="", kw_only=True)
    agent: str = attrs.field(default="", kw_only=True)
    agent_id: str = attrs.field(default="", kw_only=True)
    cwd: str = attrs.field(default="", kw_only=True)
    tool_use_id: str = attrs.field(default="", kw_only=True)
    permission_mode: str = attrs.field(default="", kw_only=True)
    harness: str = attrs.field(default="claude-code", kw_only=True)
    payload: Mapping[str, Any] = attrs.field(default=None, converter=_mapping, kw_only=True)

    def __attrs_post_init__(self) -> None:
        if self.event_name not in EVENTS and self.event_name not in GIT_HOOK_EVENTS:
            raise UnknownEventError(self.event_name, [*EVENTS, *GIT_HOOK_EVENTS])
        if not self.agent:
            object.__setattr__(self, "agent", self.harness)

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
    def from_claude_code(cls, payload: object, *, harness: str = "claude-code") -> Event:
        """Build an event from a Claude Code hook payload (the JSON object read from stdin, or
        the hook input the Claude Agent SDK passes its callbacks: the same fields).

        Raises :class:`~forge_policy.EventError` naming the field when the payload is unusable.

        >>> ev = Event.from_claude_code({"session_id": "s", "hook_event_name": "PreToolUse",
        ...     "tool_name": "Write", "tool_input": {"file_path": "/a.py"}, "tool_use_id": "t1"})
        >>> ev.tool_input["file_path"], ev.tool_use_id, ev.agent_id
        ('/a.py', 't1', '')
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
            agent_id=_text(payload, "agent_id"),
            cwd=_text(payload, "cwd"),
            tool_use_id=_text(payload, "tool_use_id"),
            permission_mode=_text(payload, "permission_mode"),
            harness=harness,
            payload=payload,
        )

    def __repr__(self) -> str:
        subject = f" {self.tool_name}" if self.tool_name else ""
        return f"<Event {self.event_name}{subject} session={self.session_id!r}>"


_ATTRIBUTE_KEYS = {
    "hook_event_name": "event_name",
    "session_id": "session_id",
    "tool_name": "tool_name",
    "tool_input": "tool_input",
    "prompt": "prompt",
    "agent_type": "agent",
    "agent": "agent",
    "agent_id": "agent_id",
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


@attrs.frozen(repr=False)
class ConditionResult:
    """How one condition of a trigger evaluated, for explanations (Cedar-style diagnostics).

    >>> ConditionResult("command", "contains", "push", "git push", True)
    ConditionResult(command contains 'push': matched)
    """

    field: str
    operator: str
    value: object
    actual: object
    matched: bool

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        actual = self.actual
        if isinstance(actual, str):
            from forge_policy.secrets import redact  # before the cut, which could hide a secret

            actual = redact(actual)
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


#: ``Violation.override_mode``: who can let a blocked call through.
OVERRIDE_BY_AGENT = "agent"  # the agent retries the call, or the user runs forge-policy override
OVERRIDE_BY_USER = "user"  # the harness asks the user (Claude Code ``permissionDecision: ask``)
OVERRIDE_NEVER = "never"  # hard_block: nobody
OVERRIDE_MODES = (OVERRIDE_BY_AGENT, OVERRIDE_BY_USER, OVERRIDE_NEVER)


def _default_override_mode(violation: Violation) -> str:
    return OVERRIDE_NEVER if violation.level is Level.HARD_BLOCK else OVERRIDE_BY_AGENT


def _check_override_mode(violation: Violation, attribute: object, value: str) -> None:
    if value not in OVERRIDE_MODES:
        raise InvalidArgument(f"override_mode: expected one of {OVERRIDE_MODES}, got {value!r}")
    if violation.level is Level.HARD_BLOCK and value != OVERRIDE_NEVER:
        raise InvalidArgument(f"override_mode: a hard_block is never overridden, got {value!r}")


@attrs.frozen(repr=False)
class Violation:
    """One behavior's violation on one event, with the level it reached and why it fired.

    ``shadow`` violations (``policy.enforcement.mode: shadow``) are counted and recorded but
    neither shown nor blocking: ``level`` is what *would have* happened.
    ``overridden`` names the override mechanism (``retry``, ``explicit``, ``user``) when the call
    was let through, else ``""``. ``override_mode`` says who may override it if it blocks:
    ``agent``, ``user`` (the harness asks the user) or ``never`` (a hard_block; the default
    follows the level).

    >>> v = Violation("b", "B", Level.SOFT_BLOCK, 3, "refused", override_mode="user")
    >>> v.blocks, v.override_mode, Violation("h", "H", Level.HARD_BLOCK, 1, "no").override_mode
    (True, 'user', 'never')
    """

    behavior_id: str
    behavior_name: str
    level: Level
    counter: int
    message: str
    trigger_index: int = attrs.field(default=-1, kw_only=True)
    conditions: tuple[ConditionResult, ...] = attrs.field(
        default=(), converter=_conditions, kw_only=True
    )
    shadow: bool = attrs.field(default=False, kw_only=True)
    overridden: str = attrs.field(default="", kw_only=True)
    override_mode: str = attrs.field(
        default=attrs.Factory(_default_override_mode, takes_self=True),
        validator=_check_override_mode,
        kw_only=True,
    )
    #: The short id a soft block names its call by (``override --call ID``); "" otherwise.
    call_id: str = attrs.field(default="", kw_only=True)

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
            "override_mode": self.override_mode,
            "blocks": self.blocks,
        }

    def __repr__(self) -> str:
        extra = " shadow" if self.shadow else ""
        extra += f" overridden={self.overridden}" if self.overridden else ""
        return f"<Violation {self.behavior_id} {self.level.label} counter={self.counter}{extra}>"


@attrs.frozen
class AutoApproval:
    """A harness rule's yes to a soft block that would ask the user (see
    :mod:`forge_policy.engine.overrides`): ``reason`` is recorded with the override, ``note`` is
    appended to the violation's message for the user.

    >>> AutoApproval("permission_mode bypassPermissions", "(Allowed without asking.)").reason
    'permission_mode bypassPermissions'
    """

    reason: str
    note: str


@attrs.frozen(eq=False, repr=False)
class Decision:
    """The engine's answer for one event.

    ``level`` is the highest level the agent is shown (``SILENT`` when nothing is shown);
    ``messages`` are in display order: a block's reason first, then the non-blocking messages of
    the behaviors before it, in index order.

    >>> Decision(Event("PreToolUse", "s", tool_name="Read")).outcome
    'allow'
    """

    event: Event
    violations: tuple[Violation, ...] = attrs.field(default=(), converter=_violations)
    messages: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    blocking: Violation | None = attrs.field(default=None, kw_only=True)
    overrides: tuple[Mapping[str, Any], ...] = attrs.field(
        default=(), converter=_records, kw_only=True
    )
    diagnostics: tuple[str, ...] = attrs.field(default=(), converter=_strings, kw_only=True)
    #: The ``bypass`` audit records the evaluator wrote for this event: behaviors switched off
    #: (``FORGE_DISABLE``) that would have fired (:mod:`forge_policy.engine.bypass`).
    bypasses: tuple[Mapping[str, Any], ...] = attrs.field(
        default=(), converter=_records, kw_only=True
    )
    #: The tool's new input when the call is to run rewritten (SPEC §13: a shell command run
    #: under forge_policy's own floor), in the harness's own argument names; None: run as sent.
    #: An effect the hook computes after the decision (:mod:`forge_policy.floor.rewrite`);
    #: rules and the audit log read the original.
    updated_input: Mapping[str, Any] | None = attrs.field(default=None, kw_only=True)
    #: What the user is told beside this decision about the engine itself, whatever it
    #: decided: a last known good catalog enforcing because the project's own does not load
    #: (SPEC §10, :mod:`forge_policy.config.last_good`). Every renderer shows them to the user.
    notices: tuple[str, ...] = attrs.field(default=(), converter=_strings, kw_only=True)

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
            **({"notices": list(self.notices)} if self.notices else {}),
        }

    def __repr__(self) -> str:
        return f"<Decision {self.outcome} violations={len(self.violations)}>"
