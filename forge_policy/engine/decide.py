"""SPEC §3 (counting, escalation, the chain) as a pure function: :func:`decide`.

``decide`` reads a session state and never changes it: it returns an :class:`Outcome` with the
decision, the effects to apply (:mod:`forge_policy.engine.effects`) and the explain trace. An
override (:mod:`forge_policy.engine.overrides`) takes effect only if the call goes through: when
a later behavior blocks the call, the tentative override steps of the earlier behaviors are
dropped, so their pending blocks and grants stay for the next attempt and an agent that retries
is never charged twice.

>>> import forge_policy as fp
>>> from forge_policy.state import SessionState
>>> state = SessionState.new(0.0)
>>> event = fp.Event("PreToolUse", "s1", tool_name="Bash",
...                  tool_input={"command": "git push --force"})
>>> from forge_policy.engine.inputs import FactCache, Settings
>>> facts = FactCache(event, fp.builtin_facts())  # the git rules read facts.shell_commands
>>> outcome = decide(fp.builtin_catalog(), event, state, 0.0, Settings(), facts)
>>> outcome.decision.outcome, [type(e).__name__ for e in outcome.effects][:3]
('hard_block', ['CountViolation', 'Audit', 'CountBlock'])
>>> state.behavior_ids()  # unchanged: the store applies the effects
[]
"""

from __future__ import annotations

import attrs

from forge_policy.catalog.behavior import AGENT_SCOPE, firing_key
from forge_policy.catalog.dsl import Scope, as_number  # loaded with behavior: once, not per call
from forge_policy.engine import effects as fx  # its classes load on first use: an allow uses none
from forge_policy.engine.effects import audit_records, overrides
from forge_policy.engine.inputs import FactCache, Settings, event_identity, read_as
from forge_policy.engine.keyed_flags import as_keys, set_keys  # small; a Read's allow sets keys
from forge_policy.engine.overrides import (
    auto_approved,
    explicit_pass,
    live_grant,
    retry_pass,
    user_approvals,
)
from forge_policy.engine.records import agent_fields, decision_record
from forge_policy.levels import Level, escalate
from forge_policy.model import (
    OVERRIDE_NEVER,
    ConditionResult,
    Decision,
    Event,
    Violation,
)
from forge_policy.state import PendingBlock, call_id_of
from forge_policy.values import Partial, Unknown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from forge_policy.catalog.behavior import Behavior, Trigger
    from forge_policy.catalog.catalog import Catalog
    from forge_policy.engine.effects import Effect, Step
    from forge_policy.engine.overrides import AutoApprove
    from forge_policy.state import BehaviorState, SessionState

    FactProvider = Callable[[Event], object]


@attrs.frozen
class Outcome:
    """What :func:`decide` decided: the decision, the effects to apply (in order), the trace."""

    decision: Decision
    effects: tuple[Effect, ...]
    trace: list[dict[str, Any]] = attrs.field(factory=list, eq=False)

    @property
    def audit(self) -> list[dict[str, Any]]:
        """The records to append to the audit log (before the state is written)."""
        return list(audit_records(self.effects))


def could_override(
    state: SessionState,
    event: Event,
    now: float,
    window: float,
    grant_seconds: float | None = None,
) -> bool:
    """Whether ``state`` holds something this event's overrides could consume: a live pending
    block of this very call, the pending ``user`` block this PostToolUse reports on, or a live
    grant (``grant_seconds``, by default ``window``). Only then can a record the state has not
    seen yet change what is decided.

    >>> from forge_policy.state import SessionState
    >>> could_override(SessionState.new(0.0), Event("Stop", "s"), 0.0, 60.0)
    False
    """
    seconds = window if grant_seconds is None else grant_seconds
    behaviors = state.data.get("behaviors")
    if not isinstance(behaviors, dict):
        return False
    identity = ""
    for behavior_id, data in behaviors.items():
        # read raw first: on most events no behavior holds a grant or a pending block
        if type(data) is not dict or not (data.get("grant") or data.get("pending_block")):
            continue
        bstate = state.find(behavior_id)
        if bstate is None:
            continue
        grant = live_grant(bstate, now, seconds)
        if grant is not None:
            if not grant.bound:
                return True
            identity = identity or event_identity(event)
            if grant.call_hash == identity:  # a bound grant: only its own call can spend it
                return True
        pending = bstate.pending_block
        if pending is None:
            continue
        if (
            pending.mode == "user"
            and event.event_name == "PostToolUse"
            and (event.tool_use_id == pending.tool_use_id != "")
        ):
            return True
        identity = identity or event_identity(event)
        if pending.call_hash == identity and pending.is_live(now, window):
            return True
    return False


