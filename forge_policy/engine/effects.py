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

from typing import Any

import attrs

from forge_policy.engine._effect_base import _Effect
from forge_policy.state import Grant, PendingBlock

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import TypeAlias

    from forge_policy.engine._more_effects import (
        CountAgent,
        NoteAgent,
        SetSessionDisabled,
    )
    from forge_policy.levels import Level
    from forge_policy.model import Violation
    from forge_policy.state import SessionState

__all__ = [
    "AddOverride",
    "AgentTally",
    "Audit",
    "CountAgent",
    "CountBlock",
    "CountViolation",
    "NoteAgent",
    "NoteBlockedCall",
    "SetCounter",
    "SetFlag",
    "SetGrant",
    "SetLevel",
    "SetPendingBlock",
    "SetSessionDisabled",
    "SetTotal",
    "Step",
    "apply_effects",
    "audit_records",
    "overrides",
]

#: The effects of :mod:`forge_policy.engine._more_effects` (log replay, subagents, session
#: switches), defined on first use: a hook decision builds only the classes it uses.
_MORE = frozenset({"CountAgent", "NoteAgent", "SetSessionDisabled"})


def __getattr__(name: str) -> Any:
    if name in _MORE:
        from forge_policy.engine import _more_effects

        return getattr(_more_effects, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@attrs.frozen(repr=False)
class SetFlag(_Effect):
    """Set (``present``) or consume a session flag (SPEC §5 ``set_flag`` / ``check_flag``)."""

    name: str
    present: bool

    def apply(self, state: SessionState) -> None:
        if self.present:
            state.flags[self.name] = True
        else:
            state.flags.pop(self.name, None)


@attrs.frozen(repr=False)
class SetTotal(_Effect):
    """Set a session total to ``value``, or drop it (``None``: ``reset_total``)."""

    name: str
    value: float | None

    def apply(self, state: SessionState) -> None:
        if self.value is None:
            state.totals.pop(self.name, None)
        else:
            state.totals[self.name] = self.value


@attrs.frozen(repr=False)
class AgentTally(_Effect):
    """One agent's share of a behavior after a violation (issue 27): its ``agent_id``
    (``""``: the root thread), its type, its counter and the level it reached."""

    agent_id: str
    agent_type: str
    counter: int
    level: Level

    def apply(self, state: SessionState, behavior_id: str, *, blocked: bool = False) -> None:
        share = state.behavior(behavior_id).agent(self.agent_id)
        share.counter = self.counter
        share.effective_level = self.level
        if self.agent_type:
            share.type = self.agent_type
        if blocked:
            share.record_block()


@attrs.frozen(repr=False)
class CountViolation(_Effect):
    """SPEC §3.2/§3.4: the behavior's counter becomes ``counter`` and its level ``level``;
    ``agent``: the share of the agent it came from (:class:`AgentTally`)."""

    behavior_id: str
    counter: int
    level: Level
    at: float
    tool_name: str
    agent: AgentTally | None = attrs.field(default=None, kw_only=True)

    def apply(self, state: SessionState) -> None:
        bstate = state.behavior(self.behavior_id)
        bstate.counter = self.counter
        bstate.effective_level = self.level
        bstate.record_violation(self.at, self.tool_name)
        if self.agent is not None:
            self.agent.apply(state, self.behavior_id)


@attrs.frozen(repr=False)
class SetCounter(_Effect):
    """The behavior's counter becomes ``counter`` (a violation replayed from the audit log:
    :mod:`~forge_policy.engine.reconcile`; its time is the log's, not the state's)."""

    behavior_id: str
    counter: int

    def apply(self, state: SessionState) -> None:
        state.behavior(self.behavior_id).counter = self.counter


@attrs.frozen(repr=False)
class SetLevel(_Effect):
    """The behavior's effective level becomes ``level`` (replayed from the log, or the
    fail-closed level of a session decided statelessly, SPEC §9)."""

    behavior_id: str
    level: Level

    def apply(self, state: SessionState) -> None:
        state.behavior(self.behavior_id).effective_level = self.level


@attrs.frozen(repr=False)
class CountBlock(_Effect):
    """A call of the behavior was (or, overridden, would have been) blocked: ``blocks`` + 1,
    and the ``blocks`` of the agent it came from, when ``agent_id`` is given."""

    behavior_id: str
    agent_id: str | None = attrs.field(default=None, kw_only=True)

    def apply(self, state: SessionState) -> None:
        bstate = state.behavior(self.behavior_id)
        bstate.record_block()
        if self.agent_id is not None:
            bstate.agent(self.agent_id).record_block()


@attrs.frozen(repr=False)
class SetPendingBlock(_Effect):
    """The behavior's pending block becomes ``pending`` (``None``: cleared)."""

    behavior_id: str
    pending: PendingBlock | None

    def apply(self, state: SessionState) -> None:
        state.behavior(self.behavior_id).pending_block = self.pending


@attrs.frozen(repr=False)
class SetGrant(_Effect):
    """The behavior's explicit grant becomes ``grant`` (``None``: spent or cleared)."""

    behavior_id: str
    grant: Grant | None

    def apply(self, state: SessionState) -> None:
        state.behavior(self.behavior_id).grant = self.grant


@attrs.frozen(repr=False)
class NoteBlockedCall(_Effect):
    """A soft-blocked call is remembered by its short id (``override --call ID``,
    :meth:`~forge_policy.state.BehaviorState.note_blocked_call`)."""

    behavior_id: str
    call_id: str
    call_hash: str
    summary: str
    tool_name: str
    at: float

    def apply(self, state: SessionState) -> None:
        entry = {
            "call_id": self.call_id,
            "call_hash": self.call_hash,
            "summary": self.summary,
            "tool_name": self.tool_name,
            "at": self.at,
        }
        state.behavior(self.behavior_id).note_blocked_call(entry)


@attrs.frozen(repr=False)
class AddOverride(_Effect):
    """An override: ``record`` goes to the audit log, and (without its ``kind``) to the
    behavior's ``overrides[]`` (:meth:`~forge_policy.state.BehaviorState.add_override`)."""

    behavior_id: str
    record: dict[str, Any] = attrs.field(eq=False)

    def apply(self, state: SessionState) -> None:
        state.behavior(self.behavior_id).add_override(self.record)


@attrs.frozen(repr=False)
class Audit(_Effect):
    """A record for the audit log only (a ``block``, ``violation`` or ``grant``)."""

    record: dict[str, Any] = attrs.field(eq=False)

    def apply(self, state: SessionState) -> None:
        """The log only: nothing in the state."""


if TYPE_CHECKING:
    Effect: TypeAlias = (
        SetFlag
        | SetTotal
        | CountViolation
        | CountAgent
        | NoteAgent
        | SetCounter
        | SetLevel
        | CountBlock
        | SetPendingBlock
        | SetGrant
        | NoteBlockedCall
        | AddOverride
        | SetSessionDisabled
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
    """Write ``effects`` into ``state``, in order (the store transaction then saves it): the
    one writer of a session document's content."""
    for effect in effects:
        effect.apply(state)


@attrs.frozen(repr=False)
class Step(_Effect):
    """What one behavior contributed to a decision: its effects, its violation (if any), the
    message shown for it (non-blocking levels), and whether it is ``tentative``: an override
    that takes effect only if the call goes through (SPEC §4), dropped when the chain blocks."""

    behavior_id: str
    effects: tuple[Effect, ...] = ()
    violation: Violation | None = None
    shown: str = ""
    tentative: bool = False
    trace: dict[str, Any] | None = attrs.field(default=None, eq=False)
