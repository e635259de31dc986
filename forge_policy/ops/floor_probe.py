"""``forge-policy doctor --probe``: the floor tried for real (SPEC §13).

:func:`probe_own` runs a small probe (built-ins only, ``python -I -S``) under forge_policy's own
floor, built as the hook builds a rewritten shell call
(:func:`forge_policy.floor.sandbox.command_for`), and tries what the floor must refuse: to
write into the governance folder (``<FORGE_ROOT>``, created if absent), into the home folder
(outside the project and temp) and into the engine's installation, and to read a secret it
plants for the occasion (a temp file added to a copy of the floor's never-read list). It also
writes into the project, which the floor must let through. Each result is *held* or *NOT
held*; every file the probe made is removed afterwards, whatever happened (the empty placeholder
folders bubblewrap mounts over missing protected paths stay, as after any sandboxed call:
:mod:`forge_policy.floor.sandbox`). A guarantee the method leaves to the hook (Landlock hides
no file) is tried and shown too, but does not fail the probe: the report does not claim it.

A harness's own sandbox (Claude Code's) runs inside the harness: :func:`probe_harness` can only
check its configuration, and says so.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile

import attrs

from forge_policy.floor.model import Floor, FloorPath
from forge_policy.floor.sandbox import command_for
from forge_policy.ops.floor_report import GUARANTEES, METHOD_TITLES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

#: What the probe runs inside the sandbox: ``argv[1]`` is a JSON list of ``{id, kind, path,
#: mkdir}``; it prints ``{id: {done, errno | sha256}}``. Built-ins only, nothing of ours.
PROBE = r"""
import errno, hashlib, json, os, sys
out = {}
for check in json.loads(sys.argv[1]):
    path = check["path"]
    try:
        if check["kind"] == "write":
            if check["mkdir"] and not os.path.isdir(os.path.dirname(path)):
                os.mkdir(os.path.dirname(path))
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            out[check["id"]] = {"done": True}
        else:
            with open(path, "rb") as handle:
                data = handle.read(65536)
            out[check["id"]] = {"done": True, "sha256": hashlib.sha256(data).hexdigest()}
    except OSError as exc:
        out[check["id"]] = {"done": False, "errno": errno.errorcode.get(exc.errno or 0, str(exc))}
print(json.dumps(out))
"""
#: The check that the floor lets ordinary work through (not one of :data:`GUARANTEES`).
PROJECT_WRITABLE = ("project-writable", "the project stays writable")
_TIMEOUT = 60.0


@attrs.frozen
class ProbeCheck:
    """One attempt and whether the floor held against it (``None``: not checked)."""

    code: str
    guarantee: str
    tried: str
    held: bool | None
    detail: str
    #: whether doctor reports the floor as holding it (``False``: the method leaves it to the
    #: hook, so the check informs and does not fail the probe)
    claimed: bool = True

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        return {
            "code": self.code,
            "guarantee": self.guarantee,
            "tried": self.tried,
            "held": self.held,
            "claimed": self.claimed,
            "detail": self.detail,
        }

    def line(self) -> str:
        """``held: governance …: writing … refused (EROFS)``."""
        left = "" if self.claimed else " (left to the hook, as reported)"
        if self.held is None and self.tried:  # read from a harness's settings, not tried
            return f"{self.detail}{left}: {self.guarantee}"
        mark = {True: "held", False: "NOT held", None: "not checked"}[self.held]
        return f"{mark}{left}: {self.guarantee}: {self.tried or self.detail}" + (
            f": {self.detail}" if self.tried else ""
        )


@attrs.frozen
class ProbeReport:
    """The probe of one floor: ``kind`` ``own`` (run for real) or ``harness`` (configuration
    only); ``ran``: the probe ran inside the sandbox."""

    kind: str
    method: str | None
    ran: bool
    checks: tuple[ProbeCheck, ...]
    note: str = ""

    @property
    def ok(self) -> bool:
        """Every guarantee the report claims held (an own probe that did not run is not ok)."""
        if self.kind == "own" and not self.ran:
            return False
        return all(c.held is not False for c in self.checks if c.claimed)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        return {
            "kind": self.kind,
            "method": self.method,
            "ran": self.ran,
            "ok": self.ok,
            "note": self.note,
            "checks": [c.to_dict() for c in self.checks],
        }

    def title(self) -> str:
        """``own sandbox (bubblewrap)`` or ``Claude Code's sandbox (configuration only)``."""
        if self.kind == "own":
            return f"own sandbox ({METHOD_TITLES.get(self.method or '', self.method)})"
        return "harness sandbox (configuration only)"


