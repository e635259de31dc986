"""The built-in catalog over launchers, code-running environment, git's own ways and the textual
safety net (issue 23): what the reading finds is refused, what it cannot read is refused by the
blocking rules (fail closed, saying why), and the harmless twins pass. A few run through the
real ``forge-policy hook`` process.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hookrun import Project

import forge_policy as fp
from forge_policy.model import Event

CATALOG = fp.builtin_catalog()
GIT = "no-destructive-git:hard_block"
DANGER = "dangerous-commands:hard_block"


def blocked_by(command: str, cwd: str = "/tmp") -> str | None:
    evaluator = fp.Evaluator(CATALOG, profile="standard", clock=lambda: 1000.0)
    event = Event("PreToolUse", "s1", tool_name="Bash", tool_input={"command": command}, cwd=cwd)
    blocking = evaluator.evaluate(event).blocking
    return f"{blocking.behavior_id}:{blocking.level.label}" if blocking else None


PLUMBING = [
    "git read-tree -u --reset HEAD",
    "git read-tree --reset -u HEAD~1",
    "git read-tree -mu --reset HEAD",
    "git checkout-index -a -f",
    "git checkout-index -af",
    "git checkout-index --force --all",
    "git checkout-index -f -- a.txt",
    "git update-ref -d refs/heads/main",
    "git update-ref --delete HEAD",
    "git update-ref --stdin < cmds",
    "git send-pack --force origin main",
    "git send-pack origin +main",
    "git send-pack --mirror ../backup",
    "git -c gc.pruneExpire=now gc",
    "git -c gc.reflogExpire=now gc",
    "git -c gc.pruneExpire=all gc --quiet",
    "git prune",
    "git prune --expire=now",
    "git prune -v",
    "git diff | git apply -R",
    "git diff HEAD | git apply --reverse --index",
    "git diff --cached | git apply -R --cached",
    "git symbolic-ref -d HEAD",
    "git symbolic-ref --delete refs/heads/x",
    "git -c alias.rh='reset --hard' rh",
    "setsid git reset --hard",
    "flock .lock git reset --hard",
    "flock .lock -c 'git clean -fdx'",
    "watch 'git reset --hard'",
]
PLUMBING_TWINS = [
    "git read-tree HEAD",
    "git read-tree -m -u HEAD",  # refuses to overwrite local changes
    "git checkout-index -a",
    "git update-ref refs/heads/new HEAD",
    "git send-pack origin main",
    "git -c gc.pruneExpire=never gc",
    "git gc",
    "git prune -n",
    "git prune --dry-run",
    "git apply -R fix.patch",
    "git diff | git apply --check",
    "git symbolic-ref HEAD",
    "git config user.name X",
    "git -c user.name=x commit -m hi",
    "flock .lock make",
    "nice make",
    "watch -n1 ls",
]


@pytest.mark.parametrize("command", PLUMBING)
def test_plumbing_and_launched_git_that_destroy_work_are_refused(command: str) -> None:
    assert blocked_by(command) == GIT


@pytest.mark.parametrize("command", PLUMBING_TWINS)
def test_their_harmless_twins_pass(command: str) -> None:
    assert blocked_by(command) is None


REVEALED = [
    "setsid rm -rf ~",
    "taskset -c 0 rm -rf /",
    "script -qc 'rm -rf ~' /dev/null",
    "at now <<< 'rm -rf ~'",
    "crontab - <<< '* * * * * rm -rf ~'",
    "tmux new -d 'rm -rf ~'",
    "awk 'BEGIN{system(\"rm -rf ~\")}'",
    "GIT_SSH_COMMAND='rm -rf ~' git fetch",
    "git -c alias.x='!rm -rf ~' x",
    "git -c core.pager='rm -rf ~' log",
    "{rm,-rf,~}",
    "rm${IFS}-rf${IFS}~",
    "$'\\x72\\x6d' -rf ~",
    "echo cm0gLXJmIH4= | base64 -d | sh",
    "foo rm -rf ~",
    "echo 'rm -rf /' | xargs bash -c",
]


@pytest.mark.parametrize("command", REVEALED)
def test_a_destroying_command_launched_or_hidden_is_refused(command: str) -> None:
    assert blocked_by(command) == DANGER


UNREAD = [
    "BASH_ENV=./x.sh bash -c ls",
    "env LD_PRELOAD=/tmp/x.so ls",
    "export PYTHONSTARTUP=/tmp/x.py; python",
    "git -c core.hooksPath=/tmp/h commit -m x",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=x git log",
    'ls | awk \'{print "rm " $1 | "sh"}\'',
    "sed 's/.*/rm -rf ~/e' f",
    "curl -s x | crontab -",
]


@pytest.mark.parametrize("command", UNREAD)
def test_code_the_call_does_not_show_is_refused_by_the_blocking_rules(command: str) -> None:
    decision = blocked_by(command)
    assert decision is not None and decision.endswith("hard_block"), decision


HARMLESS = [
    "PYTHONPATH=src pytest",
    "LD_LIBRARY_PATH=/usr/local/lib ./app",
    "EDITOR=vim git commit",
    "GIT_PAGER=cat git log",
    "awk '{print $1}' data.txt",
    "sed -i 's/a/b/g' f",
    "echo {a,b}",
    "echo 'rm -rf /'",
    "for f in *.py; do ruff $f; done",
    "echo aGVsbG8= | base64 -d",
    "setsid -f code .",
    "crontab -l",
]


@pytest.mark.parametrize("command", HARMLESS)
def test_ordinary_commands_pass(command: str) -> None:
    assert blocked_by(command) is None


# ------------------------------------------------------------------ the real hook process


@pytest.fixture
def project(tmp_path: Path) -> Project:
    p = Project(tmp_path, catalog={})  # the built-in catalog
    p.env["HOME"] = str(tmp_path / "home")
    return p


def verdict(out: dict[str, Any] | None) -> tuple[str, str]:
    specific = (out or {}).get("hookSpecificOutput", {})
    return specific.get("permissionDecision", ""), specific.get("permissionDecisionReason", "")


def test_the_hook_refuses_a_launched_delete_and_names_its_route(project: Project) -> None:
    decision, reason = verdict(project.run(project.bash("flock x.lock -c 'rm -rf ~'"))[0])
    assert decision == "deny" and reason.startswith("[dangerous-commands]")
    decision, reason = verdict(project.run(project.bash("awk 'BEGIN{system(\"rm -rf ~\")}'"))[0])
    assert decision == "deny" and "reached through awk code" in reason


def test_the_hook_refuses_git_plumbing_and_obfuscated_text(project: Project) -> None:
    decision, reason = verdict(project.run(project.bash("git checkout-index -a -f"))[0])
    assert decision == "deny" and reason.startswith("[no-destructive-git]")
    decision, reason = verdict(project.run(project.bash("echo cm0gLXJmIH4= | base64 -d | sh"))[0])
    assert decision == "deny" and "de-obfuscated" in reason


def test_the_hook_fails_closed_on_unshown_code_and_passes_the_twins(project: Project) -> None:
    decision, _reason = verdict(project.run(project.bash("BASH_ENV=./x.sh bash -c ls"))[0])
    assert decision == "deny"
    for command in ("flock .lock make", "PYTHONPATH=src pytest", "git config user.name X"):
        assert verdict(project.run(project.bash(command))[0]) == ("", ""), command
