"""The three built-in behaviors that misled in ordinary work (issue 11), end to end through the
real ``forge-policy hook`` and ``forge-policy`` processes with the built-in catalog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import Project as CliProject
from cli_support import decision_of, tool_event
from hookrun import Project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path, catalog={})  # no catalog written: the built-in one


def tool(project: Project, name: str, event: str = "PreToolUse", **tool_input: Any) -> Any:
    return project.payload(event, tool_name=name, tool_input=tool_input)


def said(answer: dict[str, Any] | None) -> str:
    return "" if answer is None else json.dumps(answer)


# --- search-first ------------------------------------------------------------------------------


def test_grep_read_edit_then_a_new_file_is_not_nudged(project: Project) -> None:
    src = project.dir / "src"
    src.mkdir()
    (src / "orders.py").write_text("def create_order(payload):\n    return payload\n")
    edit = {"old_string": "return payload", "new_string": "return dict(payload)"}
    for step in (
        tool(project, "Grep", pattern="def create_order", path=str(src)),
        tool(project, "Read", file_path=str(src / "orders.py")),
        tool(project, "Edit", file_path=str(src / "orders.py"), **edit),
        tool(project, "Write", file_path=str(src / "validation.py"), content="def v(): ...\n"),
        tool(project, "Edit", file_path=str(src / "orders.py"), **edit),
    ):
        assert project.run(step)[0] is None
    assert project.counter("search-first") == 0


def test_writes_nothing_looked_at_still_escalate_to_a_block(project: Project) -> None:
    project.run(tool(project, "Read", file_path=str(project.dir / "README.md")))
    answers = [
        project.run(tool(project, "Write", file_path=str(project.dir / f"lib/m{i}.py"), content=""))
        for i in range(5)
    ]
    assert "Look Before You Write: Write of a file no search or read covered" in said(answers[0][0])
    assert "[search-first] 3 writes this session" in said(answers[2][0])
    last = answers[4][0]
    assert last is not None and last["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert project.counter("search-first") == 5


# --- token-budget ------------------------------------------------------------------------------


def big_module(folder: Path) -> Path:
    """A 10,000-line module: ~90,000 tokens read whole, a few hundred in a 50-line slice."""
    path = folder / "generated.py"
    path.write_text(
        "".join(f"VALUE_{n:05d} = '{'x' * 20}'  # line {n:05d}\n" for n in range(10_000))
    )
    return path


def test_a_read_slice_is_estimated_by_its_lines(project: Project) -> None:
    path = big_module(project.dir)
    sliced = tool(project, "Read", file_path=str(path), offset=4_000, limit=50)
    assert project.run(sliced)[0] is None
    project.run({**sliced, "hook_event_name": "PostToolUse", "tool_response": {}})
    line = len("VALUE_00000 = 'xxxxxxxxxxxxxxxxxxxx'  # line 00000\n")
    assert project.status().totals == {"read_tokens": (50 * line + 2) // 4}
    whole = tool(project, "Read", file_path=str(path))  # Read returns its first 2,000 lines
    assert project.run(whole)[0] is None


def test_only_reads_that_ran_are_counted(project: Project) -> None:
    huge = project.dir / "dump.md"
    huge.write_text("y" * 240_000)  # one line of 60,000 tokens (code-like .md: bytes / 4)
    asked = tool(project, "Read", file_path=str(huge))
    for _ in range(3):  # asked about every time, refused every time: nothing is counted
        answer, _ = project.run(asked)
        assert answer is not None and answer["hookSpecificOutput"]["permissionDecision"] == "ask"
        assert "~60,000 tokens in this call" in said(answer)
    assert project.status().totals == {}
    project.run({**asked, "hook_event_name": "PostToolUse", "tool_response": {}})
    assert project.status().totals == {"read_tokens": 60_000}  # the user let it run once


# --- no-model-attribution ----------------------------------------------------------------------

ATTRIBUTED = "git commit -m 'feat: route Claude and Gemini requests'"


def test_off_no_model_attribution_works_for_the_project_and_is_audited(tmp_path: Path) -> None:
    cli = CliProject(tmp_path)
    commit = tool_event("Bash", command=ATTRIBUTED)
    assert decision_of(cli.hook(commit)) == "deny"
    out = cli.run("off", "no-model-attribution").stdout
    assert "no-model-attribution is off for the project" in out
    assert cli.hook(tool_event("Bash", command=ATTRIBUTED)) is None
    log = (cli.root / "audit" / "overrides.log").read_text().splitlines()
    [record] = [r for r in map(json.loads, log) if r["kind"] == "bypass"]
    assert (record["kind"], record["scope"], record["behavior_id"], record["enabled"]) == (
        "bypass", "project", "no-model-attribution", False
    )  # fmt: skip
    assert cli.run("audit", "--verify").returncode == 0
    cli.run("on", "no-model-attribution")
    assert decision_of(cli.hook(tool_event("Bash", command=ATTRIBUTED))) == "deny"


def test_the_agent_still_cannot_switch_it_off(tmp_path: Path) -> None:
    cli = CliProject(tmp_path)
    # not for a session, not through FORGE_DISABLE, not by running the CLI inside a tool call
    err = cli.run("off", "no-model-attribution", "--session", "s1", check=1).stderr
    assert "bypass: never" in err
    disabled = CliProject(tmp_path, FORGE_DISABLE="no-model-attribution")
    assert decision_of(disabled.hook(tool_event("Bash", command=ATTRIBUTED))) == "deny"
    agent = CliProject(tmp_path, CLAUDECODE="1")
    assert agent.run("off", "no-model-attribution", check=2).stderr.startswith("forge-policy: off")
    run_off = tool_event("Bash", command="forge-policy off no-model-attribution")
    answer = cli.hook(run_off)
    assert decision_of(answer) == "deny" and "protect-governance" in json.dumps(answer)
    assert not (cli.root / "behaviors").exists()  # nothing was switched off


def test_protect_governance_stays_on(tmp_path: Path) -> None:
    err = CliProject(tmp_path).run("off", "protect-governance", check=1).stderr
    assert "guards the governance files and commands" in err
