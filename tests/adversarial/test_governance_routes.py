"""Through the real ``forge-policy hook`` process: every route to what controls the hook
(issue 23, family 2; SPEC §7 ``protect-governance``) is refused in three spellings or more,
and its harmless twin still passes. The warm worker and its fallback no longer run the
``import`` lines of ``.pth`` files."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hookrun import ClientProject, Project, stop_workers, worker_pids

import forge_policy

SITE = sysconfig.get_paths()["purelib"]
BIN = os.path.dirname(os.path.abspath(sys.executable))
PACKAGE = os.path.dirname(os.path.realpath(forge_policy.__file__))

#: route → commands that must be refused (run in a git repository holding an untracked
#: ``.forge``, its runtime ignored, and a hard link ``innocent`` to the audit log)
REFUSED = {
    "installation": [
        f"echo 'import forge_policy.hook as h; h.respond = None' > {SITE}/zz-evil.pth",
        f"cp /tmp/evil.py {SITE}/sitecustomize.py",
        f"sed -i 's/deny/allow/' {PACKAGE}/hook.py",
        f"ln -sf /tmp/fake {BIN}/forge-policy",
        f"echo 'include-system-site-packages = true' >> {os.path.dirname(BIN)}/pyvenv.cfg",
        "pip uninstall -y forge-policy",
        "python3 -m pip install -U forge_policy==0.0.1",
    ],
    "git hooks": [
        "printf '#!/bin/sh\\nforge-policy off x\\n' > .git/hooks/post-checkout",
        "cp /tmp/evil .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit",
        "mkdir -p .git/hooks && tee .git/hooks/post-merge < /tmp/evil",
    ],
    "git config": [
        "git config core.hooksPath /tmp/h",
        "git config core.fsmonitor ./fsm.sh",
        "git config alias.co '!forge-policy off x; git checkout'",
        "echo '[core] hooksPath = /tmp/h' >> .git/config",
    ],
    "links": [
        "ln -sfn .claude c && echo '{}' > c/settings.json",
        "ln -s .forge f; rm -rf f/",
        "cp -s $PWD/.forge/audit/overrides.log x && : > x",
        "ln .forge/audit/overrides.log y; : > y",
        ": > innocent",
    ],
    "git removing .forge": [
        "git stash -u",
        "git stash --all",
        "git clean -fdx",
        "git clean -fX",
        "git clean -fd",
    ],
    "managed settings": [
        "echo '{}' > /etc/claude-code/managed-settings.json",
        "rm -f /etc/claude-code/managed-mcp.json",
        "echo x > /etc/codex/requirements.toml",
        "echo '{}' > /etc/gemini-cli/settings.json",
    ],
    "processes and locks": [
        "kill $(cat .forge/runtime/worker/worker.pid)",
        "pkill -f forge-policy",
        "fuser -k .forge/runtime/worker/worker.sock",
        "flock .forge/runtime/state.lock sleep 999",
        "exec 9>.forge/runtime/state.lock; flock 9; sleep 999",
        "python3 -c 'import fcntl; fcntl.flock(open(\".forge/runtime/x.lock\"), 2)'",
    ],
    "forge-policy by any spelling": [
        "env -u CLAUDECODE forge-policy off dangerous-commands",
        "script -qc 'forge-policy override x --session s --reason \"user approved\"' /dev/null",
        f"{BIN}/forge-policy off x",
        "python3 -m forge_policy off x",
        'python3 -c \'from forge_policy.cli import main; main(["off", "x"])\'',
        "$(command -v forge-policy) off x",
        "f=forge-policy; $f off x",
        "forge-pol''icy off x",
        "\\forge-policy off x",
        f"cp {BIN}/forge-policy /tmp/fp && /tmp/fp off x",
        "forge-policy hook < forged.json",
        "uvx forge-policy off x",
    ],
}

#: their harmless twins
PASSED = [
    f"ls {SITE}",
    f"cat {BIN}/forge-policy",
    "ls .git/hooks",
    "git config user.name 'A U Thor'",
    "git config alias.co checkout",
    "git config --get core.hooksPath",
    "ln -s src lib",
    "ln -sfn src current && echo x > current/notes.txt",
    "git stash list",
    "git clean -n -dx",
    "git clean -nd src",
    "cat /etc/hostname",
    "pkill -f my-dev-server",
    "flock src/.lock true",
    "forge-policy status",
    "forge-policy audit --verify",
    "forge-policy --help",
    "python3 -c 'import forge_policy; print(forge_policy.__version__)'",
    "echo {a,b}",
    "for f in src/*.py; do wc -l $f; done",
    "run() { wc -l src/a.py; }; run",
]


def git(cwd: Path, *args: str) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x",
           "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@x"}  # fmt: skip
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, env=env)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """The built-in catalog in a git repository whose ``.forge`` is untracked."""
    project = Project(tmp_path_factory.mktemp("routes"), catalog={})
    src = project.dir / "src"
    src.mkdir()
    (src / "a.py").write_text("a = 1\n")
    (project.dir / ".gitignore").write_text(".forge/runtime/\n")
    git(project.dir, "init", "-q", "-b", "main")
    git(project.dir, "add", ".")
    git(project.dir, "commit", "-qm", "init")
    audit = project.root / "audit"
    audit.mkdir(parents=True)
    (audit / "overrides.log").write_text("")
    (project.root / "runtime").mkdir()
    os.link(audit / "overrides.log", project.dir / "innocent")
    return project


def decide(project: Project, command: str) -> tuple[str, str]:
    project.session = f"sess-{uuid.uuid4()}"  # no escalation carries over
    out, _stderr = project.run(project.bash(command), FORGE_WORKER="off")
    specific: dict[str, Any] = (out or {}).get("hookSpecificOutput", {})
    return specific.get("permissionDecision", "allow"), specific.get("permissionDecisionReason", "")


@pytest.mark.parametrize(
    ("route", "command"), [(r, c) for r, commands in REFUSED.items() for c in commands]
)
def test_every_route_is_refused_by_the_hook(project: Project, route: str, command: str) -> None:
    if route == "installation" and PACKAGE in command and PACKAGE.startswith(str(project.dir)):
        pytest.skip("the package is the project's own code here")
    verdict, reason = decide(project, command)
    assert verdict == "deny", (route, command, reason)
    assert reason.startswith("[protect-governance]"), reason
    assert "cannot be overridden" in reason


@pytest.mark.parametrize("command", PASSED)
def test_the_harmless_twins_pass_the_hook(project: Project, command: str) -> None:
    verdict, reason = decide(project, command)
    assert verdict == "allow", (command, reason)


def test_each_route_has_three_spellings() -> None:
    assert all(len(commands) >= 3 for commands in REFUSED.values())


# --- the warm worker and its fallback skip the import lines of .pth files -----------------------


@pytest.fixture
def probe(tmp_path: Path) -> Iterator[Path]:
    """A ``.pth`` in this interpreter's site folder whose import line writes a marker file
    named by ``FORGE_PTH_PROBE`` (other processes, without the variable, are unaffected)."""
    pth = Path(SITE) / f"zz-forge-test-probe-{uuid.uuid4().hex[:8]}.pth"
    pth.write_text(
        "import os; p = os.environ.get('FORGE_PTH_PROBE'); p and open(p, 'a').write('ran')\n"
    )
    try:
        yield tmp_path / "marker"
    finally:
        pth.unlink()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the worker needs Linux")
def test_the_client_and_its_worker_do_not_run_pth_import_lines(tmp_path: Path, probe: Path) -> None:
    env = {**os.environ, "FORGE_PTH_PROBE": str(probe)}
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
    assert "ran" in probe.read_text()  # the probe works: site runs it
    probe.unlink()
    client = ClientProject(tmp_path / "client", catalog={})
    try:
        # the fallback (no worker), then the worker it starts, then an answer from the worker
        for env in ({"FORGE_WORKER": "off"}, {}, {}):
            answer = client.call(client.bash("rm -rf .forge"), FORGE_PTH_PROBE=str(probe), **env)
            assert b'"permissionDecision":"deny"' in answer.stdout, answer
            if not env:
                client.wait_worker()
        assert client.requests() >= 1
        assert not probe.exists(), "a .pth import line ran in the hook"
        allowed = client.call(client.bash("ls"), FORGE_PTH_PROBE=str(probe))
        assert allowed.stdout == b"" and not probe.exists()
    finally:
        stop_workers(client.root)
    assert worker_pids(client.root) == []
