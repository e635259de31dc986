"""Each CLI's call read the way the CLI executes it (issue 23's fourth cause): every file of a
Codex ``apply_patch`` (a second file, a ``*** Move to:`` target, a header with leading spaces),
``apply_patch`` run from a shell command, the working folder of a Gemini CLI or Antigravity
shell call, and Gemini's ``read_many_files`` globs expanded before the secret-file check.

Table-driven through each adapter and the built-in catalog, each route in at least three
spellings beside the harmless twin that must still pass; then the same routes through the real
``forge-policy hook --harness X`` process.
"""

from __future__ import annotations

import json
import re
import shlex
import uuid
from pathlib import Path
from typing import Any

import pytest
from hookrun import Project

import forge_policy as fp
from forge_policy.commands.patches import PatchError, applied, parse
from forge_policy.facts._runtime import BudgetedProvider, undetermined
from forge_policy.facts.files import _files_under
from forge_policy.model import Event
from forge_policy.testing.harnesses import (
    antigravity_event,
    antigravity_payload,
    codex_event,
    codex_payload,
    copilot_event,
    cursor_event,
    gemini_event,
    gemini_payload,
)

CATALOG = fp.builtin_catalog()
GOVERNANCE = ("protect-governance", "hard_block")
SHIELD = ("agent-shield", "hard_block")
ASK = ("agent-shield-ask", "soft_block")
DANGER = ("dangerous-commands", "hard_block")


