"""MCP tool calls through the real ``forge-policy hook`` process (issue 27): the built-in catalog
judges ``mcp__shell__run`` as ``Bash``, ``mcp__fs__write_file`` as ``Write`` and
``mcp__fs__read_file`` as ``Read``, under Claude Code, Codex, Cursor and Gemini CLI names; a
command or written path that cannot be read never turns into an allow; a catalog's MCP globs
give every outcome (nudge, warning, soft block overridden by retry, hard block)."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from helpers import behavior_yaml
from hookrun import SCRIPT, Project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A project with no .forge/behaviors: the built-in catalog applies."""
    p = Project(tmp_path, catalog={})
    p.env["HOME"] = str(tmp_path / "home")
    return p


def mcp(project: Project, name: str, **tool_input: Any) -> dict[str, Any]:
    """A Claude Code PreToolUse of MCP tool ``name`` (with its ``mcp_server``)."""
    server = name.split("__")[1]
    return project.payload(
        tool_name=name, tool_input=tool_input, mcp_server={"name": server, "source": "project"}
    )


def verdict(out: dict[str, Any] | None) -> tuple[str, str]:
    """Claude Code's ``(permissionDecision, reason)``; ``("allow", "")`` for no answer."""
    if out is None:
        return "allow", ""
    specific = out.get("hookSpecificOutput", {})
    return specific.get("permissionDecision", "allow"), specific.get("permissionDecisionReason", "")


# --- the built-in catalog, Claude Code names ------------------------------------------------


@pytest.mark.parametrize(
    ("tool_input", "behavior"),
    [
        ({"command": "git push --force origin main"}, "no-destructive-git"),
        ({"cmd": ["git", "push", "--force"]}, "no-destructive-git"),  # an argv list
        ({"command": "bash -c 'git reset --hard HEAD~3'"}, "no-destructive-git"),
        ({"script": "rm -rf /"}, "dangerous-commands"),
        ({"shell_command": "cd / && rm -rf *"}, "dangerous-commands"),
    ],
)
def test_a_shell_server_s_command_is_judged_as_bash(
    project: Project, tool_input: dict[str, Any], behavior: str
) -> None:
    out, _ = project.run(mcp(project, "mcp__shell__run", **tool_input))
    decision, reason = verdict(out)
    assert decision == "deny" and reason.startswith(f"[{behavior}] Refused"), reason
    assert out is not None and out["override_allowed"] is False
    (record,) = [r for r in project.audit() if r["kind"] == "block"]
    # the log names the tool the agent called, and how it was read
    assert record["tool_name"] == "mcp__shell__run" and record["reading"] == "shell"
    assert record["behavior_id"] == behavior


def test_an_ordinary_command_passes_and_is_seen_with_its_reading(project: Project) -> None:
    out, _ = project.run(mcp(project, "mcp__shell__run", command="ls -la"))
    assert verdict(out) == ("allow", "")
    (seen,) = [r for r in project.audit(seen=True) if r["kind"] == "seen"]
    assert seen["tool_name"] == "mcp__shell__run" and seen["reading"] == "shell"
    assert "ls" not in json.dumps(seen)  # never the input


@pytest.mark.parametrize(
    "tool_input",
    [
        {"command": {"program": "git", "args": ["push", "--force"]}},  # a nested object
        {"command": "ls", "cmd": "git push --force"},  # two candidates that disagree
        {"command": ["git", 3]},  # an argv that is not all strings
        {"command": "x" * 70000},  # too long to read
        {"code": "git push --force"},  # a shell tool with no command argument it knows
    ],
)
def test_a_shell_call_whose_command_cannot_be_read_is_refused(
    project: Project, tool_input: dict[str, Any]
) -> None:
    out, _ = project.run(mcp(project, "mcp__terminal__execute", **tool_input))
    decision, reason = verdict(out)
    assert decision == "deny", out
    assert "could not read this call in full" in reason
    (record,) = [r for r in project.audit() if r["kind"] == "block"]
    assert record["reading"] == "unreadable" and record["undetermined"]


