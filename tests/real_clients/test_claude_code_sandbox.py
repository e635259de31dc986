"""Claude Code's own sandbox, as ``forge-policy init`` writes it (SPEC §13: ``--floor harness``,
the default), holds on Bash: a command that writes ``.forge/`` or reads a planted
``~/.ssh/id_rsa`` fails inside the sandbox Claude Code starts (bubblewrap and socat from
Debian), a harmless one runs; with ``failIfUnavailable`` a missing dependency stops Claude Code
before it runs anything.

The hook is made to allow everything these tests ask for: the client runs with
``FORGE_BEHAVIORS_DIR`` naming a catalog of ``no-destructive-git`` alone (so no
protect-governance, no agent-shield), so what refuses is the operating system, not the hook. The
control runs prove it: after ``init --floor off`` (no sandbox block, and the hook rewrites nothing
either) the same calls write ``.forge/x`` and print the secret.

No ``enableWeakerNestedSandbox``: Claude Code 2.1.332's bubblewrap sandbox starts as root in this
container (and in CI's) without it.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from forge_policy.harness.settings_check import load_schema
from forge_policy.ops.harness_sandbox import CLAUDE_FLAGS
from forge_policy.testing.models import Turn
from tests.real_clients.policy import allowing_catalog

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="Claude Code's bubblewrap sandbox: Linux only"
)

#: what Claude Code's sandbox needs on Linux (its own message when one is missing: "install
#: missing tools (e.g. apt install bubblewrap socat)")
DEPENDENCIES = ("bwrap", "socat")
SECRET = "forge-floor-planted-secret-7c1d"


@pytest.fixture(autouse=True)
def _sandbox_dependencies() -> None:
    for program in DEPENDENCIES:
        if shutil.which(program) is None:
            pytest.skip(
                f"{program} not found on PATH (Debian packages bubblewrap and socat;"
                " .ci/run installs them)"
            )


def sandbox_of(claude: Any) -> dict[str, Any]:
    """The ``sandbox`` block ``init`` wrote into the project settings, checked: the flags that
    make it hold every Bash call, the floor's lists, and the whole file on Claude Code's schema
    (SchemaStore's ``claude-code-settings.json``, vendored)."""
    settings = claude.settings()
    schema = load_schema("claude-code")
    assert schema is not None
    jsonschema.Draft7Validator(schema).validate(settings)
    sandbox: dict[str, Any] = settings["sandbox"]
    assert {k: sandbox.get(k) for k in CLAUDE_FLAGS} == CLAUDE_FLAGS, sandbox
    assert any(e.endswith(".forge") for e in sandbox["filesystem"]["denyWrite"]), sandbox
    assert any(e.endswith(".ssh") for e in sandbox["filesystem"]["denyRead"]), sandbox
    return sandbox


def with_sandbox(claude: Any, **changes: Any) -> None:
    """The project settings with ``changes`` made to ``init``'s sandbox block."""
    settings = claude.settings()
    settings["sandbox"] = {**sandbox_of(claude), **changes}
    claude.write_settings(settings)


def floor_off(claude: Any) -> None:
    """The project's floor ``off`` as ``init --floor off`` records it (SPEC §13): the hook
    rewrites no command, so a control run shows the client's own behaviour."""
    claude.forge("init", "--harness", "claude-code", "--no-worker", "--floor", "off")
    assert "floor: off" in (claude.project / ".forge" / "config.yaml").read_text("utf-8")


def open_project(forge_real_client: Any, *init_args: str) -> Any:
    """A project set up by ``init --no-worker`` (the hook in-process, reading the client's
    environment) and ``init_args``, a planted secret in its ``HOME``."""
    project = forge_real_client("claude-code", floor=None, init_args=("--no-worker", *init_args))
    secret = project.home / ".ssh" / "id_rsa"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n", encoding="utf-8")
    project.allowing = {"FORGE_BEHAVIORS_DIR": str(allowing_catalog(project.folder))}
    return project


@pytest.fixture
def claude(forge_real_client: Any) -> Any:
    """A project ``init`` set up with its default floor: Claude Code's sandbox."""
    project = open_project(forge_real_client)
    sandbox_of(project)
    return project


def three_calls(claude: Any) -> list[Turn]:
    """A write of ``.forge/x``, a read of the planted key, a harmless write; each prints its
    exit status."""
    return [
        Turn.call("Bash", command="mkdir -p .forge && echo pwned > .forge/x; echo rc=$?"),
        Turn.call("Bash", command=f"cat {claude.home}/.ssh/id_rsa; echo rc=$?"),
        Turn.call("Bash", command="echo ok > harmless.txt; echo rc=$?"),
        Turn.say("done"),
    ]


def test_the_sandbox_refuses_what_the_hook_allowed(claude: Any) -> None:
    run = claude.run(three_calls(claude), environ=claude.allowing)
    assert len(run.ran) == 3 and not run.denied, run.describe()
    write, read, harmless = (run.result(i).text for i in range(3))
    # bash says "Read-only file system", zsh (the Bash tool's shell when installed) "read-only
    # file system"
    assert "rc=0" not in write and "read-only file system" in write.lower(), run.describe()
    assert "rc=0" not in read, run.describe()
    assert not run.model_saw(SECRET), run.describe()
    assert "rc=0" in harmless, run.describe()
    assert not (claude.project / ".forge" / "x").exists()
    assert "harmless.txt" in run.files_written


def test_control_without_the_sandbox_the_same_calls_go_through(forge_real_client: Any) -> None:
    """The hook does allow the three calls: with no sandbox and no floor, all of them work."""
    claude = open_project(forge_real_client, "--floor", "off")
    assert "sandbox" not in claude.settings()
    run = claude.run(three_calls(claude), environ=claude.allowing)
    assert len(run.ran) == 3 and not run.denied, run.describe()
    assert all("rc=0" in run.result(i).text for i in range(3)), run.describe()
    assert run.model_saw(SECRET)
    assert (claude.project / ".forge" / "x").read_text(encoding="utf-8") == "pwned\n"


def path_without(program: str, folder: Path) -> str:
    """A ``PATH`` of one folder holding a link to every program of this ``PATH`` but
    ``program``."""
    folder.mkdir(parents=True, exist_ok=True)
    for directory in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep):
        if not os.path.isdir(directory):
            continue
        for name in sorted(os.listdir(directory)):
            link = folder / name
            target = os.path.join(directory, name)
            if name == program or os.path.lexists(link) or not os.access(target, os.X_OK):
                continue
            if os.path.isfile(target):
                link.symlink_to(target)
    assert shutil.which(program, path=str(folder)) is None
    return str(folder)


