"""What one catalog decided for one event, reduced to what a comparison shows: a
:class:`Verdict` (its :class:`Fired` behaviors), and how two verdicts differ (:func:`changes`).

``replay --against`` compares two catalogs over a transcript with it; the live candidate catalog
(:mod:`forge_policy.engine.candidate`) compares the active decision with the candidate's on every
event, and ``shadow report`` reads the differences back.

>>> import forge_policy as fp
>>> ev = fp.Evaluator(fp.builtin_catalog(), clock=lambda: 1000.0)
>>> push = fp.Event("PreToolUse", "s1", tool_name="Bash", tool_input={"command": "git push -f"})
>>> verdict = Verdict.of(ev.evaluate(push))
>>> verdict.outcome, verdict.blocking, [c.direction for c in changes(Verdict("allow"), verdict)]
('hard_block', 'no-destructive-git', ['would_block'])
"""

from __future__ import annotations

import attrs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.model import Decision

#: How a behavior's verdict moved from the active catalog to the candidate (or from
#: ``--against``'s catalog to ``--catalog``'s): it blocks now, it no longer blocks, or only its
#: level (or whether it fired at all, below a block) changed.
DIRECTIONS = ("would_block", "would_unblock", "level")


@attrs.frozen
class Fired:
    """One behavior's violation on one event: its level, counter, and whether it blocked."""

    behavior_id: str
    level: str
    counter: int
    blocks: bool
    shadow: bool = False
    overridden: str = ""
    #: ``level`` as a person reads it (``ask``: a soft block the user approves)
    level_shown: str = ""

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        return attrs.asdict(self)


@attrs.frozen
class Verdict:
    """What one catalog decided for one event (a decision, reduced to what a report shows)."""

    outcome: str
    blocking: str | None = None
    fired: tuple[Fired, ...] = ()
    overrides: tuple[str, ...] = ()  # "<behavior> <mechanism>": a block let through (SPEC §4)
    error: str = ""
    #: ``outcome`` as a person reads it: ``ask`` when the block is one the user approves
    outcome_shown: str = ""

    @classmethod
    def of(cls, decision: Decision) -> Verdict:
        """The verdict of an engine decision."""
        from forge_policy.levels import shown_level

        fired = tuple(
            Fired(
                v.behavior_id,
                v.level.label,
                v.counter,
                v.blocks,
                v.shadow,
                v.overridden,
                shown_level(v.level, v.override_mode),
            )
            for v in decision.violations
        )
        blocker = decision.blocking
        blocking = blocker.behavior_id if blocker else None
        overrides = tuple(
            f"{o.get('behavior_id', '')} {o.get('mechanism', '')}".strip()
            for o in decision.overrides
        )
        shown = shown_level(decision.outcome, blocker.override_mode if blocker else "agent")
        return cls(decision.outcome, blocking, fired, overrides, outcome_shown=shown)

    @property
    def blocked(self) -> bool:
        """Whether the call would have been refused."""
        return self.outcome in ("soft_block", "hard_block")

    def key(self) -> tuple[object, ...]:
        """What two catalogs must agree on: outcome, blocker, each behavior's level, the
        overrides used."""
        levels = sorted((f.behavior_id, f.level) for f in self.fired)
        return (self.outcome, self.blocking, levels, sorted(self.overrides))

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        out: dict[str, object] = {
            "outcome": self.outcome,
            "blocking": self.blocking,
            "fired": [f.to_dict() for f in self.fired],
            "overrides": list(self.overrides),
            "outcome_shown": self.outcome_shown or self.outcome,
        }
        if self.error:
            out["error"] = self.error
        return out


@attrs.frozen
class Change:
    """One behavior decided differently by two verdicts: its level under each (``""``: it did
    not fire) and the :data:`DIRECTIONS` entry that names the move."""

    behavior_id: str
    direction: str
    before: str
    after: str
    counter: int

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        return attrs.asdict(self)


def direction(before: Verdict, after: Verdict) -> str:
    """How the event's outcome moved: ``would_block``, ``would_unblock`` or ``level``.

    >>> direction(Verdict("warning"), Verdict("soft_block"))
    'would_block'
    >>> direction(Verdict("nudge"), Verdict("allow"))
    'level'
    """
    if after.blocked and not before.blocked:
        return "would_block"
    if before.blocked and not after.blocked:
        return "would_unblock"
    return "level"


def changes(before: Verdict, after: Verdict) -> list[Change]:
    """Every behavior whose level or blocking differs between ``before`` and ``after``, by
    id; empty when the two agree on everything :meth:`Verdict.key` compares."""
    if before.key() == after.key():
        return []
    old = {f.behavior_id: f for f in before.fired}
    new = {f.behavior_id: f for f in after.fired}
    found = []
    for behavior_id in sorted(old.keys() | new.keys()):
        a, b = old.get(behavior_id), new.get(behavior_id)
        a_blocks = a is not None and a.blocks and not a.overridden
        b_blocks = b is not None and b.blocks and not b.overridden
        a_level = a.level if a is not None else ""
        b_level = b.level if b is not None else ""
        if a_level == b_level and a_blocks == b_blocks:
            continue
        if b_blocks and not a_blocks:
            move = "would_block"
        elif a_blocks and not b_blocks:
            move = "would_unblock"
        else:
            move = "level"
        counter = b.counter if b is not None else (a.counter if a is not None else 0)
        found.append(Change(behavior_id, move, a_level, b_level, counter))
    return found
