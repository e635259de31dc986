"""The evaluator: SPEC §3 (counting, escalation) and §4 (overrides), and nothing else.

:func:`decide` is a pure function of the catalog, the event, a copy of the session state, the
time and the settings: it mutates only the copy it is given and returns what happened.
:class:`Evaluator` wires it to a store (one atomic transaction per event) and an audit sink
(written first: the audit log is the source of truth for overrides).
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from forge_policy.catalog.behavior import DEFAULT_PROFILE, render
from forge_policy.errors import AuditError, StoreError
from forge_policy.levels import Level, escalate, next_threshold
from forge_policy.model import (
    ConditionResult,
    Decision,
    Event,
    Violation,
    call_hash,
    sha256_hex,
)
from forge_policy.state import SessionState, touch_interval

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

    from forge_policy.audit.base import AuditSink
    from forge_policy.catalog.behavior import Behavior, Trigger
    from forge_policy.catalog.catalog import Catalog
    from forge_policy.engine.reports import ExplainReport, Grant, Status
    from forge_policy.state import BehaviorState
    from forge_policy.stores.base import RuntimeStore

    FactProvider = Callable[[Event], object]

DEFAULT_TTL = 86400.0
DEFAULT_WINDOW = 60.0
#: Seconds allowed between a decision and its audit append (lock waits), when reconciling.
RECONCILE_MARGIN = 30.0
NUDGE_LIMIT = 120


class Settings:
    """The knobs of one evaluation (SPEC §10 defaults)."""

    __slots__ = ("override_window", "profile", "record_violations", "touch_interval", "ttl")

    def __init__(
        self,
        *,
        ttl: float = DEFAULT_TTL,
        override_window: float = DEFAULT_WINDOW,
        profile: str = DEFAULT_PROFILE,
        record_violations: bool = False,
    ) -> None:
        self.ttl = ttl
        self.override_window = override_window
        self.profile = profile
        self.record_violations = record_violations
        self.touch_interval = touch_interval(ttl)


class Outcome:
    """What :func:`decide` did: the decision, the audit records to write, the explain trace."""

    __slots__ = ("audit", "decision", "trace")

    def __init__(
        self, decision: Decision, audit: list[dict[str, Any]], trace: list[dict[str, Any]]
    ) -> None:
        self.decision = decision
        self.audit = audit
        self.trace = trace


class FactCache:
    """Fact providers for one event: computed on first use, memoised, never raising."""

    __slots__ = ("_event", "_providers", "diagnostics", "values")

    def __init__(self, event: Event, providers: Mapping[str, FactProvider]) -> None:
        self._event = event
        self._providers = providers
        self.values: dict[str, object] = {}
        self.diagnostics: list[str] = []

    def __call__(self, name: str) -> object:
        if name in self.values:
            return self.values[name]
        provider = self._providers.get(name)
        value: object = ""
        if provider is None:
            self.diagnostics.append(f"fact {name!r} has no provider; it is empty")
        else:
            from forge_policy.facts import call_provider

            value, notes = call_provider(name, provider, self._event)
            self.diagnostics.extend(notes)
        self.values[name] = value
        return value


def event_identity(event: Event) -> str:
    """The hash an override-by-retry compares: tool name + canonical input, or the prompt."""
    if event.tool_name:
        return call_hash(event.tool_name, event.tool_input)
    return call_hash(f"<{event.event_name}>", {"prompt": event.prompt})


def _override_record(
    event: Event,
    behavior_id: str,
    counter: int,
    mechanism: str,
    reason: str,
    now: float,
    basis: str,
) -> dict[str, Any]:
    """An override record, redacted. Its id derives from the block (or grant) it consumes, so a
    transaction that runs twice can never mint two overrides for one block."""
    from forge_policy._time import iso
    from forge_policy.audit.verify import clean
    from forge_policy.secrets import summarize

    seed = f"{event.session_id}|{behavior_id}|{mechanism}|{basis}|{counter}"
    override_id = sha256_hex(seed.encode("utf-8"))[:32]
    record = {
        "kind": "override",
        "override_id": override_id,
        "timestamp": iso(now),
        "session_id": event.session_id,
        "behavior_id": behavior_id,
        "tool_name": event.tool_name,
        "input_summary": summarize(event.tool_name, event.tool_input),
        "counter": counter,
        "mechanism": mechanism,
        "reason": reason,
    }
    cleaned: dict[str, Any] = clean(record)
    return cleaned


def _message(
    behavior: Behavior,
    level: Level,
    counter: int,
    event: Event,
    settings: Settings,
    session_id: str,
    facts: Callable[[str], object] | None = None,
    totals: Mapping[str, Any] | None = None,
) -> str:
    threshold = next_threshold(counter, behavior.escalation)
    values = TemplateValues(
        {
            "behavior_id": behavior.id,
            "behavior_name": behavior.name,
            "counter": counter,
            "tool_name": event.tool_name,
            "level": level.label,
            "threshold": "max" if threshold is None else threshold,
            "hint": behavior.hint,
        },
        facts,
        totals,
    )
    t = behavior.templates
    if level <= Level.NUDGE:
        text = " ".join(render(t["nudge_template"], values).split())
        return text if len(text) <= NUDGE_LIMIT else text[: NUDGE_LIMIT - 1] + "…"
    correction = [f"Do instead: {behavior.hint}"] if behavior.hint else []
    if behavior.suggested_action or behavior.suggested_tool:
        tool = f"{behavior.suggested_tool}: " if behavior.suggested_tool else ""
        correction.append(f"Suggested: {tool}{behavior.suggested_action}".rstrip(": "))
    if level is Level.WARNING:
        return "\n".join([render(t["warning_template"], values).strip(), *correction])
    reason = render(t["block_reason"], values).strip()
    lines = [reason, *correction]
    if level is Level.HARD_BLOCK:
        if "cannot be overridden" not in reason:
            lines.append("This block cannot be overridden.")
    else:
        prompt = render(t["override_prompt"], values).strip()
        if prompt:
            lines.append(prompt)
        window = int(settings.override_window)
        if behavior.override == "user":
            lines.append(
                "Overriding needs the user's approval: the user is asked to allow this call."
            )
        else:
            lines.append(
                f"To override: repeat the identical call within {window} s (once), or "
                f"ask the user to run: forge-policy override {behavior.id} "
                f'--session {session_id} --reason "..."'
            )
    return "\n".join(lines)


class TemplateValues(Mapping[str, object]):
    """Template variables: the fixed ones, plus ``{facts.NAME}`` and ``{session.totals.NAME}``
    computed when a template names them (numbers with thousands separators, lists joined by
    commas), so a message can say what the rule measured.

    >>> values = TemplateValues({"counter": 2}, lambda name: [".env", ".npmrc"], {"t": 151000})
    >>> render("{counter}: {facts.files}; {session.totals.t}; {facts}", values)
    '2: .env, .npmrc; 151,000; {facts}'
    """

    __slots__ = ("_base", "_facts", "_totals")

    def __init__(
        self,
        base: dict[str, object],
        facts: Callable[[str], object] | None,
        totals: Mapping[str, Any] | None,
    ) -> None:
        self._base = base
        self._facts = facts
        self._totals = totals

    def __getitem__(self, name: str) -> object:
        if name in self._base:
            return self._base[name]
        if name.startswith("facts.") and len(name) > 6 and self._facts is not None:
            return _shown(self._facts(name[6:]))
        if name.startswith("session.totals.") and len(name) > 15 and self._totals is not None:
            return _shown(self._totals.get(name[15:], 0))
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        try:
            self[str(name)]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(self._base)

    def __len__(self) -> int:
        return len(self._base)


def _shown(value: object) -> str:
    """A fact or total as message text."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"
    if isinstance(value, list | tuple):
        items = [str(item) for item in value[:10]]
        return ", ".join(items + (["…"] if len(value) > 10 else []))
    return "" if value is None else str(value)


