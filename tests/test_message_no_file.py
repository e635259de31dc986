"""A block message never quotes a file (issue 23): the hook's reason fills ``{facts.NAME}`` by
the rule ``forge-policy explain`` uses, so a call that feeds a file to a shell (``sh < .env``)
is refused without the file's lines in the deny reason or in anything the hook records, while
an ordinary call keeps its readable ``Read as:`` line. Through the real ``forge-policy hook``
executable and the built-in catalog."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hookrun import Project

from forge_policy.templates import NOT_SHOWN

PRIVATE = "PRIVATEMARK launch codes zebra"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    p = Project(tmp_path, catalog={})  # no .forge/behaviors: the built-in catalog applies
    p.env["HOME"] = str(tmp_path / "home")
    (p.dir / ".env").write_text(f"echo {PRIVATE}\nrm -rf /\n")
    (p.dir / "notes.txt").write_text(f"rm -rf /\n# {PRIVATE}\necho {PRIVATE}\n")
    return p


def verdict(out: dict[str, Any] | None) -> tuple[str, str]:
    specific = (out or {}).get("hookSpecificOutput", {})
    return specific.get("permissionDecision", ""), specific.get("permissionDecisionReason", "")


def recorded(project: Project) -> str:
    """Everything the hook wrote under FORGE_ROOT (audit log, session state)."""
    files = [f for f in project.root.rglob("*") if f.is_file()]
    return "\n".join(f.read_bytes().decode("utf-8", "replace") for f in files)


@pytest.mark.parametrize(
    "command",
    ["sh < .env; rm -rf /", "cat .env | sh; rm -rf ~", "bash < notes.txt", "bash < ./notes.txt"],
)
def test_a_file_fed_to_a_shell_is_refused_without_its_text(project: Project, command: str) -> None:
    out, stderr = project.run(project.bash(command))
    decision, reason = verdict(out)
    assert decision == "deny", (out, stderr)
    assert reason.startswith("[dangerous-commands]"), reason
    for word in PRIVATE.split():
        assert word not in reason, reason
        assert word not in recorded(project)
        assert word not in stderr
    assert NOT_SHOWN in reason and reason.count(NOT_SHOWN) == 1, reason


@pytest.mark.parametrize(
    ("command", "read_as"),
    [
        ("rm -rf /", "Read as: rm -r -f /"),
        ("D=/; rm -rf $D", "Read as: rm -r -f /"),
        ("echo / | xargs rm -rf", "rm -r -f / reached through xargs"),
        ("awk 'BEGIN{system(\"rm -rf ~\")}'", "reached through awk code"),
    ],
)
def test_an_ordinary_call_keeps_its_readable_message(
    project: Project, command: str, read_as: str
) -> None:
    decision, reason = verdict(project.run(project.bash(command))[0])
    assert decision == "deny" and read_as in reason, reason
    assert NOT_SHOWN not in reason
