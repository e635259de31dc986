"""A set-up project that works on a teammate's machine (issue 25, defect 1): the committed
settings hold no path of the machine that ran ``init``; the launcher they run finds this
machine's forge-policy or refuses the call (exit 2) with a message; ``doctor`` runs every
configured command for real and says "not enforced" with the fix when it does not answer;
``uninstall`` is ``init``'s lossless inverse; ``.gitignore`` covers every per-machine file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from forge_policy.ops.settings_file import is_ours
from tests.cli_support import FORGE, Project, claude_code_argv, clean_env

PUSH = "git push --force origin main"
SYSTEM_PATH = "/usr/bin:/bin"


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd.parent)}
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def payload(project: Path, command: str = PUSH) -> str:
    return json.dumps(
        {
            "session_id": "s-portable",
            "transcript_path": "",
            "cwd": str(project),
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_use_id": f"toolu_{os.urandom(4).hex()}",
            "permission_mode": "default",
        }
    )


def pre_tool_handler(project: Path) -> dict[str, Any]:
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    [handler] = [h for g in settings["hooks"]["PreToolUse"] for h in g["hooks"] if is_ours(h)]
    return dict(handler)


def set_command(project: Path, command: str, args: list[str] | None = None) -> None:
    """Every forge-policy handler of ``.claude/settings.json`` runs ``command``: with ``args``
    in exec form, else in shell form (a shell command line)."""
    path = project / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    for groups in settings["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                handler["command"] = command
                handler.pop("args", None)
                if args is not None:
                    handler["args"] = args
    path.write_text(json.dumps(settings, indent=2))


def as_claude_code(project: Path, path: str, **extra: str) -> subprocess.CompletedProcess[str]:
    """The PreToolUse entry of the committed settings, run as Claude Code runs it (exec form:
    no shell), ``CLAUDE_PROJECT_DIR``, the user's ``PATH`` (no FORGE_ROOT: the harness sets
    none)."""
    env = {k: v for k, v in clean_env(project / ".forge").items() if k != "FORGE_ROOT"}
    env |= {"PATH": path, "CLAUDE_PROJECT_DIR": str(project), **extra}
    return subprocess.run(
        claude_code_argv(pre_tool_handler(project), project),
        input=payload(project),
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        timeout=60,
    )


def decision(result: subprocess.CompletedProcess[str]) -> Any:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    (tmp_path / "a").mkdir()
    return Project(tmp_path / "a")


def test_doctor_says_not_enforced_for_a_hook_that_cannot_start(project: Project) -> None:
    """Defect 1: a committed settings file naming another machine's venv. Before: "enforces 12
    of 12 active behaviors" and exit 0."""
    project.run("init", "--floor", "own")
    other = "/home/someone-else/venv/bin/forge-policy hook"  # what init --local wrote there
    set_command(project.path, other.removesuffix(" hook"), args=["hook"])
    result = project.run("doctor", check=1)
    assert "enforces 12 of 12" not in result.stdout
    assert "NOT ENFORCED: 0 of " in result.stdout
    assert f"`{other}` cannot start on this machine" in result.stdout
    assert "fix: forge-policy init" in result.stdout
    assert "the hook is NOT enforced" in result.stderr
    report = json.loads(project.run("doctor", "--json", check=1).stdout)
    [claude] = report["harnesses"]
    assert claude["enforced"] == [] and claude["hook_answers"] is False
    assert {f["code"] for v in claude["not_enforced"].values() for f in v} == {"hook-fails"}
    [run] = claude["hook_runs"]
    assert (run["ok"], run["command"], run["fix"]) == (False, other, "forge-policy init")
    # the fix it names works
    project.run("init", "--floor", "own")
    report = json.loads(project.run("doctor", "--json").stdout)
    assert report["harnesses"][0]["hook_answers"] is True
    assert report["harnesses"][0]["hook_runs"][0]["detail"].startswith("answers (")


