"""``forge-policy init``: folders, .gitignore and a lossless, idempotent settings.json merge."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

import forge_policy as fp
from forge_policy.ops.init import client_command
from forge_policy.ops.settings_file import is_ours
from tests.cli_support import FORGE, Project

#: The interpreter of the forge-policy script (its shebang), which the CLI's init writes.
PYTHON = FORGE.read_text().splitlines()[0].removeprefix("#!")
CLIENT_PY = f"{fp.__path__[0]}/worker/launch.py"
#: Claude Code's entries are in exec form: ``command`` spawned with ``args``, no shell.
CLIENT = {"type": "command", "command": PYTHON, "args": ["-I", "-S", CLIENT_PY], "timeout": 30}
#: The portable command init writes into the committed settings file: the project's launcher,
#: by way of the placeholder Claude Code substitutes in an exec-form entry.
LAUNCHER = "${CLAUDE_PROJECT_DIR}/.forge/bin/forge-policy-hook"
LAUNCHED = {"type": "command", "command": LAUNCHER, "args": [], "timeout": 30}
#: The shell-form entry init wrote before (3dcbf21): run through the user's shell.
SHELL_FORM = {"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.forge/bin/forge-policy-hook'}
#: What PreToolUse's entry adds: a hook that cannot start or times out refuses the call.
CLOSED = {"onFailure": "block"}


def closed(handler: dict[str, Any], event: str) -> dict[str, Any]:
    """``handler`` as init writes it on ``event`` (``onFailure`` on PreToolUse only)."""
    return handler | CLOSED if event == "PreToolUse" else handler


EVENTS = ["PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit", "Stop"]
THEIRS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test)"], "deny": []},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}],
            }
        ],
        "Notification": [{"matcher": "", "hooks": [{"type": "command", "command": "bell"}]}],
    },
    "env": {"A": "1"},
}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def _settings(project: Project) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project.path / ".claude" / "settings.json").read_text())
    return data


def _ours(settings: dict[str, Any], event: str) -> list[tuple[str | None, dict[str, Any]]]:
    return [
        (group.get("matcher"), handler)
        for group in settings.get("hooks", {}).get(event, [])
        for handler in group["hooks"]
        if is_ours(handler)
    ]


def test_init_sets_up_a_fresh_project(project: Project) -> None:
    out = project.run("init").stdout
    assert "created   .forge/runtime" in out and "created   .forge/audit" in out
    assert (
        "updated   .gitignore: ignores .forge/runtime/, .forge/audit/, .forge/config.local.yaml"
    ) in out
    assert (project.root / "runtime").is_dir() and (project.root / "audit").is_dir()
    assert not (project.root / "behaviors").exists()  # the built-in catalog is used as is
    assert ".forge/runtime/\n" in (project.path / ".gitignore").read_text()
    settings = _settings(project)
    assert list(settings["hooks"]) == EVENTS
    for event in EVENTS:
        [(matcher, handler)] = _ours(settings, event)
        assert matcher == ("*" if event in EVENTS[:3] else None)
        assert handler == closed(LAUNCHED, event)
    assert PYTHON not in (project.path / ".claude" / "settings.json").read_text()
    # this machine's warm-worker client: in the git-ignored record the launcher runs
    record = project.root / "runtime" / "hook-client"
    assert record.read_text() == f"{PYTHON}\n{CLIENT_PY}\n"
    assert os.access(project.root / "bin" / "forge-policy-hook", os.X_OK)
    assert os.path.isabs(PYTHON) and Path(PYTHON).parent == Path(sys.executable).parent
    assert client_command() == f"{sys.executable} -I -S {CLIENT_PY}"
    assert os.path.isabs(FORGE) and FORGE.parent == Path(sys.executable).parent


def test_init_merges_into_existing_settings_and_is_idempotent(project: Project) -> None:
    settings_path = project.path / ".claude" / "settings.json"
    settings_path.parent.mkdir()
    settings_path.write_text(json.dumps(THEIRS, indent=4))
    (project.path / ".gitignore").write_text("node_modules/\n*.log")
    project.run("init", "--floor", "own")  # the hook entries alone (the sandbox: test_init_floor)
    merged = _settings(project)
    assert list(merged) == list(THEIRS)
    assert {k: v for k, v in merged.items() if k != "hooks"} == {
        k: v for k, v in THEIRS.items() if k != "hooks"
    }
    assert list(merged["hooks"])[:3] == ["Stop", "PreToolUse", "Notification"]
    assert merged["hooks"]["Notification"] == THEIRS["hooks"]["Notification"]
    assert merged["hooks"]["PreToolUse"][0] == THEIRS["hooks"]["PreToolUse"][0]
    assert merged["hooks"]["Stop"][0] == THEIRS["hooks"]["Stop"][0]
    assert all(len(_ours(merged, event)) == 1 for event in EVENTS)
    assert settings_path.read_text().startswith('{\n    "model"')  # the file's own indent
    assert (project.path / ".gitignore").read_text() == (
        "node_modules/\n*.log\n# forge-policy: per-machine files (state, locks, audit log, local "
        "config)\n.forge/runtime/\n.forge/audit/\n.forge/config.local.yaml\n"
    )
    before = {p: p.read_bytes() for p in (settings_path, project.path / ".gitignore")}
    second = project.run("init", "--floor", "own").stdout
    assert second.endswith("nothing to do: the project was already set up\n")
    assert {p: p.read_bytes() for p in before} == before


def test_init_updates_its_own_hook_in_place(project: Project) -> None:
    settings_path = project.path / ".claude" / "settings.json"
    settings_path.parent.mkdir()
    stale = {"type": "command", "command": "/old/venv/bin/forge-policy hook", "timeout": 99}
    settings_path.write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {"matcher": "Bash|Write", "hooks": [stale, {"command": "x"}]},
                        {"matcher": "*", "hooks": [dict(stale)]},
                    ]
                }
            }
        )
    )
    project.run("init")
    groups = _settings(project)["hooks"]["PreToolUse"]
    assert groups == [
        {
            "matcher": "Bash|Write",
            "hooks": [
                {**LAUNCHED, "timeout": 99, **CLOSED},  # the stale entry gains onFailure
                {"command": "x"},
            ],
        }
    ]


def test_init_turns_its_shell_form_entries_into_the_exec_form(project: Project) -> None:
    """A project set up by an older init (the launcher run through the user's shell, with
    ``--via-serve`` too): a re-run replaces each entry in place, keeping what the user set on
    it, never adding a second one beside it."""
    settings_path = project.path / ".claude" / "settings.json"
    settings_path.parent.mkdir()
    served = {**SHELL_FORM, "command": f"{SHELL_FORM['command']} --via-serve"}
    old = {
        "PreToolUse": [{"matcher": "*", "hooks": [{**SHELL_FORM, "timeout": 12, **CLOSED}]}],
        "Stop": [{"hooks": [{"command": "x"}, served, dict(SHELL_FORM)]}],
    }
    settings_path.write_text(json.dumps({"hooks": old}))
    project.run("init")
    hooks = _settings(project)["hooks"]
    assert hooks["PreToolUse"] == [
        {"matcher": "*", "hooks": [{**LAUNCHED, "timeout": 12, **CLOSED}]}
    ]
    assert hooks["Stop"] == [{"hooks": [{"command": "x"}, LAUNCHED]}]
    assert all(len(_ours({"hooks": hooks}, event)) == 1 for event in EVENTS)
    assert '"$CLAUDE_PROJECT_DIR"' not in settings_path.read_text()


def test_uninstall_takes_out_either_form(project: Project) -> None:
    """An entry of the shell form (an older init) and one of the exec form (this one, the
    local file's naming this machine's client in ``command`` and ``args``) are both ours."""
    project.run("init", "--local")
    local = project.path / ".claude" / "settings.local.json"
    document = json.loads(local.read_text())
    document["hooks"]["Stop"][0]["hooks"] += [{"command": "x"}, dict(SHELL_FORM)]
    local.write_text(json.dumps(document))
    project.run("uninstall")
    assert json.loads(local.read_text()) == {"hooks": {"Stop": [{"hooks": [{"command": "x"}]}]}}


def test_init_refuses_invalid_settings(project: Project) -> None:
    settings_path = project.path / ".claude" / "settings.json"
    settings_path.parent.mkdir()
    settings_path.write_text('{\n  "hooks": {,\n}\n')
    result = project.run("init", check=1)
    assert result.stderr == (
        "forge-policy: .claude/settings.json:2:13: not valid JSON (Expecting property name "
        "enclosed in double quotes); fix it first, nothing was changed\n"
    )
    assert settings_path.read_text() == '{\n  "hooks": {,\n}\n'
    settings_path.write_text('{"hooks": {"PreToolUse": {}}}')
    assert (
        "hooks.PreToolUse: expected a list of hook entries" in project.run("init", check=1).stderr
    )


def test_init_serve_forms(project: Project) -> None:
    out = project.run("init", "--serve", "--port", "8123").stdout
    token = project.root / "runtime" / "serve.token"
    assert stat.S_IMODE(token.stat().st_mode) == 0o600 and len(token.read_text().strip()) >= 40
    assert json.loads((project.root / "runtime" / "serve.json").read_text()) == {
        "host": "127.0.0.1",
        "port": 8123,
        "mode": "via-serve",
    }
    assert "evaluate in-process when it does not answer" in out
    for event in EVENTS:
        [(_, handler)] = _ours(_settings(project), event)
        assert (handler["command"], handler["args"]) == (LAUNCHER, ["--via-serve"])
    secret = token.read_text()

    result = project.run("init", "--serve", "--http-only", "--port", "8123")
    assert "WARNING: http hooks fail OPEN" in result.stderr
    assert f'export FORGE_SERVE_TOKEN="$(cat {token})"' in result.stderr
    settings = _settings(project)
    for event in EVENTS:
        [(_, handler)] = _ours(settings, event)
        if event == "SessionStart":  # Claude Code runs no http hooks there
            assert handler["type"] == "command"
        else:
            http = {
                "type": "http",
                "url": "http://127.0.0.1:8123/hook",
                "headers": {"Authorization": "Bearer $FORGE_SERVE_TOKEN"},
                "allowedEnvVars": ["FORGE_SERVE_TOKEN"],
                "timeout": 30,
            }
            assert handler == closed(http, event)
    assert token.read_text() == secret  # the token survives re-runs

    # a re-run without --serve (to copy the catalog, say) keeps serve mode, its form and port
    result = project.run("init", "--copy-catalog")
    assert "kept serve mode (127.0.0.1:8123)" in result.stdout
    assert "WARNING: http hooks fail OPEN" in result.stderr
    assert json.loads((project.root / "runtime" / "serve.json").read_text())["mode"] == "http"
    assert _ours(_settings(project), "PreToolUse")[0][1]["type"] == "http"

    out = project.run("init", "--no-serve").stdout
    assert "removed   .forge/runtime/serve.json: serve mode is off" in out
    for event in EVENTS:
        [(_, handler)] = _ours(_settings(project), event)
        assert handler == closed(LAUNCHED, event)
    assert project.json("status")["serve"]["configured"] is False


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--http-only"], "--http-only needs --serve"),
        (["--port", "8123"], "--port needs --serve"),
        (["--serve", "--no-serve"], "--serve and --no-serve exclude each other"),
        (["--serve", "--port", "70000"], "port 70000 is out of range: expected 1-65535"),
        (["--serve", "--port", "0"], "port 0 is out of range: expected 1-65535"),
        (["--serve", "--port", "x"], "port 'x' is not a whole number"),
    ],
)
def test_init_refuses_options_that_do_not_go_together(
    project: Project, args: list[str], message: str
) -> None:
    result = project.run("init", *args, check=2)
    assert message in result.stderr and "Traceback" not in result.stderr
    assert not project.root.exists()  # nothing was set up half-way


def test_init_switches_between_the_client_and_the_plain_hook(project: Project) -> None:
    project.run("init")
    record = project.root / "runtime" / "hook-client"
    out = project.run("init", "--no-worker").stdout
    assert "updated   .forge/runtime/hook-client" in out
    assert "settings.json" not in out.replace("unchanged .claude/settings.json", "")
    assert record.read_text() == f"{FORGE}\n"  # the launcher runs `forge-policy hook`
    for event in EVENTS:
        [(_, handler)] = _ours(_settings(project), event)  # the portable command stays
        assert handler == closed(LAUNCHED, event)
    assert "FORGE_WORKER=off" in project.run("init").stdout
    assert record.read_text() == f"{PYTHON}\n{CLIENT_PY}\n"
    assert not project.run("init").stdout.count("updated")


def test_init_local_writes_the_machine_command_to_the_local_file(project: Project) -> None:
    project.run("init")
    local = project.path / ".claude" / "settings.local.json"
    out = project.run("init", "--local").stdout
    assert "created   .claude/settings.local.json" in out
    assert "ignores .claude/settings.local.json" in out
    mine = json.loads(local.read_text())
    for event in EVENTS:
        [handler] = [h for g in mine["hooks"][event] for h in g["hooks"]]
        assert handler == closed(CLIENT, event)
        # taken out of the shared file: Claude Code merges both and would run the hook twice
        assert _ours(_settings(project), event) == []
    assert project.run("init").stdout.count("updated") == 0  # the choice is kept
    out = project.run("init", "--shared").stdout
    assert "removed   .claude/settings.local.json" in out and not local.exists()
    assert all(
        _ours(_settings(project), e) == [(m, closed(LAUNCHED, e))]
        for e, m in zip(EVENTS, ["*", "*", "*", None, None], strict=True)
    )


def test_init_copy_catalog(project: Project) -> None:
    project.run("init", "--copy-catalog")
    assert (project.root / "behaviors" / "search-first" / "behavior.yaml").is_file()
    count = len(fp.builtin_catalog())
    assert project.run("validate").stdout.startswith(f"ok: {project.root / 'behaviors'}: {count} ")


@pytest.mark.parametrize("depth", [100, 100000])
def test_init_refuses_settings_nested_too_deeply(project: Project, depth: int) -> None:
    settings = project.path / ".claude" / "settings.json"
    settings.parent.mkdir()
    text = '{"x": ' + "[" * depth + "]" * depth + "}"
    settings.write_text(text)
    result = project.run("init", check=1)
    assert result.stderr == (
        "forge-policy: .claude/settings.json: nested deeper than 64 levels; nothing was changed\n"
    )
    assert settings.read_text() == text