class _Scratch:
    """The session's flags and totals as this event's triggers left them so far, and the
    effects recording each change (later behaviors of the chain see earlier ones' flags)."""

    __slots__ = ("effects", "flags", "totals")

    def __init__(self, state: SessionState) -> None:
        flags, totals = state.data.get("flags"), state.data.get("totals")
        self.flags: dict[str, Any] = dict(flags) if isinstance(flags, dict) else {}
        self.totals: dict[str, Any] = dict(totals) if isinstance(totals, dict) else {}
        self.effects: list[Effect] = []

    # a change that changes nothing is no effect: the allow path then neither copies the
    # state nor compares it (a flag set on every Grep, a total reset when there is none)

    def set_flag(self, name: str, present: bool) -> None:
        if present:
            if self.flags.get(name) is True:
                return
            self.flags[name] = True
        else:
            if name not in self.flags:
                return
            del self.flags[name]
        self.effects.append(fx.SetFlag(name, present))

    def set_total(self, name: str, value: float | None) -> None:
        if value is None:
            if name not in self.totals:
                return
            self.totals.pop(name)
        else:
            old = self.totals.get(name)
            if old == value and type(old) is type(value):
                return
            self.totals[name] = value
        self.effects.append(fx.SetTotal(name, value))

    def record_flags(self, changes: list[tuple[str, bool]]) -> None:
        """Effects for flag changes already made in :attr:`flags` (keyed flags)."""
        self.effects.extend(fx.SetFlag(name, present) for name, present in changes)

    def take(self) -> tuple[Effect, ...]:
        if not self.effects:
            return ()
        taken, self.effects = tuple(self.effects), []
        return taken


def _fire(
    behavior: Behavior,
    event: Event,
    scratch: _Scratch,
    counter: int,
    facts: FactCache,
    trace: list[dict[str, Any]] | None,
    fail_closed: bool = True,
    key: tuple[str, str, str | None] | None = None,
) -> tuple[Trigger, list[ConditionResult]] | None:
    """Run a behavior's triggers in order, recording flag and total actions in ``scratch``;
    return the first violating trigger (SPEC §3.1: one violation per behavior per event).
    ``fail_closed``: an undetermined fact makes a trigger match (the violation would block).

    A trigger that matched on known facts is preferred to an earlier one that matched only
    because a fact was undetermined: the known match decided the outcome, so the violation
    carries its recovery and no "could not read this call" note (issue 25)."""
    scope = Scope(event, counter, scratch.flags, scratch.totals, facts, fail_closed)
    fired: tuple[Trigger, list[ConditionResult]] | None = None
    assumed = False  # whether ``fired`` matched only on undetermined facts
    for trigger in behavior.firing(event, key):
        matched, results = trigger.test(scope, explain=trace is not None)
        effect = "no match"
        if matched:
            effect, violated = _act(trigger, scope, scratch)
            if violated and (fired is None or assumed):
                known = not trigger.undetermined(results)
                if fired is None or known:
                    fired, assumed = (trigger, results), not known
        if trace is not None:
            trace.append(
                {
                    "behavior_id": behavior.id,
                    "trigger_index": trigger.index,
                    "trigger": trigger.describe(),
                    "matched": matched,
                    "effect": effect,
                    "conditions": [r.to_dict() for r in results],
                }
            )
    return fired


