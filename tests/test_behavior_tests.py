"""Behavior tests (issue 15): the ``tests`` key, its validation, ``forge-policy test`` and its
coverage, through the real executable and the library."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from forge_policy.catalog.loader import BUILTIN_DIR, load_catalog, read_behavior_tests
from forge_policy.errors import CatalogError
from forge_policy.levels import Level
from forge_policy.testing.behavior_tests import run_behavior_tests
from tests.cli_support import Project
from tests.helpers import behavior_yaml, write_catalog

#: a warning on `git push`, then a soft block from the second violation
PUSH_RULE = behavior_yaml(
    "push-rule",
    triggers=textwrap.indent(
        textwrap.dedent(
            """\
            - event: PreToolUse
              matcher: Bash
              conditions:
                - {field: command, operator: regex_match, value: '^git push'}
            - event: PreToolUse
              matcher: Bash
              conditions:
                - {field: command, operator: contains, value: '--mirror'}
            """
        ),
        "    ",
    ),
    escalation="    escalation:\n      - {after: 2, level: soft_block}\n",
)


def _with_tests(text: str, tests: str) -> str:
    return text + "tests:\n" + textwrap.indent(textwrap.dedent(tests), "  ")


def _catalog(tmp_path: Path, tests: str, rule: str = PUSH_RULE) -> Path:
    return write_catalog(tmp_path / "catalog", {"push-rule": _with_tests(rule, tests)})


def test_the_builtin_catalog_passes_through_the_real_command(tmp_path: Path) -> None:
    project = Project(tmp_path)
    out = project.run("test").stdout
    assert "0 failed" in out
    assert "total: triggers 42/42 fired (100 %)" in out
    assert "no tests:" not in out


def test_every_builtin_behavior_is_tested_blocking_and_allowing() -> None:
    catalog = load_catalog(BUILTIN_DIR)
    for behavior in catalog:
        located, issues = read_behavior_tests(BUILTIN_DIR / behavior.id / "behavior.yaml")
        assert issues == []
        expected = {e.expect for t in located for e in t.test.events}
        top = max([behavior.default_level, *(s.level for s in behavior.escalation)])
        # its highest level (a block, for all that block) and a pass
        assert "allow" in expected, behavior.id
        assert top.label in expected, behavior.id
        if top >= Level.SOFT_BLOCK:
            assert expected & {"soft_block", "hard_block"}, behavior.id


def test_a_failed_expectation_names_what_it_got_and_why(tmp_path: Path) -> None:
    folder = _catalog(
        tmp_path,
        """\
        - name: a first push is refused
          events:
            - tool_name: Bash
              tool_input: {command: "git push origin main"}
              expect: soft_block
            - {tool_name: Bash, tool_input: {command: ls}, expect: allow}
        """,
    )
    result = Project(tmp_path).run("test", str(folder), check=1)
    out = result.stdout
    lines = (folder / "push-rule" / "behavior.yaml").read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "- tool_name: Bash" in text)
    assert "FAIL at event 1" in out
    assert f"event 1 (line {line}): expected soft_block, got warning" in out
    # the explain of that event: the behavior's result, the trigger, the condition's value
    assert "push-rule: violation 1: would reach warning" in out
    assert "trigger 0 PreToolUse[Bash] evaluate: violation" in out
    assert 'true: command regex_match "^git push" (actual "git push origin main")' in out
    assert "1 failed" in out


def test_events_run_in_order_over_one_fresh_session_and_advance_moves_the_clock(
    tmp_path: Path,
) -> None:
    folder = _catalog(
        tmp_path,
        """\
        - name: escalates, a retry passes once, a late retry is a new violation
          events:
            - {tool_name: Bash, tool_input: {command: git push}, expect: warning}
            - {tool_name: Bash, tool_input: {command: git push}, expect: soft_block}
            - {tool_name: Bash, tool_input: {command: git push}, expect: allow, advance: 60}
            - {tool_name: Bash, tool_input: {command: git push}, expect: soft_block}
            - {tool_name: Bash, tool_input: {command: git push}, expect: soft_block, advance: 61}
        - name: a second test starts from a fresh session
          events:
            - {tool_name: Bash, tool_input: {command: git push}, expect: warning}
        """,
    )
    run = run_behavior_tests(folder)
    assert [r.passed for r in run.results] == [True, True]
    assert [e.got for e in run.results[0].events] == [
        "warning",
        "soft_block",
        "allow",
        "soft_block",
        "soft_block",
    ]


def test_a_retry_after_the_window_is_not_an_override(tmp_path: Path) -> None:
    folder = _catalog(
        tmp_path,
        """\
        - name: sixty-one seconds is too late
          events:
            - {tool_name: Bash, tool_input: {command: git push}, expect: warning}
            - {tool_name: Bash, tool_input: {command: git push}, expect: soft_block}
            - {tool_name: Bash, tool_input: {command: git push}, expect: allow, advance: 61}
        """,
    )
    run = run_behavior_tests(folder)
    assert run.failed == 1
    assert run.results[0].events[-1].got == "soft_block"


def test_coverage_names_the_trigger_and_the_outcome_no_test_reached(tmp_path: Path) -> None:
    folder = _catalog(
        tmp_path,
        """\
        - name: one push
          events:
            - {tool_name: Bash, tool_input: {command: git push}, expect: warning}
        """,
    )
    project = Project(tmp_path)
    data = project.json("test", str(folder))
    assert data["ok"] is True
    (cover,) = data["coverage"]
    assert (cover["triggers_fired"], cover["triggers"]) == (1, 2)
    # trigger 0 was found true only, trigger 1 false only
    assert (cover["condition_outcomes"], cover["condition_outcomes_possible"]) == (2, 4)
    detail = cover["detail"]
    assert detail[0]["conditions"][0]["true"] == 1 and detail[0]["conditions"][0]["false"] == 0
    assert detail[1]["fired"] == 0 and detail[1]["selected"] == 1
    text = project.run("test", str(folder)).stdout
    assert "push-rule trigger 1 PreToolUse[Bash] evaluate: never fired" in text
    gap = 'condition 0 command regex_match "^git push": never false'
    assert f"push-rule trigger 0 PreToolUse[Bash] evaluate {gap}" in text
    assert "triggers 1/2 fired (50 %), outcomes 2/4 (50 %)" in text


def test_a_behavior_the_catalog_leaves_off_is_still_tested(tmp_path: Path) -> None:
    rule = _with_tests(
        PUSH_RULE,
        """\
        - name: it still warns
          events:
            - {tool_name: Bash, tool_input: {command: git push}, expect: warning}
        """,
    )
    folder = write_catalog(tmp_path / "c", {"push-rule": rule}, enabled={"push-rule": False})
    run = run_behavior_tests(folder)
    assert run.passed == 1 and run.coverage[0].enabled is False
    assert "push-rule (off)  1" in Project(tmp_path).run("test", str(folder)).stdout


def test_files_are_written_into_the_project_folder_the_events_run_in(tmp_path: Path) -> None:
    rule = behavior_yaml(
        "size-rule",
        triggers=(
            "    - event: PreToolUse\n      matcher: Read\n      conditions:\n"
            "        - {field: facts.file_bytes, operator: gt, value: 999}\n"
        ),
    )
    text = _with_tests(
        rule,
        """\
        - name: filler and text
          files:
            sub/big.txt: {bytes: 1000}
            small.txt: "hello\\n"
          events:
            - {tool_name: Read, tool_input: {file_path: sub/big.txt}, expect: warning}
            - {tool_name: Read, tool_input: {file_path: small.txt}, expect: allow}
            - {tool_name: Read, tool_input: {file_path: big.txt}, cwd: sub, expect: warning}
        """,
    )
    folder = write_catalog(tmp_path / "c", {"size-rule": text})
    run = run_behavior_tests(folder)
    assert run.failed == 0, run.to_dict()


def test_a_single_behavior_file_is_a_catalog_of_one(tmp_path: Path) -> None:
    folder = _catalog(
        tmp_path,
        """\
        - name: one push
          events:
            - {tool_name: Bash, tool_input: {command: git push}, expect: warning}
        """,
    )
    run = run_behavior_tests(folder / "push-rule" / "behavior.yaml")
    assert (run.passed, run.failed) == (1, 0)


@pytest.mark.parametrize(
    ("tests", "expected"),
    [
        (
            "- name: x\n  events:\n    - {tool_name: Bash, expect: blocked}\n",
            "tests[0].events[0].expect: unknown outcome 'blocked': expected one of allow, nudge,"
            " warning, soft_block, hard_block",
        ),
        (
            "- name: x\n  events:\n    - {tool_name: Bash, expcet: allow}\n",
            "tests[0].events[0].expcet: unknown key 'expcet'; did you mean 'expect'?",
        ),
        (
            "- name: x\n  events:\n    - {tool_name: Bash, session_id: s1, expect: allow}\n",
            "tests[0].events[0].session_id: a test runs in a fresh session of its own",
        ),
        (
            "- name: x\n  events:\n    - {tool_name: Bash, expect: allow, advance: -1}\n",
            "tests[0].events[0].advance: expected seconds >= 0, got the number -1",
        ),
        (
            "- name: x\n  events:\n    - {hook_event_name: PreToolUse, expect: allow}\n",
            "tests[0].events[0].tool_name: required field missing (a PreToolUse names its tool)",
        ),
        (
            "- name: x\n  events:\n"
            "    - {hook_event_name: PreToolUs, tool_name: B, expect: allow}\n",
            "tests[0].events[0].hook_event_name: unknown event 'PreToolUs'; did you mean",
        ),
        ("- name: x\n  events: []\n", "tests[0].events: a test needs at least one event"),
        (
            "- name: x\n  files: {../up.txt: x}\n  events:\n"
            "    - {tool_name: Bash, expect: allow}\n",
            "tests[0].files.../up.txt: '../up.txt': a path inside the test's project folder",
        ),
        (
            "- name: x\n  evnts: []\n",
            "tests[0].evnts: unknown key 'evnts'; did you mean 'events'?",
        ),
        (
            "- {name: x, events: [{tool_name: Bash, expect: allow}]}\n"
            "- {name: x, events: [{tool_name: Bash, expect: allow}]}\n",
            "tests[1].name: duplicate test name 'x' (also tests[0])",
        ),
    ],
)
def test_bad_tests_fail_to_load_with_a_path_addressed_error(
    tmp_path: Path, tests: str, expected: str
) -> None:
    folder = write_catalog(tmp_path / "c", {"push-rule": PUSH_RULE + "tests:\n" + tests})
    with pytest.raises(CatalogError) as caught:
        load_catalog(folder)
    shown = [str(issue) for issue in caught.value.issues]
    assert any(expected in line for line in shown), shown
    file = os.path.join(str(folder), "push-rule", "behavior.yaml")
    assert all(line.startswith(file + ":") or "behavior.yaml:" in line for line in shown)
    out = Project(tmp_path).run("validate", str(folder), check=1).stdout
    assert expected in out


def test_a_broken_catalog_exits_1_with_its_errors(tmp_path: Path) -> None:
    folder = write_catalog(
        tmp_path / "c",
        {"push-rule": PUSH_RULE + "tests:\n- name: x\n  events: [{tool_name: B}]\n"},
    )
    result = Project(tmp_path).run("test", str(folder), check=1)
    assert "tests[0].events[0].expect: required field missing (allow, nudge," in result.stderr


def test_tests_survive_copy_catalog_and_the_copy_passes(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.run("init", "--copy-catalog", "--no-worker")
    copied = project.root / "behaviors"
    text = (copied / "search-first" / "behavior.yaml").read_text(encoding="utf-8")
    assert "\ntests:\n" in text
    project.run("off", "objection-format")  # a round-trip edit of index.yaml
    data = json.loads(project.run("test", "--json").stdout)  # the project's catalog
    assert data["catalog"] == str(copied)
    assert data["ok"] is True and data["failed"] == 0 and data["passed"] >= 30


def test_a_singular_test_key_is_a_near_miss(tmp_path: Path) -> None:
    text = PUSH_RULE + "test:\n  - {name: x, events: [{tool_name: Bash, expect: allow}]}\n"
    folder = write_catalog(tmp_path / "c", {"push-rule": text})
    with pytest.raises(CatalogError) as caught:
        load_catalog(folder)
    assert "test: unknown key 'test'; did you mean 'tests'?" in str(caught.value)


def test_a_check_flag_is_covered_when_it_finds_its_flag_present_and_absent(
    tmp_path: Path,
) -> None:
    rule = behavior_yaml(
        "flag-rule",
        triggers=(
            "    - {event: PreToolUse, matcher: Read, action: set_flag, flag: looked}\n"
            "    - {event: PreToolUse, matcher: Write, action: check_flag, flag: looked,\n"
            "       on_present: consume, on_absent: violate}\n"
        ),
    )
    only_absent = """\
        - name: a write with no look
          events:
            - {tool_name: Write, tool_input: {file_path: a}, expect: warning}
        """
    folder = write_catalog(tmp_path / "c", {"flag-rule": _with_tests(rule, only_absent)})
    (cover,) = run_behavior_tests(folder).coverage
    assert cover.triggers[1].flag == (0, 1) and cover.outcomes == (1, 2)
    assert cover.gaps() == [
        "flag-rule trigger 0 PreToolUse[Read] set_flag(looked): no event selected it",
        "flag-rule trigger 1 PreToolUse[Write] check_flag(looked): never found its flag present",
    ]
    both = (
        only_absent.rstrip(" ")
        + """\
        - name: a look, then a write
          events:
            - {tool_name: Read, tool_input: {file_path: a}, expect: allow}
            - {tool_name: Write, tool_input: {file_path: a}, expect: allow}
        """
    )
    folder = write_catalog(tmp_path / "d", {"flag-rule": _with_tests(rule, both)})
    (cover,) = run_behavior_tests(folder).coverage
    assert cover.triggers[1].flag == (1, 1) and cover.outcomes == (2, 2) and cover.gaps() == []
