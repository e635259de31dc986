"""The clients from npm (``.ci/run`` installs them, pinned, into ``.ci/node_modules``), each
pointed at a scripted model on 127.0.0.1 through its documented provider setting (see each
driver in ``forge_policy.testing.real_client``): forge_policy's answers to their shell tool —
allow, hard block, soft block then the agent's retry, ask — honoured end to end.

Not here: OpenCode (``opencode-ai``) has no command hooks; forge_policy's plugin for it is
driven by ``node`` against the real hook in ``tests/harness/test_opencode_plugin.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from forge_policy.testing.models import Turn
from forge_policy.testing.plugin import open_real_client
from tests.real_clients.conftest import NODE_BIN
from tests.real_clients.policy import ASK, ASK_MARK, SOFT, SOFT_MARK

#: each client's shell tool: a turn running ``command``
SHELL: dict[str, Callable[[str], Turn]] = {
    "codex": lambda command: Turn.call("exec_command", cmd=command),
    "gemini": lambda command: Turn.call("run_shell_command", command=command),
    "copilot": lambda command: Turn.call("bash", command=command, description="run it"),
}
CLIENTS = sorted(SHELL)


@pytest.fixture(scope="module", params=CLIENTS)
def client(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    """One project per client for the module (each run is a new session), with the warm-worker
    hook ``init`` writes by default, and the floor off: these tests are about decisions (Codex's
    own sandbox, which init's default floor turns on, cannot start below a temporary
    ``CODEX_HOME``: tests/real_clients/test_floor_rewrite.py runs it with one outside)."""
    project = open_real_client(
        request.param,
        tmp_path_factory.mktemp(request.param),
        search=[NODE_BIN],
        init_args=("--floor", "off"),
    )
    project.add_behavior(SOFT)
    project.add_behavior(ASK)
    project.shell = SHELL[request.param]
    yield project
    project.close()


def test_shell_allow_and_hard_block(client: Any) -> None:
    run = client.run(
        [
            client.shell("echo allowed > out.txt"),
            client.shell("git push --force origin main"),
            Turn.say("done"),
        ]
    )
    assert [c.id for c in run.ran] == [run.requested[0].id], run.describe()
    assert [c.id for c in run.denied] == [run.requested[1].id], run.describe()
    assert "out.txt" in run.files_written
    assert "[no-destructive-git]" in run.result(1).text
    assert "cannot be overridden" in run.result(1).text


def test_shell_soft_block_then_the_retry_runs(client: Any) -> None:
    command = f"echo {SOFT_MARK} > soft.txt"
    run = client.run([client.shell(command), client.shell(command), Turn.say("done")])
    assert [c.id for c in run.denied] == [run.requested[0].id], run.describe()
    assert [c.id for c in run.ran] == [run.requested[1].id], run.describe()
    assert "[tripwire-soft]" in run.result(0).text
    assert "soft.txt" in run.files_written


def test_shell_ask_is_not_run_without_a_user(client: Any) -> None:
    run = client.run([client.shell(f"echo {ASK_MARK} > ask.txt"), Turn.say("done")])
    assert not run.ran, run.describe()
    assert "ask.txt" not in run.files_written
    assert [c.id for c in run.denied] == [run.requested[0].id], run.describe()
    assert "[tripwire-ask]" in run.result(0).text


def test_copilot_loads_no_project_hooks_in_a_folder_it_does_not_trust(
    forge_real_client: Any,
) -> None:
    """The hazard: Copilot CLI reads ``.github/hooks/*.json`` only in a trusted folder; in any
    other the hook ``init`` wrote never runs (observed with 1.0.102)."""
    copilot = forge_real_client("copilot", init_args=("--no-worker",))
    (copilot.home / ".copilot" / "config.json").write_text('{"trusted_folders": []}')
    run = copilot.run([SHELL["copilot"]("git push --force origin main"), Turn.say("done")])
    assert run.ran and not run.denied, run.describe()
    assert [r for r in copilot.audit_records() if r.get("code") != "floor_mode"] == []


def test_codex_skips_a_hook_nobody_reviewed(forge_real_client: Any) -> None:
    """The hazard: Codex runs a project's non-managed hook only after the user reviewed and
    trusted its exact definition (``/hooks``); until then the hook ``init`` wrote never runs
    (observed with 0.171.0, without ``--dangerously-bypass-hook-trust``)."""
    codex = forge_real_client("codex", init_args=("--no-worker",))
    codex.driver.command = lambda program, prompt: [program, "exec", "--json", prompt]
    run = codex.run([SHELL["codex"]("git push --force origin main"), Turn.say("done")])
    assert run.ran and not run.denied, run.describe()
    assert [r for r in codex.audit_records() if r.get("code") != "floor_mode"] == []
