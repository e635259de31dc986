"""Governance commands refuse inside an agent's tool call (issue 10; forge_policy.cli.guard).

Each test runs the real ``forge-policy`` process: with an agent marker in its environment and
stdin not a terminal (``/dev/null``, as an agent's shell tool gives), with the marker and a
pseudo-terminal (the user typing it), and without the marker.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forge_policy.cli.guard import AGENT_MARKERS, GOVERNANCE
from tests.cli_support import FORGE, SOFT_RULE, clean_env, soft_catalog, tool_event

#: every governance-changing command, with arguments it would otherwise run with
GUARDED = {
    "on": ["on", "search-first"],
    "off": ["off", "search-first"],
    "strict": ["strict", "search-first"],
    "relaxed": ["relaxed", "search-first"],
    "override": ["override", "search-first", "--session", "s1", "--reason", "ok"],
    "purge": ["purge"],
    "init": ["init"],
    "uninstall": ["uninstall"],
    "worker stop": ["worker", "stop"],
    "git install": ["git", "install", "--repo", "repo"],
    "config unfork": ["config", "unfork", "--apply"],
    "suggest --apply": ["suggest", "--apply", "1"],
}
#: read-only commands (and what the harness or git runs), with their arguments
ALLOWED = {
    "status": ["status"],
    "explain": ["explain", "--file", "event.json"],
    "validate": ["validate"],
    "audit": ["audit"],
    "list": ["list"],
    "describe": ["describe", "search-first"],
    "worker status": ["worker", "status"],
    "git commit-msg": ["git", "commit-msg", "message.txt"],
    "suggest": ["suggest"],
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    event = tool_event("Read", file_path="/project/a.py")
    (tmp_path / "event.json").write_text(json.dumps(event), encoding="utf-8")
    (tmp_path / "message.txt").write_text("Fix the parser\n", encoding="utf-8")
    return tmp_path


def forge(
    cwd: Path, args: list[str], stdin: int | None = subprocess.DEVNULL, **env: str
) -> subprocess.CompletedProcess[str]:
    environ = clean_env(cwd / ".forge", XDG_CACHE_HOME=str(cwd / "xdg"), **env)
    return subprocess.run(
        [str(FORGE), *args],
        stdin=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environ,
        timeout=60,
        check=False,
    )


def with_terminal(cwd: Path, args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    """``forge-policy ARGS`` with a pseudo-terminal as stdin, as a user's shell gives."""
    master, slave = os.openpty()
    try:
        return forge(cwd, args, stdin=slave, **env)
    finally:
        os.close(slave)
        os.close(master)


def test_the_guarded_set_is_the_governance_set() -> None:
    assert set(GUARDED) == GOVERNANCE


@pytest.mark.parametrize("name", sorted(GUARDED))
def test_a_governance_command_refuses_in_an_agents_tool_call(project: Path, name: str) -> None:
    before = sorted(p.relative_to(project) for p in project.rglob("*"))
    result = forge(project, GUARDED[name], CLAUDECODE="1")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"forge-policy: {name} changes governance: refused inside an agent's tool call "
        "(CLAUDECODE is set, stdin is not a terminal); run it yourself from your own terminal\n"
    )
    assert sorted(p.relative_to(project) for p in project.rglob("*")) == before  # nothing done
    assert forge(project, GUARDED[name]).returncode != 2  # the marker is what refused it


@pytest.mark.parametrize("marker", AGENT_MARKERS)
def test_every_documented_harness_marker_counts(project: Path, marker: str) -> None:
    result = forge(project, ["off", "search-first"], **{marker: "1"})
    assert result.returncode == 2
    assert f"({marker} is set, stdin is not a terminal)" in result.stderr


def test_an_empty_marker_does_not_count(project: Path) -> None:
    assert forge(project, ["purge"], CLAUDECODE="").returncode == 0


@pytest.mark.parametrize("name", sorted(GUARDED))
def test_the_user_at_a_terminal_runs_it_even_inside_the_harness(project: Path, name: str) -> None:
    result = with_terminal(project, GUARDED[name], CLAUDECODE="1")
    assert result.returncode != 2, result.stderr
    assert "changes governance" not in result.stderr


def test_off_from_a_terminal_switches_the_behavior_off(project: Path) -> None:
    result = with_terminal(project, ["off", "search-first"], CLAUDECODE="1")
    assert result.returncode == 0, result.stderr
    layer = (project / ".forge" / "config.yaml").read_text()
    assert "  search-first: {enabled: false}\n" in layer


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_read_only_commands_stay_allowed(project: Path, name: str) -> None:
    result = forge(project, ALLOWED[name], CLAUDECODE="1")
    assert "changes governance" not in result.stderr
    assert result.returncode in (0, 1)  # worker status: 1 when no worker runs


def test_the_hook_stays_allowed(project: Path) -> None:
    event = json.dumps(tool_event("Read", file_path="/project/a.py"))
    result = subprocess.run(
        [str(FORGE), "hook"],
        input=event,
        capture_output=True,
        text=True,
        cwd=project,
        env=clean_env(project / ".forge", CLAUDECODE="1", FORGE_WORKER="off"),
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, "")


def test_the_git_module_entry_point_is_guarded_too(project: Path) -> None:
    environ = clean_env(project / ".forge", CLAUDECODE="1")
    command = [sys.executable, "-m", "forge_policy.cli.git_cmds", "install", "--repo", "repo"]
    result = subprocess.run(
        command,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=project,
        env=environ,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "git install changes governance" in result.stderr
    assert not (project / "repo" / ".git" / "hooks" / "commit-msg").exists()


# -- override of a behavior whose override is the user's ------------------------------------


@pytest.fixture
def user_mode(tmp_path: Path) -> Path:
    """A project whose one behavior ``no-rm`` soft-blocks with ``override: user``."""
    catalog = soft_catalog(tmp_path / ".forge" / "behaviors")
    rule = catalog / "no-rm" / "behavior.yaml"
    assert "    default_level: soft_block\n" in SOFT_RULE
    rule.write_text(
        SOFT_RULE.replace(
            "    default_level: soft_block\n", "    default_level: soft_block\n    override: user\n"
        ),
        encoding="utf-8",
    )
    return tmp_path


GRANT = ["override", "no-rm", "--session", "s1", "--reason", "approved", "--new-session"]


def test_a_user_override_needs_a_terminal_even_outside_an_agent(user_mode: Path) -> None:
    result = forge(user_mode, GRANT)
    assert result.returncode == 2
    assert result.stderr == (
        "forge-policy: override: no-rm is overridden by the user only, and stdin is not a "
        "terminal; run it yourself from your own terminal\n"
    )


def test_a_user_override_from_a_terminal_is_granted(user_mode: Path) -> None:
    result = with_terminal(user_mode, GRANT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("override granted: the next soft-blocked call of no-rm")
