"""``forge-policy init --plugin DIR``: the Claude Code plugin folder, its launcher run as Claude
Code runs a plugin hook (``sh -c COMMAND`` with ``CLAUDE_PLUGIN_ROOT`` and
``CLAUDE_PROJECT_DIR`` set) against the real ``forge-policy`` executable, and the warning when
the plugin and a project's own hook would both decide each event."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from cli_support import FORGE

from forge_policy.ops import plugin

#: A PATH holding the shell tools and no forge-policy.
BARE_PATH = "/usr/bin:/bin"
#: forge-policy's folder (this venv's bin) in front of it.
WITH_FORGE = f"{FORGE.parent}{os.pathsep}{BARE_PATH}"
PUSH = {"tool_name": "Bash", "tool_input": {"command": "git push --force origin main"}}


@pytest.fixture(autouse=True)
def _no_forge_on_bare_path() -> None:
    if shutil.which("forge-policy", path=BARE_PATH):
        pytest.skip(f"forge-policy is installed in {BARE_PATH}: the missing case cannot be made")


def forge(
    cwd: Path, *args: str, home: Path, check: int | None = 0
) -> subprocess.CompletedProcess[str]:
    env = {"PATH": WITH_FORGE, "HOME": str(home), "LANG": "C.UTF-8"}
    done = subprocess.run(
        [str(FORGE), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    if check is not None:
        assert done.returncode == check, done.stdout + done.stderr
    return done


def hook_argv(folder: Path, event: str, project: Path) -> list[str]:
    """What Claude Code spawns for the handler ``hooks/hooks.json`` registers on ``event`` (one
    group, one handler, in exec form): ``command`` then ``args``, with ``${CLAUDE_PLUGIN_ROOT}``
    and ``${CLAUDE_PROJECT_DIR}`` replaced in each as plain strings, no shell."""
    document = json.loads((folder / plugin.HOOKS).read_text("utf-8"))
    [group] = document["hooks"][event]
    [handler] = group["hooks"]
    return [
        word.replace("${CLAUDE_PLUGIN_ROOT}", str(folder)).replace(
            "${CLAUDE_PROJECT_DIR}", str(project)
        )
        for word in [handler["command"], *handler["args"]]
    ]


def run_hook(
    folder: Path,
    project: Path,
    event: str = "PreToolUse",
    *,
    path: str = BARE_PATH,
    command: list[str] | None = None,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """The plugin's hook on ``event`` as Claude Code runs it (:func:`hook_argv`), with the
    plugin's folder in ``CLAUDE_PLUGIN_ROOT`` and the project's in ``CLAUDE_PROJECT_DIR``."""
    payload: dict[str, Any] = {
        "session_id": str(uuid.uuid4()),
        "hook_event_name": event,
        "cwd": str(project),
        "transcript_path": str(project / "t.jsonl"),
        **(PUSH if event.endswith("ToolUse") else {}),
        **({"prompt": "hello"} if event == "UserPromptSubmit" else {}),
    }
    environ = {
        "PATH": path,
        "HOME": str(project.parent / "home"),
        "LANG": "C.UTF-8",
        "CLAUDE_PLUGIN_ROOT": str(folder),
        "CLAUDE_PROJECT_DIR": str(project),
        **env,
    }
    return subprocess.run(
        command if command is not None else hook_argv(folder, event, project),
        input=json.dumps(payload),
        cwd=project,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


def denied(done: subprocess.CompletedProcess[str]) -> bool:
    assert done.returncode == 0, done.stdout + done.stderr
    answer = json.loads(done.stdout)
    return bool(answer["hookSpecificOutput"]["permissionDecision"] == "deny")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True, timeout=60)
    return folder


@pytest.fixture
def written(tmp_path: Path, home: Path) -> Path:
    folder = tmp_path / "plugins" / "forge-policy"
    forge(tmp_path, "init", "--plugin", str(folder), home=home)
    return folder


# -- the folder ---------------------------------------------------------------------------------


def test_the_hooks_are_the_ones_init_registers_for_claude_code(
    written: Path, project: Path, home: Path
) -> None:
    """Same events, matchers, timeout and onFailure as the project's settings, in exec form too;
    only the command and its arguments differ (the plugin's launcher, run by ``/bin/sh``)."""
    forge(project, "init", "--harness", "claude-code", "--floor", "off", home=home)
    settings = json.loads((project / ".claude" / "settings.json").read_text("utf-8"))["hooks"]
    hooks = json.loads((written / plugin.HOOKS).read_text("utf-8"))["hooks"]
    assert list(hooks) == list(settings)
    for event, groups in settings.items():
        [ours] = hooks[event]
        [theirs] = groups
        assert {k: v for k, v in ours.items() if k != "hooks"} == {
            k: v for k, v in theirs.items() if k != "hooks"
        }
        [mine], [init_handler] = ours["hooks"], theirs["hooks"]
        assert [mine.pop("command"), *mine.pop("args")] == [
            "/bin/sh",
            "${CLAUDE_PLUGIN_ROOT}/hooks/forge-policy-hook",
            "--event",
            event,
        ]
        assert init_handler.pop("command").startswith("${CLAUDE_PROJECT_DIR}/")
        assert init_handler.pop("args") == []
        assert mine == init_handler
    assert hooks["PreToolUse"][0]["hooks"][0]["onFailure"] == "block"


def test_no_file_names_a_path_of_this_machine(written: Path, tmp_path: Path, home: Path) -> None:
    machine = {str(tmp_path), str(home), sys.prefix, sys.executable, str(FORGE), os.getcwd()}
    files = [p for p in written.rglob("*") if p.is_file()]
    assert {p.relative_to(written).as_posix() for p in files} == {
        ".claude-plugin/plugin.json",
        "hooks/hooks.json",
        "hooks/forge-policy-hook",
        "README.md",
    }
    for path in files:
        text = path.read_text("utf-8")
        assert not [m for m in machine if m in text], path

    def strings(value: Any) -> list[str]:
        if isinstance(value, dict):
            return [s for v in value.values() for s in strings(v)]
        if isinstance(value, list):
            return [s for v in value for s in strings(v)]
        return [value] if isinstance(value, str) else []

    for name in (plugin.MANIFEST, plugin.HOOKS):
        for text in strings(json.loads((written / name).read_text("utf-8"))):
            # /bin/sh: the program that runs the launcher, the one its #! line names
            assert text == plugin.SHELL or not text.startswith(("/", "~")), (name, text)
    hooks = json.loads((written / plugin.HOOKS).read_text("utf-8"))["hooks"]
    for groups in hooks.values():
        assert all(
            h["args"][0].startswith("${CLAUDE_PLUGIN_ROOT}/") for g in groups for h in g["hooks"]
        )


def test_the_folder_moved_elsewhere_still_decides(
    written: Path, tmp_path: Path, project: Path
) -> None:
    elsewhere = tmp_path / "somewhere else" / "plugin copy"
    elsewhere.parent.mkdir()
    shutil.move(written, elsewhere)
    assert denied(run_hook(elsewhere, project, path=WITH_FORGE))
    assert not written.exists()


def test_a_second_run_changes_nothing(tmp_path: Path, written: Path, home: Path) -> None:
    before = {p: (p.read_bytes(), p.stat().st_mode) for p in written.rglob("*") if p.is_file()}
    done = forge(tmp_path, "init", "--plugin", str(written), home=home)
    assert "nothing to do" in done.stdout
    assert all(line.startswith("unchanged") for line in done.stdout.splitlines()[:-1])
    after = {p: (p.read_bytes(), p.stat().st_mode) for p in written.rglob("*") if p.is_file()}
    assert after == before
    assert stat.S_IMODE(os.stat(written / plugin.LAUNCHER).st_mode) == 0o755


def test_a_rerun_keeps_what_was_added_and_updates_ours(
    tmp_path: Path, written: Path, home: Path
) -> None:
    hooks_path, manifest_path = written / plugin.HOOKS, written / plugin.MANIFEST
    document = json.loads(hooks_path.read_text("utf-8"))
    theirs = {"type": "command", "command": "./audit-everything.sh"}
    document["hooks"]["PreToolUse"].append({"matcher": "Bash", "hooks": [theirs]})
    document["hooks"]["Stop"][0]["hooks"][0]["command"] = (
        'sh "${CLAUDE_PLUGIN_ROOT}"/hooks/forge-policy-hook --old-flag'
    )
    hooks_path.write_text(json.dumps(document), "utf-8")
    manifest = json.loads(manifest_path.read_text("utf-8"))
    manifest_path.write_text(
        json.dumps({**manifest, "version": "0.0.1", "homepage": "https://example.org/forge"})
    )
    (written / plugin.LAUNCHER).write_text("#!/bin/sh\nexit 0\n", "utf-8")
    done = forge(tmp_path, "init", "--plugin", str(written), home=home)
    assert "updated" in done.stdout
    again = json.loads(hooks_path.read_text("utf-8"))["hooks"]
    assert again["PreToolUse"][1] == {"matcher": "Bash", "hooks": [theirs]}
    assert len(again["PreToolUse"]) == 2
    [stop] = again["Stop"][0]["hooks"]
    assert [stop["command"], *stop["args"]] == plugin.argv("Stop")
    manifest = json.loads(manifest_path.read_text("utf-8"))
    assert manifest["homepage"] == "https://example.org/forge"
    assert manifest["version"] == plugin.manifest()["version"] != "0.0.1"
    assert (written / plugin.LAUNCHER).read_text("utf-8") == plugin.script()


def test_a_description_of_its_own_is_kept(tmp_path: Path, written: Path, home: Path) -> None:
    path = written / plugin.HOOKS
    document = json.loads(path.read_text("utf-8"))
    path.write_text(json.dumps({**document, "description": "Politique de l'équipe"}), "utf-8")
    forge(tmp_path, "init", "--plugin", str(written), home=home)
    assert json.loads(path.read_text("utf-8"))["description"] == "Politique de l'équipe"
    assert "nothing to do" in forge(tmp_path, "init", "--plugin", str(written), home=home).stdout


@pytest.mark.parametrize(
    "content",
    [
        {"notes.txt": "mine\n"},
        {".claude-plugin/plugin.json": '{"name": "someone-else"}'},
        {".claude-plugin/plugin.json": "{not json"},
    ],
    ids=["foreign-file", "other-plugin", "broken-manifest"],
)
def test_a_folder_that_is_not_ours_is_refused_unless_forced(
    tmp_path: Path, home: Path, content: dict[str, str]
) -> None:
    folder = tmp_path / "taken"
    for name, text in content.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, "utf-8")
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    done = forge(tmp_path, "init", "--plugin", str(folder), home=home, check=None)
    assert done.returncode != 0
    assert "not empty and not a forge-policy plugin" in done.stderr
    assert "--force" in done.stderr and "Traceback" not in done.stderr
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before
    forge(tmp_path, "init", "--plugin", str(folder), "--force", home=home)
    assert plugin.is_ours(folder)
    if "notes.txt" in content:
        assert (folder / "notes.txt").read_text("utf-8") == "mine\n"


