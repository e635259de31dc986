"""``forge-policy config [show] [--origin] [--json]`` through the real executable, and the hook
reading the layers (issue 25, defect 4: a profile, a toggle and an exception from a file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_support import Project, decision_of, tool_event


@pytest.fixture
def project(tmp_path: Path) -> Project:
    home = tmp_path / "home"
    home.mkdir()
    managed = tmp_path / "managed"
    managed.mkdir()
    project = Project(
        tmp_path / "p", HOME=str(home), FORGE_MANAGED_DIR=str(managed), FORGE_WORKER="off"
    )
    project.root.mkdir(parents=True)
    return project


def managed_dir(project: Project) -> Path:
    return Path(project.env["FORGE_MANAGED_DIR"])


def test_config_shows_the_effective_settings_and_their_origins(project: Project) -> None:
    (project.root / "config.yaml").write_text(
        "floor: off\nprofile: strict\nbehaviors:\n  search-first: {enabled: false}\n"
        "exceptions:\n  - {behavior: risky-commands, match: {command: npm install left-pad}, "
        "until: 2099-12-31, reason: vendored}\n"
    )
    (managed_dir(project) / "config.yaml").write_text(
        "behaviors:\n  agent-shield-ask: {level: soft_block, locked: true}\n"
    )
    (project.root / "config.local.yaml").write_text(
        "behaviors:\n  agent-shield-ask: {level: nudge}\n"
    )
    shown = project.run("config").stdout
    assert "profile:   strict\n" in shown
    assert "  search-first:\n    enabled:    false\n" in shown
    assert "risky-commands: command 'npm install left-pad', until 2099-12-31: vendored" in shown
    managed = managed_dir(project) / "config.yaml"
    assert f"level:      soft_block [held by the lock at {managed}:2]" in shown

    origin = project.run("config", "--origin").stdout
    assert "profile:   strict   (.forge/config.yaml:2)" in origin
    assert "enabled:    false   (.forge/config.yaml:4)" in origin
    assert f"(held by the lock at {managed}:2; .forge/config.local.yaml:2 asks nudge)" in origin
    assert project.run("config", "show", "--origin").stdout == origin

    data = project.json("config", "--origin")
    assert data["profile"] == "strict"
    assert data["behaviors"]["agent-shield-ask"]["effective"]["level"] == "soft_block"
    assert data["origins"]["behaviors.search-first.enabled"].endswith("config.yaml:4")
    assert data["exceptions"][0]["match"] == {"command": "npm install left-pad"}
    env = {**project.env, "FORGE_PROFILE": "minimal"}
    project.env = env
    assert project.json("config", "--origin")["origins"]["profile"] == "FORGE_PROFILE"


def test_config_with_no_layer_says_everything_is_built_in(project: Project) -> None:
    shown = project.run("config").stdout
    assert "behaviors: (the catalog's own settings)" in shown
    assert "files: none (every setting is built-in)" in shown


def test_a_broken_layer_is_one_message_per_problem_exit_2(project: Project) -> None:
    config = project.root / "config.yaml"
    config.write_text("profile: loud\nbehaviors:\n  search-first: {enabeld: false}\n")
    result = project.run("config", check=2)
    assert result.stderr.splitlines() == [
        f"forge-policy: {config}:1: profile: expected one of minimal, standard, strict, got 'loud'",
        f"{config}:3: behaviors.search-first.enabeld: unknown key (did you mean 'enabled'?): "
        "expected enabled, level, escalation, tuning, locked",
    ]


def test_the_hook_reads_the_profile_toggles_and_exceptions_of_the_layers(
    project: Project,
) -> None:
    """Issue 25, defect 4: before the layers, only FORGE_PROFILE set the profile and nothing
    but a catalog fork switched a behavior off."""
    (project.root / "config.yaml").write_text(
        "floor: off\n"
        "behaviors:\n  no-destructive-git: {enabled: false}\n"
        "exceptions:\n  - {behavior: risky-commands, match: {command: npm install left-pad}, "
        "until: 2099-12-31, reason: vendored}\n"
    )
    # no-destructive-git (a hard block) is off; risky-commands still asks
    assert decision_of(project.hook(tool_event("Bash", command="git reset --hard"))) == "ask"
    assert decision_of(project.hook(tool_event("Bash", command="npm install left-pad"))) is None
    blocked = project.hook(tool_event("Bash", command="npm install left-pad; npm i x"))
    assert decision_of(blocked) in ("deny", "ask")
    audit = project.root / "audit" / "overrides.log"
    kinds = [json.loads(line)["kind"] for line in audit.read_text().splitlines()]
    assert kinds.count("exception") == 1
    assert not (project.root / "behaviors").exists()  # no fork


def test_a_warm_hook_parses_no_layer_yaml(project: Project) -> None:
    """The layers on the hook's path: the second call reads them from the sealed cache."""
    (project.root / "config.yaml").write_text(
        "floor: off\nbehaviors:\n  search-first: {enabled: false}\n"
    )
    env = {**project.env, "PYTHONPROFILEIMPORTTIME": "1"}
    project.env = env
    cold = project.run("hook", input=json.dumps(tool_event("Bash", command="ls"))).stderr
    assert "ruamel" in cold
    warm = project.run("hook", input=json.dumps(tool_event("Bash", command="ls"))).stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in warm.splitlines() if "|" in line}
    assert not {m for m in imported if m.split(".")[0] in ("ruamel", "argparse", "cryptography")}
    assert "forge_policy.config.layers" in imported  # the measurement saw the layers
    assert (project.root / "runtime" / "settings-cache.json").exists()


def test_validate_lists_the_configuration_warnings(project: Project) -> None:
    (project.root / "config.yaml").write_text(
        "floor: off\nprofil: strict\nbehaviors:\n  no-such-rule: {enabled: false}\n"
    )
    out = project.run("validate").stdout.splitlines()
    config = project.root / "config.yaml"
    assert f"config: warning: {config}:2: profil: unknown key, ignored" in out
    assert (
        f"config: warning: {config}:4: behaviors.no-such-rule: no such behavior in the catalog"
    ) in out
    assert project.json("validate")["config_notes"][0].endswith("profil: unknown key, ignored")
