"""How an MCP call is read for what it does (``forge_policy.facts.mcp``, issue 27): the
documented heuristics one by one, the spellings an agent would try, and properties: the reader
is total, an argv round-trips, a command is never silently dropped, a non-MCP event is left
alone, and the engine judges the reading while the records keep the name the agent called."""

from __future__ import annotations

import shlex
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import forge_policy as fp
from forge_policy.facts.mcp import (
    KINDS,
    MAX_COMMAND,
    PATH_KEYS,
    READ_FROM,
    SHELL_KEYS,
    read_as,
    read_call,
    split_name,
)
from forge_policy.values import Unknown


def reading(name: str, **tool_input: Any) -> tuple[str, str, dict[str, Any]]:
    r = read_call(name, tool_input)
    return r.kind, r.tool_name, r.tool_input


@pytest.mark.parametrize(
    ("name", "tool_input", "command"),
    [
        ("mcp__shell__run", {"command": "ls"}, "ls"),
        ("mcp__x__anything", {"cmd": "ls"}, "ls"),  # a command argument, whatever the name
        ("mcp__x__anything", {"shell_command": "ls"}, "ls"),
        ("mcp__x__anything", {"commandLine": "ls"}, "ls"),
        ("mcp__desktop__execute_command", {"command": "ls"}, "ls"),
        ("mcp__term__runShellCommand", {"script": "ls"}, "ls"),
        ("mcp__x__exec", {"cmd": ["rm", "-rf", "a b"]}, "rm -rf 'a b'"),  # argv, quoted
        ("mcp__SHELL__RUN", {"Command": "ls"}, "ls"),  # uppercase server and argument
        ("mcp__x__y", {"Shell-Command": "ls"}, "ls"),
        ("mcp__shell__exec", {"params": {"command": "ls"}}, "ls"),  # nested, in a shell tool
        ("mcp__x__run", {"command": "ls", "cmd": "ls"}, "ls"),  # candidates that agree
        ("mcp__x__runcommand", {"cmd_args": {"command": "ls"}}, "ls"),  # glued words, nested
    ],
)
def test_a_command_is_read(name: str, tool_input: dict[str, Any], command: str) -> None:
    assert reading(name, **tool_input) == ("shell", "Bash", {"command": command})


@pytest.mark.parametrize(
    ("name", "tool_input", "why"),
    [
        ("mcp__x__run", {"command": {"a": 1}}, "is a dict, not a command"),
        ("mcp__x__run", {"command": ["ls", 1]}, "is a list, not a command"),
        ("mcp__x__run", {"command": []}, "is a list, not a command"),
        ("mcp__x__run", {"command": 7}, "is a int, not a command"),
        ("mcp__x__run", {"command": "ls", "cmd": "rm -rf /"}, "name different commands"),
        ("mcp__x__run", {"command": "ls", "Command": "rm -rf /"}, "name different commands"),
        ("mcp__x__run", {"command": "x" * (MAX_COMMAND + 1)}, "more than"),
        ("mcp__exec__run", {"code": "rm -rf /"}, "holds its command"),  # a shell with no key
        ("mcp__x__shell_exec", {"input": "rm -rf /"}, "holds its command"),
        ("mcp__shell__kill", {"pid": 3}, "holds its command"),  # named by its server
    ],
)
def test_a_command_that_cannot_be_read_is_unknown(
    name: str, tool_input: dict[str, Any], why: str
) -> None:
    r = read_call(name, tool_input)
    assert r.kind == "shell" and why in r.unreadable
    assert type(r.tool_input["command"]) is Unknown


@pytest.mark.parametrize(
    ("name", "tool_input"),
    [
        ("mcp__ci__run_tests", {"suite": "unit"}),  # run beside an object: runs that object
        ("mcp__db__execute_query", {"query": "select 1"}),
        ("mcp__deploy__run", {"target": "prod"}),  # a bare run on a server named otherwise
        ("mcp__shell__get_command_output", {"id": 3}),  # a read verb first: about commands
        ("mcp__github__list_commands", {}),
        ("mcp__github__create_issue", {"title": "git push --force"}),
        ("mcp__memory__store", {"text": "hello"}),
    ],
)
def test_what_does_not_read_as_a_shell(name: str, tool_input: dict[str, Any]) -> None:
    assert read_call(name, tool_input).kind != "shell"


@pytest.mark.parametrize(
    ("name", "tool_input", "expected"),
    [
        ("mcp__fs__write_file", {"path": "a.py", "content": "x"}, ("write", "a.py")),
        ("mcp__fs__edit_file", {"file_path": "a.py"}, ("write", "a.py")),
        ("mcp__fs__createFile", {"filePath": "a.py"}, ("write", "a.py")),
        (
            "mcp__fs__write",
            {"path": "a.py", "FilePath": ".forge/x"},
            ("write", ["a.py", ".forge/x"]),
        ),
        ("mcp__fs__append", {"filename": "a.py"}, ("write", "a.py")),
        ("mcp__fs__move_file", {"source": "a", "destination": "b"}, ("write", ["a", "b"])),
        ("mcp__fs__delete", {"paths": ["a", "b"]}, ("write", ["a", "b"])),
        ("mcp__fs__write_file", {"path": "file:///p/.forge/x"}, ("write", "/p/.forge/x")),
        ("mcp__fs__write_file", {"path": "file://localhost/p/a%20b"}, ("write", "/p/a b")),
        ("mcp__fs__write_file", {"path": "../.forge/x"}, ("write", "../.forge/x")),
        ("mcp__fs__read_file", {"path": ".env"}, ("read", ".env")),
        ("mcp__fs__get_file_contents", {"path": ".env"}, ("read", ".env")),
        ("mcp__fs__read_and_write", {"path": "x"}, ("write", "x")),  # write wins
        ("mcp__fs__list_directory", {"path": "src"}, ("read", "src")),
        ("mcp__fs__writefile", {"path": "a"}, ("write", "a")),  # no separators
        ("mcp__fs__readfile", {"path": "a"}, ("read", "a")),
        ("mcp__shell__write_file", {"path": "a"}, ("write", "a")),  # a shell server's file tool
    ],
)
def test_paths_are_read_by_the_verbs_of_the_tool_name(
    name: str, tool_input: dict[str, Any], expected: tuple[str, object]
) -> None:
    r = read_call(name, tool_input)
    assert (r.kind, r.tool_input["file_path"]) == expected
    assert r.tool_name == KINDS[r.kind]


