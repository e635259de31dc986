"""MCP globs in trigger matchers and ``applies_to.tools`` (issue 27): an alternative that starts
with ``mcp__`` and holds only name characters and ``*`` is a glob anchored at both ends; every
other matcher means what it meant (checked on every matcher of the built-in and the dotforge
catalogs); lints catch a glob that can match nothing and a ``*`` outside an MCP glob."""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

import forge_policy as fp
from forge_policy.catalog.dsl import LazyRegex, compile_matcher, is_mcp_glob, matcher_kind
from forge_policy.catalog.lints import lint_catalog
from forge_policy.catalog.loader import BUILTIN_DIR
from tests.cli_support import SOFT_RULE, soft_catalog

DOTFORGE = Path(__file__).resolve().parents[1] / ".." / "shared" / "compat" / "dotforge"


def catalog_matchers(root: Path) -> list[str]:
    found = []
    for path in sorted(root.glob("*/behavior.yaml")):
        document = yaml.safe_load(path.read_text())
        for trigger in document["policy"]["triggers"]:
            found.append(trigger.get("matcher") or "")
    return found


@pytest.mark.parametrize("root", [BUILTIN_DIR, DOTFORGE], ids=["builtin", "dotforge"])
def test_no_existing_matcher_changes_meaning(root: Path) -> None:
    if not root.is_dir():
        pytest.skip(f"{root} is not here")
    matchers = catalog_matchers(root)
    assert matchers
    for matcher in matchers:
        assert matcher_kind(matcher) != "globs", matcher
    fp.load_catalog(root)


NAME = st.from_regex(r"[A-Za-z0-9_-]{1,10}", fullmatch=True)
GLOB = st.lists(NAME | st.just("*"), min_size=1, max_size=5).map(
    lambda parts: "mcp__" + "".join(parts) + ("" if "*" in parts else "*")
)
TOOL = st.builds(lambda s, t: f"mcp__{s}__{t}", NAME, NAME) | NAME


@given(GLOB, TOOL)
def test_an_mcp_glob_is_fnmatch_anchored_at_both_ends(glob: str, tool: str) -> None:
    assert is_mcp_glob(glob)
    assert compile_matcher(glob)(tool) == fnmatchcase(tool, glob)
    assert compile_matcher(f"Bash|{glob}")(tool) == (tool == "Bash" or fnmatchcase(tool, glob))


@given(st.lists(NAME, min_size=1, max_size=4), TOOL)
def test_names_matchers_are_exact_as_before(names: list[str], tool: str) -> None:
    matcher = "|".join(names)
    assert matcher_kind(matcher) == "names"
    assert compile_matcher(matcher)(tool) == (tool in names)


@pytest.mark.parametrize(
    ("matcher", "tool", "expected"),
    [
        ("mcp__*__write*", "mcp__fs__write_file", True),
        ("mcp__*__write*", "mcp__fs__rewrite", False),
        ("mcp__*__write*", "xmcp__fs__write", False),
        ("mcp__github__*", "mcp__github__create_issue", True),
        ("mcp__github__*", "mcp__github2__create_issue", False),
        ("mcp__memory__.*", "mcp__memory__store", True),  # a regex, as in Claude Code
        ("mcp__memory__.*", "x_mcp__memory__store", True),  # unanchored, as before
        ("Edit.*", "NotebookEdit", True),
    ],
)
def test_globs_and_regexes(matcher: str, tool: str, expected: bool) -> None:
    assert compile_matcher(matcher)(tool) is expected


def test_a_regex_matcher_is_still_a_regex() -> None:
    assert matcher_kind("mcp__.*") == "regex" and matcher_kind("Write*") == "regex"
    assert LazyRegex("Write*").search("Writ")  # what Write* always meant


def test_applies_to_tools_takes_globs() -> None:
    rule = fp.Behavior(
        {
            "id": "r",
            "name": "R",
            "default_level": "warning",
            "triggers": [{"event": "PreToolUse"}],
            "applies_to": {"tools": ["Bash", "mcp__github__*"]},
        }
    )
    for tool, expected in [
        ("Bash", True),
        ("mcp__github__create_issue", True),
        ("mcp__gitlab__create_issue", False),
        ("Write", False),
    ]:
        event = fp.Event("PreToolUse", "s", tool_name=tool)
        assert rule.applies_to(event, "standard") is expected, tool


def lints_of(tmp_path: Path, old: str, new: str) -> list[str]:
    root = soft_catalog(tmp_path / "catalog")
    (root / "no-rm" / "behavior.yaml").write_text(SOFT_RULE.replace(old, new, 1))
    fp.load_catalog(root)  # it loads: these are warnings
    return [str(issue) for issue in lint_catalog(root, profile="standard")]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("matcher: Bash", 'matcher: "mcp____*"', "matches no MCP tool: 'mcp____*'"),
        ("matcher: Bash", 'matcher: "Bash*"', "'Bash*' is read as a regular expression"),
        (
            "policy:\n",
            'applies_to:\n  tools: ["mcp____*"]\npolicy:\n',
            "applies_to.tools[0]: matches no MCP tool",
        ),
        ("policy:\n", 'applies_to:\n  tools: ["Bash*"]\npolicy:\n', "names a tool literally"),
        ("matcher: Bash", 'matcher: "Bash|mcp__*__exec*"', ""),
        ("matcher: Bash", 'matcher: "mcp__memory__.*"', ""),
    ],
)
def test_glob_lints(tmp_path: Path, old: str, new: str, expected: str) -> None:
    found = lints_of(tmp_path, old, new)
    if expected:
        assert any(expected in issue for issue in found), found
    else:
        assert found == [], found


def test_a_matcher_name_an_applies_to_glob_admits_can_fire(tmp_path: Path) -> None:
    root = soft_catalog(tmp_path / "catalog")
    text = SOFT_RULE.replace("matcher: Bash", "matcher: mcp__github__create_issue").replace(
        "policy:\n", 'applies_to:\n  tools: ["mcp__github__*"]\npolicy:\n'
    )
    (root / "no-rm" / "behavior.yaml").write_text(text)
    assert [str(i) for i in lint_catalog(root, profile="standard")] == []
    narrow = text.replace('"mcp__github__*"', '"mcp__gitlab__*"')
    (root / "no-rm" / "behavior.yaml").write_text(narrow)
    found = [str(i) for i in lint_catalog(root, profile="standard")]
    assert any("it can never fire" in issue for issue in found), found


def test_the_builtin_catalog_stays_lint_clean() -> None:
    assert [str(i) for i in lint_catalog(BUILTIN_DIR, profile="strict")] == []
