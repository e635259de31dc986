"""Where a session stands and what is installed: :meth:`~forge_policy.Evaluator.status`,
:meth:`~forge_policy.Evaluator.override` and ``forge-policy list`` (SPEC §4, §11).

Frozen attrs classes built from the catalog and a :class:`~forge_policy.SessionState` through
its public accessors only, never from the engine's internals.
"""

from __future__ import annotations

from typing import Any

import attrs

from forge_policy.levels import Level, first_level, next_threshold, shown_level
from forge_policy.state import ROOT_AGENT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from forge_policy.catalog.catalog import Catalog
    from forge_policy.state import BehaviorState, SessionState


# -- status ------------------------------------------------------------------------------------


@attrs.frozen
class AgentStatus:
    """One agent's share of a behavior in a session (issue 27): the root thread (``root``,
    ``agent_id`` ``""``) or a subagent, with its ``type`` (Claude Code's ``agent_type``; ``""``
    when unknown), its counter, the level its violations reached and its blocks.

    >>> AgentStatus("a1", "Explore", 2, Level.WARNING).root
    False
    """

    agent_id: str
    type: str
    counter: int
    level: Level | None
    blocks: int = 0
    root: bool = attrs.field(default=attrs.Factory(lambda self: not self.agent_id, takes_self=True))


@attrs.frozen
class BehaviorStatus:
    """One behavior in one session: SPEC §11 ``status``.

    ``enabled`` is false when the project or this session switched the behavior off
    (``session_disabled`` says which); ``level`` is None before the first violation;
    ``next_threshold`` is the next escalation ``after`` above the counter, None at the top of
    the ladder; ``override_granted`` is when an explicit override still waiting was granted.

    >>> row = BehaviorStatus(enabled=True, counter=2, level=Level.NUDGE, next_threshold=3)
    >>> row.pending_block, row.overrides, row.blocks
    (False, 0, 0)
    """

    enabled: bool
    counter: int
    level: Level | None
    next_threshold: int | None
    pending_block: bool = False
    overrides: int = 0
    blocks: int = 0
    session_disabled: bool = False
    override_granted: str | None = None
    #: the active profile when ``applies_to.profiles`` leaves the behavior out (it never runs)
    inactive_under: str | None = None
    #: ``level`` as a person reads it (:func:`~forge_policy.levels.shown_level`: ``ask`` for a
    #: soft block the user approves); None before the first violation
    level_shown: str | None = None
    #: the counter broken down by agent, root thread first (issue 27); empty unless a subagent
    #: took part in the session (``--json`` then leaves the key out)
    agents: tuple[AgentStatus, ...] = ()


@attrs.frozen
class Status:
    """One session's counters, levels, thresholds, flags and totals (SPEC §11 ``status``).

    ``exists`` is false for a session with no live state (never seen, or expired): then
    ``behaviors`` is empty. ``behaviors`` follows the catalog's order. ``created_at`` and
    ``last_accessed_at`` are the state document's UTC ISO 8601 stamps.

    >>> Status("s1", exists=False).behaviors
    {}
    """

    session_id: str
    exists: bool
    flags: tuple[str, ...] = ()
    totals: dict[str, float] = attrs.field(factory=dict)
    behaviors: dict[str, BehaviorStatus] = attrs.field(factory=dict)
    disabled: tuple[str, ...] = ()
    created_at: str | None = None
    last_accessed_at: str | None = None
    #: the subagents the session saw (id -> type), from SubagentStart/SubagentStop and the
    #: per-agent breakdowns; empty on a session with none (``--json`` then leaves it out)
    agents: dict[str, str] = attrs.field(factory=dict)


def _agents_of(state: SessionState) -> dict[str, str]:
    """Every subagent a session knows (id -> type; ``""`` when its type is unknown)."""
    known = {agent_id: str(entry.get("type") or "") for agent_id, entry in state.agents.items()}
    for behavior_id in state.behavior_ids():
        bstate = state.find(behavior_id)
        for agent_id in bstate.agent_ids() if bstate is not None else ():
            share = bstate.find_agent(agent_id) if bstate is not None else None
            if agent_id and share is not None and not known.get(agent_id):
                known[agent_id] = share.type
    known.pop(ROOT_AGENT, None)
    return known


def _shares(bstate: BehaviorState, types: Mapping[str, str]) -> tuple[AgentStatus, ...]:
    """A behavior's per-agent breakdown, root thread first, then by agent id."""
    rows = []
    for agent_id in sorted(bstate.agent_ids()):
        share = bstate.find_agent(agent_id)
        if share is None:
            continue
        kind = share.type or types.get(agent_id, "")
        rows.append(AgentStatus(agent_id, kind, share.counter, share.effective_level, share.blocks))
    return tuple(rows)


