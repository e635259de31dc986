"""End to end: the command rules through the real ``forge-policy hook`` executable — a delete
reached through xargs is refused with the command as understood; one inside the project passes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hookrun import Project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    p = Project(tmp_path, catalog={})  # no .forge/behaviors: the built-in catalog applies
    p.env["HOME"] = str(tmp_path / "home")
    return p


def verdict(out: dict[str, Any] | None) -> tuple[str, str]:
    specific = (out or {}).get("hookSpecificOutput", {})
    return specific.get("permissionDecision", ""), specific.get("permissionDecisionReason", "")


def test_a_delete_of_root_reached_through_xargs_is_refused_and_named(project: Project) -> None:
    decision, reason = verdict(project.run(project.bash("echo / | xargs rm -rf"))[0])
    assert decision == "deny" and reason.startswith("[dangerous-commands] Refused")
    assert "rm -r -f / reached through xargs" in reason


def test_a_delete_outside_the_project_asks_and_one_inside_passes(project: Project) -> None:
    decision, reason = verdict(project.run(project.bash("find /etc -exec rm -rf {} +"))[0])
    assert decision == "ask" and "rm -r -f /etc reached through find -exec" in reason
    assert verdict(project.run(project.bash("rm -rf build/ && rm -rf ./dist"))[0]) == ("", "")
