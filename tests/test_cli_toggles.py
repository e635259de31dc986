"""``forge-policy on|off`` (project and session scope) and ``strict|relaxed`` (project tuning)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import forge_policy as fp
from forge_policy.catalog.loader import BUILTIN_DIR
from forge_policy.catalog.tuning import set_tuning, tune
from forge_policy.levels import Level, Step, escalation_problems
from tests.cli_support import Project, decision_of, tool_event


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


LAYER_BEFORE = "# team settings: reviewed in PRs\nfloor: off  # CI has its own sandbox\n"


def test_off_and_on_write_the_project_layer_never_a_copy(project: Project) -> None:
    """Issue 25, defect 4: a one-line toggle forked the whole built-in catalog."""
    project.root.mkdir()
    layer = project.root / "config.yaml"
    layer.write_text(LAYER_BEFORE)
    out = project.run("off", "search-first").stdout
    assert out == f"search-first is off for the project in {layer}\n"
    assert not (project.root / "behaviors").exists()  # nothing copied
    assert layer.read_text() == LAYER_BEFORE + "behaviors:\n  search-first: {enabled: false}\n"
    assert project.json("list")["catalog"] == str(BUILTIN_DIR)  # upgrades keep reaching it
    records = (project.root / "audit" / "overrides.log").read_text().splitlines()
    record = json.loads(records[-1])
    assert (record["kind"], record["scope"], record["enabled"]) == ("bypass", "project", False)
    assert "(it already was)" in project.run("off", "search-first", "--project").stdout
    project.run("on", "search-first", "--project")
    assert layer.read_text() == LAYER_BEFORE  # back to the catalog's own setting
    assert not (project.root / "behaviors").exists()


def test_off_through_the_layer_stops_the_behavior_in_the_hook(project: Project) -> None:
    write = tool_event("Write", file_path="/p/a.py", content="x")
    assert project.hook(write) is not None  # search-first speaks before a search
    project.run("off", "search-first")
    rows = {r["id"]: r["enabled"] for r in project.json("list")["behaviors"]}
    assert rows["search-first"] is False
    assert project.hook(tool_event("Write", "s2", file_path="/p/a.py", content="x")) is None
    project.run("on", "search-first")
    assert project.hook(tool_event("Write", "s3", file_path="/p/a.py", content="x")) is not None


def test_toggles_keep_comments_and_other_entries_of_the_layer(project: Project) -> None:
    project.root.mkdir()
    layer = project.root / "config.yaml"
    text = (
        "profile: standard\n"
        "behaviors:\n"
        "  # noisy in this repository\n"
        "  token-budget:\n"
        "    enabled: false   # see #12\n"
        "exceptions: []\n"
    )
    layer.write_text(text)
    project.run("strict", "verify-before-done")
    project.run("off", "search-first")
    edited = layer.read_text()
    assert edited.startswith("profile: standard\nbehaviors:\n  # noisy in this repository\n")
    assert "    enabled: false   # see #12\n" in edited
    assert "  verify-before-done: {tuning: strict}\n" in edited
    assert "  search-first: {enabled: false}\n" in edited
    assert edited.endswith("exceptions: []\n")
    project.run("strict", "verify-before-done", "--reset")
    project.run("on", "search-first")
    assert layer.read_text() == text


def test_a_forked_project_keeps_editing_its_own_index(project: Project) -> None:
    """A project forked by an earlier version keeps working exactly as before."""
    from forge_policy.ops.init import copy_builtin_catalog

    project.root.mkdir()
    copy_builtin_catalog(project.root)
    index = project.root / "behaviors" / "index.yaml"
    original = index.read_text()
    out = project.run("off", "search-first").stdout
    assert out == f"search-first is off for the project in {index}\n"
    assert index.read_text() == original.replace(
        "  - id: search-first\n    enabled: true", "  - id: search-first\n    enabled: false"
    )
    assert "# On: dotforge switched it off for false positives." in index.read_text()
    assert not (project.root / "config.yaml").exists()
    assert project.hook(tool_event("Write", file_path="/p/a.py", content="x")) is None
    result = project.json("on", "search-first")
    assert result["target"] == "catalog" and result["file"] == str(index)
    assert index.read_text() == original


def test_toggles_print_json(project: Project) -> None:
    layer = project.root / "config.yaml"
    assert project.json("off", "search-first") == {
        "behavior": "search-first",
        "setting": "enabled",
        "value": False,
        "file": str(layer),
        "target": "layer",
        "changed": True,
        "effective": False,
        "overridden_by": None,
        "scope": "project",
    }
    assert project.json("off", "search-first")["changed"] is False
    strict = project.json("strict", "verify-before-done")
    assert (strict["setting"], strict["value"], strict["effective"]) == (
        "tuning",
        "strict",
        "strict",
    )
    reset = project.json("relaxed", "verify-before-done", "--reset")
    assert (reset["value"], reset["changed"], reset["effective"]) == (None, True, None)
    session = project.json("off", "search-first", "--session", "s1")
    assert session == {
        "behavior": "search-first",
        "setting": "enabled",
        "value": False,
        "scope": "session",
        "session": "s1",
        "changed": True,
    }


def test_unknown_ids_are_refused_with_close_matches(project: Project) -> None:
    for command in (("off",), ("on",), ("strict",), ("relaxed", "--reset")):
        result = project.run(*command, "serch-first", check=1)
        assert "unknown behavior 'serch-first' (did you mean 'search-first'?)" in result.stderr
        assert "Traceback" not in result.stderr
    result = project.run("off", "zzzz", check=1)
    assert "unknown behavior 'zzzz'; forge-policy list shows every id" in result.stderr
    assert not project.root.exists() or not (project.root / "config.yaml").exists()


def test_a_local_layer_that_still_decides_is_named(project: Project) -> None:
    project.root.mkdir()
    local = project.root / "config.local.yaml"
    local.write_text("behaviors:\n  search-first:\n    enabled: true\n")
    result = project.run("off", "search-first", check=1)
    assert f"is off for the project in {project.root / 'config.yaml'}" in result.stdout
    assert f"search-first is still on: {local}:3 decides it" in result.stderr


def test_a_broken_layer_is_refused_with_its_line(project: Project) -> None:
    project.root.mkdir()
    layer = project.root / "config.yaml"
    layer.write_text("floor: off\nbehaviors: [search-first]\n")
    result = project.run("off", "search-first", check=2)
    assert f"{layer}:2: behaviors: expected a mapping" in result.stderr
    assert "Traceback" not in result.stderr
    layer.write_text("floor: off\nbehaviors:\n  search-first: {enabled: false\n")
    result = project.run("off", "search-first", check=2)
    assert f"{layer}:" in result.stderr and "Traceback" not in result.stderr
    assert layer.read_text() == "floor: off\nbehaviors:\n  search-first: {enabled: false\n"


def test_off_for_a_session_is_stored_and_audited(project: Project) -> None:
    out = project.run("off", "search-first", "--session", "s1").stdout
    assert out == "search-first is off for session s1\n"
    session = project.json("status", "--session", "s1")["sessions"][0]
    assert session["disabled"] == ["search-first"]
    assert session["behaviors"]["search-first"]["enabled"] is False
    assert session["behaviors"]["search-first"]["session_disabled"] is True
    records = (project.root / "audit" / "overrides.log").read_text().splitlines()
    record = json.loads(records[0])
    assert (record["kind"], record["scope"], record["enabled"]) == ("bypass", "session", False)
    assert not (project.root / "behaviors").exists()  # the project catalog is untouched
    project.run("on", "search-first", "--session", "s1")
    assert project.json("status", "--session", "s1")["sessions"][0]["disabled"] == []
    err = project.run("on", "plan-before-code", "--session", "s1", check=1).stderr
    assert "switch it on with: forge-policy on plan-before-code --project" in err


def test_off_for_a_session_is_honoured(project: Project) -> None:
    project.run("off", "search-first", "--session", "s1")
    for _ in range(5):
        assert project.hook(tool_event("Write", file_path="/p/a.py", content="x")) is None
    assert project.hook(tool_event("Write", "s2", file_path="/p/a.py", content="x")) is not None


def test_strict_and_relaxed_write_the_layer(project: Project) -> None:
    out = project.run("strict", "verify-before-done").stdout
    layer = project.root / "config.yaml"
    assert out.splitlines() == [
        f"verify-before-done: tuning strict in {layer}",
        "  level: silent (then 1: warning, 2: soft_block)",
    ]
    assert layer.read_text() == "behaviors:\n  verify-before-done: {tuning: strict}\n"
    project.run("relaxed", "verify-before-done")
    assert layer.read_text() == "behaviors:\n  verify-before-done: {tuning: relaxed}\n"
    project.run("relaxed", "verify-before-done", "--reset")
    assert not layer.exists()  # nothing left to say: no file is made for nothing
    assert not (project.root / "behaviors").exists()
    project.run("strict", "nope", check=1)
    err = project.run("relaxed", "protect-governance", check=1).stderr
    assert "bypass: never: it cannot be relaxed" in err


def test_relaxed_never_blocks(project: Project) -> None:
    project.set_floor()  # floor: off, so that an allowed call is answered, not rewritten
    project.run("relaxed", "no-destructive-git")
    assert decision_of(project.hook(tool_event("Bash", command="git branch -D feature"))) is None


def test_tune_strict_halves_thresholds() -> None:
    spec = fp.builtin_catalog()["verify-before-done"].spec
    strict = tune(spec, "strict")
    assert strict["escalation"] == [[1, "warning"], [2, "soft_block"]]
    assert strict["tuning"] == "strict"
    _assert_valid(strict)


def test_tune_relaxed_caps_at_warning() -> None:
    spec = fp.builtin_catalog()["no-destructive-git"].spec
    relaxed = tune(spec, "relaxed")
    assert (relaxed["default_level"], relaxed["level_cap"]) == ("warning", "warning")
    _assert_valid(relaxed)
    with pytest.raises(ValueError, match="bypass: never: it cannot be relaxed"):
        tune({**spec, "bypass": "never"}, "relaxed")


def _assert_valid(spec: dict[str, object]) -> None:
    steps = [Step(a, Level.parse(lv)) for a, lv in spec["escalation"]]  # type: ignore[attr-defined]
    assert escalation_problems(Level.parse(str(spec["default_level"])), steps) == []


def test_set_tuning_on_a_bare_id_entry(tmp_path: Path) -> None:
    (tmp_path / "index.yaml").write_text(
        'schema_version: "1"\nbehaviors:\n  - a-rule  # keep me\n  - b-rule\n'
    )
    assert set_tuning(tmp_path, "b-rule", "strict") is True
    assert set_tuning(tmp_path, "b-rule", "strict") is False
    text = (tmp_path / "index.yaml").read_text()
    assert "  - a-rule  # keep me\n" in text
    assert "  - id: b-rule\n    tuning: strict\n" in text


EXCEPTIONS = """\
floor: off
exceptions:
  - behavior: risky-commands
    match: {command: "npm install left-pad"}
    until: 2099-12-31
    reason: vendored until the fork lands
  - {behavior: search-first, match: {path: docs/}, until: 2020-01-01, reason: docs sprint}
