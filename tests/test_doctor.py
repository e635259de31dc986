"""``forge-policy doctor``: per harness, which active behaviors it enforces, which differently,
which not and why; and ``validate``'s warning for tools no supported harness has."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import behavior_yaml, write_catalog

from tests.cli_support import Project

USER = "soft_block\n    override: user"
CATALOG = {
    "shell-ask": behavior_yaml("shell-ask", default_level=USER),
    "readers": behavior_yaml(
        "readers", triggers="    - event: PreToolUse\n      matcher: Read|Grep|LS\n"
    ),
    "shell-and-read": behavior_yaml(
        "shell-and-read", triggers="    - event: PreToolUse\n      matcher: Bash|Read\n"
    ),
    "prompt-guard": behavior_yaml(
        "prompt-guard", triggers="    - event: UserPromptSubmit\n", default_level="hard_block"
    ),
    "stop-check": behavior_yaml(
        "stop-check", triggers="    - event: Stop\n", default_level="soft_block"
    ),
    "tool-and-prompt": behavior_yaml(
        "tool-and-prompt",
        triggers="    - event: PreToolUse\n      matcher: Bash\n    - event: UserPromptSubmit\n",
    ),
    "git-only": behavior_yaml("git-only", triggers="    - event: pre-commit\n"),
    "switched-off": behavior_yaml("switched-off"),
}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = Project(tmp_path)
    write_catalog(project.root / "behaviors", CATALOG, {"switched-off": False})
    return project


def doctor(project: Project, *harnesses: str) -> dict[str, Any]:
    args = [a for h in harnesses for a in ("--harness", h)]
    report: dict[str, Any] = project.json("doctor", *args)
    return report


def codes(entry: dict[str, Any], kind: str) -> dict[str, list[str]]:
    return {b: [f["code"] for f in found] for b, found in entry[kind].items()}


def test_each_harness_says_what_it_enforces_and_why_not(project: Project) -> None:
    report = doctor(project, "claude-code", "codex", "copilot", "antigravity")
    assert report["behaviors"] == 6  # neither the git-only nor the disabled one
    claude, codex, copilot, antigravity = report["harnesses"]
    assert claude["enforced"] == [
        *("shell-ask", "readers", "shell-and-read", "prompt-guard", "stop-check"),
        "tool-and-prompt",
    ]
    assert claude["limited"] == claude["not_enforced"] == {}
    assert codes(codex, "not_enforced") == {"readers": ["tool-missing"]}
    assert codes(codex, "limited") == {
        "shell-ask": ["ask-as-deny"],
        "shell-and-read": ["some-tools-missing"],
    }
    assert codex["limited"]["shell-ask"][0]["reason"] == (
        "override: user is enforced as a deny: OpenAI Codex CLI cannot ask the user"
    )
    assert codex["not_enforced"]["readers"][0]["reason"] == (
        "names tools OpenAI Codex CLI does not have: Grep, LS, Read"
    )
    assert codes(copilot, "not_enforced") == {"prompt-guard": ["cannot-block-prompt"]}
    assert codes(copilot, "limited") == {"readers": ["some-tools-missing"]}  # no LS
    assert codes(antigravity, "not_enforced") == {
        "prompt-guard": ["event-missing"],
        "stop-check": ["event-missing"],  # it has Stop, but init hooks its tool events only
    }
    assert antigravity["not_enforced"]["stop-check"][0]["reason"] == (
        "Google Antigravity CLI is not hooked on Stop event"
    )
    assert codes(antigravity, "limited") == {"tool-and-prompt": ["some-events-missing"]}
    assert antigravity["not_enforced"]["prompt-guard"][0]["reason"] == (
        "Google Antigravity CLI has no UserPromptSubmit event"
    )
    for entry in report["harnesses"]:  # none is set up here: assessed as init would set it up
        assert entry["installed"] is False and entry["events"] == []
        assert f"not set up: run forge-policy init --harness {entry['harness']}" in entry["notes"]


def test_doctor_lists_the_harnesses_set_up_or_detected(project: Project) -> None:
    assert [h["harness"] for h in doctor(project)["harnesses"]] == ["claude-code"]  # as init
    (project.path / ".cursor").mkdir()
    [cursor] = doctor(project)["harnesses"]
    assert (cursor["harness"], cursor["detected"], cursor["installed"]) == ("cursor", True, False)
    project.run("init", "--harness", "codex")
    listed = doctor(project)["harnesses"]
    assert [h["harness"] for h in listed] == ["codex", "cursor"]
    assert listed[0]["installed"] is True and listed[0]["events"][0] == "PreToolUse"
    # Cursor is set up with preToolUse, where it does not ask: the user's block is a deny
    project.run("init", "--harness", "cursor")
    cursor = doctor(project)["harnesses"][1]
    assert codes(cursor, "limited")["shell-ask"] == ["ask-as-deny"]
    assert not any("crashes" in note for note in cursor["notes"])  # init wrote failClosed


def test_a_partly_set_up_harness_says_which_hooks_are_missing(project: Project) -> None:
    project.run("init", "--harness", "gemini")
    path = project.path / ".gemini" / "settings.json"
    settings = json.loads(path.read_text())
    del settings["hooks"]["BeforeAgent"]
    path.write_text(json.dumps(settings))
    [gemini] = doctor(project)["harnesses"]
    assert "no hook on BeforeAgent: run forge-policy init --harness gemini" in gemini["notes"]
    assert codes(gemini, "not_enforced")["prompt-guard"] == ["event-missing"]
    assert gemini["not_enforced"]["prompt-guard"][0]["reason"] == (
        "Gemini CLI is not hooked on UserPromptSubmit event"
    )


def test_the_text_report(project: Project) -> None:
    project.run("init", "--harness", "codex")
    out = project.run("doctor").stdout.splitlines()
    assert out[0] == (
        "OpenAI Codex CLI (codex): .codex/hooks.json, hooked on PreToolUse, PostToolUse, "
        "SessionStart, UserPromptSubmit, Stop"
    )
    assert out[1] == "  enforces 3 of 6 active behaviors"
    assert "  limited:" in out and "  not enforced:" in out
    assert "    readers: names tools OpenAI Codex CLI does not have: Grep, LS, Read" in out
    assert out[-1].startswith("  note: OpenAI Codex CLI lets the call through when the hook")


def test_validate_warns_of_tools_no_harness_has(project: Project) -> None:
    typos = {
        "typos": behavior_yaml(
            "typos",
            triggers="    - event: PreToolUse\n      matcher: Shell|Bsh|Bash|mcp__gh__pr\n",
            extra="applies_to:\n  tools: [run_shell_command, Bash]\n",  # the trigger can fire
        )
    }
    write_catalog(project.path / "mine", typos)
    result = project.run("validate", "mine")  # lints: the exit code stays 0 without --strict
    where = "mine/typos/behavior.yaml"
    assert result.stdout.splitlines() == [
        f"warning: {where}:10:16: policy.triggers[0].matcher: no supported harness has a tool "
        "'Bsh'; did you mean 'Bash'?",
        f"warning: {where}:10:16: policy.triggers[0].matcher: no supported harness has a tool "
        "'Shell' (Cursor's 'Shell' is 'Bash' in the catalog's vocabulary)",
        f"warning: {where}:17:10: applies_to.tools: no supported harness has a tool "
        "'run_shell_command' (Gemini CLI's 'run_shell_command' is 'Bash' in the catalog's "
        "vocabulary)",
        "ok: mine: 1 behaviors, 1 enabled, 3 warnings",
    ]
    assert result.returncode == 0 and result.stderr == ""
    report = project.json("validate", "mine")
    assert len(report["warnings"]) == 3 and report["ok"] is True
    project.run("validate", "--strict", "mine", check=1)
    assert project.run("validate").stderr == ""  # the project's catalog names known tools


def test_an_entry_without_its_fail_closed_key_is_flagged(project: Project) -> None:
    project.run("init", "--harness", "claude-code", "--harness", "cursor")
    assert [h["hook_findings"] for h in doctor(project)["harnesses"]] == [[], []]
    claude = project.path / ".claude" / "settings.json"
    settings = json.loads(claude.read_text())
    [group] = settings["hooks"]["PreToolUse"]
    group["hooks"][0]["onFailure"] = "continue"  # the user's own choice, kept by a re-init
    claude.write_text(json.dumps(settings))
    cursor = project.path / ".cursor" / "hooks.json"
    hooks = json.loads(cursor.read_text())
    del hooks["hooks"]["preToolUse"][0]["failClosed"]
    cursor.write_text(json.dumps(hooks))

    by_name = {h["harness"]: h["hook_findings"] for h in doctor(project)["harnesses"]}
    assert by_name["claude-code"] == [
        {
            "code": "fails-open",
            "reason": '.claude/settings.json: forge-policy\'s PreToolUse hook has no "onFailure":'
            ' "block": Claude Code lets the call through when the hook cannot start or times out;'
            " run forge-policy init --harness claude-code",
        }
    ]
    assert [f["code"] for f in by_name["cursor"]] == ["fails-open"]
    assert '"failClosed": true' in by_name["cursor"][0]["reason"]
    out = project.run("doctor").stdout.splitlines()
    assert (
        "  fails-open: .claude/settings.json: forge-policy's PreToolUse hook has no"
        in "\n".join(out)
    )

    project.run("init", "--harness", "claude-code", "--harness", "cursor")
    by_name = {h["harness"]: h["hook_findings"] for h in doctor(project)["harnesses"]}
    assert by_name["cursor"] == []  # re-init puts the missing key back
    assert [f["code"] for f in by_name["claude-code"]] == ["fails-open"]  # "continue" is kept
