"""Claude Code itself runs the status line ``init --statusline`` writes: the CLI bundled in the
claude-agent-sdk wheel, started interactively in a pseudo-terminal (the status line is the
interactive UI's; print mode has none), in a temporary ``HOME`` whose ``.claude.json`` trusts the
project (Claude Code runs no status line in an untrusted folder), with ``ANTHROPIC_BASE_URL`` on a
closed port of 127.0.0.1 (nothing leaves the machine; no prompt is sent). The session already
has real hook calls (made through the hook entry ``init`` wrote, spawned as Claude Code spawns its
exec form, with the session id given to ``claude --session-id``): the line Claude Code draws is
forge-policy's, colours included."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.cli_support import claude_code_argv

sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk not installed")
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a pty and the warm worker")

FORGE = Path(sys.executable).with_name("forge-policy")
CLAUDE = Path(sdk.__file__).parent / "_bundled" / "claude"
ANSI = re.compile(r"\x1b\[[0-9;?>]*[A-Za-z]|\x1b\][^\x07]*\x07")
API_KEY = "sk-ant-scripted-model"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _screen(argv: list[str], env: dict[str, str], cwd: Path, wanted: str, seconds: float) -> str:
    """What the program draws in a pty until ``wanted`` shows (ANSI codes stripped) or time
    runs out; the program is killed either way."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.chdir(cwd)
        os.execve(argv[0], argv, env)
    raw = b""
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    raw += os.read(fd, 65536)
                except OSError:
                    break
            if wanted in ANSI.sub("", raw.decode("utf-8", "replace")):
                break
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    return raw.decode("utf-8", "replace")


def test_claude_code_draws_forge_policys_status_line(tmp_path: Path) -> None:
    if not CLAUDE.is_file():
        pytest.skip("the claude-agent-sdk wheel bundles no claude program")
    project, home = tmp_path / "project", tmp_path / "home"
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "TERM": "xterm-256color",
        "XDG_CACHE_HOME": str(tmp_path / "xdg"),
    }
    done = subprocess.run(
        [str(FORGE), "init", "--statusline", "--floor", "off"], cwd=project, env=env,
        capture_output=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    hook = claude_code_argv(settings["hooks"]["PreToolUse"][0]["hooks"][0], project)
    session = str(uuid.uuid4())
    for command in ("git push --force origin main", "npm install left-pad"):
        event = {"session_id": session, "hook_event_name": "PreToolUse", "cwd": str(project),
                 "tool_name": "Bash", "tool_input": {"command": command}}  # fmt: skip
        subprocess.run(
            hook, input=json.dumps(event).encode(), cwd=project,
            env={**env, "CLAUDE_PROJECT_DIR": str(project)}, capture_output=True, check=True,
        )  # fmt: skip
    (home / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "theme": "dark",
                "projects": {str(project): {"hasTrustDialogAccepted": True}},
                "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
            }
        )
    )
    claude_env = {
        **env,
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{_closed_port()}",
        "ANTHROPIC_API_KEY": API_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    expected = "forge-policy · hard_block · open block: risky-commands · floor off"
    try:
        drawn = _screen([str(CLAUDE), "--session-id", session], claude_env, project, expected, 60.0)
    finally:
        subprocess.run([str(FORGE), "worker", "stop"], cwd=project, env=env, capture_output=True)
    assert expected in ANSI.sub("", drawn), ANSI.sub("", drawn)[-2000:]
    assert "\x1b[31mfloor off" in drawn  # our colours reach the terminal
