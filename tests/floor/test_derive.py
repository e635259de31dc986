"""The floor derived from the catalog (SPEC §13, §7): each source lands in it, the writable set
leaves governance out, a behavior's literal path rules add to it, and the memo is refreshed
when a source changes. Real files, a real ``git``, the real built-in catalog."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import forge_policy
from forge_policy import builtin_catalog, load_catalog
from forge_policy.catalog.cache import BUILTIN_DIR, RACY_NS
from forge_policy.catalog.catalog import Catalog
from forge_policy.facts.files import SECRET_HOME_PLACES, classify
from forge_policy.floor.derive import floor_for
from forge_policy.floor.model import Floor


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    """The built-in catalog, parsed once for the module (a parse takes a second)."""
    return builtin_catalog()


def _git(project: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(project), *args], check=True, capture_output=True)


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A project with .forge, .claude/settings.json, a git repository with a hook, a planted
    .env and id_rsa; a home folder with ~/.ssh and ~/.aws/credentials."""
    project, home, temp = tmp_path / "project", tmp_path / "home", tmp_path / "tmp"
    for folder in (project / ".forge", project / ".claude", project / "src", temp):
        folder.mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text("{}\n")
    _git(project, "init", "-q")
    (project / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\n")
    (project / ".env").write_text("TOKEN=x\n")
    (project / ".env.example").write_text("TOKEN=\n")
    (project / "src" / "id_rsa").write_text("key\n")
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("key\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("[default]\n")
    return project, home, {"HOME": str(home), "TMPDIR": str(temp)}


def _reasons(entries: tuple[object, ...]) -> dict[str, str]:
    return {e.path: e.reason for e in entries}  # type: ignore[attr-defined]


def test_each_source_lands_in_the_floor(
    world: tuple[Path, Path, dict[str, str]], catalog: Catalog
) -> None:
    project, home, env = world
    _git(project, "config", "core.hooksPath", ".githooks")
    floor = floor_for(str(project), env, catalog=catalog)
    written, hidden = _reasons(floor.never_written), _reasons(floor.never_read)
    assert written[f"{project}/.forge"] == "protect-governance"
    assert written[f"{project}/.claude"] == "protect-governance"  # the folder of settings.json
    assert written[f"{home}/.claude"] == "protect-governance"  # the user-level one
    assert written[f"{project}/.git/hooks"] == "git"
    assert written[f"{project}/.githooks"] == "git"  # core.hooksPath
    assert written[f"{project}/.git/config"] == "git"
    assert written["/etc/claude-code"] == "managed"
    package = os.path.dirname(os.path.realpath(forge_policy.__file__))
    assert any(p.covers(package) and p.reason == "installation" for p in floor.never_written)
    assert hidden[f"{project}/.env"] == "agent-shield-ask"
    assert hidden[f"{project}/src/id_rsa"] == "agent-shield"
    assert hidden[f"{home}/.ssh"] == "agent-shield"
    assert hidden[f"{home}/.aws"]
    assert f"{project}/.env.example" not in hidden  # a template stays readable
    assert floor.reads_allowed(f"{project}/.git/config")  # git reads it for every command
    assert not floor.reads_allowed(f"{home}/.aws/credentials")
    assert not floor.reads_allowed(f"{home}/.ssh/id_ed25519")
    assert floor.reads_allowed(f"{project}/src/main.py")
    assert Floor.from_json(floor.to_json()) == floor


def test_the_writable_set_leaves_governance_out(
    world: tuple[Path, Path, dict[str, str]], catalog: Catalog
) -> None:
    project, home, env = world
    floor = floor_for(str(project), env, catalog=catalog)
    assert {p.reason for p in floor.writable} == {"project", "temp"}
    assert floor.writes_allowed(f"{project}/src/app.py")
    assert floor.writes_allowed(f"{env['TMPDIR']}/x") and floor.writes_allowed("/var/tmp/x")
    kept = (".forge/behaviors/index.yaml", ".claude/settings.local.json",
            ".git/hooks/post-checkout", ".git/config", ".codex/hooks.json", ".env")  # fmt: skip
    for path in kept:
        assert not floor.writes_allowed(f"{project}/{path}"), path
    for entry in (*floor.never_written, *floor.never_read):
        assert not floor.writes_allowed(entry.path), entry
    assert not floor.writes_allowed(f"{home}/.ssh/config")  # (home is under /tmp here)
    assert not floor.writes_allowed("/srv/notes.txt")
    assert not floor.writes_allowed("/etc/passwd")


def test_every_home_place_belongs_to_a_secret_family() -> None:
    for name in SECRET_HOME_PLACES:
        path = f"/h/{name}"
        assert classify(path) or (classify(path + "/id_rsa") and classify(path + "/x")), name


def test_agent_shield_switched_off_leaves_its_families_out(
    world: tuple[Path, Path, dict[str, str]], catalog: Catalog
) -> None:
    project, _home, env = world
    catalog = catalog.with_enabled({"agent-shield": False, "agent-shield-ask": False})
    floor = floor_for(str(project), env, catalog=catalog)
    assert floor.never_read == ()
    assert floor.writes_allowed(f"{project}/.env")  # no longer hidden; the project's to write


RULES = """\
schema_version: "1"
id: {id}
name: {id}
description: a custom path rule
category: core
scope: session
policy:
  triggers:
    - event: PreToolUse
      matcher: "{matcher}"
      logic: {logic}
      conditions:
{conditions}
  enforcement:
    default_level: {level}
  recovery:
    hint: leave it alone
"""


def _small_catalog(folder: Path) -> None:
    """A catalog of agent-shield alone (copied from the built-in one), to add rules to."""
    folder.mkdir(parents=True)
    shutil.copytree(Path(BUILTIN_DIR) / "agent-shield", folder / "agent-shield")
    (folder / "index.yaml").write_text(
        'schema_version: "1"\nbehaviors:\n  - id: agent-shield\n    enabled: true\n'
    )


def _rule(catalog: Path, rule_id: str, matcher: str, conditions: list[str], *,
          level: str = "hard_block", logic: str = "all") -> None:  # fmt: skip
    body = "\n".join(f"        - {c}" for c in conditions)
    folder = catalog / rule_id
    folder.mkdir()
    text = RULES.format(id=rule_id, matcher=matcher, logic=logic, conditions=body, level=level)
    (folder / "behavior.yaml").write_text(text)
    with (catalog / "index.yaml").open("a") as index:
        index.write(f"  - id: {rule_id}\n    enabled: true\n")


def test_a_custom_behavior_adds_its_literal_paths(
    world: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    project, home, env = world
    catalog = tmp_path / "catalog"
    _small_catalog(catalog)
    path = "{field: file_path, operator: %s, value: %s}"
    _rule(catalog, "no-vendor-edits", "Write|Edit|MultiEdit", [path % ("starts_with", "vendor/")])
    _rule(catalog, "no-prod-reads", "Read",
          [path % ("in", '["~/prod.key", "/srv/prod.env"]'), path % ("glob", "/srv/vault/**")],
          logic="any")  # fmt: skip
    _rule(catalog, "no-lock-writes", "Write", [path % ("equals", "package-lock.json")])
    # forms that do not count: a regex, a warning, a path that must hold with something else,
    # another tool in the matcher, a glob with a wildcard inside
    _rule(catalog, "regex-rule", "Write", [path % ("regex_match", "'^/opt/'")])
    _rule(catalog, "warning-rule", "Write", [path % ("equals", "/opt/warned")], level="warning")
    content = "{field: content, operator: contains, value: x}"
    _rule(catalog, "two-conditions", "Write", [path % ("equals", "/opt/both"), content])
    _rule(catalog, "bash-too", "Write|Bash", [path % ("equals", "/opt/bash")])
    _rule(catalog, "wild-glob", "Write", [path % ("glob", "/opt/*.txt")])
    _rule(catalog, "dot-prefix", "Read", [path % ("starts_with", "'.'")])  # a prefix, not a folder
    _rule(catalog, "root-prefix", "Write", [path % ("starts_with", "/")])
    floor = floor_for(str(project), env, catalog=load_catalog(catalog))
    written, hidden = _reasons(floor.never_written), _reasons(floor.never_read)
    assert written[f"{project}/vendor"] == "no-vendor-edits"
    assert written[f"{project}/package-lock.json"] == "no-lock-writes"
    assert hidden[f"{home}/prod.key"] == "no-prod-reads"
    assert hidden["/srv/prod.env"] == "no-prod-reads"
    assert hidden["/srv/vault"] == "no-prod-reads"
    assert not floor.writes_allowed(f"{project}/vendor/lib.js")
    assert floor.writes_allowed(f"{project}/vendored.js")
    assert not any(p.path.startswith("/opt") for p in (*floor.never_written, *floor.never_read))
    assert floor.reads_allowed(f"{project}/src/main.py")
    assert floor.writes_allowed(f"{project}/src/main.py")


def _settle(*paths: Path) -> None:
    """Wait until the sources were last changed longer ago than the racy window (the memo
    trusts no stat younger than that)."""
    newest = max(max(os.stat(p).st_mtime_ns, os.stat(p).st_ctime_ns) for p in paths)
    wait = (newest + RACY_NS - time.time_ns()) / 1e9 + 0.05
    if wait > 0:
        time.sleep(wait)


def test_the_memo_is_refreshed_when_a_source_changes(
    world: tuple[Path, Path, dict[str, str]], catalog: Catalog
) -> None:
    project, _home, env = world
    _settle(project, project / "src", project / ".git", project / ".git" / "config")
    first = floor_for(str(project), env, catalog=catalog)
    assert floor_for(str(project), env, catalog=catalog) is first  # nothing changed: reused
    (project / "src" / ".env.production").write_text("TOKEN=y\n")  # a scanned folder changes
    second = floor_for(str(project), env, catalog=catalog)
    assert second is not first
    assert f"{project}/src/.env.production" in _reasons(second.never_read)
    _git(project, "config", "core.hooksPath", "hooks2")  # git's configuration changes
    third = floor_for(str(project), env, catalog=catalog)
    assert f"{project}/hooks2" in _reasons(third.never_written)
    other = catalog.with_enabled({"agent-shield-ask": False})  # another catalog
    assert f"{project}/.env" not in _reasons(floor_for(str(project), env, catalog=other).never_read)


def test_the_default_catalog_is_the_project_one(
    world: tuple[Path, Path, dict[str, str]],
) -> None:
    project, _home, env = world
    catalog = project / ".forge" / "behaviors"
    _small_catalog(catalog)
    _rule(catalog, "no-dist-writes", "Write", ["{field: file_path, operator: equals, value: dist}"])
    floor = floor_for(str(project), env)
    assert _reasons(floor.never_written)[f"{project}/dist"] == "no-dist-writes"
