"""Typed public results: what :meth:`~forge_policy.Evaluator.status`,
:meth:`~forge_policy.Evaluator.explain`, :meth:`~forge_policy.Evaluator.override` and
``forge-policy audit`` return, and the one converter that turns them into the JSON the
``--json`` options print.

The types are frozen attrs classes built from the catalog and a
:class:`~forge_policy.SessionState` through its public accessors only, never from the engine's
internals. The JSON form is produced by :func:`to_json`, which owns this package's only
:class:`cattrs.Converter`; cattrs is imported on the first call, never by ``import forge_policy``
nor on the hook's path.

>>> import forge_policy as fp
>>> ev = fp.Evaluator(fp.builtin_catalog(), clock=lambda: 1000.0)
>>> _ = ev.evaluate(fp.Event("PreToolUse", "s1", tool_name="Write",
...                          tool_input={"file_path": "/src/a.py", "content": "x"}))
>>> status = ev.status("s1")
>>> status.behaviors["search-first"].counter, status.behaviors["search-first"].level
(1, <Level.NUDGE: 1>)
>>> to_json(status)["behaviors"]["search-first"]["level"]
'nudge'
"""

from __future__ import annotations

from functools import cache
from typing import Any

import attrs

from forge_policy.levels import Level, next_threshold
from forge_policy.model import Decision

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import cattrs

    from forge_policy.catalog.catalog import Catalog
    from forge_policy.state import SessionState


# -- status ------------------------------------------------------------------------------------


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
    behaviors: dict[str, BehaviorStatus] = {}
    for behavior in catalog.behaviors:
        bstate = state.behavior(behavior.id) if behavior.id in known else None
        counter = bstate.counter if bstate is not None else 0
        grant = bstate.grant if bstate is not None else None
        granted_at = (grant.granted_at or None) if grant is not None else None
        behaviors[behavior.id] = BehaviorStatus(
            enabled=behavior.enabled and behavior.id not in off,
            counter=counter,
            level=bstate.effective_level if bstate is not None else None,
            next_threshold=next_threshold(counter, behavior.escalation),
            pending_block=bool(bstate is not None and bstate.pending_block),
            overrides=bstate.override_count if bstate is not None else 0,
            blocks=bstate.blocks if bstate is not None else 0,
            session_disabled=behavior.id in off,
            override_granted=granted_at if isinstance(granted_at, str) else None,
            inactive_under=profile if profile and behavior.excluded_by(profile) else None,
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
    )


# -- override ----------------------------------------------------------------------------------


