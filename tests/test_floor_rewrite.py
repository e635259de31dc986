"""The rewrite seam (SPEC §13, :mod:`forge_policy.floor.rewrite`) through the real
``forge-policy hook`` process: an allowed shell call comes back rewritten to run under
forge_policy's own sandbox, in each harness's exact answer shape, and the rewritten command,
executed, cannot write ``.forge/`` while its harmless part works. Blocked calls, ``floor: off``
and a Claude Code sandbox that holds are answered as decided; the audit log keeps the original
command and the floor each call ran under."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hookrun import ClientProject, Project, stop_workers, worker_pids

from forge_policy.floor.derive import floor_for
from forge_policy.floor.sandbox import command_for
from forge_policy.render.claude_code import REWRITE_REASON
from tests.harness.conformance import HARNESS_CATALOG, fixture
from tests.harness.test_adapters import CODEX_OUTPUT

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

#: The allowed command the tests send: its first part is harmless, its second writes governance.
HARMLESS = "echo built > build.txt"
COMMAND = f"{HARMLESS}; echo pwned > .forge/pwned"

#: harness → (fixture, the answer with ``NEW`` for the rewritten command, the fixture's other
#: arguments as they come back)
SHAPES: dict[str, tuple[str, Any]] = {
    "claude-code": (
        "",
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "ask",
                "permissionDecisionReason": REWRITE_REASON,
                "updatedInput": {"command": "NEW", "description": "run it"},
            }
        },
    ),
    "codex": (
        "pre_tool_use",
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "updatedInput": {"command": "NEW"},
            }
        },
    ),
    "gemini": (
        "before_tool",
        {
            "hookSpecificOutput": {
                "hookEventName": "BeforeTool",
                "tool_input": {"command": "NEW", "description": "Run it", "dir_path": "CWD"},
            }
        },
    ),
    "cursor": ("pre_tool_use", {"permission": "allow", "updated_input": {"command": "NEW"}}),
    "opencode": (  # the plugin sets these on OpenCode's own args object
        "tool_execute_before",
        {
            "decision": "allow",
            "args": {"command": "NEW", "description": "Runs the command", "timeout": 120000},
        },
    ),
}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    made = Project(tmp_path, HARNESS_CATALOG, floor=None)  # the default floor: harness → own
    # Codex runs its own sandbox unless told otherwise, and the own floor cannot nest in it
    (made.dir / ".codex").mkdir(exist_ok=True)
    (made.dir / ".codex" / "config.toml").write_text('sandbox_mode = "danger-full-access"\n')
    return made


def payload(project: Project, harness: str, command: str, **fields: Any) -> Any:
    name = SHAPES[harness][0] if harness in SHAPES else "pre_tool_use"
    if harness == "claude-code":
        return project.bash(command, **fields)
    return {**fixture(harness, name, project, command=command), **fields}


def hook(project: Project, harness: str, command: str, **fields: Any) -> Any:
    out, err = project.run(payload(project, harness, command, **fields), "--harness", harness)
    assert "Traceback" not in err
    return out


def rewritten(project: Project, command: str) -> str:
    return command_for(floor_for(str(project.dir), project.env), command, "bwrap")


def expected(project: Project, harness: str, command: str) -> Any:
    text = json.dumps(SHAPES[harness][1])
    text = text.replace('"NEW"', json.dumps(rewritten(project, command)))
    return json.loads(text.replace('"CWD"', json.dumps(str(project.dir))))


def new_command(out: dict[str, Any]) -> str:
    specific = out.get("hookSpecificOutput", {})
    args = (
        specific.get("updatedInput")
        or specific.get("tool_input")
        or out.get("updated_input")
        or out["args"]
    )
    command: str = args["command"]
    return command


def execute(project: Project, command: str) -> subprocess.CompletedProcess[str]:
    """Run ``command`` as the harness would: its shell, in the project."""
    return subprocess.run(
        ["/bin/bash", "-c", command],
        cwd=project.dir,
        capture_output=True,
        text=True,
        env=project.env,
        timeout=60,
    )


@pytest.mark.parametrize("harness", list(SHAPES))
def test_an_allowed_shell_call_runs_rewritten_and_cannot_write_governance(
    project: Project, harness: str
) -> None:
    out = hook(project, harness, COMMAND)
    assert out == expected(project, harness, COMMAND)
    if harness == "codex":  # only fields Codex's output schema takes (else it runs the call)
        top, specific = CODEX_OUTPUT["PreToolUse"]
        assert set(out) <= top and specific is not None
        assert set(out["hookSpecificOutput"]) <= specific
    result = execute(project, new_command(out))
    assert (project.dir / "build.txt").read_text() == "built\n"  # the harmless part ran
    assert not (project.dir / ".forge" / "pwned").exists()
    assert "Read-only file system" in result.stderr, result
    assert project.audit(floor=True) == []  # a plain pass under the own floor: no record


def test_the_same_command_unrewritten_would_have_written(project: Project) -> None:
    """The control: the test's command does write ``.forge/`` when it is not rewritten."""
    execute(project, COMMAND)
    assert (project.dir / ".forge" / "pwned").read_text() == "pwned\n"