def test_doctor_names_a_launcher_claude_code_cannot_start(project: Project) -> None:
    """The exec-form entry spawns the launcher itself: a clone without it (never committed) or
    with it not executable cannot start the hook, which doctor names, with what fixes it."""
    project.run("init", "--floor", "own")
    hook = project.root / "bin" / "forge-policy-hook"
    hook.chmod(0o644)
    [run] = json.loads(project.run("doctor", "--json", check=1).stdout)["harnesses"][0]["hook_runs"]
    assert run["command"] == "${CLAUDE_PROJECT_DIR}/.forge/bin/forge-policy-hook"
    assert "the launcher .forge/bin/forge-policy-hook is not executable" in run["detail"]
    assert "onFailure: block" in run["detail"] and "git add --chmod=+x" in run["fix"]
    hook.unlink()
    result = project.run("doctor", check=1)
    assert "the launcher .forge/bin/forge-policy-hook is missing" in result.stdout
    assert "fix: forge-policy init, then commit .forge/bin/forge-policy-hook" in result.stdout
    project.run("init", "--floor", "own")  # the fix it names works
    assert json.loads(project.run("doctor", "--json").stdout)["harnesses"][0]["hook_answers"]


def test_doctor_says_not_enforced_for_a_hook_that_answers_garbage(project: Project) -> None:
    project.run("init", "--floor", "own")
    set_command(project.path, "echo not-json; true # forge-policy hook")
    out = project.run("doctor", check=1).stdout
    assert "answers with something that is not JSON: not-json" in out