@pytest.mark.parametrize("missing", DEPENDENCIES)
def test_fail_if_unavailable_stops_claude_code_when_a_dependency_is_missing(
    claude: Any, missing: str
) -> None:
    path = path_without(missing, claude.folder / "bin")
    run = claude.run(three_calls(claude), environ={**claude.allowing, "PATH": path})
    assert run.returncode != 0, run.describe()
    assert not run.requests and not run.requested, run.describe()
    assert "failIfUnavailable" in run.stderr and "not installed" in run.stderr, run.stderr
    assert not (claude.project / ".forge").joinpath("x").exists()
    assert "harmless.txt" not in run.files_written


def test_hazard_without_fail_if_unavailable_a_missing_dependency_runs_unsandboxed(
    claude: Any,
) -> None:
    """Why ``init`` writes ``failIfUnavailable: true``: without it Claude Code warns on stderr
    and runs every command outside the sandbox (observed with 2.1.332)."""
    floor_off(claude)  # the hook rewrites nothing: Claude Code's own behaviour alone
    with_sandbox(claude, failIfUnavailable=False)
    run = claude.run(
        three_calls(claude),
        environ={**claude.allowing, "PATH": path_without("socat", claude.folder / "bin")},
    )
    assert len(run.ran) == 3, run.describe()
    assert "WITHOUT sandboxing" in run.stderr, run.stderr
    assert (claude.project / ".forge" / "x").is_file()
    assert run.model_saw(SECRET)
