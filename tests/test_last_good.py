"""Last known good (SPEC §10, issue 25 item 5): a catalog that stops loading keeps the last one
that loaded enforcing, and says so loudly; with none, tool calls fail closed with the recovery
step; a last-good copy the engine did not write is never used.

Through the real ``forge-policy hook`` process and the warm worker's client, as Claude Code
runs them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import behavior_yaml
from hookrun import ClientProject, Project, stop_workers, worker_pids

from forge_policy.catalog.cache import BUILTIN_DIR
from forge_policy.config.env import Config

VALIDATE = "`forge-policy validate`"


def forked(base: Path) -> Project:
    """A project whose catalog is the built-in one copied into ``.forge/behaviors`` plus one
    custom behavior, ``house-rule`` (the layout ``forge-policy off`` wrote before issue 25)."""
    project = Project(base, catalog={})
    folder = project.root / "behaviors"
    shutil.copytree(BUILTIN_DIR, folder)
    (folder / "house-rule").mkdir()
    (folder / "house-rule" / "behavior.yaml").write_text(
        behavior_yaml("house-rule", default_level="warning")
    )
    index = folder / "index.yaml"
    index.write_text(index.read_text() + "  - id: house-rule\n    enabled: true\n")
    return project


def typo(project: Project, behavior_id: str = "house-rule", level: str = "loud") -> str:
    """Break ``behavior_id``'s level; return ``file:line`` of the typo as errors name it."""
    path = project.root / "behaviors" / behavior_id / "behavior.yaml"
    text = path.read_text()
    old = next(line for line in text.splitlines() if "default_level:" in line)
    path.write_text(text.replace(old, f"{old.split(':')[0]}: {level}"))
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if level in t)
    return f"{behavior_id}/behavior.yaml:{line}:"


def read(project: Project, file: str = "README.md") -> dict[str, Any]:
    return project.payload(tool_name="Read", tool_input={"file_path": str(project.dir / file)})


def decision(out: dict[str, Any] | None) -> str:
    """``deny``/``ask``/``allow`` of a PreToolUse answer (no permissionDecision: allow)."""
    if out is None:
        return "allow"
    return str(out.get("hookSpecificOutput", {}).get("permissionDecision", "allow"))


def diagnostics(project: Project) -> list[dict[str, Any]]:
    return [r for r in project.audit() if r.get("code") == "catalog_last_good"]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return forked(tmp_path)


def test_a_typo_after_a_good_load_keeps_the_last_catalog_enforcing(project: Project) -> None:
    assert decision(project.run(project.bash("git push --force"))[0]) == "deny"  # loads: saved
    where = typo(project)

    out, err = project.run(project.bash("git push --force origin main"))
    assert decision(out) == "deny"  # no-destructive-git still holds
    assert out is not None and "no-destructive-git" in json.dumps(out)
    notice = out["systemMessage"]
    assert where in notice and "policy.enforcement.default_level" in notice
    assert VALIDATE in notice and "last catalog that loaded" in notice
    assert where in err and VALIDATE in err  # stderr too

    out, err = project.run(read(project))  # a Read is decided, not refused
    assert decision(out) == "allow"
    assert out is not None and where in out["systemMessage"] and VALIDATE in out["systemMessage"]
    out, _ = project.run(read(project, ".env"))  # the last catalog's agent-shield still holds
    assert decision(out) in ("deny", "ask")

    out, _ = project.run(project.payload("UserPromptSubmit", prompt="hi"))
    assert out is not None and where in out["systemMessage"]

    # the loud message is on every call; the audit record is once per distinct failure
    assert len(diagnostics(project)) == 1
    record = diagnostics(project)[0]
    assert record["kind"] == "diagnostic" and where in record["message"]
    second = typo(project, "search-first", "louder")
    out, _ = project.run(project.bash("git push --force"))
    assert decision(out) == "deny" and out is not None and second in out["systemMessage"]
    assert len(diagnostics(project)) == 2


def test_fixing_the_file_ends_the_fallback(project: Project) -> None:
    project.run(project.bash("ls"))
    path = project.root / "behaviors" / "house-rule" / "behavior.yaml"
    good = path.read_text()
    typo(project)
    out, _ = project.run(read(project))
    assert out is not None and VALIDATE in out["systemMessage"]
    path.write_text(good)
    assert project.run(read(project)) == (None, "")


def test_the_catalog_kept_is_the_last_that_loaded_not_the_first(project: Project) -> None:
    project.run(project.bash("ls"))
    # a valid change: house-rule now refuses `make deploy`
    path = project.root / "behaviors" / "house-rule" / "behavior.yaml"
    path.write_text(
        behavior_yaml(
            "house-rule",
            default_level="hard_block",
            triggers=(
                "    - event: PreToolUse\n      matcher: Bash\n      conditions:\n"
                "        - {field: command, operator: contains, value: make deploy}\n"
            ),
        )
    )
    assert decision(project.run(project.bash("make deploy"))[0]) == "deny"
    typo(project, "search-first")
    out, _ = project.run(project.bash("make deploy"))
    assert decision(out) == "deny" and out is not None and VALIDATE in out["systemMessage"]


