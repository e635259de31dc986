"""``forge-policy init --floor harness|own|off``: the floor recorded in ``.forge/config.yaml`` and,
by default, each harness's own sandbox written from ``floor_for`` (Claude Code's ``sandbox`` block,
Codex's ``sandbox_mode``): exact, schema-valid, portable, idempotent, lossless, never loosening."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from forge_policy.floor.derive import floor_for
from forge_policy.floor.status import active_floor, configured_mode, harness_sandbox_on
from forge_policy.harness.settings_check import _Validator, load_schema
from tests.cli_support import Project

HOME = "/home/forge-floor-test"
FLAGS = {"enabled": True, "failIfUnavailable": True, "allowUnsandboxedCommands": False}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    (tmp_path / "work").mkdir()
    # a home outside every writable root (tmp_path is below /tmp), as a user's is
    return Project(tmp_path / "work", HOME=HOME, TMPDIR="/tmp")


def settings(project: Project, name: str = "settings.json") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project.path / ".claude" / name).read_text())
    return data


def entry(path: str, project: Path, home: str) -> str:
    """The sandbox spelling the docs give (code.claude.com/docs/en/settings-reference, "Sandbox
    path prefixes", 2026-08-22), written out independently of the module under test."""
    if path == str(project):
        return "."
    if path.startswith(f"{project}/"):
        return "./" + path[len(str(project)) + 1 :]
    if path.startswith(f"{home}/"):
        return "~/" + path[len(home) + 1 :]
    return "/" + path


def expected_lists(project: Project) -> dict[str, list[str]]:
    """``floor_for``'s paths (whatever derive makes of it) as the committed file holds them: a
    never-written path outside the writable roots is left to the default write boundary."""
    env = project.env
    floor = floor_for(str(project.path), env)
    home = env["HOME"]

    roots = [p.path for p in floor.writable]

    def writable(path: str) -> bool:
        return any(path == r or path.startswith(r + "/") for r in roots)

    def spell(paths: Any, *, write: bool = False) -> list[str]:
        out: list[str] = []
        for p in paths:
            if p.reason == "installation" or (write and not writable(p.path)):
                continue  # held by the default write boundary, or one machine's (local file)
            e = entry(p.path, project.path, home)
            if e not in out:
                out.append(e)
        return out

    return {
        "denyWrite": spell(floor.never_written, write=True),
        "denyRead": spell(floor.never_read),
        "allowWrite": spell(floor.writable),
    }


def only_installation(project: Project) -> bool:
    """The local file holds no never-written path but the engine's installation (one machine's;
    written only when it lies below a writable root, as a checkout under /tmp does)."""
    path = project.path / ".claude" / "settings.local.json"
    if not path.exists():
        return True
    floor = floor_for(str(project.path), project.env)
    installation = {
        entry(p.path, project.path, HOME) for p in floor.never_written if p.reason == "installation"
    }
    written = json.loads(path.read_text())["sandbox"]["filesystem"].get("denyWrite", [])
    return all(e in installation for e in written)


def schema_errors(document: dict[str, Any]) -> list[str]:
    schema = load_schema("claude-code")
    assert schema is not None
    assert jsonschema.Draft7Validator(schema).is_valid(document)
    return _Validator(schema).errors(document)


def test_the_default_writes_claude_code_s_sandbox_block_from_the_floor(project: Project) -> None:
    out = project.run("init").stdout
    block = settings(project)["sandbox"]
    lists = expected_lists(project)
    assert block == {**FLAGS, "filesystem": lists}
    # spelled as the docs say (relative to the project, to home)
    assert {"./.forge", "./.claude"} <= set(lists["denyWrite"])
    assert any(e.startswith("~/.ssh") for e in lists["denyRead"])
    assert any(e.startswith("~/.aws") for e in lists["denyRead"])
    assert lists["allowWrite"][:3] == [".", "//tmp", "//var/tmp"]
    assert schema_errors(settings(project)) == []
    assert (project.root / "config.yaml").read_text() == "floor: harness\n"
    assert configured_mode(str(project.root)) == "harness"
    assert "updated   .claude/settings.json: sandbox from the floor" in out
    assert "created   .forge/config.yaml: floor" in out
    home = project.env["HOME"]
    assert harness_sandbox_on("claude-code", str(project.path), home)
    assert active_floor("claude-code", str(project.path), str(project.root), project.env) == (
        "harness"
    )
    assert only_installation(project)


def test_no_machine_path_reaches_the_committed_file(project: Project, tmp_path: Path) -> None:
    """A TMPDIR of one machine goes to the local settings file (Claude Code merges the lists of
    every settings file); the committed one names paths relative to the project or home."""
    odd = tmp_path / "machine-tmp"
    odd.mkdir()
    project.env["TMPDIR"] = str(odd)
    project.run("init")
    text = (project.path / ".claude" / "settings.json").read_text()
    sandbox = json.loads(text)["sandbox"]
    for name in ("denyWrite", "denyRead", "allowWrite"):
        for item in sandbox["filesystem"][name]:
            assert item.startswith(("./", "~/")) or item in (".", "//tmp", "//var/tmp"), item
    assert str(project.path) not in json.dumps(sandbox)
    assert str(odd) not in text
    local = settings(project, "settings.local.json")
    assert local["sandbox"]["filesystem"]["allowWrite"] == ["/" + str(odd)]
    assert only_installation(project)
    assert schema_errors(local) == []


def test_a_second_init_changes_nothing(project: Project) -> None:
    project.run("init", "--harness", "claude-code", "--harness", "codex")
    files = [
        project.path / ".claude" / "settings.json",
        project.path / ".codex" / "config.toml",
        project.root / "config.yaml",
    ]
    before = {p: p.read_bytes() for p in files}
    again = project.run("init", "--harness", "claude-code", "--harness", "codex").stdout
    assert again.endswith("nothing to do: the project was already set up\n")
    assert {p: p.read_bytes() for p in files} == before


def test_the_merge_keeps_the_user_s_keys_and_never_loosens(project: Project) -> None:
    mine = {
        "model": "opus",
        "sandbox": {
            "enabled": False,
            "excludedCommands": ["docker *"],
            "network": {"allowedDomains": ["github.com"]},
            "filesystem": {"denyRead": ["~/secrets"], "allowWrite": ["~/.kube"]},
            "allowUnsandboxedCommands": False,
        },
        "permissions": {"deny": ["Read(./.env)"]},
    }
    path = project.path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(mine, indent=4))
    project.run("init")
    merged = settings(project)
    assert list(merged)[:3] == ["model", "sandbox", "permissions"]
    assert merged["model"] == "opus" and merged["permissions"] == mine["permissions"]
    sandbox = merged["sandbox"]
    assert sandbox["enabled"] is True  # ours: stricter than the user's false
    assert sandbox["excludedCommands"] == ["docker *"]  # the user's, kept (told in the output)
    assert sandbox["network"] == {"allowedDomains": ["github.com"]}
    lists = expected_lists(project)
    assert sandbox["filesystem"]["denyRead"] == ["~/secrets", *lists["denyRead"]]
    assert sandbox["filesystem"]["allowWrite"] == ["~/.kube", *lists["allowWrite"]]
    assert sandbox["filesystem"]["denyWrite"] == lists["denyWrite"]
    assert path.read_text().startswith('{\n    "model"')  # the file's own indent
    assert schema_errors(merged) == []


