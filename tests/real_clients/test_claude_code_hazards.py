"""What Claude Code does when the hook entry ``init`` wrote cannot run, or when the settings
file holding it is one Claude Code rejects: the fail-open cases a user does not see.

Observed with the bundled Claude Code (``claude_agent_sdk/_bundled/claude``, 2.1.332):
- a hook command that does not exist is a non-blocking error: the call runs, whether the entry
  is in the exec form ``init`` writes (``command`` spawned with ``args``, no shell: it cannot
  start) or in the shell form (the shell exits 127);
- the same entry with ``"onFailure": "block"`` (Claude Code 2.1.295 and later:
  https://github.com/anthropics/claude-code/releases/tag/v2.1.295, "Added onFailure: "block"
  for command and HTTP hooks") refuses the call, and ``init`` writes it on PreToolUse: with the
  settings file exactly as ``init`` wrote it, a ``forge-policy`` that has gone refuses the call,
  and so does a hook past its timeout (without the key both let the call run);
- a settings file with ``NaN`` or a wrong type (``"permissions": 5``) loads no hooks at all, so
  a call the hook would refuse runs; an unknown key does not. The agent cannot write such a file:
  protect-governance judges a settings write as Claude Code reads it (issue 23,
  ``forge_policy.harness.settings_check``; ``test_the_agent_cannot_write_such_a_settings_file``);
- the committed hook is the project's launcher (``.forge/bin/forge-policy-hook``, issue 25), no
  path of one machine: it runs the ``forge-policy`` ``init`` recorded for this machine
  (``.forge/runtime/hook-client``, git-ignored), else one on ``PATH``; with none it exits 2, a
  refusal, and ``onFailure`` backs it. So a ``forge-policy`` gone after ``init``, or a teammate's
  clone with no ``forge-policy``, runs no tool call unchecked: the launcher's exit 2 on
  ``UserPromptSubmit`` already refuses the prompt, so the model is never asked.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from forge_policy.testing.models import Turn

FORCE_PUSH = "git push --force origin main"


def _handlers(settings: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        handler
        for entries in settings["hooks"].values()
        for entry in entries
        for handler in entry["hooks"]
    ]


def _push(project: Any) -> Any:
    return project.run([Turn.call("Bash", command=FORCE_PUSH), Turn.say("done")])


@pytest.fixture
def claude(forge_real_client: Any) -> Any:
    return forge_real_client("claude-code", init_args=("--no-worker",))


def test_the_hook_as_init_wrote_it_refuses(claude: Any) -> None:
    """The baseline every hazard below departs from."""
    run = _push(claude)
    assert run.denied and not run.ran, run.describe()


def _break_command(claude: Any, form: str = "exec", **pre_tool_use: Any) -> None:
    """Every handler's command names a program that does not exist, without the
    ``onFailure`` init writes, in exec form (``args``, as init writes it) or in shell form;
    ``pre_tool_use`` keys are added to the PreToolUse handlers only (``onFailure: block`` on
    UserPromptSubmit would refuse the prompt itself, before the model is asked anything)."""
    settings = claude.settings()
    gone = str(claude.folder / "gone" / "forge-policy")
    for event, entries in settings["hooks"].items():
        for handler in (h for entry in entries for h in entry["hooks"]):
            handler.pop("args", None)
            handler.pop("onFailure", None)
            if form == "exec":
                handler.update(command=gone, args=["hook"])
            else:
                handler["command"] = f"{gone} hook"
            if event == "PreToolUse":
                handler.update(pre_tool_use)
    claude.write_settings(settings)


@pytest.mark.parametrize("form", ["exec", "shell"])
def test_a_hook_command_that_does_not_exist_lets_the_call_run(claude: Any, form: str) -> None:
    """The hazard ``init``'s ``onFailure: "block"`` closes: an entry without it."""
    _break_command(claude, form)
    run = _push(claude)
    assert run.ran and not run.denials, run.describe()


@pytest.mark.parametrize("form", ["exec", "shell"])
def test_on_failure_block_refuses_when_the_hook_cannot_start(claude: Any, form: str) -> None:
    _break_command(claude, form, onFailure="block")
    run = _push(claude)
    assert run.denied and not run.ran, run.describe()
    assert "hook" in run.result().text


