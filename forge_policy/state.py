"""Session state: the JSON document a store keeps per session (dotforge-compatible shape).

::

    {"created_at": ISO, "last_accessed_at": ISO,
     "flags": {NAME: true}, "totals": {NAME: number},
     "behaviors": {ID: {"counter": int, "effective_level": LEVEL | null,
                        "last_violation_at": ISO | null, "last_violation_tool": str | null,
                        "pending_block": {...} | null, "grant": {...} | null,
                        "blocked_calls": [{"call_id", "call_hash", ...}, ...],
                        "overrides": [OVERRIDE RECORD, ...], "overrides_total": int,
                        "overrides_horizon": ISO | null, "blocks": int,
                        "agents": {AGENT_ID: {"type": str, "counter": int, "blocks": int,
                                              "effective_level": LEVEL | null}}}},
     "agents": {AGENT_ID: {"type": str, "started_at": ISO | null, "stopped_at": ISO | null}}}

``behaviors[ID].agents`` is the per-agent breakdown of a behavior's counter (issue 27): one
entry per agent that violated it, keyed by the harness's agent id (``""``: the root thread,
:data:`ROOT_AGENT`). ``counter`` and ``effective_level`` of the behavior stay the session's
(with ``scope: session``, the ladder; with ``scope: agent``, the total and the highest level
any agent reached), the breakdown says who did what. The session's ``agents`` remembers the
subagents ``SubagentStart``/``SubagentStop`` announced, so ``status`` can name them.

The document is kept as plain JSON values so that keys this version does not know survive a
read-modify-write untouched. :class:`SessionState` is a thin typed view over it.

The state stays bounded however long a session runs: history lives in the audit log (the source
of truth), so ``overrides[]`` keeps only the :data:`RECENT_OVERRIDES` latest records (what a
reconcile after a crash may still need), ``overrides_total`` counts them all, and
``overrides_horizon`` is the timestamp of the newest record dropped (records up to it are known
to be applied).
"""

from __future__ import annotations

import math

import attrs

from forge_policy._time import iso, parse_iso
from forge_policy.levels import Level

#: How many stateless violations' keys a session state remembers as counted (SessionState.fold).
FOLDED_KEEP = 256

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SCHEMA_VERSION = 1

#: How many override records a behavior's ``overrides[]`` keeps (the latest ones). A crash
#: between an audit append and its state write leaves at most one transaction's records
#: unapplied, so a handful is plenty; older ones live in the audit log.
RECENT_OVERRIDES = 8
#: The key of a session's list of behaviors switched off for it alone (``off ID --session``).
DISABLED_KEY = "disabled"
#: The key of where the audit log stood at the session's last catch-up (:attr:`SessionState.
#: reconciled`): the log's bookkeeping, not what the session did.
RECONCILED_KEY = "reconciled"

#: How many soft-blocked calls a behavior's ``blocked_calls`` remembers (the latest ones), so
#: that ``override --call ID`` can name one of them.
RECENT_CALLS = 8
#: The key of the root thread (the main agent, no ``agent_id``) in a per-agent breakdown.
ROOT_AGENT = ""
#: Keys of an audit record that a state's ``overrides[]`` entry does not keep.
_NOT_STATE = ("kind", "seq", "prev")


def _number(value: object) -> float:
    # an int stays an int: override ids derive from repr(at), which must not change on a reread
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _string(value: object) -> str:
    return value if isinstance(value, str) else ""


