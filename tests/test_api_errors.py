"""The Python API fails closed and speaks one error family (issue 25, item 6): an event name the
engine does not know is refused (never evaluated to ``allow``), through the API and through the
hook; every error a public call raises is a :class:`~forge_policy.ForgePolicyError` (and still
the ``ValueError``/``KeyError`` it used to be); the lazy facades' ``dir()`` lists each name once,
and each resolves."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hookrun import CLIENT_PY, SCRIPT, Project

import forge_policy as fp
from forge_policy.errors import InvalidArgument, Refused, UnknownBehavior, UnknownEventError
from forge_policy.events import EVENTS, GIT_HOOK_EVENTS

PUSH = {"command": "git push -f origin main"}
MISSPELLED = ("pretooluse", "PreTooluse", "Pretooluse", "PRETOOLUSE", "pre_tool_use", "PreToolUse ")


@pytest.mark.parametrize("name", MISSPELLED)
def test_an_unknown_event_name_raises_naming_the_close_valid_name(name: str) -> None:
    with pytest.raises(fp.ForgePolicyError) as caught:
        fp.Event(name, "s1", tool_name="Bash", tool_input=PUSH)
    assert isinstance(caught.value, fp.EventError) and isinstance(caught.value, ValueError)
    assert isinstance(caught.value, UnknownEventError) and caught.value.code == "event_unknown"
    assert f"unknown event {name!r}" in str(caught.value)
    assert "'PreToolUse'" in str(caught.value) and caught.value.close == ("PreToolUse",)
    payload = {"session_id": "s", "hook_event_name": name, "tool_name": "Bash", "tool_input": PUSH}
    with pytest.raises(fp.EventError, match="did you mean 'PreToolUse'"):
        fp.Event.from_claude_code(payload)


def test_a_name_like_no_event_lists_the_known_ones() -> None:
    with pytest.raises(UnknownEventError) as caught:
        fp.Event("Zzzz", "s1")
    assert "known: " in str(caught.value) and "PreToolUse" in str(caught.value)


def test_every_known_event_name_is_accepted_and_the_push_is_still_blocked() -> None:
    for name in sorted(EVENTS | GIT_HOOK_EVENTS):
        assert fp.Event(name, "s1").event_name == name
    ev = fp.Evaluator(fp.builtin_catalog())
    decision = ev.evaluate(fp.Event("PreToolUse", "s1", tool_name="Bash", tool_input=PUSH))
    assert decision.outcome == "hard_block"


def _hook(
    project: Project, command: list[str], name: str, **env: str
) -> subprocess.CompletedProcess[bytes]:
    payload = {
        "session_id": project.session,
        "hook_event_name": name,
        "tool_name": "Bash",
        "tool_input": PUSH,
        "cwd": str(project.dir),
    }
    return subprocess.run(
        command,
        input=json.dumps(payload).encode(),
        capture_output=True,
        env={**project.env, **env},
        cwd=project.dir,
        timeout=60,
    )


@pytest.mark.parametrize("name", ["pretooluse", "PreTooluse"])
@pytest.mark.parametrize("client", ["hook", "worker-client"])
def test_the_hook_refuses_a_call_under_an_unknown_event_name(
    tmp_path: Path, name: str, client: str
) -> None:
    """Exit 2 is Claude Code's (and Codex's) blocking error: the call is not run, the reason is
    shown; before, the event was evaluated, matched nothing and was allowed (exit 0, no
    output)."""
    project = Project(tmp_path, catalog={})  # the built-in catalog: no-destructive-git
    if client == "hook":
        command = [str(SCRIPT), "hook"]
    else:
        command = [sys.executable, "-I", "-S", str(CLIENT_PY)]
    got = _hook(project, command, name, FORGE_WORKER="off")
    assert got.returncode == 2, got
    assert got.stdout == b""
    assert f"unknown event {name!r} (did you mean 'PreToolUse'?)".encode() in got.stderr
    right = _hook(project, command, "PreToolUse", FORGE_WORKER="off")
    assert right.returncode == 0 and b'"permissionDecision":"deny"' in right.stdout
    # FORGE_ON_ERROR=allow is the user's explicit choice to let undecidable calls through
    allowed = _hook(project, command, name, FORGE_WORKER="off", FORGE_ON_ERROR="allow")
    assert allowed.returncode == 0 and b"deny" not in allowed.stdout


def test_override_errors_are_forge_policy_errors() -> None:
    ev = fp.Evaluator(fp.builtin_catalog())
    with pytest.raises(fp.ForgePolicyError) as unknown:
        ev.override("s1", "search-frist")
    assert isinstance(unknown.value, KeyError) and isinstance(unknown.value, UnknownBehavior)
    assert str(unknown.value) == "unknown behavior 'search-frist' (did you mean 'search-first'?)"
    with pytest.raises(fp.ForgePolicyError) as hard:
        ev.override("s1", "no-destructive-git")
    assert isinstance(hard.value, ValueError) and isinstance(hard.value, Refused)
    assert "hard_block behavior: it has no override" in str(hard.value)
    with pytest.raises(Refused, match="no soft-blocked call 0123abcd of search-first"):
        ev.override("s1", "search-first", call="0123abcd")
    with pytest.raises(fp.ForgePolicyError):
        ev.check_overridable("nope")


def test_argument_errors_of_public_calls_are_forge_policy_errors(tmp_path: Path) -> None:
    from forge_policy.harness.registry import get

    cases = [
        lambda: fp.Level.parse("hard"),
        lambda: fp.FactRegistry().register("", lambda event: 1),
        lambda: fp.FactRegistry().register("x", lambda event: 1, budget_ms=0),
        lambda: fp.SQLiteStore(tmp_path / "s.db", synchronous="SOMETIMES"),
        lambda: fp.PostgresStore("postgresql://u@h/db", pool_size=0),
        lambda: fp.Catalog([*fp.builtin_catalog().behaviors[:1]] * 2),
    ]
    for case in cases:
        with pytest.raises(InvalidArgument) as caught:
            case()
        assert isinstance(caught.value, fp.ForgePolicyError) and isinstance(
            caught.value, ValueError
        )
    with pytest.raises(fp.ForgePolicyError) as harness:
        get("claude")
    assert isinstance(harness.value, KeyError)
    assert str(harness.value).startswith("unknown harness 'claude' (supported: claude-code")


LAZY = (
    "forge_policy",
    "forge_policy.stores",
    "forge_policy.audit",
    "forge_policy.render",
    "forge_policy.testing",
    "forge_policy.testing.conformance",
    "forge_policy.commands",
)


@pytest.mark.parametrize("package", LAZY)
def test_the_lazy_facades_dir_lists_each_name_once_and_each_resolves(package: str) -> None:
    code = (
        "import importlib, sys\n"
        f"module = importlib.import_module({package!r})\n"
        "for rounds in range(2):  # before and after every name was loaded\n"
        "    names = dir(module)\n"
        "    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)\n"
        "    for name in names:\n"
        "        getattr(module, name)\n"
        "    assert set(module.__all__) <= set(names)\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout == "ok\n", result.stderr
    module = importlib.import_module(package)
    assert sorted(dir(module)) == dir(module)