@pytest.mark.parametrize(
    "path",
    [
        ".forge/config.yaml",
        "src/../.forge/behaviors/index.yaml",
        "file://{dir}/.forge/config.yaml",
        "{dir}/.forge/config.yaml",
    ],
)
def test_an_mcp_write_into_the_governance_is_refused(project: Project, path: str) -> None:
    target = path.format(dir=project.dir)
    call = mcp(project, "mcp__fs__write_file", path=target, content="floor: off\n")
    decision, reason = verdict(project.run(call)[0])
    assert decision == "deny" and reason.startswith("[protect-governance] Refused"), reason


@pytest.mark.parametrize("name", ["mcp__fs__move_file", "mcp__FS__Move_File"])
def test_a_move_onto_the_governance_is_refused_by_either_path(project: Project, name: str) -> None:
    call = mcp(project, name, source="notes.txt", destination=".forge/config.yaml")
    assert verdict(project.run(call)[0])[0] == "deny"


def test_a_write_whose_path_cannot_be_read_is_refused(project: Project) -> None:
    call = mcp(project, "mcp__fs__write_file", path={"dir": ".forge", "name": "x"}, content="")
    decision, reason = verdict(project.run(call)[0])
    assert decision == "deny" and "[protect-governance]" in reason
    assert "could not read this call in full" in reason


def test_an_mcp_write_to_the_hook_settings_is_refused_like_write(project: Project) -> None:
    settings = project.dir / ".claude" / "settings.json"
    settings.parent.mkdir()
    hook = {"type": "command", "command": "forge-policy hook"}
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [hook]}]}}))
    builtin = project.payload(tool_name="Write", tool_input={"file_path": str(settings),
                                                              "content": "{}"})  # fmt: skip
    assert verdict(project.run(builtin)[0])[0] == "deny"
    call = mcp(project, "mcp__fs__write_file", filePath=str(settings), content="{}")
    decision, reason = verdict(project.run(call)[0])
    assert decision == "deny" and reason.startswith("[protect-governance]"), reason


def test_an_mcp_read_of_an_env_file_asks_the_user_like_read(project: Project) -> None:
    (project.dir / ".env").write_text("API_TOKEN=abc\n")
    call = mcp(project, "mcp__fs__read_file", path=".env")
    decision, reason = verdict(project.run(call)[0])
    assert decision == "ask" and reason.startswith("[agent-shield-ask]"), reason


def test_an_mcp_read_of_a_private_key_is_refused(project: Project) -> None:
    call = mcp(project, "mcp__filesystem__read_text_file", path="file:///home/u/.ssh/id_rsa")
    decision, reason = verdict(project.run(call)[0])
    assert decision == "deny" and reason.startswith("[agent-shield]"), reason


def test_a_tool_the_reader_cannot_place_is_governed_by_name_only(project: Project) -> None:
    call = mcp(project, "mcp__github__create_issue", title="git push --force", body="rm -rf /")
    assert verdict(project.run(call)[0]) == ("allow", "")
    (seen,) = [r for r in project.audit(seen=True) if r["kind"] == "seen"]
    assert seen["reading"] == "none"


# --- other harnesses' names -------------------------------------------------------------------


def test_cursor_before_mcp_execution(project: Project) -> None:
    payload = {
        "conversation_id": project.session,
        "generation_id": "g1",
        "hook_event_name": "beforeMCPExecution",
        "workspace_roots": [str(project.dir)],
        "tool_name": "run_command",
        "tool_input": json.dumps({"command": "git push --force"}),  # Cursor sends JSON text
        "mcp_server_name": "shell",
        "command": "npx shell-mcp",
    }
    out, _ = project.run(payload, "--harness", "cursor")
    assert out is not None and out["permission"] == "deny"
    assert "[no-destructive-git]" in out["agent_message"]
    (record,) = [r for r in project.audit() if r["kind"] == "block"]
    assert record["tool_name"] == "mcp__shell__run_command"
    harmless = {**payload, "tool_input": json.dumps({"command": "ls"})}
    assert project.run(harmless, "--harness", "cursor")[0] is None