@pytest.mark.parametrize("harness", list(SHAPES))
@pytest.mark.parametrize("command", ["echo soft-me", "echo hard-me"])
def test_a_blocked_call_is_not_rewritten(project: Project, harness: str, command: str) -> None:
    out = hook(project, harness, command)
    text = json.dumps(out)
    assert "deny" in text and "bwrap" not in text, out
    assert not [r for r in project.audit(floor=True) if r["kind"] == "floor"]


@pytest.mark.parametrize("harness", list(SHAPES))
def test_a_nudge_keeps_its_message_and_the_log_its_original(project: Project, harness: str) -> None:
    out = hook(project, harness, "echo nudge-me")
    assert new_command(out) == rewritten(project, "echo nudge-me")
    assert "[nudger] nudger: Bash (1)" in json.dumps(out)
    if harness == "claude-code":
        assert out["systemMessage"] == "[nudger] nudger: Bash (1)"
        specific = out["hookSpecificOutput"]
        assert specific["additionalContext"] == "[nudger] nudger: Bash (1)"
        assert specific["permissionDecision"] == "ask"
    violation, floor = project.audit(floor=True)
    assert violation["kind"] == "violation" and violation["input_summary"] == "Bash: echo nudge-me"
    assert floor["kind"] == "floor" and floor["floor"] == "own/bwrap"
    assert floor["harness"] == harness and floor["input_summary"] == "Bash: echo nudge-me"
    assert floor["tool_use_id"] == violation["tool_use_id"]
    assert "--ro-bind" not in json.dumps(floor)  # the original is what the log keeps


def test_bypass_permissions_is_allowed_rewritten(project: Project) -> None:
    out = hook(project, "claude-code", "ls", permission_mode="bypassPermissions")
    assert out["hookSpecificOutput"]["permissionDecision"] == "allow"
    assert out["hookSpecificOutput"]["updatedInput"]["command"] == rewritten(project, "ls")


@pytest.mark.parametrize("harness", list(SHAPES))
def test_floor_off_answers_as_decided_and_audits_off(project: Project, harness: str) -> None:
    (project.root / "config.yaml").write_text("profile: standard\nfloor: off\n")
    allowed = {"decision": "allow"} if harness == "opencode" else None  # explicit there
    assert hook(project, harness, COMMAND) == allowed
    assert hook(project, harness, "ls") == allowed
    records = project.audit(floor=True)
    # the first shell call of the session under `off` is recorded; a plain pass after it is not
    assert [r["floor"] for r in records] == ["off"]
    assert records[0]["input_summary"] == f"Bash: {COMMAND}"
    project.session = "another-session"
    assert hook(project, harness, "ls") == allowed
    assert [r["floor"] for r in project.audit(floor=True)] == ["off", "off"]


def test_floor_own_rewrites_even_where_claude_code_s_sandbox_holds(project: Project) -> None:
    sandbox_on(project)
    (project.root / "config.yaml").write_text("floor: own\n")
    out = hook(project, "claude-code", "ls")
    assert out["hookSpecificOutput"]["updatedInput"]["command"] == rewritten(project, "ls")


def sandbox_on(project: Project) -> None:
    settings = project.dir / ".claude" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    block = {"enabled": True, "failIfUnavailable": True, "allowUnsandboxedCommands": False}
    settings.write_text(json.dumps({"sandbox": block}))