def _fire(
    behavior: Behavior,
    event: Event,
    state: SessionState,
    counter: int,
    facts: FactCache,
    trace: list[dict[str, Any]] | None,
) -> tuple[Trigger, list[ConditionResult]] | None:
    """Run a behavior's triggers in order; apply flag and total actions; return the first
    violating trigger (SPEC §3.1: one violation per behavior per event)."""
    from forge_policy.catalog.dsl import Scope, as_number

    flags = state.flags
    totals = state.totals
    scope = Scope(event, counter, flags, totals, facts)
    fired: tuple[Trigger, list[ConditionResult]] | None = None
    for trigger in behavior.triggers:
        if not trigger.fires_on(event):
            continue
        matched, results = trigger.test(scope, explain=trace is not None)
        effect = "no match"
        if matched:
            action = trigger.action
            if action == "set_flag":
                flags[trigger.flag] = True
                effect = f"set flag {trigger.flag}"
            elif action == "accumulate":
                value_field = trigger.value_field
                amount = as_number(value_field.resolve(scope)) if value_field else None
                if amount is not None:
                    totals[trigger.total] = (as_number(totals.get(trigger.total)) or 0) + amount
                effect = f"added {amount or 0:g} to {trigger.total}"
            elif action == "reset_total":
                totals.pop(trigger.total, None)
                effect = f"reset {trigger.total}"
            elif action == "check_flag":
                if flags.get(trigger.flag):
                    if trigger.on_present == "consume":
                        del flags[trigger.flag]
                    effect = f"flag {trigger.flag} present: {trigger.on_present}"
                elif trigger.on_absent == "violate":
                    effect = f"flag {trigger.flag} absent: violation"
                    fired = fired or (trigger, results)
                else:
                    effect = f"flag {trigger.flag} absent: skip"
            else:
                effect = "violation"
                fired = fired or (trigger, results)
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


