"""The changes one event makes, as values: :func:`~forge_policy.engine.decide.decide` returns
them, :func:`apply_effects` writes them into a session state, :func:`audit_records` lists what
goes to the audit log first (SPEC §4 triple write: the log is the source of truth).

Nothing here decides anything; an effect is applied exactly as it was decided.

>>> from forge_policy.levels import Level
>>> from forge_policy.state import SessionState
>>> state = SessionState.new(0.0)
>>> apply_effects(state, [SetFlag("ready", True),
...                       CountViolation("b", 2, Level.WARNING, 10.0, "Write")])
>>> state.flags, state.behavior("b").counter, state.behavior("b").effective_level
({'ready': True}, 2, <Level.WARNING: 2>)
"""

from __future__ import annotations

import attrs

from forge_policy.levels import Level
from forge_policy.state import Grant, PendingBlock

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any, TypeAlias

    from forge_policy.model import Violation
    from forge_policy.state import SessionState


@attrs.frozen
class SetFlag:
    """Set (``present``) or consume a session flag (SPEC §5 ``set_flag`` / ``check_flag``)."""

    name: str
    present: bool


@attrs.frozen
class SetTotal:
    """Set a session total to ``value``, or drop it (``None``: ``reset_total``)."""

    name: str
    value: float | None


@attrs.frozen
class CountViolation:
    """SPEC §3.2/§3.4: the behavior's counter becomes ``counter`` and its level ``level``."""

    behavior_id: str
    counter: int
    level: Level
    at: float
    tool_name: str


@attrs.frozen
class CountBlock:
    """A call of the behavior was (or, overridden, would have been) blocked: ``blocks`` + 1."""

    behavior_id: str


@attrs.frozen
class SetPendingBlock:
    """The behavior's pending block becomes ``pending`` (``None``: cleared)."""

    behavior_id: str
    pending: PendingBlock | None


@attrs.frozen
class SetGrant:
    """The behavior's explicit grant becomes ``grant`` (``None``: spent or cleared)."""

    behavior_id: str
    grant: Grant | None


@attrs.frozen
class AddOverride:
    """An override: ``record`` goes to the audit log, and (without its ``kind``) to the
    behavior's ``overrides[]`` (:meth:`~forge_policy.state.BehaviorState.add_override`)."""

    behavior_id: str
    record: dict[str, Any] = attrs.field(eq=False)


@attrs.frozen
class Audit:
    """A record for the audit log only (a ``block`` or ``violation``)."""

    record: dict[str, Any] = attrs.field(eq=False)


if TYPE_CHECKING:
    Effect: TypeAlias = (
        SetFlag
        | SetTotal
        | CountViolation
        | CountBlock
        | SetPendingBlock
        | SetGrant
        | AddOverride
        | Audit
    )


def audit_records(effects: Iterable[Effect]) -> Iterator[dict[str, Any]]:
    """The audit records among ``effects``, in order."""
    for effect in effects:
        if isinstance(effect, AddOverride | Audit):
            yield effect.record


def overrides(effects: Iterable[Effect]) -> list[dict[str, Any]]:
    """The override records among ``effects``, in order."""
    return [effect.record for effect in effects if isinstance(effect, AddOverride)]


def apply_effects(state: SessionState, effects: Iterable[Effect]) -> None:
    """Write ``effects`` into ``state``, in order (the store transaction then saves it)."""
    for effect in effects:
        if isinstance(effect, SetFlag):
            if effect.present:
                state.flags[effect.name] = True
            else:
                state.flags.pop(effect.name, None)
        elif isinstance(effect, SetTotal):
            if effect.value is None:
                state.totals.pop(effect.name, None)
            else:
                state.totals[effect.name] = effect.value
        elif isinstance(effect, CountViolation):
            bstate = state.behavior(effect.behavior_id)
            bstate.counter = effect.counter
            bstate.effective_level = effect.level
            bstate.record_violation(effect.at, effect.tool_name)
        elif isinstance(effect, CountBlock):
            state.behavior(effect.behavior_id).record_block()
        elif isinstance(effect, SetPendingBlock):
            state.behavior(effect.behavior_id).pending_block = effect.pending
        elif isinstance(effect, SetGrant):
            state.behavior(effect.behavior_id).grant = effect.grant
        elif isinstance(effect, AddOverride):
            state.behavior(effect.behavior_id).add_override(effect.record)
        # Audit: the log only


@attrs.frozen
class Step:
    """What one behavior contributed to a decision: its effects, its violation (if any), the
    message shown for it (non-blocking levels), and whether it is ``tentative``: an override
    that takes effect only if the call goes through (SPEC §4), dropped when the chain blocks."""

    behavior_id: str
    effects: tuple[Effect, ...] = ()
    violation: Violation | None = None
    shown: str = ""
    tentative: bool = False
    trace: dict[str, Any] | None = attrs.field(default=None, eq=False)
