"""Replay recorded sessions through a catalog (and a second one, to diff): what would have been
decided, event by event, behind ``forge-policy replay``.

Each session is replayed on its own :class:`~forge_policy.Evaluator` (a memory store and audit
sink, nothing written to the project) whose clock is a :class:`~forge_policy.testing.FakeClock`
moved to each event's recorded time, so windows, TTLs and override-by-retry behave as they would
have. Facts that read the file system or git read them as they are now, not as they were.

>>> import forge_policy as fp
>>> from forge_policy.ops.transcript import TranscriptEvent
>>> push = {"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash",
...         "tool_input": {"command": "git push --force"}}
>>> result = replay([TranscriptEvent(push, 1_800_000_000.0, "t.jsonl:1", 0)],
...                 fp.builtin_catalog())
>>> step = result.sessions[0].events[0]
>>> step.decision.outcome, step.decision.blocking
('hard_block', 'no-destructive-git')
"""

from __future__ import annotations

import attrs

from forge_policy.catalog.behavior import DEFAULT_PROFILE
from forge_policy.engine.inputs import DEFAULT_TTL, DEFAULT_WINDOW
from forge_policy.engine.verdict import Fired as Fired  # its old home
from forge_policy.engine.verdict import Verdict as Verdict  # its old home too

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from forge_policy.catalog.catalog import Catalog
    from forge_policy.engine.inputs import FactCache
    from forge_policy.model import Event
    from forge_policy.ops.transcript import TranscriptEvent

#: The outcomes in order, for tallies and tables.
OUTCOMES = ("allow", "nudge", "warning", "soft_block", "hard_block")
#: How much of an event's subject (command, path, prompt) a report shows.
SUBJECT_LIMIT = 160


@attrs.frozen
class Step:
    """One replayed event: where it came from, what it was, and each catalog's verdict."""

    index: int
    timestamp: float
    source: str
    event: str
    tool: str
    subject: str
    decision: Verdict
    against: Verdict | None = None

    @property
    def differs(self) -> bool:
        """Whether the two catalogs decided differently (False without ``against``)."""
        return self.against is not None and self.against.key() != self.decision.key()

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        from forge_policy._time import iso

        out: dict[str, object] = {
            "index": self.index,
            "timestamp": iso(self.timestamp),
            "source": self.source,
            "event": self.event,
            "tool": self.tool or None,
            "subject": self.subject,
            "decision": self.decision.to_dict(),
        }
        if self.against is not None:
            out["against"] = self.against.to_dict()
        return out


@attrs.frozen
class SessionReplay:
    """One session's replayed events, in order."""

    session_id: str
    events: tuple[Step, ...]

    def tally(self, against: bool = False) -> dict[str, int]:
        """How many events had each outcome (under ``--against``'s catalog when asked)."""
        counts = dict.fromkeys(OUTCOMES, 0)
        for step in self.events:
            verdict = step.against if against else step.decision
            if verdict is not None:
                counts[verdict.outcome] = counts.get(verdict.outcome, 0) + 1
        return counts