def test_cursor_pre_tool_use_reads_an_mcp_tool_without_its_server(project: Project) -> None:
    payload = {
        "conversation_id": project.session,
        "hook_event_name": "preToolUse",
        "workspace_roots": [str(project.dir)],
        "cwd": str(project.dir),
        "tool_use_id": "tu1",
        "tool_name": "MCP:write_file",
        "tool_input": {"path": ".forge/config.yaml", "content": "floor: off\n"},
    }
    out, _ = project.run(payload, "--harness", "cursor")
    assert out is not None and out["permission"] == "deny"
    assert "[protect-governance]" in out["agent_message"]
    (record,) = [r for r in project.audit() if r["kind"] == "block"]
    assert (record["tool_name"], record["reading"]) == ("mcp__write_file", "write")


def test_cursor_asks_before_an_mcp_read_of_an_env_file(project: Project) -> None:
    (project.dir / ".env").write_text("API_TOKEN=abc\n")
    payload = {
        "conversation_id": project.session,
        "hook_event_name": "beforeMCPExecution",
        "workspace_roots": [str(project.dir)],
        "tool_name": "read_file",
        "tool_input": json.dumps({"path": str(project.dir / ".env")}),
        "mcp_server_name": "filesystem",
    }
    out, _ = project.run(payload, "--harness", "cursor")
    assert out is not None and out["permission"] == "ask"


def test_codex_mcp_names_are_claude_code_s(project: Project) -> None:
    payload = {
        "session_id": project.session,
        "turn_id": "t1",
        "transcript_path": None,
        "cwd": str(project.dir),
        "hook_event_name": "PreToolUse",
        "model": "gpt-5",
        "permission_mode": "default",
        "tool_name": "mcp__fs__write_file",
        "tool_use_id": f"call_{uuid.uuid4().hex[:8]}",
        "tool_input": {"path": ".forge/config.yaml", "content": "floor: off\n"},
    }
    out, _ = project.run(payload, "--harness", "codex")
    assert out is not None and "[protect-governance]" in json.dumps(out)


@pytest.mark.parametrize(
    "extra",
    [
        {
            "tool_name": "mcp_my_shell_run",
            "mcp_context": {"server_name": "my_shell", "tool_name": "run"},
        },
        {"tool_name": "mcp_shell_run"},  # no mcp_context: split at the first underscore
    ],
)
def test_gemini_mcp_names_are_mapped(project: Project, extra: dict[str, Any]) -> None:
    payload = {
        "session_id": project.session,
        "transcript_path": "",
        "cwd": str(project.dir),
        "hook_event_name": "BeforeTool",
        "timestamp": "2026-12-02T00:00:00Z",
        "tool_input": {"command": "git push --force"},
        **extra,
    }
    out, _ = project.run(payload, "--harness", "gemini")
    assert out is not None and out["decision"] == "deny"
    assert "[no-destructive-git]" in out["reason"]
    (record,) = [r for r in project.audit() if r["kind"] == "block"]
    assert record["tool_name"].startswith("mcp__") and record["tool_name"].endswith("__run")


# --- a catalog's MCP globs: every outcome -------------------------------------------------------


def glob_rule(behavior_id: str, level: str, matcher: str, word: str) -> str:
    triggers = (
        f'    - event: PreToolUse\n      matcher: "{matcher}"\n      conditions:\n'
        f"        - {{field: content, operator: contains, value: {word}}}\n"
    )
    return behavior_yaml(
        behavior_id,
        default_level=level,
        triggers=triggers,
        extra=(
            "rendering:\n"
            f'  nudge_template: "{behavior_id}: {{tool_name}}"\n'
            f'  warning_template: "{behavior_id}: warning on {{tool_name}}"\n'
            f'  block_reason: "{behavior_id}: refused {{tool_name}}"\n'
        ),
    )