@attrs.frozen
class _Attempt:
    code: str
    kind: str  # "write" or "read"
    path: str
    tried: str
    #: whether the floor must let it through (the project write) rather than refuse it
    allowed: bool = False
    mkdir: bool = False


def _guarantee(code: str) -> str:
    return dict([*GUARANTEES, PROJECT_WRITABLE])[code]


def _shown(path: str, project: str) -> str:
    prefix = project.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else path


def _attempts(
    floor: Floor, forge_root: str, secret: str, environ: Mapping[str, str], tag: str
) -> tuple[list[_Attempt], list[ProbeCheck]]:
    """What the probe tries, and the guarantees it cannot try here (with why)."""
    name = f".forge-probe-{tag}"
    project = floor.project
    attempts = [
        _Attempt(
            "governance-unwritten",
            "write",
            os.path.join(forge_root, name),
            f"writing {_shown(os.path.join(forge_root, name), project)}",
            mkdir=True,
        ),
        _Attempt("secrets-unread", "read", secret, "reading a secret planted for the probe"),
    ]
    skipped = []
    home = environ.get("HOME", "")
    outside = os.path.join(home, name) if home.startswith("/") else ""
    if outside and os.path.isdir(home) and not floor.writes_allowed(os.path.normpath(outside)):
        attempts.append(_Attempt("writes-confined", "write", outside, f"writing {outside}"))
    else:
        why = "HOME is not a folder outside the project and temp"
        skipped.append(ProbeCheck("writes-confined", _guarantee("writes-confined"), "", None, why))
    kept = [
        p.path for p in floor.never_written if p.reason == "installation" and os.path.isdir(p.path)
    ]
    if kept:
        target = os.path.join(kept[0], name)
        attempts.append(_Attempt("installation-untouched", "write", target, f"writing {target}"))
    else:
        why = "no folder of the installation is in the floor"
        skipped.append(
            ProbeCheck(
                "installation-untouched", _guarantee("installation-untouched"), "", None, why
            )
        )
    inside = os.path.join(project, name)
    attempts.append(_Attempt(PROJECT_WRITABLE[0], "write", inside, f"writing {name}", allowed=True))
    return attempts, skipped


def _judge(attempt: _Attempt, result: object, planted: str) -> ProbeCheck:
    guarantee = _guarantee(attempt.code)
    if not isinstance(result, dict):
        return ProbeCheck(attempt.code, guarantee, attempt.tried, False, "no answer from the probe")
    done = result.get("done") is True
    if attempt.kind == "read":
        leaked = done and result.get("sha256") == planted
        if leaked:
            return ProbeCheck(attempt.code, guarantee, attempt.tried, False, "the secret was read")
        detail = "read, but not the secret" if done else f"refused ({result.get('errno')})"
        return ProbeCheck(attempt.code, guarantee, attempt.tried, True, detail)
    if attempt.allowed:
        detail = "written" if done else f"refused ({result.get('errno')}): the floor is too tight"
        return ProbeCheck(attempt.code, guarantee, attempt.tried, done, detail)
    detail = "written" if done else f"refused ({result.get('errno')})"
    return ProbeCheck(attempt.code, guarantee, attempt.tried, not done, detail)


