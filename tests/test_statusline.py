"""Claude Code's status line through the real processes: ``init --statusline`` writes the
``statusLine`` command, which is run as Claude Code runs it (``sh -c COMMAND``, the status JSON on
stdin, ``$CLAUDE_PROJECT_DIR`` set) after real hook calls through the hook command ``init``
wrote: the warm worker's line, the in-process line and ``forge-policy statusline`` agree; bad
input gives a neutral line; nothing is created; uninstall takes it out."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_support import FORGE, claude_code_argv
from helpers import behavior_yaml, write_catalog
from hookrun import CLIENT_PY, stop_workers, worker_pids

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the warm worker is Linux's")

SESSION = "sess-statusline"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _rule(behavior_id: str, word: str, level: str, escalation: str = "") -> str:
    return behavior_yaml(
        behavior_id,
        default_level=level,
        escalation=escalation,
        triggers=(
            "    - event: PreToolUse\n      matcher: Bash\n      conditions:\n"
            f"        - {{field: command, operator: contains, value: {word}}}\n"
        ),
    )


CATALOG = {
    "risky": _rule(
        "risky",
        "risky-me",
        "nudge",
        "    escalation:\n      - after: 3\n        level: soft_block\n",
    ),
    "softy": _rule("softy", "soft-me", "soft_block"),
}


def status_json(project: Path, session: str = SESSION) -> bytes:
    """What Claude Code sends a ``statusLine`` command (its documented fields)."""
    return json.dumps(
        {
            "hook_event_name": "Status",
            "session_id": session,
            "transcript_path": f"/home/u/.claude/projects/p/{session}.jsonl",
            "cwd": str(project),
            "model": {"id": "claude-opus-4-6", "display_name": "Opus"},
            "workspace": {"current_dir": str(project), "project_dir": str(project)},
            "version": "2.1.332",
            "output_style": {"name": "default"},
            "cost": {"total_cost_usd": 0.01, "total_duration_ms": 4500},
        }
    ).encode()


#: The configuration and catalog caches every command that loads them writes (``status`` too),
#: in the git-ignored runtime folder: not state, and a hook call writes them first anyway.
CACHES = re.compile(r"catalog-cache.*|settings-cache\.json|last-good-.*\.json")


def tree(folder: Path) -> list[tuple[str, int]]:
    """Every path below ``folder`` (but git's and the caches) with its size: a read-only run
    leaves it equal."""
    return sorted(
        (str(p.relative_to(folder)), p.lstat().st_size if p.is_file() else 0)
        for p in folder.rglob("*")
        if ".git" not in p.relative_to(folder).parts and not CACHES.fullmatch(p.name)
    )


class Claude:
    """A project set up with ``init --statusline``, run as Claude Code runs its commands."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.root = path / ".forge"
        subprocess.run(["git", "init", "-q", str(path)], check=True)
        write_catalog(self.root / "behaviors", CATALOG)
        (self.root / "config.yaml").write_text("floor: off\n")
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("FORGE_", "DISABLE_", "CLAUDE_", "NO_COLOR", "TERM"))
        }
        self.env.update(CLAUDE_PROJECT_DIR=str(path), XDG_CACHE_HOME=str(path.parent / "xdg"))

    def cli(self, *args: str, stdin: bytes = b"", **env: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [str(FORGE), *args], input=stdin, capture_output=True, cwd=self.path,
            env={**self.env, **env}, timeout=60,
        )  # fmt: skip

    def settings(self, name: str = "settings.json") -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.path / ".claude" / name).read_text())
        return data

    def shell(self, command: str | list[str], stdin: bytes, **env: str) -> str:
        """``command`` as Claude Code runs it (a line: ``sh -c``; a list: spawned as it is, as
        an exec-form hook); exit 0 and nothing on stderr asserted."""
        argv = ["sh", "-c", command] if isinstance(command, str) else command
        done = subprocess.run(
            argv, input=stdin, capture_output=True, cwd=self.path,
            env={**self.env, **env}, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done
        assert b"Traceback" not in done.stderr, done.stderr
        return done.stdout.decode()

    def status_line(self, stdin: bytes | None = None, **env: str) -> str:
        command = self.settings()["statusLine"]["command"]
        out = self.shell(command, status_json(self.path) if stdin is None else stdin, **env)
        assert out.endswith("\n") and out.count("\n") == 1, out
        return out[:-1]

    def status_line_from(self, name: str) -> str:
        """The line of the ``statusLine`` in ``.claude/NAME``, without its floor part."""
        command = self.settings(name)["statusLine"]["command"]
        line = self.shell(command, status_json(self.path), NO_COLOR="1").rstrip("\n")
        return line.rsplit(" · floor ", 1)[0]

    def pre_tool_use(self, command: str) -> str:
        hook = claude_code_argv(self.settings()["hooks"]["PreToolUse"][0]["hooks"][0], self.path)
        event = {
            "session_id": SESSION, "hook_event_name": "PreToolUse", "cwd": str(self.path),
            "tool_name": "Bash", "tool_input": {"command": command},
            "transcript_path": "/home/u/t.jsonl", "permission_mode": "default",
        }  # fmt: skip
        return self.shell(hook, json.dumps(event).encode())

    def worker_lines(self) -> int:
        from forge_policy.cli.worker_cmds import ask

        found = ask(str(self.root), b"status")
        assert isinstance(found, dict), found
        return int(found["status_lines"])


@pytest.fixture(scope="module")
def claude(tmp_path_factory: pytest.TempPathFactory) -> Any:
    project = Claude(tmp_path_factory.mktemp("statusline") / "project")
    done = project.cli("init", "--statusline", "--floor", "off", "--json")
    assert done.returncode == 0, done
    yield project
    stop_workers(project.root)


def test_init_writes_the_portable_status_line_command(claude: Claude) -> None:
    assert claude.settings()["statusLine"] == {
        "type": "command",
        "command": '"$CLAUDE_PROJECT_DIR"/.forge/bin/forge-policy-hook statusline',
    }
    again = json.loads(claude.cli("init", "--statusline", "--floor", "off", "--json").stdout)
    assert again["changed"] is False
    doctor = json.loads(claude.cli("doctor", "--json").stdout)["statusline"]
    assert (doctor["ok"], doctor["line"]) == (True, "forge-policy · no events yet · floor off")
    stop_workers(claude.root)  # doctor's hook runs started one: the next test starts with none


def test_a_session_with_no_events_reads_nothing_and_creates_nothing(claude: Claude) -> None:
    before = tree(claude.path)
    line = claude.status_line(NO_COLOR="1")
    assert line == "forge-policy · no events yet · floor off"
    assert tree(claude.path) == before  # no session, no worker folder, no refusal line
    assert not worker_pids(claude.root)


def test_the_line_after_real_hook_calls_from_the_worker_and_in_process(claude: Claude) -> None:
    for command in ("echo risky-me", "echo risky-me", "echo soft-me"):
        claude.pre_tool_use(command)
    expected = "forge-policy · soft_block · open block: softy · risky 2/3 · floor off"
    assert worker_pids(claude.root), "the hook calls started the warm worker"
    served = claude.worker_lines()
    from_worker = claude.status_line(NO_COLOR="1")
    assert claude.worker_lines() == served + 1  # the worker answered it
    in_process = claude.status_line(NO_COLOR="1", FORGE_WORKER="off")
    assert claude.worker_lines() == served + 1
    cli = claude.cli("statusline", stdin=status_json(claude.path), NO_COLOR="1")
    assert (from_worker, in_process, cli.stdout.decode()) == (expected, expected, expected + "\n")
    assert cli.returncode == 0 and not cli.stderr

    coloured = claude.status_line()  # Claude Code renders ANSI; no NO_COLOR: colour
    assert "\x1b[31mopen block: softy\x1b[0m" in coloured
    assert ANSI.sub("", coloured) == expected
    assert claude.status_line(FORGE_WORKER="off") == coloured

    claude.pre_tool_use("echo risky-me")  # the third: the ladder's top, a block of its own
    assert claude.status_line(NO_COLOR="1") == (
        "forge-policy · soft_block · open blocks: risky, softy · floor off"
    )


@pytest.mark.parametrize("stdin", [b"", b"not json", b'{"session_id": 5}', b"\xff"])
def test_bad_input_gives_a_neutral_line(claude: Claude, stdin: bytes) -> None:
    for env in ({}, {"FORGE_WORKER": "off"}):
        assert claude.status_line(stdin, NO_COLOR="1", **env) == "forge-policy: ?"
    done = claude.cli("statusline", stdin=stdin)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"forge-policy: ?\n", b"")