@attrs.frozen
class PendingBlock:
    """A soft block waiting for its override (SPEC §4): the retry of the same call within the
    window passes it (``mode`` ``agent``), or the harness reports that the user let the call with
    this ``tool_use_id`` run (``mode`` ``user``).

    >>> p = PendingBlock.from_dict({"call_hash": "h", "at": 5, "counter": 3, "mode": "user"})
    >>> p.at, p.counter, p.mode, PendingBlock.from_dict(p.to_dict()) == p
    (5, 3, 'user', True)
    """

    call_hash: str
    at: float
    counter: int
    mode: str = "agent"
    event: str = ""
    tool_name: str = ""
    tool_use_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape kept in ``behaviors[ID].pending_block``."""
        return {
            "call_hash": self.call_hash,
            "at": self.at,
            "event": self.event,
            "tool_name": self.tool_name,
            "tool_use_id": self.tool_use_id,
            "counter": self.counter,
            "mode": self.mode,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PendingBlock:
        """Read the JSON shape; a value of the wrong type reads as empty (never raises)."""
        counter = data.get("counter")
        return cls(
            call_hash=_string(data.get("call_hash")),
            at=_number(data.get("at")),
            counter=counter if isinstance(counter, int) and not isinstance(counter, bool) else 0,
            mode=_string(data.get("mode")) or "agent",
            event=_string(data.get("event")),
            tool_name=_string(data.get("tool_name")),
            tool_use_id=_string(data.get("tool_use_id")),
        )

    def is_live(self, now: float, window: float) -> bool:
        """Within the override window (inclusive) of the block.

        >>> PendingBlock("h", 10.0, 1).is_live(70.0, 60.0)
        True
        """
        return 0 <= now - self.at <= window


def call_id_of(call_hash: str) -> str:
    """The short id a soft block names its call by (SPEC §4): the first 8 hex digits of the
    canonical-input hash the retry rule compares, so the same call always has the same id.

    >>> call_id_of("0123456789abcdef")
    '01234567'
    """
    return call_hash[:8]


@attrs.frozen
class Grant:
    """An explicit override (``forge-policy override``) waiting for the next soft-blocked call of
    its behavior, or (``call_hash`` set: ``--call ID``) for a retry of that exact call; live for
    ``FORGE_GRANT_SECONDS`` from ``at``.

    >>> g = Grant.from_dict({"at": 1.0, "reason": "ok", "grant_id": "ab"})
    >>> g.reason, g.basis, g.is_live(61.0, 60.0), g.is_live(61.5, 60.0), g.bound
    ('ok', 'ab', True, False, False)
    """

    at: float
    reason: str = ""
    granted_at: str = ""
    grant_id: str = ""
    call_hash: str = ""
    call_id: str = ""
    summary: str = ""

    @property
    def basis(self) -> str:
        """What the id of the override spending it derives from (older grants have no id)."""
        return self.grant_id or repr(self.at)

    @property
    def bound(self) -> bool:
        """Bound to one call (``--call``): only a retry of that call may spend it."""
        return bool(self.call_hash)

    def admits(self, identity: str) -> bool:
        """Whether the call with this canonical-input hash may spend the grant."""
        return not self.call_hash or self.call_hash == identity

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape kept in ``behaviors[ID].grant``."""
        out: dict[str, Any] = {
            "at": self.at,
            "reason": self.reason,
            "granted_at": self.granted_at,
            "grant_id": self.grant_id,
        }
        if self.call_hash:
            out.update(call_hash=self.call_hash, call_id=self.call_id, summary=self.summary)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Grant:
        """Read the JSON shape; a value of the wrong type reads as empty (never raises)."""
        return cls(
            at=_number(data.get("at")),
            reason=_string(data.get("reason")),
            granted_at=_string(data.get("granted_at")),
            grant_id=_string(data.get("grant_id")),
            call_hash=_string(data.get("call_hash")),
            call_id=_string(data.get("call_id")),
            summary=_string(data.get("summary")),
        )

    def is_live(self, now: float, seconds: float) -> bool:
        """Within ``seconds`` (``FORGE_GRANT_SECONDS``, inclusive) of the grant."""
        return 0 <= now - self.at <= seconds


