"""The effects no ordinary hook decision makes (issue 28's cold path builds only the attrs
classes it uses): a subagent's share replayed from the audit log
(:mod:`~forge_policy.engine.reconcile`), a subagent noted, a session's switches. Reached as
``forge_policy.engine.effects.<Name>``, which imports this module on first use.
"""

from __future__ import annotations

import attrs

from forge_policy.engine._effect_base import _Effect
from forge_policy.state import DISABLED_KEY

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.engine.effects import AgentTally
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
