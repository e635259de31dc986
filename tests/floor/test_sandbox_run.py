"""forge_policy's own floor, run for real (SPEC §13): each shell call rewritten by
:func:`~forge_policy.floor.sandbox.command_for`, executed by ``/bin/bash -c`` as a harness
would, as root (CI) and as ``nobody`` (users are not root).

bubblewrap holds the whole floor; the Landlock launcher holds writes outside the writable roots
and nothing inside them (its documented limits are asserted too, so a claim that stops being
true fails here). Each world has its project in ``/tmp`` (a writable root) and its ``$HOME``
under ``/var/lib`` (outside every writable root), both owned by the user the commands run as,
so a refusal comes from the sandbox and not from file permissions.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from forge_policy.floor.derive import floor_for
from forge_policy.floor.landlock import EXIT_SETUP
from forge_policy.floor.model import Floor, FloorPath
from forge_policy.floor.sandbox import LAUNCHER, command_for, methods_available
from tests.optional import need_binary

SITE = sysconfig.get_paths()["purelib"]
SECRETS = {".ssh/id_rsa": "SECRET-SSH-KEY", ".aws/credentials": "SECRET-AWS-KEY"}
ENV_SECRET = "SECRET-DOTENV"
RUNUSER = shutil.which("runuser") or "/usr/sbin/runuser"
REFUSED = ("Read-only file system", "Permission denied", "Device or resource busy")


class World:
    """A project and a home owned by ``user``, and the floor over them."""

    def __init__(self, user: str, method: str) -> None:
        self.user, self.method = user, method
        entry = pwd.getpwnam(user)
        self.base = Path(tempfile.mkdtemp(prefix="floor-run-", dir="/tmp"))
        self.home_base = Path(tempfile.mkdtemp(prefix="forge-floor-home-", dir="/var/lib"))
        self.project, self.home = self.base / "project", self.home_base / "home"
        self.project.mkdir()
        for name, text in SECRETS.items():
            (self.home / name).parent.mkdir(parents=True, exist_ok=True)
            (self.home / name).write_text(text)
        (self.project / ".env").write_text(f"TOKEN={ENV_SECRET}\n")
        for folder in (".forge", ".claude"):
            (self.project / folder).mkdir()
        (self.project / ".forge" / "config.yaml").write_text("floor: own\n")
        (self.project / ".claude" / "settings.json").write_text("{}\n")
        (self.project / "test_tiny.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
        (self.project / "package.json").write_text('{"name": "proj", "version": "1.0.0"}\n')
        package = self.base / "localpkg"
        package.mkdir()
        (package / "package.json").write_text('{"name": "localpkg", "version": "1.0.0"}\n')
        (package / "index.js").write_text("module.exports = 42;\n")
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        for path in (self.base, self.home_base):
            path.chmod(0o755)
            for item in (path, *path.rglob("*")):
                os.lchown(item, entry.pw_uid, entry.pw_gid)
        self.env = {
            "HOME": str(self.home),
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "npm_config_cache": str(self.base / "npm-cache"),
            "npm_config_update_notifier": "false",
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
        }
        derived = floor_for(str(self.project), {"HOME": str(self.home), "TMPDIR": "/tmp"})
        dotenv = FloorPath(str(self.project / ".env"), "test-secret-file")
        self.floor = Floor(
            derived.project,
            derived.writable,
            derived.never_written,
            (*derived.never_read, dotenv),
        )
        # nobody cannot reach root's interpreter (/root is 0700); the launcher needs only the
        # standard library, so the system's python3 runs it for nobody
        self.python = "/usr/bin/python3" if user != "root" else None

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        text = command_for(self.floor, command, self.method, python=self.python)
        prefix = [] if self.user == "root" else [RUNUSER, "-u", self.user, "--"]
        return subprocess.run(
            [*prefix, "/bin/bash", "-c", text],
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )

    def close(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)
        shutil.rmtree(self.home_base, ignore_errors=True)


CASES = [(m, u) for m in ("bwrap", "landlock") for u in ("root", "nobody")]


@pytest.fixture(params=CASES, ids=[f"{m}-{u}" for m, u in CASES], scope="module")
def world(request: pytest.FixtureRequest) -> object:
    method, user = request.param
    need_binary("git")
    if method == "bwrap":
        need_binary("bwrap")
    if os.geteuid() != 0:
        pytest.skip("the floor's run tests create worlds for root and nobody: run them as root")
    if method not in methods_available(os.environ):
        pytest.skip(f"{method} cannot hold a floor on this machine (methods_available)")
    if user != "root" and method == "landlock":
        for path in ("/usr/bin/python3", LAUNCHER):
            reach = subprocess.run([RUNUSER, "-u", user, "--", "test", "-r", path], check=False)
            if reach.returncode != 0:
                pytest.skip(f"{user} cannot read {path} (a private folder above it?)")
    made = World(user, method)
    yield made
    made.close()


def refused(result: subprocess.CompletedProcess[str]) -> bool:
    return result.returncode != 0 and any(reason in result.stderr for reason in REFUSED)


def test_writes_outside_the_writable_roots_fail(world: World) -> None:
    for target in (world.home / "planted", Path(SITE) / "forge_floor_probe.pth"):
        result = world.run(f"echo x > {target}")
        assert refused(result), (target, result)
        assert not target.exists()


def test_governance_writes_fail_under_bubblewrap_and_pass_under_landlock(world: World) -> None:
    targets = {
        ".forge/config.yaml": "floor: off\n",
        ".claude/settings.json": '{"sandbox": {}}\n',
        ".git/hooks/pre-commit": "#!/bin/sh\n",
        ".git/config": "[core]\n",
    }
    for name, text in targets.items():
        path = world.project / name
        before = path.read_text() if path.exists() else None
        result = world.run(f"mkdir -p {Path(name).parent} && printf %s '{text}' > {name}")
        if world.method == "bwrap":
            assert refused(result), (name, result)
            assert (path.read_text() if path.exists() else None) == before
        else:  # Landlock cannot hold a never-written path inside a writable root (unheld)
            assert result.returncode == 0, (name, result)
    # a missing harness folder is the hook's alone (no placeholder mount: see floor.sandbox)
    result = world.run("mkdir -p .cursor && printf %s '{}' > .cursor/hooks.json")
    assert result.returncode == 0, result
    assert [p.name for p in (world.project / ".cursor").iterdir()] == ["hooks.json"]


def test_secrets_are_unreadable_under_bubblewrap(world: World) -> None:
    for name in (*(str(world.home / n) for n in SECRETS), ".env"):
        result = world.run(f"cat {name}")
        leaked = any(s in result.stdout for s in (*SECRETS.values(), ENV_SECRET))
        assert leaked == (world.method == "landlock"), (name, result)


def test_moving_an_ancestor_cannot_carry_a_protected_path_away(world: World) -> None:
    result = world.run(
        "mv .git .git-moved && mkdir -p .git/hooks && echo x > .git/hooks/pre-commit"
    )
    if world.method == "bwrap":
        assert refused(result), result
        assert (world.project / ".git" / "HEAD").exists()
    else:
        assert result.returncode == 0, result
        world.run("rm -rf .git && mv .git-moved .git")


def test_ordinary_work_succeeds(world: World) -> None:
    need_binary("npm")
    for command in (
        "mkdir -p build && echo built > build/out.txt && cat build/out.txt",
        "echo scratch > /tmp/floor-scratch-$$ && rm /tmp/floor-scratch-$$",
        "echo '# tiny' > README.md && git add README.md && git commit -q -m first",
        "npm install --no-audit --no-fund --offline --loglevel=error file:../localpkg"
        " && node -e 'console.log(require(\"localpkg\"))'",
    ):
        result = world.run(command)
        assert result.returncode == 0, (command, result)
    assert (world.project / "build" / "out.txt").read_text() == "built\n"
    assert (world.project / "node_modules" / "localpkg" / "package.json").exists()


def test_pytest_runs_in_the_sandbox(world: World) -> None:
    if world.user != "root":
        pytest.skip("the test interpreter lives under /root, which nobody cannot reach")
    interpreter = sys.executable
    result = world.run(f"{interpreter} -m pytest -q -p no:randomly test_tiny.py")
    assert result.returncode == 0 and "1 passed" in result.stdout, result


def test_the_launcher_fails_closed_on_a_bad_floor(world: World) -> None:
    if world.method != "landlock":
        pytest.skip("bubblewrap runs inline: there is no floor document to read")
    marker = world.base / "ran"
    python = world.python or sys.executable
    launcher = Path(command_for(world.floor, "true", "landlock").split(" ")[3])
    floor_file = world.project / "floor.json"  # inside a writable root: refused
    floor_file.write_text(world.floor.to_json())
    for document in ('{"format": 2}', "[]", "{not json", str(floor_file)):
        prefix = [] if world.user == "root" else [RUNUSER, "-u", world.user, "--"]
        result = subprocess.run(
            [*prefix, python, "-I", "-S", str(launcher), document, f"touch {marker}"],
            cwd=world.project,
            env=world.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == EXIT_SETUP, (document, result)
        assert result.stderr.count("\n") == 1 and "the command was not run" in result.stderr
        assert not marker.exists()
    kept = world.home_base / "floor.json"  # outside every writable root: accepted
    kept.write_text(world.floor.to_json())
    kept.chmod(0o644)
    prefix = [] if world.user == "root" else [RUNUSER, "-u", world.user, "--"]
    command = [*prefix, python, "-I", "-S", str(launcher), str(kept), f"touch {marker}"]
    done = subprocess.run(command, cwd=world.project, env=world.env, timeout=60, check=False)
    assert done.returncode == 0 and marker.exists()
