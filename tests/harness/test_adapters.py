"""The adapters as functions: every harness's payload, drawn at random in its own names, becomes
the same call in the catalog's vocabulary (so one behavior file governs every harness), and the
hook answers stay valid for the harness's schema."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given

import forge_policy as fp
from forge_policy.harness.base import HookAdapter
from forge_policy.harness.registry import get
from forge_policy.levels import Level
from forge_policy.testing import (
    antigravity_event,
    codex_event,
    copilot_event,
    cursor_event,
    gemini_event,
)
from forge_policy.testing.strategies import harness_events, harness_payloads

OTHERS = ("codex", "gemini", "cursor", "copilot", "antigravity")


def adapter(harness: str) -> HookAdapter:
    return get(harness).adapter


Drawn = tuple[str, dict[str, Any], str, dict[str, Any]]


def _round_trip(harness: str, drawn: Drawn) -> None:
    event_name, payload, tool, tool_input = drawn
    event = adapter(harness).to_event(payload, event_name)
    assert event.harness == harness
    assert event.session_id in ("s1", "s2")
    if tool:
        assert event.event_name == "PreToolUse"
        assert event.tool_name == tool
        for key, value in tool_input.items():
            assert event.tool_input[key] == value, (key, event.tool_input)
    else:
        assert (event.event_name, event.prompt) == ("UserPromptSubmit", tool_input["prompt"])


@given(harness_payloads("codex"))
def test_codex_calls_arrive_in_the_catalog_vocabulary(drawn: Drawn) -> None:
    _round_trip("codex", drawn)


@given(harness_payloads("gemini"))
def test_gemini_calls_arrive_in_the_catalog_vocabulary(drawn: Drawn) -> None:
    _round_trip("gemini", drawn)


@given(harness_payloads("cursor"))
def test_cursor_calls_arrive_in_the_catalog_vocabulary(drawn: Drawn) -> None:
    _round_trip("cursor", drawn)


@given(harness_payloads("copilot"))
def test_copilot_calls_arrive_in_the_catalog_vocabulary(drawn: Drawn) -> None:
    _round_trip("copilot", drawn)


@given(harness_payloads("antigravity", prompts=False))
def test_antigravity_calls_arrive_in_the_catalog_vocabulary(drawn: Drawn) -> None:
    _round_trip("antigravity", drawn)


@pytest.mark.parametrize("harness", OTHERS)
def test_every_rendered_answer_is_one_json_object_and_exit_0(harness: str) -> None:
    catalog = fp.builtin_catalog()
    evaluator = fp.Evaluator(catalog, clock=lambda: 1e9)

    @given(harness_events(harness))
    def check(event: fp.Event) -> None:
        decision = evaluator.evaluate(event)
        text, code = adapter(harness).render(decision, event)
        assert code == 0
        if text:
            assert isinstance(json.loads(text), dict) and "\n" not in text

    check()


def test_a_user_approval_block_becomes_a_deny_where_the_harness_cannot_ask() -> None:
    violation = fp.Violation(
        "b",
        "B",
        Level.SOFT_BLOCK,
        1,
        "no.\nOverriding needs the user's approval: the user is asked to allow this call.",
        override_mode="user",
    )
    for event, key in (
        (codex_event("Bash", command="x", session_id="s9"), "hookSpecificOutput"),
        (gemini_event("run_shell_command", command="x", session_id="s9"), "decision"),
    ):
        decision = fp.Decision(event, messages=[violation.message], blocking=violation)
        out = json.loads(adapter(event.harness).render(decision, event)[0])
        text = json.dumps(out)
        assert '"ask"' not in text and "deny" in text, out
        assert 'forge-policy override b --session s9 --reason \\"...\\"' in text
        assert key in out


def test_builders_make_each_harness_s_event() -> None:
    assert cursor_event("Shell", command="ls").tool_name == "Bash"
    assert (
        copilot_event("edit", path="/a", old_str="x", new_str="y").tool_input["old_string"] == "x"
    )
    read = cursor_event("Read", event="beforeReadFile", file_path="/p/.env")
    assert (read.tool_name, read.tool_input["file_path"]) == ("Read", "/p/.env")
    stop = antigravity_event("run_command", event="PostToolUse", CommandLine="ls")
    assert stop.event_name == "PostToolUse"
    assert cursor_event("Delete", path="/a").tool_name == "Delete"  # no catalog name: its own


#: Codex's output schemas (``codex-rs/hooks/schema/generated/*.command.output.schema.json``) have
#: ``additionalProperties: false``: an unknown key fails the hook, and Codex then runs the call.
#: event → (top-level keys, ``hookSpecificOutput`` keys or None when the event has none)
CODEX_OUTPUT = {
    "PreToolUse": (
        {"continue", "stopReason", "suppressOutput", "systemMessage", "hookSpecificOutput"},
        {
            "hookEventName",
            "additionalContext",
            "permissionDecision",
            "permissionDecisionReason",
            "updatedInput",
        },
    ),
    "PostToolUse": (
        {"continue", "decision", "reason", "stopReason", "suppressOutput", "systemMessage"}
        | {"hookSpecificOutput"},
        {"hookEventName", "additionalContext", "updatedMCPToolOutput", "updatedToolOutput"},
    ),
    "UserPromptSubmit": (
        {"continue", "decision", "reason", "stopReason", "suppressOutput", "systemMessage"}
        | {"hookSpecificOutput"},
        {"hookEventName", "additionalContext"},
    ),
    "Stop": (
        {"continue", "decision", "reason", "stopReason", "suppressOutput", "systemMessage"},
        None,
    ),
}


@pytest.mark.parametrize("event_name", list(CODEX_OUTPUT))
@pytest.mark.parametrize(
    ("level", "mode"),
    [
        (Level.NUDGE, "agent"),
        (Level.WARNING, "agent"),
        (Level.SOFT_BLOCK, "agent"),
        (Level.SOFT_BLOCK, "user"),
        (Level.HARD_BLOCK, "never"),
    ],
)
def test_codex_answers_only_use_fields_its_schemas_allow(
    event_name: str, level: Level, mode: str
) -> None:
    fields: dict[str, Any] = {"command": "x"}
    if event_name == "UserPromptSubmit":
        event = codex_event(event=event_name, prompt="hi")
    elif event_name == "Stop":
        event = codex_event(event=event_name)
    else:
        event = codex_event("Bash", event=event_name, **fields)
    violation = fp.Violation("b", "B", level, 1, "text", override_mode=mode)
    blocking = violation if level >= Level.SOFT_BLOCK else None
    decision = fp.Decision(event, messages=[violation.message], blocking=blocking)
    out = json.loads(adapter("codex").render(decision, event)[0])
    top, specific = CODEX_OUTPUT[event_name]
    assert set(out) <= top, out
    if "hookSpecificOutput" in out:
        assert specific is not None and set(out["hookSpecificOutput"]) <= specific, out
        assert out["hookSpecificOutput"]["hookEventName"] == event_name
        assert out["hookSpecificOutput"].get("permissionDecision") in (None, "deny")
    if blocking is not None:  # a block is never expressed with a field Codex would ignore
        assert "deny" in json.dumps(out) or out.get("decision") == "block", out


def test_a_missing_session_is_derived_only_when_the_caller_keeps_the_note() -> None:
    # the hook passes notes= (and audits them); a caller that does not gets the EventError
    payload: dict[str, Any] = {"hook_event_name": "beforeShellExecution", "command": "ls"}
    payload["workspace_roots"] = ["/p"]
    cursor = adapter("cursor")
    with pytest.raises(fp.EventError, match="session_id"):
        cursor.to_event(payload)
    notes: list[dict[str, Any]] = []
    event = cursor.to_event(payload, notes=notes)
    assert event.session_id.startswith("derived-") and event.cwd == "/p"
    [note] = notes
    assert (note["code"], note["derived_from"]) == ("session_id_derived", "cwd")
    assert note["session_id"] == event.session_id
    assert cursor.to_event({**payload, "conversation_id": "c"}, notes=notes).session_id == "c"
    assert len(notes) == 1  # nothing derived, nothing noted
