"""The condition language: field resolution, operators, matchers (SPEC §5)."""

from __future__ import annotations

import pytest

import forge_policy as fp
from forge_policy.catalog.dsl import Condition, Scope, compile_matcher, matcher_kind


def scope(
    event: fp.Event,
    *,
    counter: int = 0,
    flags: dict[str, bool] | None = None,
    totals: dict[str, float] | None = None,
    facts: dict[str, object] | None = None,
) -> Scope:
    known = facts or {}
    return Scope(event, counter, flags or {}, totals or {}, lambda name: known.get(name, ""))


EVENT = fp.Event(
    "PreToolUse",
    "s",
    tool_name="Bash",
    tool_input={
        "command": "git push",
        "nested": {"deep": {"key": "v"}},
        "n": 7,
        "none": None,
        "items": ["a", "b"],
        "flag": False,
    },
    payload={
        "hook_event_name": "PreToolUse",
        "prompt": "hello",
        "cwd": "/repo",
        "session_id": "s",
        "tool_name": "Bash",
    },
)


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("command", "git push"),
        ("nested.deep.key", "v"),
        ("items.1", "b"),
        ("n", 7),
        ("none", ""),  # null is the empty string
        ("missing", ""),
        ("nested.missing.key", ""),
        ("prompt", "hello"),  # a top-level key of the event
        ("cwd", "/repo"),
        ("session.counter", 3),
        ("session.flags.ready", True),
        ("session.flags.absent", False),
        ("session.totals.tokens", 120),
        ("session.totals.none", 0),
        ("facts.size", 42),
        ("facts.unknown", ""),
    ],
)
def test_field_resolution(field: str, expected: object) -> None:
    condition = Condition(field, "exists", None)
    s = scope(EVENT, counter=3, flags={"ready": True}, totals={"tokens": 120}, facts={"size": 42})
    assert condition.resolve(s) == expected


def test_tool_input_wins_over_top_level_keys() -> None:
    event = fp.Event(
        "PreToolUse",
        "s",
        tool_name="Agent",
        tool_input={"prompt": "inner"},
        payload={"prompt": "outer"},
    )
    assert Condition("prompt", "exists", None).resolve(scope(event)) == "inner"


@pytest.mark.parametrize(
    ("operator", "value", "field", "expected"),
    [
        ("regex_match", r"git\s+push", "command", True),
        ("regex_match", r"(?i)GIT\b", "command", True),
        ("regex_match", r"^push", "command", False),
        ("not_regex_match", r"^push", "command", True),
        ("contains", "push", "command", True),
        ("not_contains", "push", "command", False),
        ("contains", "a", "items", True),  # list membership
        ("contains", "x", "items", False),
        ("equals", "git push", "command", True),
        ("equals", 7, "n", True),
        ("equals", "false", "flag", True),
        ("starts_with", "git", "command", True),
        ("ends_with", "push", "command", True),
        ("ends_with", "git", "command", False),
        ("in", ["git push", "ls"], "command", True),
        ("in", ["ls"], "command", False),
        ("in", [7, 8], "n", True),
        ("glob", "git *", "command", True),
        ("glob", "*.py", "command", False),
        ("exists", None, "command", True),
        ("exists", None, "missing", False),
        ("exists", None, "none", False),
        ("not_exists", None, "missing", True),
        ("gt", 6, "n", True),
        ("gt", 7, "n", False),
        ("gte", 7, "n", True),
        ("lt", 7.5, "n", True),
        ("lte", 6, "n", False),
        ("gt", 1, "command", False),  # a non-number is false
        ("lt", 1, "command", False),
        ("gt", 0, "flag", False),  # booleans are not numbers
        ("gt", 0, "missing", False),
    ],
)
def test_operators(operator: str, value: object, field: str, expected: bool) -> None:
    matched, _ = Condition(field, operator, value)(scope(EVENT))
    assert matched is expected


def test_glob_matches_paths() -> None:
    event = fp.Event("PreToolUse", "s", tool_name="Read", tool_input={"file_path": "/a/b/.env"})
    assert Condition("file_path", "glob", "*/.env")(scope(event))[0]
    assert not Condition("file_path", "glob", "*.py")(scope(event))[0]


def test_numeric_strings_compare_as_numbers() -> None:
    event = fp.Event("PreToolUse", "s", tool_name="X", tool_input={"size": "1024"})
    assert Condition("size", "gte", 1000)(scope(event))[0]


@pytest.mark.parametrize(
    ("matcher", "kind", "hits", "misses"),
    [
        (None, "all", ["Bash", "Write"], []),
        ("", "all", ["Bash"], []),
        ("*", "all", ["Anything"], []),
        ("Bash", "names", ["Bash"], ["BashX", "bash"]),
        ("Write|Edit", "names", ["Write", "Edit"], ["NotebookEdit", "Write|Edit"]),
        ("Write,Edit", "names", ["Edit"], ["Read"]),
        ("mcp-tool_1", "names", ["mcp-tool_1"], ["mcp"]),
        ("Edit.*", "regex", ["Edit", "NotebookEdit", "EditX"], ["Write"]),
        ("^Edit$", "regex", ["Edit"], ["NotebookEdit"]),
        ("mcp__memory__.*", "regex", ["mcp__memory__save"], ["mcp__other__x"]),
    ],
)
def test_matchers(matcher: str | None, kind: str, hits: list[str], misses: list[str]) -> None:
    assert matcher_kind(matcher) == kind
    match = compile_matcher(matcher)
    assert all(match(name) for name in hits)
    assert not any(match(name) for name in misses)


def test_catastrophic_regex_is_linear_and_correct() -> None:
    # (a+)+$ backtracks exponentially in Python's re; RE2 answers in linear time.
    text = "a" * 100_000 + "!"
    condition = Condition("command", "regex_match", "(a+)+$")
    event = fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": text})
    assert condition(scope(event))[0] is False
    event_ok = fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": text[:-1]})
    assert condition(scope(event_ok))[0] is True


def test_a_condition_is_a_frozen_value_of_its_three_parts() -> None:
    import attrs

    condition = Condition("command", "regex_match", "rm")
    assert condition == Condition("command", "regex_match", "rm")
    assert condition != Condition("command", "regex_match", "rmdir")
    assert hash(condition) == hash(Condition("command", "regex_match", "rm"))
    assert repr(condition) == "Condition(field='command', operator='regex_match', value='rm')"
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        condition.value = "x"  # type: ignore[misc]
    assert not hasattr(condition, "__dict__")  # slots
    assert condition(scope(EVENT)) == (False, "git push")


def test_a_one_key_field_reads_the_tool_input_then_the_event() -> None:
    # compile_field's path for one key (``command``, ``tool_name``) is the dotted path's rule
    from forge_policy.catalog.dsl import compile_field

    inputs: list[object] = [{"command": "ls"}, {"command": None}, {}, ["a", "b"], {"tool_name": 1}]
    for tool_input in inputs:
        event = fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"x": 1})
        object.__setattr__(event, "tool_input", tool_input)  # what a harness may send
        scope = Scope(event, 0, {}, {}, lambda name: "")
        for key in ("command", "tool_name", "0", "missing"):
            if isinstance(tool_input, dict) and key in tool_input:
                expected = tool_input[key]
            elif isinstance(tool_input, list) and key.isdigit():
                expected = tool_input[int(key)]
            else:
                expected = event.top_level(key)
            assert compile_field(key)(scope) == ("" if expected is None else expected)