def decide(
    catalog: Catalog,
    event: Event,
    state: SessionState,
    now: float,
    settings: Settings,
    facts: FactCache,
    *,
    explain: bool = False,
) -> Outcome:
    """Evaluate one event against a session state (mutated in place). Pure but for ``facts``.

    An override takes effect only when the call goes through: if a later behavior refuses the
    call, the overrides granted to earlier behaviors for it are withdrawn (their pending blocks
    and grants stay for the next attempt), so an agent that retries is never charged twice.
    """
    window = settings.override_window
    violations: list[Violation] = []
    shown: list[str] = []
    blocking: Violation | None = None
    audit: list[dict[str, Any]] = []
    overrides: list[dict[str, Any]] = []
    tentative: list[Callable[[], None]] = []
    trace: list[dict[str, Any]] | None = [] if explain else None
    identity = event_identity(event)
    behaviors_before = set(state.behavior_ids())
    session_off = state.disabled  # `forge-policy off ID --session SID`

    def grant_override(
        bstate: BehaviorState,
        behavior_id: str,
        counter: int,
        mechanism: str,
        reason: str,
        basis: str,
        released: tuple[str, ...],
        undo: Callable[[], None] | None = None,
    ) -> Callable[[], None]:
        record = _override_record(event, behavior_id, counter, mechanism, reason, now, basis)
        record["released"] = list(released)  # what it consumed, for reconciliation
        entry = {k: v for k, v in record.items() if k != "kind"}
        bstate.overrides.append(entry)
        audit.append(record)
        overrides.append(record)

        def withdraw() -> None:
            _remove(bstate.overrides, entry)
            _remove(audit, record)
            _remove(overrides, record)
            if undo is not None:
                undo()

        return withdraw

    # SPEC §4, override: user — the harness reports that the approved call ran.
    if event.event_name == "PostToolUse" and event.tool_use_id:
        for behavior_id in sorted(behaviors_before):
            bstate = state.behavior(behavior_id)
            pending = bstate.pending_block
            if (
                pending
                and pending.get("mode") == "user"
                and pending.get("tool_use_id") == event.tool_use_id
            ):
                bstate.pending_block = None
                counter = int(pending.get("counter", 0))
                basis = repr(pending.get("at"))
                grant_override(
                    bstate, behavior_id, counter, "user", "approved by user", basis, ("pending",)
                )

    for behavior in catalog.behaviors:
        if not behavior.enabled or event.event_name not in behavior.events:
            continue
        if behavior.id in session_off:
            if trace is not None:
                trace.append({"behavior_id": behavior.id, "skipped": "off for this session"})
            continue
        if not behavior.applies_to(event, settings.profile):
            if trace is not None:
                trace.append({"behavior_id": behavior.id, "skipped": "applies_to"})
            continue
        known = behavior.id in behaviors_before
        bstate_or_none = state.behavior(behavior.id) if known else None

        # SPEC §4: a pending block is checked before any flag is consumed.
        pending = bstate_or_none.pending_block if bstate_or_none is not None else None
        if (
            bstate_or_none is not None
            and pending
            and pending.get("event") == event.event_name
            and pending.get("call_hash") == identity
            and 0 <= now - float(pending.get("at", 0)) <= window
            and bstate_or_none.effective_level is not Level.HARD_BLOCK
        ):
            bstate = bstate_or_none
            grant = _live_grant(bstate, now, window)
            bstate.pending_block = None
            if grant is not None:  # the user's explicit override is spent on this retry
                bstate.grant = None
                mechanism, reason = "explicit", str(grant.get("reason", ""))
            elif pending.get("mode") == "user":
                mechanism, reason = "user", "approved by user"
            else:
                mechanism, reason = "retry", ""

            def restore(b: BehaviorState = bstate, p: Any = pending, g: Any = grant) -> None:
                b.pending_block = p
                if g is not None:
                    b.grant = g

            tentative.append(
                grant_override(
                    bstate,
                    behavior.id,
                    bstate.counter,
                    mechanism,
                    reason,
                    repr(pending.get("at")),
                    ("pending", "grant") if grant is not None else ("pending",),
                    restore,
                )
            )
            if trace is not None:
                trace.append({"behavior_id": behavior.id, "override": mechanism})
            continue

        counter_before = bstate_or_none.counter if bstate_or_none is not None else 0
        fired = _fire(behavior, event, state, counter_before, facts, trace)
        if fired is None:
            continue
        trigger, results = fired
        bstate = state.behavior(behavior.id)
        counter = counter_before + 1
        level = escalate(
            bstate.effective_level, counter, behavior.default_level, behavior.escalation
        )
        if behavior.level_cap is not None and level > behavior.level_cap:
            level = behavior.level_cap  # relaxed: never above the cap, whatever came before
        shadow = behavior.mode == "shadow"
        grant = _live_grant(bstate, now, window)
        if level is Level.SOFT_BLOCK and not shadow and grant is not None:
            # an explicit override lets this one blocked call through; the counter stays
            bstate.grant = None
            bstate.record_block()  # it would have blocked: override_rate stays <= 1
            violation = Violation(
                behavior.id,
                behavior.name,
                level,
                counter_before,
                "",
                trigger_index=trigger.index,
                conditions=results,
                overridden="explicit",
            )
            block_record = _decision_record(event, violation, now, identity, behavior.override)
            audit.append(block_record)
            violations.append(violation)

            def unspend(
                b: BehaviorState = bstate,
                g: Any = grant,
                r: Any = block_record,
                v: Violation = violation,
            ) -> None:
                b.grant = g
                b.data["blocks"] = b.blocks - 1
                _remove(audit, r)
                _remove(violations, v)

            reason = str(grant.get("reason", ""))
            basis = str(grant.get("grant_id") or repr(grant.get("at")))
            tentative.append(
                grant_override(
                    bstate,
                    behavior.id,
                    counter_before,
                    "explicit",
                    reason,
                    basis,
                    ("grant",),
                    unspend,
                )
            )
            continue
        bstate.counter = counter
        bstate.effective_level = level
        bstate.record_violation(now, event.tool_name)
        message = _message(
            behavior, level, counter, event, settings, event.session_id, facts, state.totals
        )
        violation = Violation(
            behavior.id,
            behavior.name,
            level,
            counter,
            message,
            trigger_index=trigger.index,
            conditions=results,
            shadow=shadow,
        )
        if (
            level is Level.SOFT_BLOCK
            and behavior.override == "user"
            and not shadow
            and event.permission_mode == "bypassPermissions"
        ):
            # the user asked not to be prompted: ask becomes allow, on the record
            violation.overridden = "user"
            bstate.record_block()
            audit.append(_decision_record(event, violation, now, identity, behavior.override))
            reason = "permission_mode bypassPermissions"
            grant_override(bstate, behavior.id, counter, "user", reason, repr(now), ())
            shown.append(
                f"{message}\n(Allowed without asking: permission_mode is bypassPermissions.)"
            )
            violations.append(violation)
            continue
        violations.append(violation)
        if settings.record_violations or (level.blocks and not shadow):
            audit.append(_decision_record(event, violation, now, identity, behavior.override))
        if shadow:
            continue
        if level.blocks:
            bstate.record_block()
            if level is Level.SOFT_BLOCK:
                bstate.pending_block = {
                    "call_hash": identity,
                    "at": now,
                    "event": event.event_name,
                    "tool_name": event.tool_name,
                    "tool_use_id": event.tool_use_id,
                    "counter": counter,
                    "mode": behavior.override,
                }
            else:  # hard_block: nothing is left to override
                bstate.pending_block = None
                bstate.grant = None
            blocking = violation
            break  # SPEC §3.6: the first block cuts the chain
        if level > Level.SILENT:
            shown.append(message)

    if blocking is not None and tentative:
        for withdraw in reversed(tentative):
            withdraw()
        if trace is not None:
            trace.append({"withdrawn": len(tentative), "by": blocking.behavior_id})

    messages = ([blocking.message] if blocking is not None else []) + shown
    decision = Decision(
        event,
        violations,
        messages,
        blocking=blocking,
        overrides=overrides,
        diagnostics=facts.diagnostics,
    )
    return Outcome(decision, audit, trace or [])


