"""Claude Code honours forge_policy's decisions end to end: allow, hard deny, soft deny (the
agent's retry goes through) and ask, for Bash, Write/Edit and Read; the block text reaches the
model as the tool result."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from forge_policy.testing.models import Turn
from forge_policy.testing.plugin import open_real_client
from tests.real_clients.conftest import NODE_BIN
from tests.real_clients.policy import ASK, ASK_MARK, SOFT, SOFT_MARK


@pytest.fixture(scope="module")
def claude(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One project for the module (each run is a new session, so no test sees another's
    counters), with the warm worker ``init`` writes by default."""
    project = open_real_client(
        "claude-code", tmp_path_factory.mktemp("claude-decisions"), search=[NODE_BIN]
    )
    project.add_behavior(SOFT)
    project.add_behavior(ASK)
    project.write(".forge/config.yaml", "floor: off\n")  # decisions, not the floor, here
    yield project
    project.close()


def test_allowed_calls_run(claude: Any) -> None:
    claude.write("notes.txt", "hello\n")
    run = claude.run(
        [
            Turn.call("Bash", command="echo allowed > out.txt"),
            Turn.call("Read", file_path=str(claude.project / "notes.txt")),
            Turn.call("Write", file_path=str(claude.project / "new.txt"), content="x\n"),
            Turn.say("done"),
        ]
    )
    assert len(run.ran) == 3, run.describe()
    assert {"out.txt", "new.txt"} <= run.files_written, run.describe()
    assert "hello" in run.result(1).text


def _tool_calls(project: Any) -> dict[str, tuple[str, dict[str, str]]]:
    """Per tool, a call of it that names ``{mark}`` (filled in per test)."""
    root = project.project
    return {
        "Bash": ("Bash", {"command": "echo {mark} > bash-{mark}.txt"}),
        "Write": ("Write", {"file_path": f"{root}/write-{{mark}}.txt", "content": "x\n"}),
        "Read": ("Read", {"file_path": f"{root}/read-{{mark}}.txt"}),
    }


def _call(project: Any, tool: str, mark: str) -> Turn:
    name, template = _tool_calls(project)[tool]
    return Turn.call(name, **{k: v.format(mark=mark) for k, v in template.items()})


TOOLS = ("Bash", "Write", "Read")


@pytest.mark.parametrize("tool", TOOLS)
def test_soft_block_refuses_then_the_retry_runs(claude: Any, tool: str) -> None:
    claude.write(f"read-{SOFT_MARK}.txt", "soft\n")
    first = _call(claude, tool, SOFT_MARK)
    run = claude.run([first, _call(claude, tool, SOFT_MARK), Turn.say("done")])
    assert [c.id for c in run.denied] == [run.requested[0].id], run.describe()
    assert [c.id for c in run.ran] == [run.requested[1].id], run.describe()
    assert "[tripwire-soft]" in run.result(0).text
    assert "Leave soft-trip alone" in run.result(0).text


@pytest.mark.parametrize("tool", TOOLS)
def test_ask_is_a_refusal_without_a_user(claude: Any, tool: str) -> None:
    claude.write(f"read-{ASK_MARK}.txt", "ask\n")
    run = claude.run([_call(claude, tool, ASK_MARK), Turn.say("done")])
    """In print mode there is no user to ask: Claude Code refuses the call (its own denial
    record) and the model reads that the user is asked."""
    run = claude.run([_call(claude, tool, ASK_MARK), Turn.say("done")])
    assert not run.ran, run.describe()
    assert [c.id for c in run.denied] == [run.requested[0].id], run.describe()
    assert "[tripwire-ask]" in run.result(0).text
    assert "the user is asked" in run.result(0).text
    assert not any(ASK_MARK in p and not p.startswith("read-") for p in run.files_written)


HARD = {
    "Bash": Turn.call("Bash", command="git push --force origin main"),
    "Write": Turn.call("Write", file_path=".forge/behaviors/index.yaml", content="{}\n"),
    "Read": Turn.call("Read", file_path="{home}/.ssh/id_rsa"),
}


