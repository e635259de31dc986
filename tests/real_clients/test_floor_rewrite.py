"""forge_policy's own floor through the real clients (SPEC §13): where the harness's sandbox does
not hold a shell call (here: ``init --floor own``), the hook ``init --harness NAME`` wrote (its
default: the warm worker's client) lets it through rewritten to run under bubblewrap, and the
client runs the rewritten command: the call's harmless write lands, its write of ``.forge/x``
does not.

The hook is made to allow the call: the client runs with ``FORGE_BEHAVIORS_DIR`` naming a
catalog of ``no-destructive-git`` alone (protect-governance would refuse the call before any
rewrite), so what stops the write is the rewrite, executed by the client: none of these clients
has a sandbox of its own here (Codex runs ``danger-full-access``), and the write fails with the
operating system's error (``EROFS`` under bubblewrap, ``EACCES`` under Landlock).

Each client takes the rewrite in its own shape: Claude Code ``updatedInput`` (with ``ask``, so
that the user sees the rewritten command; ``allow`` under ``bypassPermissions``: print mode has
no user to ask, so it runs in that mode here), Codex ``updatedInput`` with ``allow``, Gemini CLI
``hookSpecificOutput.tool_input``. Not here: Copilot CLI, whose adapter rewrites nothing (no
rewrite event in its registry entry; Copilot CLI 1.0.102 was seen to run a command hook's
``modifiedArgs``, the field the Copilot SDK documents, but that is not the adapter's answer).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from forge_policy.testing.models import Turn
from forge_policy.testing.plugin import open_real_client
from tests.real_clients.conftest import NODE_BIN
from tests.real_clients.policy import allowing_catalog

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the bubblewrap floor: Linux only")

#: each client's shell tool: a turn running ``command``
SHELL: dict[str, Callable[[str], Turn]] = {
    "claude-code": lambda command: Turn.call("Bash", command=command),
    "codex": lambda command: Turn.call("exec_command", cmd=command),
    "gemini": lambda command: Turn.call("run_shell_command", command=command),
}
#: how each client is run so that it executes a rewritten call without a user to ask
ARGS: dict[str, tuple[str, ...]] = {
    "claude-code": ("--permission-mode", "bypassPermissions"),
}
COMMAND = "echo ok > harmless.txt; mkdir -p .forge; echo pwned > .forge/x; echo rc=$?"


@pytest.fixture(scope="module", params=sorted(SHELL))
def client(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap not found on PATH (Debian package bubblewrap; .ci/run installs it)")
    project = open_real_client(
        request.param,
        tmp_path_factory.mktemp(f"floor-{request.param}"),
        search=[NODE_BIN],
        init_args=("--floor", "own"),
    )
    project.allowing = {"FORGE_BEHAVIORS_DIR": str(allowing_catalog(project.folder))}
    if request.param == "claude-code" and os.getuid() == 0:
        # Claude Code refuses bypassPermissions as root unless told it runs in a deliberate
        # sandbox (``IS_SANDBOX=1``; observed with 2.1.332): CI's container is one
        project.allowing["IS_SANDBOX"] = "1"
    project.shell = SHELL[request.param]
    project.args = ARGS.get(request.param, ())
    yield project
    project.close()


def test_the_client_runs_the_rewritten_command(client: Any) -> None:
    run = client.run(
        [client.shell(COMMAND), Turn.say("done")], environ=client.allowing, args=client.args
    )
    assert [c.id for c in run.ran] == [run.requested[0].id], run.describe()
    assert (client.project / "harmless.txt").is_file(), run.describe()
    assert not (client.project / ".forge" / "x").exists(), run.describe()
    result = run.result(0).text
    assert "rc=0" not in result, run.describe()
    assert "Read-only file system" in result or "Permission denied" in result, run.describe()


def test_claude_code_print_mode_has_no_user_to_approve_a_rewritten_call(
    forge_real_client: Any,
) -> None:
    """The consequence of ``ask`` + ``updatedInput``: ``claude -p`` in its default permission
    mode refuses every shell call forge_policy's own floor rewrites (there is no user to show
    the rewritten command to), even one the user's settings allow; Claude Code's own sandbox
    (``init``'s default where it works) or ``bypassPermissions`` is what print mode needs."""
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap not found on PATH (Debian package bubblewrap; .ci/run installs it)")
    claude = forge_real_client("claude-code", init_args=("--floor", "own"))
    assert "sandbox" not in claude.settings()
    run = claude.run([SHELL["claude-code"]("echo ok > harmless.txt"), Turn.say("done")])
    assert not run.ran and [c.id for c in run.denied] == [run.requested[0].id], run.describe()
    rewritten = run.denials[0]["tool_input"]["command"]
    assert rewritten != "echo ok > harmless.txt" and "echo ok > harmless.txt" in rewritten
    assert "harmless.txt" not in run.files_written


def test_codex_with_the_default_floor_runs_in_its_own_sandbox_unrewritten(
    forge_real_client: Any,
) -> None:
    """Codex as ``init`` sets it up by default: its own sandbox on (``workspace-write``), and
    forge_policy rewrites nothing, since bubblewrap cannot make its namespaces inside Codex's
    sandbox (every rewritten call failed so: "bwrap: Creating new namespace failed", Codex
    0.171.0). A harmless command runs. Codex's sandbox has no deny list, so a ``.forge/x``
    write that the hook lets through (this test's catalog allows it) is written: under Codex's
    sandbox, governance inside the project is the hook's alone — what ``doctor`` says.

    Codex refuses to create its sandbox helper below the temp folder when ``CODEX_HOME`` lies
    there ("Refusing to create helper binaries under temporary dir"), as the test's temporary
    ``HOME`` does: the run gets a ``TMPDIR`` of its own outside ``/tmp``."""
    codex = forge_real_client("codex", floor=None)
    config = (codex.project / ".codex" / "config.toml").read_text(encoding="utf-8")
    assert 'sandbox_mode = "workspace-write"' in config
    temp = tempfile.mkdtemp(prefix="forge-codex-", dir="/var/tmp")
    try:
        run = codex.run(
            [SHELL["codex"](COMMAND), Turn.say("done")],
            environ={"FORGE_BEHAVIORS_DIR": str(allowing_catalog(codex.folder)), "TMPDIR": temp},
        )
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    assert (codex.project / "harmless.txt").is_file(), run.describe()
    assert (codex.project / ".forge" / "x").exists(), run.describe()
