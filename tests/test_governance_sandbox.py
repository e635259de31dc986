"""protect-governance watches the sandbox ``init`` writes (SPEC §7, §13): an agent's change that
turns it off or weakens it — by the Edit/Write tools or by any shell spelling — is a governance
change, while an edit of an unrelated, harmless key is not."""

from __future__ import annotations

import copy
import json
import shlex
from typing import Any

import pytest

from forge_policy.facts.governance import changes
from forge_policy.model import Event
from tests.cli_support import Project

HOME = "/home/forge-floor-test"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project = Project(tmp_path_factory.mktemp("sandboxed"), HOME=HOME, TMPDIR="/tmp")
    project.run("init", "--no-worker", "--harness", "claude-code", "--harness", "codex")
    return project


def call(project: Project, tool: str, **tool_input: object) -> list[str]:
    event = Event("PreToolUse", "s", tool_name=tool, tool_input=tool_input, cwd=str(project.path))
    return changes(event, {"HOME": HOME})


def settings(project: Project) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project.path / ".claude/settings.json").read_text())
    return data


def write(project: Project, document: dict[str, Any], name: str = "settings.json") -> list[str]:
    path = project.path / ".claude" / name
    return call(project, "Write", file_path=str(path), content=json.dumps(document, indent=2))


def weakened(project: Project, how: str) -> dict[str, Any]:
    document = copy.deepcopy(settings(project))
    sandbox = document["sandbox"]
    if how == "enabled":
        sandbox["enabled"] = False
    elif how == "failIfUnavailable":
        sandbox["failIfUnavailable"] = False
    elif how == "allowUnsandboxedCommands":
        sandbox["allowUnsandboxedCommands"] = True
    elif how == "denyWrite":
        sandbox["filesystem"]["denyWrite"].remove("./.forge")
    elif how == "denyRead":
        sandbox["filesystem"]["denyRead"].remove("~/.ssh")
    elif how == "allowWrite":
        sandbox["filesystem"]["allowWrite"].append("~/")
    elif how == "excludedCommands":
        sandbox["excludedCommands"] = ["bash *"]
    elif how == "disabled":
        sandbox["filesystem"]["disabled"] = True
    else:
        assert how == "removed"
        del document["sandbox"]
    return document


WEAKENINGS = [
    "enabled",
    "failIfUnavailable",
    "allowUnsandboxedCommands",
    "denyWrite",
    "denyRead",
    "allowWrite",
    "excludedCommands",
    "disabled",
    "removed",
]


@pytest.mark.parametrize("how", WEAKENINGS)
def test_writing_a_weaker_sandbox_is_a_governance_change(project: Project, how: str) -> None:
    path = project.path / ".claude/settings.json"
    found = write(project, weakened(project, how))
    assert found and all(item.startswith(f"Write {path}: sandbox") for item in found), found


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('"enabled": true', '"enabled": false'),
        ('"failIfUnavailable": true', '"failIfUnavailable": false'),
        ('"allowUnsandboxedCommands": false', '"allowUnsandboxedCommands": true'),
        ('"./.forge",', ""),
        ('"~/.ssh",', ""),
        ('"//tmp",', '"//tmp", "~/",'),
    ],
)
def test_editing_the_sandbox_weaker_is_a_governance_change(
    project: Project, old: str, new: str
) -> None:
    path = project.path / ".claude/settings.json"
    assert old in path.read_text()
    found = call(project, "Edit", file_path=str(path), old_string=old, new_string=new)
    assert found and all(item.startswith(f"Edit {path}: sandbox.") for item in found), found
    multi = call(
        project, "MultiEdit", file_path=str(path), edits=[{"old_string": old, "new_string": new}]
    )
    assert multi and all(item.startswith(f"MultiEdit {path}: sandbox.") for item in multi)


def test_a_weaker_sandbox_in_the_local_settings_is_a_governance_change(project: Project) -> None:
    found = write(project, {"sandbox": {"enabled": False}}, "settings.local.json")
    path = project.path / ".claude/settings.local.json"
    assert f"Write {path}: sandbox.enabled" in found
    assert all(item.startswith(f"Write {path}: sandbox") for item in found)