@pytest.mark.parametrize("tool", TOOLS)
def test_hard_block_refuses_every_time(claude: Any, tool: str) -> None:
    (claude.home / ".ssh").mkdir(exist_ok=True)
    (claude.home / ".ssh" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    call = HARD[tool].tool_calls[0]
    tool_input = {
        k: str(v).format(home=claude.home)
        if k == "file_path" and "{home}" in str(v)
        else (str(claude.project / v) if k == "file_path" else v)
        for k, v in call.input.items()
    }
    run = claude.run([Turn.call(call.name, **tool_input), Turn.call(call.name, **tool_input)])
    assert len(run.denied) == 2 and not run.ran, run.describe()
    assert "cannot be overridden" in run.result(0).text
    assert "cannot be overridden" in run.result(1).text
    assert not any(p.startswith(".forge/behaviors") for p in run.files_written)


LAUNCHER_COMMAND = "${CLAUDE_PROJECT_DIR}/.forge/bin/forge-policy-hook"  # exec form, args []


def _machine_record(project: Any) -> list[str]:
    """The lines of this machine's record (``.forge/runtime/hook-client``) that the committed
    launcher runs (:mod:`forge_policy.ops.launcher`)."""
    return (project.project / ".forge" / "runtime" / "hook-client").read_text("utf-8").splitlines()


def test_the_warm_worker_client_is_what_init_wrote(claude: Any) -> None:
    """The committed settings run the portable launcher; the launcher runs the warm-worker
    client ``init`` recorded for this machine (interpreter, then ``worker/launch.py``)."""
    command = claude.settings()["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert command == LAUNCHER_COMMAND
    program, script = _machine_record(claude)
    assert script.endswith("worker/launch.py"), (program, script)
    assert Path(program).is_file() and Path(script).is_file(), (program, script)


def test_claude_code_starts_the_launcher_itself_no_shell_first(tmp_path: Path) -> None:
    """The entries ``init`` writes are in exec form (``command`` and ``args``): Claude Code
    substitutes ``${CLAUDE_PROJECT_DIR}`` and spawns the launcher directly, in a project folder
    whose name a shell would read otherwise (a space, a quote, ``$`` and backticks). The
    launcher is wrapped to record its parent process and ``$CLAUDE_PROJECT_DIR`` (then it runs
    as written): the parent is Claude Code itself, where a shell-form entry's is the shell
    (``/bin/sh -c …``, observed with 2.1.332)."""
    folder = tmp_path / "it's $HOME `id`"
    claude = open_real_client("claude-code", folder, search=[NODE_BIN])
    try:
        [handler] = claude.settings()["hooks"]["PreToolUse"][0]["hooks"]
        assert (handler["command"], handler["args"]) == (LAUNCHER_COMMAND, [])
        claude.write(".forge/config.yaml", "floor: off\n")
        launcher = claude.project / ".forge" / "bin" / "forge-policy-hook"
        launcher.rename(launcher.with_name("launcher-as-written"))
        parents, folders = tmp_path / "parents.txt", tmp_path / "folders.txt"
        launcher.write_text(
            "#!/bin/sh\n"
            f"ps -o args= -p \"$PPID\" >> '{parents}'\n"
            f"printf '%s\\n' \"$CLAUDE_PROJECT_DIR\" >> '{folders}'\n"
            'exec /bin/sh "${0%/*}/launcher-as-written" "$@"\n'
        )
        launcher.chmod(0o755)
        run = claude.run(
            [Turn.call("Bash", command="git push --force origin main"), Turn.say("ok")]
        )
        assert run.denied and not run.ran, run.describe()
        seen = parents.read_text().splitlines()
        assert seen and all(Path(p.split(" ")[0]).name == "claude" for p in seen), seen
        # the variable is set for the hook too (the worker's fingerprint names it)
        assert set(folders.read_text().splitlines()) == {str(claude.project)}
    finally:
        claude.close()


def test_the_local_entry_spawns_this_machines_client(forge_real_client: Any) -> None:
    """``init --local`` writes this machine's warm-worker client into the git-ignored
    ``.claude/settings.local.json``, in exec form too: the interpreter as ``command``, ``-I -S``
    and ``launch.py`` as ``args``. Claude Code runs it and it refuses what it refuses."""
    claude = forge_real_client("claude-code", init_args=("--local",))
    path = claude.project / ".claude" / "settings.local.json"
    [handler] = json.loads(path.read_text("utf-8"))["hooks"]["PreToolUse"][0]["hooks"]
    assert handler["args"][:2] == ["-I", "-S"] and handler["args"][2].endswith("launch.py")
    assert Path(handler["command"]).is_file() and handler["onFailure"] == "block", handler
    run = claude.run(
        [
            Turn.call("Bash", command="echo fine"),
            Turn.call("Bash", command="git push --force origin main"),
            Turn.say("done"),
        ]
    )
    assert [c.id for c in run.ran] == [run.requested[0].id], run.describe()
    assert [c.id for c in run.denied] == [run.requested[1].id], run.describe()


def test_the_plain_hook_command_of_no_worker_is_honoured(forge_real_client: Any) -> None:
    """``init --no-worker`` records this venv's ``forge-policy`` (run as ``forge-policy hook``
    by the launcher): the same answers, in-process."""
    claude = forge_real_client("claude-code", init_args=("--no-worker",))
    command = claude.settings()["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert command == LAUNCHER_COMMAND
    [program] = _machine_record(claude)
    assert Path(program).name == "forge-policy" and Path(program).is_file(), program
    run = claude.run(
        [
            Turn.call("Bash", command="echo fine"),
            Turn.call("Bash", command="git push --force origin main"),
            Turn.say("done"),
        ]
    )
    assert [c.id for c in run.ran] == [run.requested[0].id], run.describe()
    assert [c.id for c in run.denied] == [run.requested[1].id], run.describe()
    assert "[no-destructive-git]" in run.result(1).text
