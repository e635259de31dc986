"""A session's flags and totals changed (SPEC §5 ``set_flag``, ``check_flag``, totals): the
effects of an ordinary call that sets or consumes a flag. Reached as
``forge_policy.engine.effects.<Name>``, which imports this module on first use (issue 28: an
allow that changes nothing builds no effect class).
"""

from __future__ import annotations

import attrs

from forge_policy.engine.effects import _Effect

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.state import SessionState


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
