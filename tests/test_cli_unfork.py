"""``forge-policy config unfork``: a catalog forked by an earlier on/off/strict/relaxed turned
back into an overlay of ``.forge/config.yaml`` (issue 25, item 4; SPEC §10)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge_policy.catalog.loader import BUILTIN_DIR
from forge_policy.ops.init import copy_builtin_catalog
from tests.cli_support import SOFT_RULE, Project, tool_event


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = Project(tmp_path)
    project.set_floor()
    return project


def fork(project: Project) -> Path:
    """The built-in catalog copied as earlier versions did, then toggled and tuned there."""
    copy_builtin_catalog(project.root)
    folder = project.root / "behaviors"
    project.run("off", "search-first")  # edits the fork's index.yaml, as before
    project.run("strict", "risky-commands")
    verify = folder / "verify-before-done" / "behavior.yaml"
    verify.write_text(
        verify.read_text().replace(
            "      - after: 3\n        level: soft_block\n",
            "      - after: 4\n        level: soft_block\n",
        )
    )
    risky = folder / "risky-commands" / "behavior.yaml"
    risky.write_text(
        risky.read_text().replace("default_level: soft_block", "default_level: warning")
    )
    search = folder / "search-first" / "behavior.yaml"
    search.write_text(search.read_text().replace("Look before you write:", "Look first:"))
    return folder


def test_the_dry_run_proposes_the_overlay_and_changes_nothing(project: Project) -> None:
    folder = fork(project)
    before = sorted(str(p) for p in folder.rglob("*"))
    out = project.run("config", "unfork").stdout
    assert "fork: .forge/behaviors compared with the built-in catalog" in out
    assert "  search-first: enabled false\n" in out
    assert "  verify-before-done: escalation [{after: 1, level: nudge}, " in out
    assert "  risky-commands: level warning, tuning strict\n" in out
    assert "  search-first: wording differs (hint): the built-in's current text will apply" in out
    assert (
        "proposed .forge/config.yaml:\n"
        "  behaviors:\n"
        "    search-first: {enabled: false}\n"
        "    verify-before-done: {escalation: [{after: 1, level: nudge}, "
        "{after: 2, level: warning}, {after: 4, level: soft_block}]}\n"
        "    risky-commands: {level: warning, tuning: strict}\n"
    ) in out
    assert out.endswith(
        "dry run: nothing was changed; apply with: forge-policy config unfork --apply\n"
    )
    assert sorted(str(p) for p in folder.rglob("*")) == before
    assert (project.root / "config.yaml").read_text() == "floor: off\n"
    data = project.json("config", "unfork")
    assert data["applied"] is False and data["own"] == []
    assert data["overlay"]["search-first"] == {"enabled": False}
    assert data["overlay"]["verify-before-done"]["escalation"][-1] == {
        "after": 4,
        "level": "soft_block",
    }


def test_apply_writes_the_overlay_moves_the_fork_and_the_hook_follows(project: Project) -> None:
    folder = fork(project)
    write = tool_event("Write", file_path="/p/a.py", content="x")
    assert project.hook(write) is None  # search-first is off in the fork
    out = project.run("config", "unfork", "--apply").stdout
    moved = sorted(project.root.glob("behaviors.forked-*"))
    assert len(moved) == 1 and not folder.exists()
    assert (moved[0] / "index.yaml").is_file()  # kept, never deleted
    assert "wrote 3 behavior settings to .forge/config.yaml" in out
    assert f"moved .forge/behaviors to .forge/{moved[0].name}" in out
    assert "to commit: git add .forge/config.yaml && git rm -r -q --cached .forge/behaviors" in out
    layer = (project.root / "config.yaml").read_text()
    assert layer.startswith("floor: off\nbehaviors:\n  search-first: {enabled: false}\n")
    assert "  risky-commands: {level: warning, tuning: strict}\n" in layer
    # the built-in catalog governs again (its upgrades reach the project), under the overlay
    listing = project.json("list")
    assert listing["catalog"] == str(BUILTIN_DIR)
    rows = {r["id"]: r for r in listing["behaviors"]}
    assert rows["search-first"]["enabled"] is False
    assert project.hook(tool_event("Write", "s2", file_path="/p/a.py", content="x")) is None
    described = project.json("describe", "verify-before-done")
    assert described["escalation"][-1] == [4, "soft_block"]
    log = (project.root / "audit" / "overrides.log").read_text().splitlines()
    record = [r for r in map(json.loads, log) if r["kind"] != "seen"][-1]  # seen: the hook call
    assert (record["kind"], record["code"]) == ("diagnostic", "catalog_unforked")
    project.run("config", "unfork", check=1)  # nothing left to unfork


def test_rules_of_its_own_are_named_and_keep_the_fork(project: Project) -> None:
    folder = fork(project)
    (folder / "no-rm").mkdir()
    (folder / "no-rm" / "behavior.yaml").write_text(SOFT_RULE)
    index = folder / "index.yaml"
    index.write_text(index.read_text() + "  - id: no-rm\n")
    agent = folder / "dangerous-commands" / "behavior.yaml"
    agent.write_text(agent.read_text().replace("'^(?:root|home)\\b'", "'^(?:root|home|srv)\\b'"))
    out = project.run("config", "unfork").stdout
    assert "kept as your own behavior (no overlay can express it; not unforkable):" in out
    assert "  no-rm: not in the built-in catalog: your own behavior" in out
    assert "  dangerous-commands: its rules differ from the built-in's (triggers)" in out
    assert "forge-policy config unfork --apply --force" in out
    err = project.run("config", "unfork", "--apply", check=1).stderr
    assert "the fork holds rules no overlay can express (dangerous-commands, no-rm)" in err
    assert folder.is_dir() and (project.root / "config.yaml").read_text() == "floor: off\n"
    data = project.json("config", "unfork")
    assert data["own"] == ["dangerous-commands", "no-rm"]
    project.run("config", "unfork", "--apply", "--force")
    assert not folder.exists()
    assert "no-rm" not in {r["id"] for r in project.json("list")["behaviors"]}


def test_a_behavior_missing_from_the_fork_is_proposed_off(project: Project) -> None:
    copy_builtin_catalog(project.root)
    index = project.root / "behaviors" / "index.yaml"
    text = index.read_text()
    start = text.index("  - id: token-budget")
    end = text.index("  - id:", start + 1)
    index.write_text(text[:start] + text[end:])
    data = project.json("config", "unfork")
    [finding] = [f for f in data["findings"] if f["behavior"] == "token-budget"]
    assert finding["kind"] == "missing" and finding["overlay"] == {"enabled": False}
    assert "delete this entry to receive it" in finding["detail"]


def test_an_unchanged_fork_unforks_to_an_empty_overlay(project: Project) -> None:
    copy_builtin_catalog(project.root)
    out = project.run("config", "unfork", "--apply").stdout
    assert "no setting differs from the built-in catalog: the overlay is empty" in out
    assert "wrote 0 behavior settings" in out
    assert (project.root / "config.yaml").read_text() == "floor: off\n"


def test_nothing_to_unfork(project: Project) -> None:
    err = project.run("config", "unfork", check=1).stderr
    assert "nothing to unfork" in err and "Traceback" not in err
    err = project.run("config", "unfork", "--force", check=1).stderr
    assert "--force only means something with --apply" in err