def test_with_no_last_good_catalog_tool_calls_fail_closed_with_the_recovery_step(
    project: Project,
) -> None:
    where = typo(project)  # broken before it ever loaded: nothing to fall back on
    for payload in (project.bash("ls"), read(project)):
        out, err = project.run(payload)
        assert decision(out) == "deny"
        assert out is not None
        reason = out["hookSpecificOutput"]["permissionDecisionReason"]
        assert where in reason and VALIDATE in reason and "git checkout" in reason
        assert "no catalog has loaded in this project yet" in reason
        assert VALIDATE in err
    assert list((project.root / "runtime").glob("last-good-catalog-*")) == []


def test_events_that_cannot_be_refused_get_a_consistent_text(project: Project) -> None:
    typo(project)
    for payload in (
        project.payload("UserPromptSubmit", prompt="hi"),
        project.payload("SessionStart", source="startup"),
    ):
        out, _ = project.run(payload)
        assert out is not None and set(out) == {"systemMessage"}
        text = out["systemMessage"]
        # it used to say "let it through (FORGE_ON_ERROR=deny)": deny does not let through
        assert "FORGE_ON_ERROR=deny" not in text
        assert "goes through unchecked" in text and "only tool calls are refused" in text
        assert VALIDATE in text


def plant(project: Project, body: bytes) -> Path:
    """Write ``body`` where the project's catalog last-good copy lives (an agent's Write)."""
    from forge_policy.config import last_good

    config = Config.from_env(project.env)
    folder, name = config._last_good()
    Path(folder).mkdir(parents=True, exist_ok=True)
    path = Path(last_good.path_of(folder, name))
    path.write_bytes(body)
    return path


def forged_body(project: Project) -> bytes:
    """A last-good body that would allow everything: an empty catalog."""
    folder = Config.from_env(project.env).catalog_dir
    document = {"root": folder, "sources": [], "specs": []}
    data = {"format": 1, "forge_policy": "0.1.0", "name": "x", "saved_at": "", "document": document}
    return json.dumps(data).encode()


def test_a_planted_last_good_copy_is_ignored(project: Project, tmp_path: Path) -> None:
    from forge_policy.config import last_good

    typo(project)
    # unsealed; sealed with a made-up seal; a genuine copy of another project (another key)
    other = forked(tmp_path / "other")
    other.run(other.bash("ls"))
    other_folder, other_name = Config.from_env(other.env)._last_good()
    genuine_elsewhere = Path(last_good.path_of(other_folder, other_name)).read_bytes()
    for body in (
        forged_body(project),
        b"forge-policy-last-good 1 " + b"0" * 64 + b"\n" + forged_body(project),
        genuine_elsewhere,
    ):
        plant(project, body)
        for payload in (project.bash("git push --force"), project.bash("ls"), read(project)):
            out, _ = project.run(payload)
            assert decision(out) == "deny", body[:40]
            reason = out["hookSpecificOutput"]["permissionDecisionReason"]  # type: ignore[index]
            assert "the saved last good catalog is not used" in reason
            assert VALIDATE in reason


def test_a_genuine_copy_of_another_document_is_ignored(tmp_path: Path) -> None:
    from forge_policy.config import last_good

    folder = str(tmp_path)
    assert last_good.save(folder, "settings", {"specs": []})
    Path(last_good.path_of(folder, "catalog-x")).write_bytes(
        Path(last_good.path_of(folder, "settings")).read_bytes()
    )
    assert last_good.load(folder, "catalog-x") == (None, "saved for another document (settings)")
    assert last_good.load(folder, "nothing") == (None, "none saved")


def test_build_evaluator_falls_back_for_every_embedder(project: Project) -> None:
    """SDK adapters, ``serve`` and the CLI build through ``build_evaluator``: the same rule."""
    import forge_policy as fp

    fp.build_evaluator(project.env)  # loads: saved
    typo(project)
    evaluator = fp.build_evaluator(project.env)
    assert evaluator.notices and VALIDATE in evaluator.notices[0]
    verdict = evaluator.evaluate(
        fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "git push -f"})
    )
    assert verdict.blocked and verdict.notices == evaluator.notices
    from forge_policy.render.outcome import outcome

    said = outcome(verdict, can_ask=False, title="Codex")
    assert said is not None and VALIDATE in said.summary


# -- through the warm worker ------------------------------------------------------------------


@pytest.fixture
def client(tmp_path: Path) -> Iterator[ClientProject]:
    if not sys.platform.startswith("linux"):
        pytest.skip("the worker needs Linux (SO_PEERCRED, /proc)")
    project = ClientProject(tmp_path)
    yield project
    stop_workers(project.root)
    assert worker_pids(project.root) == []


