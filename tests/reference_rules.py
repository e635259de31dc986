"""The pure parts of the reference model (:mod:`tests.reference_model`): escalation arithmetic,
call identity, conditions, ``applies_to``, message first lines and trigger runs, read from the
normalised behavior specs of :mod:`tests.strategies`. Written from SPEC §3 to §5; shares no
code with the evaluator.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from forge_policy.levels import Level
from forge_policy.templates import DEFAULT_TEMPLATES
from tests.machine_strategies import Call
from tests.strategies import MATCHERS, TOTAL

if TYPE_CHECKING:
    from tests.reference_model import SessionModel


def resolve(spec: dict, counter: int) -> Level:
    """SPEC §3.3: the level of the entry with the largest ``after`` <= counter, else default."""
    reached = [(after, label) for after, label in spec["escalation"] if after <= counter]
    return Level.parse(max(reached)[1] if reached else spec["default_level"])


def threshold(spec: dict, counter: int) -> int | None:
    return min((after for after, _ in spec["escalation"] if after > counter), default=None)


def identity(call: Call) -> tuple[str, ...]:
    """SPEC §4: tool name + canonical input (never the per-call id), or the prompt; in a
    subagent, with its id (issue 27: another agent's identical call is another call)."""
    agent = (call.agent_id,) if call.agent_id else ()
    if call.is_tool:
        return call.event_name, call.tool_name, json.dumps(call.inputs, sort_keys=True), *agent
    return call.event_name, call.prompt, *agent


def condition_holds(condition: dict, call: Call, flags: set[str], counter: int) -> bool:
    name, operator, value = condition["field"], condition["operator"], condition["value"]
    actual: object = {
        "x": call.inputs.get("x", ""),
        "prompt": call.prompt,
        "session.counter": counter,
        "session.flags.f1": "true" if "f1" in flags else "false",
    }[name]
    if operator == "equals":
        return str(actual) == value
    if operator == "contains":
        return value in str(actual)
    assert operator == "gte"
    return isinstance(actual, int) and actual >= value


def applies(spec: dict, call: Call, profile: str) -> bool:
    tools, agents, profiles = (spec["applies_to"][k] for k in ("tools", "agents", "profiles"))
    return (
        (not tools or not call.tool_name or call.tool_name in tools)
        and (not agents or (call.agent or "claude-code") in agents)
        and (not profiles or profile in profiles)
    )


def first_line(spec: dict, level: Level, counter: int, call: Call) -> str:
    """The first line of a violation's message, rendered from the spec's templates."""
    kind = (
        "nudge_template"
        if level <= Level.NUDGE
        else "warning_template"
        if level is Level.WARNING
        else "block_reason"
    )
    text = spec["templates"].get(kind, DEFAULT_TEMPLATES[kind])
    step = threshold(spec, counter)
    values = {
        "behavior_id": spec["id"],
        "behavior_name": spec["name"],
        "counter": counter,
        "tool_name": call.tool_name,
        "level": level.label,
        "hint": spec["hint"],
        "threshold": "max" if step is None else step,
    }
    for key, value in values.items():
        text = text.replace("{" + key + "}", str(value))
    text = " ".join(text.split()) if kind == "nudge_template" else text.strip()
    tag = f"[{spec['id']}]"  # issue 25: every message says which behavior spoke
    return text if text.startswith(tag) else f"{tag} {text}"


def run_triggers(spec: dict, call: Call, session: SessionModel, counter: int) -> int | None:
    """All triggers run (flag effects apply); the first violating one is returned."""
    fired = None
    for index, trigger in enumerate(spec["triggers"]):
        if trigger["event"] != call.event_name or (
            call.is_tool and call.tool_name not in MATCHERS[trigger["matcher"]]
        ):
            continue
        results = [condition_holds(c, call, session.flags, counter) for c in trigger["conditions"]]
        if results and not (all(results) if trigger["logic"] == "all" else any(results)):
            continue
        action, flag = trigger["action"], trigger.get("flag", "")
        if action == "set_flag":
            session.flags.add(flag)
        elif action == "accumulate":
            if "n" in call.inputs:
                session.totals[TOTAL] = session.totals.get(TOTAL, 0) + call.inputs["n"]
        elif action == "check_flag" and flag in session.flags:
            if trigger["on_present"] == "consume":
                session.flags.discard(flag)
        elif action == "evaluate" or trigger["on_absent"] == "violate":
            fired = index if fired is None else fired
    return fired
