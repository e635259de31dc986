"""A dry run of one event: :meth:`~forge_policy.Evaluator.explain` (SPEC §11 ``explain``).

The evaluator hands over its decision and a raw trace (plain dicts); :func:`explain_report`
types the trace and says, per catalog behavior, what happened to it.

An explain never prints a file (SPEC §11; issue 23): ``forge-policy explain`` is a command the
agent may run, so an event whose facts read a file (``git commit -F ~/.aws/credentials``,
``bash < .env``) must not make it a way around the secret-file check. A condition's ``actual``
is shown redacted; a fact that may hold text read from a file (``commit_message``, the command
facts, which read a script fed on stdin, any fact not known here) is shown only as far as the
event's own input shows it, the rest replaced by ``[not shown: read from a file]``. The rule
lives in :mod:`forge_policy.templates` (:func:`~forge_policy.templates.fact_shown`), where a
message's ``{facts.NAME}`` is filled by it too: an explain and a block reason cannot drift.
"""

from __future__ import annotations

from typing import Any

import attrs

from forge_policy.model import Decision
from forge_policy.templates import EventText, fact_shown

#: what a condition on a field read, as an explain may show it (the rule messages use too)
shown = fact_shown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from forge_policy.catalog.catalog import Catalog

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


def _shown_entry(entry: TraceEntry, seen: EventText) -> TraceEntry:
    """``entry`` with each condition's ``actual`` as :func:`shown` gives it."""
    if not isinstance(entry, TriggerTrace):
        return entry
    conditions = tuple(
        attrs.evolve(c, actual=shown(c.field, c.actual, seen)) for c in entry.conditions
    )
    return attrs.evolve(entry, conditions=conditions)


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
    seen = EventText.of_event(decision.event)
    entries = tuple(_shown_entry(trace_entry(raw), seen) for raw in trace)
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