def test_a_broken_hooks_file_is_refused_with_its_line(
    tmp_path: Path, written: Path, home: Path
) -> None:
    (written / plugin.HOOKS).write_text('{\n  "hooks": {\n    "PreToolUse": [,]\n  }\n}\n', "utf-8")
    done = forge(tmp_path, "init", "--plugin", str(written), home=home, check=None)
    assert done.returncode != 0
    assert "hooks.json:3:" in done.stderr and "Traceback" not in done.stderr
    forge(tmp_path, "init", "--plugin", str(written), "--force", home=home)
    assert json.loads((written / plugin.HOOKS).read_text("utf-8"))["hooks"]["PreToolUse"]


def test_a_file_in_the_way_is_refused(tmp_path: Path, home: Path) -> None:
    (tmp_path / "file").write_text("x", "utf-8")
    done = forge(tmp_path, "init", "--plugin", str(tmp_path / "file"), home=home, check=None)
    assert done.returncode != 0 and "not a folder" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--marketplace",), "go with --plugin DIR"),
        (("--force",), "go with --plugin DIR"),
        (("--plugin", "p", "--harness", "codex"), "--harness set a project up"),
        (("--plugin", "p", "--floor", "own"), "--floor set a project up"),
    ],
)
def test_options_that_do_not_go_together(
    tmp_path: Path, home: Path, args: tuple[str, ...], message: str
) -> None:
    done = forge(tmp_path, "init", *args, home=home, check=None)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert not (tmp_path / "p").exists() and not (tmp_path / ".forge").exists()