def _live_grant(bstate: BehaviorState, now: float, window: float) -> dict[str, Any] | None:
    grant = bstate.grant
    if grant is not None and 0 <= now - float(grant.get("at", 0)) <= window:
        return grant
    return None


def _remove(items: list[Any], item: object) -> None:
    """Remove one element by identity (records can be equal without being the same)."""
    for index, candidate in enumerate(items):
        if candidate is item:
            del items[index]
            return


def _decision_record(
    event: Event, violation: Violation, now: float, identity: str, override_mode: str
) -> dict[str, Any]:
    """A block or violation record; carries what a lost pending block needs to be restored."""
    from forge_policy._time import iso
    from forge_policy.secrets import summarize

    kind = "block" if violation.level.blocks and not violation.shadow else "violation"
    record: dict[str, Any] = {
        "kind": kind,
        "timestamp": iso(now),
        "session_id": event.session_id,
        "behavior_id": violation.behavior_id,
        "level": violation.level.label,
        "counter": violation.counter,
        "tool_name": event.tool_name,
        "event": event.event_name,
        "input_summary": summarize(event.tool_name, event.tool_input),
        "shadow": violation.shadow,
        "call_hash": identity,
        "override_mode": override_mode,
        "tool_use_id": event.tool_use_id,
    }
    if violation.overridden:
        record["overridden"] = violation.overridden
    return record