@attrs.frozen
class OverrideGrant:
    """An explicit override (SPEC §4): a one-shot pass for the next soft-blocked call of
    ``behavior_id`` in ``session_id``, valid until ``valid_until`` (UTC ISO 8601). It becomes an
    override record in the audit log when a call uses it.

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


# -- explain -----------------------------------------------------------------------------------


@attrs.frozen
class ConditionTrace:
    """One condition of a trigger in an explain trace: what it compared and whether it matched
    (``actual`` is cut to 200 characters).

    >>> ConditionTrace("command", "contains", "rm", "rm -rf x", True).matched
    True
    """

    field: str
    operator: str
    value: Any
    actual: Any
    matched: bool


@attrs.frozen
class TriggerTrace:
    """One trigger of a behavior run by an explain: whether its conditions matched and what it
    did (``effect``: ``no match``, ``violation``, ``set flag NAME``, ...).

    >>> TriggerTrace("b", 1, "PreToolUse[Bash]", False, "no match").conditions
    ()
    """

    behavior_id: str
    trigger_index: int
    trigger: str
    matched: bool
    effect: str
    conditions: tuple[ConditionTrace, ...] = ()


@attrs.frozen
class BehaviorSkipped:
    """A behavior an explain did not run: ``skipped`` says why (``applies_to``, or ``off for
    this session``).

    >>> BehaviorSkipped("search-first", "applies_to").skipped
    'applies_to'
    """

    behavior_id: str
    skipped: str


@attrs.frozen
class PendingReleased:
    """A behavior whose pending block this call releases: ``override`` names the mechanism.

    >>> PendingReleased("gate", "retry").override
    'retry'
    """

    behavior_id: str
    override: str


@attrs.frozen
class Withdrawn:
    """Violations counted tentatively before a block cut the chain, then withdrawn (``by``
    names the blocking behavior).

    >>> Withdrawn(2, "gate").by
    'gate'
    """

    withdrawn: int
    by: str


TraceEntry = TriggerTrace | BehaviorSkipped | PendingReleased | Withdrawn


def trace_entry(raw: Mapping[str, Any]) -> TraceEntry:
    """The typed form of one entry of the evaluator's explain trace.

    >>> trace_entry({"behavior_id": "b", "skipped": "applies_to"})
    BehaviorSkipped(behavior_id='b', skipped='applies_to')
    """
    if "trigger_index" in raw:
        conditions = tuple(
            ConditionTrace(
                str(c["field"]), str(c["operator"]), c["value"], c["actual"], bool(c["matched"])
            )
            for c in raw.get("conditions", ())
        )
        return TriggerTrace(
            str(raw["behavior_id"]),
            int(raw["trigger_index"]),
            str(raw["trigger"]),
            bool(raw["matched"]),
            str(raw["effect"]),
            conditions,
        )
    if "skipped" in raw:
        return BehaviorSkipped(str(raw["behavior_id"]), str(raw["skipped"]))
    if "override" in raw:
        return PendingReleased(str(raw["behavior_id"]), str(raw["override"]))
    return Withdrawn(int(raw["withdrawn"]), str(raw["by"]))


@attrs.frozen
class BehaviorExplanation:
    """What an explain found for one catalog behavior: a one-line ``result`` and the triggers
    it ran.

    >>> BehaviorExplanation("search-first", "no violation").triggers
    ()
    """

    behavior_id: str
    result: str
    triggers: tuple[TriggerTrace, ...] = ()


@attrs.frozen
class ExplainReport:
    """A dry run of one event (SPEC §11 ``explain``): the decision it would get, the trace of
    every behavior, trigger and condition, and per catalog behavior what happened to it.

    >>> import forge_policy as fp
    >>> ev = fp.Evaluator(fp.builtin_catalog())
    >>> report = ev.explain(fp.Event("PreToolUse", "s1", tool_name="Bash",
    ...                              tool_input={"command": "git push --force"}))
    >>> report.decision.outcome, report.decision.blocking.behavior_id
    ('hard_block', 'no-destructive-git')
    >>> next(b.result for b in report.behaviors if b.behavior_id == "no-destructive-git")
    'violation 1: would reach hard_block'
    """

    decision: Decision
    trace: tuple[TraceEntry, ...]
    behaviors: tuple[BehaviorExplanation, ...]


def explain_report(
    catalog: Catalog, decision: Decision, trace: Sequence[Mapping[str, Any]]
) -> ExplainReport:
    """An :class:`ExplainReport` from a decision and the evaluator's raw trace."""
    entries = tuple(trace_entry(raw) for raw in trace)
    violations = {v.behavior_id: v for v in decision.violations}
    event = decision.event.event_name
    blocker = decision.blocking.behavior_id if decision.blocking else None
    withdrawn = next((e for e in entries if isinstance(e, Withdrawn)), None)
    stopped = False
    behaviors = []
    for behavior in catalog.behaviors:
        mine = [e for e in entries if getattr(e, "behavior_id", None) == behavior.id]
        triggers = tuple(e for e in mine if isinstance(e, TriggerTrace))
        skipped = next((e for e in mine if isinstance(e, BehaviorSkipped)), None)
        released = next((e for e in mine if isinstance(e, PendingReleased)), None)
        violation = violations.get(behavior.id)
        if not behavior.enabled:
            text = "disabled"
        elif event not in behavior.events:
            text = f"no trigger for {event}"
        elif stopped:
            text = f"not evaluated: the chain stopped at {blocker}'s block"
        elif skipped is not None:
            text = "skipped: its applies_to (tools, agents, profiles) excludes this event"
        elif released is not None and withdrawn is not None:
            text = (
                f"pending block matched (override by {released.override}), but the pass is "
                f"withdrawn: {withdrawn.by} blocks the call"
            )
        elif released is not None:
            text = f"passes: pending block released (override by {released.override})"
        elif violation is not None:
            text = f"violation {violation.counter}: would reach {violation.level.label}"
            if violation.overridden:
                text += f", let through (override: {violation.overridden})"
            elif violation.shadow:
                text += " (shadow: not shown)"
        elif not triggers:
            text = "no trigger matches"
        else:
            text = "no violation"
        stopped = stopped or behavior.id == blocker
        behaviors.append(BehaviorExplanation(behavior.id, text, triggers))
    return ExplainReport(decision, entries, tuple(behaviors))


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
            )
        )
    return tuple(entries)


