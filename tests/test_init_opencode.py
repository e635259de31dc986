"""``init``, ``uninstall`` and ``doctor`` for OpenCode, whose hook is forge-policy's plugin file
(``.opencode/plugins/forge-policy.js``), not an entry in a settings file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge_policy.ops import opencode_plugin
from tests.cli_support import Project

PLUGIN = opencode_plugin.PLUGIN
OLD = opencode_plugin.OLD_PLUGIN


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def test_init_detects_opencode_and_writes_the_plugin_once(project: Project) -> None:
    (project.path / "opencode.json").write_text('{"$schema": "https://opencode.ai/config.json"}')
    first = project.json("init", "--no-worker")
    assert [a["verb"] for a in first["actions"] if a["path"].endswith(str(PLUGIN))] == ["created"]
    assert not (project.path / ".claude").exists()  # OpenCode was detected: Claude Code is not
    text = (project.path / PLUGIN).read_text()
    assert text == opencode_plugin.text(".forge/bin/forge-policy-hook")
    again = project.json("init", "--no-worker")
    assert [a["verb"] for a in again["actions"] if a["path"].endswith(str(PLUGIN))] == ["unchanged"]


def test_a_plugin_of_the_user_s_at_that_path_stops_init(project: Project) -> None:
    mine = "export const Mine = async () => ({})\n"
    (project.path / PLUGIN).parent.mkdir(parents=True)
    (project.path / PLUGIN).write_text(mine)
    result = project.run("init", "--harness", "opencode", "--no-worker", check=None)
    assert result.returncode != 0
    assert "a plugin that is not forge-policy's is at that path" in result.stderr
    assert (project.path / PLUGIN).read_text() == mine
    assert not project.root.exists()  # nothing was changed


def test_an_older_build_s_copy_moves(project: Project) -> None:
    (project.path / OLD).parent.mkdir(parents=True)
    (project.path / OLD).write_text(opencode_plugin.text(".forge/bin/forge-policy-hook"))
    project.run("init", "--harness", "opencode", "--no-worker")
    assert (project.path / PLUGIN).is_file()
    assert not (project.path / OLD).exists()  # OpenCode would load both


def test_uninstall_removes_only_ours(project: Project) -> None:
    project.run("init", "--harness", "opencode", "--no-worker")
    theirs = project.path / ".opencode/plugins/theirs.js"
    theirs.write_text("export const Theirs = async () => ({})\n")
    project.run("uninstall")
    assert not (project.path / PLUGIN).exists()
    assert theirs.is_file()
    theirs.unlink()
    project.run("init", "--harness", "opencode", "--no-worker")
    project.run("uninstall")
    assert not (project.path / ".opencode").exists()  # the folders init made, when empty


def doctor(project: Project) -> dict[str, object]:
    out = json.loads(project.run("doctor", "--harness", "opencode", "--json", check=None).stdout)
    [entry] = [h for h in out["harnesses"] if h["harness"] == "opencode"]
    return dict(entry)


def test_doctor_runs_the_plugin_s_command(project: Project) -> None:
    project.run("init", "--harness", "opencode", "--no-worker")
    entry = doctor(project)
    assert entry["installed"] is True
    assert entry["hook_answers"] is True
    [run] = entry["hook_runs"]  # type: ignore[misc]
    assert run["command"] == ".forge/bin/forge-policy-hook --harness opencode"
    assert entry["hook_findings"] == []


def test_doctor_says_not_enforced_when_the_launcher_is_gone(project: Project) -> None:
    project.run("init", "--harness", "opencode", "--no-worker")
    (project.root / "bin" / "forge-policy-hook").unlink()
    entry = doctor(project)
    assert entry["hook_answers"] is False
    assert entry["enforced"] == []


def test_doctor_reports_a_stale_plugin(project: Project) -> None:
    project.run("init", "--harness", "opencode", "--no-worker")
    path = project.path / PLUGIN
    path.write_text(path.read_text().replace("TIMEOUT_SECONDS = 30", "TIMEOUT_SECONDS = 3000"))
    [finding] = doctor(project)["hook_findings"]  # type: ignore[misc]
    assert finding["code"] == "plugin-stale"
    project.run("init", "--harness", "opencode", "--no-worker")
    assert doctor(project)["hook_findings"] == []
