"""The hook fails closed, in one line, and changes nothing, whatever it is fed (SPEC §9)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hookrun import Project
from hypothesis import given
from hypothesis import strategies as st

from forge_policy import hook
from forge_policy._limits import json_too_deep, too_deep


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def pre_tool_use(**fields: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "session_id": "s-bad",
        "transcript_path": "/t.jsonl",
        "cwd": "/p",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "toolu_1",
    }
    payload.update(fields)
    return {k: v for k, v in payload.items() if v is not ...}


def raw(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload).encode()


BIG = b'{"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Write", '
BIG += b'"tool_input": {"file_path": "/x", "content": "' + b"a" * (10 * 1024 * 1024) + b'"}}'

#: (name, stdin, expected answer, words of the one-line diagnostic)
BAD_INPUT: list[tuple[str, bytes, str, str]] = [
    ("empty stdin", b"", "allow", "no input"),
    ("whitespace", b"  \n", "allow", "no input"),
    ("invalid JSON", b'{"hook_event_name": "PreToolUse", "tool_name": ', "deny", "not JSON"),
    ("invalid JSON, no event", b"{nope", "allow", "not JSON"),
    ("JSON array", b'[{"hook_event_name": "PreToolUse"}]', "allow", "got an array"),
    ("JSON string", b'"PreToolUse"', "allow", "must be a JSON object"),
    (
        "no session, nothing to derive",
        raw(pre_tool_use(session_id=..., transcript_path=..., cwd=...)),
        "deny",
        "session_id",
    ),
    ("no tool_name", raw(pre_tool_use(tool_name=...)), "deny", "tool_name: required"),
    ("tool_input a string", raw(pre_tool_use(tool_input="ls")), "deny", "tool_input: expected"),
    ("session_id a number", raw(pre_tool_use(session_id=7)), "deny", "session_id: expected"),
    ("event name a number", raw(pre_tool_use(hook_event_name=3)), "allow", "hook_event_name"),
    ("10 MB", BIG, "deny", "over 8 MiB"),
    ("invalid UTF-8", raw(pre_tool_use()).replace(b"ls", b"l\xff"), "deny", "not UTF-8"),
    (
        "nested too deeply",
        b'{"hook_event_name": "PreToolUse", "x": ' + b"[" * 100000,
        "deny",
        "nested deeper than 128 levels",
    ),
    (
        "valid JSON nested 200 levels deep",
        raw(pre_tool_use()).replace(b'"ls"', b"[" * 200 + b"]" * 200),
        "deny",
        "nested deeper than 128 levels",
    ),
]


@pytest.mark.parametrize(
    ("name", "stdin", "answer", "words"), BAD_INPUT, ids=[b[0] for b in BAD_INPUT]
)
def test_bad_input_fails_closed_in_one_line_and_changes_nothing(
    project: Project, name: str, stdin: bytes, answer: str, words: str
) -> None:
    out, err = project.run(stdin)
    assert err.count("\n") == 1 and err.startswith("forge-policy: "), err
    assert words in err
    assert out is not None
    if answer == "deny":
        specific = out["hookSpecificOutput"]
        assert specific["hookEventName"] == "PreToolUse"
        assert specific["permissionDecision"] == "deny"
        assert words in specific["permissionDecisionReason"]
        assert "FORGE_ON_ERROR=deny" in specific["permissionDecisionReason"]
    else:
        assert set(out) == {"systemMessage"} and words in out["systemMessage"]
    assert not (project.root / "runtime" / "state.json").exists()
    assert not (project.root / "audit").exists()


def test_on_error_allow_lets_a_tool_call_through_with_a_notice(project: Project) -> None:
    out, err = project.run(raw(pre_tool_use(tool_name=...)), FORGE_ON_ERROR="allow")
    assert out is not None and set(out) == {"systemMessage"}
    assert "FORGE_ON_ERROR=allow" in out["systemMessage"] and "tool_name" in err


def test_unknown_event_kinds_pass(project: Project) -> None:
    assert project.run(project.payload("SomethingNew", detail=1)) == (None, "")


def test_a_bad_variable_fails_closed_naming_it(project: Project) -> None:
    out, err = project.run(project.bash("ls"), FORGE_PROFILE="paranoid")
    assert out is not None
    reason = out["hookSpecificOutput"]["permissionDecisionReason"]
    assert "FORGE_PROFILE: unknown value 'paranoid'" in reason
    assert err.startswith("forge-policy: FORGE_PROFILE: unknown value")
    out, _ = project.run(project.bash("ls"), FORGE_ON_ERROR="maybe")
    assert out is not None and "FORGE_ON_ERROR: unknown value 'maybe'" in out["systemMessage"] + (
        out.get("hookSpecificOutput", {}).get("permissionDecisionReason", "")
    )


def test_a_broken_catalog_fails_closed_with_file_and_line(project: Project) -> None:
    path = project.root / "behaviors" / "warner" / "behavior.yaml"
    path.write_text(path.read_text().replace("default_level: warning", "default_level: loud"))
    out, err = project.run(project.bash("ls"))
    assert out is not None
    reason = out["hookSpecificOutput"]["permissionDecisionReason"]
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert err.startswith("forge-policy: catalog does not load: ")
    assert f"{path}:" in reason or "warner/behavior.yaml:" in reason
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "loud" in t)
    assert f"behavior.yaml:{line}:" in reason
    assert "policy.enforcement.default_level" in reason
    out, _ = project.run(project.payload("UserPromptSubmit", prompt="hi"))
    assert out is not None and set(out) == {"systemMessage"}  # prompts are never held hostage
    assert "catalog does not load" in out["systemMessage"]


def test_a_missing_explicit_catalog_folder_fails_closed(project: Project) -> None:
    out, _ = project.run(project.bash("ls"), FORGE_BEHAVIORS_DIR="no-such-folder")
    assert out is not None
    assert "no such catalog folder" in out["hookSpecificOutput"]["permissionDecisionReason"]


def test_an_unexpected_exception_is_caught_at_the_top(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(*args: object) -> str:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(hook, "_evaluate", explode)
    out, err = io.StringIO(), io.StringIO()
    code = hook.main(io.BytesIO(raw(pre_tool_use())), out, err, {}, [])
    assert code == 0
    assert err.getvalue() == "forge-policy: internal error: RuntimeError: boom second line\n"
    answer = json.loads(out.getvalue())
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert hook.main(io.BytesIO(b""), None, None, {}, ["--help"]) == 0
    assert "usage: forge-policy hook" in capsys.readouterr().out
    assert hook.main(io.BytesIO(b""), None, None, {}, ["--bogus"]) == 2
    assert "unexpected argument '--bogus'" in capsys.readouterr().err


json_values = st.recursive(
    st.none() | st.integers() | st.text(alphabet='[]{}"\\ab\n', max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=30,
)


@given(value=json_values, limit=st.integers(0, 6))
def test_the_depth_judged_on_the_text_is_the_depth_of_the_value(value: object, limit: int) -> None:
    """The hook judges a payload's depth on its bytes before parsing (at C speed); strings full
    of brackets, quotes and backslashes must not fool it."""
    raw = json.dumps(value).encode()
    assert json_too_deep(raw, limit) is too_deep(value, limit)