"""


def test_status_lists_exceptions_before_they_expire(project: Project) -> None:
    project.root.mkdir()
    layer = project.root / "config.yaml"
    layer.write_text(EXCEPTIONS)
    assert project.hook(tool_event("Bash", command="npm install left-pad")) is None  # used
    out = project.run("status").stdout
    assert "exceptions: 1 active, 1 expired (behavior, match, until, reason, where, uses)" in out
    lines = out.splitlines()
    start = lines.index(
        "exceptions: 1 active, 1 expired (behavior, match, until, reason, where, uses)"
    )
    expired, active = lines[start + 1], lines[start + 2]  # soonest to expire first
    assert expired == (
        f"  search-first  path: {project.path}/docs/  EXPIRED 2020-01-01 (does nothing; remove "
        "it or extend "
        f"'until')  docs sprint  {layer}:7  used 0 times"
    )
    assert active.startswith("  risky-commands  command: npm install left-pad  until 2099-12-31 (")
    assert active.endswith(f"days left)  vendored until the fork lands  {layer}:3  used 1 time")
    rows = project.json("status")["exceptions"]
    assert [(r["behavior"], r["expired"], r["used"]) for r in rows] == [
        ("search-first", True, 0),
        ("risky-commands", False, 1),
    ]
    assert rows[1]["match"] == {"command": "npm install left-pad"}
    assert rows[1]["origin"] == f"{layer}:3" and rows[1]["last_used"]


def test_a_managed_lock_refuses_loosening_and_allows_tightening(tmp_path: Path) -> None:
    managed = tmp_path / "managed"
    managed.mkdir()
    (managed / "config.yaml").write_text(
        "behaviors:\n  verify-before-done: {locked: true}\n  search-first: {locked: true}\n"
    )
    project = Project(tmp_path / "p", FORGE_MANAGED_DIR=str(managed))
    project.path.mkdir()
    err = project.run("off", "search-first", check=1).stderr
    assert f"search-first is locked by {managed / 'config.yaml'}:3" in err
    assert "the project cannot loosen it (off); nothing was changed" in err
    err = project.run("relaxed", "verify-before-done", check=1).stderr
    assert "the project cannot loosen it (tuning relaxed)" in err
    assert not (project.root / "config.yaml").exists()
    assert not (project.root / "audit").exists()  # nothing recorded for a refused switch
    project.run("strict", "verify-before-done")  # tightening stays possible
    assert (project.root / "config.yaml").read_text() == (
        "behaviors:\n  verify-before-done: {tuning: strict}\n"
    )
