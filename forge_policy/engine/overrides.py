"""SPEC §4 overrides as functions returning effects: nothing here changes a state.

Four ways one soft-blocked call is let through, each recorded as an override:

- **retry** (:func:`retry_pass`): the same call within the window of its pending block. A
  grant is not spent on it (the retry already passes: it is not "the next blocked call"),
  unless the grant is bound to this very call (``--call``) or the block is an ``override:
  user`` one, which a retry alone never passes: then it is ``explicit``;
- **explicit** (:func:`explicit_pass`): a live grant (``FORGE_GRANT_SECONDS``) spent on the
  next call that would soft-block, or, bound to one call, on a retry of that call only; a
  block in between never spends or clears it;
- **user** (:func:`user_approvals`): the harness reports that the call the user was asked
  about ran (PostToolUse with the same ``tool_use_id``);
- **harness auto-approval** (:func:`auto_approved`): the harness says the user asked not to be
  prompted (an :data:`AutoApprove` rule: :class:`PermissionModes`, from each harness's
  ``auto_approve`` capability in the registry, e.g. Claude Code's ``bypassPermissions``), so an
  ask becomes an allow on the record. Deny is never downgraded: only ``override: user`` blocks
  reach the rule.

Retry and explicit passes are *tentative*: if a later behavior blocks the same call, the
decision drops them, so the pending block and the grant stay for the next attempt.
"""

from __future__ import annotations

import attrs

from forge_policy.engine import effects as fx  # its classes load on first use
from forge_policy.engine.records import decision_record, override_record
from forge_policy.levels import Level
from forge_policy.model import OVERRIDE_BY_USER, AutoApproval, Violation

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from forge_policy.engine.effects import Effect, Step
    from forge_policy.model import Event
    from forge_policy.state import BehaviorState, Grant, SessionState

USER_APPROVED = "approved by user"


if TYPE_CHECKING:
    #: A harness rule: given an event and the soft block of an ``override: user`` behavior
    #: (the harness would ask the user), approve it without asking, or None to ask.
    AutoApprove = Callable[[Event, Violation], AutoApproval | None]


class PermissionModes:
    """An :data:`AutoApprove` rule: per harness name, the permission modes in which the user
    asked not to be prompted (:attr:`forge_policy.harness.registry.Harness.auto_approve`, e.g.
    Claude Code's ``bypassPermissions``). Under one of them an ask becomes an allow, with an
    advisory and an audited override; a deny is never downgraded (the engine asks the rule
    only about ``override: user`` soft blocks).

    >>> import forge_policy as fp
    >>> rule = PermissionModes({"claude-code": frozenset({"bypassPermissions"})})
    >>> v = Violation("b", "B", Level.SOFT_BLOCK, 1, "ask", override_mode="user")
    >>> rule(fp.Event("PreToolUse", "s", permission_mode="bypassPermissions"), v).note
    '(Allowed without asking: permission_mode is bypassPermissions.)'
    >>> rule(fp.Event("PreToolUse", "s", permission_mode="default"), v) is None
    True
    """

    __slots__ = ("modes",)

    def __init__(self, modes: Mapping[str, frozenset[str]]) -> None:
        self.modes = dict(modes)

    @classmethod
    def from_registry(cls) -> PermissionModes:
        """Each registered harness's ``auto_approve`` modes; the Claude Agent SDK, which runs
        the Claude Code CLI (its events carry the CLI's permission modes), shares Claude
        Code's."""
        from forge_policy.harness.registry import HARNESSES

        modes = {name: harness.auto_approve for name, harness in HARNESSES.items()}
        modes["claude-agent-sdk"] = HARNESSES["claude-code"].auto_approve
        return cls(modes)

    def __call__(self, event: Event, violation: Violation) -> AutoApproval | None:
        mode = event.permission_mode
        if not mode or mode not in self.modes.get(event.harness, ()):
            return None
        return AutoApproval(
            reason=f"permission_mode {mode}",
            note=f"(Allowed without asking: permission_mode is {mode}.)",
        )