def _act(trigger: Trigger, scope: Scope, scratch: _Scratch) -> tuple[str, bool]:
    """Carry out a matched trigger's action: what it did (for the trace) and whether it is a
    violation."""
    action = trigger.action
    flags, totals = scratch.flags, scratch.totals
    if action == "set_flag" and trigger.keys_field is not None:
        return _set_keyed(trigger, scope, scratch), False
    if action == "set_flag":
        scratch.set_flag(trigger.flag, True)
        return f"set flag {trigger.flag}", False
    if action == "accumulate":
        value_field = trigger.value_field
        amount = as_number(value_field.resolve(scope)) if value_field else None
        if amount is not None:
            total = (as_number(totals.get(trigger.total)) or 0) + amount
            if trigger.preview:  # seen by this event's later triggers, never saved
                totals[trigger.total] = total
            else:
                scratch.set_total(trigger.total, total)
        preview = " for this event" if trigger.preview else ""
        return f"added {amount or 0:g} to {trigger.total}{preview}", False
    if action == "reset_total":
        if trigger.total in totals:
            scratch.set_total(trigger.total, None)
        return f"reset {trigger.total}", False
    if action == "check_flag" and trigger.keys_field is not None:
        return _check_keyed(trigger, scope, scratch)
    if action == "check_flag":
        if flags.get(trigger.flag):
            if trigger.on_present == "consume":
                scratch.set_flag(trigger.flag, False)
            return f"flag {trigger.flag} present: {trigger.on_present}", False
        if trigger.on_absent == "violate":
            return f"flag {trigger.flag} absent: violation", True
        return f"flag {trigger.flag} absent: skip", False
    return "violation", True


def _set_keyed(trigger: Trigger, scope: Scope, scratch: _Scratch) -> str:
    """``set_flag`` with ``keys`` (:mod:`forge_policy.engine.keyed_flags`): a key for each
    string the field gives; an undetermined field sets nothing (setting only ever relaxes)."""
    assert trigger.keys_field is not None
    value = trigger.keys_field.resolve(scope)
    if type(value) is Unknown:
        return f"keys of flag {trigger.flag} undetermined: nothing set"
    keys = as_keys(value)
    scratch.record_flags(set_keys(scratch.flags, trigger.flag, keys))
    return f"set flag {trigger.flag} for {len(keys)} key(s)"


def _check_keyed(trigger: Trigger, scope: Scope, scratch: _Scratch) -> tuple[str, bool]:
    """``check_flag`` with ``keys``: present when any key the field gives is set; returns the
    trace line and whether it is a violation. Undetermined keys (or a cut list none of whose
    items is set) violate only when the behavior would block (fail closed)."""
    from forge_policy.engine.keyed_flags import found_key, keyed_name, touch

    assert trigger.keys_field is not None
    value = trigger.keys_field.resolve(scope)
    flag = trigger.flag
    name = "" if type(value) is Unknown else found_key(scratch.flags, flag, as_keys(value))
    if name:
        if trigger.on_present == "consume":
            for key in as_keys(value):
                scratch.set_flag(keyed_name(flag, key), False)
        else:
            scratch.record_flags(touch(scratch.flags, flag, name))
        return f"flag {name} present: {trigger.on_present}", False
    if type(value) in (Unknown, Partial) and not scope.fail_closed:
        return f"keys of flag {flag} undetermined: skip", False
    if trigger.on_absent == "violate":
        return f"flag {flag} absent for every key: violation", True
    return f"flag {flag} absent for every key: skip", False


def _skipped(
    behavior: Behavior, event: Event, session_off: frozenset[str], profile: str
) -> str | None:
    """Why ``behavior`` does not take part in this event (None: it does; "": not worth a
    trace line)."""
    if not behavior.enabled or event.event_name not in behavior.events:
        return ""
    if behavior.id in session_off:  # `forge-policy off ID --session SID`
        return "off for this session"
    if not behavior.applies_to(event, profile):
        return "applies_to"
    return None


def _with_pending(state: SessionState) -> list[str]:
    """The behaviors of this session with a pending block (``BehaviorState.pending_block``
    is set exactly when the stored value is an object; read raw: this runs on every event)."""
    behaviors = state.data.get("behaviors")
    if not isinstance(behaviors, dict):
        return []
    held = []
    for behavior_id, data in behaviors.items():
        # truthiness first: almost every behavior holds null here
        pending = data.get("pending_block") if type(data) is dict else None
        if pending and type(pending) is dict:
            held.append(behavior_id)
    return held


