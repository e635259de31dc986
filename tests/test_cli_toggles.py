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


def test_off_and_on_for_the_project_keep_index_comments(project: Project) -> None:
    original = (BUILTIN_DIR / "index.yaml").read_text()
    out = project.run("off", "search-first").stdout
    index = project.root / "behaviors" / "index.yaml"
    assert out.splitlines() == [
        f"copied the built-in catalog to {project.root / 'behaviors'}: the project now uses "
        "that copy (edit it freely; upgrades of forge-policy no longer change it)",
        f"search-first is off for the project in {index}",
    ]
    edited = index.read_text()
    assert edited == original.replace(
        "  - id: search-first\n    enabled: true", "  - id: search-first\n    enabled: false"
    )
    assert "# On: dotforge switched it off for false positives." in edited
    rows = {r["id"]: r["enabled"] for r in project.json("list")["behaviors"]}
    assert rows["search-first"] is False
    assert project.hook(tool_event("Write", file_path="/p/a.py", content="x")) is None
    assert "(it already was)" in project.run("off", "search-first", "--project").stdout
    project.run("on", "search-first", "--project")
    assert index.read_text() == original


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


def test_strict_and_relaxed_write_the_index(project: Project) -> None:
    out = project.run("strict", "search-first").stdout
    assert "search-first: tuning strict in " in out
    index = project.root / "behaviors" / "index.yaml"
    assert "  - id: search-first\n    enabled: true\n    tuning: strict\n" in index.read_text()
    project.run("relaxed", "search-first")
    assert "    tuning: relaxed\n" in index.read_text()
    project.run("relaxed", "search-first", "--reset")
    assert index.read_text() == (BUILTIN_DIR / "index.yaml").read_text()
    project.run("strict", "nope", check=1)


def test_relaxed_never_blocks(project: Project) -> None:
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