def test_a_weaker_local_override_is_named_not_changed(project: Project) -> None:
    local = project.path / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text('{"sandbox": {"enabled": false}}\n')
    out = project.run("init").stdout
    assert json.loads(local.read_text())["sandbox"]["enabled"] is False  # left to the user
    assert (
        "note: Claude Code: .claude/settings.local.json sets sandbox.enabled: false, which "
        "overrides .claude/settings.json; init leaves it to you"
    ) in out


def test_the_block_goes_to_the_local_file_when_asked(project: Project) -> None:
    out = project.run("init", "--sandbox-settings", "local").stdout
    assert "sandbox" not in settings(project)
    local = settings(project, "settings.local.json")["sandbox"]
    lists = expected_lists(project)
    assert {k: local[k] for k in FLAGS} == FLAGS
    assert local["filesystem"]["denyRead"] == lists["denyRead"]
    assert local["filesystem"]["allowWrite"] == lists["allowWrite"]
    assert local["filesystem"]["denyWrite"][: len(lists["denyWrite"])] == lists["denyWrite"]
    assert "sandbox on (.claude/settings.local.json)" in out


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{\n  "model": "opus",\n  oops\n}\n', ".claude/settings.json:3:3: not valid JSON"),
        ('{"sandbox": []}', ".claude/settings.json: sandbox: expected an object"),
        (
            '{"sandbox": {"filesystem": {"denyWrite": "./x"}}}',
            ".claude/settings.json: sandbox.filesystem.denyWrite: expected a list of paths",
        ),
    ],
)
def test_a_broken_settings_file_is_refused_and_left_as_it_was(
    project: Project, text: str, where: str
) -> None:
    path = project.path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(text)
    result = project.run("init", check=None)
    assert result.returncode != 0
    assert where in result.stderr and "nothing was changed" in result.stderr
    assert path.read_text() == text
    assert not project.root.exists()  # nothing at all was written