class _Chain:
    """One event on its way down the catalog: what every behavior's step needs."""

    __slots__ = (
        "_firing",
        "_identity",
        "_scope",
        "auto_approve",
        "event",
        "facts",
        "now",
        "scratch",
        "seen",
        "settings",
        "trace",
    )

    def __init__(
        self,
        event: Event,
        state: SessionState,
        now: float,
        settings: Settings,
        facts: FactCache,
        explain: bool,
        auto_approve: AutoApprove | None,
    ) -> None:
        self.event = event
        #: what the rules judge: an MCP call read as the built-in tool it acts like (its
        #: triggers, conditions and facts); ``event`` is what the records and answers name
        self.seen = read_as(event)
        self._firing: tuple[str, str, str | None] | None = None
        self.now = now
        self.settings = settings
        self.facts = facts
        self.auto_approve = auto_approve
        self._identity = ""
        self._scope: Scope | None = None
        self.scratch = _Scratch(state)
        self.trace: list[dict[str, Any]] | None = [] if explain else None

    @property
    def firing(self) -> tuple[str, str, str | None]:
        """What decides which triggers fire on ``seen`` (one key for every behavior visited),
        found when the first behavior is: most events of a large catalog visit none."""
        if self._firing is None:
            self._firing = firing_key(self.seen)
        return self._firing

    @property
    def identity(self) -> str:
        """The call's hash (SPEC §4), computed once, on first need: most events never ask."""
        if not self._identity:
            self._identity = event_identity(self.event)
        return self._identity

    def ladder(self, behavior: Behavior, bstate: BehaviorState | None) -> tuple[int, Level | None]:
        """The counter and effective level this event's violation climbs from: the session's
        (``scope: session``), or, with ``scope: agent``, the share of the agent the event
        comes from (issue 27; the root thread is an agent of its own)."""
        if bstate is None:
            return 0, None
        if behavior.scope == AGENT_SCOPE:
            share = bstate.find_agent(self.event.agent_id)
            if share is not None:
                return share.counter, share.effective_level
            if not bstate.agent_ids():
                # a level with no breakdown (the fail-closed state of SPEC §9, a state from
                # before agents were counted) is a floor every agent starts from
                return 0, bstate.effective_level
            return 0, None
        return bstate.counter, bstate.effective_level

    def cannot_fire(self, behavior: Behavior, bstate: BehaviorState | None) -> bool:
        """Whether ``behavior`` surely does nothing with this event
        (:meth:`~forge_policy.catalog.behavior.Behavior.refute`), seen through the scope its
        triggers would see; the totals its ``preview`` triggers set for this event are set
        here, as running it would set them."""
        scope = self._scope
        if scope is None:  # one per event: the scratch's flags and totals change in place
            scratch = self.scratch
            scope = self._scope = Scope(self.seen, 0, scratch.flags, scratch.totals, self.facts)
        counter = 0 if bstate is None else self.ladder(behavior, bstate)[0]
        previews = behavior.refute(self.seen, scope.seen_at(counter), self._firing or self.firing)
        if previews is None:
            return False
        totals = self.scratch.totals
        for name, total in previews:
            totals[name] = total
        return True

    def steps(self, behavior: Behavior, bstate: BehaviorState | None) -> list[Step]:
        """What ``behavior`` does with this event: pass a pending block's retry (SPEC §4:
        checked before any flag is consumed), or run its triggers and judge a violation."""
        event = self.event
        if bstate is not None and isinstance(bstate.data.get("pending_block"), dict):
            settings = self.settings
            passed = retry_pass(
                event,
                behavior.id,
                bstate,
                self.identity,
                self.now,
                settings.override_window,
                settings.grant_seconds,
                hard=self.ladder(behavior, bstate)[1] is Level.HARD_BLOCK,
            )
            if passed is not None:
                if self.trace is not None and passed.trace is not None:
                    self.trace.append(passed.trace)
                return [passed]
        counter_before, previous = self.ladder(behavior, bstate)
        fail_closed = behavior.fails_closed(previous, counter_before + 1)
        fired = _fire(
            behavior,
            self.seen,
            self.scratch,
            counter_before,
            self.facts,
            self.trace,
            fail_closed,
            self.firing,
        )
        flag_effects = self.scratch.take()
        steps = [fx.Step(behavior.id, flag_effects)] if flag_effects else []
        if fired is not None:
            steps.append(self.violation(behavior, bstate, counter_before, *fired))
        return steps

    def violation(
        self,
        behavior: Behavior,
        bstate: BehaviorState | None,
        counter_before: int,
        trigger: Trigger,
        results: list[ConditionResult],
    ) -> Step:
        """SPEC §3.2-3.4: count the violation and raise the level; a soft block may be let
        through by a live grant or the harness's rule instead."""
        from forge_policy.catalog.behavior import undetermined_note
        from forge_policy.render.messages import message

        event, now, identity = self.event, self.now, self.identity
        counter = counter_before + 1
        previous = self.ladder(behavior, bstate)[1]
        level = escalate(previous, counter, behavior.default_level, behavior.escalation)
        cap = behavior.level_cap
        if cap is not None and level > cap:
            level = cap  # relaxed: never above the cap, whatever came before
        # the session's counter and the agent's share both count every violation; the
        # ladder the level climbed is one of them (scope), the other rises to it (issue 27)
        share = bstate.find_agent(event.agent_id) if bstate is not None else None
        session_before = bstate.counter if bstate is not None else 0
        agent_before = share.counter if share is not None else 0
        if behavior.scope == AGENT_SCOPE:
            session_level = _raised(bstate.effective_level if bstate else None, level, cap)
            agent_level = level
        else:
            session_level = level
            agent_level = _raised(share.effective_level if share else None, level, cap)
        shadow = behavior.mode == "shadow"
        violation = Violation(
            behavior.id,
            behavior.name,
            level,
            counter_before,
            "",
            trigger_index=trigger.index,
            conditions=results,
            shadow=shadow,
            override_mode=OVERRIDE_NEVER if level is Level.HARD_BLOCK else behavior.override,
        )
        soft = level is Level.SOFT_BLOCK and not shadow
        grant = live_grant(bstate, now, self.settings.grant_seconds)
        if soft and grant is not None and grant.admits(identity):
            # SPEC §4: the next blocked call (or, bound, a retry of its call) goes through once;
            # the counter stays. A bound grant is never spent on, nor lost to, another call.
            counts = (session_before, agent_before)
            return explicit_pass(event, violation, grant, identity, now, behavior.override, counts)
        window = self.settings.override_window
        call_id = call_id_of(identity) if soft else ""
        totals = self.scratch.totals
        text = message(
            behavior, level, counter, self.seen, window, self.facts, totals, call_id, trigger
        )
        undetermined = trigger.undetermined(results)
        if undetermined:  # decided as matched on a fact that could not be computed
            text = f"{text}\n{undetermined_note(undetermined)}"
        violation = attrs.evolve(violation, counter=counter, message=text, call_id=call_id)
        tally = fx.AgentTally(
            event.agent_id, agent_fields(event)["agent"] or "", agent_before + 1, agent_level
        )
        counts = (session_before + 1, agent_before + 1)
        counted = (
            fx.CountViolation(
                behavior.id, counts[0], session_level, now, event.tool_name, agent=tally
            ),
        )
        if soft and violation.override_mode == "user" and self.auto_approve is not None:
            approval = self.auto_approve(event, violation)
            if approval is not None:  # the user asked not to be prompted: allow, on the record
                return auto_approved(event, violation, approval, identity, now, counted, counts)
        effects: list[Effect] = list(counted)
        if self.settings.record_violations or (level.blocks and not shadow):
            record = decision_record(
                event,
                violation,
                now,
                identity,
                behavior.override,
                undetermined=undetermined,
                call_id=call_id,
                counts=counts,
            )
            effects.append(fx.Audit(record))
        if level.blocks and not shadow:
            effects += self.block(behavior.id, level, counts[0], behavior.override)
        shown = text if level > Level.SILENT and not shadow and not level.blocks else ""
        return fx.Step(behavior.id, tuple(effects), violation=violation, shown=shown)

    def block(self, behavior_id: str, level: Level, counter: int, mode: str) -> list[Effect]:
        """A block is counted; a soft block waits for its override, a hard block leaves
        nothing to override (SPEC §4)."""
        effects: list[Effect] = [fx.CountBlock(behavior_id, agent_id=self.event.agent_id)]
        if level is Level.HARD_BLOCK:
            return [*effects, fx.SetPendingBlock(behavior_id, None), fx.SetGrant(behavior_id, None)]
        event = self.event
        pending = PendingBlock(
            call_hash=self.identity,
            at=self.now,
            counter=counter,
            mode=mode,
            event=event.event_name,
            tool_name=event.tool_name,
            tool_use_id=event.tool_use_id,
        )
        from forge_policy.secrets import summarize

        noted = fx.NoteBlockedCall(
            behavior_id,
            call_id_of(self.identity),
            self.identity,
            summarize(event.tool_name, event.tool_input),
            event.tool_name,
            self.now,
        )
        return [*effects, fx.SetPendingBlock(behavior_id, pending), noted]