def test_no_forge_root_prints_a_neutral_line_and_creates_nothing(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGE_", "CLAUDE_"))}
    env["CLAUDE_PROJECT_DIR"] = str(tmp_path)
    before = tree(tmp_path)
    for argv in (
        [str(FORGE), "statusline"],
        [sys.executable, "-I", "-S", str(CLIENT_PY), "statusline"],
    ):
        done = subprocess.run(
            argv, input=status_json(tmp_path), capture_output=True, cwd=tmp_path, env=env,
            timeout=60,
        )  # fmt: skip
        assert (done.returncode, done.stdout, done.stderr) == (
            0,
            b"forge-policy: not set up here\n",
            b"",
        )
    assert tree(tmp_path) == before


def test_the_launcher_without_forge_policy_says_so(claude: Claude, tmp_path: Path) -> None:
    launcher = tmp_path / ".forge" / "bin" / "forge-policy-hook"
    launcher.parent.mkdir(parents=True)
    shutil.copy(claude.root / "bin" / "forge-policy-hook", launcher)
    done = subprocess.run(
        [str(launcher), "statusline"], input=b"{}", capture_output=True, cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, timeout=30,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, b"forge-policy: not installed on this machine\n")


def test_init_keeps_a_users_status_line_replace_and_uninstall(tmp_path: Path) -> None:
    project = Claude(tmp_path / "p")
    settings = project.path / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {"type": "command", "command": "~/.claude/mine.sh", "padding": 1}
    settings.write_text(json.dumps({"model": "opus", "statusLine": mine}, indent=4))
    done = project.cli("init", "--statusline", "--floor", "off")
    assert done.returncode == 0, done
    assert project.settings()["statusLine"] == mine
    assert b"forge-policy init --statusline=replace" in done.stdout + done.stderr

    assert project.cli("init", "--statusline=replace", "--floor", "off").returncode == 0
    ours = project.settings()["statusLine"]["command"]
    assert ours.endswith("/.forge/bin/forge-policy-hook statusline")
    assert project.settings()["model"] == "opus"

    assert (
        project.cli("init", "--local", "--statusline", "--floor", "off").returncode == 0
    )  # this machine's
    local = project.settings("settings.local.json")["statusLine"]["command"]
    assert local.endswith("/forge_policy/worker/launch.py statusline")
    assert "statusLine" not in project.settings()  # moved, not shown twice
    assert project.status_line_from("settings.local.json") == "forge-policy · no events yet"

    assert project.cli("uninstall").returncode == 0
    assert not (project.path / ".claude" / "settings.local.json").exists()
    assert project.settings() == {"model": "opus"}
    stop_workers(project.root)