def test_the_marketplace_lists_the_plugin_beside_it(tmp_path: Path, home: Path) -> None:
    folder = tmp_path / "market" / "plugins-forge"
    forge(tmp_path, "init", "--plugin", str(folder), "--marketplace", "acme-tools", home=home)
    path = tmp_path / "market" / plugin.MARKETPLACE
    document = json.loads(path.read_text("utf-8"))
    assert document["name"] == "acme-tools" and document["owner"] == {"name": "acme-tools"}
    assert document["plugins"] == [
        {
            "name": "forge-policy",
            "source": "./plugins-forge",
            "description": plugin.DESCRIPTION,
            "version": plugin.manifest()["version"],
        }
    ]
    other = {"name": "formatter", "source": "./formatter"}
    document["plugins"].insert(0, other)
    document["owner"] = {"name": "ACME platform team", "email": "platform@example.org"}
    path.write_text(json.dumps(document), "utf-8")
    forge(tmp_path, "init", "--plugin", str(folder), "--marketplace", "acme-tools", home=home)
    again = json.loads(path.read_text("utf-8"))
    assert again["plugins"][0] == other and len(again["plugins"]) == 2
    assert again["owner"]["name"] == "ACME platform team"
    forge(tmp_path, "init", "--plugin", str(folder), "--marketplace", home=home)  # its own name
    assert json.loads(path.read_text("utf-8"))["name"] == "acme-tools"
    before = path.read_text("utf-8")
    for name, message in (("other-tools", "is 'acme-tools', not 'other-tools'"),
                          ("acme tools", "is not a marketplace name")):  # fmt: skip
        done = forge(tmp_path, "init", "--plugin", str(folder), "--marketplace", name,
                     home=home, check=None)  # fmt: skip
        assert done.returncode != 0 and message in done.stderr, done.stderr
    assert path.read_text("utf-8") == before
    path.write_text("[]", "utf-8")
    (folder / plugin.LAUNCHER).write_text("stale\n", "utf-8")
    done = forge(tmp_path, "init", "--plugin", str(folder), "--marketplace", home=home, check=None)
    assert done.returncode != 0 and "marketplace.json" in done.stderr
    assert (folder / plugin.LAUNCHER).read_text("utf-8") == "stale\n"  # checked before writing


