"""``forge-policy suggest [--apply]`` through the real process: an audit log made by real hook
calls and overrides, the suggestions it supports with their evidence, one applied, and the
next hook call showing that it took effect."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import behavior_yaml
from hookrun import SCRIPT, Project, rule

CLIMB = behavior_yaml(
    "climber",
    default_level="nudge",
    triggers="    - event: PreToolUse\n      matcher: Bash\n      conditions:\n"
    "        - {field: command, operator: contains, value: climb-me}\n",
    escalation="    escalation:\n      - {after: 2, level: soft_block}\n"
    "      - {after: 8, level: hard_block}\n",
)
CATALOG = {
    "softy": rule("softy", "soft_block", "soft-me"),
    "climber": CLIMB,
    "quiet": rule("quiet", "warning", "quiet-me"),
}
CLUSTERED = "echo soft-me  now"  # blocked and retried in every session, spaces and all


def forge(project: Project, *args: str, check: int | None = 0) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(SCRIPT), *args],
        capture_output=True,
        text=True,
        env=project.env,
        cwd=project.dir,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert "Traceback" not in result.stderr, result.stderr
    if check is not None:
        assert result.returncode == check, (result.stdout, result.stderr)
    return result


def listed(project: Project, *args: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(forge(project, "suggest", "--json", *args).stdout)[
        "suggestions"
    ]
    return found


def denied(answer: dict[str, Any] | None) -> bool:
    return answer is not None and answer.get("hookSpecificOutput", {}).get(
        "permissionDecision"
    ) in ("deny", "ask")


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """Three sessions: the same softy call blocked and let through again in each (by a retry
    twice, once by the user's ``override --call``); climber blocked four times in two sessions
    and overridden twice; quiet never triggered."""
    project = Project(tmp_path_factory.mktemp("suggest"), CATALOG)
    for n in range(3):
        project.session = f"sess-{n}"
        first, _ = project.run(project.bash(CLUSTERED))
        assert denied(first)
        if n == 2:
            call = project.call_ids[-1]
            forge(project, "override", "softy", "--session", project.session, "--call", call,
                  "--reason", "the build needs it")  # fmt: skip
        again, _ = project.run(project.bash(CLUSTERED))
        assert not denied(again)  # let through by the override
    for n in range(2):
        project.session = f"sess-{n}"
        for command in ("climb-me 1", "climb-me 2", "climb-me 2", "climb-me 3"):
            project.run(project.bash(command))
    return project


def clone(source: Project, base: Path) -> Project:
    """A copy of ``source`` (catalog, layers, audit log, state) to change freely."""
    copy = Project(base, CATALOG, floor=None)
    shutil.copytree(source.root, copy.root, dirs_exist_ok=True)
    return copy


def records(project: Project) -> list[dict[str, Any]]:
    log = project.root / "audit" / "overrides.log"
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_each_suggestion_comes_with_its_evidence(logged: Project) -> None:
    found = listed(logged)
    assert [(s["number"], s["kind"], s["behavior"]) for s in found] == [
        (1, "demote", "softy"),
        (2, "raise-threshold", "climber"),
        (3, "exception", "softy"),
        (4, "disable", "quiet"),
        (5, "ladder", "climber"),
    ]
    demote, raised, exception, disable, ladder = found
    assert demote["change"] == {"behaviors": {"softy": {"level": "warning"}}}
    assert demote["evidence"]["blocks"] == 3 and demote["evidence"]["overrides"] == 3
    assert demote["evidence"]["band"] == "ineffective"
    # a typical session overrode climber once: each blocking rung one later
    assert raised["change"] == {
        "behaviors": {
            "climber": {
                "escalation": [
                    {"after": 3, "level": "soft_block"},
                    {"after": 9, "level": "hard_block"},
                ]
            }
        }
    }
    assert raised["evidence"]["override_rate"] == 0.5 and raised["evidence"]["sessions"] == 2
    # the exception: exactly the clustered command, the members it covers, where they are
    rule_ = exception["change"]["exceptions"][0]
    assert rule_["behavior"] == "softy" and rule_["match"] == {"command": "echo soft-me now"}
    evidence = exception["evidence"]
    assert evidence["covers"] == [{"command": CLUSTERED, "blocks": 3}]
    assert (evidence["blocks"], evidence["overrides"], evidence["sessions"]) == (3, 3, 3)
    assert evidence["mechanisms"] == {"explicit": 1, "retry": 2}
    by_seq = {r["seq"]: r for r in records(logged)}
    for ref in evidence["records"]:
        assert by_seq[ref]["behavior_id"] == "softy"
        assert by_seq[ref]["kind"] in ("block", "override")
    assert evidence["first"] <= evidence["last"]
    # never fired: N is the sessions of the log
    sessions = {r["session_id"] for r in records(logged) if r.get("session_id")}
    assert disable["evidence"]["sessions"] == len(sessions) == 3
    assert disable["change"] == {"behaviors": {"quiet": {"enabled": False}}}
    assert ladder["change"] is None and ladder["apply"] is None
    assert ladder["evidence"]["highest_count"] == 3
    assert "hard_block from 8 never reached" in ladder["title"]
    assert len({s["key"] for s in found}) == 5


#: The runtime caches derived from the catalog and the settings: any command that loads them may
#: write them again, e.g. once the files they were taken from are two seconds old (a cache taken
#: sooner proves nothing: ``forge_policy.catalog.cache._settled``), so they are not the project's.
DERIVED = ("catalog-cache", "settings-cache", "last-good-")


def project_files(project: Project) -> dict[str, int]:
    """Each file of the project but the derived caches, with its mtime."""
    return {
        str(p.relative_to(project.dir)): p.stat().st_mtime_ns
        for p in project.dir.rglob("*")
        if p.is_file() and not p.name.startswith(DERIVED)
    }


def test_the_listing_reads_only_and_is_the_same_twice(logged: Project) -> None:
    before = project_files(logged)
    assert ".forge/runtime/state.json" in before and ".forge/audit/overrides.log" in before
    first = forge(logged, "suggest").stdout
    assert forge(logged, "suggest").stdout == first
    assert project_files(logged) == before
    exception = listed(logged)[2]
    assert f"apply: forge-policy suggest --apply 3:{exception['key']}" in first
    assert f"covers {CLUSTERED!r} (3 blocked)" in first
    assert "nothing was changed" in first
    keys = [(s["number"], s["key"]) for s in listed(logged)]
    assert [(s["number"], s["key"]) for s in listed(logged, "--since", "1d")] == keys
    assert listed(logged, "--since", "2099-01-01") == []


def test_the_applied_exception_lets_exactly_the_clustered_command_through(
    logged: Project, tmp_path: Path
) -> None:
    project = clone(logged, tmp_path)
    layer = project.root / "config.yaml"
    layer.write_text("# the team's settings\nfloor: off  # CI has its own\n")
    exception = listed(project)[2]
    applied = json.loads(
        forge(project, "suggest", "--json", "--apply", f"3:{exception['key']}").stdout
    )
    assert applied["changed"] is True and applied["applied"]["key"] == exception["key"]
    text = layer.read_text()
    assert text.startswith("# the team's settings\nfloor: off  # CI has its own\nexceptions:\n")
    assert "match: {command: echo soft-me now}" in text
    project.session = "sess-after"
    through, _ = project.run(project.bash("echo   soft-me now"))  # the same command
    assert not denied(through)
    chained, _ = project.run(project.bash("echo soft-me now; true"))  # another command
    assert denied(chained)
    kinds = [r["kind"] for r in records(project)]
    assert "exception" in kinds
    tuning = next(r for r in records(project) if r["kind"] == "tuning")
    assert tuning["suggestion"] == exception["key"] and tuning["action"] == "exception"
    assert tuning["change"] == exception["change"]
    assert tuning["evidence"]["overrides"] == 3
    assert kinds.index("tuning") < kinds.index("exception")
    # the calls it now lets through are no evidence against softy any more: no demote either
    assert "softy" not in {s["behavior"] for s in listed(project)}


def test_a_raised_threshold_blocks_later(logged: Project, tmp_path: Path) -> None:
    project = clone(logged, tmp_path)
    key = listed(project)[1]["key"]
    out = forge(project, "suggest", "--apply", key).stdout
    assert "now: climber: nudge, soft_block from 3, hard_block from 9" in out
    project.session = "sess-after"
    answers = [project.run(project.bash(f"climb-me {n}"))[0] for n in (1, 2, 3)]
    assert [denied(a) for a in answers] == [False, False, True]
    # the evidence before the tuning was acted on: what is left is the new sessions' ladder
    after = [s for s in listed(project) if s["behavior"] == "climber"]
    assert [s["kind"] for s in after] == ["ladder"]
    assert "hard_block from 9 never reached" in after[0]["title"]


def test_apply_refuses_a_number_that_now_means_another_change(
    logged: Project, tmp_path: Path
) -> None:
    project = clone(logged, tmp_path)
    before = listed(project)
    disable, ladder = before[3], before[4]
    project.session = "sess-3"
    project.run(project.bash("echo quiet-me"))  # quiet fires: its suggestion is gone
    result = forge(project, "suggest", "--apply", f"4:{disable['key']}", check=1)
    assert result.stderr == (
        f"forge-policy: suggestion 4 is now {ladder['key']} ({ladder['title']}), not "
        f"{disable['key']} (it is gone): the audit log changed since it was listed; run "
        "forge-policy suggest again\n"
    )
    note = forge(project, "suggest", "--apply", ladder["key"], check=1)
    assert "is a note: there is nothing to apply" in note.stderr
    assert (project.root / "config.yaml").read_text() == "floor: off\n"
    assert "tuning" not in {r["kind"] for r in records(project)}


def test_a_managed_lock_is_shown_and_never_applied(logged: Project, tmp_path: Path) -> None:
    project = clone(logged, tmp_path)
    managed = tmp_path / "managed"
    managed.mkdir()
    (managed / "config.yaml").write_text("behaviors:\n  softy: {locked: true}\n")
    project.env["FORGE_MANAGED_DIR"] = str(managed)
    found = listed(project)
    assert ("exception", "softy") not in {(s["kind"], s["behavior"]) for s in found}
    demote = next(s for s in found if s["behavior"] == "softy")
    assert demote["refused"].startswith(f"softy is locked by {managed / 'config.yaml'}:2")
    assert demote["apply"] is None
    result = forge(project, "suggest", "--apply", str(demote["number"]), check=1)
    assert "is not applied: softy is locked by" in result.stderr
    assert (project.root / "config.yaml").read_text() == "floor: off\n"


def test_a_broken_layer_is_never_written_over(logged: Project, tmp_path: Path) -> None:
    project = clone(logged, tmp_path)
    layer = project.root / "config.yaml"
    key = listed(project)[0]["key"]
    broken = "floor: off\nbehaviors:\n  softy: [oops\n"
    layer.write_text(broken)
    result = forge(project, "suggest", "--apply", key, check=1)
    assert f"the configuration does not load ({layer}:" in result.stderr
    assert layer.read_text() == broken
    assert "tuning" not in {r["kind"] for r in records(project)}


def test_a_corrupt_audit_line_is_named_by_file_and_line(logged: Project, tmp_path: Path) -> None:
    project = clone(logged, tmp_path)
    log = project.root / "audit" / "overrides.log"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text(lines[0] + "{not json\n" + "".join(lines[1:]))
    result = forge(project, "suggest", check=4)
    assert f"{log}:2: unreadable audit record" in result.stderr
    assert result.stdout == ""


def test_a_change_a_higher_layer_decides_is_not_written(logged: Project, tmp_path: Path) -> None:
    project = clone(logged, tmp_path)
    local = project.root / "config.local.yaml"
    local.write_text("behaviors:\n  softy: {level: soft_block}\n")
    key = listed(project)[0]["key"]
    result = forge(project, "suggest", "--apply", key, check=1)
    assert f"behaviors.softy.level is decided by {local}:2, a layer above the project's" in (
        result.stderr
    )
    assert (project.root / "config.yaml").read_text() == "floor: off\n"
