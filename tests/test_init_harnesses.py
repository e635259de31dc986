"""``forge-policy init --harness X``: each harness's own hook file, in the shape its docs give,
merged losslessly and idempotently; detection; broken files refused with nothing changed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from forge_policy.harness import registry
from forge_policy.ops.harness_config import SPECS
from forge_policy.ops.launcher import hook_env
from tests.cli_support import FORGE, Project

OTHERS = ["codex", "gemini", "cursor", "copilot", "antigravity"]


#: How each harness's committed command reaches the project's launcher (no machine path).
ROOTS = {
    "codex": '"$(git rev-parse --show-toplevel 2>/dev/null || pwd)"/',
    "gemini": '"$GEMINI_PROJECT_DIR"/',
    "cursor": "",
    "copilot": "",
    "antigravity": "",
}


def command(harness: str, event: str = "") -> str:
    launcher = f"{ROOTS[harness]}.forge/bin/forge-policy-hook"
    return f"{launcher} --harness {harness}" + (f" --event {event}" if event else "")


def group(handler: dict[str, Any], matcher: bool = True) -> dict[str, Any]:
    return {"matcher": "*", "hooks": [handler]} if matcher else {"hooks": [handler]}


def expected(harness: str) -> tuple[str, dict[str, Any]]:
    """The file each harness's documentation describes, with forge-policy's hook in it."""
    if harness == "codex":
        h = {"type": "command", "command": command("codex"), "timeout": 30}
        hooks = {e: [group(h)] for e in ("PreToolUse", "PostToolUse", "SessionStart")}
        hooks |= {e: [group(h, matcher=False)] for e in ("UserPromptSubmit", "Stop")}
        return ".codex/hooks.json", {"hooks": hooks}
    if harness == "gemini":
        h = {"type": "command", "command": command("gemini"), "timeout": 30000}
        h["name"] = "forge-policy"
        hooks = {e: [group(h)] for e in ("BeforeTool", "AfterTool")}
        hooks |= {e: [group(h, False)] for e in ("SessionStart", "BeforeAgent", "AfterAgent")}
        return ".gemini/settings.json", {"hooks": hooks}
    if harness == "cursor":
        h = {"type": "command", "command": command("cursor"), "timeout": 30, "failClosed": True}
        events = ("preToolUse", "postToolUse", "sessionStart", "beforeSubmitPrompt", "stop")
        return ".cursor/hooks.json", {"version": 1, "hooks": {e: [h] for e in events}}
    if harness == "copilot":
        events = ("preToolUse", "postToolUse", "sessionStart", "userPromptSubmitted", "agentStop")
        hooks = {
            e: [{"type": "command", "bash": command("copilot", e), "timeoutSec": 30, "cwd": "."}]
            for e in events
        }
        return ".github/hooks/forge-policy.json", {"version": 1, "hooks": hooks}
    assert harness == "antigravity"

    def h(e: str) -> dict[str, Any]:
        return {"type": "command", "command": command("antigravity", e), "timeout": 30}

    named = {e: [group(h(e))] for e in ("PreToolUse", "PostToolUse")}
    return ".agents/hooks.json", {"forge-policy": named}


def read(project: Project, relative: str) -> Any:
    return json.loads((project.path / relative).read_text())


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


@pytest.mark.parametrize("harness", OTHERS)
def test_a_fresh_file_has_the_documented_shape_and_a_rerun_changes_nothing(
    project: Project, harness: str
) -> None:
    relative, document = expected(harness)
    out = project.run("init", "--harness", harness).stdout
    assert f"created   {relative}: forge-policy hook on " in out
    assert read(project, relative) == document
    assert not (project.path / ".claude").exists()  # only the harness asked for
    before = (project.path / relative).read_bytes()
    assert project.run("init", "--harness", harness).stdout.endswith(
        "nothing to do: the project was already set up\n"
    )
    assert (project.path / relative).read_bytes() == before


THEIRS: dict[str, tuple[dict[str, Any], str]] = {
    # (an existing file of theirs, the event list holding their own hook)
    "codex": (
        {
            "description": "team hooks",
            "hooks": {"PreToolUse": [group({"type": "command", "command": "./audit.sh"})]},
        },
        "PreToolUse",
    ),
    "gemini": (
        {
            "theme": "GitHub",
            "hooksConfig": {"notifications": True},
            "hooks": {
                "disabled": ["old-hook"],
                "BeforeTool": [
                    {"matcher": "write_file", "hooks": [{"type": "command", "command": "lint"}]}
                ],
            },
        },
        "BeforeTool",
    ),
    "cursor": (
        {"version": 1, "hooks": {"stop": [{"command": "./notify.sh", "loop_limit": 3}]}},
        "stop",
    ),
    "copilot": (
        {
            "version": 1,
            "disableAllHooks": False,
            "hooks": {"preToolUse": [{"type": "command", "bash": "./check.sh", "cwd": "scripts"}]},
        },
        "preToolUse",
    ),
    "antigravity": (
        {"shell-audit": {"PreToolUse": [group({"command": "./audit-command.sh"})]}},
        "",
    ),
}


@pytest.mark.parametrize("harness", OTHERS)
def test_an_existing_file_keeps_everything_and_gains_the_hook(
    project: Project, harness: str
) -> None:
    relative, mine = expected(harness)
    theirs, event = THEIRS[harness]
    path = project.path / relative
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(theirs, indent=4))
    project.run("init", "--harness", harness)
    merged = read(project, relative)
    assert list(merged)[: len(theirs)] == list(theirs)  # key order kept
    for key, value in theirs.items():
        if key not in ("hooks",):
            assert merged[key] == (value if key != "forge-policy" else mine[key])
    container = "forge-policy" if harness == "antigravity" else "hooks"
    if event:  # their hook first, ours after it
        assert merged[container][event][0] == theirs["hooks"][event][0]
        assert merged[container][event][1:] == mine[container][event]
        for key, value in theirs["hooks"].items():
            if key != event:
                assert merged["hooks"][key] == value
    assert {e: merged[container][e][-1] for e in mine[container]} == {
        e: v[-1] for e, v in mine[container].items()
    }
    assert path.read_text().startswith('{\n    "')  # the file's own indent
    before = path.read_bytes()
    project.run("init", "--harness", harness)
    assert path.read_bytes() == before


def test_a_stale_hook_of_ours_is_updated_in_place_keeping_the_users_keys(
    project: Project,
) -> None:
    path = project.path / ".cursor" / "hooks.json"
    path.parent.mkdir()
    stale = {"command": "/old/venv/bin/forge-policy hook --harness cursor", "timeout": 5}
    path.write_text(json.dumps({"version": 1, "hooks": {"preToolUse": [stale, dict(stale)]}}))
    project.run("init", "--harness", "cursor")
    [only] = read(project, ".cursor/hooks.json")["hooks"]["preToolUse"]
    assert only == {
        "command": command("cursor"),
        "timeout": 5,
        "type": "command",
        "failClosed": True,
    }


@pytest.mark.parametrize(
    ("harness", "text", "where"),
    [
        ("codex", '{\n  "hooks": {,\n}\n', ".codex/hooks.json:2:13: not valid JSON"),
        ("gemini", '{\n  // mine\n  "hooks": {}\n}\n', ".gemini/settings.json:2:3: not valid JSON"),
        ("cursor", '{"version": 1, "hooks": {"stop": {}}}', "hooks.stop: expected a list"),
        ("copilot", "[]", ".github/hooks/forge-policy.json: expected a JSON object"),
        ("antigravity", '{"forge-policy": []}', "forge-policy: expected an object"),
    ],
)
def test_a_broken_file_is_refused_and_nothing_is_written(
    project: Project, harness: str, text: str, where: str
) -> None:
    relative, _ = expected(harness)
    path = project.path / relative
    path.parent.mkdir(parents=True)
    path.write_text(text)
    result = project.run("init", "--harness", "claude-code", "--harness", harness, check=1)
    assert result.stderr.startswith(f"forge-policy: {relative.split(':')[0]}")
    assert where in result.stderr and "nothing was changed" in result.stderr
    assert path.read_text() == text
    assert not (project.path / ".claude").exists() and not project.root.exists()


def test_comments_in_gemini_settings_are_named_as_the_reason(project: Project) -> None:
    path = project.path / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text('{\n  // mine\n  "hooks": {}\n}\n')
    assert "(comments cannot be kept by a rewrite)" in project.run("init", check=1).stderr


def test_init_detects_the_harnesses_the_project_uses(project: Project) -> None:
    (project.path / ".gemini").mkdir()
    (project.path / ".cursor").mkdir()
    out = project.run("init").stdout
    assert "created   .gemini/settings.json" in out and "created   .cursor/hooks.json" in out
    assert not (project.path / ".claude").exists()
    (project.path / ".claude").mkdir()
    out = project.run("init").stdout
    assert "created   .claude/settings.json" in out
    assert "unchanged .gemini/settings.json" in out and "unchanged .cursor/hooks.json" in out


def test_init_with_no_sign_of_any_harness_sets_up_claude_code(project: Project) -> None:
    out = project.run("init").stdout
    assert "created   .claude/settings.json" in out
    assert sorted(p.name for p in project.path.iterdir()) == [".claude", ".forge", ".gitignore"]


def test_an_unknown_harness_is_a_usage_error(project: Project) -> None:
    result = project.run("init", "--harness", "vim", check=2)
    assert "invalid choice: 'vim'" in result.stderr


def test_codex_config_toml_holding_our_hook_is_left_alone(project: Project) -> None:
    toml = project.path / ".codex" / "config.toml"
    toml.parent.mkdir()
    toml.write_text(
        '[[hooks.PreToolUse]]\nmatcher = "*"\n\n[[hooks.PreToolUse.hooks]]\n'
        f"type = \"command\"\ncommand = '{FORGE} hook --harness codex'\n"
    )
    out = project.run("init", "--harness", "codex").stdout
    assert "unchanged .codex/config.toml: forge-policy's hook is in its [hooks]" in out
    assert not (project.path / ".codex" / "hooks.json").exists()  # no second copy
    theirs = json.dumps(THEIRS["codex"][0])
    (project.path / ".codex" / "hooks.json").write_text(theirs)
    project.run("init", "--harness", "codex")
    assert (project.path / ".codex" / "hooks.json").read_text() == theirs  # nor beside theirs
    toml.write_text("[hooks\n")
    result = project.run("init", "--harness", "codex", check=1)
    assert result.stderr.startswith("forge-policy: .codex/config.toml: not valid TOML (")
    assert "line 1" in result.stderr


def test_codex_beside_other_toml_hooks_says_both_run(project: Project) -> None:
    toml = project.path / ".codex" / "config.toml"
    toml.parent.mkdir()
    toml.write_text('[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "x"\n')
    out = project.run("init").stdout  # detected through .codex
    assert "created   .codex/hooks.json" in out
    assert "note: Codex: .codex/config.toml has [hooks] too" in out


def test_harnesses_that_run_claude_hooks_too_warn_of_double_evaluation(
    project: Project,
) -> None:
    out = project.run("init", "--harness", "claude-code", "--harness", "copilot").stdout
    assert (
        "note: GitHub Copilot CLI also runs the hooks in .claude/settings.json: each call is "
        "evaluated twice; keep one (forge-policy's entries in .claude/settings.json or "
        ".github/hooks/forge-policy.json)\n"
    ) in out
    out = project.run("init", "--harness", "cursor").stdout
    assert (
        "note: Cursor also runs the hooks in .claude/settings.json when its third-party hooks "
        "setting is on: each call"
    ) in out
    assert "Copilot" not in out  # only the harnesses of this run


def test_the_plain_and_serve_forms_carry_the_harness(project: Project) -> None:
    project.run("init", "--harness", "gemini", "--no-worker")
    [[handler]] = [
        g["hooks"] for g in read(project, ".gemini/settings.json")["hooks"]["BeforeTool"]
    ]
    assert handler["command"] == command("gemini")  # the launcher runs the plain hook
    record = project.root / "runtime" / "hook-client"
    assert record.read_text() == f"{FORGE}\n"
    project.run("init", "--harness", "gemini", "--serve", "--http-only")
    [[handler]] = [
        g["hooks"] for g in read(project, ".gemini/settings.json")["hooks"]["BeforeTool"]
    ]
    assert handler["command"] == f"{command('gemini')} --via-serve"  # never http
    project.run("init", "--harness", "gemini", "--no-serve", "--local", "--no-worker")
    [[handler]] = [  # no local file: the portable command stays, with a note
        g["hooks"] for g in read(project, ".gemini/settings.json")["hooks"]["BeforeTool"]
    ]
    assert handler["command"] == command("gemini")


@pytest.mark.parametrize("harness", [*OTHERS, "claude-code"])
def test_every_registered_event_is_one_the_harness_sends(harness: str) -> None:
    """The hook file registers only events the harness has, and they carry the catalog events
    the Claude Code hook is registered for."""
    spec = SPECS[harness]
    events = registry.get(harness).events
    assert set(spec.events) <= set(events)
    assert spec.nested >= spec.matcher
    assert {events[e] for e in spec.events} <= set(SPECS["claude-code"].events)
    if harness != "antigravity":  # it sends no prompt event
        assert {events[e] for e in spec.events} == set(SPECS["claude-code"].events)


def test_the_readme_table_says_what_init_writes() -> None:
    """The setup table of docs/how-to/other-clis.md (the README's until issue 21)."""
    doc = Path(__file__).resolve().parent.parent / "docs" / "how-to" / "other-clis.md"
    readme = doc.read_text(encoding="utf-8")
    rows = {}
    for line in readme.split("## Set up other coding-agent CLIs", 1)[1].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[1].startswith("`"):
            rows[cells[0]] = cells
    assert len(rows) == len(SPECS)
    for harness, spec in SPECS.items():
        title = registry.get(harness).title
        [row] = [r for name, r in rows.items() if f"(`{harness}`)" in name or name == title]
        assert row[1].split()[0] == f"`{spec.path}`"
        events = "PreToolUse, PostToolUse, SessionStart, UserPromptSubmit, Stop"
        listed = events if row[2] == "the same five" else row[2]
        assert listed == ", ".join(spec.events)


DENIES = {  # where each harness reads a refusal, and the written command's payload for a call
    "codex": (("hookSpecificOutput", "permissionDecision"), "PreToolUse", "Bash", "command"),
    "gemini": (("decision",), "BeforeTool", "run_shell_command", "command"),
    "cursor": (("permission",), "preToolUse", "Shell", "command"),
    "copilot": (("permissionDecision",), "preToolUse", "bash", "command"),
    "antigravity": (("decision",), "PreToolUse", "run_command", "CommandLine"),
}


@pytest.mark.parametrize("harness", OTHERS)
def test_the_written_command_decides_that_harness_s_payloads(
    project: Project, harness: str
) -> None:
    """The command init writes, run as the harness runs it (a shell, the project folder), reads
    the harness's own payload: a force push is refused, a listing goes through."""
    from forge_policy.testing import harnesses

    keys, event, tool, field = DENIES[harness]
    project.run("init", "--harness", harness)
    relative, _ = expected(harness)
    document = read(project, relative)
    entries = document["forge-policy" if harness == "antigravity" else "hooks"][event]
    handler = entries[0]["hooks"][0] if "hooks" in entries[0] else entries[0]
    line = handler.get("command") or handler["bash"]
    make = getattr(harnesses, f"{harness}_payload")

    def run(command: str) -> Any:
        payload = make(tool, cwd=str(project.path), **{field: command})
        result = subprocess.run(
            line,
            shell=True,
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            cwd=project.path,
            # the harness's own variables (GEMINI_PROJECT_DIR …); the client decides in-process
            env={**project.env, **hook_env(harness, project.path), "FORGE_WORKER": "off"},
            timeout=30,
        )
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout) if result.stdout.strip() else {}

    answer = run("git push --force origin main")
    for key in keys:
        answer = answer[key]
    assert answer == "deny"
    allowed = run("ls -la")
    for key in keys:
        allowed = allowed.get(key, None) if isinstance(allowed, dict) else None
    assert allowed != "deny"