def test_a_marketplace_name_is_checked_before_the_plugin_is_written(
    tmp_path: Path, home: Path
) -> None:
    folder = tmp_path / "market" / "forge-policy"
    done = forge(tmp_path, "init", "--plugin", str(folder), "--marketplace", "a/b",
                 home=home, check=None)  # fmt: skip
    assert done.returncode != 0 and "not a marketplace name" in done.stderr
    assert not folder.exists()


# -- the launcher -------------------------------------------------------------------------------


def test_without_forge_policy_a_tool_call_is_refused(written: Path, project: Path) -> None:
    done = run_hook(written, project)
    assert done.returncode == plugin.NOT_FOUND == 2
    assert "forge-policy is not installed" in done.stderr
    assert "pipx install forge-policy" in done.stderr and "blocked" in done.stderr
    assert not (project / ".forge").exists()


def test_a_command_without_its_event_fails_closed(written: Path, project: Path) -> None:
    bare = hook_argv(written, "PreToolUse", project)[:2]  # /bin/sh, the launcher
    assert run_hook(written, project, command=bare).returncode == 2
    unknown = run_hook(written, project, command=[*bare, "--event", "PermissionRequest"])
    assert unknown.returncode == 2


def test_without_forge_policy_a_session_starts_and_says_it_is_not_governed(
    written: Path, project: Path
) -> None:
    done = run_hook(written, project, "SessionStart")
    assert done.returncode == 0, done.stderr
    message = json.loads(done.stdout)["systemMessage"]
    assert "NOT governed" in message and "pipx install forge-policy" in message


@pytest.mark.parametrize("event", ["PostToolUse", "UserPromptSubmit", "Stop"])
def test_without_forge_policy_other_events_go_ahead_with_the_message(
    written: Path, project: Path, event: str
) -> None:
    done = run_hook(written, project, event)
    assert done.returncode == 1, done.stderr  # a non-blocking error: neither 0 nor 2
    assert "forge-policy is not installed" in done.stderr


def test_forge_policy_on_path_decides(written: Path, project: Path) -> None:
    """A project never set up: the built-in catalog decides, and the state it keeps in the
    project's new .forge stays out of git."""
    assert denied(run_hook(written, project, path=WITH_FORGE))
    assert (project / ".forge" / "audit" / "overrides.log").is_file()
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert status.stdout == ""


