"""``facts.governance_changes`` and ``protect-governance``: what an agent may not change in its
own governance, and what it may still read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import forge_policy as fp
from forge_policy.facts.governance import changes
from forge_policy.model import Event

from .governance_cases import ALLOW, BLOCK, BLOCK_WITH_FORGE_ROOT, HOME, PROJECT

ENV = {"HOME": HOME}


@pytest.fixture(autouse=True)
def home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", HOME)  # ~ in the cases


def bash(command: str, cwd: str = PROJECT) -> Event:
    return Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": command}, cwd=cwd)


def tool(name: str, cwd: str = PROJECT, **tool_input: object) -> Event:
    return Event("PreToolUse", "s", tool_name=name, tool_input=tool_input, cwd=cwd)


@pytest.mark.parametrize("command", BLOCK)
def test_a_governance_change_is_listed(command: str) -> None:
    assert changes(bash(command), ENV)


@pytest.mark.parametrize("command", BLOCK_WITH_FORGE_ROOT)
def test_forge_root_elsewhere_is_governance_too(command: str) -> None:
    assert changes(bash(command), {**ENV, "FORGE_ROOT": "/work/gov"})
    if "FORGE_ROOT" not in command:  # without FORGE_ROOT, /work/gov is an ordinary folder
        assert changes(bash(command), ENV) == []


@pytest.mark.parametrize("command", ALLOW)
def test_reads_and_look_alikes_are_not_changes(command: str) -> None:
    assert changes(bash(command), ENV) == []


def test_the_changes_name_what_and_where() -> None:
    found = changes(bash("cd .forge && rm -rf audit; forge-policy override x --session s"), ENV)
    assert found == ["rm /work/proj/.forge/audit", "forge-policy override"]


def test_the_behavior_store_and_catalog_variables_are_governance() -> None:
    env = {**ENV, "FORGE_BEHAVIORS_DIR": "/etc/rules", "FORGE_STORE": "sqlite:/var/s.db"}
    assert changes(bash("rm /var/s.db"), env) and changes(bash("mv /etc/rules /tmp"), env)
    assert changes(bash("rm /var/s.db"), ENV) == []


def test_a_symlink_into_the_governance_is_followed(tmp_path: Path) -> None:
    (tmp_path / ".forge" / "audit").mkdir(parents=True)
    (tmp_path / "innocent").symlink_to(tmp_path / ".forge" / "audit")
    assert changes(bash("rm -rf innocent/*", cwd=str(tmp_path)), ENV)
    assert changes(bash("echo x > innocent/overrides.log", cwd=str(tmp_path)), ENV)


@pytest.mark.parametrize(
    ("name", "key", "path"),
    [
        ("Write", "file_path", ".forge/behaviors/index.yaml"),
        ("Edit", "file_path", f"{PROJECT}/.forge/behaviors/search-first/behavior.yaml"),
        ("MultiEdit", "file_path", "/elsewhere/.forge/audit/overrides.log"),
        ("NotebookEdit", "notebook_path", ".forge/x.ipynb"),
        ("Write", "file_path", f"{HOME}/.cache/forge-policy/catalog-cache-0.json"),
        ("write_file", "file_path", ".forge/behaviors/index.yaml"),
        ("mcp__filesystem__move_file", "source", ".forge"),
        ("mcp__filesystem__write_file", "path", "/work/proj/.claude/settings.json"),
    ],
)
def test_path_tools_on_governance_files(name: str, key: str, path: str) -> None:
    assert changes(tool(name, **{key: path, "content": "x"}), ENV) == [
        f"{name} {os.path.normpath(os.path.join(PROJECT, path))}"
    ]


@pytest.mark.parametrize(
    ("name", "tool_input"),
    [
        ("Read", {"file_path": ".forge/audit/overrides.log"}),
        ("Grep", {"pattern": "x", "path": ".forge"}),
        ("Write", {"file_path": "src/forge.py", "content": "x"}),
        ("Edit", {"file_path": "docs/.forge.md", "old_string": "a", "new_string": "b"}),
        ("mcp__filesystem__read_file", {"path": ".forge/audit/overrides.log"}),
        ("mcp__filesystem__write_file", {"path": "src/app.py", "content": "x"}),
    ],
)
def test_reads_and_other_files_are_not_changes(name: str, tool_input: dict[str, object]) -> None:
    assert changes(tool(name, **tool_input), ENV) == []


# --- the hook settings ------------------------------------------------------------------------

HOOK = {"type": "command", "command": "/venv/bin/forge-policy hook", "timeout": 30}
SETTINGS = {
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "*", "hooks": [HOOK]}],
        "Stop": [{"hooks": [HOOK]}],
    },
}


@pytest.fixture
def settings(tmp_path: Path) -> Path:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(SETTINGS, indent=2))
    return path


def edit(settings: Path, name: str, **tool_input: object) -> list[str]:
    return changes(tool(name, cwd=str(settings.parent.parent), file_path=str(settings),
                        **tool_input), ENV)  # fmt: skip


def with_(**changes_: object) -> str:
    return json.dumps({**SETTINGS, **changes_}, indent=2)


def on(path: Path, found: list[str], tool: str = "Write") -> bool:
    """Whether ``found`` names a change to ``path`` by ``tool``, and nothing else (each entry
    says what changed after the path: ``"Write /p/.claude/settings.json: hooks.Stop"``)."""
    return bool(found) and all(item.startswith(f"{tool} {path}: ") for item in found)


def test_a_settings_write_that_keeps_the_hooks_is_not_a_change(settings: Path) -> None:
    # issue 23: only harmless keys may change (model, display); permissions and other hooks
    # are enforcement (SPEC §7), so the earlier harmless twins below are changes now
    keep = with_(model="x", outputStyle="Explanatory")
    assert edit(settings, "Write", content=keep) == []
    deny = with_(permissions={"allow": ["Bash(ls:*)"], "deny": ["Bash(curl:*)"]})
    assert edit(settings, "Write", content=deny) == []  # a deny rule only refuses more
    widened = with_(permissions={"allow": ["Bash(ls:*)", "Bash(make:*)"]}, model="x")
    assert edit(settings, "Write", content=widened) == [f"Write {settings}: permissions.allow"]
    other = {
        **SETTINGS["hooks"],
        "PostToolUse": [{"hooks": [{"type": "command", "command": "echo"}]}],
    }
    assert edit(settings, "Write", content=with_(hooks=other)) == [
        f"Write {settings}: hooks.PostToolUse"
    ]


@pytest.mark.parametrize(
    "content",
    [
        json.dumps({"permissions": {}}),  # the hooks dropped
        with_(hooks={"PreToolUse": SETTINGS["hooks"]["PreToolUse"]}),  # Stop's dropped
        with_(hooks={**SETTINGS["hooks"], "PreToolUse": [{"matcher": "Read", "hooks": [HOOK]}]}),
        with_(hooks={**SETTINGS["hooks"], "Stop": [{"hooks": [{**HOOK, "timeout": 0.001}]}]}),
        with_(disableAllHooks=True),
        with_(env={"FORGE_DISABLE": "dangerous-commands"}),
        with_(env={"FORGE_PROFILE": "minimal"}),
        "{ not json",
        "",
    ],
)
def test_a_settings_write_that_weakens_the_hooks_is_a_change(settings: Path, content: str) -> None:
    assert on(settings, edit(settings, "Write", content=content))


def test_settings_edits_are_applied_to_the_current_file(settings: Path) -> None:
    text = settings.read_text()
    # issue 23: widening an allow rule changes permissions
    assert edit(settings, "Edit", old_string='"Bash(ls:*)"', new_string='"Bash(*)"') == [
        f"Edit {settings}: permissions.allow"
    ]
    shorter = edit(settings, "Edit", old_string='"timeout": 30', new_string='"timeout": 1',
                   replace_all=True)  # fmt: skip
    assert on(settings, shorter, "Edit")
    hook_line = next(line for line in text.splitlines() if "forge-policy hook" in line)
    assert on(settings, edit(settings, "Edit", old_string=hook_line,
                             new_string='"command": "true",'), "Edit")  # fmt: skip
    assert on(settings, edit(settings, "MultiEdit", edits=[
        {"old_string": '"Bash(ls:*)"', "new_string": '"Bash(git:*)"'},
        {"old_string": "forge-policy hook", "new_string": "true"},
    ]), "MultiEdit")  # fmt: skip
    # an old_string that is not there fails closed since issue 23 (Claude Code's Edit matches
    # more than the exact text: curly quotes are normalized)
    assert on(settings, edit(settings, "Edit", old_string="absent", new_string="x"), "Edit")


def test_a_new_settings_file_may_be_written(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.local.json"
    assert changes(tool("Write", file_path=str(path), content='{"model": "x"}'), ENV) == []
    # issue 23: a new file that adds hooks or permissions changes enforcement
    assert on(path, changes(tool("Write", file_path=str(path), content=with_()), ENV))


def test_the_serve_http_hook_counts_as_forge_policy(settings: Path) -> None:
    http = {"type": "http", "url": "http://127.0.0.1:8765/hook",
            "headers": {"Authorization": "Bearer $FORGE_SERVE_TOKEN"}}  # fmt: skip
    settings.write_text(with_(hooks={"PreToolUse": [{"matcher": "*", "hooks": [http]}]}))
    assert on(settings, edit(settings, "Write", content=json.dumps({})))


# --- the behavior --------------------------------------------------------------------------------


def test_protect_governance_is_first_hard_and_never_bypassed() -> None:
    catalog = fp.builtin_catalog()
    behavior = catalog.behaviors[0]
    assert behavior.id == "protect-governance"
    assert behavior.default_level.label == "hard_block" and behavior.bypass == "never"


@pytest.mark.parametrize("command", ["forge-policy off dangerous-commands", "rm -rf .forge"])
def test_the_block_tells_the_agent_to_ask_the_user(command: str) -> None:
    evaluator = fp.Evaluator(fp.builtin_catalog(), clock=lambda: 1000.0)
    decision = evaluator.evaluate(bash(command))
    assert decision.blocking is not None
    assert decision.blocking.behavior_id == "protect-governance"
    assert "from their own shell" in decision.blocking.message
    assert "cannot be overridden" in decision.blocking.message


@pytest.mark.parametrize("profile", ["minimal", "standard", "strict"])
def test_bypass_never_behaviors_hold_in_every_profile(profile: str) -> None:
    evaluator = fp.Evaluator(fp.builtin_catalog(), clock=lambda: 1000.0, profile=profile)
    off = evaluator.evaluate(bash("forge-policy off no-model-attribution"))
    assert off.blocking is not None and off.blocking.behavior_id == "protect-governance"
    commit = evaluator.evaluate(bash('git commit -m "feat: x" -m "Co-Authored-By: Claude"'))
    assert commit.blocking is not None
    assert commit.blocking.behavior_id == "no-model-attribution"


def test_forge_disable_cannot_switch_it_off(tmp_path: Path) -> None:
    from forge_policy.config.env import Config

    env = {"FORGE_ROOT": str(tmp_path / ".forge"), "FORGE_DISABLE": "protect-governance",
           "FORGE_STORE": "memory", "HOME": HOME}  # fmt: skip
    evaluator = Config.from_env(env, cwd=str(tmp_path)).build_evaluator()
    decision = evaluator.evaluate(bash("rm -rf .forge", cwd=str(tmp_path)))
    assert decision.blocking is not None
    assert decision.blocking.behavior_id == "protect-governance"


def test_many_paths_in_one_folder_are_resolved_once_per_folder(tmp_path: Path) -> None:
    """The symlink check resolves each folder once per event: 5,000 deletes in one folder
    used to pass the 4,096-resolution cap, so the fact was incomplete and protect-governance
    refused the call (fail closed) although nothing of the governance was touched."""
    from forge_policy.facts import FactRegistry, Partial
    from forge_policy.facts.governance import provide_governance_changes

    facts = FactRegistry()  # a generous budget: this test is about the cap, not the time
    facts.register("changes", provide_governance_changes, budget_ms=60_000)
    (tmp_path / "build").mkdir()
    chain = " && ".join(f"rm -rf build/{i}" for i in range(5000))
    event = Event(
        "PreToolUse", "s", tool_name="Bash", tool_input={"command": chain}, cwd=str(tmp_path)
    )
    found, _ = facts["changes"].evaluate(event)
    assert found == [] and not isinstance(found, Partial)
    (tmp_path / "build" / "7").symlink_to(tmp_path / ".forge")  # a link among them still counts
    found, _ = facts["changes"].evaluate(event)
    assert found == [f"rm {tmp_path}/build/7"]
