"""The OpenCode adapter: OpenCode's tool and argument names in the catalog's, a subagent's calls in
the root session, and every answer an explicit decision (the plugin refuses anything else)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import behavior_yaml
from hookrun import Project

from forge_policy import Decision, Event
from forge_policy.harness.registry import get
from tests.harness.conformance import fixture

ADAPTER = get("opencode").adapter


def event(tool: str, args: Any, **fields: Any) -> Event:
    payload = {
        "hook_event_name": "tool.execute.before",
        "tool": tool,
        "tool_input": args,
        "sessionID": "ses_1",
        "callID": "call_1",
        "directory": "/p",
        **fields,
    }
    return ADAPTER.to_event(payload)


@pytest.mark.parametrize(
    ("tool", "args", "name", "read"),
    [
        ("bash", {"command": "ls", "workdir": "sub"}, "Bash", {"command": "ls"}),
        ("read", {"filePath": "/p/.env", "offset": 1}, "Read", {"file_path": "/p/.env"}),
        ("write", {"filePath": "/p/a", "content": "x"}, "Write", {"file_path": "/p/a"}),
        (
            "edit",
            {"filePath": "/p/a", "oldString": "x", "newString": "y", "replaceAll": True},
            "Edit",
            {"file_path": "/p/a", "old_string": "x", "new_string": "y", "replace_all": True},
        ),
        ("grep", {"pattern": "k", "include": "*.py"}, "Grep", {"glob": "*.py"}),
        ("glob", {"pattern": "**/*.py", "path": "/p"}, "Glob", {"pattern": "**/*.py"}),
        ("list", {"path": "/p"}, "LS", {"path": "/p"}),
        ("webfetch", {"url": "https://x", "format": "text"}, "WebFetch", {"url": "https://x"}),
        ("task", {"prompt": "p", "subagent_type": "general"}, "Agent", {"prompt": "p"}),
        ("todowrite", {"todos": []}, "TodoWrite", {"todos": []}),
        ("github_create_issue", {"title": "t"}, "github_create_issue", {"title": "t"}),
    ],
)
def test_tools_and_arguments_in_the_catalog_s_names(
    tool: str, args: dict[str, Any], name: str, read: dict[str, Any]
) -> None:
    ev = event(tool, args)
    assert ev.tool_name == name
    assert read.items() <= ev.tool_input.items()
    assert args.items() <= ev.tool_input.items()  # OpenCode's names stay beside them


def test_bash_runs_in_its_workdir() -> None:
    assert event("bash", {"command": "ls", "workdir": "sub"}).cwd == "/p/sub"


def test_multiedit_edits_get_claude_code_s_names() -> None:
    ev = event("multiedit", {"filePath": "/p/a", "edits": [{"oldString": "x", "newString": "y"}]})
    assert ev.tool_name == "MultiEdit"
    assert ev.tool_input["edits"][0]["old_string"] == "x"


def test_a_patch_is_a_write_or_an_edit_of_every_file_it_touches() -> None:
    add = "*** Begin Patch\n*** Add File: a.py\n+x = 1\n*** End Patch"
    ev = event("apply_patch", {"patchText": add})
    assert (ev.tool_name, ev.tool_input["file_path"], ev.tool_input["content"]) == (
        "Write",
        "a.py",
        "x = 1",
    )
    two = "*** Begin Patch\n*** Add File: a.py\n+x\n*** Delete File: .forge/audit\n*** End Patch"
    ev = event("patch", {"patchText": two})
    assert ev.tool_name == "Edit" and ev.tool_input["paths"] == ["a.py", ".forge/audit"]


def test_a_subagent_s_call_is_the_root_session_s_with_its_agent() -> None:
    ev = event("bash", {"command": "ls"}, sessionID="ses_child", rootSessionID="ses_root")
    assert ev.session_id == "ses_root"
    assert ev.payload["agent_id"] == "ses_child"
    assert "agent_type" not in ev.payload  # the plugin had not seen its agent
    ev = event("bash", {"command": "ls"}, sessionID="ses_c", rootSessionID="ses_r", agent="general")
    assert ev.payload["agent_type"] == "general"
    top = event("bash", {"command": "ls"}, agent="build")
    assert top.session_id == "ses_1" and "agent_id" not in top.payload


def test_a_decision_with_new_arguments_is_an_allow_with_them() -> None:
    ev = event("bash", {"command": "ls"})
    decision = Decision(ev, updated_input={"command": "bwrap -- ls"})
    out, code = ADAPTER.render(decision, ev)
    assert (out, code) == ('{"decision":"allow","args":{"command":"bwrap -- ls"}}', 0)


def test_silence_is_an_explicit_allow() -> None:
    ev = event("read", {"filePath": "/p/a"})
    assert ADAPTER.render(Decision(ev), ev) == ('{"decision":"allow"}', 0)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    env_guard = behavior_yaml(
        "env-guard",
        default_level="hard_block",
        triggers=(
            "    - event: PreToolUse\n      matcher: Edit\n      conditions:\n"
            "        - {field: file_path, operator: ends_with, value: .env}\n"
        ),
        extra='rendering:\n  block_reason: "env-guard: refused"\n',
    )
    return Project(tmp_path, {"env-guard": env_guard})


def test_an_edit_fixture_is_judged_by_its_file(project: Project) -> None:
    payload = fixture("opencode", "edit_before", project)
    out, _ = project.run(payload, "--harness", "opencode")
    assert out is not None and out["decision"] == "deny"
    assert out["summary"] == "[env-guard] env-guard: refused"


@pytest.mark.parametrize(
    "bad",
    [
        {"tool_input": ["ls"]},  # arguments that are not an object
        {"tool_input": "not json"},
        {"hook_event_name": "session.idle"},  # not an event the plugin sends
        {"hook_event_name": ""},
    ],
)
def test_bad_input_is_refused_before_a_call(project: Project, bad: dict[str, Any]) -> None:
    payload = {**fixture("opencode", "tool_execute_before", project, command="ls"), **bad}
    out, _ = project.run(payload, "--harness", "opencode")
    assert out is not None and out["decision"] == "deny"
    assert out["reason"].startswith("forge-policy could not evaluate this call, so it is refused")


def test_bad_input_after_a_call_is_a_notice(project: Project) -> None:
    payload = fixture("opencode", "tool_execute_after", project, command="ls")
    out, _ = project.run({**payload, "tool_input": ["ls"]}, "--harness", "opencode")
    assert out is not None and out["decision"] == "allow"
    assert "could not evaluate" in out["message"]


def test_the_subagent_fixture_counts_in_the_root_session(tmp_path: Path) -> None:
    from tests.harness.conformance import HARNESS_CATALOG

    project = Project(tmp_path, HARNESS_CATALOG)
    payload = fixture("opencode", "subagent_before", project, command="echo soft-me")
    out, _ = project.run(payload, "--harness", "opencode")
    assert out is not None and out["decision"] == "deny"
    assert project.counter("softy") == 1


def test_an_mcp_tool_is_named_by_its_configured_server() -> None:
    servers = ["git", "github", "fs"]
    ev = event("github_create_issue", {"title": "t"}, mcpServers=servers)
    assert ev.tool_name == "mcp__github__create_issue"
    assert event("fs_write_file", {"path": "/p/a"}, mcpServers=servers).tool_name == (
        "mcp__fs__write_file"
    )
    assert event("bash", {"command": "ls"}, mcpServers=["bash"]).tool_name == "Bash"
    assert event("github_create_issue", {}).tool_name == "github_create_issue"  # no list


def test_the_built_in_catalog_guards_the_plugin_itself(tmp_path: Path) -> None:
    """The plugin is a hook file: an agent may not rewrite or delete it (protect-governance)."""
    project = Project(tmp_path, {})  # the built-in catalog
    plugin = str(project.dir / ".opencode/plugins/forge-policy.js")
    for tool, args in (
        ("write", {"filePath": plugin, "content": "export const X = async () => ({})"}),
        ("edit", {"filePath": plugin, "oldString": "deny", "newString": "allow"}),
        ("bash", {"command": "rm .opencode/plugins/forge-policy.js", "description": "x"}),
    ):
        payload = {**fixture("opencode", "tool_execute_before", project), "tool": tool}
        out, _ = project.run({**payload, "tool_input": args}, "--harness", "opencode")
        assert out is not None and out["decision"] == "deny", (tool, out)
        assert "protect-governance" in out["reason"]