#: The exact types a JSON copy keeps as they are, without a call (a subclass takes the call).
_ATOMS = frozenset({str, int, float, bool, type(None)})


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (cheaper to import than :mod:`copy`).

    >>> doc = {"a": [1, {"b": None}], "c": "x"}
    >>> copied = copy_json(doc)
    >>> copied == doc, copied["a"] is doc["a"], copied["a"][1] is doc["a"][1]
    (True, False, False)
    """
    if isinstance(value, dict):
        # most values of a state are atoms: kept inline, the recursion only for containers
        return {k: v if type(v) in _ATOMS else copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [v if type(v) in _ATOMS else copy_json(v) for v in value]
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


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _level(value: object) -> Level | None:
    try:
        return Level.parse(value) if isinstance(value, str) else None
    except ValueError:
        return None


class AgentCounts:
    """A typed view of ``behaviors[ID].agents[AGENT_ID]``: one agent's share of a behavior's
    violations in a session; writes go to the underlying dict.

    >>> b = SessionState.new(0.0).behavior("x")
    >>> a = b.agent("a1")
    >>> a.counter, a.effective_level, a.type
    (0, None, '')
    >>> a.counter, a.type, a.effective_level = 2, "Explore", Level.WARNING
    >>> b.data["agents"]
    {'a1': {'type': 'Explore', 'counter': 2, 'effective_level': 'warning', 'blocks': 0}}
    """

    __slots__ = ("data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    @property
    def counter(self) -> int:
        return _count(self.data.get("counter"))

    @counter.setter
    def counter(self, value: int) -> None:
        self.data["counter"] = value

    @property
    def effective_level(self) -> Level | None:
        """The highest level this agent's violations reached (with ``scope: agent``, its own
        ladder's level)."""
        return _level(self.data.get("effective_level"))

    @effective_level.setter
    def effective_level(self, level: Level) -> None:
        self.data["effective_level"] = level.label

    @property
    def type(self) -> str:
        """The agent's type (Claude Code's ``agent_type``; the harness name for a root thread
        without one)."""
        return _string(self.data.get("type"))

    @type.setter
    def type(self, value: str) -> None:
        self.data["type"] = value

    @property
    def blocks(self) -> int:
        return _count(self.data.get("blocks"))

    def record_block(self) -> None:
        self.data["blocks"] = self.blocks + 1


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
    def pending_block(self) -> PendingBlock | None:
        """The soft block waiting for its override, if any."""
        value = self.data.get("pending_block")
        return PendingBlock.from_dict(value) if isinstance(value, dict) else None

    @pending_block.setter
    def pending_block(self, value: PendingBlock | None) -> None:
        self.data["pending_block"] = value.to_dict() if value is not None else None

    @property
    def grant(self) -> Grant | None:
        """An explicit override waiting for the next blocked call."""
        value = self.data.get("grant")
        return Grant.from_dict(value) if isinstance(value, dict) else None

    @grant.setter
    def grant(self, value: Grant | None) -> None:
        self.data["grant"] = value.to_dict() if value is not None else None

    @property
    def blocked_calls(self) -> list[dict[str, Any]]:
        """The latest soft-blocked calls (at most :data:`RECENT_CALLS`), oldest first: each
        ``{"call_id", "call_hash", "summary", "tool_name", "at"}`` (``override --call``)."""
        value = self.data.get("blocked_calls")
        if not isinstance(value, list):
            return []
        return [entry for entry in value if isinstance(entry, dict)]

    def note_blocked_call(self, entry: dict[str, Any]) -> None:
        """Remember a soft-blocked call (the same call again moves to the end).

        >>> b = SessionState.new(0.0).behavior("x")
        >>> for n in [1, 2, 1] + list(range(3, 12)):
        ...     b.note_blocked_call({"call_id": str(n), "call_hash": str(n)})
        >>> [c["call_id"] for c in b.blocked_calls][:3], len(b.blocked_calls)
        (['4', '5', '6'], 8)
        """
        kept = [c for c in self.blocked_calls if c.get("call_hash") != entry.get("call_hash")]
        kept.append(dict(entry))
        self.data["blocked_calls"] = kept[-RECENT_CALLS:]

    @property
    def overrides(self) -> list[dict[str, Any]]:
        """The latest override records (at most :data:`RECENT_OVERRIDES`), oldest first."""
        value = self.data.get("overrides")
        if not isinstance(value, list):
            value = self.data["overrides"] = []
        return value

    @property
    def override_count(self) -> int:
        """Every override of this behavior in the session, the dropped ones included."""
        total = self.data.get("overrides_total")
        if isinstance(total, int) and not isinstance(total, bool):
            return total
        value = self.data.get("overrides")
        return len(value) if isinstance(value, list) else 0  # a document from before the cap

    @property
    def override_horizon(self) -> float | None:
        """When the newest dropped override record was made: records up to then are applied
        (None: nothing was dropped)."""
        value = self.data.get("overrides_horizon")
        return parse_iso(value) if isinstance(value, str) else None

    def add_override(self, record: dict[str, Any]) -> None:
        """Record an override (an audit record: its log-only keys are left out), keeping
        ``overrides[]`` to the latest :data:`RECENT_OVERRIDES`.

        >>> b = SessionState.new(0.0).behavior("x")
        >>> for n in range(10):
        ...     b.add_override({"kind": "override", "override_id": str(n),
        ...                     "timestamp": iso(float(n))})
        >>> b.override_count, len(b.overrides), b.override_horizon
        (10, 8, 1.0)
        """
        count = self.override_count
        entries = self.overrides
        entries.append({k: v for k, v in record.items() if k not in _NOT_STATE})
        self.data["overrides_total"] = count + 1
        if len(entries) > RECENT_OVERRIDES:
            dropped = entries[: len(entries) - RECENT_OVERRIDES]
            del entries[: len(dropped)]
            stamps = [parse_iso(e.get("timestamp"), default=-1.0) for e in dropped]
            horizon = max([*stamps, self.override_horizon or -1.0])
            if horizon >= 0:
                self.data["overrides_horizon"] = iso(horizon)

    @property
    def blocks(self) -> int:
        value = self.data.get("blocks", 0)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    def record_violation(self, now: float, tool_name: str) -> None:
        self.data["last_violation_at"] = iso(now)
        self.data["last_violation_tool"] = tool_name or None

    def record_block(self) -> None:
        self.data["blocks"] = self.blocks + 1

    def agent_ids(self) -> list[str]:
        """The agents with a share of this behavior's violations (``""``: the root thread)."""
        agents = self.data.get("agents")
        if not isinstance(agents, dict):
            return []
        return [k for k, v in agents.items() if isinstance(k, str) and isinstance(v, dict)]

    def find_agent(self, agent_id: str) -> AgentCounts | None:
        """One agent's share if it has one; never creates it."""
        agents = self.data.get("agents")
        data = agents.get(agent_id) if isinstance(agents, dict) else None
        return AgentCounts(data) if isinstance(data, dict) else None

    def agent(self, agent_id: str) -> AgentCounts:
        """One agent's share, created empty on first use."""
        agents = self.data.get("agents")
        if not isinstance(agents, dict):
            agents = self.data["agents"] = {}
        data = agents.get(agent_id)
        if not isinstance(data, dict):
            data = agents[agent_id] = {
                "type": "",
                "counter": 0,
                "effective_level": None,
                "blocks": 0,
            }
        return AgentCounts(data)

    def override_ids(self) -> set[str]:
        """The ids of the overrides kept in this behavior's ``overrides[]``."""
        return {str(o.get("override_id")) for o in self.overrides if isinstance(o, dict)}