def _stub(folder: Path, answer: str) -> Path:
    """A ``forge-policy`` that answers ``answer`` and leaves a mark that it ran."""
    folder.mkdir()
    stub = folder / "forge-policy"
    stub.write_text(f"#!/bin/sh\ntouch '{folder}/ran'\necho '{answer}'\n", "utf-8")
    stub.chmod(0o755)
    return stub


def test_forge_policy_variable_comes_before_path(
    tmp_path: Path, written: Path, project: Path
) -> None:
    stub = _stub(tmp_path / "stub", "{}")
    on_path = f"{stub.parent}{os.pathsep}{BARE_PATH}"
    assert denied(run_hook(written, project, path=on_path, FORGE_POLICY=str(FORGE)))
    assert not (stub.parent / "ran").exists()
    assert run_hook(written, project, path=on_path).stdout.strip() == "{}"
    assert (stub.parent / "ran").exists()


def test_the_projects_own_launcher_comes_first(
    tmp_path: Path, written: Path, project: Path, home: Path
) -> None:
    """A project set up with init: its launcher runs the forge-policy init recorded for this
    machine, though none is on PATH, and before a forge-policy on PATH that would allow."""
    forge(project, "init", "--harness", "claude-code", "--floor", "off", "--no-worker", home=home)
    assert denied(run_hook(written, project))
    stub = _stub(tmp_path / "stub", "{}")
    assert denied(run_hook(written, project, path=f"{stub.parent}{os.pathsep}{BARE_PATH}"))
    assert not (stub.parent / "ran").exists()
    log = (project / ".forge" / "audit" / "overrides.log").read_text("utf-8").splitlines()
    assert sum("no-destructive-git" in line for line in log) == 2


def test_the_projects_forge_root_is_where_its_launcher_is_looked_for(
    tmp_path: Path, written: Path, project: Path, home: Path
) -> None:
    env = {"PATH": WITH_FORGE, "HOME": str(home), "FORGE_ROOT": ".gov"}
    subprocess.run(
        [str(FORGE), "init", "--harness", "claude-code", "--floor", "off", "--no-worker"],
        cwd=project, env=env, capture_output=True, check=True, timeout=120,
    )  # fmt: skip
    assert (project / ".gov" / "bin" / "forge-policy-hook").is_file()
    assert denied(run_hook(written, project, FORGE_ROOT=".gov"))
    assert run_hook(written, project).returncode == 2  # .forge: no launcher there


# -- the plugin beside the project's own hook -------------------------------------------------


def _enable(home: Path, value: object, key: str = "forge-policy@acme-tools") -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"enabledPlugins": {key: value}}), "utf-8")


def test_doctor_warns_when_the_plugin_and_the_projects_hook_both_run(
    project: Path, home: Path
) -> None:
    forge(project, "init", "--harness", "claude-code", "--floor", "off", home=home)
    assert "counted twice" not in forge(project, "doctor", home=home, check=None).stdout
    _enable(home, True)
    report = forge(project, "doctor", home=home, check=None).stdout
    assert "forge-policy plugin is enabled" in report and "counted twice" in report
    assert "forge-policy@acme-tools" in report
    again = forge(project, "init", "--harness", "claude-code", "--floor", "off", home=home)
    assert "counted twice" in again.stdout
    doctor = forge(project, "doctor", "--json", home=home, check=None)
    [claude] = [h for h in json.loads(doctor.stdout)["harnesses"] if h["harness"] == "claude-code"]
    assert any("counted twice" in note for note in claude["notes"])


@pytest.mark.parametrize(
    ("key", "value"), [("forge-policy@acme-tools", False), ("other-plugin@acme-tools", True)]
)
def test_no_warning_for_a_disabled_or_other_plugin(
    project: Path, home: Path, key: str, value: object
) -> None:
    forge(project, "init", "--harness", "claude-code", "--floor", "off", home=home)
    _enable(home, value, key)
    assert "counted twice" not in forge(project, "doctor", home=home, check=None).stdout