def test_a_write_s_content_comes_along() -> None:
    r = read_call("mcp__fs__write_file", {"path": "a", "contents": "x"})
    assert r.tool_input == {"file_path": "a", "content": "x"}


def test_a_write_whose_path_cannot_be_read_is_unknown_and_a_read_s_is_left_out() -> None:
    write = read_call("mcp__fs__write_file", {"path": {"dir": ".forge"}})
    assert write.kind == "write" and type(write.tool_input["file_path"]) is Unknown
    assert "not a path" in write.unreadable
    assert read_call("mcp__fs__read_file", {"path": {"dir": ".forge"}}).kind == "none"


@pytest.mark.parametrize(
    ("tool_input", "url"),
    [
        ({"url": "https://example.com"}, "https://example.com"),
        ({"uri": "http://x.test/a"}, "http://x.test/a"),
        ({"page": "https://example.com/a?b=c"}, "https://example.com/a?b=c"),  # any value
        ({"urls": ["https://a.test", "https://b.test"]}, ["https://a.test", "https://b.test"]),
    ],
)
def test_urls_are_read_as_fetches(tool_input: dict[str, Any], url: object) -> None:
    assert reading("mcp__web__browse", **tool_input) == ("fetch", "WebFetch", {"url": url})


def test_text_that_holds_a_url_is_not_a_fetch() -> None:
    assert read_call("mcp__slack__post", {"text": "see https://example.com"}).kind == "none"


def test_names_are_split_at_the_first_double_underscore() -> None:
    assert split_name("mcp__plugin_kit_shell__run") == ("plugin_kit_shell", "run")
    assert split_name("mcp__a__b__c") == ("a", "b__c")
    assert split_name("mcp__run") == ("", "run")
    assert split_name("Bash") == ("", "")


# --- properties -----------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
KEYS = st.sampled_from([*SHELL_KEYS, *PATH_KEYS, "url", "x", "content"]) | st.text(max_size=8)
NAMES = st.builds(
    lambda server, tool: f"mcp__{server}__{tool}",
    st.from_regex(r"[A-Za-z0-9_-]{1,12}", fullmatch=True),
    st.from_regex(r"[A-Za-z0-9_-]{1,16}", fullmatch=True),
)


@given(NAMES, st.dictionaries(KEYS, JSON, max_size=5))
def test_the_reader_is_total_and_never_drops_a_command(name: str, args: dict[str, Any]) -> None:
    r = read_call(name, args)
    assert r.kind in KINDS and r.tool_name == KINDS[r.kind]
    if r.kind == "shell":
        command = r.tool_input["command"]
        assert isinstance(command, str)
        assert (type(command) is Unknown) == bool(r.unreadable)
    present = [k for k in SHELL_KEYS if args.get(k) is not None]
    if present:  # a command argument always makes a shell reading, read or unreadable
        assert r.kind == "shell"


@given(st.lists(st.text(min_size=1, max_size=10).filter(lambda s: "\0" not in s), min_size=1))
def test_an_argv_round_trips(argv: list[str]) -> None:
    command = read_call("mcp__shell__run", {"cmd": argv}).tool_input["command"]
    assert shlex.split(command) == argv


@given(st.text(max_size=30), st.dictionaries(st.text(max_size=5), JSON, max_size=3))
def test_a_non_mcp_event_is_left_as_it_is(name: str, args: dict[str, Any]) -> None:
    event = fp.Event("PreToolUse", "s", tool_name=name, tool_input=args)
    if not name.startswith("mcp__"):
        assert read_as(event) is event


def test_the_engine_judges_the_reading_and_records_the_name_called() -> None:
    ev = fp.Evaluator(fp.builtin_catalog(), clock=lambda: 0.0)
    event = fp.Event(
        "PreToolUse",
        "s",
        tool_name="mcp__shell__run",
        tool_input={"cmd": ["git", "reset", "--hard"]},
    )
    decision = ev.evaluate(event)
    assert decision.outcome == "hard_block" and decision.event is event
    assert decision.blocking is not None and decision.blocking.behavior_id == "no-destructive-git"
    (record,) = [r for r in ev.audit.records() if r["kind"] == "block"]  # type: ignore[attr-defined]
    assert record["tool_name"] == "mcp__shell__run" and record["reading"] == "shell"
    seen = read_as(event)
    assert seen.tool_name == "Bash" and seen.payload[READ_FROM] == "mcp__shell__run"


def test_explain_names_the_reading_s_facts() -> None:
    ev = fp.Evaluator(fp.builtin_catalog())
    report = ev.explain(
        fp.Event("PreToolUse", "s", tool_name="mcp__shell__run", tool_input={"command": "ls"})
    )
    assert report.decision.outcome == "allow"
