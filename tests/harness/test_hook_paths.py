"""The other harnesses through every path of the hook: the warm worker (its answer must be the
in-process one, exit code included), ``FORGE_ON_ERROR`` failures in each harness's own refusal,
a broken engine, bad arguments and ``--via-serve``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hookrun import CALL, CALL_ID, CLIENT_PY, HOOK, ClientProject, Project, stop_workers

from tests.harness.conformance import HARNESS_CATALOG, Texts, fixture

ERROR = "forge-policy could not evaluate this call, so it is refused (FORGE_ON_ERROR=deny): "

#: harness → (pre-tool fixture, --event)
PRE_TOOL = {
    "codex": ("pre_tool_use", ""),
    "gemini": ("before_tool", ""),
    "cursor": ("before_shell_execution", ""),
    "copilot": ("pre_tool_use", "preToolUse"),
    "antigravity": ("pre_tool_use", "PreToolUse"),
}


def args(harness: str) -> list[str]:
    event = PRE_TOOL[harness][1]
    return ["--harness", harness, *(["--event", event] if event else [])]


def client(
    project: ClientProject, stdin: Any, argv: list[str]
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-I", "-S", str(project.client), *argv],
        input=json.dumps(stdin).encode(),
        capture_output=True,
        env=project.env,
        cwd=project.dir,
        timeout=30,
    )


@pytest.mark.parametrize("harness", list(PRE_TOOL))
def test_the_worker_answers_as_the_in_process_hook(tmp_path: Path, harness: str) -> None:
    warm = ClientProject(tmp_path / "warm", HARNESS_CATALOG)
    cold = Project(tmp_path / "cold", HARNESS_CATALOG)
    cold.session = warm.session  # the same texts (the override line names the session)
    try:
        name = PRE_TOOL[harness][0]
        first = client(warm, fixture(harness, name, warm, command="ls"), args(harness))
        assert first.returncode == 0, first.stderr
        warm.wait_worker()
        for command in ("echo nudge-me", "echo soft-me", "echo hard-me"):
            got = client(warm, fixture(harness, name, warm, command=command), args(harness))
            want = subprocess.run(
                [*HOOK, *args(harness)],
                input=json.dumps(fixture(harness, name, cold, command=command)).encode(),
                capture_output=True,
                env=cold.env,
                cwd=cold.dir,
                timeout=60,
            )
            # the call id hashes the tool input, which names each project's own folder here
            same = (CALL_ID.sub(CALL, got.stdout.decode()), CALL_ID.sub(CALL, want.stdout.decode()))
            assert (got.returncode, same[0]) == (want.returncode, same[1])
            assert got.returncode == 0 and b"evaluating in-process" not in got.stderr
        assert warm.requests() == 3  # answered by the worker, not in-process
    finally:
        stop_workers(warm.root)


def broken(project: Project) -> None:
    (project.root / "behaviors" / "index.yaml").write_text("behaviors: [", encoding="utf-8")


@pytest.mark.parametrize("harness", list(PRE_TOOL))
def test_a_broken_catalog_refuses_the_call_in_the_harness_s_own_words(
    tmp_path: Path, harness: str
) -> None:
    project = Project(tmp_path, HARNESS_CATALOG)
    broken(project)
    out, err = project.run(
        fixture(harness, PRE_TOOL[harness][0], project, command="ls"), *args(harness)
    )
    assert "catalog does not load" in err
    assert out is not None
    reason = {
        "codex": lambda o: o["hookSpecificOutput"]["permissionDecisionReason"],
        "gemini": lambda o: o["reason"],
        "cursor": lambda o: o["agent_message"],
        "copilot": lambda o: o["permissionDecisionReason"],
        "antigravity": lambda o: o["reason"],
    }[harness](out)
    assert reason.startswith(ERROR + "catalog does not load: ")
    refusal = {
        "codex": lambda o: o["hookSpecificOutput"]["permissionDecision"],
        "gemini": lambda o: o["decision"],
        "cursor": lambda o: o["permission"],
        "copilot": lambda o: o["permissionDecision"],
        "antigravity": lambda o: o["decision"],
    }[harness](out)
    assert refusal == "deny"


@pytest.mark.parametrize("harness", list(PRE_TOOL))
def test_forge_on_error_allow_lets_the_call_through(tmp_path: Path, harness: str) -> None:
    project = Project(tmp_path, HARNESS_CATALOG)
    broken(project)
    payload = fixture(harness, PRE_TOOL[harness][0], project, command="ls")
    out, _ = project.run(payload, *args(harness), FORGE_ON_ERROR="allow")
    text = json.dumps(out)
    assert "deny" not in text and "block" not in text
    if harness == "antigravity":
        assert out == {"decision": "ask"}  # Antigravity blocks on silence: "no opinion"


@pytest.mark.parametrize("harness", ["copilot", "antigravity"])
def test_unparseable_input_is_refused_where_the_event_is_named(
    tmp_path: Path, harness: str
) -> None:
    project = Project(tmp_path, HARNESS_CATALOG)
    out, err = project.run(b'{"toolName": "bash", ', *args(harness))
    assert "input is not JSON" in err
    assert out is not None and ERROR in json.dumps(out, ensure_ascii=False)


def test_an_engine_that_does_not_load_refuses_under_copilot_and_antigravity(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path, HARNESS_CATALOG)
    tree = tmp_path / "broken" / "forge_policy"
    shutil.copytree(CLIENT_PY.parent, tree / "worker", ignore=shutil.ignore_patterns("__pyc*"))
    (tree / "__init__.py").write_text('raise ImportError("half-installed")\n')
    refusals = {
        "copilot": {
            "permissionDecision": "deny",
            "permissionDecisionReason": "forge-policy cannot load its engine, so this call is "
            "refused",
        },
        "antigravity": {
            "decision": "deny",
            "reason": "forge-policy cannot load its engine, so this call is refused",
        },
        "codex": None,  # exit 2 with the reason on stderr blocks in Codex itself
    }
    for harness, expected in refusals.items():
        result = subprocess.run(
            [sys.executable, "-I", "-S", str(tree / "worker" / "launch.py"), *args(harness)],
            input=b"{}",
            capture_output=True,
            env={**project.env, "FORGE_WORKER": "off"},
            cwd=project.dir,
            timeout=30,
        )
        assert result.returncode == 2
        assert (json.loads(result.stdout) if result.stdout else None) == expected
        assert b"cannot load the engine (ImportError('half-installed'))" in result.stderr


def test_bad_arguments_are_usage_errors(tmp_path: Path) -> None:
    project = Project(tmp_path, HARNESS_CATALOG)
    for argv, message in (
        (["--harness", "codex", "--event", "beforeShellExecution"], b"is not a OpenAI Codex CLI"),
        (["--harness", "vim"], b"supported: claude-code, codex, gemini, cursor, copilot"),
    ):
        result = subprocess.run(
            [*HOOK, *argv], input=b"{}", capture_output=True, env=project.env, timeout=60
        )
        assert result.returncode == 2 and message in result.stderr, result.stderr


def test_a_payload_without_its_event_name_says_to_pass_event(tmp_path: Path) -> None:
    project = Project(tmp_path, HARNESS_CATALOG)
    payload = fixture("copilot", "pre_tool_use", project, command="echo hard-me")
    out, err = project.run(payload, "--harness", "copilot")
    assert "pass --event (one of: preToolUse, PreToolUse" in err
    assert out is None  # Copilot shows nothing for an unnamed event; init always names it


def test_via_serve_evaluates_other_harnesses_in_process(tmp_path: Path) -> None:
    project = Project(tmp_path, HARNESS_CATALOG)
    payload = fixture("gemini", "before_tool", project, command="echo hard-me")
    out, err = project.run(payload, "--harness", "gemini", "--via-serve")
    assert "--via-serve answers Claude Code payloads only" in err
    assert out == {
        "decision": "deny",
        "reason": Texts(project.session).hard,
        "systemMessage": "[hardy] hardy: refused",
    }