_REGISTRY_RULE: list[PermissionModes] = []


def harness_auto_approval(event: Event, violation: Violation) -> AutoApproval | None:
    """The default :data:`AutoApprove`: :meth:`PermissionModes.from_registry`, the rule of the
    harness the event came from (Claude Code's ``bypassPermissions``; other harnesses have
    none). The registry is read only when a user-approval block needs it.

    >>> import forge_policy as fp
    >>> v = Violation("b", "B", Level.SOFT_BLOCK, 1, "ask", override_mode="user")
    >>> ev = fp.Event("PreToolUse", "s", tool_name="Bash", permission_mode="bypassPermissions")
    >>> harness_auto_approval(ev, v).reason
    'permission_mode bypassPermissions'
    >>> harness_auto_approval(fp.Event("PreToolUse", "s", harness="gemini"), v) is None
    True
    """
    if not _REGISTRY_RULE:
        _REGISTRY_RULE.append(PermissionModes.from_registry())  # a race appends an equal one
    return _REGISTRY_RULE[0](event, violation)


def live_grant(bstate: BehaviorState | None, now: float, seconds: float) -> Grant | None:
    """The behavior's explicit grant if it is still live (``seconds``: FORGE_GRANT_SECONDS)."""
    grant = bstate.grant if bstate is not None else None
    return grant if grant is not None and grant.is_live(now, seconds) else None


def user_approvals(event: Event, state: SessionState, now: float) -> list[Step]:
    """SPEC §4 ``override: user``: the PostToolUse of a call the user was asked about (same
    ``tool_use_id``) records the user's approval and clears the pending block."""
    if event.event_name != "PostToolUse" or not event.tool_use_id:
        return []
    steps: list[Step] = []
    for behavior_id in sorted(state.behavior_ids()):
        bstate = state.find(behavior_id)
        pending = bstate.pending_block if bstate is not None else None
        if pending is None or pending.mode != "user" or pending.tool_use_id != event.tool_use_id:
            continue
        record = override_record(
            event,
            behavior_id,
            pending.counter,
            "user",
            USER_APPROVED,
            now,
            basis=repr(pending.at),
            released=("pending",),
        )
        effects = (fx.SetPendingBlock(behavior_id, None), fx.AddOverride(behavior_id, record))
        steps.append(fx.Step(behavior_id, effects))
    return steps


def retry_pass(
    event: Event,
    behavior_id: str,
    bstate: BehaviorState | None,
    identity: str,
    now: float,
    window: float,
    grant_seconds: float,
    *,
    hard: bool | None = None,
) -> Step | None:
    """The retry of a pending block within the window passes, once (checked before any flag
    is consumed). It spends a live grant only when the grant is bound to this call, or when
    the block is a ``user`` one (a retry alone never passes those: without a grant it is asked
    again); an unbound grant stays for the next blocked call. Tentative.

    A grant that this retry may spend keeps the pending block it answers for the grant's whole
    life (``FORGE_GRANT_SECONDS``), not only the retry window: where the harness cannot ask
    (Codex, Cursor), the user's approval is such a grant, given in another terminal while the
    agent waits, and the retry after the window would otherwise be counted as a new violation
    (escalating, say, to a hard block) and the approval lost after 60 s, where Claude Code's
    ask is answered at once.

    ``hard``: whether the behavior reached hard_block on the ladder this call climbs (with
    ``scope: agent``, its agent's); by default the session's level says. ``identity`` holds
    the agent of the call (:func:`~forge_policy.engine.inputs.event_identity`): the same call
    from another agent never passes a subagent's block."""
    pending = bstate.pending_block if bstate is not None else None
    if hard is None:
        hard = bstate is not None and bstate.effective_level is Level.HARD_BLOCK
    if (
        bstate is None
        or pending is None
        or pending.event != event.event_name
        or pending.call_hash != identity
        or hard
    ):
        return None
    grant = live_grant(bstate, now, grant_seconds)
    if grant is not None and not (
        grant.call_hash == identity or (pending.mode == "user" and grant.admits(identity))
    ):
        grant = None  # an unbound grant waits for the next blocked call; a bound one for its own
    if grant is None and not pending.is_live(now, window):
        return None  # past the window, only the user's grant still answers for the block
    if grant is None and pending.mode == "user":
        # SPEC §4: only the PostToolUse of the asked call proves the user let it run; a retry
        # after a refusal (no PostToolUse) is asked again, never taken as the user's yes
        return None
    effects: list[Effect] = [fx.SetPendingBlock(behavior_id, None)]
    released: tuple[str, ...]
    grant_id = ""
    if grant is not None:  # the user's explicit override is spent on this retry
        effects.append(fx.SetGrant(behavior_id, None))
        mechanism, reason, released = "explicit", grant.reason, ("pending", "grant")
        grant_id = grant.grant_id
    else:
        mechanism, reason, released = "retry", "", ("pending",)
    record = override_record(
        event,
        behavior_id,
        pending.counter,  # the block's: another agent may have counted since (scope: agent)
        mechanism,
        reason,
        now,
        basis=repr(pending.at),
        released=released,
        grant_id=grant_id,
    )
    effects.append(fx.AddOverride(behavior_id, record))
    trace = {"behavior_id": behavior_id, "override": mechanism}
    return fx.Step(behavior_id, tuple(effects), tentative=True, trace=trace)