def test_a_broken_config_yaml_is_refused_with_its_position(project: Project) -> None:
    project.root.mkdir()
    (project.root / "config.yaml").write_text("profile: strict\nbehaviors: [a\n")
    result = project.run("init", check=None)
    assert result.returncode != 0
    assert ".forge/config.yaml:3:1: invalid YAML" in result.stderr
    assert not (project.path / ".claude").exists()


def test_the_floor_line_is_merged_into_an_existing_config(project: Project) -> None:
    project.root.mkdir()
    config = project.root / "config.yaml"
    config.write_text("# team settings\nprofile: strict\nfloor: own   # chosen\nshadow: false\n")
    project.run("init", "--floor", "off")
    assert config.read_text() == (
        "# team settings\nprofile: strict\nfloor: off   # chosen\nshadow: false\n"
    )
    assert configured_mode(str(project.root)) == "off"


@pytest.mark.parametrize("mode", ["own", "off"])
def test_own_and_off_write_no_sandbox(project: Project, mode: str) -> None:
    out = project.run("init", "--floor", mode, "--harness", "claude-code", "--harness", "codex")
    assert "sandbox" not in settings(project)
    assert not (project.path / ".codex" / "config.toml").exists()
    assert (project.root / "config.yaml").read_text() == f"floor: {mode}\n"
    assert configured_mode(str(project.root)) == mode
    log = project.root / "audit" / "overrides.log"
    if mode == "off":
        assert "note: floor: off: no sandbox holds the floor; the hook alone decides" in out.stdout
        assert active_floor("claude-code", str(project.path), str(project.root), {}) == "off"
        [entry] = [json.loads(line) for line in log.read_text().splitlines()]
        assert (entry["kind"], entry["code"]) == ("diagnostic", "floor_mode")
        assert entry["message"] == (
            "init --floor off: the enforcement floor is off for this project (was none)"
        )
        project.run("init", "--floor", "harness")  # on again: audited too
        last = json.loads(log.read_text().splitlines()[-1])
        assert last["message"].endswith("is harness for this project (was off)")
    else:
        assert "note: floor: own: no harness sandbox is configured" in out.stdout
        assert not log.exists() or log.read_text() == ""  # only turning it off (or on) is
        env = project.env
        assert active_floor("claude-code", str(project.path), str(project.root), env) == "own"


def test_the_output_says_what_changes_for_the_user(project: Project) -> None:
    out = project.run("init").stdout
    notes = [line for line in out.splitlines() if line.startswith("note: Claude Code:")]
    assert notes[0].startswith(
        "note: Claude Code: sandbox on (.claude/settings.json): Bash commands run sandboxed, "
        "writing only to the project and temp; kept read-only: "
    )
    kept, hidden = notes[0].split("kept read-only: ")[1].split("; unreadable: ")
    assert "./.forge" in kept and "~/.ssh" in hidden
    assert notes[1] == (
        "note: Claude Code: a sandboxed command that reaches a host outside "
        "sandbox.network.allowedDomains asks you first (auto mode: the classifier decides); "
        "commands cannot retry outside the sandbox (allowUnsandboxedCommands: false)"
    )
    assert notes[2] == (
        "note: Claude Code: failIfUnavailable: Claude Code refuses to start when the sandbox "
        "cannot; on Linux and WSL2 it needs bubblewrap and socat (Debian/Ubuntu: sudo apt-get "
        "install bubblewrap socat)"
    )


