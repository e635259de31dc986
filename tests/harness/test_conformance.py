"""Conformance: each harness's recorded payloads through the real ``forge-policy hook --harness X``
process, one test per outcome, asserting the exact JSON on stdout and exit code 0 (SPEC §8).

The behaviors are written against Claude Code's names (``matcher: Bash``, ``UserPromptSubmit``,
``Stop``); that they fire shows the adapters map Codex's ``Bash``, Gemini's
``run_shell_command``, Cursor's ``beforeShellExecution``, Copilot's ``bash`` and Antigravity's
``run_command`` onto them. Every text is the Claude Code hook's, word for word.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import behavior_yaml
from hookrun import Project

from tests.harness.conformance import COMMANDS, HARNESS_CATALOG, PROMPT, Texts, fixture


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path, HARNESS_CATALOG)


def run(project: Project, harness: str, name: str, event: str = "", **fill: str) -> Any:
    args = ["--harness", harness, *(["--event", event] if event else [])]
    out, err = project.run(fixture(harness, name, project, **fill), *args)
    assert "Traceback" not in err
    return out


def codex(t: Texts, outcome: str) -> Any:
    def deny(reason: str, summary: str) -> dict[str, Any]:
        specific = {"hookEventName": "PreToolUse", "permissionDecision": "deny"}
        return {
            "hookSpecificOutput": {**specific, "permissionDecisionReason": reason},
            "systemMessage": summary,
        }

    def advise(text: str) -> dict[str, Any]:
        context = {"hookEventName": "PreToolUse", "additionalContext": text}
        return {"systemMessage": text, "hookSpecificOutput": context}

    return {
        "allow": None,
        "nudge": advise(t.nudge),
        "warning": advise(t.warning),
        "soft_agent": deny(t.soft, "[softy] softy: refused"),
        "soft_user": deny(t.no_ask("OpenAI Codex CLI"), "[asker] asker: refused"),
        "hard": deny(t.hard, "[hardy] hardy: refused"),
    }[outcome]


def gemini(t: Texts, outcome: str) -> Any:
    def deny(reason: str, summary: str) -> dict[str, Any]:
        return {"decision": "deny", "reason": reason, "systemMessage": summary}

    return {
        "allow": None,
        "nudge": {"systemMessage": t.nudge},
        "warning": {"systemMessage": t.warning},
        "soft_agent": deny(t.soft, "[softy] softy: refused"),
        "soft_user": deny(t.no_ask("Gemini CLI"), "[asker] asker: refused"),
        "hard": deny(t.hard, "[hardy] hardy: refused"),
    }[outcome]


def cursor(t: Texts, outcome: str) -> Any:
    def deny(reason: str, summary: str) -> dict[str, Any]:
        return {"permission": "deny", "user_message": summary, "agent_message": reason}

    return {
        "allow": None,
        "nudge": {"user_message": t.nudge, "agent_message": t.nudge},
        "warning": {"user_message": t.warning, "agent_message": t.warning},
        "soft_agent": deny(t.soft, "[softy] softy: refused"),
        # beforeShellExecution enforces "ask"
        "soft_user": {"permission": "ask", "user_message": t.ask, "agent_message": t.ask},
        "hard": deny(t.hard, "[hardy] hardy: refused"),
    }[outcome]


def copilot(t: Texts, outcome: str) -> Any:
    def decide(decision: str, reason: str) -> dict[str, Any]:
        return {"permissionDecision": decision, "permissionDecisionReason": reason}

    return {
        "allow": None,
        "nudge": None,  # no output field shows advice
        "warning": None,
        "soft_agent": decide("deny", t.soft),
        "soft_user": decide("ask", t.ask),
        "hard": decide("deny", t.hard),
    }[outcome]


def antigravity(t: Texts, outcome: str) -> Any:
    no_opinion = {"decision": "ask"}  # Antigravity's own review flow; silence would block
    return {
        "allow": no_opinion,
        "nudge": no_opinion,
        "warning": no_opinion,
        "soft_agent": {"decision": "deny", "reason": t.soft},
        "soft_user": {"decision": "force_ask", "reason": t.ask},
        "hard": {"decision": "deny", "reason": t.hard},
    }[outcome]


def opencode(t: Texts, outcome: str) -> Any:
    def deny(reason: str, summary: str) -> dict[str, Any]:
        return {"decision": "deny", "reason": reason, "summary": summary}

    return {
        "allow": {"decision": "allow"},  # explicit: the plugin refuses a call without one
        "nudge": {"decision": "allow", "message": t.nudge},
        "warning": {"decision": "allow", "message": t.warning},
        "soft_agent": deny(t.soft, "[softy] softy: refused"),
        "soft_user": deny(t.no_ask("OpenCode"), "[asker] asker: refused"),
        "hard": deny(t.hard, "[hardy] hardy: refused"),
    }[outcome]


#: harness → (pre-tool fixture, --event, expected answers)
PRE_TOOL = {
    "codex": ("pre_tool_use", "", codex),
    "gemini": ("before_tool", "", gemini),
    "cursor": ("before_shell_execution", "", cursor),
    "copilot": ("pre_tool_use", "preToolUse", copilot),
    "antigravity": ("pre_tool_use", "PreToolUse", antigravity),
    "opencode": ("tool_execute_before", "", opencode),
}


@pytest.mark.parametrize("outcome", list(COMMANDS))
@pytest.mark.parametrize("harness", list(PRE_TOOL))
def test_every_outcome_before_a_shell_call(project: Project, harness: str, outcome: str) -> None:
    name, event, expected = PRE_TOOL[harness]
    out = run(project, harness, name, event, command=COMMANDS[outcome])
    assert out == expected(Texts(project.session), outcome)


def test_cursor_generic_pre_tool_event_cannot_ask_so_it_denies(project: Project) -> None:
    out = run(project, "cursor", "pre_tool_use", command="echo ask-me")
    reason = Texts(project.session).no_ask("Cursor")
    assert out == {
        "permission": "deny",
        "user_message": "[asker] asker: refused",
        "agent_message": reason,
    }


def test_copilot_pascal_case_payload(project: Project) -> None:
    out = run(project, "copilot", "PreToolUse", command="echo hard-me")
    assert out == {
        "permissionDecision": "deny",
        "permissionDecisionReason": Texts(project.session).hard,
    }


#: harness → (prompt fixture, --event, expected answer of a refused prompt)
PROMPTS = {
    "codex": ("user_prompt_submit", "", "block"),
    "gemini": ("before_agent", "", "deny"),
    "cursor": ("before_submit_prompt", "", "continue"),
    "copilot": ("user_prompt_submitted", "userPromptSubmitted", None),
}


@pytest.mark.parametrize("harness", list(PROMPTS))
def test_a_refused_prompt(project: Project, harness: str) -> None:
    name, event, kind = PROMPTS[harness]
    t = Texts(project.session)
    out = run(project, harness, name, event, prompt=PROMPT)
    summary = "[prompt-guard] prompt-guard: refused"
    assert (
        out
        == {
            "block": {"decision": "block", "reason": t.prompt, "systemMessage": summary},
            "deny": {"decision": "deny", "reason": t.prompt, "systemMessage": summary},
            "continue": {"continue": False, "user_message": t.prompt},
            None: None,  # Copilot CLI processes no userPromptSubmitted output
        }[kind]
    )
    assert project.counter("prompt-guard") == 1  # counted all the same


#: harness → (stop fixture, --event, expected answer of a refused stop)
STOPS = {
    "codex": ("stop", "", "block"),
    "gemini": ("after_agent", "", "deny"),
    "cursor": ("stop", "", "followup"),
    "copilot": ("agent_stop", "agentStop", "plain_block"),
}


@pytest.mark.parametrize("harness", list(STOPS))
def test_a_refused_stop(project: Project, harness: str) -> None:
    name, event, kind = STOPS[harness]
    t = Texts(project.session)
    out = run(project, harness, name, event)
    summary = "[stop-guard] stop-guard: refused"
    assert (
        out
        == {
            "block": {"decision": "block", "reason": t.stop, "systemMessage": summary},
            "deny": {"decision": "deny", "reason": t.stop, "systemMessage": summary},
            "followup": {"followup_message": t.stop},
            "plain_block": {"decision": "block", "reason": t.stop},
        }[kind]
    )


#: harness → (post-tool fixture, --event, expected answer after a call that broke a rule)
POSTS = {
    "codex": ("post_tool_use", "", "block"),
    "gemini": ("after_tool", "", "deny"),
    "cursor": ("post_tool_use", "", "context"),
    "copilot": ("post_tool_use", "postToolUse", None),
    "antigravity": ("post_tool_use", "PostToolUse", "plain_deny"),
    "opencode": ("tool_execute_after", "", "message"),
}


@pytest.mark.parametrize("harness", list(POSTS))
def test_a_block_after_the_call_ran_informs(project: Project, harness: str) -> None:
    name, event, kind = POSTS[harness]
    t = Texts(project.session)
    out = run(project, harness, name, event, command="echo post-me")
    summary = "[post-guard] post-guard: refused"
    assert (
        out
        == {
            "block": {"decision": "block", "reason": t.post, "systemMessage": summary},
            "deny": {"decision": "deny", "reason": t.post, "systemMessage": summary},
            "context": {"additional_context": t.post},
            "plain_deny": {"decision": "deny", "reason": t.post},
            "message": {"decision": "allow", "message": t.post},  # appended to the output
            None: None,
        }[kind]
    )


def test_codex_apply_patch_is_a_write_of_its_file(tmp_path: Path) -> None:
    env_guard = behavior_yaml(
        "env-guard",
        default_level="hard_block",
        triggers=(
            "    - event: PreToolUse\n      matcher: Write\n      conditions:\n"
            "        - {field: file_path, operator: ends_with, value: .env}\n"
        ),
        extra='rendering:\n  block_reason: "env-guard: refused"\n',
    )
    project = Project(tmp_path, {"env-guard": env_guard})
    out = run(project, "codex", "apply_patch")
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert out["systemMessage"] == "[env-guard] env-guard: refused"