def test_a_clone_on_another_path_and_path_answers_and_names_no_machine_path(
    tmp_path: Path, project: Project
) -> None:
    """Repository A set up and committed; cloned to B: B's committed files hold no path of A's
    machine, the hook answers in B with forge-policy on B's PATH, refuses loudly (exit 2)
    without it, and `init` in B records B's warm client without changing a committed file."""
    a = project.path
    git(a, "init", "-q")
    project.run("init")  # the default floor too: Claude Code's sandbox block is committed
    git(a, "add", "-A")
    git(a, "commit", "-qm", "forge-policy")
    committed = git(a, "ls-files").split()
    assert ".forge/bin/forge-policy-hook" in committed and ".claude/settings.json" in committed
    assert not [f for f in committed if f.startswith((".forge/runtime", ".forge/audit"))]
    b = tmp_path / "elsewhere" / "b"
    b.parent.mkdir()
    git(tmp_path, "clone", "-q", str(a), str(b))
    machine = {str(a), str(Path(sys.executable).parent.parent), sys.executable, str(FORGE)}
    machine.add(os.path.expanduser("~") + "/")
    for name in git(b, "ls-files").split():
        text = (b / name).read_text(encoding="utf-8", errors="replace")
        assert not [m for m in machine if m in text], name

    # B's PATH has its own forge-policy (here: a copy of the console script in another folder)
    bindir = tmp_path / "b-bin"
    bindir.mkdir()
    shutil.copy2(FORGE, bindir / "forge-policy")
    assert decision(as_claude_code(b, f"{bindir}:{SYSTEM_PATH}")) == "deny"

    # no forge-policy at all: exit 2 (Claude Code blocks the call) and a message saying why
    refused = as_claude_code(b, SYSTEM_PATH)
    assert refused.returncode == 2 and refused.stdout == ""
    assert "forge-policy is not installed on this machine" in refused.stderr
    doctor = subprocess.run(
        [str(FORGE), "doctor"],
        cwd=b,
        env={**clean_env(b / ".forge"), "PATH": SYSTEM_PATH},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert doctor.returncode == 1
    assert "finds no forge-policy on this machine" in doctor.stdout
    assert "fix: run forge-policy init with this machine's forge-policy" in doctor.stdout

    # init in B: no committed file changes; the launcher now runs B's warm-worker client
    subprocess.run(
        [str(FORGE), "init"],
        cwd=b,
        env=clean_env(b / ".forge"),
        capture_output=True,
        check=True,
        timeout=60,
    )
    assert git(b, "status", "--porcelain") == ""
    record = (b / ".forge" / "runtime" / "hook-client").read_text().splitlines()
    assert record[1].endswith("forge_policy/worker/launch.py")
    assert decision(as_claude_code(b, SYSTEM_PATH)) == "deny"


def test_the_launcher_prefers_forge_policy_named_by_the_environment(project: Project) -> None:
    project.run("init", "--floor", "own")
    (project.root / "runtime" / "hook-client").unlink()
    result = as_claude_code(project.path, SYSTEM_PATH, FORGE_POLICY=str(FORGE))
    assert decision(result) == "deny"


@pytest.mark.parametrize(
    ("cwd", "command"),
    [
        (".", ".forge/bin/forge-policy-hook"),  # a relative path (Cursor, Copilot CLI)
        (".forge/bin", "sh forge-policy-hook"),  # no folder in $0 at all
        (".forge/bin", "./forge-policy-hook"),
        ("src", "../.forge/bin/forge-policy-hook"),
    ],
)
def test_the_launcher_finds_its_record_however_it_is_named(
    project: Project, cwd: str, command: str
) -> None:
    """The launcher finds ``runtime/hook-client`` beside its own folder from ``$0`` alone (no
    ``dirname`` process): by a relative path, from its own folder, from a subfolder. The record
    is the only way to this venv here: no forge-policy on ``PATH``."""
    project.run("init", "--floor", "own")
    (project.path / "src").mkdir()
    env = {k: v for k, v in clean_env(project.root).items() if k != "FORGE_ROOT"}
    result = subprocess.run(
        ["/bin/sh", "-c", command],
        input=payload(project.path),
        capture_output=True,
        text=True,
        cwd=project.path / cwd,
        env={**env, "PATH": SYSTEM_PATH, "CLAUDE_PROJECT_DIR": str(project.path)},
        timeout=60,
    )
    assert decision(result) == "deny"


def test_gitignore_covers_every_per_machine_file_and_nothing_to_commit(project: Project) -> None:
    git(project.path, "init", "-q")
    project.run("init", "--floor", "own")
    project.run("init", "--local", "--floor", "own")
    ignored = [
        ".forge/runtime/state.json",
        ".forge/runtime/state.json.lock",
        ".forge/runtime/hook-client",
        ".forge/audit/overrides.log",
        ".forge/audit/overrides.log.lock",
        ".forge/config.local.yaml",
        ".claude/settings.local.json",
    ]
    kept = [".forge/config.yaml", ".forge/bin/forge-policy-hook", ".claude/settings.json"]
    result = subprocess.run(
        ["git", "check-ignore", "--no-index", *ignored, *kept],
        cwd=project.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.stdout.split() == ignored


THEIRS: dict[str, Any] = {
    "model": "opus",
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./g.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
    "env": {"A": "1"},
}


def test_uninstall_is_the_lossless_inverse_of_init(project: Project) -> None:
    git(project.path, "init", "-q")
    settings = project.path / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = json.dumps(THEIRS, indent=4) + "\n"
    settings.write_text(original)
    hooks = project.path / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "pre-commit").write_text("#!/bin/sh\necho mine\n")
    project.run("init", "--floor", "own", "--harness", "claude-code", "--harness", "codex")
    project.run("git", "install")
    assert "forge-policy" in (hooks / "pre-commit").read_text()
    hook = as_claude_code(project.path, SYSTEM_PATH)  # starts the warm worker
    assert decision(hook) == "deny"
    assert project.run("worker", "status", check=None).returncode == 0

    report = json.loads(project.run("uninstall", "--json").stdout)
    assert report["changed"] is True
    assert settings.read_text() == original  # byte for byte
    assert not (project.path / ".codex" / "hooks.json").exists()  # it held only ours
    assert (hooks / "pre-commit").read_text() == "#!/bin/sh\necho mine\n"
    assert not (hooks / "commit-msg").exists()
    assert project.run("worker", "status", check=None).returncode == 1
    assert not (project.root / "bin").exists()
    assert (project.root / "config.yaml").is_file()  # .forge stays without --purge
    verbs = {(a["verb"], a["path"]) for a in report["actions"]}
    assert ("unchanged", ".forge") in verbs
    assert "nothing to do" in project.run("uninstall").stdout

    out = project.run("uninstall", "--purge").stdout
    assert "removed   .forge: configuration, catalog, state and audit log" in out
    assert not project.root.exists()
    assert not (project.path / ".gitignore").exists()  # it held only init's lines


def test_uninstall_leaves_a_file_it_cannot_rewrite_and_says_so(project: Project) -> None:
    project.run("init", "--floor", "own")
    settings = project.path / ".claude" / "settings.json"
    broken = settings.read_text() + "{"
    settings.write_text(broken)
    out = project.run("uninstall").stdout
    assert "note: .claude/settings.json:" in out and "by hand" in out
    assert settings.read_text() == broken


def test_init_and_purge_speak_json(project: Project) -> None:
    report = project.json("init", "--floor", "own")
    assert report["changed"] is True and report["serve"] is False
    created = {a["path"] for a in report["actions"] if a["verb"] == "created"}
    assert {".forge/bin/forge-policy-hook", ".claude/settings.json"} <= created
    assert project.json("init", "--floor", "own")["changed"] is False
    purged = project.json("purge")
    assert purged["purged"] == 0 and purged["ttl_seconds"] > 0


@pytest.mark.parametrize(
    "harness", ["claude-code", "codex", "gemini", "cursor", "copilot", "antigravity"]
)
def test_doctor_runs_each_harness_s_command_as_that_harness_would(
    project: Project, harness: str
) -> None:
    """Each harness's committed command, run by doctor with that harness's variables and
    payload, answers; without this machine's record nor forge-policy on PATH it does not."""
    project.run("init", "--floor", "own", "--harness", harness)
    [entry] = project.json("doctor", "--harness", harness)["harnesses"]
    [run] = entry["hook_runs"]
    assert run["ok"] is True, run
    assert entry["enforced"] and "hook-fails" not in json.dumps(entry["not_enforced"])
    (project.root / "runtime" / "hook-client").unlink()
    env = {**project.env, "PATH": SYSTEM_PATH}
    result = subprocess.run(
        [str(FORGE), "doctor", "--harness", harness, "--json"],
        cwd=project.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    [entry] = json.loads(result.stdout)["harnesses"]
    [run] = entry["hook_runs"]
    assert run["ok"] is False and "finds no forge-policy on this machine" in run["detail"]
    assert entry["enforced"] == []


@pytest.mark.parametrize(
    ("args", "code", "answer"),
    [
        ([], 2, None),  # Claude Code: exit 2 blocks a PreToolUse
        (["--harness", "codex"], 2, None),  # Codex, Gemini CLI, Cursor: exit 2 with a reason
        (["--harness", "cursor"], 2, None),
        (["--harness", "copilot", "--event", "preToolUse"], 0, "permissionDecision"),
        (["--harness", "antigravity", "--event", "PreToolUse"], 0, "decision"),
    ],
)
def test_the_launcher_without_forge_policy_refuses_in_each_harness_s_words(
    tmp_path: Path, args: list[str], code: int, answer: str | None
) -> None:
    from forge_policy.ops import launcher

    root = tmp_path / ".forge"
    launcher.write(root)
    result = subprocess.run(
        [str(launcher.path(root)), *args],
        input="{}",
        capture_output=True,
        text=True,
        env={"PATH": SYSTEM_PATH},
        check=False,
    )
    assert result.returncode == code
    assert "forge-policy is not installed on this machine" in result.stderr
    if answer is None:
        assert result.stdout == ""
    else:
        assert json.loads(result.stdout)[answer] == "deny"