def test_claude_code_s_own_sandbox_holds_so_no_rewrite(project: Project) -> None:
    sandbox_on(project)
    assert hook(project, "claude-code", COMMAND) is None
    assert project.audit(floor=True) == []


def test_a_sandbox_that_may_be_left_is_not_the_floor(project: Project) -> None:
    settings = project.dir / ".claude" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(json.dumps({"sandbox": {"enabled": True, "failIfUnavailable": True}}))
    out = hook(project, "claude-code", "ls")
    assert out["hookSpecificOutput"]["updatedInput"]["command"] == rewritten(project, "ls")


def test_a_harness_that_cannot_rewrite_keeps_deciding_and_says_so(project: Project) -> None:
    """Cursor's beforeShellExecution takes no new arguments: the call is decided as before, the
    session is told once that the floor is not held, and the session's first call is audited
    ``none``."""
    first = project.run(
        fixture("cursor", "before_shell_execution", project, command="ls"), "--harness", "cursor"
    )[0]
    assert first is not None and "floor is not held" in first["user_message"]
    assert "permission" not in first and "updated_input" not in first
    second = project.run(
        fixture("cursor", "before_shell_execution", project, command="ls"), "--harness", "cursor"
    )[0]
    assert second is None  # told once per session
    blocked = project.run(
        fixture("cursor", "before_shell_execution", project, command="echo hard-me"),
        "--harness",
        "cursor",
    )[0]
    assert blocked is not None and blocked["permission"] == "deny"
    assert [r["floor"] for r in project.audit(floor=True) if r["kind"] == "floor"] == ["none"]


def test_copilot_is_only_decided(project: Project) -> None:
    out, err = project.run(
        fixture("copilot", "pre_tool_use", project, command="ls"),
        "--harness",
        "copilot",
        "--event",
        "preToolUse",
    )
    assert "updated" not in json.dumps(out) and "Traceback" not in err
    assert [r["floor"] for r in project.audit(floor=True)] == ["none"]


def test_a_broken_floor_setting_fails_closed(project: Project) -> None:
    (project.root / "config.yaml").write_text("floor: maybe\n")
    out = hook(project, "claude-code", "ls")
    specific = out["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert "config.yaml:1" in specific["permissionDecisionReason"]


@pytest.fixture
def client(tmp_path: Path) -> Iterator[ClientProject]:
    project = ClientProject(tmp_path, HARNESS_CATALOG, floor=None)
    yield project
    stop_workers(project.root)
    assert worker_pids(project.root) == []


def test_the_warm_worker_gives_the_same_rewrite(client: ClientProject) -> None:
    client.call(client.bash("ls"))
    client.wait_worker()
    for command in ("ls", "echo nudge-me", "echo hard-me", COMMAND):
        before = client.requests()
        event = client.bash(command)
        warm = client.call(event)
        # a session of its own: the counters (and so the texts) start alike
        twin = {**event, "session_id": f"{event['session_id']}-cold"}
        cold = client.call(twin, FORGE_WORKER="off")
        assert client.requests() == before + 1
        assert (warm.stdout, warm.stderr) == (cold.stdout, cold.stderr), command
    answer = json.loads(client.call(client.bash("ls")).stdout)
    assert answer["hookSpecificOutput"]["updatedInput"]["command"] == rewritten(client, "ls")


def test_without_bubblewrap_the_landlock_launcher_holds_what_it_can(project: Project) -> None:
    """No bubblewrap on ``PATH``: the next method that works here (Landlock, ABI 7 on this
    kernel) wraps the call; it keeps writes inside the project and temp (its unheld paths —
    governance inside the project, secret reads — are the hook's alone: ``doctor`` says so)."""
    target = Path("/etc") / f"forge-floor-probe-{os.getpid()}"
    out, _ = project.run(
        project.bash(f"echo x > {target}; echo ok > built.txt"), PATH="/nonexistent"
    )
    command = out["hookSpecificOutput"]["updatedInput"]["command"]
    assert "launch.py" in command and "bwrap" not in shlex.split(command)[0]
    try:
        result = execute(project, command)
        assert not target.exists(), result
        assert (project.dir / "built.txt").read_text() == "ok\n"
    finally:
        target.unlink(missing_ok=True)
