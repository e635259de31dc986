"""The effects neither an allow nor a hard block makes (issue 28's cold path builds only the
attrs classes it uses): a counter, a level and an agent's share replayed from the audit log
(:mod:`~forge_policy.engine.reconcile`), a soft block's call noted and its override, a subagent
noted, a session's switches. Reached as ``forge_policy.engine.effects.<Name>``, which imports
this module on first use.
"""

from __future__ import annotations

import attrs

from forge_policy.engine.effects import _Effect, _Override
from forge_policy.state import DISABLED_KEY

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.engine.effects import AgentTally
    from forge_policy.levels import Level
    from forge_policy.state import SessionState


@attrs.frozen(repr=False)
class CountAgent(_Effect):
    """An agent's share of a behavior becomes ``tally`` (replayed from the audit log:
    :mod:`~forge_policy.engine.reconcile`), with one more block when ``blocked``."""

    behavior_id: str
    tally: AgentTally
    blocked: bool = False

    def apply(self, state: SessionState) -> None:
        self.tally.apply(state, self.behavior_id, blocked=self.blocked)


@attrs.frozen(repr=False)
class NoteAgent(_Effect):
    """A subagent announced itself (``SubagentStart``) or ended (``SubagentStop``): the
    session remembers its type (:meth:`~forge_policy.state.SessionState.note_agent`)."""

    agent_id: str
    agent_type: str
    started: str = ""
    stopped: str = ""

    def apply(self, state: SessionState) -> None:
        state.note_agent(self.agent_id, self.agent_type, started=self.started, stopped=self.stopped)


@attrs.frozen(repr=False)
class SetSessionDisabled(_Effect):
    """The behaviors switched off for this session only become ``ids`` (``forge-policy
    off ID --session``; :attr:`~forge_policy.state.SessionState.disabled`)."""

    ids: tuple[str, ...]

    def apply(self, state: SessionState) -> None:
        state.data[DISABLED_KEY] = sorted(self.ids)


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
class AddOverride(_Override):
    """An override: ``record`` goes to the audit log, and (without its ``kind``) to the
    behavior's ``overrides[]`` (:meth:`~forge_policy.state.BehaviorState.add_override`)."""

    behavior_id: str
    record: dict[str, Any] = attrs.field(eq=False)

    def apply(self, state: SessionState) -> None:
        state.behavior(self.behavior_id).add_override(self.record)
