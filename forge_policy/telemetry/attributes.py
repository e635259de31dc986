"""What a decision's span and metrics say, as plain attribute mappings (no OpenTelemetry import).

Names follow the OpenTelemetry GenAI semantic conventions where one describes the thing:
``gen_ai.conversation.id`` (the session), ``gen_ai.tool.name``, ``gen_ai.tool.call.id`` (the
harness's tool-use id), ``gen_ai.agent.name`` (the subagent, else the harness). The span is a
policy decision about a tool call, made before the tool runs, not the call's execution: it does
not claim ``gen_ai.operation.name = execute_tool`` (a GenAI backend would count every check as a
tool run and mix its sub-millisecond duration into ``gen_ai.execute_tool.duration``). The rest
is forge_policy's own, under ``forge_policy.``.

The call's input appears only as :func:`forge_policy.secrets.summarize` gives it: one line,
redacted, at most :data:`INPUT_LIMIT` characters; a prompt's text never does (the conventions
make content capture opt-in). Metric attributes are bounded: outcome, level, harness, event,
behavior id and override mechanism, never a session, tool input or call id.

>>> import forge_policy as fp
>>> ev = fp.Evaluator(fp.builtin_catalog(), clock=lambda: 1000.0)
>>> d = ev.evaluate(fp.Event("PreToolUse", "s1", tool_name="Bash", tool_use_id="t1",
...                          tool_input={"command": "git push --force"}))
>>> attributes = span_attributes(d)
>>> attributes["forge_policy.outcome"], attributes["forge_policy.behavior.ids"]
('hard_block', ('no-destructive-git',))
>>> attributes["gen_ai.conversation.id"], attributes["gen_ai.tool.call.id"]
('s1', 't1')
>>> span_name(d)
'forge_policy.decide Bash'
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from forge_policy.model import Decision

    AttributeValue = str | bool | int | float | Sequence[str] | Sequence[int]
    Attributes = dict[str, AttributeValue]

#: The longest input summary a span carries.
INPUT_LIMIT = 200


def span_name(decision: Decision) -> str:
    """``forge_policy.decide <tool>`` (the event's name when it is no tool call): low
    cardinality, as span names must be."""
    event = decision.event
    return f"forge_policy.decide {event.tool_name or event.event_name}"


def span_attributes(decision: Decision) -> Attributes:
    """The attributes of a decision's span: who and what was decided, every violation
    (parallel arrays: behavior id, level, counter), the blocking one, overrides, shadow
    violations and a redacted input summary."""
    from forge_policy.secrets import redact_json, summarize

    event = decision.event
    violations = decision.violations
    found: Attributes = {
        "gen_ai.conversation.id": event.session_id,
        "gen_ai.agent.name": event.agent,
        "forge_policy.harness": event.harness,
        "forge_policy.event": event.event_name,
        "forge_policy.outcome": decision.outcome,
        "forge_policy.level": decision.level.label,
        "forge_policy.blocked": decision.blocked,
        "forge_policy.behavior.ids": tuple(v.behavior_id for v in violations),
        "forge_policy.behavior.levels": tuple(v.level.label for v in violations),
        "forge_policy.behavior.counters": tuple(v.counter for v in violations),
    }
    if event.tool_name:
        found["gen_ai.tool.name"] = event.tool_name
        # each string redacted on its own first: in the JSON summary of an input with no
        # well-known key, escaped quotes (``password=\\"…\\"``) would hide a secret from redact()
        found["forge_policy.input"] = summarize("", redact_json(event.tool_input), INPUT_LIMIT)
    if event.tool_use_id:
        found["gen_ai.tool.call.id"] = event.tool_use_id
    blocking = decision.blocking
    if blocking is not None:
        found["forge_policy.blocking.behavior"] = blocking.behavior_id
        found["forge_policy.blocking.counter"] = blocking.counter
        found["forge_policy.override_allowed"] = decision.override_allowed
    overridden = overrides(decision)
    if overridden:
        found["forge_policy.overridden.behaviors"] = tuple(b for b, _ in overridden)
        found["forge_policy.overridden.by"] = tuple(by for _, by in overridden)
    shadow = [v.behavior_id for v in violations if v.shadow]
    if shadow:
        found["forge_policy.shadow.behaviors"] = tuple(shadow)
    if decision.diagnostics:  # a degraded decision (state or audit unavailable) says so
        found["forge_policy.diagnostics"] = len(decision.diagnostics)
    return found


def deciding_behavior(decision: Decision) -> str:
    """The behavior a decision is counted under: the blocking one, else the first shown
    violation at the decision's level (``""`` for an allow)."""
    if decision.blocking is not None:
        return decision.blocking.behavior_id
    level = decision.level
    for violation in decision.violations:
        if violation.level is level and not violation.shadow and not violation.overridden:
            return violation.behavior_id
    return ""


def decision_point(decision: Decision) -> Attributes:
    """The attributes of the ``forge_policy.decisions`` count (and of a block's)."""
    point: Attributes = {
        "forge_policy.outcome": decision.outcome,
        "forge_policy.harness": decision.event.harness,
        "forge_policy.event": decision.event.event_name,
    }
    behavior = deciding_behavior(decision)
    if behavior:
        point["forge_policy.behavior.id"] = behavior
    return point


def violation_points(decision: Decision) -> list[Attributes]:
    """One ``forge_policy.violations`` point per violation: behavior, level, shadow."""
    return [
        {
            "forge_policy.behavior.id": v.behavior_id,
            "forge_policy.level": v.level.label,
            "forge_policy.shadow": v.shadow,
        }
        for v in decision.violations
    ]


def overrides(decision: Decision) -> list[tuple[str, str]]:
    """``(behavior id, mechanism)`` of each block this decision let through: its ``override``
    records (``retry``, ``explicit``, ``user``), and the violations marked overridden that no
    record names."""
    found = [
        (str(record.get("behavior_id", "")), str(record.get("mechanism", "")))
        for record in decision.overrides
    ]
    named = {behavior for behavior, _ in found}
    found += [
        (v.behavior_id, v.overridden)
        for v in decision.violations
        if v.overridden and v.behavior_id not in named
    ]
    return found


def override_points(decision: Decision) -> list[Attributes]:
    """One ``forge_policy.overrides`` point per block let through: behavior and mechanism."""
    return [
        {"forge_policy.behavior.id": behavior, "forge_policy.override.by": by}
        for behavior, by in overrides(decision)
    ]