class Evaluator:
    """Evaluates events against a catalog, keeping per-session state in a store.

    >>> import forge_policy as fp
    >>> ev = fp.Evaluator(fp.builtin_catalog(), clock=lambda: 1000.0)
    >>> d = ev.evaluate(fp.Event("PreToolUse", "s1", tool_name="Bash",
    ...                          tool_input={"command": "git push --force"}))
    >>> d.outcome, d.blocked, d.override_allowed
    ('hard_block', True, False)
    """

    def __init__(
        self,
        catalog: Catalog,
        *,
        store: RuntimeStore | None = None,
        audit: AuditSink | None = None,
        clock: Callable[[], float] = time.time,
        profile: str = DEFAULT_PROFILE,
        ttl: float = DEFAULT_TTL,
        override_window: float = DEFAULT_WINDOW,
        facts: Mapping[str, FactProvider] | None = None,
        record_violations: bool = False,
    ) -> None:
        if store is None:
            from forge_policy.stores.memory import MemoryStore

            store = MemoryStore()
        if audit is None:
            from forge_policy.audit.memory import MemoryAuditSink

            audit = MemoryAuditSink()
        self.catalog = catalog
        self.store = store
        self.audit = audit
        self.clock = clock
        self.settings = Settings(
            ttl=ttl,
            override_window=override_window,
            profile=profile,
            record_violations=record_violations,
        )
        from forge_policy.facts import FactRegistry

        # the built-in providers (SPEC §6), overridden by name by the caller's own
        registry = FactRegistry.with_builtins()
        for name, provider in (facts or {}).items():
            registry.register(name, provider)
        self.facts: Mapping[str, FactProvider] = registry

    def _expired(self, state: SessionState, now: float) -> bool:
        return state.expired(now, self.settings.ttl)

    def _fresh_or_current(self, current: SessionState | None, now: float) -> SessionState:
        if current is None or self._expired(current, now):
            return SessionState.new(now)
        return current.copy()

    def evaluate(self, event: Event) -> Decision:
        """Decide one event and record its effects in one store transaction."""
        now = self.clock()
        facts = FactCache(event, self.facts)
        audited: list[Outcome] = []

        def apply(current: SessionState | None) -> tuple[Outcome, SessionState | None]:
            state = self._fresh_or_current(current, now)
            outcome = decide(self.catalog, event, state, now, self.settings, facts)
            if outcome.decision.overrides and current is not None:
                # a crash between an earlier audit write and its state write must not let one
                # block be overridden twice: bring the state up to the log, then decide again
                reconciled = self._fresh_or_current(current, now)
                # an override consumes a block or grant of the last window: only records of
                # that period can be missing from the state (with a margin for append delays)
                since = now - self.settings.override_window - RECONCILE_MARGIN
                self._reconcile(reconciled, event.session_id, since)
                if reconciled.data != current.data:  # a lost override or block was replayed
                    state = reconciled
                    outcome = decide(
                        self.catalog, event, state, now, self.settings, FactCache(event, self.facts)
                    )
            if current is None or self._expired(current, now):
                changed = bool(state.flags or state.totals or state.behavior_ids())
            else:
                changed = state.data != current.data or (
                    now - current.last_accessed_at >= self.settings.touch_interval
                )
            if not changed:
                return outcome, None  # the allow path writes nothing
            state.touch(now)
            if outcome.audit:
                self.audit.append_many(outcome.audit)  # audit first: the source of truth
                audited.append(outcome)
            return outcome, state

        try:
            outcome = self.store.transact(event.session_id, apply)
        except (StoreError, AuditError, OSError) as exc:
            if audited:
                # the log already holds this decision; answering differently would contradict it
                decision = audited[-1].decision
                decision.diagnostics += (
                    f"session state not written ({type(exc).__name__}: {exc}); the audit log "
                    "holds this decision and the state is reconciled from it",
                )
                return decision
            return self._stateless(event, now, exc)
        return outcome.decision

    def _reconcile(
        self, state: SessionState, session_id: str, since: float | None = None
    ) -> list[str]:
        from forge_policy.audit.insights import recent_session_records, session_records
        from forge_policy.engine.reconcile import reconcile_session

        if since is None:
            return reconcile_session(state, session_records(self.audit, session_id))
        return reconcile_session(state, recent_session_records(self.audit, session_id, since))

    def reconcile(self, session_id: str) -> list[str]:
        """Bring a session's state up to the audit log (SPEC §4 triple write); idempotent.

        Returns the override ids that were missing from the state.
        """

        def apply(current: SessionState | None) -> tuple[list[str], SessionState | None]:
            if current is None:
                return [], None
            state = current.copy()
            added = self._reconcile(state, session_id)
            return added, (state if state.data != current.data else None)

        return self.store.transact(session_id, apply)

    def _stateless(self, event: Event, now: float, error: Exception) -> Decision:
        """SPEC §9: decide from ``default_level`` without state; blocks still block."""
        facts = FactCache(event, self.facts)
        facts.diagnostics.append(
            f"session state unavailable ({type(error).__name__}: {error}); decided statelessly "
            "from default levels"
        )
        outcome = decide(self.catalog, event, SessionState.new(now), now, self.settings, facts)
        return outcome.decision

    def explain(self, event: Event) -> ExplainReport:
        """A dry run: every behavior, trigger and condition with its result. Changes nothing.

        >>> import forge_policy as fp
        >>> ev = fp.Evaluator(fp.builtin_catalog())
        >>> report = ev.explain(fp.Event("PreToolUse", "s1", tool_name="Bash",
        ...                              tool_input={"command": "git reset --hard"}))
        >>> report.decision.outcome, ev.status("s1").exists
        ('hard_block', False)
        """
        from forge_policy.engine.reports import explain_report

        now = self.clock()
        facts = FactCache(event, self.facts)
        state = self._fresh_or_current(self.store.load(event.session_id), now)
        outcome = decide(self.catalog, event, state, now, self.settings, facts, explain=True)
        return explain_report(self.catalog, outcome.decision, outcome.trace)

    def override(self, session_id: str, behavior_id: str, *, reason: str = "") -> Grant:
        """Grant a one-shot pass for the next soft-blocked call of a behavior (SPEC §4, explicit).

        The grant is valid for the override window. If a blocked call of this behavior is waiting
        for its retry, the grant is spent on that retry (one block, one pass); otherwise on the
        next call that would be soft-blocked. The override is recorded (audit first, then state)
        when the call goes through. Refused (``ValueError``) for a behavior that can never be
        overridden: one that hard-blocks by default, has reached hard_block in this session, or
        never reaches soft_block.

        >>> import forge_policy as fp
        >>> ev = fp.Evaluator(fp.builtin_catalog(), clock=lambda: 0.0)
        >>> grant = ev.override("s1", "search-first", reason="user approved")
        >>> grant.behavior_id, grant.valid_until
        ('search-first', '1970-01-01T00:01:00.000000+00:00')
        """
        import os

        from forge_policy._time import iso

        behavior = self.catalog.get(behavior_id)
        if behavior is None:
            raise KeyError(f"unknown behavior {behavior_id!r}")
        if behavior.default_level is Level.HARD_BLOCK:
            raise ValueError(f"{behavior_id} is a hard_block behavior: it has no override")
        reachable = max([behavior.default_level, *(s.level for s in behavior.escalation)])
        if reachable < Level.SOFT_BLOCK:
            raise ValueError(
                f"{behavior_id} never blocks (it reaches {reachable.label} at most): "
                "there is nothing to override"
            )
        now = self.clock()
        granted_at, grant_id = iso(now), os.urandom(8).hex()
        grant = {"at": now, "reason": reason, "granted_at": granted_at, "grant_id": grant_id}

        def apply(current: SessionState | None) -> tuple[None, SessionState]:
            state = self._fresh_or_current(current, now)
            bstate = state.behavior(behavior_id)
            if bstate.effective_level is Level.HARD_BLOCK:
                raise ValueError(
                    f"{behavior_id} has reached hard_block in session {session_id}: "
                    "it has no override"
                )
            bstate.grant = grant
            state.touch(now)
            return None, state

        self.store.transact(session_id, apply)
        from forge_policy.engine.reports import Grant

        return Grant(
            grant_id=grant_id,
            session_id=session_id,
            behavior_id=behavior_id,
            reason=reason,
            granted_at=granted_at,
            valid_until=iso(now + self.settings.override_window),
        )

    def status(self, session_id: str) -> Status:
        """Counters, levels, next thresholds, pending blocks and overrides of one session
        (an expired session has no live state).

        >>> import forge_policy as fp
        >>> ev = fp.Evaluator(fp.builtin_catalog())
        >>> _ = ev.evaluate(fp.Event("PreToolUse", "s1", tool_name="Bash",
        ...                          tool_input={"command": "git push --force"}))
        >>> row = ev.status("s1").behaviors["no-destructive-git"]
        >>> row.counter, row.level.label, row.blocks
        (1, 'hard_block', 1)
        """
        from forge_policy.engine.reports import status_of

        state = self.store.load(session_id)
        if state is not None and self._expired(state, self.clock()):
            state = None
        return status_of(self.catalog, session_id, state)
