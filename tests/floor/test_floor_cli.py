"""``forge-policy floor [--json]`` through the real executable: the three lists with reasons, the
floor document, and one clear line (file:line, non-zero exit, no traceback) when the catalog or
the project config is broken."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge_policy.floor.model import Floor
from tests.cli_support import Project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    folder = tmp_path / "project"
    (folder / ".forge").mkdir(parents=True)
    (folder / ".env").write_text("TOKEN=x\n")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    return Project(folder, HOME=str(home), FORGE_WORKER="off")


def test_floor_lists_the_three_lists_with_reasons(project: Project) -> None:
    out = project.run("floor").stdout
    lines = out.splitlines()
    assert lines[0].startswith(f"floor of {project.path} (floor: harness")
    for title in ("writable (writes go only here):", "never written:", "never read (nor written):"):
        assert any(line.startswith(title) for line in lines), title
    rows = {tuple(line.split()) for line in lines if line.startswith("  ")}
    assert (str(project.path), "project") in rows
    assert (f"{project.path}/.forge", "protect-governance") in rows
    assert (f"{project.path}/.env", "agent-shield-ask") in rows
    assert (f"{project.env['HOME']}/.ssh", "agent-shield") in rows


def test_floor_json_is_the_floor_document(project: Project) -> None:
    document = project.json("floor")
    floor = Floor.from_dict(document)
    assert floor.project == str(project.path)
    assert not floor.writes_allowed(f"{project.path}/.forge/config.yaml")
    assert not floor.reads_allowed(f"{project.path}/.env")
    assert floor.writes_allowed(f"{project.path}/src/app.py")
    assert json.loads(floor.to_json()) == document


def test_a_broken_catalog_is_one_line_naming_the_file(project: Project, tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "index.yaml").write_text('schema_version: "1"\nbehaviors: [\n')
    project.env["FORGE_BEHAVIORS_DIR"] = str(catalog)
    result = project.run("floor", "--json", check=1)
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert f"{catalog}/index.yaml:" in result.stderr and "Traceback" not in result.stderr


def test_a_bad_floor_setting_is_one_line_naming_file_and_line(project: Project) -> None:
    config = project.root / "config.yaml"
    config.write_text("profile: standard\nfloor: sometimes\n")
    result = project.run("floor", check=2)
    assert result.stderr.splitlines() == [
        f"forge-policy: {config}:2: floor: expected one of harness, own, off, got 'sometimes'"
    ]
