"""Every command finds the project as git finds a work tree (SPEC §10, issue 25 item 2): from a
subfolder, ``status`` and ``audit`` show the project's sessions and records, the hook (Codex or
Cursor calling it from a subfolder, or with another ``CLAUDE_PROJECT_DIR``) lands on the same
state, audit log and worker, read-only commands create nothing, and ``init`` below a project
asks for ``--here``. Real ``forge-policy`` processes in real folders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forge_policy.worker import protocol

FORGE = Path(sys.executable).with_name("forge-policy")
LAUNCH = Path(__file__).resolve().parent.parent / "forge_policy" / "worker" / "launch.py"


def environ(home: Path, **extra: str) -> dict[str, str]:
    """This process's variables without FORGE_*/CLAUDE_PROJECT_DIR, with a home of the test."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("FORGE_", "DISABLE_", "GIT_")) and k != "CLAUDE_PROJECT_DIR"
    }
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), FORGE_WORKER="off")
    env.update(extra)
    return env


def forge(
    cwd: Path, home: Path, *args: str, input: str | None = None, check: int | None = 0, **env: str
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(FORGE), *args],
        cwd=cwd,
        env=environ(home, **env),
        input=input,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if check is not None:
        assert done.returncode == check, (args, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def bash(session: str, cwd: Path, command: str) -> str:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": "",
            "cwd": str(cwd),
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
        }
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository set up by ``init`` at its top level, with a ``src/app`` subfolder."""
    top = tmp_path / "repo"
    top.mkdir()
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    (top / "src" / "app").mkdir(parents=True)
    forge(top, tmp_path / "home", "init", "--harness", "claude-code", "--floor", "off")
    return top


def tree(folder: Path) -> dict[str, tuple[str, int]]:
    """Every path under ``folder`` (``.git`` aside) with its kind and size."""
    found: dict[str, tuple[str, int]] = {}
    for path in folder.rglob("*"):
        relative = path.relative_to(folder)
        if relative.parts[0] == ".git":
            continue
        kind = "dir" if path.is_dir() else "file"
        found[relative.as_posix()] = (kind, 0 if kind == "dir" else path.stat().st_size)
    return found


# -- the discovery itself (the client's code: built-ins only) ----------------------------------


def test_discover_nearest_forge_then_repository_top_then_start(tmp_path: Path) -> None:
    top = tmp_path / "repo"
    (top / ".git").mkdir(parents=True)
    (top / "a" / "b").mkdir(parents=True)
    (top / "own" / ".forge").mkdir(parents=True)
    (top / "own" / "deep").mkdir()
    plain = tmp_path / "plain" / "x"
    plain.mkdir(parents=True)

    def found(start: Path, marker: bytes = b".forge") -> Path:
        return Path(os.fsdecode(protocol.discover(os.fsencode(start), marker)))

    assert found(top / "a" / "b") == top  # the repository's top level
    assert found(top / "own" / "deep") == top / "own"  # a project of its own inside it
    assert found(plain) == plain  # neither: the folder itself
    (top / ".forge").mkdir()
    assert found(top / "a" / "b") == top
    # a worktree or submodule marks its top level with a .git file
    (top / "sub").mkdir()
    (top / "sub" / ".git").write_text("gitdir: ../.git/modules/sub\n")
    (top / "sub" / "x").mkdir()
    assert found(top / "sub" / "x") == top / "sub"
    # FORGE_ROOT's name is the mark; an absolute one marks nothing
    (top / "a" / "state").mkdir()
    assert found(top / "a" / "b", b"state") == top / "a"
    assert protocol.marker_of(b"/srv/forge") == b"" and protocol.marker_of(b"../s") == b""


def test_client_and_engine_resolve_the_same_root(repo: Path) -> None:
    """The hook client (built-ins only) and Config agree, from every starting point."""
    from forge_policy.config.env import Config

    sub = repo / "src" / "app"
    cases: list[tuple[dict[str, str], Path]] = [
        ({}, sub),
        ({"CLAUDE_PROJECT_DIR": str(sub)}, Path("/")),
        ({"CLAUDE_PROJECT_DIR": "src"}, repo),
        ({"FORGE_ROOT": ".forge"}, sub),
        ({"FORGE_ROOT": str(repo / ".forge")}, sub),
    ]
    for env, cwd in cases:
        engine = Config.from_env({"FORGE_STORE": "memory", **env}, cwd=str(cwd)).root
        raw = {k.encode(): v.encode() for k, v in env.items()}
        client = os.fsdecode(protocol.root_of(raw, os.fsencode(cwd)))
        assert engine == client == str(repo / ".forge"), (env, cwd)


# -- issue 25, item 2: from a subfolder ---------------------------------------------------------


def test_status_and_audit_from_a_subfolder_show_the_projects_data(
    repo: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    denied = forge(repo, home, "hook", input=bash("root-session", repo, "git push --force"))
    assert '"deny"' in denied.stdout
    sub = repo / "src" / "app"
    status = forge(sub, home, "status", "--json")
    assert "root-session" in status.stdout, status.stdout
    text = forge(sub, home, "status").stdout
    assert "root-session" in text and "No live sessions" not in text
    audit = json.loads(forge(sub, home, "audit", "--json").stdout)
    assert audit["behaviors"]["no-destructive-git"]["blocks"] == 1, audit
    assert not (sub / ".forge").exists() and not (repo / "src" / ".forge").exists()


@pytest.mark.parametrize(
    "how",
    ["codex-cwd-in-subfolder", "cursor-project-dir-subfolder", "gemini-project-dir-relative"],
)
def test_hook_from_a_subfolder_lands_on_the_project(repo: Path, tmp_path: Path, how: str) -> None:
    """Codex runs the hook in the folder it was started in, Cursor and Gemini CLI set
    ``CLAUDE_PROJECT_DIR`` to their workspace: the same state and audit log either way."""
    home = tmp_path / "home"
    sub = repo / "src" / "app"
    env = {
        "codex-cwd-in-subfolder": {},
        "cursor-project-dir-subfolder": {"CLAUDE_PROJECT_DIR": str(sub)},
        "gemini-project-dir-relative": {"CLAUDE_PROJECT_DIR": "app"},
    }[how]
    cwd = repo / "src" if how.startswith("gemini") else sub
    harness = {"codex": "codex", "cursor": "claude-code", "gemini": "gemini"}[how.split("-")[0]]
    payload = json.loads(bash(f"s-{how}", sub, "git reset --hard HEAD~3"))
    if harness == "gemini":
        payload.update(hook_event_name="BeforeTool", tool_name="run_shell_command")
    forge(cwd, home, "hook", "--harness", harness, input=json.dumps(payload), **env)
    status = forge(repo, home, "status", "--json").stdout
    assert f"s-{how}" in status, status
    log = (repo / ".forge" / "audit" / "overrides.log").read_text()
    assert f"s-{how}" in log
    assert not list(repo.joinpath("src").rglob(".forge"))


def test_warm_client_from_a_subfolder_asks_the_projects_worker(repo: Path, tmp_path: Path) -> None:
    """The client resolves the project's root from a subfolder: the worker it starts (and
    asks) is the project's, in ``<root>/runtime/worker``, none under the subfolder."""
    home = tmp_path / "home"
    sub = repo / "src" / "app"
    env = environ(home, FORGE_WORKER="on")
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", str(LAUNCH)],
            input=bash("warm", sub, "git push --force").encode(),
            cwd=sub,
            env=env,
            capture_output=True,
            timeout=60,
        )
        assert b'"deny"' in done.stdout, done.stderr
        assert (repo / ".forge" / "runtime" / "worker").is_dir()
        assert not list(repo.joinpath("src").rglob(".forge"))
    finally:
        forge(repo, home, "worker", "stop", check=None)