# -- governance summary (forge-policy audit) ---------------------------------------------------


@attrs.frozen
class SessionTally:
    """One behavior's counts in one session, from the audit log.

    >>> SessionTally(3, 1, 0).violations
    3
    """

    violations: int
    blocks: int
    overrides: int


@attrs.frozen
class BehaviorInsight:
    """One behavior's aggregated insights (SPEC §4 triple write, §11 ``audit``).

    ``override_rate`` is overrides / blocks (None without blocks) and ``band`` its health band;
    ``mechanisms`` counts overrides per mechanism. ``installed``, ``enabled`` and ``category``
    come from the catalog and are None in a summary made without one.

    >>> BehaviorInsight().band is None
    True
    """

    violations: int = 0
    blocks: int = 0
    overrides: int = 0
    override_rate: float | None = None
    band: str | None = None
    mechanisms: dict[str, int] = attrs.field(factory=dict)
    installed: bool | None = None
    enabled: bool | None = None
    category: str | None = None


@attrs.frozen
class GovernanceTotals:
    """The totals over every behavior of a :class:`GovernanceSummary`.

    >>> GovernanceTotals(0, 0, 0).override_rate is None
    True
    """

    violations: int
    blocks: int
    overrides: int
    override_rate: float | None = None
    band: str | None = None


@attrs.frozen
class GovernanceSummary:
    """The governance summary of ``forge-policy audit`` (SPEC §11).

    ``behaviors`` per behavior id, ``sessions`` per session and behavior, ``records`` the number
    of audit records read and ``kinds`` their count per kind. ``installed`` (how many behaviors
    the catalog has) and ``enabled`` (their ids) are None in a summary made without a catalog.

    >>> s = GovernanceSummary({}, {}, GovernanceTotals(0, 0, 0), records=0)
    >>> s.kinds, s.installed
    ({}, None)
    """

    behaviors: dict[str, BehaviorInsight]
    sessions: dict[str, dict[str, SessionTally]]
    totals: GovernanceTotals
    records: int
    kinds: dict[str, int] = attrs.field(factory=dict)
    installed: int | None = None
    enabled: tuple[str, ...] | None = None


# -- JSON ------------------------------------------------------------------------------------


def to_json(value: object) -> Any:
    """The JSON-ready form of a result (plain dicts, lists, strings, numbers), as ``--json``
    prints it: levels by their label, a decision by :meth:`Decision.to_dict`, an explain
    report as its decision's keys plus ``trace`` and ``behaviors``.

    >>> to_json(BehaviorStatus(enabled=True, counter=1, level=Level.WARNING, next_threshold=None))
    ... # doctest: +NORMALIZE_WHITESPACE
    {'enabled': True, 'counter': 1, 'level': 'warning', 'next_threshold': None,
     'pending_block': False, 'overrides': 0, 'blocks': 0, 'session_disabled': False,
     'override_granted': None, 'inactive_under': None}
    """
    return _converter().unstructure(value)


@cache
def _converter() -> cattrs.Converter:
    """This package's one converter, built on first use (cattrs is not imported before)."""
    import cattrs

    converter = cattrs.Converter()
    converter.register_unstructure_hook(Level, lambda level: level.label)
    # a predicate hook: registering the class itself would make cattrs resolve its annotations,
    # which name types the model imports only for type checking
    converter.register_unstructure_hook_func(
        lambda cls: cls is Decision, lambda decision: decision.to_dict()
    )

    def explain(report: ExplainReport) -> dict[str, Any]:
        result: dict[str, Any] = report.decision.to_dict()
        result["trace"] = converter.unstructure(report.trace, tuple[TraceEntry, ...])
        result["behaviors"] = converter.unstructure(report.behaviors)
        return result

    converter.register_unstructure_hook(ExplainReport, explain)
    return converter
