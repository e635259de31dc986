"""``forge-policy doctor`` and ``status`` say which enforcement floor holds each harness's shell
calls and what it covers (SPEC §13), and ``doctor --probe`` tries it for real: through the
``forge-policy`` process, bubblewrap from Debian and the kernel's Landlock, no mock of our own
code. "No bubblewrap on this machine" is a ``PATH`` without it (Landlock then holds what it can;
without Landlock either, nothing does); "a sandbox that does not hold" is a ``bwrap`` first on
``PATH`` that drops every option it is given and runs the command as it is."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from forge_policy.floor import landlock
from tests.cli_support import Project

BWRAP = shutil.which("bwrap")
pytestmark = pytest.mark.skipif(BWRAP is None, reason="bwrap not found on PATH")

HOOK_ONLY = ["governance-unwritten", "secrets-unread", "writes-confined", "installation-untouched"]
SANDBOX_ON = {"enabled": True, "failIfUnavailable": True, "allowUnsandboxedCommands": False}
NO_REWRITE = "cannot rewrite a call, so no sandbox can be put under its shell calls"
GOVERNANCE = "governance files (.forge/, harness settings, git hooks) unwritten"
#: A bubblewrap that holds nothing: it skips its options up to ``--`` and runs the rest.
BROKEN_BWRAP = '#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done\nshift\nexec "$@"\n'


@pytest.fixture
def project(tmp_path: Path) -> Project:
    folder = tmp_path / "project"
    folder.mkdir()
    return Project(folder)


def tools_without_bwrap(folder: Path) -> str:
    """A ``PATH`` of one folder holding the programs the commands need, and not bubblewrap."""
    folder.mkdir()
    for tool in ("git", "sh", "bash"):
        found = shutil.which(tool)
        assert found is not None
        (folder / tool).symlink_to(found)
    return str(folder)


def floor_of(report: dict[str, Any], harness: str) -> dict[str, Any]:
    [entry] = [h for h in report["harnesses"] if h["harness"] == harness]
    floor: dict[str, Any] = entry["floor"]
    return floor


@pytest.fixture
def outside_bin() -> Iterator[Path]:
    """A folder for programs outside the project and temp (the floor refuses to run a sandbox
    program the sandboxed call could rewrite): under the home folder, removed afterwards."""
    home = Path.home()
    if any(home.is_relative_to(t) for t in ("/tmp", "/var/tmp", tempfile.gettempdir())):
        pytest.skip("the home folder lies in a temp folder: no place outside the floor")
    folder = home / ".cache" / f"forge-probe-test-{os.urandom(4).hex()}"
    folder.mkdir(parents=True)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def bwrap_in(folder: Path, text: str) -> str:
    """``PATH`` with ``folder/bwrap`` (``text``) first."""
    (folder / "bwrap").write_text(text)
    (folder / "bwrap").chmod(0o755)
    return f"{folder}{os.pathsep}{os.environ['PATH']}"


def leftovers(project: Project, before: set[str]) -> set[str]:
    """What appeared in the project: nothing of the probe's own, only the empty placeholder
    folders bubblewrap mounts over the floor's missing protected paths (as under any
    sandboxed call: see forge_policy.floor.sandbox)."""
    new = {p.name for p in project.path.iterdir()} - before
    for name in new:
        assert (project.path / name).is_dir() and not any((project.path / name).iterdir()), name
    assert not list(project.path.rglob(".forge-probe-*"))
    return new


def installation_in_temp(project: Project) -> list[str]:
    """``["installation-untouched"]`` when part of the engine's installation lies in a temp
    folder (a checkout under /tmp): writable there, so held by no sandbox that keeps writes to
    the project and temp only, else ``[]``."""
    covered = project.json("doctor", "--harness", "copilot")["floor"]
    temps = [Path(p["path"]) for p in covered["writable"]["paths"] if p["reason"] == "temp"]
    rows = covered["never_written"]["paths"]
    kept = [Path(p["path"]) for p in rows if p["reason"] == "installation"]
    inside = [p for p in kept if any(p.is_relative_to(t) for t in temps)]
    return ["installation-untouched"] if inside else []


def probe_files(project: Project, report: dict[str, Any]) -> list[Path]:
    """Every path a probe run tried to write (to check none is left behind)."""
    out = []
    for run in report["probe"]["runs"]:
        for check in run["checks"]:
            tried = check["tried"]
            if tried.startswith("writing "):
                out.append(project.path / tried.removeprefix("writing "))  # absolute: kept
    assert len(out) == 4
    return out


def test_without_configuration_the_own_floor_holds_with_bubblewrap(project: Project) -> None:
    report = project.json("doctor")
    claude = floor_of(report, "claude-code")
    assert (claude["state"], claude["method"], claude["warning"]) == ("own", "bwrap", None)
    assert claude["hook_only"] == []
    # what it covers: the floor of the project (as the forge-policy process derives it: its
    # installation is that process's), its three lists counted by reason
    covered = report["floor"]
    assert covered["project"] == str(project.path)
    for kind in ("writable", "never_written", "never_read"):
        entry = covered[kind]
        assert entry["count"] == len(entry["paths"]) == sum(entry["reasons"].values()) > 0
    assert covered["writable"]["paths"][0] == {"path": str(project.path), "reason": "project"}
    assert set(covered["writable"]["reasons"]) == {"project", "temp"}
    assert covered["never_written"]["reasons"]["protect-governance"] >= 1
    assert covered["never_written"]["reasons"]["installation"] >= 1
    home = os.path.expanduser("~")
    assert {"path": f"{home}/.ssh", "reason": "agent-shield"} in covered["never_read"]["paths"]
    assert {"path": str(project.root), "reason": "protect-governance"} in covered["never_written"][
        "paths"
    ]

    out = project.run("doctor").stdout.splitlines()
    assert out[2].startswith("  floor: own sandbox (bubblewrap): each shell call rewritten")
    assert out[3].startswith("  floor covers: writes only under ")
    assert f"never read {covered['never_read']['count']} (" in out[3]
    assert not any("only the hook holds" in line for line in out)

    status = project.json("status")
    assert [(f["harness"], f["state"], f["method"]) for f in status["floor"]] == [
        ("claude-code", "own", "bwrap")
    ]
    text = project.run("status").stdout.splitlines()
    assert text == ["no live sessions", "floor (claude-code): own sandbox (bubblewrap)"]


def test_claude_codes_sandbox_on_is_the_harness_floor(project: Project) -> None:
    project.root.mkdir()  # a set-up project: the floor keeps an existing .forge/ read-only
    settings = project.path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"sandbox": {**SANDBOX_ON, "allowUnsandboxedCommands": True}}))
    # a sandbox a command may ask to leave is no floor: forge-policy's own stays under it
    assert floor_of(project.json("doctor"), "claude-code")["state"] == "own"

    # on, with the floor in its lists (absolute "//" entries, as Claude Code's docs spell them)
    floor = project.json("doctor")["floor"]
    lists = {
        "denyWrite": ["//" + p["path"].lstrip("/") for p in floor["never_written"]["paths"]],
        "denyRead": ["//" + p["path"].lstrip("/") for p in floor["never_read"]["paths"]],
        "allowWrite": [".", "//tmp"],
    }
    settings.write_text(json.dumps({"sandbox": {**SANDBOX_ON, "filesystem": lists}}))
    (project.path / ".codex").mkdir()  # Codex shows signs of use: its own sandbox, by default
    report = project.json("doctor")
    claude, codex = floor_of(report, "claude-code"), floor_of(report, "codex")
    assert (claude["state"], claude["method"], claude["hook_only"]) == ("harness", None, [])
    assert (codex["state"], codex["method"]) == ("harness", None)
    assert [g["code"] for g in codex["hook_only"]] == ["governance-unwritten", "secrets-unread"]
    (project.path / ".codex" / "config.toml").write_text('sandbox_mode = "danger-full-access"\n')
    codex = floor_of(project.json("doctor"), "codex")  # Codex's sandbox off: the own floor
    assert (codex["state"], codex["method"]) == ("own", "bwrap")
    out = project.run("doctor").stdout
    assert "  floor: Claude Code's sandbox: Claude Code's sandbox is on (enabled, " in out

    probed = project.run("doctor", "--probe")  # the harness's sandbox: its configuration only
    text = probed.stdout.splitlines()
    assert "probe of the harness sandbox (configuration only) for claude-code:" in text
    assert "doctor cannot run a call inside Claude Code's sandbox" in probed.stdout
    assert f"  configured: {GOVERNANCE}" in text
    assert "probe of the own sandbox (bubblewrap) for codex:" in text
    assert text[-1] == "probe: every guarantee the report claims held"
    status = project.run("status").stdout.splitlines()
    assert "floor (claude-code): Claude Code's sandbox" in status
    assert "floor (codex): own sandbox (bubblewrap)" in status

    # on, but its lists miss the secrets and .forge/, and let writes go to the home folder:
    # Claude Code's default sandbox reads ~/.ssh, so doctor leaves those to the hook
    partial = {"denyWrite": ["./.git"], "allowWrite": [".", "~/.kube"]}
    settings.write_text(json.dumps({"sandbox": {**SANDBOX_ON, "filesystem": partial}}))
    claude = floor_of(project.json("doctor", "--harness", "claude-code"), "claude-code")
    assert claude["state"] == "harness"
    assert claude["detail"].endswith("; its filesystem lists leave some of the floor out")
    assert [g["code"] for g in claude["hook_only"]] == [
        "governance-unwritten",
        "secrets-unread",
        "writes-confined",
        *installation_in_temp(project),
    ]
    probed = project.run("doctor", "--harness", "claude-code", "--probe").stdout.splitlines()
    assert f"  not configured (left to the hook, as reported): {GOVERNANCE}" in probed
    assert probed[-1] == (
        "probe: every guarantee the report claims is configured (configuration only)"
    )


def test_floor_off_is_a_warning_naming_the_file_and_line(project: Project) -> None:
    project.root.mkdir()
    (project.root / "config.yaml").write_text("profile: standard\nfloor: off\n")
    report = project.json("doctor")
    claude = floor_of(report, "claude-code")
    assert claude["state"] == "off" and claude["method"] is None
    assert claude["warning"] == (
        "floor: off in .forge/config.yaml:2: no sandbox under Claude Code's shell calls"
    )
    assert [g["code"] for g in claude["hook_only"]] == HOOK_ONLY
    out = project.run("doctor").stdout.splitlines()
    assert out[2] == "  floor: off: turned off by the project"
    assert out[3] == f"  warning: {claude['warning']}"
    assert out[4].startswith("  only the hook holds")
    assert out[5:9] == [f"    {g['text']}" for g in claude["hook_only"]]
    # off is the project's choice: the probe has nothing to try, and says so
    probed = project.run("doctor", "--probe").stdout.splitlines()
    assert probed[-2] == f"probe: no floor to probe for claude-code: {claude['warning']}"
    assert probed[-1] == "probe: no floor to probe: the report claims nothing beyond the hook"
    [line] = [s for s in project.run("status").stdout.splitlines() if s.startswith("floor")]
    assert line.startswith("floor (claude-code): off; warning: floor: off in .forge/config.yaml:2")


def test_a_bad_floor_setting_is_no_floor_and_fails_the_probe(project: Project) -> None:
    project.root.mkdir()
    (project.root / "config.yaml").write_text("floor: sometimes\n")
    # a configuration that never loaded stops every command with file:line (issue 25: the
    # layers' one error path; the hook fails closed meanwhile), doctor and its probe included
    for args in (("doctor", "--json"), ("doctor", "--probe")):
        result = project.run(*args, check=2)
        assert ".forge/config.yaml:1: floor: expected one of harness, own, off" in result.stderr
        assert "Traceback" not in result.stderr


def test_without_bubblewrap_landlock_holds_what_it_can(project: Project, tmp_path: Path) -> None:
    bare = Project(project.path, PATH=tools_without_bwrap(tmp_path / "bin"))
    report = bare.json("doctor", "--harness", "claude-code", "--harness", "cursor")
    if landlock.abi() < landlock.ABI_MIN:  # a kernel without Landlock: no floor at all
        for harness in ("claude-code", "cursor"):
            floor = floor_of(report, harness)
            assert (floor["state"], floor["method"]) == ("none", None)
            assert floor["detail"].startswith("this machine has no sandbox forge_policy can")
            assert [g["code"] for g in floor["hook_only"]] == HOOK_ONLY
        bare.run("doctor", "--probe", check=1)  # the machine could hold one, and does not
        return
    # Landlock allow-lists hierarchies: writes stay in the project and temp, but it cannot keep
    # .forge/ read-only inside the project nor hide a file, and doctor says so
    for harness in ("claude-code", "cursor"):
        floor = floor_of(report, harness)
        assert (floor["state"], floor["method"], floor["warning"]) == ("own", "landlock", None)
        assert [g["code"] for g in floor["hook_only"]] == [
            "governance-unwritten",
            "secrets-unread",
            *installation_in_temp(project),
        ]
    out = bare.run("doctor").stdout.splitlines()
    assert out[2].startswith("  floor: own sandbox (Landlock): each shell call rewritten")
    assert out[4:7] == [
        "  only the hook holds (nothing beneath it stops a spelling its reading missed):",
        f"    {GOVERNANCE}",
        "    secret files (~/.ssh, ~/.aws, …) unread",
    ]
    # the probe tries all of it, and fails only on what the report claims
    before = {p.name for p in project.path.iterdir()}
    if installation_in_temp(project):  # the launcher itself is writable: it refuses to run
        probed = json.loads(bare.run("doctor", "--probe", "--json", check=1).stdout)
        [run] = probed["probe"]["runs"]
        assert run["note"].startswith("the sandbox cannot be built: floor: ")
        return
    probed = json.loads(bare.run("doctor", "--probe", "--json").stdout)
    [run] = probed["probe"]["runs"]
    assert (run["method"], run["ran"], run["ok"]) == ("landlock", True, True)
    checks = {c["code"]: (c["held"], c["claimed"]) for c in run["checks"]}
    assert checks["governance-unwritten"] == checks["secrets-unread"] == (False, False)
    assert checks["writes-confined"] == checks["project-writable"] == (True, True)
    if not installation_in_temp(project):
        assert checks["installation-untouched"] == (True, True)
    assert leftovers(project, before) == set()  # Landlock mounts nothing
    text = bare.run("doctor", "--probe").stdout.splitlines()
    assert any(
        s.startswith(f"  NOT held (left to the hook, as reported): {GOVERNANCE}") for s in text
    )
    assert bare.run("status").stdout.splitlines()[-1] == (
        "floor (claude-code): own sandbox (Landlock); only the hook holds: governance-unwritten, "
        "secrets-unread"
    )


def test_a_harness_that_cannot_rewrite_a_call_has_no_floor(project: Project) -> None:
    report = project.json("doctor", "--harness", "copilot", "--harness", "antigravity")
    for harness, title in (
        ("copilot", "GitHub Copilot CLI"),
        ("antigravity", "Google Antigravity CLI"),
    ):
        floor = floor_of(report, harness)
        assert floor["state"] == "none" and floor["method"] is None
        assert floor["detail"] == f"{title} {NO_REWRITE}"
        assert [g["code"] for g in floor["hook_only"]] == HOOK_ONLY
    # nothing bubblewrap could fix: the report claims nothing beyond the hook, the probe passes
    result = project.run("doctor", "--harness", "copilot", "--probe")
    assert result.stdout.splitlines()[-1] == (
        "probe: no floor to probe: the report claims nothing beyond the hook"
    )


def test_the_probe_holds_here_and_leaves_nothing_behind(project: Project) -> None:
    project.root.mkdir()
    before = {p.name for p in project.path.iterdir()}
    result = project.run("doctor", "--probe", "--json")
    report = json.loads(result.stdout)
    assert report["probe"]["ok"] is True
    [run] = report["probe"]["runs"]
    assert (run["kind"], run["method"], run["ran"], run["ok"]) == ("own", "bwrap", True, True)
    assert run["harnesses"] == ["claude-code"]
    checks = {c["code"]: c for c in run["checks"]}
    assert list(checks) == [*HOOK_ONLY, "project-writable"]
    assert all(c["held"] is True and c["claimed"] is True for c in checks.values()), checks
    assert checks["governance-unwritten"]["tried"].startswith("writing .forge/.forge-probe-")
    assert checks["governance-unwritten"]["detail"] in ("refused (EROFS)", "refused (EACCES)")
    assert checks["secrets-unread"]["detail"] != "the secret was read"
    assert checks["project-writable"]["detail"] == "written"
    assert not any(p.exists() for p in probe_files(project, report))
    kept = [Path(p["path"]) for p in report["floor"]["never_written"]["paths"]]
    protected = {
        p.relative_to(project.path).parts[0] for p in kept if p.is_relative_to(project.path)
    }
    assert leftovers(project, before) <= protected

    text = project.run("doctor", "--probe").stdout.splitlines()
    # bubblewrap's empty placeholders (.codex/, .cursor/, …) now read as signs of those CLIs
    assert any(s.startswith("probe of the own sandbox (bubblewrap) for claude-code") for s in text)
    assert any(s.startswith(f"  held: {GOVERNANCE}: writing .forge/") for s in text)
    assert text[-1] == "probe: every guarantee the report claims held"


def test_the_probe_says_plainly_when_the_sandbox_does_not_hold(
    project: Project, outside_bin: Path
) -> None:
    broken = Project(project.path, PATH=bwrap_in(outside_bin, BROKEN_BWRAP))
    broken.root.mkdir()  # a set-up project (doctor itself creates nothing: issue 25)
    broken.run("doctor")  # the catalog cache it writes under .forge/runtime is not the probe's
    before = {p.name for p in broken.root.iterdir()}
    result = broken.run("doctor", "--probe", "--json", check=1)
    report = json.loads(result.stdout)
    assert report["probe"]["ok"] is False
    [run] = report["probe"]["runs"]
    assert (run["method"], run["ran"], run["ok"]) == ("bwrap", True, False)
    held = {c["code"]: (c["held"], c["detail"]) for c in run["checks"]}
    assert held == {
        "governance-unwritten": (False, "written"),
        "secrets-unread": (False, "the secret was read"),
        "writes-confined": (False, "written"),
        "installation-untouched": (False, "written"),
        "project-writable": (True, "written"),
    }
    # every file the broken sandbox let the probe write is gone again
    assert not any(p.exists() for p in probe_files(broken, report))
    assert {p.name for p in broken.root.iterdir()} == before

    text = broken.run("doctor", "--probe", check=1).stdout.splitlines()
    assert any(
        s.startswith(f"  NOT held: {GOVERNANCE}: writing .forge/.forge-probe-")
        and s.endswith(": written")
        for s in text
    )
    secret = "reading a secret planted for the probe: the secret was read"
    assert f"  NOT held: secret files (~/.ssh, ~/.aws, …) unread: {secret}" in text
    assert text[-1] == "probe: NOT every guarantee the report claims holds (see above)"


def test_the_probe_fails_closed_when_the_sandbox_cannot_be_built(
    project: Project, tmp_path: Path
) -> None:
    # a bwrap the sandboxed call could rewrite (it lies in temp) would hold the next call's
    # sandbox: the floor refuses to run it, and the probe reports that as not held
    bin_dir = tmp_path / "writable-bin"
    bin_dir.mkdir()
    writable = Project(project.path, PATH=bwrap_in(bin_dir, BROKEN_BWRAP))
    report = json.loads(writable.run("doctor", "--probe", "--json", check=1).stdout)
    [run] = report["probe"]["runs"]
    assert (run["method"], run["ran"], run["ok"]) == ("bwrap", False, False)
    assert run["note"] == (
        f"the sandbox cannot be built: floor: {bin_dir / 'bwrap'} is writable inside the "
        "sandbox; refusing to run it"
    )
    assert [c["held"] for c in run["checks"]] == []  # nothing was tried
