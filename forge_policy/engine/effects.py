"""The changes one event makes, as values: :func:`~forge_policy.engine.decide.decide` returns
them, :func:`apply_effects` writes them into a session state, :func:`audit_records` lists what
goes to the audit log first (SPEC §4 triple write: the log is the source of truth).

Nothing here decides anything; an effect is applied exactly as it was decided.

The effect classes are this module's names, each defined on first use (issue 28: a hook call
builds only the attrs classes it uses, an allow that changes nothing none): a session's flags
and totals in :mod:`~forge_policy.engine._flag_effects`, a violation and its block in
:mod:`~forge_policy.engine._block_effects`, the rest (replayed from the log, a soft block's
override, subagents, session switches) in :mod:`~forge_policy.engine._more_effects`, and
:class:`Step` in :mod:`~forge_policy.engine._step`. Code that builds them reads them from this
module (``effects.SetFlag``), which loads their module then; their base classes are here.

>>> from forge_policy.engine.effects import CountViolation, SetFlag
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

from forge_policy._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any, TypeAlias

    from forge_policy.engine._block_effects import (
        AgentTally,
        Audit,
        CountBlock,
        CountViolation,
        SetGrant,
        SetPendingBlock,
    )
    from forge_policy.engine._flag_effects import SetFlag, SetTotal
    from forge_policy.engine._more_effects import (
        AddOverride,
        CountAgent,
        NoteAgent,
        NoteBlockedCall,
        SetCounter,
        SetLevel,
        SetSessionDisabled,
    )
    from forge_policy.engine._step import Step
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

_FLAGS = "forge_policy.engine._flag_effects"
_BLOCKS = "forge_policy.engine._block_effects"
_MORE = "forge_policy.engine._more_effects"
#: Each effect class and the module that defines it (loaded on first use, then cached here).
_CLASSES = {
    "Step": "forge_policy.engine._step",
    "SetFlag": _FLAGS,
    "SetTotal": _FLAGS,
    "AgentTally": _BLOCKS,
    "CountViolation": _BLOCKS,
    "CountBlock": _BLOCKS,
    "SetPendingBlock": _BLOCKS,
    "SetGrant": _BLOCKS,
    "Audit": _BLOCKS,
    "SetCounter": _MORE,
    "SetLevel": _MORE,
    "NoteBlockedCall": _MORE,
    "AddOverride": _MORE,
    "CountAgent": _MORE,
    "NoteAgent": _MORE,
    "SetSessionDisabled": _MORE,
}
__getattr__, __dir__ = lazy_exports(__name__, _CLASSES, __all__, globals())


class _Effect:
    """What every effect shares: attrs' repr, written once (generating one per class is most
    of the cost of defining it, which every hook call pays)."""

    __slots__ = ()

    def __repr__(self) -> str:
        values = ", ".join(
            f"{field.name}={getattr(self, field.name)!r}"
            for field in attrs.fields(type(self))  # type: ignore[arg-type]
            if field.repr
        )
        return f"{type(self).__name__}({values})"


class _Recorded(_Effect):
    """An effect whose ``record`` goes to the audit log (``Audit``, ``AddOverride``): what
    :func:`audit_records` tells apart without loading their classes."""

    __slots__ = ()
    record: dict[str, Any]


class _Override(_Recorded):
    """An override (``AddOverride``): what :func:`overrides` tells apart."""

    __slots__ = ()


class _Counted(_Effect):
    """A violation counted (``CountViolation``): what a catch-up
    (:meth:`~forge_policy.engine.session.Base.catch_up`) looks for, without loading its class."""

    __slots__ = ()


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
    """The audit records among ``effects`` (``AddOverride``, ``Audit``), in order."""
    for effect in effects:
        if isinstance(effect, _Recorded):
            yield effect.record


def overrides(effects: Iterable[Effect]) -> list[dict[str, Any]]:
    """The override records among ``effects`` (``AddOverride``), in order."""
    return [effect.record for effect in effects if isinstance(effect, _Override)]


def apply_effects(state: SessionState, effects: Iterable[Effect]) -> None:
    """Write ``effects`` into ``state``, in order (the store transaction then saves it): the
    one writer of a session document's content."""
    for effect in effects:
        effect.apply(state)