class SessionState:
    """One session's state document with typed accessors.

    >>> s = SessionState.new(0.0)
    >>> s.behavior("search-first").counter
    0
    >>> s.flags["search_context_ready"] = True
    >>> SessionState(s.to_dict()).flags
    {'search_context_ready': True}
    """

    __slots__ = ("_shared", "data")

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        # behaviors whose entry is still the document's this one was derived from (derive())
        self._shared: set[str] | None = None

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

    @classmethod
    def from_json(cls, text: object) -> SessionState | None:
        """The session a stored row holds (JSON text of an object), or None for anything else
        (the SQLite and PostgreSQL stores quarantine such a row).

        >>> SessionState.from_json('{"flags": {}}').flags, SessionState.from_json("[1]")
        ({}, None)
        """
        import json

        try:
            data = json.loads(text) if isinstance(text, str | bytes) else None
        except (ValueError, RecursionError):
            return None
        return cls(data) if isinstance(data, dict) else None

    def copy(self) -> SessionState:
        return SessionState(copy_json(self.data))

    def derive(self) -> SessionState:
        """A copy to change, copied where it is changed: every value of the document is
        copied but the behaviors' entries, each copied when first written through
        :meth:`behavior` (the effects of one event touch one or two behaviors of many).
        Reading it (:meth:`find`) reads this state's entries; writing it never changes this
        state. The copy of a state's every write (:class:`~forge_policy.engine.session.Base`).

        >>> s = SessionState.new(0.0)
        >>> s.behavior("a").counter, s.behavior("b").counter = 1, 2
        >>> d = s.derive()
        >>> d.behavior("a").counter = 5
        >>> s.behavior("a").counter, d.find("a").counter, d.find("b").data is s.find("b").data
        (1, 5, True)
        """
        data = {
            k: v if k == "behaviors" or type(v) in _ATOMS else copy_json(v)
            for k, v in self.data.items()
        }
        derived = SessionState(data)
        behaviors = data.get("behaviors")
        if isinstance(behaviors, dict):
            data["behaviors"] = dict(behaviors)
            derived._shared = {k for k, v in behaviors.items() if type(v) not in _ATOMS}
        elif "behaviors" in data:
            data["behaviors"] = copy_json(behaviors)
        return derived

    def to_dict(self) -> dict[str, Any]:
        return self.data

    @property
    def created_at(self) -> float:
        return parse_iso(self.data.get("created_at"))

    @property
    def last_accessed_at(self) -> float:
        """When the session was last accessed (unreadable: when it was created)."""
        raw = self.data.get("last_accessed_at")
        stamp = parse_iso(raw, default=-math.inf)  # created_at parsed only when it is needed
        if stamp == -math.inf and (isinstance(raw, bool) or not isinstance(raw, int | float)):
            return self.created_at
        return stamp

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
        shared = self._shared
        if shared and behavior_id in shared:  # derive(): copied before its first write
            shared.discard(behavior_id)
            data = behaviors[behavior_id] = copy_json(data)
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

    def find(self, behavior_id: str) -> BehaviorState | None:
        """The state of one behavior if the session has one; never creates it (for readers
        that must not change the document, such as the pure ``decide``)."""
        behaviors = self.data.get("behaviors")
        data = behaviors.get(behavior_id) if isinstance(behaviors, dict) else None
        return BehaviorState(data) if isinstance(data, dict) else None

    @property
    def disabled(self) -> frozenset[str]:
        """Behaviors switched off for this session only (``forge-policy off ID --session``)."""
        value = self.data.get(DISABLED_KEY)
        if not isinstance(value, list):
            return frozenset()
        return frozenset(v for v in value if isinstance(v, str))

    def behavior_ids(self) -> list[str]:
        """The behaviors this session has a state for (reading never changes the document)."""
        behaviors = self.data.get("behaviors")
        return list(behaviors) if isinstance(behaviors, dict) else []

    @property
    def audit_checkpoint(self) -> tuple[int, str, str] | None:
        """``(seq, line hash, first line's hash)`` of the last audit record written for this
        session's decisions: the log must still hold those lines (SPEC §9)."""
        value = self.data.get("audit_checkpoint")
        if not isinstance(value, dict):
            return None
        seq, digest, origin = value.get("seq"), value.get("hash"), value.get("origin")
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
            return None
        if not isinstance(digest, str) or not isinstance(origin, str):
            return None
        return seq, digest, origin

    def set_audit_checkpoint(self, seq: int, digest: str, origin: str) -> None:
        self.data["audit_checkpoint"] = {"seq": seq, "hash": digest, "origin": origin}

    @property
    def reconciled(self) -> tuple[int, float, str] | None:
        """``(seq, since, origin)``: every record of this session in the audit log named by
        ``origin`` (its first line's hash) up to ``seq`` and stamped from ``since`` on is in
        this state, so a catch-up reads only what was appended after ``seq``
        (:func:`forge_policy.engine.session.catch_up`); None before the first catch-up."""
        value = self.data.get(RECONCILED_KEY)
        if not isinstance(value, dict):
            return None
        seq, since, origin = value.get("seq"), value.get("since"), value.get("origin")
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
            return None
        if not isinstance(since, (int, float)) or isinstance(since, bool):
            return None
        return (seq, float(since), origin) if isinstance(origin, str) else None

    def set_reconciled(self, seq: int, since: float, origin: str) -> None:
        self.data[RECONCILED_KEY] = {"seq": seq, "since": since, "origin": origin}

    @property
    def agents(self) -> dict[str, dict[str, Any]]:
        """The subagents announced by ``SubagentStart``/``SubagentStop`` (id -> ``{"type",
        "started_at", "stopped_at"}``); reading never changes the document."""
        value = self.data.get("agents")
        if not isinstance(value, dict):
            return {}
        return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, dict)}

    def note_agent(
        self, agent_id: str, agent_type: str, *, started: str = "", stopped: str = ""
    ) -> None:
        """Remember a subagent (its type, when it started and stopped).

        >>> s = SessionState.new(0.0)
        >>> s.note_agent("a1", "Explore", started="T0")
        >>> s.note_agent("a1", "", stopped="T1")
        >>> s.agents
        {'a1': {'type': 'Explore', 'started_at': 'T0', 'stopped_at': 'T1'}}
        """
        agents = self.data.get("agents")
        if not isinstance(agents, dict):
            agents = self.data["agents"] = {}
        entry = agents.get(agent_id)
        if not isinstance(entry, dict):
            entry = agents[agent_id] = {"type": "", "started_at": None, "stopped_at": None}
        if agent_type:
            entry["type"] = agent_type
        if started:
            entry["started_at"] = started
        if stopped:
            entry["stopped_at"] = stopped

    def folded(self, key: str) -> bool:
        """Whether the audit record with this key (a violation decided statelessly while the
        state could not be written: :func:`forge_policy.engine.reconcile.reconcile_session`)
        is already counted in this state."""
        keys = self.data.get("folded")
        return isinstance(keys, list) and key in keys

    def fold(self, key: str) -> None:
        """Remember that the record with ``key`` is counted (the newest :data:`FOLDED_KEEP`
        kept: such records are rare, and a catch-up reads back minutes, not days)."""
        keys = self.data.get("folded")
        keys = [k for k in keys if isinstance(k, str)] if isinstance(keys, list) else []
        keys.append(key)
        self.data["folded"] = keys[-FOLDED_KEEP:]
