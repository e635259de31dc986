"""Operations on a configured project, one function per ``forge-policy`` command that is not a
plain :class:`~forge_policy.Evaluator` call: status of every live session, per-session on/off,
the governance summary (project-scoped on/off and strict/relaxed: :mod:`forge_policy.ops.toggles`).

Per-session on/off lives in the session document as ``"disabled": [ids]`` (sorted, no
duplicates); the evaluator skips those behaviors for that session only. Switching a behavior off
for a session is a bypass, so it is recorded in the audit log (``kind: "bypass"``, ``scope:
"session"``) before the state is written, like every other audited change.
"""

from __future__ import annotations

from forge_policy.audit import records
from forge_policy.audit.base import write
from forge_policy.errors import Refused, StoreError
from forge_policy.state import DISABLED_KEY

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.audit.verify import VerifyReport
    from forge_policy.catalog.behavior import Behavior
    from forge_policy.catalog.catalog import Catalog
    from forge_policy.engine.evaluator import Evaluator
    from forge_policy.reports.insights import GovernanceSummary
    from forge_policy.reports.status import Status
    from forge_policy.state import SessionState


def find_behavior(catalog: Catalog, behavior_id: str) -> Behavior:
    """The behavior with this id, or :class:`Refused` with a did-you-mean suggestion.

    >>> import forge_policy as fp
    >>> find_behavior(fp.builtin_catalog(), "search-frist")
    Traceback (most recent call last):
    ...
    forge_policy.errors.Refused: unknown behavior 'search-frist' (did you mean 'search-first'?)
    """
    behavior = catalog.get(behavior_id)
    if behavior is not None:
        return behavior
    from forge_policy.ops.toggles import suggest

    raise Refused(f"unknown behavior {behavior_id!r}{suggest(behavior_id, catalog.ids)}")


def session_disabled(state: SessionState | None) -> list[str]:
    """The ids switched off for one session (``forge-policy off ID --session SID``)."""
    value = state.data.get(DISABLED_KEY) if state is not None else None
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def status(evaluator: Evaluator, session_id: str | None = None) -> list[Status]:
    """:meth:`Evaluator.status` of one session, or of every live (unexpired) session; each
    carries the session's own on/off, its explicit override grants and its activity times.

    >>> import forge_policy as fp
    >>> ev = fp.Evaluator(fp.builtin_catalog())
    >>> status(ev), [s.exists for s in status(ev, "s1")]
    ([], [False])
    """
    if session_id is not None:
        return [evaluator.status(session_id)]
    reports = (evaluator.status(sid) for sid in evaluator.store.session_ids())
    return [report for report in reports if report.exists]  # expired: waiting for a purge


def set_session_enabled(
    evaluator: Evaluator, session_id: str, behavior_id: str, enabled: bool
) -> bool:
    """Switch a behavior on or off for one session; returns whether anything changed.

    Refused for an unknown id, for switching off a ``bypass: never`` behavior, and for
    switching on a behavior the project has off (that is ``on ID --project``).
    """
    behavior = find_behavior(evaluator.catalog, behavior_id)
    if not enabled and behavior.bypass == "never":
        raise Refused(f"{behavior_id} is marked bypass: never: it cannot be switched off")
    if enabled and not behavior.enabled:
        raise Refused(
            f"{behavior_id} is off for the whole project (index.yaml or FORGE_DISABLE); "
            f"switch it on with: forge-policy on {behavior_id} --project"
        )
    now = evaluator.clock()

    def apply(current: SessionState | None) -> tuple[bool, SessionState | None]:
        from forge_policy._time import iso
        from forge_policy.engine.effects import SetSessionDisabled, apply_effects
        from forge_policy.state import SessionState

        if current is None or current.expired(now, evaluator.settings.ttl):
            state = SessionState.new(now)
        else:
            state = current.copy()
        ids = session_disabled(state)
        if (behavior_id not in ids) == enabled:
            return False, None
        ids = sorted({*ids, behavior_id} - ({behavior_id} if enabled else set()))
        apply_effects(state, [SetSessionDisabled(tuple(ids))])
        state.touch(now)
        switch = records.BypassSwitch(
            timestamp=iso(now),
            session_id=session_id,
            behavior_id=behavior_id,
            scope="session",
            enabled=enabled,
            variable="forge-policy " + ("on" if enabled else "off"),
        )
        write(evaluator.audit, [records.to_dict(switch)])
        return True, state

    return evaluator.store.transact(session_id, apply)