#: The events that announce a subagent (``SubagentStart``) or its end (``SubagentStop``).
_AGENT_LIFECYCLE = frozenset({"SubagentStart", "SubagentStop"})


def _raised(previous: Level | None, level: Level, cap: Level | None) -> Level:
    """``level``, or ``previous`` when higher, never above ``cap`` (a relaxed behavior)."""
    reached = level if previous is None else max(previous, level)
    return cap if cap is not None and reached > cap else reached


def _noted_agent(event: Event, state: SessionState, now: float) -> Step:
    """A subagent's ``SubagentStart``/``SubagentStop``: the session remembers its type and
    when it started and stopped, so ``status`` names it."""
    from forge_policy._time import iso
    from forge_policy.engine._more_effects import NoteAgent  # a rare event: built on first use

    stamp = iso(now)
    start = event.event_name == "SubagentStart"
    noted = NoteAgent(
        event.agent_id,
        agent_fields(event)["agent"] or "",
        started=stamp if start else "",
        stopped="" if start else stamp,
    )
    return fx.Step("", (noted,))


def decide(
    catalog: Catalog,
    event: Event,
    state: SessionState,
    now: float,
    settings: Settings,
    facts: FactCache,
    *,
    explain: bool = False,
    auto_approve: AutoApprove | None = None,
) -> Outcome:
    """Decide one event against a session state, which is only read. Pure but for ``facts``.

    ``auto_approve`` is the harness's rule for soft blocks that would ask the user (see
    :mod:`forge_policy.engine.overrides`); None asks every time.
    """
    chain = _Chain(event, state, now, settings, facts, explain, auto_approve)
    seen = chain.seen
    trace = chain.trace
    steps: list[Step] = user_approvals(event, state, now)
    if event.agent_id and event.event_name in _AGENT_LIFECYCLE:
        steps.append(_noted_agent(event, state, now))
    blocking: Violation | None = None
    session_off = state.disabled
    excepted: dict[str, Any] = {}
    if settings.exceptions:  # SPEC §10: an audited, expiring allowance of one behavior
        from forge_policy.engine.exceptions import excepted as matching

        excepted = matching(settings.exceptions, event, now)
    # explain lists every behavior; otherwise only those that can fire on this event, and
    # those whose pending block a retry may release (SPEC §4: whatever the matcher says)
    pending = () if explain else _with_pending(state)
    visited = catalog.behaviors if explain else catalog.candidates(seen, pending)
    held = state.data.get("behaviors")
    if not isinstance(held, dict):
        held = {}
    for behavior in visited:
        skipped = _skipped(behavior, seen, session_off, settings.profile)
        if skipped is None and behavior.id in excepted:
            skipped = f"exception ({excepted[behavior.id].origin})"
        if skipped is not None:
            if skipped and trace is not None:
                trace.append({"behavior_id": behavior.id, "skipped": skipped})
            continue
        # most behaviors hold no state in a session: no lookup, no BehaviorState
        bstate = state.find(behavior.id) if behavior.id in held else None
        if trace is None and behavior.id not in pending and chain.cannot_fire(behavior, bstate):
            continue  # no trigger can match: its steps would be empty
        behavior_steps = chain.steps(behavior, bstate)
        steps += behavior_steps
        last = behavior_steps[-1].violation if behavior_steps else None
        if last is not None and last.blocks:
            blocking = last
            break  # SPEC §3.6: the first block cuts the chain

    if not steps and blocking is None:  # most events: nothing to apply, show or record
        allowed = Decision(event, (), (), overrides=(), diagnostics=facts.diagnostics)
        return Outcome(allowed, (), trace or [])
    if blocking is not None:  # the call does not go through: its overrides do not happen
        kept = [step for step in steps if not step.tentative]
        if trace is not None and len(kept) < len(steps):
            trace.append({"withdrawn": len(steps) - len(kept), "by": blocking.behavior_id})
        steps = kept
    applied = tuple(effect for step in steps for effect in step.effects)
    decision = Decision(
        event,
        [step.violation for step in steps if step.violation is not None],
        ([blocking.message] if blocking is not None else []) + [s.shown for s in steps if s.shown],
        blocking=blocking,
        overrides=overrides(applied),
        diagnostics=facts.diagnostics,
    )
    return Outcome(decision, applied, trace or [])
