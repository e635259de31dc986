"""Configuration from FORGE_* (SPEC §10) and FORGE_DISABLE bypasses (SPEC §7)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import Clock, behavior_yaml, write_catalog

import forge_policy as fp
from forge_policy.audit.lazy import LazyJsonlSink
from forge_policy.config.env import Config
from forge_policy.engine.bypass import Bypass
from forge_policy.errors import ConfigError
from forge_policy.stores.file import FileStore


def env(**values: str) -> dict[str, str]:
    return dict(values)


def test_defaults(tmp_path: Path) -> None:
    config = Config.from_env({}, cwd=str(tmp_path))
    assert config.root == str(tmp_path / ".forge")
    assert config.project_dir == str(tmp_path)
    assert (config.store, config.ttl, config.override_window, config.lock_timeout) == (
        "file",
        86400.0,
        60.0,
        15.0,
    )
    assert (config.profile, config.disable, config.on_error) == ("standard", {}, "deny")
    assert config.catalog_dir is None  # no .forge/behaviors: the built-in catalog


def test_claude_project_dir_wins_over_cwd_and_anchors_relative_paths(tmp_path: Path) -> None:
    project = tmp_path / "project"
    config = Config.from_env(
        env(CLAUDE_PROJECT_DIR=str(project), FORGE_ROOT="state", FORGE_BEHAVIORS_DIR="rules"),
        cwd="/elsewhere",
    )
    assert config.root == str(project / "state")
    assert config.behaviors_dir == str(project / "rules")
    assert config.catalog_dir == str(project / "rules")  # explicit: used even if missing


def test_absolute_and_home_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert Config.from_env(env(FORGE_ROOT="/abs/root"), cwd="/p").root == "/abs/root"
    assert Config.from_env(env(FORGE_ROOT="~/f"), cwd="/p").root == str(tmp_path / "f")


def test_project_behaviors_folder_is_used_when_present(tmp_path: Path) -> None:
    (tmp_path / ".forge" / "behaviors").mkdir(parents=True)
    assert Config.from_env({}, cwd=str(tmp_path)).catalog_dir == str(
        tmp_path / ".forge" / "behaviors"
    )


def test_empty_values_count_as_unset() -> None:
    config = Config.from_env(env(FORGE_PROFILE="", FORGE_STORE=" ", FORGE_LOCK_TIMEOUT=""), "/p")
    assert (config.profile, config.store, config.lock_timeout) == ("standard", "file", 15.0)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("file", "file"),
        ("memory", "memory"),
        ("sqlite:state.db", "sqlite:/p/state.db"),
        ("sqlite:/abs/s.db", "sqlite:/abs/s.db"),
        ("sqlite:", "sqlite:"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
    ],
)
def test_store_specs(spec: str, expected: str) -> None:
    assert Config.from_env(env(FORGE_STORE=spec), cwd="/p").store == expected


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("FORGE_STORE", "redis://x", "FORGE_STORE: unknown store 'redis://x'"),
        ("FORGE_SESSION_TTL_SECONDS", "0", "FORGE_SESSION_TTL_SECONDS: must be greater than 0"),
        ("FORGE_SESSION_TTL_SECONDS", "day", "FORGE_SESSION_TTL_SECONDS: expected a number"),
        ("FORGE_OVERRIDE_WINDOW_SECONDS", "-1", "FORGE_OVERRIDE_WINDOW_SECONDS: must be 0 or"),
        ("FORGE_OVERRIDE_WINDOW_SECONDS", "nan", "FORGE_OVERRIDE_WINDOW_SECONDS: expected a fin"),
        ("FORGE_LOCK_TIMEOUT", "inf", "FORGE_LOCK_TIMEOUT: expected a finite number"),
        ("FORGE_PROFILE", "strcit", "FORGE_PROFILE: unknown value 'strcit': expected minimal, "),
        ("FORGE_ON_ERROR", "ignore", "FORGE_ON_ERROR: unknown value 'ignore'"),
        ("FORGE_DISABLE", "search-first,Bad_Id", "FORGE_DISABLE: invalid behavior id 'Bad_Id'"),
    ],
)
def test_invalid_values_name_the_variable_in_one_line(name: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        Config.from_env({name: value}, cwd="/p")
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_near_miss_profile_gets_a_suggestion() -> None:
    with pytest.raises(ConfigError, match=r"did you mean 'strict'\?"):
        Config.from_env(env(FORGE_PROFILE="strcit"), cwd="/p")


def test_postgres_without_the_extra_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if the extra were not installed
    config = Config.from_env(
        env(FORGE_STORE="postgresql://u@h/db", FORGE_AUDIT="postgresql://u@h/db"), str(tmp_path)
    )
    with pytest.raises(ConfigError, match=r"FORGE_STORE: .*pip install 'forge-policy\[postgres\]'"):
        config.open_store()
    with pytest.raises(ConfigError, match=r"FORGE_AUDIT: .*pip install 'forge-policy\[postgres\]'"):
        config.open_audit()


def test_disable_list_and_seed_aliases() -> None:
    config = Config.from_env(
        env(FORGE_DISABLE=" search-first, ,verify-before-done ", DISABLE_AGENT_SHIELD="true"), "/p"
    )
    assert config.disable == {
        "agent-shield": "DISABLE_AGENT_SHIELD",
        "agent-shield-ask": "DISABLE_AGENT_SHIELD",
        "agent-shield-startup": "DISABLE_AGENT_SHIELD",
        "search-first": "FORGE_DISABLE",
        "verify-before-done": "FORGE_DISABLE",
    }
    assert Config.from_env(env(DISABLE_TOKEN_ADVISOR="false"), "/p").disable == {}


def test_build_evaluator_wires_file_store_lazy_audit_and_settings(tmp_path: Path) -> None:
    clock = Clock()
    config = Config.from_env(
        env(
            FORGE_PROFILE="strict",
            FORGE_SESSION_TTL_SECONDS="600",
            FORGE_OVERRIDE_WINDOW_SECONDS="30",
            FORGE_LOCK_TIMEOUT="0.5",
        ),
        cwd=str(tmp_path),
    )
    ev = config.build_evaluator(clock=clock)
    assert isinstance(ev.store, FileStore)
    assert ev.store.path == str(tmp_path / ".forge" / "runtime" / "state.json")
    assert ev.store.lock_timeout == 0.5
    assert isinstance(ev.audit, LazyJsonlSink)
    assert ev.audit.path == str(tmp_path / ".forge" / "audit" / "overrides.log")
    assert not ev.audit.opened
    assert (ev.settings.profile, ev.settings.ttl, ev.settings.override_window) == (
        "strict",
        600.0,
        30.0,
    )
    assert ev.clock is clock
    assert ev.catalog.ids == fp.builtin_catalog().ids


def test_sqlite_and_memory_stores(tmp_path: Path) -> None:
    from forge_policy.stores.sqlite import SQLiteStore

    sqlite = Config.from_env(env(FORGE_STORE="sqlite:"), cwd=str(tmp_path)).open_store()
    assert isinstance(sqlite, SQLiteStore)
    sqlite.close()
    memory = Config.from_env(env(FORGE_STORE="memory"), cwd=str(tmp_path)).open_store()
    assert isinstance(memory, fp.MemoryStore)


def test_forge_disable_switches_behaviors_off_except_bypass_never(tmp_path: Path) -> None:
    never = behavior_yaml("guarded", default_level="hard_block").replace(
        "    default_level: hard_block", "    default_level: hard_block\n    bypass: never"
    )
    folder = write_catalog(
        tmp_path / ".forge" / "behaviors", {"guarded": never, "plain": behavior_yaml("plain")}
    )
    config = Config.from_env(env(FORGE_DISABLE="guarded,plain,ghost"), cwd=str(tmp_path))
    assert config.catalog_dir == str(folder)
    ev = config.build_evaluator()
    assert (ev.catalog["guarded"].enabled, ev.catalog["plain"].enabled) == (True, False)
    bypass = Bypass(config.load_catalog(), config.disable)
    assert bypass.notes == [
        "FORGE_DISABLE: guarded cannot be bypassed (bypass: never); it stays on",
        "FORGE_DISABLE: no behavior 'ghost' in the catalog; nothing to bypass",
    ]


def test_a_bypass_is_recorded_only_where_it_mattered_and_changes_nothing(tmp_path: Path) -> None:
    rm = "    - event: PreToolUse\n      matcher: Bash\n      conditions:\n"
    rm += "        - {field: command, operator: contains, value: rm}\n"
    folder = write_catalog(tmp_path / "c", {"no-rm": behavior_yaml("no-rm", triggers=rm)})
    ev = fp.Evaluator(fp.load_catalog(folder), clock=Clock(), disable={"no-rm": "FORGE_DISABLE"})

    def bash(command: str) -> fp.Event:
        return fp.Event("PreToolUse", "s1", tool_name="Bash", tool_input={"command": command})

    def bypasses() -> list[dict[str, Any]]:
        return [r for r in ev.audit.records() if r["kind"] == "bypass"]

    assert ev.evaluate(bash("ls")).bypasses == () and bypasses() == []
    assert ev.evaluate(fp.Event("Stop", "s1")).bypasses == () and bypasses() == []
    decision = ev.evaluate(bash("rm -rf build"))
    [record] = bypasses()
    assert decision.bypasses == (record,)
    assert {k: record[k] for k in ("kind", "behavior_id", "variable", "level", "tool_name")} == {
        "kind": "bypass",
        "behavior_id": "no-rm",
        "variable": "FORGE_DISABLE",
        "level": "warning",
        "tool_name": "Bash",
    }
    assert record["input_summary"] == "Bash: rm -rf build"
    assert ev.store.session_ids() == []  # a dry run: nothing written
    assert not ev.evaluate(bash("rm -rf build")).violations


def test_cache_paths_are_keyed_by_catalog_and_only_the_builtin_uses_the_user_cache(
    tmp_path: Path,
) -> None:
    (tmp_path / ".forge").mkdir()  # a project (without one, no project cache: SPEC §10)
    config = Config.from_env(env(XDG_CACHE_HOME=str(tmp_path / "xdg")), cwd=str(tmp_path))
    primary, fallback = config.cache_paths()
    name = os.path.basename(primary)
    assert name.startswith("catalog-cache-") and name.endswith(".json")
    assert primary == str(tmp_path / ".forge" / "runtime" / name)
    assert fallback == str(tmp_path / "xdg" / "forge-policy" / name)
    other = Config.from_env(
        env(FORGE_BEHAVIORS_DIR="rules", XDG_CACHE_HOME=str(tmp_path / "xdg")), cwd=str(tmp_path)
    )
    [only] = other.cache_paths()  # a project's own catalog is never cached outside it
    assert os.path.dirname(only) == str(tmp_path / ".forge" / "runtime")
    assert os.path.basename(only) != name


def test_project_config_structures_testing_with_defaults(tmp_path: Path) -> None:
    from forge_policy.config.project import DEFAULT_TEST_GLOBS, load_project_config

    (tmp_path / "config.yaml").write_text(
        "other_tool: {x: 1}\ntesting:\n  tdd_mode: ' Strict '\n  production_globs: src/*.py\n"
        "  planning_globs:\n"
    )
    settings = load_project_config(str(tmp_path)).testing
    assert settings.tdd_mode == "strict"
    assert settings.production_globs == ("src/*.py",)
    assert settings.test_globs == DEFAULT_TEST_GLOBS
    assert settings.planning_globs == ("tasks.md",)  # null is the default


def test_project_config_reports_every_problem_with_its_line(tmp_path: Path) -> None:
    from forge_policy.config.project import load_project_config
    from forge_policy.errors import ProjectConfigError

    path = tmp_path / "config.yaml"
    path.write_text("testing:\n  tdd_mode: stric\n  test_globs: 3\n  planning_globs: ['']\n")
    with pytest.raises(ProjectConfigError) as info:
        load_project_config(str(tmp_path))
    assert str(info.value).splitlines() == [
        f"{path}:2: testing.tdd_mode: unknown value 'stric': expected one of standard, focused, "
        "strict",
        f"{path}:3: testing.test_globs: expected a list of glob strings",
        f"{path}:4: testing.planning_globs: expected a list of glob strings",
    ]
    path.write_text("testing:\n  tdd_mode: [strict\n")
    with pytest.raises(ProjectConfigError, match=rf"^{path}:3:1: invalid YAML: "):
        load_project_config(str(tmp_path))
