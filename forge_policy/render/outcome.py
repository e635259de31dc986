"""What a decision says, before any harness's wire format: the advice, or the block with its
reason, its one-line summary and who may override it (SPEC §8).

Every hook renderer (Claude Code's, and each adapter in :mod:`forge_policy.harness`) words the
same decision with these texts, so a warning or a block reads identically under every harness.
The texts of the ``FORGE_ON_ERROR`` answers live here too, for the same reason.

>>> from forge_policy import Event, Decision, Violation
>>> from forge_policy.levels import Level
>>> v = Violation("b", "B", Level.SOFT_BLOCK, 1, "no.\\nOverriding needs the user's approval: "
...               "the user is asked to allow this call.", override_mode="user")
>>> d = Decision(Event("PreToolUse", "s"), messages=[v.message], blocking=v)
>>> print(outcome(d, can_ask=False, title="Codex").reason)  # doctest: +NORMALIZE_WHITESPACE
no.
Overriding needs the user's approval, and Codex cannot ask: the user can run: forge-policy
override b --session s --reason "..."
"""

from __future__ import annotations

from forge_policy.model import OVERRIDE_BY_USER, OVERRIDE_NEVER
from forge_policy.render.messages import CANNOT_OVERRIDE, USER_OVERRIDE_LINE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.model import Decision


class Outcome:
    """``advice`` (nothing blocks: the messages for the user and the model), or a block:
    ``reason`` (for the agent), ``summary`` (one line for the user), ``ask`` (the user is to
    be asked) and ``hard`` (it cannot be overridden)."""

    __slots__ = ("advice", "ask", "blocked", "hard", "reason", "summary")

    def __init__(
        self,
        *,
        advice: str = "",
        reason: str = "",
        summary: str = "",
        ask: bool = False,
        hard: bool = False,
    ) -> None:
        self.blocked = bool(reason)
        self.advice = advice
        self.reason = reason
        self.summary = summary
        self.ask = ask
        self.hard = hard


def outcome(decision: Decision, *, can_ask: bool = True, title: str = "") -> Outcome | None:
    """The decision's texts, or None when there is nothing to say.

    ``can_ask=False`` (the harness has no ask-the-user prompt at this event, e.g. Codex): a
    block the user would approve stays a block (a deny), and its reason names the command the
    user runs to let it through instead of a prompt that will not come.
    """
    notes = override_notes(decision)
    blocking = decision.blocking
    if blocking is None:
        text = "\n\n".join([*decision.messages, *notes])
        return Outcome(advice=text) if text else None
    summary = "\n\n".join([blocking.message.split("\n", 1)[0], *notes])
    ask = blocking.override_mode == OVERRIDE_BY_USER
    reason = refusal_reason(decision)
    if ask and not can_ask:
        ask = False
        line = (
            f"Overriding needs the user's approval, and {title or 'this harness'} cannot ask: "
            f"the user can run: forge-policy override {blocking.behavior_id} "
            f"--session {decision.event.session_id}"
            f"{f' --call {blocking.call_id}' if blocking.call_id else ''} "
            '--reason "..."'
        )
        reason = (
            reason.replace(USER_OVERRIDE_LINE, line)
            if USER_OVERRIDE_LINE in reason
            else (f"{reason}\n{line}")
        )
    hard = blocking.override_mode == OVERRIDE_NEVER
    return Outcome(reason=reason, summary=summary, ask=ask, hard=hard)


def refusal_reason(decision: Decision) -> str:
    """What the agent reads for a blocked call: the messages, and for a block that cannot be
    overridden, a line saying so."""
    reason = decision.message
    blocking = decision.blocking
    hard = blocking is not None and blocking.override_mode == OVERRIDE_NEVER
    if hard and CANNOT_OVERRIDE not in reason and "cannot be overridden" not in reason:
        reason = f"{reason}\n{CANNOT_OVERRIDE}"
    return reason


def override_notes(decision: Decision) -> list[str]:
    """One line for the user per override by retry or explicit grant (audited), then the
    decision's :attr:`~forge_policy.Decision.notices` (a last known good catalog enforcing)."""
    return [
        *(
            f"[{o.get('behavior_id')}] Let through by an override ({o.get('mechanism')}); "
            "recorded in the audit log."
            for o in decision.overrides
            if o.get("mechanism") in ("retry", "explicit")
        ),
        *decision.notices,
    ]


def error_refusal(problem: str) -> str:
    """The reason of a ``FORGE_ON_ERROR=deny`` refusal: the call could not be evaluated."""
    return (
        f"forge-policy could not evaluate this call, so it is refused "
        f"(FORGE_ON_ERROR=deny): {problem}"
    )


def error_notice(on_error: str, problem: str) -> str:
    """What the user reads when an event that could not be evaluated goes through: under
    ``FORGE_ON_ERROR=allow`` because the user said so; under ``deny`` because the event is not
    a tool call that can be refused (a prompt, a session start: never held hostage), which is
    said as such, not as ``deny`` letting it through.

    >>> print(error_notice("deny", "x"))  # doctest: +NORMALIZE_WHITESPACE
    forge-policy could not evaluate this event; only tool calls are refused when it cannot
    decide, so this one goes through unchecked: x
    >>> error_notice("allow", "x")
    'forge-policy could not evaluate this event and let it through (FORGE_ON_ERROR=allow): x'
    """
    if on_error == "deny":
        return (
            "forge-policy could not evaluate this event; only tool calls are refused when it "
            f"cannot decide, so this one goes through unchecked: {problem}"
        )
    return (
        f"forge-policy could not evaluate this event and let it through "
        f"(FORGE_ON_ERROR={on_error}): {problem}"
    )