def patch(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"


def heredoc(text: str) -> str:
    return f"apply_patch <<'EOF'\n{text}EOF\n"


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home with a project in it: a governance folder, sources, a secret or two."""
    home = tmp_path / "home"
    project = home / "project"
    for path, text in {
        ".forge/behaviors/index.yaml": "behaviors: []\n",
        ".forge/audit/overrides.log": "",
        "src/a.py": "x = 1\n",
        "src/b.py": "y = 2\n",
        ".env": "TOKEN=1\n",
        "keys/id_rsa": "KEY\n",
    }.items():
        file = project / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text)
    monkeypatch.setenv("HOME", str(home))
    return project


def blocked_by(event: Event) -> tuple[str, str] | None:
    decision = fp.Evaluator(CATALOG, profile="standard", clock=lambda: 1000.0).evaluate(event)
    b = decision.blocking
    return (b.behavior_id, b.level.label) if b is not None else None


# --- Codex apply_patch: every file, read by Codex's parser ------------------------------------

#: (case, patch text, expected block)
PATCHES = [
    (
        "second file",
        patch("*** Add File: src/c.py", "+z = 3", "*** Add File: .forge/behaviors/index.yaml",
              "+behaviors: []"),
        GOVERNANCE,
    ),
    (
        "update of a second file",
        patch("*** Update File: src/a.py", "@@", "-x = 1", "+x = 2",
              "*** Update File: .forge/behaviors/index.yaml", "@@", "-behaviors: []", "+x"),
        GOVERNANCE,
    ),
    (
        "Move to target",
        patch("*** Update File: src/a.py", "*** Move to: .claude/settings.json", "@@", "-x = 1",
              "+{}"),
        GOVERNANCE,
    ),
    (
        "header with leading spaces",
        patch("*** Add File: src/c.py", "+z = 3", "   *** Delete File: .forge/audit/overrides.log"),
        GOVERNANCE,
    ),
    (
        "tab-indented header",
        patch("*** Add File: src/c.py", "+z", "\t*** Add File: .forge/behaviors/x.yaml", "+y"),
        GOVERNANCE,
    ),
    (
        "heredoc-wrapped patch text (Codex's lenient mode)",
        "<<'EOF'\n" + patch("*** Add File: src/c.py", "+z", "*** Add File: .forge/x", "+y")
        + "EOF\n",
        GOVERNANCE,
    ),
    (
        "private key as the second file",
        patch("*** Add File: src/c.py", "+z", "*** Add File: keys/id_rsa", "+k"),
        SHIELD,
    ),
    (
        ".env as the second file",
        patch("*** Update File: src/a.py", "@@", "-x = 1", "+x = 2", "*** Delete File: .env"),
        ASK,
    ),
    (
        "unparseable text that starts a patch (fail closed)",
        "*** Begin Patch\n*** Frobnicate File: src/a.py\n*** End Patch\n",
        GOVERNANCE,
    ),
]  # fmt: skip

#: (case, patch text): the harmless twins
HARMLESS_PATCHES = [
    ("two source files", patch("*** Add File: src/c.py", "+z = 3", "*** Update File: src/a.py",
                               "@@", "-x = 1", "+x = 2")),
    ("a move inside src", patch("*** Update File: src/a.py", "*** Move to: src/d.py", "@@",
                                "-x = 1", "+x = 2")),
    ("a deleted source file", patch("*** Delete File: src/b.py")),
    ("a patch whose text mentions .forge", patch("*** Add File: docs/notes.md",
                                                 "+edit .forge/behaviors by hand")),
]  # fmt: skip


@pytest.mark.parametrize(("case", "text", "expected"), PATCHES, ids=[c[0] for c in PATCHES])
def test_every_file_of_a_codex_patch_is_judged(
    world: Path, case: str, text: str, expected: tuple[str, str]
) -> None:
    assert blocked_by(codex_event("apply_patch", cwd=str(world), command=text)) == expected


@pytest.mark.parametrize(("case", "text"), HARMLESS_PATCHES, ids=[c[0] for c in HARMLESS_PATCHES])
def test_a_patch_of_ordinary_files_passes(world: Path, case: str, text: str) -> None:
    assert blocked_by(codex_event("apply_patch", cwd=str(world), command=text)) is None


def test_the_adapter_names_every_file_and_keeps_the_patch_out_of_command(world: Path) -> None:
    text = PATCHES[2][1]
    event = codex_event("apply_patch", cwd=str(world), command=text)
    assert event.tool_name == "Edit"
    assert event.tool_input["paths"] == ["src/a.py", ".claude/settings.json"]
    assert event.tool_input["patch"] == text and "command" not in event.tool_input


SHELL_PATCH = patch("*** Add File: src/c.py", "+z", "*** Add File: .forge/behaviors/x.yaml", "+y")
HARMLESS_SHELL_PATCH = patch("*** Add File: src/c.py", "+z", "*** Update File: src/a.py", "@@",
                             "-x = 1", "+x = 2")  # fmt: skip

#: (case, command): apply_patch run from a shell command
SHELL_PATCHES = [
    ("heredoc", heredoc(SHELL_PATCH)),
    ("heredoc in bash -lc", "bash -lc " + shlex.quote(heredoc(SHELL_PATCH))),
    ("cd into .forge first",
     "cd .forge && " + heredoc(patch("*** Add File: behaviors/x.yaml", "+y"))),
    ("the patch as an argument", "applypatch " + shlex.quote(SHELL_PATCH)),
    ("piped from echo", "echo " + shlex.quote(SHELL_PATCH) + " | apply_patch"),
    ("codex's hidden flag", "codex --codex-run-as-apply-patch " + shlex.quote(SHELL_PATCH)),
    ("a patch this reading cannot see (fail closed)", "apply_patch < /nonexistent/fix.patch"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "command"), SHELL_PATCHES, ids=[c[0] for c in SHELL_PATCHES])
def test_apply_patch_in_a_shell_command_is_read_as_its_writes(
    world: Path, case: str, command: str
) -> None:
    assert blocked_by(codex_event("Bash", cwd=str(world), command=command)) == GOVERNANCE
    # the same command through Claude Code's Bash (Codex puts apply_patch on the PATH)
    bash = Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": command},
                 cwd=str(world))  # fmt: skip
    assert blocked_by(bash) == GOVERNANCE


@pytest.mark.parametrize(
    "command",
    [heredoc(HARMLESS_SHELL_PATCH), "bash -lc " + shlex.quote(heredoc(HARMLESS_SHELL_PATCH)),
     "echo apply_patch is Codex's patch tool"],
)  # fmt: skip
def test_apply_patch_of_ordinary_files_in_a_shell_passes(world: Path, command: str) -> None:
    assert blocked_by(codex_event("Bash", cwd=str(world), command=command)) is None


def test_the_parser_reads_as_codex_does() -> None:
    # a Move to with leading spaces is no move in this parser (Codex tests it raw), but it is
    # still a path the readers check (mentioned)
    text = patch("*** Update File: a", "  *** Move to: .forge/x", "@@", "-1", "+2")
    parsed = parse(text)
    assert [(c.kind, c.path, c.move_to) for c in parsed.changes] == [("update", "a", "")]
    assert parsed.paths() == ["a", ".forge/x"]
    with pytest.raises(PatchError):
        parse(patch("*** Update File: a"))  # an update with no chunk
    with pytest.raises(PatchError):
        parse("*** Begin Patch\n*** Add File: a\n+x\n")  # no end marker
    assert parse("\n  " + patch("*** Delete File: b") + "\n\n").changes[0].path == "b"
    assert applied(["apply_patch", "--preserve-crlf", "P"], None) == (True, "P")
    assert applied(["git", "apply"], "P") == (False, None)


# --- the working folder of a shell call -------------------------------------------------------


def _gemini_shell(world: Path, command: str, **args: str) -> Event:
    return gemini_event("run_shell_command", cwd=str(world), command=command, **args)


def _agy_shell(world: Path, command: str, **args: str) -> Event:
    return antigravity_event("run_command", cwd=str(world), CommandLine=command, **args)


def test_gemini_dir_path_is_where_the_command_runs(world: Path) -> None:
    forge = str(world / ".forge")
    for event in (
        _gemini_shell(world, "rm -rf behaviors audit", dir_path=".forge"),
        _gemini_shell(world, "rm -rf behaviors audit", directory=".forge"),  # older builds
        _gemini_shell(world, "echo '' > behaviors/index.yaml", dir_path=forge),
        _gemini_shell(world, "mv audit /tmp/gone", dir_path="./.forge/"),
    ):
        assert blocked_by(event) == GOVERNANCE, event.tool_input
    assert blocked_by(_gemini_shell(world, "rm -rf behaviors audit")) is None  # not in .forge
    assert blocked_by(_gemini_shell(world, "ls", dir_path="src")) is None
    assert blocked_by(_gemini_shell(world, "cat a.py b.py", dir_path="src")) is None


def test_antigravity_cwd_is_where_the_command_runs(world: Path) -> None:
    home = str(world.parent)
    for event in (
        _agy_shell(world, "rm -rf ./*", Cwd=home),
        _agy_shell(world, "rm -rf ./*", Cwd="~"),
        _agy_shell(world, "rm -rf *", Cwd=home + "/"),
    ):
        assert blocked_by(event) == DANGER, event.tool_input
    # as through Claude Code's Bash
    cd_home = Event("PreToolUse", "s", tool_name="Bash", cwd=str(world),
                    tool_input={"command": "cd ~ && rm -rf ./*"})  # fmt: skip
    assert blocked_by(cd_home) == DANGER
    forge = str(world / ".forge")
    assert blocked_by(_agy_shell(world, "rm -rf behaviors audit", Cwd=forge)) == GOVERNANCE
    assert blocked_by(_agy_shell(world, "ls", Cwd=str(world / "src"))) is None
    assert blocked_by(_agy_shell(world, "cat a.py", Cwd="src")) is None


def test_a_shell_working_folder_in_any_adapter_is_where_the_command_runs(world: Path) -> None:
    d = str(world)
    cursor = cursor_event("Shell", cwd=d, command="rm -rf behaviors", working_directory=".forge")
    assert blocked_by(cursor) == GOVERNANCE
    codex = codex_event("Bash", cwd=d, command="rm -rf behaviors", workdir=".forge")
    assert blocked_by(codex) == GOVERNANCE  # should Codex ever send its workdir
    assert blocked_by(cursor_event("Shell", cwd=d, command="ls", working_directory="src")) is None


def test_folder_level_searches_of_every_adapter_name_their_folder(world: Path) -> None:
    d = str(world)
    for event in (
        cursor_event("Glob", cwd=d, glob_pattern="**/.env*", target_directory=d),
        antigravity_event("find_by_name", cwd=d, SearchDirectory=d, Pattern=".env*"),
        gemini_event("glob", cwd=d, pattern="**/.env*", dir_path=d),
        gemini_event("grep_search", cwd=d, pattern="TOKEN", dir_path=d),
        copilot_event("grep", cwd=d, pattern="TOKEN", path=d),
    ):
        assert blocked_by(event) == ASK, (event.harness, event.tool_input)
    assert blocked_by(cursor_event("Glob", cwd=d, glob_pattern="**/*.py")) is None
    assert blocked_by(gemini_event("grep_search", cwd=d, pattern="x = 1", dir_path="src")) is None


# --- Gemini's read_many_files -----------------------------------------------------------------


def _many(world: Path, **args: Any) -> Event:
    return gemini_event("read_many_files", cwd=str(world), **args)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"include": ["**/.env*"]}, ASK),
        ({"include": ["*.ENV"]}, ASK),  # Gemini's glob ignores case
        ({"include": ["**/*"], "exclude": ["*.py"]}, SHIELD),  # keys/id_rsa is read too
        ({"include": ["**"], "exclude": ["*"]}, SHIELD),  # * stays in one folder
        ({"include": ["keys"]}, SHIELD),  # a folder: all of it
        ({"include": ["**/id_*"], "useDefaultExcludes": False}, SHIELD),
        ({"paths": ["src/**", ".e*"]}, ASK),  # older builds: paths
    ],
    ids=str,
)
def test_read_many_files_globs_are_expanded_before_the_secret_check(
    world: Path, args: dict[str, Any], expected: tuple[str, str]
) -> None:
    assert blocked_by(_many(world, **args)) == expected


@pytest.mark.parametrize(
    "args",
    [
        {"include": ["**/*.py"]},
        {"include": ["src"]},
        {"include": ["**/*"], "exclude": [".env", "keys/**"]},
    ],
    ids=str,
)
def test_read_many_files_over_ordinary_files_passes(world: Path, args: dict[str, Any]) -> None:
    assert blocked_by(_many(world, **args)) is None


def test_a_read_glob_past_the_walk_bound_is_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(6):
        (tmp_path / f"f{n}.txt").write_text("x")

    def walk(event: Event) -> list[str]:
        return _files_under(str(tmp_path), 3, complete=True)

    value, notes = BudgetedProvider("walk", walk, 1000, False).evaluate(Event("Stop", "s"))
    assert undetermined(value) and "stopped after 3 entries" in notes[-1]
    # through read_many_files: a glob that could name a secret is refused past the bound; one
    # that names only *.py files (no secret family) is not
    monkeypatch.setattr(_files_under, "__defaults__", (3,))
    (tmp_path / ".env").write_text("T=1\n")
    for pattern in ("**/.env*", "**", "*"):
        many = gemini_event("read_many_files", cwd=str(tmp_path), include=[pattern])
        assert blocked_by(many) is not None, pattern
    many = gemini_event("read_many_files", cwd=str(tmp_path), include=["**/*.py"])
    assert blocked_by(many) is None


# --- through the real hook process ------------------------------------------------------------


@pytest.fixture
def project(world: Path) -> Project:
    p = Project(world.parent.parent, catalog={})  # the built-in catalog, its root elsewhere
    p.dir = world
    p.env.update(CLAUDE_PROJECT_DIR=str(world), HOME=str(world.parent))
    return p


def answer(project: Project, harness: str, payload: dict[str, Any], *event: str) -> str:
    """The decision, each call in a session of its own (so that no counter escalates)."""
    payload = {**payload, "session_id": f"s-{uuid.uuid4()}", "conversationId": "c"}
    if "conversationId" in payload and harness != "antigravity":
        del payload["conversationId"]
    out, _ = project.run(payload, "--harness", harness, *event)
    assert "could not evaluate" not in json.dumps(out)  # decided, not refused on an error
    out = out or {}
    specific = out.get("hookSpecificOutput", {})
    decision = str(specific.get("permissionDecision") or out.get("decision") or "allow")
    named = re.search(r"\[([a-z-]+)\]", json.dumps(out))  # the behavior that blocks
    return f"{decision} {named.group(1)}" if decision != "allow" and named else decision


def test_through_the_codex_hook(project: Project) -> None:
    d = str(project.dir)
    for text in (PATCHES[0][1], PATCHES[2][1], PATCHES[3][1]):
        payload = codex_payload("apply_patch", cwd=d, command=text)
        assert answer(project, "codex", payload) == "deny protect-governance"
    for _case, command in SHELL_PATCHES[:3]:
        payload = codex_payload("Bash", cwd=d, command=command)
        assert answer(project, "codex", payload) == "deny protect-governance"
    harmless = codex_payload("apply_patch", cwd=d, command=HARMLESS_PATCHES[0][1])
    assert answer(project, "codex", harmless) == "allow"
    shell = codex_payload("Bash", cwd=d, command=heredoc(HARMLESS_SHELL_PATCH))
    assert answer(project, "codex", shell) == "allow"


def test_through_the_gemini_hook(project: Project) -> None:
    d = str(project.dir)

    def gemini(tool: str, **args: Any) -> str:
        return answer(project, "gemini", gemini_payload(tool, cwd=d, **args))

    governance = "deny protect-governance"
    assert gemini("run_shell_command", command="rm -rf behaviors audit", dir_path=".forge") == (
        governance
    )
    assert gemini("run_shell_command", command="rm -rf audit", directory=".forge") == governance
    assert gemini("run_shell_command", command="ls", dir_path="src") == "allow"
    # an ask is a deny in Gemini CLI
    assert gemini("read_many_files", include=["**/.env*"]) == "deny agent-shield-ask"
    assert gemini("read_many_files", include=["**/*"], exclude=["*.py"]) == "deny agent-shield"
    assert gemini("read_many_files", include=["**/*.py"]) == "allow"


def test_through_the_antigravity_hook(project: Project) -> None:
    d, home = str(project.dir), str(project.dir.parent)

    def agy(command: str, folder: str) -> str:
        payload = antigravity_payload("run_command", cwd=d, CommandLine=command, Cwd=folder)
        return answer(project, "antigravity", payload, "--event", "PreToolUse")

    assert agy("rm -rf ./*", home) == "deny dangerous-commands"
    assert agy("rm -rf ./*", "~") == "deny dangerous-commands"
    assert agy("rm -rf behaviors audit", str(project.dir / ".forge")) == "deny protect-governance"
    assert agy("ls", str(project.dir / "src")) == "ask"  # no opinion: Antigravity's own review