def status_of(
    catalog: Catalog, session_id: str, state: SessionState | None, profile: str | None = None
) -> Status:
    """The :class:`Status` of a session from the catalog and its live state (None when it has
    none: give None for an expired state too).

    >>> import forge_policy as fp
    >>> s = fp.SessionState.new(0.0)
    >>> s.behavior("search-first").counter = 4
    >>> row = status_of(fp.builtin_catalog(), "s1", s).behaviors["search-first"]
    >>> row.counter, row.next_threshold
    (4, 5)
    """
    if state is None:
        return Status(session_id, exists=False)
    known = set(state.behavior_ids())
    off = state.disabled
    agents = _agents_of(state)
    behaviors: dict[str, BehaviorStatus] = {}
    for behavior in catalog.behaviors:
        bstate = state.behavior(behavior.id) if behavior.id in known else None
        counter = bstate.counter if bstate is not None else 0
        grant = bstate.grant if bstate is not None else None
        granted_at = (grant.granted_at or None) if grant is not None else None
        level = bstate.effective_level if bstate is not None else None
        behaviors[behavior.id] = BehaviorStatus(
            enabled=behavior.enabled and behavior.id not in off,
            counter=counter,
            level=level,
            next_threshold=next_threshold(counter, behavior.escalation),
            pending_block=bool(bstate is not None and bstate.pending_block),
            overrides=bstate.override_count if bstate is not None else 0,
            blocks=bstate.blocks if bstate is not None else 0,
            session_disabled=behavior.id in off,
            override_granted=granted_at if isinstance(granted_at, str) else None,
            inactive_under=profile if profile and behavior.excluded_by(profile) else None,
            level_shown=None if level is None else shown_level(level, behavior.override),
            agents=_shares(bstate, agents) if agents and bstate is not None else (),
        )
    created = state.data.get("created_at")
    accessed = state.data.get("last_accessed_at")
    return Status(
        session_id,
        exists=True,
        flags=tuple(sorted(state.flags)),
        totals=dict(state.totals),
        behaviors=behaviors,
        disabled=tuple(sorted(off)),
        created_at=created if isinstance(created, str) else None,
        last_accessed_at=accessed if isinstance(accessed, str) else None,
        agents=agents,
    )


# -- override ----------------------------------------------------------------------------------


@attrs.frozen
class OverrideGrant:
    """An explicit override (SPEC §4): a one-shot pass for the next soft-blocked call of
    ``behavior_id`` in ``session_id`` or, with ``call_id`` (``--call``), for a retry of that
    call only; valid until ``valid_until`` (UTC ISO 8601). It is audited when given (a
    ``grant`` record) and becomes an override record naming ``grant_id`` when a call uses it.

    >>> OverrideGrant("ab12", "s1", "search-first", "user approved", "2026-01-01T00:00:00Z",
    ...       "2026-01-01T00:01:00Z").reason
    'user approved'
    """

    grant_id: str
    session_id: str
    behavior_id: str
    reason: str
    granted_at: str
    valid_until: str
    #: The call it is bound to (``--call``) and that call's redacted summary; "" when it is
    #: for the next soft-blocked call of the behavior.
    call_id: str = ""
    input_summary: str = ""


@attrs.frozen
class OverrideRecord:
    """One override as the audit log and the session state record it (SPEC §4): which block
    it let through, how (``mechanism``: ``retry``, ``explicit`` or ``user``) and why.
    ``input_summary`` is redacted and at most 100 characters.

    >>> record = {"kind": "override", "override_id": "o1", "timestamp": "2026-01-01T00:00:00Z",
    ...           "session_id": "s1", "behavior_id": "search-first", "tool_name": "Write",
    ...           "input_summary": "/src/a.py", "counter": 5, "mechanism": "retry",
    ...           "reason": ""}
    >>> OverrideRecord.from_record(record).mechanism
    'retry'
    """

    override_id: str
    timestamp: str
    session_id: str
    behavior_id: str
    tool_name: str
    input_summary: str
    counter: int
    mechanism: str
    reason: str = ""

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> OverrideRecord:
        """The typed form of an override record (a dict of the audit log, the session state's
        ``overrides[]`` or :attr:`Decision.overrides`); missing text fields are empty."""
        counter = record.get("counter")
        return cls(
            override_id=str(record.get("override_id") or ""),
            timestamp=str(record.get("timestamp") or ""),
            session_id=str(record.get("session_id") or ""),
            behavior_id=str(record.get("behavior_id") or ""),
            tool_name=str(record.get("tool_name") or ""),
            input_summary=str(record.get("input_summary") or ""),
            counter=counter if isinstance(counter, int) and not isinstance(counter, bool) else 0,
            mechanism=str(record.get("mechanism") or ""),
            reason=str(record.get("reason") or ""),
        )


# -- catalog listing (forge-policy list) -------------------------------------------------------


@attrs.frozen
class CatalogEntry:
    """One behavior of ``forge-policy list``: ``disabled_by`` names what switched it off for
    this process (``FORGE_DISABLE`` or a seed's variable), None when nothing did.

    >>> import forge_policy as fp
    >>> entry = catalog_entries(fp.builtin_catalog())[0]
    >>> entry.id, entry.default_level.label
    ('protect-governance', 'hard_block')
    """

    id: str
    enabled: bool
    disabled_by: str | None
    default_level: Level
    category: str
    tuning: str | None
    name: str
    #: the active profile when ``applies_to.profiles`` leaves the behavior out (it never runs)
    inactive_under: str | None = None
    #: what the first violation does, as a person reads it: the level of the first violation
    #: (``default_level`` or an ``after: 1`` step), ``ask`` for a soft block the user approves
    default_shown: str = ""


def catalog_entries(
    catalog: Catalog, disabled_by: Mapping[str, str] | None = None, profile: str | None = None
) -> tuple[CatalogEntry, ...]:
    """The :class:`CatalogEntry` of every behavior, in index order (``inactive_under`` set
    when ``profile`` is given and leaves the behavior out)."""
    via = disabled_by or {}
    entries = []
    for b in catalog.behaviors:
        tuning = b.spec.get("tuning")
        entries.append(
            CatalogEntry(
                id=b.id,
                enabled=b.enabled,
                disabled_by=via.get(b.id),
                default_level=b.default_level,
                category=b.category,
                tuning=tuning if isinstance(tuning, str) else None,
                name=b.name,
                inactive_under=profile if profile and b.excluded_by(profile) else None,
                default_shown=shown_level(first_level(b.default_level, b.escalation), b.override),
            )
        )
    return tuple(entries)
