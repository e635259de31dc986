"""The examples the README points at run and show what they promise."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run(*args: str, stdin: str = "", env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
        env=env,
        timeout=120,
    )
    return done.stdout


def test_embed_example_escalates_and_overrides() -> None:
    out = run(str(EXAMPLES / "embed.py"))
    assert "Bash(git push --force origin main) -> HARD_BLOCK" in out
    assert "Write(/repo/lib/last.py) -> SOFT_BLOCK" in out
    assert "override by retry (counter 5)" in out


def test_demo_pipes_the_recorded_session_through_the_hook_and_the_cli() -> None:
    out = run(str(EXAMPLES / "demo.py"))
    assert "-> DENY (no override)" in out  # the force push
    assert "-> ALLOW (override, audited)" in out  # the identical retry
    assert "-> ASK THE USER" in out  # reading .env
    assert "$ forge-policy status --session" in out
    assert "search-first          on   5      soft_block" in out
    assert "$ forge-policy audit" in out


def test_standalone_hook_script(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORGE_")}
    env.update(FORGE_ROOT=str(tmp_path / ".forge"), CLAUDE_PROJECT_DIR=str(tmp_path))
    payload = {
        "session_id": "s",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git push --force"},
        "tool_use_id": "t1",
        "cwd": str(tmp_path),
    }
    out = run(str(EXAMPLES / "claude_code_hook.py"), stdin=json.dumps(payload), env=env)
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    settings = json.loads((EXAMPLES / "claude-settings.json").read_text())
    assert "PreToolUse" in settings["hooks"]


def test_claude_agent_sdk_example_refuses_escalates_and_overrides() -> None:
    pytest.importorskip("claude_agent_sdk")
    out = run(str(EXAMPLES / "claude_agent_sdk_agent.py"))
    assert " 3. Bash(git push --force origin main) -> DENY" in out
    assert " 8. Write(/repo/lib/last.py) -> DENY" in out
    assert " 9. Write(/repo/lib/last.py) -> ALLOW" in out
    assert "Audited overrides: ['retry']" in out


def test_openai_agents_example_refuses_escalates_overrides_and_asks() -> None:
    pytest.importorskip("agents")
    out = run(str(EXAMPLES / "openai_agents_guardrail.py"))
    assert " 3. write_file(" in out and "Look Before You Write" in out  # a nudge the model reads
    assert "    | [search-first] Write blocked: 5 writes" in out  # the soft block, refused
    assert "[search-first] Let through by an override (retry)" in out  # the identical retry
    assert "? ASK THE USER: [agent-shield-ask]" in out  # .env: the SDK's human approval
    assert "    | (the text of /repo/.env)" in out  # approved, so it ran
    assert "STOPPED THE RUN: [no-destructive-git] Refused" in out  # hard block ends the run
    assert "Audited overrides: ['retry', 'user']" in out


def test_floor_sdk_example_runs_each_adapters_shell_call_under_the_floor() -> None:
    for extra in ("claude_agent_sdk", "langchain", "agents"):
        pytest.importorskip(extra)
    if shutil.which("bwrap") is None:  # .ci/run installs it: in CI this skip fails the run
        pytest.skip("bwrap not found on PATH")
    out = run(str(EXAMPLES / "floor_sdk.py"))
    assert out.count("build.txt written: True; .forge/x.txt written: False") == 3, out
    assert out.count("cannot create .forge/x.txt: Read-only file system") == 3, out
    assert f"updatedInput.command: {shutil.which('bwrap')} " in out