def test_a_clone_without_the_launcher_refuses(claude: Any) -> None:
    """The entries exactly as init wrote them, the launcher they spawn missing (a clone made
    before it was committed): Claude Code cannot start it, and PreToolUse's ``onFailure``
    refuses the call."""
    (claude.project / ".forge" / "bin" / "forge-policy-hook").unlink()
    run = _push(claude)
    assert run.denied and not run.ran, run.describe()


def test_on_failure_block_refuses_when_the_hook_times_out(claude: Any) -> None:
    """A hook held past its timeout (two agent-held locks, issue 23) refuses the call too: the
    PreToolUse entry as init wrote it, with a command that outlives a 1 s timeout."""
    settings = claude.settings()
    [handler] = settings["hooks"]["PreToolUse"][0]["hooks"]
    assert handler["onFailure"] == "block"
    handler.update(command="sleep", args=["20"], timeout=1)
    claude.write_settings(settings)
    run = _push(claude)
    assert run.denied and not run.ran, run.describe()


@pytest.mark.parametrize(
    ("name", "settings_change", "suffix"),
    [
        ("NaN", {}, '  "x": NaN'),
        ("wrong type", {"permissions": 5}, ""),
    ],
)
def test_a_settings_file_claude_code_rejects_loads_no_hooks(
    claude: Any, name: str, settings_change: dict[str, Any], suffix: str
) -> None:
    """The hazard (issue 23 makes protect-governance refuse such a write): Python's json reads
    the file, Claude Code rejects it and runs without the hook."""
    claude.write_settings(claude.settings() | settings_change, suffix=suffix)
    run = _push(claude)
    assert run.ran and not run.denials, f"{name}: {run.describe()}"


@pytest.mark.parametrize(
    ("name", "settings_change", "suffix"),
    [
        ("NaN", {}, '  "x": NaN'),
        ("wrong type", {"permissions": 5}, ""),
        ("bypassPermissions", {"permissions": {"defaultMode": "bypassPermissions"}}, ""),
    ],
)
def test_the_agent_cannot_write_such_a_settings_file(
    claude: Any, name: str, settings_change: dict[str, Any], suffix: str
) -> None:
    """The hazard above, closed (issue 23): the agent's own Write of that file, through Claude
    Code, is refused by protect-governance, the file stays as init wrote it, and the hook still
    refuses the force push."""
    path = claude.project / ".claude" / "settings.json"
    before = path.read_text()
    text = json.dumps(claude.settings() | settings_change, indent=2)
    if suffix:
        text = text.rstrip().removesuffix("}").rstrip() + ",\n" + suffix + "\n}"
    run = claude.run([Turn.call("Write", file_path=str(path), content=text), Turn.say("done")])
    assert run.denied and not run.ran, f"{name}: {run.describe()}"
    assert path.read_text() == before
    pushed = _push(claude)
    assert pushed.denied and not pushed.ran, pushed.describe()


def test_an_unknown_settings_key_keeps_the_hooks(claude: Any) -> None:
    claude.write_settings(claude.settings() | {"notAClaudeCodeKey": True})
    run = _push(claude)
    assert run.denied and not run.ran, run.describe()


def test_an_unknown_key_in_a_hook_entry_keeps_the_hooks(claude: Any) -> None:
    """What a Claude Code older than 2.1.295 meets in ``onFailure``: a key of a hook entry its
    schema does not know. It is dropped, not a reason to reject the file (only unknown event
    names were, before 2.1.101); here with a key this one does not know either."""
    settings = claude.settings()
    for handler in _handlers(settings):
        handler["notAHookKey"] = "block"
    claude.write_settings(settings)
    run = _push(claude)
    assert run.denied and not run.ran, run.describe()


def _machine(folder: Path) -> Path:
    """Another machine's ``forge-policy``: a venv at ``folder`` sharing this one's packages
    (its ``lib`` a link), so ``init`` writes ``folder/bin/forge-policy`` into the settings."""
    venv = Path(sys.prefix)
    (folder / "bin").mkdir(parents=True)
    shutil.copy(venv / "pyvenv.cfg", folder / "pyvenv.cfg")
    (folder / "lib").symlink_to(venv / "lib")
    (folder / "bin" / "python").symlink_to(Path(sys.executable).resolve())
    program = folder / "bin" / "forge-policy"
    program.write_text(
        f"#!{folder / 'bin' / 'python'}\nimport sys\nfrom forge_policy.cli import main\n"
        "sys.exit(main())\n"
    )
    program.chmod(0o755)
    return program