GLOBS = {
    "nudger": glob_rule("nudger", "nudge", "mcp__*__write*", "nudge-me"),
    "warner": glob_rule("warner", "warning", "mcp__notes__*", "warn-me"),
    "softy": glob_rule("softy", "soft_block", "Write|mcp__*__write*", "soft-me"),
    "hardy": glob_rule("hardy", "hard_block", "mcp__*__write*", "hard-me"),
}


@pytest.fixture
def globbed(tmp_path: Path) -> Project:
    return Project(tmp_path, catalog=GLOBS)


def write_call(project: Project, name: str, content: str) -> dict[str, Any]:
    return mcp(project, name, path="notes/today.md", content=content)


def test_a_glob_nudges_and_names_the_tool_as_read(globbed: Project) -> None:
    out, _ = globbed.run(write_call(globbed, "mcp__fs__write_file", "nudge-me"))
    assert out is not None and "systemMessage" in out
    assert "nudger: mcp__fs__write_file (read as Write)" in out["systemMessage"]


def test_a_server_glob_warns(globbed: Project) -> None:
    out, _ = globbed.run(write_call(globbed, "mcp__notes__append", "warn-me"))
    assert out is not None and "warner: warning on mcp__notes__append" in json.dumps(out)
    # the glob is anchored: another server's tool is not its
    assert globbed.run(write_call(globbed, "mcp__notes2__append", "warn-me"))[0] is None


def test_a_glob_soft_block_is_overridden_by_retry(globbed: Project) -> None:
    call = write_call(globbed, "mcp__fs__write_file", "soft-me")
    decision, reason = verdict(globbed.run(call)[0])
    assert decision == "deny" and reason.startswith("[softy] softy: refused mcp__fs__write_file")
    retry = {**call, "tool_use_id": "toolu_retry"}
    assert verdict(globbed.run(retry)[0])[0] == "allow"
    overrides = [r for r in globbed.audit() if r["kind"] == "override"]
    assert [(r["behavior_id"], r["tool_name"]) for r in overrides] == [
        ("softy", "mcp__fs__write_file")
    ]


def test_a_glob_hard_block(globbed: Project) -> None:
    call = write_call(globbed, "mcp__fs__write_file", "hard-me")
    decision, reason = verdict(globbed.run(call)[0])
    assert decision == "deny" and reason.startswith("[hardy]") and "cannot be overridden" in reason
    # a name the glob does not match passes
    assert globbed.run(write_call(globbed, "mcp__fs__rewrite", "hard-me"))[0] is None


# --- doctor: what could not be read -------------------------------------------------------------


def doctor(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), "doctor", *args],
        capture_output=True,
        text=True,
        env=project.env,
        cwd=project.dir,
        timeout=120,
        check=False,
    )


def test_doctor_lists_the_servers_and_the_tools_governed_by_name_only(project: Project) -> None:
    (project.dir / ".mcp.json").write_text(json.dumps({"mcpServers": {"github": {}, "shell": {}}}))
    (project.dir / ".codex").mkdir()
    (project.dir / ".codex" / "config.toml").write_text('[mcp_servers.docs]\ncommand = "x"\n')
    (project.dir / ".cursor").mkdir()
    (project.dir / ".cursor" / "mcp.json").write_text("{not json")
    project.run(mcp(project, "mcp__github__create_issue", title="x"))
    project.run(mcp(project, "mcp__shell__run", command="ls"))
    project.run(mcp(project, "mcp__shell__run", command={"a": 1}))
    result = doctor(project)
    assert "Traceback" not in result.stderr, result.stderr
    text = result.stdout
    assert "MCP tools:" in text
    assert "  server github (claude-code, .mcp.json)" in text
    assert "  server docs (codex, .codex/config.toml)" in text
    assert "  mcp__shell__run: 1 shell, 1 unreadable" in text, text
    assert "governed by name only: mcp__github__create_issue:" in text
    assert ".cursor/mcp.json: its MCP servers cannot be read" in text
    data = json.loads(doctor(project, "--json").stdout)
    assert data["mcp"]["by_name_only"] == ["mcp__github__create_issue"]
    assert {s["name"] for s in data["mcp"]["servers"]} == {"github", "shell", "docs"}