# -- read-only commands create nothing ----------------------------------------------------------

EVENT = bash("ro", Path("/tmp"), "ls")
#: Every read-only command, with its arguments.
READ_ONLY: list[tuple[str, ...]] = [
    ("status",),
    ("status", "--json"),
    ("audit",),
    ("audit", "--json"),
    ("audit", "--verify"),
    ("list",),
    ("list", "--json"),
    ("describe", "no-destructive-git"),
    ("explain", "--file", "EVENT"),
    ("explain", "--file", "EVENT", "--json"),
    ("doctor",),
    ("doctor", "--json"),
    ("floor",),
    ("floor", "--json"),
    ("validate",),
    ("schema",),
    ("worker", "status"),
    ("worker", "status", "--json"),
    ("config",),
    ("config", "--origin"),
    ("config", "--json"),
]


def _run_read_only(cwd: Path, home: Path, args: tuple[str, ...], event: Path) -> None:
    args = tuple(str(event) if a == "EVENT" else a for a in args)
    forge(cwd, home, *args, check=None)


@pytest.mark.parametrize("args", READ_ONLY, ids=lambda a: " ".join(a))
def test_read_only_command_creates_nothing_outside_a_project(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    folder = tmp_path / "plain" / "src"
    folder.mkdir(parents=True)
    event = tmp_path / "event.json"
    event.write_text(EVENT)
    before = tree(tmp_path / "plain")
    _run_read_only(folder, tmp_path / "home", args, event)
    assert tree(tmp_path / "plain") == before


@pytest.mark.parametrize("args", READ_ONLY, ids=lambda a: " ".join(a))
def test_read_only_command_creates_nothing_in_a_subfolder(
    repo: Path, tmp_path: Path, args: tuple[str, ...]
) -> None:
    home = tmp_path / "home"
    event = tmp_path / "event.json"
    event.write_text(EVENT)
    forge(repo, home, "hook", input=bash("warm-up", repo, "ls"))  # state and audit exist
    before = tree(repo)
    _run_read_only(repo / "src" / "app", home, args, event)
    after = tree(repo)
    created = sorted(set(after) - set(before))
    assert created == [], created


# -- init ---------------------------------------------------------------------------------------


def test_init_below_the_repository_top_asks_for_here(tmp_path: Path) -> None:
    home = tmp_path / "home"
    top = tmp_path / "repo"
    (top / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    refused = forge(top / "src", home, "init", "--harness", "claude-code", check=2)
    assert "--here" in refused.stderr and str(top) in refused.stderr, refused.stderr
    assert sorted(p.name for p in (top / "src").iterdir()) == []
    assert not (top / ".forge").exists()
    forge(top, home, "init", "--harness", "claude-code")  # at the top level: the project
    assert (top / ".forge").is_dir() and (top / ".claude" / "settings.json").is_file()
    # below a folder holding .forge, too (no git needed)
    refused = forge(top / "src", home, "init", check=2)
    assert "--here" in refused.stderr
    assert not (top / "src" / ".forge").exists()


def test_init_here_sets_up_a_subfolder_as_its_own_project(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    sub = repo / "src"
    forge(sub, home, "init", "--here", "--harness", "claude-code", "--floor", "off")
    assert (sub / ".forge").is_dir() and (sub / ".claude" / "settings.json").is_file()
    forge(sub / "app", home, "hook", input=bash("inner", sub, "git push --force"))
    assert "inner" in forge(sub, home, "status", "--json").stdout
    assert "inner" not in forge(repo, home, "status", "--json").stdout


def test_init_without_git_or_forge_sets_up_the_working_directory(tmp_path: Path) -> None:
    folder = tmp_path / "plain" / "here"
    folder.mkdir(parents=True)
    forge(folder, tmp_path / "home", "init", "--harness", "claude-code")
    assert (folder / ".forge").is_dir()
    assert not (tmp_path / "plain" / ".forge").exists()