# --- Codex ---------------------------------------------------------------------------------------


def test_codex_gets_workspace_write_and_the_floor_s_other_temp(project: Project) -> None:
    out = project.run("init", "--harness", "codex").stdout
    text = (project.path / ".codex" / "config.toml").read_text()
    assert text == 'sandbox_mode = "workspace-write"\n\n[sandbox_workspace_write]\n' + (
        'writable_roots = ["/var/tmp"]\n'
    )
    assert 'note: Codex: sandbox_mode = "workspace-write" in .codex/config.toml' in out
    # Codex's sandbox is on and the own floor cannot nest inside it: nothing is rewritten
    home = project.env["HOME"]
    assert harness_sandbox_on("codex", str(project.path), home)
    assert active_floor("codex", str(project.path), str(project.root), project.env) == "harness"
    config = project.path / ".codex" / "config.toml"
    config.write_text('sandbox_mode = "danger-full-access"\n')
    assert active_floor("codex", str(project.path), str(project.root), project.env) == "own"


def test_codex_s_config_keeps_comments_and_keys_and_never_loosens(project: Project) -> None:
    path = project.path / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(
        "# my codex\n"
        'model = "gpt-5"  # fast\n'
        'sandbox_mode = "danger-full-access"  # was risky\n'
        "\n"
        "[sandbox_workspace_write]\n"
        "network_access = false\n"
        'writable_roots = ["/data"]\n'
        "\n"
        "[tui]\n"
        "animations = false\n"
    )
    project.run("init", "--harness", "codex")
    assert path.read_text() == (
        "# my codex\n"
        'model = "gpt-5"  # fast\n'
        'sandbox_mode = "workspace-write"  # was risky\n'
        "\n"
        "[sandbox_workspace_write]\n"
        "network_access = false\n"
        'writable_roots = ["/data", "/var/tmp"]\n'
        "\n"
        "[tui]\n"
        "animations = false\n"
    )
    before = path.read_bytes()
    project.run("init", "--harness", "codex")
    assert path.read_bytes() == before


def test_codex_s_stricter_read_only_is_kept(project: Project) -> None:
    path = project.path / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text('sandbox_mode = "read-only"\n')
    project.run("init", "--harness", "codex")
    document = tomllib.loads(path.read_text())
    assert document == {
        "sandbox_mode": "read-only",
        "sandbox_workspace_write": {"writable_roots": ["/var/tmp"]},
    }


def test_a_broken_codex_config_is_refused_with_its_position(project: Project) -> None:
    path = project.path / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text('model = "x"\nsandbox_mode = = 1\n')
    result = project.run("init", "--harness", "codex", check=None)
    assert result.returncode != 0
    assert ".codex/config.toml: not valid TOML (" in result.stderr
    assert "line 2, column 16" in result.stderr and "nothing was changed" in result.stderr
    assert path.read_text() == 'model = "x"\nsandbox_mode = = 1\n'
    assert not (project.path / ".codex" / "hooks.json").exists()


def test_an_inline_sandbox_table_is_refused_not_rewritten(project: Project) -> None:
    path = project.path / ".codex" / "config.toml"
    path.parent.mkdir()
    text = "sandbox_workspace_write = { network_access = false }\n"
    path.write_text(text)
    result = project.run("init", "--harness", "codex", check=None)
    assert result.returncode != 0 and "nothing was changed" in result.stderr
    assert path.read_text() == text


def test_init_reads_home_and_tmpdir_from_the_environment(tmp_path: Path) -> None:
    """The API call takes the environment it plans with (no process-global state)."""
    from forge_policy.ops.init import init

    report = init(tmp_path, tmp_path / ".forge", environ={"HOME": HOME, "TMPDIR": "/tmp"})
    assert report.changed
    block = json.loads((tmp_path / ".claude" / "settings.json").read_text())["sandbox"]
    assert "~/.ssh" in block["filesystem"]["denyRead"]
    assert os.path.isdir(tmp_path / ".forge" / "runtime")
