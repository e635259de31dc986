"""A violation counted (the session's counter and level, the agent's share), audited, and its
block counted with its pending block and grant settled: the effects of a block (SPEC §3, §4).
Reached as ``forge_policy.engine.effects.<Name>``, which imports this module on first use
(issue 28: an allow builds none of them).
"""

from __future__ import annotations

import attrs

from forge_policy.engine.effects import _Counted, _Effect, _Recorded

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.levels import Level
    from forge_policy.state import Grant, PendingBlock, SessionState


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
class CountViolation(_Counted):
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
class Audit(_Recorded):
    """A record for the audit log only (a ``block``, ``violation`` or ``grant``)."""

    record: dict[str, Any] = attrs.field(eq=False)

    def apply(self, state: SessionState) -> None:
        """The log only: nothing in the state."""