def test_no_warning_for_the_plugin_alone(project: Path, home: Path) -> None:
    _enable(home, True)
    local = project / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text(json.dumps({"enabledPlugins": {"forge-policy@acme-tools": True}}), "utf-8")
    found = plugin.enabled_in(project, {"HOME": str(home)})
    assert [f.split(": ")[1] for f in found] == ["forge-policy@acme-tools"] * 2
    assert found[0].startswith(str(home)) and "settings.local.json" in found[1]
    assert plugin.double_registration(project, {"HOME": str(home)}) == []


# -- the agent against the plugin --------------------------------------------------------------


def _call(folder: Path, project: Path, tool: str, tool_input: dict[str, Any]) -> str:
    """The decision of the plugin's hook on one PreToolUse call (``deny`` or not)."""
    payload = {
        "session_id": str(uuid.uuid4()),
        "hook_event_name": "PreToolUse",
        "cwd": str(project),
        "transcript_path": str(project / "t.jsonl"),
        "tool_name": tool,
        "tool_input": tool_input,
    }
    done = subprocess.run(
        hook_argv(folder, "PreToolUse", project),
        input=json.dumps(payload),
        cwd=project,
        env={
            "PATH": WITH_FORGE,
            "HOME": str(project.parent / "home"),
            "CLAUDE_PLUGIN_ROOT": str(folder),
            "CLAUDE_PROJECT_DIR": str(project),
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout).get("hookSpecificOutput", {})
    return str(output.get("permissionDecision", "allow"))


def test_the_agent_cannot_rewrite_or_remove_the_plugin(written: Path, project: Path) -> None:
    """protect-governance guards the folder of the plugin that runs the hook
    ($CLAUDE_PLUGIN_ROOT), as it guards .forge: its launcher, hooks.json and manifest."""
    launcher = written / plugin.LAUNCHER
    calls = [
        ("Bash", {"command": f"echo 'exit 0' > '{launcher}'"}),
        ("Bash", {"command": 'printf "exit 0\\n" > "$CLAUDE_PLUGIN_ROOT"/hooks/forge-policy-hook'}),
        ("Bash", {"command": f"rm -rf '{written.parent}'"}),
        ("Bash", {"command": f"sed -i s/PreToolUse/Nothing/ {written / plugin.HOOKS}"}),
        ("Write", {"file_path": str(written / plugin.HOOKS), "content": "{}"}),
        ("Edit", {"file_path": str(launcher), "old_string": "exit 2", "new_string": "exit 0"}),
    ]
    for tool, tool_input in calls:
        assert _call(written, project, tool, tool_input) == "deny", (tool, tool_input)
    assert launcher.read_text("utf-8") == plugin.script()
    elsewhere = {"file_path": str(project / "notes.txt"), "content": "x\n"}
    assert _call(written, project, "Write", elsewhere) != "deny"


def test_a_forge_root_of_the_users_is_left_to_them(
    tmp_path: Path, written: Path, project: Path
) -> None:
    """FORGE_ROOT under the home (``~/…``) is looked up there, never made in the project."""
    done = run_hook(written, project, path=WITH_FORGE, FORGE_ROOT="~/forge-state")
    assert denied(done)
    assert sorted(p.name for p in project.iterdir()) == [".git"]
    assert not (project.parent / "home" / "forge-state" / ".gitignore").exists()


def test_doctor_does_not_send_a_plugin_user_to_init(project: Path, home: Path) -> None:
    """A project governed by the plugin alone: doctor says so instead of "not set up: run
    forge-policy init", which would make each event decided twice."""
    assert "not set up: run forge-policy init" in forge(project, "doctor", home=home).stdout
    _enable(home, True)
    report = forge(project, "doctor", home=home).stdout
    assert "not set up" not in report
    assert "no project hook: the forge-policy plugin is enabled" in report


def test_uninstall_is_about_the_project_and_says_the_plugin_stays(
    project: Path, home: Path
) -> None:
    forge(project, "init", "--harness", "claude-code", "--floor", "off", home=home)
    _enable(home, True)
    done = forge(project, "uninstall", home=home)
    assert "the forge-policy plugin is still enabled" in done.stdout
    assert "claude plugin uninstall" in done.stdout
    assert json.loads((home / ".claude" / "settings.json").read_text("utf-8")) == {
        "enabledPlugins": {"forge-policy@acme-tools": True}
    }
    as_json = json.loads(forge(project, "uninstall", "--json", home=home).stdout)
    assert any("still enabled" in note for note in as_json["notes"])
