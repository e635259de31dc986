"""Enforcement levels and escalation arithmetic (SPEC §2, §3.3, §3.4, §3.10).

Pure functions only: nothing here reads a clock, a file or a store.
"""

from __future__ import annotations

from enum import IntEnum

# attrs is accepted on the evaluation path; ``import forge_policy`` alone never reaches this module
import attrs

TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Sequence


class Level(IntEnum):
    """The closed, ordered set of enforcement levels.

    >>> Level.NUDGE < Level.SOFT_BLOCK
    True
    >>> Level.parse("hard_block").blocks
    True
    """

    SILENT = 0
    NUDGE = 1
    WARNING = 2
    SOFT_BLOCK = 3
    HARD_BLOCK = 4

    @property
    def label(self) -> str:
        """The YAML spelling, e.g. ``"soft_block"``."""
        return _LABEL_OF[self]  # an enum's ``name`` is a descriptor call; a block asks twice

    @property
    def blocks(self) -> bool:
        """Whether a violation at this level refuses the call."""
        return self >= Level.SOFT_BLOCK

    @classmethod
    def parse(cls, text: str) -> Level:
        """Parse the YAML spelling; raise :class:`~forge_policy.errors.InvalidArgument` (a
        ``ValueError``) for anything else."""
        level = _BY_LABEL.get(text) if isinstance(text, str) else None
        if level is None:
            from forge_policy.errors import InvalidArgument

            raise InvalidArgument(f"unknown level {text!r}: expected {', '.join(_BY_LABEL)}")
        return level

    def __str__(self) -> str:
        return self.label


_BY_LABEL = {level.name.lower(): level for level in Level}
_LABEL_OF = {level: label for label, level in _BY_LABEL.items()}
LEVEL_NAMES: tuple[str, ...] = tuple(_BY_LABEL)
#: the word a person reads for a soft block that the user approves (``override: user``): it is
#: no level of its own (SPEC §2), only how ``status``, ``list``, ``replay`` and ``audit`` show it
ASK = "ask"


def shown_level(level: Level | str, override: str = "agent") -> str:
    """The level as a person reads it: ``ask`` for a soft block of an ``override: user``
    behavior (the user is asked, or under a harness that cannot ask, must approve), the YAML
    spelling otherwise. Display only: JSON keeps the level and adds this word beside it.

    >>> shown_level(Level.SOFT_BLOCK, "user"), shown_level("soft_block")
    ('ask', 'soft_block')
    >>> shown_level("nudge", "user")
    'nudge'
    """
    label = level.label if isinstance(level, Level) else level
    return ASK if label == "soft_block" and override == "user" else label


def first_level(default_level: Level, escalation: Sequence[Step]) -> Level:
    """The level of a behavior's first violation in a session (what it does by default: a
    ``silent`` default with an ``after: 1`` step nudges from the first).

    >>> first_level(Level.SILENT, [Step(1, Level.NUDGE), Step(3, Level.WARNING)]).label
    'nudge'
    """
    return resolve(1, default_level, escalation)


@attrs.frozen(repr=False)
class Step:
    """One escalation entry: from ``after`` violations on, at least ``level``.

    A frozen attrs value: equal and hashable by ``(after, level)``.

    >>> Step(3, Level.WARNING) == Step(after=3, level=Level.WARNING)
    True
    >>> Step(3, Level.WARNING)
    Step(after=3, level=warning)
    """

    after: int
    level: Level

    def __repr__(self) -> str:
        return f"Step(after={self.after}, level={self.level.label})"


def resolve(counter: int, default_level: Level, escalation: Sequence[Step]) -> Level:
    """SPEC §3.3: the level of the entry with the largest ``after`` <= counter, else the default.

    >>> steps = [Step(1, Level.NUDGE), Step(3, Level.WARNING), Step(5, Level.SOFT_BLOCK)]
    >>> [resolve(n, Level.SILENT, steps).label for n in (0, 1, 2, 3, 5, 9)]
    ['silent', 'nudge', 'nudge', 'warning', 'soft_block', 'soft_block']
    """
    level = default_level
    for step in escalation:  # validated strictly increasing, so the last match wins
        if step.after <= counter:
            level = step.level
        else:
            break
    return level


def escalate(
    previous: Level | None, counter: int, default_level: Level, escalation: Sequence[Step]
) -> Level:
    """SPEC §3.4: the effective level only rises within a session.

    ``previous`` is ``None`` before the behavior's first violation in the session, so the first
    violation starts from ``default_level`` (never from silent).
    """
    level = resolve(counter, default_level, escalation)
    return level if previous is None or level >= previous else previous


def next_threshold(counter: int, escalation: Sequence[Step]) -> int | None:
    """The next escalation ``after`` above ``counter`` (the ``{threshold}`` variable), or None."""
    for step in escalation:
        if step.after > counter:
            return step.after
    return None


def escalation_problems(
    default_level: Level, escalation: Sequence[Step]
) -> list[tuple[int, str, str]]:
    """SPEC §3.10: every problem as ``(entry index, field, message)``; empty when valid.

    >>> escalation_problems(Level.NUDGE, [Step(3, Level.WARNING), Step(3, Level.SILENT)])[0]
    (1, 'level', "level 'silent' is below default_level 'nudge'")
    """
    problems: list[tuple[int, str, str]] = []
    previous: Step | None = None
    for index, step in enumerate(escalation):
        if step.after < 1:
            problems.append((index, "after", f"must be at least 1, got {step.after}"))
        if step.level < default_level:
            problems.append(
                (
                    index,
                    "level",
                    f"level {step.level.label!r} is below default_level {default_level.label!r}",
                )
            )
        if previous is not None:
            if step.after <= previous.after:
                problems.append((index, "after", f"must be greater than {previous.after}"))
            if step.level < previous.level:
                problems.append(
                    (
                        index,
                        "level",
                        f"level {step.level.label!r} is below the previous "
                        f"entry's {previous.level.label!r}",
                    )
                )
        previous = step
    return problems
