"""One short line on where a session stands, for Claude Code's ``statusLine`` (``forge-policy
statusline``): the highest level reached, the blocks waiting for an override, the counters one
violation short of their next escalation, and the floor.

A pure function of one session's state as the store's read-only view gives it (the caller
reads it with :func:`forge_policy.stores.base.read_only`: nothing is created or written, a
status line runs at most every 300 ms, and an unknown session stays unknown), the catalog and
the floor's state, so that the warm worker and the in-process command print the same line.

>>> import forge_policy as fp
>>> status_line(None, fp.builtin_catalog(), "s1", floor="on")
'forge-policy · no events yet · floor on'
"""

from __future__ import annotations

import attrs

from forge_policy.levels import Level

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.catalog.catalog import Catalog
    from forge_policy.ops.floor_report import HarnessFloor
    from forge_policy.reports.status import Status
    from forge_policy.state import SessionState

#: What a status line prints when it cannot tell anything (bad input, an engine that does not
#: load): neutral, never a traceback, never a claim.
UNKNOWN = "forge-policy: ?"
#: The floor's words: every guarantee held beneath the hook (``on``), some left to the hook
#: alone (``degraded``), none because the project turned it off (``off``) or nothing can hold
#: it here (``none``).
FLOOR_WORDS = ("on", "degraded", "off", "none")
#: At most this many behaviors are named per part; the rest are counted (``+2``).
MAX_NAMED = 2
_SEP = " · "
_RESET = "\x1b[0m"
#: SGR codes by tone: blocks red, asks and near thresholds yellow, a held floor green.
_TONE = {"red": "31", "yellow": "33", "green": "32", "cyan": "36", "dim": "2", "bold": "1"}
_LEVEL_TONE = {
    "hard_block": "red",
    "soft_block": "yellow",
    "ask": "yellow",
    "warning": "yellow",
    "nudge": "cyan",
}
_FLOOR_TONE = {"on": "green", "degraded": "yellow", "off": "red", "none": "red"}


@attrs.frozen
class StatusLine:
    """What the line says, before it is rendered (``to_dict`` for a JSON form).

    ``level`` is the highest level reached as a person reads it (``ask`` for a soft block the
    user approves), None when nothing fired; ``open_blocks`` the behaviors whose block waits for
    an override (SPEC §4); ``near`` ``(behavior, counter, next threshold)`` for each behavior one
    violation short of its next escalation; ``floor`` one of :data:`FLOOR_WORDS` or None.

    >>> StatusLine(True, "ask", ("search-first",), (("risky-commands", 2, 3),), "on").render()
    'forge-policy · ask · open block: search-first · risky-commands 2/3 · floor on'
    """

    live: bool
    level: str | None = None
    open_blocks: tuple[str, ...] = ()
    near: tuple[tuple[str, int, int], ...] = ()
    floor: str | None = None

    def parts(self) -> list[tuple[str, str]]:
        """``(text, tone)`` of each part, in order (tone "" for plain)."""
        out: list[tuple[str, str]] = [("forge-policy", "bold")]
        if not self.live:
            out.append(("no events yet", "dim"))
        elif self.level is None and not self.open_blocks:
            out.append(("quiet", "green"))
        elif self.level is not None:
            out.append((self.level, _LEVEL_TONE.get(self.level, "")))
        if self.open_blocks:
            word = "open block" if len(self.open_blocks) == 1 else "open blocks"
            out.append((f"{word}: {_named(self.open_blocks)}", "red"))
        if self.near:
            shown = [f"{b} {c}/{n}" for b, c, n in self.near]
            out.append((_named(shown), "yellow"))
        if self.floor is not None:
            out.append((f"floor {self.floor}", _FLOOR_TONE.get(self.floor, "")))
        return out

    def render(self, *, color: bool = False) -> str:
        """One line; ``color``: ANSI SGR codes (Claude Code renders them)."""
        if not color:
            return _SEP.join(text for text, _ in self.parts())
        return _SEP.join(_paint(text, tone) for text, tone in self.parts())

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        return {
            "live": self.live,
            "level": self.level,
            "open_blocks": list(self.open_blocks),
            "near": [{"behavior": b, "counter": c, "next": n} for b, c, n in self.near],
            "floor": self.floor,
        }


def _named(items: tuple[str, ...] | list[str]) -> str:
    named = ", ".join(items[:MAX_NAMED])
    return named + (f" +{len(items) - MAX_NAMED}" if len(items) > MAX_NAMED else "")


def _paint(text: str, tone: str) -> str:
    code = _TONE.get(tone)
    return f"\x1b[{code}m{text}{_RESET}" if code else text


def summarize(status: Status, *, floor: str | None) -> StatusLine:
    """The :class:`StatusLine` of one session's :class:`~forge_policy.reports.status.Status`.

    >>> from forge_policy.reports.status import BehaviorStatus, Status
    >>> row = BehaviorStatus(enabled=True, counter=2, level=Level.NUDGE, next_threshold=3,
    ...                      level_shown="nudge")
    >>> summarize(Status("s", True, behaviors={"risky-commands": row}), floor=None).near
    (('risky-commands', 2, 3),)
    """
    if not status.exists:
        return StatusLine(False, floor=floor)
    top: tuple[Level, str] | None = None
    blocks: list[str] = []
    near: list[tuple[str, int, int]] = []
    for behavior_id, row in status.behaviors.items():
        level = row.level
        if (
            level is not None
            and level > Level.SILENT
            and row.counter
            and (top is None or level > top[0])
        ):
            top = (level, row.level_shown or level.label)
        if row.pending_block:
            blocks.append(behavior_id)
        threshold = row.next_threshold
        live = row.enabled and row.inactive_under is None
        if live and row.counter and threshold is not None and threshold - row.counter == 1:
            near.append((behavior_id, row.counter, threshold))
    return StatusLine(True, top[1] if top else None, tuple(blocks), tuple(near), floor)


def status_line(
    state: SessionState | None,
    catalog: Catalog,
    session_id: str,
    *,
    floor: str | None,
    now: float | None = None,
    ttl: float | None = None,
    profile: str | None = None,
    color: bool = False,
) -> str:
    """The status line of ``session_id`` from its ``state`` (see the module docstring): a
    session past ``ttl`` seconds since its last access (at ``now``) counts as
    no session, as ``status`` counts it."""
    line = line_of(state, catalog, session_id, floor=floor, now=now, ttl=ttl, profile=profile)
    return line.render(color=color)


def line_of(
    state: SessionState | None,
    catalog: Catalog,
    session_id: str,
    *,
    floor: str | None,
    now: float | None = None,
    ttl: float | None = None,
    profile: str | None = None,
) -> StatusLine:
    """:class:`StatusLine` of ``session_id`` whose read-only ``state`` is given (None: no
    such session; :func:`status_line` renders it)."""
    from forge_policy.reports.status import status_of

    if not session_id:
        state = None
    if state is not None and now is not None and ttl is not None and state.expired(now, ttl):
        state = None
    return summarize(status_of(catalog, session_id, state, profile), floor=floor)


def floor_word(floor: HarnessFloor) -> str:
    """One of :data:`FLOOR_WORDS` for a harness's floor (:mod:`forge_policy.ops.floor_report`):
    ``on`` when every guarantee is held beneath the hook, ``degraded`` when some are the hook's
    alone, ``off`` or ``none`` when nothing is."""
    if floor.state in ("off", "none"):
        return floor.state
    return "degraded" if floor.hook_only else "on"