def test_a_harmless_edit_of_another_key_passes(project: Project) -> None:
    assert write(project, {**settings(project), "theme": "dark", "model": "opus"}) == []
    path = project.path / ".claude/settings.json"
    edit = call(project, "Edit", file_path=str(path), old_string="{", new_string='{"model": "x",')
    assert edit == []


SHELL = [
    'sed -i \'s/"enabled": true/"enabled": false/\' .claude/settings.json',
    "python3 -c \"import json; p='.claude/settings.json'; d=json.load(open(p)); "
    "d['sandbox']['enabled']=False; json.dump(d, open(p,'w'))\"",
    "jq '.sandbox.enabled = false' .claude/settings.json > s.tmp && mv s.tmp .claude/settings.json",
    "jq '.sandbox.allowUnsandboxedCommands = true' .claude/settings.json"
    " | tee .claude/settings.json",
    "jq 'del(.sandbox)' .claude/settings.json > .claude/settings.local.json",
    "perl -pi -e 's/denyRead/x/' .claude/settings.json",
    "sed -i 's/workspace-write/danger-full-access/' .codex/config.toml",
    "echo 'sandbox_mode = \"danger-full-access\"' >> .codex/config.toml",
]


@pytest.mark.parametrize("command", SHELL)
def test_a_shell_edit_of_the_sandbox_is_a_governance_change(project: Project, command: str) -> None:
    found = call(project, "Bash", command=command)
    assert found, command
    assert any(".claude/settings" in item or ".codex/config.toml" in item for item in found)


def test_codex_s_sandbox_mode_is_watched(project: Project) -> None:
    path = project.path / ".codex/config.toml"
    text = path.read_text()
    assert 'sandbox_mode = "workspace-write"' in text
    weaker = text.replace("workspace-write", "danger-full-access")
    assert call(project, "Write", file_path=str(path), content=weaker) == [
        f"Write {path}: sandbox_mode"
    ]
    wider = text.replace('["/var/tmp"]', '["/var/tmp", "/"]')
    assert call(project, "Write", file_path=str(path), content=wider) == [
        f"Write {path}: sandbox_workspace_write.writable_roots"
    ]
    assert call(project, "Write", file_path=str(path), content=f'model = "o3"\n{text}') == []


def test_asking_to_leave_the_sandbox_is_a_governance_change(project: Project) -> None:
    assert call(project, "Bash", command="ls", dangerouslyDisableSandbox=True) == [
        "Bash dangerouslyDisableSandbox: runs outside the harness's sandbox"
    ]
    assert call(project, "Bash", command="ls", dangerouslyDisableSandbox=False) == []


def hook(project: Project, tool: str, **tool_input: Any) -> dict[str, Any] | None:
    event = {
        "session_id": "s-sandbox",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_sandbox",
        "cwd": str(project.path),
    }
    return project.hook(event)


def test_the_real_hook_refuses_weakening_and_lets_a_harmless_edit_through(
    project: Project,
) -> None:
    path = project.path / ".claude/settings.json"
    answer = hook(
        project,
        "Edit",
        file_path=str(path),
        old_string='"allowUnsandboxedCommands": false',
        new_string='"allowUnsandboxedCommands": true',
    )
    assert answer is not None
    out = answer["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert "[protect-governance]" in out["permissionDecisionReason"]
    command = f"sed -i s/true/false/ {shlex.quote(str(path))}"
    shell = hook(project, "Bash", command=command)
    assert shell is not None and shell["hookSpecificOutput"]["permissionDecision"] == "deny"
    harmless = hook(
        project,
        "Write",
        file_path=str(path),
        content=json.dumps({**settings(project), "theme": "dark"}, indent=2),
    )
    decision = (harmless or {}).get("hookSpecificOutput", {}).get("permissionDecision")
    assert decision != "deny", harmless
