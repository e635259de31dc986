"""The Claude Code renderer: the exact JSON for every level on every kind of event (SPEC §8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import behavior_yaml, write_catalog

import forge_policy as fp
from forge_policy.levels import Level
from forge_policy.render.claude_code import (
    CONTEXT_EVENTS,
    DECISION_EVENTS,
    PERMISSION_EVENTS,
    render,
)

NUDGE = "Search First (1): Write with no search first"
WARN = "[search-first] 3 writes without a search.\nDo instead: Grep first"
BLOCK = "[agent-shield] Refused: .env holds secrets.\nDo instead: ask the user"
HARD = "[no-destructive-git] Refused: force push.\nDo instead: git revert"
USER_BLOCK = (
    "[agent-shield] Reading .env needs approval.\n"
    "Overriding needs the user's approval: the user is asked to allow this call."
)


def violation(
    level: Level, message: str, behavior_id: str = "b", override_mode: str | None = None
) -> fp.Violation:
    mode = {} if override_mode is None else {"override_mode": override_mode}
    return fp.Violation(behavior_id, behavior_id, level, 1, message, **mode)


def decision(
    event_name: str = "PreToolUse",
    shown: tuple[fp.Violation, ...] = (),
    blocking: fp.Violation | None = None,
    overrides: tuple[dict[str, Any], ...] = (),
) -> fp.Decision:
    event = fp.Event(event_name, "s1", tool_name="Write" if "Tool" in event_name else "")
    messages = ([blocking.message] if blocking else []) + [v.message for v in shown]
    violations = [*shown, *([blocking] if blocking else [])]
    return fp.Decision(event, violations, messages, blocking=blocking, overrides=overrides)


def out(d: fp.Decision, **kw: Any) -> dict[str, Any]:
    text, code = render(d, **kw)
    assert code == 0
    assert "\n" not in text  # one JSON line
    parsed: dict[str, Any] = json.loads(text)
    return parsed


def test_nothing_to_say_is_empty_stdout() -> None:
    assert render(decision()) == ("", 0)
    silent = violation(Level.SILENT, "")
    assert render(fp.Decision(decision().event, [silent], [])) == ("", 0)


def test_nudge_on_pre_tool_use() -> None:
    assert out(decision(shown=(violation(Level.NUDGE, NUDGE),))) == {
        "systemMessage": NUDGE,
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": NUDGE},
    }


def test_warning_and_nudge_are_merged_with_a_blank_line() -> None:
    d = decision(shown=(violation(Level.NUDGE, NUDGE), violation(Level.WARNING, WARN)))
    merged = f"{NUDGE}\n\n{WARN}"
    assert out(d) == {
        "systemMessage": merged,
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": merged},
    }


@pytest.mark.parametrize("event_name", sorted(CONTEXT_EVENTS))
def test_advice_carries_additional_context_where_the_event_takes_it(event_name: str) -> None:
    assert out(decision(event_name, shown=(violation(Level.WARNING, WARN),))) == {
        "systemMessage": WARN,
        "hookSpecificOutput": {"hookEventName": event_name, "additionalContext": WARN},
    }


@pytest.mark.parametrize("event_name", ["Stop", "SubagentStop", "SessionEnd", "PreCompact"])
def test_advice_elsewhere_is_a_system_message_only(event_name: str) -> None:
    # on Stop, additionalContext would make the conversation continue: not advice
    assert out(decision(event_name, shown=(violation(Level.NUDGE, NUDGE),))) == {
        "systemMessage": NUDGE
    }


def test_soft_block_agent_override_denies_with_reason_and_summary() -> None:
    d = decision(blocking=violation(Level.SOFT_BLOCK, BLOCK))
    assert out(d) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": BLOCK,
        },
        "systemMessage": "[agent-shield] Refused: .env holds secrets.",
    }


def test_soft_block_user_override_asks() -> None:
    d = decision(blocking=violation(Level.SOFT_BLOCK, USER_BLOCK, override_mode="user"))
    assert out(d) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": USER_BLOCK,
        },
        "systemMessage": "[agent-shield] Reading .env needs approval.",
    }


def _user(behavior_id: str, **kw: Any) -> str:
    text = behavior_yaml(behavior_id, default_level="soft_block", **kw)
    return text.replace(
        "    default_level: soft_block", "    default_level: soft_block\n    override: user"
    )


def test_the_violations_override_mode_decides_ask_not_its_prose() -> None:
    """The renderer never guesses the override mode from the message: a ``user`` block with
    plain text asks, an ``agent`` block whose text reads like a user block denies (the renderer
    is given no catalog to look the behavior up in)."""
    asks = decision(blocking=violation(Level.SOFT_BLOCK, "plain text", "denies", "user"))
    denies = decision(blocking=violation(Level.SOFT_BLOCK, USER_BLOCK, "asks", "agent"))
    assert out(asks)["hookSpecificOutput"]["permissionDecision"] == "ask"
    assert out(denies)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_the_evaluator_gives_the_violation_its_behaviors_override_mode(tmp_path: Path) -> None:
    folder = write_catalog(tmp_path / "c", {"asks": _user("asks")})
    ev = fp.Evaluator(fp.load_catalog(folder))
    d = ev.evaluate(fp.Event("PreToolUse", "s1", tool_name="Bash", tool_input={"command": "x"}))
    assert d.blocking is not None and d.blocking.override_mode == "user"
    assert out(d)["hookSpecificOutput"]["permissionDecision"] == "ask"


def test_hard_block_denies_for_good() -> None:
    d = decision(blocking=violation(Level.HARD_BLOCK, HARD))
    assert out(d) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": f"{HARD}\nThis block cannot be overridden.",
        },
        "systemMessage": "[no-destructive-git] Refused: force push.",
        "override_allowed": False,
    }


def test_hard_block_reason_is_not_repeated_when_it_already_says_so() -> None:
    text = "[x] No. This block cannot be overridden."
    reason = out(decision(blocking=violation(Level.HARD_BLOCK, text)))
    assert reason["hookSpecificOutput"]["permissionDecisionReason"] == text


def test_a_block_comes_first_and_earlier_nudges_follow() -> None:
    d = decision(
        shown=(violation(Level.NUDGE, NUDGE),), blocking=violation(Level.SOFT_BLOCK, BLOCK)
    )
    reason = out(d)["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason == f"{BLOCK}\n\n{NUDGE}"


@pytest.mark.parametrize("event_name", ["UserPromptSubmit", "Stop", "SubagentStop"])
def test_decision_events_block_with_decision_block(event_name: str) -> None:
    assert out(decision(event_name, blocking=violation(Level.SOFT_BLOCK, BLOCK))) == {
        "decision": "block",
        "reason": BLOCK,
        "systemMessage": "[agent-shield] Refused: .env holds secrets.",
    }


def test_hard_block_on_a_prompt_blocks_and_says_no_override() -> None:
    assert out(decision("UserPromptSubmit", blocking=violation(Level.HARD_BLOCK, HARD))) == {
        "decision": "block",
        "reason": f"{HARD}\nThis block cannot be overridden.",
        "systemMessage": "[no-destructive-git] Refused: force push.",
        "override_allowed": False,
    }


def test_post_tool_use_block_tells_the_model_the_tool_already_ran() -> None:
    assert out(decision("PostToolUse", blocking=violation(Level.SOFT_BLOCK, BLOCK))) == {
        "decision": "block",
        "reason": f"The tool call already ran, but it broke a policy.\n{BLOCK}",
        "systemMessage": "[agent-shield] Refused: .env holds secrets.",
    }


def test_permission_request_denies_with_its_own_shape_and_leaves_ask_to_the_user() -> None:
    assert out(decision("PermissionRequest", blocking=violation(Level.HARD_BLOCK, HARD))) == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {
                "behavior": "deny",
                "message": f"{HARD}\nThis block cannot be overridden.",
            },
        },
        "systemMessage": "[no-destructive-git] Refused: force push.",
        "override_allowed": False,
    }
    user_block = violation(Level.SOFT_BLOCK, USER_BLOCK, override_mode="user")
    ask = decision("PermissionRequest", blocking=user_block)
    assert out(ask) == {"systemMessage": USER_BLOCK}


def test_teammate_idle_stops_with_continue_false() -> None:
    assert out(decision("TeammateIdle", blocking=violation(Level.SOFT_BLOCK, BLOCK))) == {
        "continue": False,
        "stopReason": BLOCK,
        "systemMessage": "[agent-shield] Refused: .env holds secrets.",
    }


def test_events_that_cannot_block_get_the_reason_as_advice() -> None:
    assert out(decision("SessionStart", blocking=violation(Level.SOFT_BLOCK, BLOCK))) == {
        "systemMessage": BLOCK,
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": BLOCK},
    }


def test_an_override_by_retry_is_announced_to_the_user() -> None:
    record = {"behavior_id": "search-first", "mechanism": "retry"}
    note = "[search-first] Let through by an override (retry); recorded in the audit log."
    assert out(decision(overrides=(record,))) == {
        "systemMessage": note,
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": note},
    }


@pytest.mark.parametrize(
    "event_name", sorted(PERMISSION_EVENTS | DECISION_EVENTS | CONTEXT_EVENTS | {"Notification"})
)
@pytest.mark.parametrize("level", [Level.NUDGE, Level.WARNING, Level.SOFT_BLOCK, Level.HARD_BLOCK])
def test_every_answer_names_its_event_and_uses_known_keys(event_name: str, level: Level) -> None:
    v = violation(level, BLOCK)
    d = decision(event_name, blocking=v) if level.blocks else decision(event_name, shown=(v,))
    answer = out(d)
    assert set(answer) <= {
        "systemMessage",
        "hookSpecificOutput",
        "decision",
        "reason",
        "continue",
        "stopReason",
        "override_allowed",
    }
    if "hookSpecificOutput" in answer:
        assert answer["hookSpecificOutput"]["hookEventName"] == event_name
    assert answer.get("override_allowed", False) is False
    assert ("override_allowed" in answer) == (level is Level.HARD_BLOCK)


def _bypassing(command: str = "ls") -> fp.Event:
    return fp.Event(
        "PreToolUse",
        "s1",
        tool_name="Bash",
        tool_input={"command": command},
        permission_mode="bypassPermissions",
    )


@pytest.mark.parametrize(
    ("level", "override", "expected"),
    [("soft_block", "user", None), ("soft_block", "agent", "deny"), ("hard_block", "", "deny")],
)
def test_bypass_permissions_turns_asks_into_allow_but_never_downgrades_a_deny(
    tmp_path: Path, level: str, override: str, expected: str | None
) -> None:
    text = _user("rule") if override == "user" else behavior_yaml("rule", default_level=level)
    ev = fp.Evaluator(fp.load_catalog(write_catalog(tmp_path / "c", {"rule": text})))
    answer = out(ev.evaluate(_bypassing()))
    specific = answer["hookSpecificOutput"]
    assert specific.get("permissionDecision") == expected
    if expected is None:
        assert (
            "Allowed without asking: permission_mode is bypassPermissions"
            in (answer["systemMessage"])
        )
        assert specific["additionalContext"] == answer["systemMessage"]
