"""The forge-policy plugin in the real Claude Code: ``claude plugin validate`` accepts the folder
``init --plugin`` writes, and ``claude --plugin-dir DIR`` (the folder moved after it was
written) refuses what the built-in catalog blocks through the plugin's hook, in a project that
was never set up; without forge-policy on the machine every tool call is refused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from forge_policy.ops import plugin
from forge_policy.testing.models import Turn
from forge_policy.testing.plugin import open_real_client
from tests.real_clients.conftest import NODE_BIN

#: This venv's bin (forge-policy) in front of a PATH without forge-policy.
BARE_PATH = "/usr/bin:/bin"
WITH_FORGE = f"{Path(sys.executable).parent}{os.pathsep}{BARE_PATH}"


@pytest.fixture
def plugin_dir(tmp_path: Path) -> Path:
    """The plugin, written in one place and then moved: nothing in it may name the first."""
    written = tmp_path / "written" / "forge-policy"
    plugin.write(written, marketplace="acme-tools")
    moved = tmp_path / "market place" / "forge-policy"
    shutil.copytree(written.parent, moved.parent)
    shutil.rmtree(written.parent)
    return moved


def open_claude(folder: Path, path: str) -> Any:
    return open_real_client(
        "claude-code", folder, search=[NODE_BIN], init=False, environ={"PATH": path}
    )


@pytest.fixture
def claude(tmp_path: Path) -> Iterator[Any]:
    project = open_claude(tmp_path / "client", WITH_FORGE)
    yield project
    project.close()


def validate(claude: Any, target: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [claude.program, "plugin", "validate", "--strict", "--json", str(target)],
        env=claude.base_environ() | {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_claude_plugin_validate_accepts_the_plugin_and_its_marketplace(
    claude: Any, plugin_dir: Path
) -> None:
    for target in (plugin_dir, plugin_dir.parent):
        done = validate(claude, target)
        assert done.returncode == 0, done.stdout + done.stderr
        report = json.loads(done.stdout)
        assert report["success"] is True and report["strict"] is True
        assert report["manifest"]["errors"] == [] and report["manifest"]["warnings"] == []
    hooks = json.loads(validate(claude, plugin_dir).stdout)["provides"]["hooks"]
    assert [h["event"] for h in hooks] == list(
        json.loads((plugin_dir / plugin.HOOKS).read_text())["hooks"]
    )


def test_validate_refuses_a_broken_manifest(claude: Any, plugin_dir: Path) -> None:
    """The check above can fail: a name with a space is refused by the same command."""
    manifest = plugin_dir / plugin.MANIFEST
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "name": "forge policy"}))
    assert validate(claude, plugin_dir).returncode != 0


def test_the_plugins_hook_refuses_a_force_push(claude: Any, plugin_dir: Path) -> None:
    claude.write("notes.txt", "hello\n")
    run = claude.run(
        [
            Turn.call("Read", file_path=str(claude.project / "notes.txt")),
            Turn.call("Bash", command="git push --force origin main"),
            Turn.say("done"),
        ],
        args=["--plugin-dir", str(plugin_dir)],
    )
    assert [c.id for c in run.ran] == [run.requested[0].id], run.describe()
    assert [c.id for c in run.denied] == [run.requested[1].id], run.describe()
    assert "[no-destructive-git]" in run.result(1).text
    assert "hello" in run.result(0).text
    log = (claude.project / ".forge" / "audit" / "overrides.log").read_text("utf-8")
    assert "no-destructive-git" in log
    status = claude.git("status", "--porcelain", "--untracked-files=all")
    assert ".forge" not in status, status


def test_the_agent_cannot_switch_the_plugin_off(claude: Any, plugin_dir: Path) -> None:
    """Claude Code gives the plugin's hook its folder ($CLAUDE_PLUGIN_ROOT), which
    protect-governance guards: rewriting the launcher, or removing the folder, is refused."""
    launcher = plugin_dir / plugin.LAUNCHER
    run = claude.run(
        [
            Turn.call("Bash", command=f"echo 'exit 0' > '{launcher}'"),
            Turn.call("Bash", command=f"rm -rf '{plugin_dir}'"),
            Turn.say("done"),
        ],
        args=["--plugin-dir", str(plugin_dir)],
    )
    assert len(run.denied) == 2 and not run.ran, run.describe()
    assert "[protect-governance]" in run.result(0).text
    assert "[protect-governance]" in run.result(1).text
    assert launcher.read_text("utf-8") == plugin.script()


def test_without_the_plugin_the_same_call_runs_unchecked(claude: Any) -> None:
    """The control: the refusal above is the plugin's (nothing else governs this project)."""
    run = claude.run([Turn.call("Bash", command="git push --force origin main"), Turn.say("done")])
    assert not run.denied, run.describe()
    assert not (claude.project / ".forge").exists()


def test_without_forge_policy_every_tool_call_is_refused(tmp_path: Path, plugin_dir: Path) -> None:
    claude = open_claude(tmp_path / "bare", BARE_PATH)
    try:
        claude.write("notes.txt", "hello\n")
        run = claude.run(
            [Turn.call("Read", file_path=str(claude.project / "notes.txt")), Turn.say("done")],
            args=["--plugin-dir", str(plugin_dir)],
        )
    finally:
        claude.close()
    assert not run.ran and len(run.denied) == 1, run.describe()
    assert "forge-policy is not installed" in run.result(0).text
    assert "hello" not in run.result(0).text


def _claude_cli(claude: Any, *args: str) -> str:
    done = subprocess.run(
        [claude.program, *args],
        cwd=claude.project,
        env=claude.base_environ() | {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _blocks(claude: Any, session: str | None) -> list[dict[str, Any]]:
    return [
        r
        for r in claude.audit_records()
        if r.get("kind") == "block" and r.get("session_id") == session
    ]


def test_installed_from_its_marketplace_and_beside_a_projects_own_hook(
    claude: Any, plugin_dir: Path
) -> None:
    """An organisation's path: the marketplace added, the plugin installed (into Claude Code's
    plugin cache) and enabled by the real CLI; then the project is set up with init too, and
    each event is decided twice, which init and doctor report."""
    _claude_cli(claude, "plugin", "marketplace", "add", str(plugin_dir.parent))
    _claude_cli(claude, "plugin", "install", "forge-policy@acme-tools")
    push = [Turn.call("Bash", command="git push --force origin main"), Turn.say("done")]
    run = claude.run(push)
    assert len(run.denied) == 1 and "[no-destructive-git]" in run.result(0).text, run.describe()
    assert len(_blocks(claude, run.session_id)) == 1
    assert "counted twice" not in claude.forge("doctor", check=False).stdout

    init = claude.forge("init", "--harness", "claude-code", "--floor", "off")
    assert "forge-policy@acme-tools" in init.stdout and "counted twice" in init.stdout
    assert "counted twice" in claude.forge("doctor", check=False).stdout
    twice = claude.run(push)
    assert len(twice.denied) == 1, twice.describe()
    assert len(_blocks(claude, twice.session_id)) == 2  # what the warning is about