def explicit_pass(
    event: Event,
    violation: Violation,
    grant: Grant,
    identity: str,
    now: float,
    mode: str,
    counts: tuple[int, int] | None = None,
) -> Step:
    """A call that would soft-block spends the live grant: recorded as a block overridden
    ``explicit`` (it counts in ``blocks``, not in the counter, so override_rate stays <= 1).
    Tentative. ``violation`` carries the counter before this event; ``mode`` is the behavior's
    ``override`` setting; ``counts`` the session's and the agent's counters (unchanged)."""
    behavior_id = violation.behavior_id
    passed = attrs.evolve(violation, message="", overridden="explicit")
    record = override_record(
        event,
        behavior_id,
        violation.counter if counts is None else counts[0],  # the session's, as every record
        "explicit",
        grant.reason,
        now,
        basis=grant.basis,
        released=("grant",),
        grant_id=grant.grant_id,
    )
    effects: tuple[Effect, ...] = (
        fx.SetGrant(behavior_id, None),
        fx.CountBlock(behavior_id, agent_id=event.agent_id),
        fx.Audit(decision_record(event, passed, now, identity, mode, counts=counts)),
        fx.AddOverride(behavior_id, record),
    )
    return fx.Step(behavior_id, effects, violation=passed, tentative=True)


def auto_approved(
    event: Event,
    violation: Violation,
    approval: AutoApproval,
    identity: str,
    now: float,
    counted: tuple[Effect, ...],
    counts: tuple[int, int] | None = None,
) -> Step:
    """A harness rule approved an ask: the call is allowed, on the record (a block overridden
    ``user`` and an override with the rule's reason); ``counted`` are the violation's own
    counter effects, ``counts`` the session's and the agent's counters after it."""
    behavior_id = violation.behavior_id
    passed = attrs.evolve(violation, overridden="user")
    record = override_record(
        event,
        behavior_id,
        violation.counter,
        "user",
        approval.reason,
        now,
        basis=repr(now),
        released=(),
    )
    effects: tuple[Effect, ...] = (
        *counted,
        fx.CountBlock(behavior_id, agent_id=event.agent_id),
        fx.Audit(decision_record(event, passed, now, identity, OVERRIDE_BY_USER, counts=counts)),
        fx.AddOverride(behavior_id, record),
    )
    from forge_policy.render.messages import USER_OVERRIDE_LINE

    # the block's text without the line that says the user is asked: the rule's note says why not
    text = violation.message.replace(f"\n{USER_OVERRIDE_LINE}", "")
    return fx.Step(behavior_id, effects, violation=passed, shown=f"{text}\n{approval.note}")