LAUNCHER_COMMAND = "${CLAUDE_PROJECT_DIR}/.forge/bin/forge-policy-hook"  # exec form, args []


def _record(project: Any) -> Path:
    """This machine's record of the launcher (git-ignored)."""
    return project.project / ".forge" / "runtime" / "hook-client"


def _refused_for_want_of_forge_policy(run: Any) -> None:
    """What the launcher without a ``forge-policy`` does (observed with 2.1.332): its exit 2 on
    ``UserPromptSubmit`` blocks the prompt itself, so the model is never asked and no tool call
    is made, let alone run; the user reads the launcher's message (install, then ``doctor``).
    Its exit 2 on ``PreToolUse``, and that entry's ``onFailure``, would refuse a call too."""
    assert not run.requests and not run.requested and not run.ran, run.describe()
    assert "UserPromptSubmit operation blocked by hook" in run.stdout, run.stdout
    assert "forge-policy is not installed on this machine" in run.stdout, run.stdout
    assert not run.files_written, run.describe()


def _path_without_forge_policy() -> dict[str, str]:
    """The client's ``PATH`` without any folder holding a ``forge-policy`` (an activated venv's
    ``bin``), so the launcher's last resort finds none, as on a machine without it."""
    folders = [
        d
        for d in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
        if d and shutil.which("forge-policy", path=d) is None
    ]
    return {"PATH": os.pathsep.join(folders)}


def test_the_settings_as_init_wrote_them_refuse_when_forge_policy_is_gone(
    forge_real_client: Any, tmp_path: Path
) -> None:
    """``forge-policy`` removed after ``init`` (an uninstalled or moved venv): the launcher finds
    no ``forge-policy`` (the one recorded is gone, none on ``PATH``) and refuses, backed by the
    ``onFailure`` of the entry ``init`` wrote: Claude Code refuses the call instead of running it.
    (Before issue 25 the prompt still reached the model and the call was refused; the launcher
    now refuses the prompt already.)"""
    program = _machine(tmp_path / "venv")
    claude = forge_real_client(
        "claude-code", init_args=("--no-worker",), forge_program=str(program)
    )
    written = (claude.project / ".claude" / "settings.json").read_bytes()
    [pre_tool_use] = claude.settings()["hooks"]["PreToolUse"][0]["hooks"]
    assert pre_tool_use["onFailure"] == "block", pre_tool_use
    assert pre_tool_use["command"] == LAUNCHER_COMMAND, pre_tool_use
    assert _record(claude).read_text("utf-8").splitlines() == [str(program)]
    program.unlink()
    run = claude.run(
        [Turn.call("Bash", command=FORCE_PUSH), Turn.say("done")],
        environ=_path_without_forge_policy(),
    )
    assert (claude.project / ".claude" / "settings.json").read_bytes() == written
    _refused_for_want_of_forge_policy(run)


def test_a_teammates_clone_refuses_what_the_original_refuses(
    forge_real_client: Any, tmp_path: Path
) -> None:
    """The committed settings name no path of machine A (issue 25): they run the committed
    launcher, which on a clone without ``forge-policy`` (no machine record, none on ``PATH``)
    exits 2, backed by init's ``onFailure: "block"``: refused (the prompt already), not run
    unchecked."""
    program = _machine(tmp_path / "machine-a")
    original = forge_real_client(
        "claude-code", init_args=("--no-worker",), forge_program=str(program)
    )
    handlers = _handlers(original.settings())
    assert all(h["command"] == LAUNCHER_COMMAND for h in handlers), handlers
    assert not any(str(tmp_path) in h["command"] for h in handlers), handlers
    assert _push(original).denied
    original.git("add", "-A")
    original.git("commit", "-qm", "forge-policy init")
    shutil.rmtree(tmp_path / "machine-a")  # machine B has its forge-policy elsewhere
    clone = forge_real_client("claude-code", init=False, clone=original.project)
    assert (clone.project / ".forge" / "bin" / "forge-policy-hook").is_file()
    assert not _record(clone).exists()  # git-ignored: machine A's record stays there
    run = clone.run(
        [Turn.call("Bash", command=FORCE_PUSH), Turn.say("done")],
        environ=_path_without_forge_policy(),
    )
    _refused_for_want_of_forge_policy(run)