@attrs.frozen
class Replay:
    """The replay of every session, with the catalogs' names."""

    catalog: str
    against: str | None
    sessions: tuple[SessionReplay, ...]

    @property
    def events(self) -> int:
        """How many events were replayed."""
        return sum(len(s.events) for s in self.sessions)

    def steps(self) -> list[tuple[str, Step]]:
        """Every step with its session id."""
        return [(s.session_id, step) for s in self.sessions for step in s.events]

    def blocks(self) -> list[tuple[str, Step]]:
        """The steps the catalog (or the ``--against`` one) would have refused."""
        return [
            (sid, step)
            for sid, step in self.steps()
            if step.decision.blocked or (step.against is not None and step.against.blocked)
        ]

    def differences(self) -> list[tuple[str, Step]]:
        """The steps the two catalogs decided differently."""
        return [(sid, step) for sid, step in self.steps() if step.differs]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form: tallies per session, the events anything fired on, the diff."""

        def row(sid: str, step: Step) -> dict[str, object]:
            return {"session_id": sid, **step.to_dict()}

        sessions = []
        for s in self.sessions:
            entry: dict[str, object] = {
                "session_id": s.session_id,
                "events": len(s.events),
                "outcomes": s.tally(),
            }
            if self.against is not None:
                entry["against_outcomes"] = s.tally(against=True)
            sessions.append(entry)
        fired = [
            row(sid, step)
            for sid, step in self.steps()
            if step.decision.fired or (step.against is not None and step.against.fired)
        ]
        out: dict[str, Any] = {
            "catalog": self.catalog,
            "against": self.against,
            "events": self.events,
            "sessions": sessions,
            "decisions": fired,
            "blocks": len([1 for _, step in self.steps() if step.decision.blocked]),
        }
        if self.against is not None:
            out["against_blocks"] = len(
                [1 for _, s in self.steps() if s.against is not None and s.against.blocked]
            )
            out["differences"] = [row(sid, step) for sid, step in self.differences()]
        return out


def replay(
    events: Sequence[TranscriptEvent],
    catalog: Catalog,
    *,
    against: Catalog | None = None,
    profile: str = DEFAULT_PROFILE,
    ttl: float = DEFAULT_TTL,
    override_window: float = DEFAULT_WINDOW,
    progress: Callable[[int], None] | None = None,
) -> Replay:
    """Decide every event with ``catalog`` (and ``against``), each session on a fresh
    evaluator whose clock is the transcript's. ``events`` are in order per session (see
    :func:`~forge_policy.ops.transcript.read_transcripts`); ``progress`` is called with
    how many events were decided since its last call."""
    grouped: dict[str, list[TranscriptEvent]] = {}
    for event in events:
        grouped.setdefault(event.payload["session_id"], []).append(event)
    settings = {"profile": profile, "ttl": ttl, "override_window": override_window}
    sessions = []
    for session_id, session_events in grouped.items():
        mine = _Run(catalog, settings)
        theirs = _Run(against, settings) if against is not None else None
        steps = []
        for index, event in enumerate(session_events):
            verdict, other = _decide(event, mine, theirs)
            steps.append(_step(index, event, verdict, other))
            if progress is not None:
                progress(1)
        sessions.append(SessionReplay(session_id, tuple(steps)))
    return Replay(
        catalog=catalog.root or "(built-in)",
        against=(against.root or "(built-in)") if against is not None else None,
        sessions=tuple(sessions),
    )


class _Run:
    """One catalog replaying one session: its evaluator and the clock it is given."""

    def __init__(self, catalog: Catalog, settings: dict[str, Any]) -> None:
        from forge_policy.engine.evaluator import Evaluator
        from forge_policy.testing.clock import FakeClock

        self.clock = FakeClock(0.0)
        # ids of explicit grants are never read back in a replay: a counter keeps runs equal
        self._ids = iter(range(1 << 62))
        self.evaluator = Evaluator(
            catalog, clock=self.clock, random_id=lambda: f"{next(self._ids):016x}", **settings
        )

    def decide(self, event: Event, when: float, facts: FactCache | None = None) -> Verdict:
        """Decide ``event`` at ``when`` with ``facts``, its fact cache (this evaluation fills
        it; by default a new one)."""
        if when > self.clock.now:
            self.clock.advance(when - self.clock.now)
        return Verdict.of(self.evaluator.evaluate(event, facts=facts))

    def facts(self, event: Event, known: FactCache | None = None) -> FactCache:
        """A fact cache for ``event`` with this run's providers, holding the values ``known``
        computed (the other catalog's run: facts depend on the event alone)."""
        from forge_policy.engine.inputs import FactCache

        facts = FactCache(event, self.evaluator.facts)
        if known is not None:
            facts.values.update(known.values)
        return facts


def _decide(
    event: TranscriptEvent, mine: _Run, theirs: _Run | None
) -> tuple[Verdict, Verdict | None]:
    from forge_policy.errors import EventError
    from forge_policy.model import Event

    try:
        built = Event.from_claude_code(event.payload)
    except EventError as exc:  # a payload the hook would have refused too
        refused = Verdict("allow", error=str(exc))
        return refused, (refused if theirs is not None else None)
    if theirs is None:
        return mine.decide(built, event.timestamp), None
    facts = mine.facts(built)  # mine's evaluate fills it; theirs starts from its values
    verdict = mine.decide(built, event.timestamp, facts)
    return verdict, theirs.decide(built, event.timestamp, theirs.facts(built, facts))


def _step(index: int, event: TranscriptEvent, mine: Verdict, theirs: Verdict | None) -> Step:
    payload = event.payload
    return Step(
        index=index,
        timestamp=event.timestamp,
        source=event.source,
        event=str(payload.get("hook_event_name", "")),
        tool=str(payload.get("tool_name", "") or ""),
        subject=subject_of(payload),
        decision=mine,
        against=theirs,
    )


def subject_of(payload: dict[str, Any]) -> str:
    """What an event was about, in one short redacted line: a command, a path, a prompt.

    >>> subject_of({"tool_name": "Bash", "tool_input": {"command": "ls  -la\\n"}})
    'ls -la'
    >>> subject_of({"prompt": "x" * 300})[-3:]
    'xx…'
    """
    from forge_policy.secrets import redact

    tool_input = payload.get("tool_input")
    text = ""
    if isinstance(tool_input, dict):
        for key in ("command", "file_path", "notebook_path", "path", "pattern", "url", "query"):
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                text = value
                break
        else:
            import json

            text = json.dumps(tool_input, ensure_ascii=False, sort_keys=True, default=str)
    elif isinstance(payload.get("prompt"), str):
        text = payload["prompt"]
    text = " ".join(redact(text).split())  # redacted before the cut, which could hide a secret
    return text if len(text) <= SUBJECT_LIMIT else text[: SUBJECT_LIMIT - 1] + "…"
