"""forge-policy's OpenCode plugin, run by ``node`` as OpenCode runs it, against the real hook.

Each test sets a project up with ``forge-policy init --harness opencode`` (the test catalog of
the conformance tests, the floor off) and drives the plugin file ``init`` wrote through
``opencode_driver.mjs``: ``tool.execute.before`` (a thrown error refuses the call), then
``tool.execute.after`` on the call's output. The hook behind it is the project's launcher and the
real ``forge-policy hook --harness opencode``; where a test is about the hook failing, the
launcher's ``$FORGE_POLICY`` names a script that fails that way. Every failure must refuse.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from hookrun import CALL, SCRIPT, Project

from tests.harness.conformance import HARNESS_CATALOG, Texts

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(
    NODE is None, reason="node is not installed (Debian: apt-get install nodejs)"
)
DRIVER = Path(__file__).resolve().parent / "opencode_driver.mjs"
PLUGIN = Path(".opencode/plugins/forge-policy.js")
REFUSED = "forge-policy could not decide this call, so it is refused: "


class OpenCode:
    """A project set up for OpenCode, and the plugin driven in it."""

    def __init__(self, base: Path) -> None:
        self.project = Project(base, HARNESS_CATALOG)
        self.dir = self.project.dir
        done = subprocess.run(
            [str(SCRIPT), "init", "--harness", "opencode", "--no-worker", "--floor", "off"],
            cwd=self.dir,
            env=self.project.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        self.calls = 0

    def bash(self, command: str, session: str = "") -> dict[str, Any]:
        self.calls += 1
        return {
            "tool": "bash",
            "session": session or self.project.session,
            "call": f"toolu_{self.calls:04d}",
            "args": {"command": command, "description": "Runs it"},
        }

    def drive(self, *steps: dict[str, Any], **env: str) -> list[dict[str, Any]]:
        assert NODE is not None
        done = subprocess.run(
            [NODE, str(DRIVER), str(self.dir / PLUGIN), str(self.dir), json.dumps(steps)],
            cwd=self.dir,
            env={**self.project.env, **env},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        results: list[dict[str, Any]] = json.loads(done.stdout)
        return results

    def fake_hook(self, body: str) -> str:
        """A ``forge-policy`` stand-in (``$FORGE_POLICY``) running the shell ``body``."""
        path = self.dir / "fake-forge-policy"
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)
        return str(path)


@pytest.fixture
def oc(tmp_path: Path) -> OpenCode:
    return OpenCode(tmp_path)


def call_id(text: str) -> str:
    return text.split("--call ")[1].split()[0]


def test_init_writes_a_portable_plugin(oc: OpenCode) -> None:
    text = (oc.dir / PLUGIN).read_text()
    assert 'const LAUNCHER = ".forge/bin/forge-policy-hook"' in text
    assert str(oc.dir) not in text  # no path of this machine: it can be committed


def test_a_call_that_breaks_nothing_runs_unchanged(oc: OpenCode) -> None:
    [result] = oc.drive(oc.bash("ls -la"))
    assert result == {
        "ran": True,
        "args": {"command": "ls -la", "description": "Runs it"},
        "output": "ran",
    }


def test_a_nudge_and_a_warning_reach_the_model_in_the_output(oc: OpenCode) -> None:
    t = Texts(oc.project.session)
    nudge, warning = oc.drive(oc.bash("echo nudge-me"), oc.bash("echo warn-me"))
    assert nudge["ran"] and nudge["output"] == f"ran\n\n{t.nudge}"
    assert warning["ran"] and warning["output"] == f"ran\n\n{t.warning}"


def test_a_soft_block_refuses_then_the_identical_repeat_overrides(oc: OpenCode) -> None:
    t = Texts(oc.project.session)
    first, second = oc.drive(oc.bash("echo soft-me"), oc.bash("echo soft-me"))
    assert not first["ran"]
    assert first["error"].replace(call_id(first["error"]), CALL) == t.soft
    assert second["ran"]  # a new OpenCode call id, the same call: the agent's override
    assert oc.project.counter("softy") == 1


def test_a_block_the_user_must_approve_is_refused_until_the_user_overrides(oc: OpenCode) -> None:
    t = Texts(oc.project.session)
    [first] = oc.drive(oc.bash("echo ask-me"))
    assert not first["ran"]
    assert first["error"].replace(call_id(first["error"]), CALL) == t.no_ask("OpenCode")
    [again] = oc.drive(oc.bash("echo ask-me"))
    assert not again["ran"]  # repeating it is not the user's approval
    terminal, user = os.openpty()  # the user's own terminal: an agent's call cannot do this
    try:
        done = subprocess.run(
            [
                *(str(SCRIPT), "override", "asker", "--session", oc.project.session),
                *("--call", call_id(first["error"]), "--reason", "the user said so"),
            ],
            cwd=oc.dir,
            env=oc.project.env,
            stdin=user,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        os.close(user)
        os.close(terminal)
    assert done.returncode == 0, done.stderr
    [approved] = oc.drive(oc.bash("echo ask-me"))
    assert approved["ran"]


def test_a_hard_block_is_refused_every_time(oc: OpenCode) -> None:
    t = Texts(oc.project.session)
    results = oc.drive(oc.bash("echo hard-me"), oc.bash("echo hard-me"))
    assert [r["ran"] for r in results] == [False, False]
    assert all(r["error"] == t.hard for r in results)


def test_a_broken_rule_after_the_call_is_told_in_the_output(oc: OpenCode) -> None:
    t = Texts(oc.project.session)
    [result] = oc.drive(oc.bash("echo post-me"))
    assert result["ran"]
    assert result["output"].replace(call_id(result["output"]), CALL) == f"ran\n\n{t.post}"


def test_other_tools_are_read_in_the_catalog_s_names(oc: OpenCode) -> None:
    """An ``edit`` with ``filePath`` is the catalog's ``Edit`` with ``file_path``: the built-in
    governance rule guards ``.forge`` whatever the tool calls its argument."""
    step = {
        "tool": "edit",
        "session": oc.project.session,
        "call": "toolu_edit",
        "args": {
            "filePath": str(oc.dir / ".forge/config.yaml"),
            "oldString": "a",
            "newString": "b",
        },
    }
    [result] = oc.drive(step)
    assert result == {"ran": True, "args": step["args"], "output": "ran"}  # test catalog only
    assert oc.project.audit(seen=True)[-1]["tool_name"] == "Edit"


def test_a_subagent_s_calls_count_in_the_session_that_started_it(oc: OpenCode) -> None:
    root = oc.project.session
    child = f"ses_child_{root}"
    created = {"type": "session.created", "properties": {"info": {"id": child, "parentID": root}}}
    steps = (
        {"event": created},
        {"message": {"sessionID": child, "agent": "general"}},
        oc.bash("echo soft-me", session=child),
    )
    *_, result = oc.drive(*steps)
    assert not result["ran"]
    assert f"--session {root} " in result["error"]  # the root session's override
    assert oc.project.counter("softy") == 1
    [record] = [r for r in oc.project.audit() if r.get("behavior_id") == "softy"]
    assert record["session_id"] == root


def test_the_launcher_missing_refuses(oc: OpenCode) -> None:
    (oc.project.root / "bin" / "forge-policy-hook").unlink()
    [result] = oc.drive(oc.bash("ls"))
    assert not result["ran"]
    assert result["error"].startswith(REFUSED + "the hook could not start: ")


def test_no_forge_policy_on_this_machine_refuses(oc: OpenCode) -> None:
    (oc.project.root / "runtime" / "hook-client").unlink()
    [result] = oc.drive(oc.bash("ls"), PATH="/usr/bin:/bin")
    assert not result["ran"]
    assert result["error"].startswith(
        REFUSED + "the hook exited 2: forge-policy is not installed on this machine"
    )


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("echo boom >&2; exit 1", "the hook exited 1: boom"),
        ("kill -9 $$", "the hook was killed by SIGKILL"),
        ("echo not json", "the hook's answer is not JSON: not json"),
        ("true", "the hook's answer is not JSON: (empty)"),
        ("echo '{}'", "the hook's answer has no decision: {}"),
        ('echo \'{"decision": "ask"}\'', "the hook's answer has no decision"),
        ("echo '[\"allow\"]'", "the hook's answer has no decision"),
    ],
)
def test_a_hook_that_fails_or_answers_oddly_refuses(oc: OpenCode, body: str, said: str) -> None:
    fake = oc.fake_hook(f"cat >/dev/null\n{body}")
    [result] = oc.drive(oc.bash("ls"), FORGE_POLICY=fake)
    assert not result["ran"]
    assert result["error"].startswith(REFUSED + said), result["error"]


def test_a_hook_that_does_not_answer_in_time_refuses(oc: OpenCode) -> None:
    fake = oc.fake_hook("sleep 30")
    started = time.monotonic()
    [result] = oc.drive(oc.bash("ls"), FORGE_POLICY=fake, FORGE_OPENCODE_TIMEOUT="1")
    assert time.monotonic() - started < 20
    assert not result["ran"]
    assert result["error"] == REFUSED + "the hook did not answer within 1 s"


def test_new_arguments_are_set_on_the_call_s_own_object(oc: OpenCode) -> None:
    """SPEC §13: the floor's rewritten command replaces the call's; only arguments the call
    has are set (an answer cannot add one)."""
    answer = {"decision": "allow", "args": {"command": "bwrap -- ls", "extra": 1}}
    fake = oc.fake_hook(f"cat >/dev/null\necho '{json.dumps(answer)}'")
    [result] = oc.drive(oc.bash("ls"), FORGE_POLICY=fake)
    assert result["ran"]
    assert result["args"] == {"command": "bwrap -- ls", "description": "Runs it"}


def test_the_payload_is_the_documented_one(oc: OpenCode) -> None:
    seen = oc.dir / "seen.json"
    fake = oc.fake_hook(f'cat >>{seen}; echo >>{seen}; echo \'{{"decision": "allow"}}\'')
    oc.drive(oc.bash("ls"), FORGE_POLICY=fake)
    before, after = (json.loads(line) for line in seen.read_text().splitlines())
    assert before == {
        "hook_event_name": "tool.execute.before",
        "tool": "bash",
        "tool_input": {"command": "ls", "description": "Runs it"},
        "sessionID": oc.project.session,
        "callID": "toolu_0001",
        "directory": str(oc.dir),
    }
    assert after == {**before, "hook_event_name": "tool.execute.after", "output": "ran"} | {
        "title": "ran"
    }
    assert os.access(oc.dir / PLUGIN, os.R_OK)


def test_mcp_tools_are_named_from_opencode_s_config(oc: OpenCode) -> None:
    """The plugin reads the MCP server names from OpenCode's config hook; the hook then reads
    ``github_create_issue`` as ``mcp__github__create_issue``."""
    seen = oc.dir / "seen.json"
    fake = oc.fake_hook(f'cat >>{seen}; echo >>{seen}; echo \'{{"decision": "allow"}}\'')
    config = {"config": {"mcp": {"github": {"type": "remote", "url": "https://x"}}}}
    call = {"tool": "github_create_issue", "session": "s", "call": "c", "args": {"title": "t"}}
    oc.drive(config, call, FORGE_POLICY=fake)
    before = json.loads(seen.read_text().splitlines()[0])
    assert before["mcpServers"] == ["github"]
    from forge_policy.harness.registry import get

    assert get("opencode").adapter.to_event(before).tool_name == "mcp__github__create_issue"


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_the_floor_s_command_is_the_one_opencode_runs(tmp_path: Path) -> None:
    """SPEC §13 end to end: with the default floor the plugin hands OpenCode's bash tool the
    command rewritten under bubblewrap; run as the tool runs it, its harmless part works and
    its write to ``.forge/`` fails."""
    oc = OpenCode(tmp_path)
    (oc.project.root / "config.yaml").write_text("floor: own\n")
    [result] = oc.drive(oc.bash("echo built > build.txt; echo pwned > .forge/pwned"))
    assert result["ran"] and result["args"]["description"] == "Runs it"
    command = result["args"]["command"]
    assert command != "echo built > build.txt; echo pwned > .forge/pwned"
    done = subprocess.run(
        ["/bin/bash", "-c", command],
        cwd=oc.dir,
        env=oc.project.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (oc.dir / "build.txt").read_text() == "built\n"
    assert not (oc.project.root / "pwned").exists()
    assert "Read-only file system" in done.stderr


def test_advice_on_an_mcp_tool_reaches_the_model_in_its_content(oc: OpenCode) -> None:
    """An MCP tool's result is MCP's ``content`` list, which OpenCode hands the model: the
    advice is one more text part, and the hook is sent the text parts as the output."""
    seen = oc.dir / "seen.json"
    answer = json.dumps({"decision": "allow", "message": "mind the issue tracker"})
    fake = oc.fake_hook(f"cat >>{seen}; echo >>{seen}; echo '{answer}'")
    content = [{"type": "text", "text": "issue 7 created"}, {"type": "image", "data": "x"}]
    step = {"tool": "github_create_issue", "session": "s", "call": "c", "args": {"title": "t"}}
    [result] = oc.drive({**step, "content": content}, FORGE_POLICY=fake)
    note = {"type": "text", "text": "mind the issue tracker\n\nmind the issue tracker"}
    assert result["output"] == [*content, note]  # the before's advice, then the after's
    after = json.loads(seen.read_text().splitlines()[1])
    assert after["output"] == "issue 7 created"