def probe_own(
    floor: Floor,
    forge_root: str,
    method: str,
    environ: Mapping[str, str],
    unclaimed: Collection[str] = (),
) -> ProbeReport:
    """Run the probe under ``floor`` with ``method`` (see the module doc); nothing it made
    is left behind. ``unclaimed``: codes of the guarantees the report leaves to the hook under
    ``method`` (tried and shown all the same, without failing the probe)."""
    tag = secrets.token_hex(6)
    planted_dir = tempfile.mkdtemp(prefix="forge-probe-")
    secret = os.path.join(planted_dir, "secret")
    value = f"forge-probe-secret-{secrets.token_hex(16)}".encode()
    forge_root = os.path.abspath(forge_root)
    root_existed = os.path.isdir(forge_root)
    attempts: list[_Attempt] = []
    try:
        with open(secret, "wb") as handle:
            handle.write(value)
        probed = Floor(
            floor.project,
            floor.writable,
            floor.never_written,
            (*floor.never_read, FloorPath(secret, "probe")),
        )
        attempts, skipped = _attempts(probed, forge_root, secret, environ, tag)
        plan = [{"id": a.code, "kind": a.kind, "path": a.path, "mkdir": a.mkdir} for a in attempts]
        inner = [sys.executable, "-I", "-S", "-c", PROBE, json.dumps(plan)]
        import shlex

        try:
            text = command_for(probed, shlex.join(inner), method)
        except ValueError as exc:  # e.g. a sandbox program the sandboxed call could rewrite
            note = f"the sandbox cannot be built: {exc}"
            return ProbeReport("own", method, False, tuple(skipped), note)
        shell = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
        try:
            run = subprocess.run(
                [shell, "-c", text],
                capture_output=True,
                text=True,
                env=dict(environ),
                cwd=floor.project,
                timeout=_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return ProbeReport(
                "own", method, False, tuple(skipped), f"the probe did not run: {exc}"
            )
        try:
            answers = (
                json.loads(run.stdout.strip().splitlines()[-1]) if run.stdout.strip() else None
            )
        except ValueError:
            answers = None
        if run.returncode != 0 or not isinstance(answers, dict):
            said = (run.stderr.strip().splitlines() or ["no message"])[-1]
            note = f"the sandbox did not run the probe (exit {run.returncode}): {said}"
            return ProbeReport("own", method, False, tuple(skipped), note)
        planted = hashlib.sha256(value).hexdigest()
        checks = [_judge(a, answers.get(a.code), planted) for a in attempts]
        checks = [attrs.evolve(c, claimed=c.code not in unclaimed) for c in checks]
        order = [c for c, _ in GUARANTEES] + [PROJECT_WRITABLE[0]]
        every = sorted([*checks, *skipped], key=lambda c: order.index(c.code))
        return ProbeReport("own", method, True, tuple(every))
    finally:
        for attempt in attempts:
            if attempt.kind == "write" and os.path.lexists(attempt.path):
                os.unlink(attempt.path)
        if not root_existed and os.path.isdir(forge_root):
            with contextlib.suppress(OSError):  # made by the probe (it was not there)
                os.rmdir(forge_root)
        shutil.rmtree(planted_dir, ignore_errors=True)


def probe_harness(
    title: str, environ: Mapping[str, str], unheld: Collection[str] = ()
) -> ProbeReport:
    """A harness's own sandbox, which runs inside the harness: only its configuration (read by
    :func:`forge_policy.floor.status.harness_sandbox_on` and
    :func:`forge_policy.ops.floor_report.sandbox_unheld`) can be checked from here; ``unheld``:
    the guarantees its settings leave to the hook."""
    path = environ.get("PATH", os.defpath)
    missing = [tool for tool in ("bwrap", "socat") if shutil.which(tool, path=path) is None]
    needs = (
        f"; {' and '.join(missing)} not on PATH: on Linux {title}'s sandbox needs bubblewrap and "
        "socat, and with failIfUnavailable it refuses to run commands without them"
        if missing and sys.platform.startswith("linux")
        else ""
    )
    note = (
        f"configuration only: {title}'s settings turn its sandbox on (enabled, failIfUnavailable, "
        f"allowUnsandboxedCommands: false); doctor cannot run a call inside {title}'s sandbox, "
        f"so it does not try one{needs}"
    )
    checks = tuple(
        ProbeCheck(
            code,
            text,
            f"{title}'s sandbox settings",
            None,
            "not configured" if code in unheld else "configured",
            claimed=code not in unheld,
        )
        for code, text in GUARANTEES
    )
    return ProbeReport("harness", None, False, checks, note)
