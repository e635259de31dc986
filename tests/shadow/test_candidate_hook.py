"""The candidate catalog through the real ``forge-policy hook`` process (in-process and through
the warm worker): it never changes an answer, keeps its own counters, records a ``shadow`` where
it differs, and a broken one leaves the decision as it is with one diagnostic."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import write_catalog
from tests.hookrun import CATALOG, ClientProject, Project, rule, stop_workers, worker_pids

#: the active catalog (hookrun's) with nudger blocking and warner escalating to a soft block
#: after two warnings: stricter
STRICTER = {
    **CATALOG,
    "nudger": rule("nudger", "soft_block", "nudge-me"),
    "warner": rule("warner", "warning", "warn-me").replace(
        "    default_level: warning",
        "    default_level: warning\n    escalation:\n      - {after: 2, level: soft_block}",
    ),
}
#: hardy only warns: looser
LOOSER = {**CATALOG, "hardy": rule("hardy", "warning", "hard-me")}
#: distinct calls: an identical one would be a retry, the candidate's own override
CALLS = ("nudge-me", "warn-me a", "warn-me b", "warn-me c", "hard-me", "ls")


def _projects(base: Path, candidate: dict[str, str] | None) -> tuple[Project, Project]:
    """A project with the candidate (written beside it, named in ``config.yaml`` relative to
    that file) and its twin without one, sharing the session id."""
    mine, twin = Project(base / "with"), Project(base / "without")
    twin.session = mine.session
    if candidate is not None:
        write_catalog(mine.dir / "next-catalog", candidate)
        (mine.root / "config.yaml").write_text("floor: off\ncandidate: ../next-catalog\n")
    for project in (mine, twin):
        project.env["FORGE_WORKER"] = "off"
    return mine, twin


def _shadows(project: Project) -> list[dict[str, object]]:
    return [r for r in project.audit() if r["kind"] == "shadow"]


def _answers(project: Project, words: tuple[str, ...]) -> list[object]:
    return [project.run(project.bash(f"echo {word}"))[0] for word in words]


@pytest.mark.parametrize("which", ["stricter", "looser"])
def test_the_answers_are_those_without_a_candidate(tmp_path: Path, which: str) -> None:
    mine, twin = _projects(tmp_path, STRICTER if which == "stricter" else LOOSER)
    calls = CALLS if which == "stricter" else ("warn-me a", "hard-me", "ls")
    assert _answers(mine, calls) == _answers(twin, calls)
    # the active counters are the twin's: the candidate counted in its own store
    assert mine.status().behaviors.keys() == twin.status().behaviors.keys()
    for behavior_id, row in twin.status().behaviors.items():
        assert mine.counter(behavior_id) == row.counter
    assert (mine.root / "runtime" / "candidate" / "state.json").exists()
    shadows = _shadows(mine)
    moves = [(s["input_summary"], s["direction"]) for s in shadows]
    if which == "stricter":
        # nudger blocks at once; warner's own ladder reaches soft_block at its second count
        assert moves == [
            ("Bash: echo nudge-me", "would_block"),
            ("Bash: echo warn-me b", "would_block"),
            ("Bash: echo warn-me c", "would_block"),
        ]
        warned = shadows[1:]
        assert [s["candidate"]["fired"][0]["counter"] for s in warned] == [2, 3]  # type: ignore[index]
        assert [s["active"]["fired"][0]["level"] for s in warned] == ["warning", "warning"]  # type: ignore[index]
    else:
        assert moves == [("Bash: echo hard-me", "would_unblock")]
        change = shadows[0]["changes"]
        assert change == [
            {
                "behavior_id": "hardy",
                "direction": "would_unblock",
                "before": "hard_block",
                "after": "warning",
                "counter": 1,
            }
        ]
    for record in shadows:
        assert record["session_id"] == mine.session and record["harness"] == "claude-code"
        assert record["catalog"] == str(mine.dir / "next-catalog")
    compared = mine.root / "runtime" / "candidate" / "compared"
    assert sum(p.stat().st_size for p in compared.iterdir()) == len(calls)  # the denominator
    assert not (twin.root / "runtime" / "candidate").exists()


def test_a_broken_candidate_leaves_the_decision_with_one_diagnostic(tmp_path: Path) -> None:
    mine, twin = _projects(tmp_path, None)
    (mine.root / "config.yaml").write_text("floor: off\ncandidate: ../broken\n")
    broken = mine.dir / "broken"
    broken.mkdir()
    (broken / "index.yaml").write_text("schema_version: '1'\nbehaviors: [{id: nope\n")
    words = ("hard-me", "hard-me again")
    answers = []
    for word in words:
        answer, stderr = mine.run(mine.bash(f"echo {word}"))
        answers.append(answer)
        assert (
            "forge-policy: candidate catalog" in stderr and "the active decision stands" in stderr
        )
        assert "broken/index.yaml:3:1: invalid YAML" in stderr  # file:line of the problem
    assert answers == _answers(twin, words)
    problems = [r for r in mine.audit() if r["kind"] == "diagnostic"]
    assert len(problems) == 1 and problems[0]["code"] == "candidate"  # once, not per call
    assert _shadows(mine) == []
    # a missing folder too, by FORGE_CANDIDATE_DIR (which wins over candidate:)
    answer, stderr = mine.run(mine.bash("echo hard-me"), FORGE_CANDIDATE_DIR="gone")
    assert answer == answers[0]
    assert f"candidate catalog {mine.dir / 'gone'}: does not load" in stderr


def test_config_origin_says_where_the_candidate_comes_from(tmp_path: Path) -> None:
    from tests.cli_support import Project as CliProject

    project = CliProject(tmp_path)
    project.root.mkdir()
    (project.root / "config.yaml").write_text("floor: off\ncandidate: ../next\n")
    shown = project.json("config", "--origin")
    assert shown["candidate"] == str(tmp_path / "next")
    assert shown["origins"]["candidate"] == f"{project.root / 'config.yaml'}:2"
    project.env["FORGE_CANDIDATE_DIR"] = "elsewhere/rules"
    shown = project.json("config", "--origin")
    assert shown["candidate"] == str(tmp_path / "elsewhere" / "rules")
    assert shown["origins"]["candidate"] == "FORGE_CANDIDATE_DIR"
    text = project.run("config", "--origin").stdout
    assert f"candidate: {tmp_path / 'elsewhere' / 'rules'}   (FORGE_CANDIDATE_DIR)" in text


# -- the warm worker ----------------------------------------------------------------------------


@pytest.fixture
def warm(tmp_path: Path) -> Iterator[ClientProject]:
    project = ClientProject(tmp_path)
    write_catalog(project.dir / "next-catalog", LOOSER)
    project.env["FORGE_CANDIDATE_DIR"] = "next-catalog"
    yield project
    stop_workers(project.root)
    assert worker_pids(project.root) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the worker needs Linux")
def test_the_warm_worker_compares_and_reloads_the_candidate(
    warm: ClientProject, tmp_path: Path
) -> None:
    cold = ClientProject(tmp_path / "cold")
    cold.session = warm.session
    cold.env["FORGE_WORKER"] = "off"
    first = warm.call(warm.bash("echo hard-me"))
    warm.wait_worker()
    second = warm.call(warm.bash("echo hard-me"))
    assert warm.requests() >= 1  # the second answer came from the worker
    assert first.stdout == second.stdout == cold.call(cold.bash("echo hard-me")).stdout
    assert b'"permissionDecision":"deny"' in second.stdout
    shadows = [r for r in warm.audit() if r["kind"] == "shadow"]
    assert [s["direction"] for s in shadows] == ["would_unblock", "would_unblock"]
    from forge_policy.cli.worker_cmds import ask

    health = ask(str(warm.root), b"status")
    assert isinstance(health, dict)
    assert health["candidate"] == str(warm.dir / "next-catalog")
    assert health["candidate_error"] is None and health["candidate_compared"] >= 1
    # the candidate's files change: the worker reloads it (hardy blocks again: no difference)
    write_catalog(warm.dir / "next-catalog", CATALOG)
    os.utime(warm.dir / "next-catalog" / "hardy" / "behavior.yaml", ns=(1, 1))
    third = warm.call(warm.bash("echo hard-me"))
    assert third.stdout == first.stdout
    assert len([r for r in warm.audit() if r["kind"] == "shadow"]) == 2
    health = ask(str(warm.root), b"status")
    assert isinstance(health, dict) and health["reloads"] >= 1


def test_shadow_records_are_json_lines_the_report_reads(tmp_path: Path) -> None:
    mine, _ = _projects(tmp_path, LOOSER)
    mine.run(mine.bash("echo hard-me"))
    from tests.cli_support import Project as CliProject

    cli = CliProject(mine.dir)
    cli.env = {**mine.env}
    data = json.loads(cli.run("shadow", "report", "--json").stdout)
    assert data["compared"] == 1 and data["differed"] == 1 and data["rate"] == 1.0
    assert data["behaviors"][0]["behavior_id"] == "hardy"
    assert data["behaviors"][0]["would_unblock"] == 1


@pytest.mark.parametrize("store", ["sqlite:", "memory"])
def test_the_candidate_has_its_own_store_whatever_the_active_one(
    tmp_path: Path, store: str
) -> None:
    mine, twin = _projects(tmp_path, LOOSER)
    mine.env["FORGE_STORE"] = twin.env["FORGE_STORE"] = store
    mine.env["FORGE_AUDIT"] = twin.env["FORGE_AUDIT"] = "file"
    assert _answers(mine, ("hard-me",)) == _answers(twin, ("hard-me",))
    assert [s["direction"] for s in _shadows(mine)] == ["would_unblock"]
    candidate = mine.root / "runtime" / "candidate"
    if store == "memory":  # nothing kept on disk, not even the tally
        assert not candidate.exists()
    else:
        assert (candidate / "state.db").exists() and (candidate / "compared").is_dir()
        assert not (candidate / "state.json").exists()