def governance(evaluator: Evaluator) -> GovernanceSummary:
    """The governance summary of ``forge-policy audit``: per behavior installed/enabled,
    violations, blocks, overrides, override rate and band (see
    :func:`forge_policy.audit.insights.summarize`).

    Violations that never blocked leave no audit record unless violations are recorded, so each
    live session's counters are folded in: per session and behavior, the larger of the audited
    and the stored count.

    >>> import forge_policy as fp
    >>> summary = governance(fp.Evaluator(fp.builtin_catalog()))
    >>> summary.installed == len(fp.builtin_catalog()), summary.totals.band
    (True, None)
    """
    import attrs

    from forge_policy.audit.insights import summarize

    catalog = evaluator.catalog
    summary = summarize(evaluator.audit.records(), catalog.ids)
    unaudited: dict[str, int] = {}
    now = evaluator.clock()
    for sid in evaluator.store.session_ids():
        state = evaluator.store.load(sid)
        if state is None or state.expired(now, evaluator.settings.ttl):
            continue
        audited = summary.sessions.get(sid, {})
        for behavior_id in state.behavior_ids():
            counter = state.behavior(behavior_id).counter
            tally = audited.get(behavior_id)
            seen = tally.violations if tally is not None else 0
            if counter > seen and behavior_id in summary.behaviors:
                unaudited[behavior_id] = unaudited.get(behavior_id, 0) + counter - seen
    behaviors = {}
    for behavior_id, insight in summary.behaviors.items():
        behavior = catalog.get(behavior_id)
        behaviors[behavior_id] = attrs.evolve(
            insight,
            violations=insight.violations + unaudited.get(behavior_id, 0),
            installed=behavior is not None,
            enabled=bool(behavior and behavior.enabled),
            category=behavior.category if behavior else None,
        )
    # the folded-in counters change violations only: blocks, overrides and the rate stand
    totals = attrs.evolve(summary.totals, violations=sum(b.violations for b in behaviors.values()))
    return attrs.evolve(
        summary,
        behaviors=behaviors,
        totals=totals,
        installed=len(catalog),
        enabled=tuple(b.id for b in catalog.behaviors if b.enabled),
    )


def verify_audit(evaluator: Evaluator) -> VerifyReport:
    """Check the audit log's hash chain, and that it still holds every line a session's state
    saw written (its checkpoint); :class:`Refused` when the sink keeps no chain."""
    from forge_policy.audit.base import checkpointed, verifier

    checked = verifier(evaluator.audit)
    if checked is None:
        raise Refused(f"the audit sink {evaluator.audit!r} has no hash chain to verify")
    anchored = checkpointed(evaluator.audit)
    if anchored is None:
        return checked.verify()
    return anchored.verify(audit_checkpoints(evaluator))


def audit_checkpoints(evaluator: Evaluator) -> list[tuple[str, int, str]]:
    """``(session id, seq, line hash)`` of every stored session that has a checkpoint; a
    session whose state cannot be read is skipped (``status`` reports it)."""
    found: list[tuple[str, int, str]] = []
    try:
        session_ids = evaluator.store.session_ids()
    except (StoreError, OSError):
        return found
    for session_id in session_ids:
        try:
            state = evaluator.store.load(session_id)
        except (StoreError, OSError):
            continue
        checkpoint = state.audit_checkpoint if state is not None else None
        if checkpoint is not None:
            seq, digest, origin = checkpoint
            found += [(session_id, 1, origin), (session_id, seq, digest)]
    return found
