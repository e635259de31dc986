"""End to end: the git rules through the real ``forge-policy hook`` executable with Claude Code
payloads and the built-in catalog (``tests/hookrun.py`` drives the subprocess)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hookrun import Project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A project with no .forge/behaviors: the built-in catalog applies."""
    p = Project(tmp_path, catalog={})
    p.env["HOME"] = str(tmp_path / "home")
    return p


def verdict(out: dict[str, Any] | None) -> tuple[str, str]:
    specific = (out or {}).get("hookSpecificOutput", {})
    return specific.get("permissionDecision", ""), specific.get("permissionDecisionReason", "")


def test_a_discard_reached_through_sh_c_is_refused_by_name(project: Project) -> None:
    out, _ = project.run(project.bash("sh -c 'git -C . --no-pager checkout HEAD src/app.py'"))
    decision, reason = verdict(out)
    assert decision == "deny"
    assert reason.startswith("[no-destructive-git] Refused")
    assert "(as git reads it: git checkout HEAD -- src/app.py)" in reason
    assert "This block cannot be overridden." in reason
    assert project.counter("no-destructive-git") == 1


def test_mentions_and_lease_pushes_pass(project: Project) -> None:
    for command in (
        'git commit -m "Refuse git reset --hard and git push --force"',
        "grep -n 'git checkout -- .' NOTES.md; echo 'git stash clear'",
        "git push --force-with-lease --force-if-includes origin topic",
    ):
        out, _ = project.run(project.bash(command))
        assert verdict(out) == ("", ""), command
    assert project.counter("no-destructive-git") == 0