def test_the_warm_worker_keeps_the_last_catalog_enforcing(client: ClientProject) -> None:
    assert b'"permissionDecision":"deny"' in client.call(client.bash("echo hard-me")).stdout
    client.wait_worker()
    where = typo(client, "warner")
    before = client.requests()
    answer = client.call(client.bash("echo hard-me"))
    out = json.loads(answer.stdout)
    assert client.requests() == before + 1  # the worker answered
    assert decision(out) == "deny" and "hardy: refused" in json.dumps(out)
    assert where in out["systemMessage"] and VALIDATE in out["systemMessage"]
    out = json.loads(client.call(read(client)).stdout)
    assert decision(out) == "allow" and VALIDATE in out["systemMessage"]
    from forge_policy.cli.worker_cmds import ask

    status = ask(str(client.root), b"status")
    assert isinstance(status, dict) and where in status["catalog_error"]


def test_the_warm_worker_with_no_last_good_fails_closed_with_the_recovery_step(
    client: ClientProject,
) -> None:
    where = typo(client, "warner")
    answer = client.call(read(client))
    out = json.loads(answer.stdout)
    reason = out["hookSpecificOutput"]["permissionDecisionReason"]
    assert decision(out) == "deny" and where in reason and VALIDATE in reason


# -- the project configuration (``floor:`` in <FORGE_ROOT>/config.yaml) ------------------------


def test_a_broken_floor_keeps_the_last_floor_that_loaded(tmp_path: Path) -> None:
    project = Project(tmp_path, floor="off")
    assert project.run(project.bash("ls")) == (None, "")  # floor: off loads, kept
    (project.root / "config.yaml").write_text("floor: offf\n")
    out, err = project.run(project.bash("ls"))
    assert decision(out) == "allow" and out is not None  # still off: run as sent
    assert "updatedInput" not in json.dumps(out)
    notice = out["systemMessage"]
    assert "config.yaml:1: floor:" in notice and VALIDATE in notice
    assert "last configuration that loaded" in notice and VALIDATE in err
    assert [r["code"] for r in project.audit() if r["kind"] == "diagnostic"] == [
        "configuration_last_good"
    ]


def test_a_broken_floor_with_nothing_saved_refuses_tool_calls_with_the_recovery_step(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path, floor="offf")
    for payload in (project.bash("ls"), read(project)):  # the configuration, not just the floor
        out, _ = project.run(payload)
        assert decision(out) == "deny" and out is not None
        reason = out["hookSpecificOutput"]["permissionDecisionReason"]
        assert "config.yaml:1: floor:" in reason and VALIDATE in reason
        assert "internal error" not in reason  # it used to call a bad floor an internal error


def validate(project: Project) -> subprocess.CompletedProcess[str]:
    from hookrun import SCRIPT

    return subprocess.run(
        [str(SCRIPT), "validate"], capture_output=True, text=True, env=project.env, cwd=project.dir
    )


def test_validate_names_every_error_and_what_enforces_meanwhile(project: Project) -> None:
    where = typo(project)
    result = validate(project)
    assert result.returncode == 1 and where in result.stdout
    assert "meanwhile the hook refuses tool calls" in result.stderr
    typo(project, "house-rule", "warning")  # fixed: loads, kept
    project.run(project.bash("ls"))
    typo(project)
    (project.root / "config.yaml").write_text("floor: offf\n")
    result = validate(project)
    assert result.returncode == 1 and where in result.stdout
    assert "config.yaml:1: floor:" in result.stdout
    assert "meanwhile the hook enforces the last catalog that loaded" in result.stderr


def test_a_broken_configuration_layer_keeps_the_last_settings_that_loaded(tmp_path: Path) -> None:
    project = Project(tmp_path, floor=None)
    config = project.root / "config.yaml"
    config.write_text("floor: off\nbehaviors:\n  hardy: {enabled: false}\n")
    assert project.run(project.bash("echo hard-me")) == (None, "")  # switched off: kept
    project.run(project.bash("echo hard-me"))  # a second process: the copy is written by now
    config.write_text("floor: off\nbehaviors:\n  hardy: {enabeld: false}\n")  # a typo
    out, _ = project.run(project.bash("echo hard-me again"))
    assert decision(out) == "allow" and out is not None  # the last settings: still off
    notice = out["systemMessage"]
    assert "config.yaml:3" in notice and "enabeld" in notice and VALIDATE in notice
    assert "last configuration that loaded" in notice
    assert decision(project.run(project.bash("echo soft-me"))[0]) == "deny"  # the rest holds


def test_a_configuration_that_never_loaded_fails_closed_with_the_recovery_step(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path, floor=None)
    (project.root / "config.yaml").write_text("behaviors:\n  hardy: {enabeld: false}\n")
    for payload in (project.bash("ls"), read(project)):
        out, _ = project.run(payload)
        assert decision(out) == "deny" and out is not None
        reason = out["hookSpecificOutput"]["permissionDecisionReason"]
        assert "config.yaml:2" in reason and VALIDATE in reason
        assert "no configuration has loaded in this project yet" in reason
    out, _ = project.run(project.payload("UserPromptSubmit", prompt="hi"))
    assert out is not None and "FORGE_ON_ERROR=deny" not in out["systemMessage"]
    assert "goes through unchecked" in out["systemMessage"]
