"""A reference model of SPEC §3 (counting, escalation) and §4 (overrides), for the stateful tests.

:class:`Model` is written from the spec (and the lead's decisions where the spec is silent) over
the normalised behavior specs of :mod:`tests.strategies`, with the pure rules in
:mod:`tests.reference_rules`; it shares no code with the evaluator. It models, per session:

- expiry: a session expires when ``now - last access > TTL + TOUCH``. The engine records the
  last access whenever it writes the state, and on the allow path (nothing changed) only when
  the recorded one is ``TOUCH`` or more old (else it writes nothing at all), so a session expires
  never early and at most ``TOUCH`` late (``SessionModel.seen`` is the real last access);
- overrides granted during an event (the retry of a pending block, or an explicit grant spent on
  a call that would soft-block) are tentative: if a later behavior blocks the call, they are all
  withdrawn, and their pending blocks, grants, block counts and records are as if never spent;
- grants (issue 23, SPEC §4): a grant lives :data:`GRANT` seconds, independent of the retry
  window. Unbound, it is spent by the next call of its behavior that would soft-block; a retry
  of a pending block within the window passes by retry and leaves it. Bound to a call
  (``call=``, the id a soft block named), only that call spends it: its retry of the pending
  block, within the window or later while the grant lives (then ``explicit``, with the grant's
  reason) or the same call later, when it would
  soft-block again; every other call is blocked as usual and the grant stays. A newer grant
  replaces an older one; hard_block clears it;
- subagents (issue 27): every violation counts in the session's counter and in the share of
  the agent it came from (``agent_id``, ``""`` the root thread). With ``scope: session`` the
  ladder climbs the session's counter (a share's level is the highest its violations got);
  with ``scope: agent`` it climbs the agent's own share (the session's level is then the
  highest any agent reached). A call's identity holds its agent: a pending block or a bound
  grant of one agent is never passed by another's identical call;
- ``Evaluator.override`` is refused for a behavior that hard-blocks by default, never reaches
  soft_block, or has reached hard_block in that session, and for a ``call`` that is not one of
  the behavior's :data:`RECENT_CALLS` latest soft-blocked calls (see :meth:`Model.refusal`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from forge_policy.levels import Level
from tests.reference_rules import applies, first_line, identity, resolve, run_triggers

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.machine_strategies import Call

T0 = 1_700_000_000.0
WINDOW = 60.0
#: how long a grant lives (``FORGE_GRANT_SECONDS``; apart from the window and the touch)
GRANT = 240.0
#: how many soft-blocked calls a behavior remembers for ``override --call``
RECENT_CALLS = 8
TTL = 86400.0
#: the engine's touch interval for this ttl: the allow path refreshes the last access this often
TOUCH = min(300.0, TTL / 100)
NUDGE, WARNING, SOFT, HARD = Level.NUDGE, Level.WARNING, Level.SOFT_BLOCK, Level.HARD_BLOCK
#: Model.refusal() -> what the engine's ValueError says
REFUSALS = {
    "hard_block by default": "is a hard_block behavior: it has no override",
    "never blocks": "never blocks",
    "hard_block reached": "has reached hard_block in session",
    "unknown call": "no soft-blocked call",
}


def call_key(call: Call) -> tuple[str, ...]:
    """What a bound grant compares (the engine's call hash): tool name + canonical input, or
    the event and its prompt."""
    return identity(call)[1:] if call.is_tool else identity(call)


@dataclass
class AgentModel:
    """One agent's share of a behavior (issue 27)."""

    type: str = ""
    counter: int = 0
    level: Level | None = None
    blocks: int = 0
    history: list[Level] = field(default_factory=list)

    def key(self) -> tuple:
        return self.type, self.counter, self.level, self.blocks


@dataclass
class BehaviorModel:
    counter: int = 0
    level: Level | None = None
    history: list[Level] = field(default_factory=list)  # the level of each counted violation
    #: (call identity, blocked at, the session's counter at the block)
    pending: tuple[tuple[str, ...], float, int] | None = None
    #: (granted at, reason, the call key it is bound to or None)
    grant: tuple[float, str, tuple[str, ...] | None] | None = None
    overrides: list[str] = field(default_factory=list)  # mechanisms
    blocks: int = 0
    calls: list[tuple[str, ...]] = field(default_factory=list)  # soft-blocked call keys
    agents: dict[str, AgentModel] = field(default_factory=dict)  # agent id -> its share

    def ladder(self, spec: dict, agent_id: str) -> tuple[int, Level | None]:
        """The counter and level a violation of this agent climbs from (the ``scope``)."""
        if spec["scope"] == "agent":
            share = self.agents.get(agent_id)
            return (share.counter, share.level) if share else (0, None)
        return self.counter, self.level

    def answers_late(self, now: float, key: tuple[str, ...]) -> bool:
        """Whether a live grant bound to this call keeps its pending block answerable past
        the window (issue 25: a user's approval where the harness cannot ask lasts the
        grant's life, not the window's)."""
        grant = self.live_grant(now)
        return grant is not None and grant[2] == key

    def live_grant(self, now: float) -> tuple[float, str, tuple[str, ...] | None] | None:
        return self.grant if self.grant and 0 <= now - self.grant[0] <= GRANT else None

    def admits(self, now: float, key: tuple[str, ...]) -> bool:
        """Whether a call with this key that would soft-block spends the live grant."""
        grant = self.live_grant(now)
        return grant is not None and grant[2] in (None, key)

    def note_call(self, key: tuple[str, ...]) -> None:
        self.calls = [*(c for c in self.calls if c != key), key][-RECENT_CALLS:]

    def key(self) -> tuple:
        agents = tuple(sorted((aid, a.key()) for aid, a in self.agents.items()))
        return (
            self.counter,
            self.level,
            self.pending,
            self.grant,
            (*self.overrides,),
            self.blocks,
            agents,
        )


@dataclass
class SessionModel:
    last_access: float  # as the engine records it (last_accessed_at)
    seen: float  # the real last access: every event and every grant
    flags: set[str] = field(default_factory=set)
    totals: dict[str, float] = field(default_factory=dict)
    behaviors: dict[str, BehaviorModel] = field(default_factory=dict)

    def key(self) -> tuple:
        """Equal exactly when the engine's state documents are equal (less the timestamps)."""
        behaviors = {bid: b.key() for bid, b in self.behaviors.items()}
        return sorted(self.flags), sorted(self.totals.items()), behaviors


@dataclass
class Expected:
    """What the model says one event must produce."""

    violations: list[tuple] = field(default_factory=list)
    overrides: list[tuple[str, str, int, str]] = field(default_factory=list)
    #: (kind, behavior, level or mechanism, counter, overridden or reason, released)
    audit: list[tuple] = field(default_factory=list)
    blocking: str | None = None
    shown: list[str] = field(default_factory=list)  # nudges and warnings, in catalog order
    first_lines: dict[str, str] = field(default_factory=dict)
    levels: dict[str, Level] = field(default_factory=dict)
    retried: list[str] = field(default_factory=list)  # passed on the retry of a pending block
    #: how the tentative overrides withdrawn because a later behavior blocked were granted
    withdrawn: list[str] = field(default_factory=list)
    write: str = ""  # "", "changed" or "touched" (only last_accessed_at refreshed)
    since_write: float | None = None  # seconds since the recorded last access, if alive


class Model:
    """SPEC §3 and §4 over the normalised specs, one :class:`SessionModel` per stored session."""

    def __init__(self, specs: list[dict], profile: str) -> None:
        self.specs = specs
        self.profile = profile
        self.sessions: dict[str, SessionModel] = {}  # what the engine's store holds

    def spec(self, behavior_id: str) -> dict:
        return next(s for s in self.specs if s["id"] == behavior_id)

    def live(self, sid: str, now: float) -> SessionModel | None:
        session = self.sessions.get(sid)
        if session is None or now - session.last_access > TTL + TOUCH:
            return None
        return session

    def refusal(
        self, sid: str, behavior_id: str, now: float, call: tuple[str, ...] | None = None
    ) -> str | None:
        """Why ``Evaluator.override`` must refuse this grant (see :data:`REFUSALS`), or None;
        ``call``: the key of the call the grant is to be bound to."""
        spec = self.spec(behavior_id)
        levels = [spec["default_level"], *(label for _, label in spec["escalation"])]
        if spec["default_level"] == HARD.label:
            return "hard_block by default"
        if max(Level.parse(label) for label in levels) < SOFT:
            return "never blocks"
        session = self.live(sid, now)
        b = session.behaviors.get(behavior_id) if session else None
        if b is not None and b.level is HARD:
            return "hard_block reached"
        if call is not None and (b is None or call not in b.calls):
            return "unknown call"
        return None

    def grant(
        self,
        sid: str,
        behavior_id: str,
        now: float,
        reason: str,
        call: tuple[str, ...] | None = None,
    ) -> None:
        """An explicit override granted (always written, replacing an older grant)."""
        session = self.live(sid, now) or SessionModel(now, now)
        session.behaviors.setdefault(behavior_id, BehaviorModel()).grant = (now, reason, call)
        session.last_access = session.seen = now
        self.sessions[sid] = session

    def event(self, call: Call, now: float) -> Expected:
        live = self.live(call.session_id, now)
        session = live or SessionModel(now, now)  # SPEC §3.9: new once expired
        before = session.key()
        expected = self.decide(session, call, now)
        expected.since_write = now - live.last_access if live is not None else None
        if session.key() != before:
            expected.write = "changed"
        elif live is not None and now - session.last_access >= TOUCH:
            expected.write = "touched"
        if expected.write:
            session.last_access = now
            self.sessions[call.session_id] = session
        if live is not None or expected.write:
            session.seen = now
        return expected

    def decide(self, session: SessionModel, call: Call, now: float) -> Expected:
        expected = Expected()
        tentative: list[Callable[[], str]] = []
        for spec in self.specs:
            bid = spec["id"]
            if (
                not spec["enabled"]
                or not applies(spec, call, self.profile)
                or call.event_name not in {t["event"] for t in spec["triggers"]}
            ):
                continue
            b = session.behaviors.get(bid)
            before, previous = b.ladder(spec, call.agent_id) if b is not None else (0, None)
            if (
                b is not None
                and b.pending is not None
                and b.pending[0] == identity(call)
                and (0 <= now - b.pending[1] <= WINDOW or b.answers_late(now, call_key(call)))
                and previous is not HARD
            ):
                tentative.append(pass_retry(b, bid, now, call_key(call), expected))
                continue  # counter and flags untouched
            fired = run_triggers(spec, call, session, before)
            if fired is None:
                continue
            b = session.behaviors.setdefault(bid, BehaviorModel())
            share = b.agents.setdefault(call.agent_id, AgentModel())
            counter = before + 1
            level = max(resolve(spec, counter), previous or Level.SILENT)
            shadow = spec["mode"] == "shadow"
            if level is SOFT and not shadow and b.admits(now, call_key(call)):
                tentative.append(pass_explicit(b, share, bid, before, fired, expected))
                continue
            b.counter += 1
            b.level = max(b.level or level, level)
            b.history.append(level)
            share.counter += 1
            share.level = max(share.level or level, level)
            share.history.append(level)
            if call.agent:  # a subagent's type, or the main thread's of an --agent session
                share.type = call.agent
            session_counter = b.counter
            expected.violations.append((bid, level, counter, shadow, "", fired))
            expected.first_lines[bid] = first_line(spec, level, counter, call)
            expected.levels[bid] = level
            if shadow or not level.blocks:  # SPEC §9: every counted violation is on the record
                expected.audit.append(("violation", bid, level.label, session_counter, "", ()))
            if shadow:
                continue
            if level.blocks:
                b.blocks += 1
                share.blocks += 1
                expected.audit.append(("block", bid, level.label, session_counter, "", ()))
                if level is SOFT:
                    b.pending = (identity(call), now, b.counter)
                    b.note_call(call_key(call))
                else:  # hard_block: nothing is left to override
                    b.pending = b.grant = None
                expected.blocking = bid
                break  # SPEC §3.6: the first block cuts the chain
            if level > Level.SILENT:
                expected.shown.append(bid)
        if expected.blocking is not None:
            for withdraw in reversed(tentative):
                expected.withdrawn.append(withdraw())
        return expected


def pass_retry(
    b: BehaviorModel, bid: str, now: float, key: tuple[str, ...], expected: Expected
) -> Callable[[], str]:
    """The retry of a pending block passes (spending a live grant bound to this very call, and
    no other); returns its undo."""
    saved = b.pending, b.grant
    grant = b.live_grant(now)
    grant = grant if grant is not None and grant[2] == key else None
    mechanism, reason = ("explicit", grant[1]) if grant else ("retry", "")
    b.pending = None
    b.grant = None if grant else b.grant
    b.overrides.append(mechanism)
    assert saved[0] is not None
    counter = saved[0][2]  # the block's session counter (other agents may have counted since)
    override = (bid, mechanism, counter, reason)
    released = ("pending", "grant") if grant else ("pending",)  # what it consumed
    record = ("override", bid, mechanism, counter, reason, released)
    expected.overrides.append(override)
    expected.audit.append(record)
    expected.retried.append(bid)

    def withdraw() -> str:
        b.pending, b.grant = saved
        b.overrides.pop()
        expected.overrides.remove(override)
        expected.audit.remove(record)
        expected.retried.remove(bid)
        return f"{mechanism} on the retry of a pending block"

    return withdraw


def pass_explicit(
    b: BehaviorModel, share: AgentModel, bid: str, counter: int, fired: int, expected: Expected
) -> Callable[[], str]:
    """A call that would soft-block spends the live grant: recorded as a block overridden
    ``explicit`` (it counts in ``blocks``, not in the counter); returns its undo. ``counter``
    is the ladder's (the violation's); the records carry the session's."""
    saved = b.grant
    assert saved is not None
    b.grant = None
    b.blocks += 1  # it would have blocked: the override rate stays <= 1
    share.blocks += 1
    b.overrides.append("explicit")
    override = (bid, "explicit", b.counter, saved[1])
    records = [
        ("block", bid, SOFT.label, b.counter, "explicit", ()),
        ("override", bid, "explicit", b.counter, saved[1], ("grant",)),
    ]
    violation = (bid, SOFT, counter, False, "explicit", fired)
    expected.overrides.append(override)
    expected.audit.extend(records)
    expected.violations.append(violation)

    def withdraw() -> str:
        b.grant = saved
        b.blocks -= 1
        share.blocks -= 1
        if share.key() == AgentModel().key():  # the share was made for this pass alone
            b.agents = {k: v for k, v in b.agents.items() if v is not share}
        b.overrides.pop()
        expected.overrides.remove(override)
        for record in records:
            expected.audit.remove(record)
        expected.violations.remove(violation)
        return "explicit on a violating call"

    return withdraw
