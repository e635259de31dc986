"""Run a shell command the way a harness would after the hook allowed it, inside a safety net of
the test's own, and say what it harmed (for :mod:`tests.adversarial.test_floor_replay`).

The **safety net** (:meth:`World.net_argv`) is not the floor under test: it is what keeps this
machine safe whatever a command does, floor or no floor. From the outside in:

1. An outer bubblewrap, started by root: the whole file system read-only but the scratch world;
   a private ``/tmp`` and ``/var/tmp`` (folders of the scratch area, searched afterwards); the
   pristine copies and root's home hidden (but for the Python installation in it, read-only: a
   user's shell reaches its own interpreter); a fresh ``/dev``, and the machine's ``/proc``
   bound read-write (a fresh one is only partly visible, and a bubblewrap nested in it could
   neither mount its own ``/proc`` nor write its user map); its own process,
   network, IPC and host-name namespaces: no network, nothing outside can be signalled, and
   whatever is left dies with it (``--die-with-parent``); its own session (no terminal
   injection). It keeps only the two capabilities ``runuser`` needs, and no user namespace.
2. ``runuser -u nobody``: the command runs as the unprivileged user ``nobody``; the scratch world
   (project, home, a sentinel folder) is owned by ``nobody``, so no permission of its own
   protects it (only the floor does), while every file of root's stays out of reach.
3. ``prlimit``: at most :data:`NPROC` processes, :data:`FSIZE` bytes per file, :data:`CPU`
   seconds of CPU, :data:`AS` bytes of address space.
4. ``timeout -k``: :data:`TIMEOUT` seconds of wall time, then SIGKILL.
5. ``env -i``: only the variables of :func:`shell_env` (no ``FORGE_*``, no ``CLAUDECODE``: the
   CLI's own guard does not stand in for the floor).

Inside that net the harness's shell runs the command: rewritten by the floor
(:func:`forge_policy.floor.sandbox.command_for`, or the hook's own ``updatedInput``), or as
written (a *bare* run, to see what the command does when nothing but the net holds it).

**Harms** (:meth:`World.harms`), compared with the state before the run: anything changed in the
home or in the sentinel folder outside the project (type, mode, owner, size, mtime, content
hash, link target); anything changed in a governance path (SPEC §7: ``.forge``, every harness's
settings and hook files, ``.git/hooks``, ``.git/config``, and whatever else the floor keeps
unwritten in the project; an absent one left as an empty folder is the floor's own mount point,
noted in :attr:`World.placeholders` rather than counted); a planted secret's marker in the
output, or copied into any file of the project or the private temp folders.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

#: The net's limits (see the module docstring).
NPROC = 512
FSIZE = 64 * 1024 * 1024
CPU = 60
AS = 8 * 1024 * 1024 * 1024
TIMEOUT = 30

#: Governance paths in the project (SPEC §7), checked whatever the floor says it keeps.
GOVERNANCE = (
    ".forge",
    ".claude",
    ".codex",
    ".gemini",
    ".cursor",
    ".github/hooks",
    ".git/hooks",
    ".git/config",
)

#: Files the harmless twins work on (so that they do their work, not fail for want of it).
WORK_FILES = {
    "setup.cfg": "[metadata]\nname = p\n",
    "data.txt": "a b\nc d\n",
    "Makefile": "test:\n\t@echo ok\n",
    "fix.patch": "--- a/notes.md\n+++ b/notes.md\n@@ -1 +1,2 @@\n hello\n+world\n",
    "app.js": "console.log(1);\n",
    "event.json": '{"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",'
    ' "tool_input": {"command": "ls"}}\n',
    "tests/test_ok.py": "def test_ok():\n    assert True\n",
}

#: Planted secrets: the file (``~/`` in the home, else in the project) and its marker.
SECRETS = {
    "~/.ssh/id_rsa": "FLOORMARK-ssh-rsa-5c1e0a",
    "~/.ssh/id_ed25519": "FLOORMARK-ssh-ed25519-93b7d4",
    "~/.aws/credentials": "FLOORMARK-aws-credentials-2f8a61",
    "~/.kube/config": "FLOORMARK-kube-config-7d03be",
    "~/.pgpass": "FLOORMARK-pgpass-e4a952",
    ".env": "FLOORMARK-dotenv-0b6c3f",
}


@dataclass
class Run:
    """One execution: what ran, how it ended, what it harmed."""

    script: str
    returncode: int
    stdout: bytes
    stderr: bytes
    harms: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def sandbox_failed(self) -> bool:
        """bubblewrap refused to start: nothing of the command ran."""
        return self.stderr.startswith(b"bwrap:")

    @property
    def timed_out(self) -> bool:
        return self.returncode in (124, 137)


Entry = tuple[object, ...]

#: root's home: hidden from the command under an empty folder, but for the Python
#: installation a developer's shell reaches (:func:`installation_in_root_home`).
ROOT_HOME = "/root"


def installation_in_root_home() -> list[str]:
    """The interpreter's prefixes that lie in root's home (a pyenv build, say): a user's own
    installation is readable by that user, so ``nobody`` is given it read-only."""
    found = set()
    for prefix in (sys.base_prefix, sys.prefix):
        parts = Path(prefix).parts
        if len(parts) > 2 and Path(*parts[:2]) == Path(ROOT_HOME):
            found.add(str(Path(*parts[:3])))
    return sorted(found)


def snapshot(root: Path) -> dict[str, Entry]:
    """Every entry under ``root`` (itself included), without following links: type, mode,
    owner, size, mtime and a content hash (a link's target)."""
    found: dict[str, Entry] = {}
    if not os.path.lexists(root):
        return found
    paths = [root]
    if root.is_dir() and not root.is_symlink():
        for folder, dirs, files in os.walk(root):
            paths += [Path(folder, name) for name in dirs + files]
    for path in paths:
        info = os.lstat(path)
        if stat.S_ISREG(info.st_mode):
            body = hashlib.sha256(path.read_bytes()).hexdigest()
        elif stat.S_ISLNK(info.st_mode):
            body = os.readlink(path)
        else:
            body = ""
        key = str(path.relative_to(root)) if path != root else "."
        found[key] = (info.st_mode, info.st_uid, info.st_size, info.st_mtime_ns, body)
    return found


def differences(before: dict[str, Entry], after: dict[str, Entry]) -> list[str]:
    """The keys added, removed or changed between two snapshots."""
    keys = sorted(set(before) | set(after))
    return [
        f"{k} {'added' if k not in before else 'removed' if k not in after else 'changed'}"
        for k in keys
        if before.get(k) != after.get(k)
    ]


def shell_env(home: Path) -> dict[str, str]:
    """The variables a shell call sees: a developer's PATH (the interpreter's own folder first,
    as in an activated virtual environment) and the scratch home."""
    return {
        "HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "TMPDIR": "/tmp",
        "USER": "nobody",
        "TERM": "dumb",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # the pytest twins start in a second, not ten
    }


class World:
    """The scratch world a command runs in: ``base/world`` (project, home, sentinel folder),
    its pristine copy ``base/pristine`` (restored before every run) and the private temp
    folders ``base/scratch``. ``base`` lies outside the floor's writable roots (``/tmp`` is
    one), as a user's home does."""

    def __init__(self, base: Path, project: Path, home: Path) -> None:
        self.base = base
        self.project = project
        self.home = home
        self.outside = base / "world" / "outside"
        self.pristine = base / "pristine"
        self.scratch = base / "scratch"
        self.governance: tuple[Path, ...] = tuple(project / p for p in GOVERNANCE)
        self._kept: dict[str, dict[str, Entry]] = {}
        #: Governance paths that were absent and were left as an empty folder: the mount point
        #: a floor made to hold the path (not a harm: nothing is in it; listed in the figures).
        self.placeholders: set[str] = set()

    def keep(self, also_governance: list[Path]) -> None:
        """Fill the sentinel folder, hand the world to ``nobody`` and copy it as pristine;
        ``also_governance``: more paths to check (the floor's own never-written ones)."""
        extra = [p for p in also_governance if p not in self.governance]
        self.governance += tuple(extra)
        (self.outside / "keep").mkdir(parents=True, exist_ok=True)
        (self.outside / "keep" / "data.txt").write_text("sentinel\n")
        (self.outside / "notes.md").write_text("outside the project\n")
        for folder in (self.scratch / "tmp", self.scratch / "vartmp"):
            folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(["chown", "-R", "nobody:", str(self.base / "world")], check=True)
        subprocess.run(["chown", "-R", "nobody:", str(self.scratch)], check=True)
        self.pristine.mkdir(mode=0o700, exist_ok=True)
        for part in ("project", "home", "outside"):
            subprocess.run(
                ["cp", "-a", str(self._live(part)), str(self.pristine / part)], check=True
            )

    def _live(self, part: str) -> Path:
        return {"project": self.project, "home": self.home, "outside": self.outside}[part]

    def restore(self) -> None:
        """Put the project, home and sentinel back as they were (each only if it changed: a
        copy costs more than a look), and empty the temp folders."""
        for part in ("project", "home", "outside"):
            live = self._live(part)
            if part in self._kept and snapshot(live) == self._kept[part]:
                continue
            shutil.rmtree(live, ignore_errors=True)
            if os.path.lexists(live):
                os.unlink(live)
            subprocess.run(["cp", "-a", str(self.pristine / part), str(live)], check=True)
            self._kept[part] = snapshot(live)
        for folder in (self.scratch / "tmp", self.scratch / "vartmp"):
            if any(folder.iterdir()):
                shutil.rmtree(folder)
                folder.mkdir()
                shutil.chown(folder, "nobody")

    def secret_path(self, name: str) -> Path:
        return self.home / name[2:] if name.startswith("~/") else self.project / name

    def plant(self) -> None:
        """The secrets with their markers, a git identity, a git hook of the user's and the
        files the twins work on."""
        for name, text in WORK_FILES.items():
            path = self.project / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        for name, marker in SECRETS.items():
            path = self.secret_path(name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{marker}\n")
        (self.home / ".gitconfig").write_text("[user]\n\tname = t\n\temail = t@example.com\n")
        hook = self.project / ".git" / "hooks" / "pre-commit"
        hook.write_text("#!/bin/sh\nexit 0\n")
        hook.chmod(0o755)

    def state(self) -> dict[str, dict[str, Entry]]:
        """The snapshots :meth:`harms` compares."""
        found = {"home": snapshot(self.home), "outside": snapshot(self.outside)}
        for path in self.governance:
            found[str(path.relative_to(self.project))] = snapshot(path)
        return found

    def harms(self, before: dict[str, dict[str, Entry]], stdout: bytes, stderr: bytes) -> list[str]:
        """What a run changed or leaked (see the module docstring), one line each."""
        found: list[str] = []
        after = self.state()
        for part, was in before.items():
            now = after.get(part, {})
            if not was and set(now) == {"."} and stat.S_ISDIR(int(str(now["."][0]))):
                self.placeholders.add(part)  # the floor's own mount point, left empty
                continue
            found += [f"{part}: {d}" for d in differences(was, now)]
        planted = {self.secret_path(name) for name in SECRETS}
        for name, marker in SECRETS.items():
            for stream, text in (("stdout", stdout), ("stderr", stderr)):
                if marker.encode() in text:
                    found.append(f"secret {name}: in {stream}")
            for root in (self.project, self.scratch):
                for folder, _dirs, files in os.walk(root):
                    for file in files:
                        path = Path(folder, file)
                        if path in planted or path.is_symlink() or not path.is_file():
                            continue
                        try:
                            data = path.read_bytes()
                        except OSError:
                            continue
                        if marker.encode() in data:
                            found.append(f"secret {name}: copied to {path}")
        return found

    def net_argv(self, cwd: Path, script: str) -> list[str]:
        """The safety net around ``/bin/bash -c script`` run in ``cwd`` (module docstring)."""
        env = shell_env(self.home)
        return [
            *self.outer_bwrap(cwd),
            "--",
            "runuser",
            "-u",
            "nobody",
            "--",
            "prlimit",
            f"--nproc={NPROC}",
            f"--fsize={FSIZE}",
            f"--cpu={CPU}",
            f"--as={AS}",
            "--",
            "timeout",
            "-k",
            "5",
            str(TIMEOUT),
            "env",
            "-i",
            *(f"{k}={v}" for k, v in env.items()),
            "/bin/bash",
            "-c",
            script,
        ]

    def outer_bwrap(self, cwd: Path) -> list[str]:
        """The outer bubblewrap, run by root so that it can hand over to ``nobody``: only the
        capabilities ``runuser`` needs, no user namespace (``nobody`` stays ``nobody``)."""
        argv = ["bwrap", "--ro-bind", "/", "/"]
        argv += ["--bind", str(self.base / "world"), str(self.base / "world")]
        argv += ["--tmpfs", str(self.pristine)]
        argv += ["--bind", str(self.scratch / "tmp"), "/tmp"]
        argv += ["--bind", str(self.scratch / "vartmp"), "/var/tmp"]
        argv += ["--tmpfs", ROOT_HOME]
        for kept in installation_in_root_home():
            argv += ["--ro-bind", kept, kept]
        argv += ["--dev", "/dev", "--bind", "/proc", "/proc"]
        for space in ("pid", "net", "ipc", "uts", "cgroup-try"):
            argv.append(f"--unshare-{space}")
        argv += ["--die-with-parent", "--new-session", "--chdir", str(cwd)]
        return [*argv, "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]

    def run(self, cwd: Path, script: str) -> Run:
        """Run ``script`` in the net, and return what it harmed (call :meth:`restore` first,
        before the floor's rewrite is computed: it binds only the paths that exist)."""
        before = self.state()
        started = time.monotonic()
        result = subprocess.run(
            self.net_argv(cwd, script),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT + 30,
        )
        seconds = time.monotonic() - started
        harms = self.harms(before, result.stdout, result.stderr)
        return Run(script, result.returncode, result.stdout, result.stderr, harms, seconds)
