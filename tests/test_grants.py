"""Explicit overrides as SPEC §4 says since issue 23: a grant is audited when given and when
used, lives ``FORGE_GRANT_SECONDS`` (independent of the retry window), is never lost to an
intervening block, and, bound with ``--call`` to the call a soft block named, lets only a retry
of that call through.

The regression of issue 23: block A → ``override`` → block B → retry A were all denied, while
the CLI promised "the next soft-blocked call … goes through once". Each sequence runs through
the API on every store backend, and through the real ``forge-policy hook`` process and the CLI.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import behavior_yaml
from hookrun import CALL, SCRIPT, Project, to_override

import forge_policy as fp
from forge_policy.audit.insights import summarize
from forge_policy.audit.jsonl import JsonlAuditSink
from forge_policy.config.env import Config, ConfigError
from forge_policy.engine.inputs import event_identity
from forge_policy.state import call_id_of
from tests.helpers import Clock

GATE = behavior_yaml("gate", default_level="soft_block")
BACKENDS = ("memory", "file", "sqlite", "postgres")


def bash(command: str, session: str = "s1") -> fp.Event:
    return fp.Event("PreToolUse", session, tool_name="Bash", tool_input={"command": command})


def write(path: str) -> fp.Event:
    return fp.Event("PreToolUse", "s1", tool_name="Write", tool_input={"file_path": path})


@pytest.fixture(params=BACKENDS)
def gate(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[fp.Evaluator, Clock]:
    """An evaluator over one soft-blocking behavior (every Bash call), on each store backend,
    with a JSONL audit log and a test clock."""
    store = {
        "memory": "memory",
        "file": "file",
        "sqlite": "sqlite:",
        "postgres": "",
    }[request.param]
    if request.param == "postgres":
        store = request.getfixturevalue("pg_dsn")
    root = tmp_path / ".forge"
    folder = root / "behaviors" / "gate"
    folder.mkdir(parents=True)
    (folder / "behavior.yaml").write_text(GATE)
    (root / "behaviors" / "index.yaml").write_text(
        'schema_version: "1"\nbehaviors:\n  - id: gate\n'
    )
    clock = Clock(1_800_000_000.0)
    config = Config(root=str(root), store=store, audit="file")
    ev = config.build_evaluator(clock=clock)
    request.addfinalizer(ev.store.close)
    return ev, clock


def records(ev: fp.Evaluator, kind: str) -> list[dict[str, Any]]:
    return [r for r in ev.audit.records() if r["kind"] == kind]


def check_books(ev: fp.Evaluator, blocks: int, overrides: int) -> None:
    """Audit log intact; status and insights count each block and override once; replaying the
    log adds nothing (the triple write agrees)."""
    assert ev.audit.verify().ok
    row = ev.status("s1").behaviors["gate"]
    assert (row.blocks, row.overrides) == (blocks, overrides)
    insight = summarize(ev.audit.records()).behaviors["gate"]
    assert (insight.blocks, insight.overrides) == (blocks, overrides)
    assert ev.reconcile("s1") == []


def test_an_unbound_grant_passes_the_next_blocked_call(gate: tuple[fp.Evaluator, Clock]) -> None:
    """The regression: block A, grant, B (a different call) is the next blocked call and passes
    by the grant; A's retry within the window passes by retry and does not need it."""
    ev, clock = gate
    first = ev.evaluate(bash("deploy a"))
    assert first.blocked
    grant = ev.override("s1", "gate", reason="user approved in chat")
    [given] = records(ev, "grant")
    assert (given["grant_id"], given["reason"], "call_id" in given) == (
        grant.grant_id,
        "user approved in chat",
        False,
    )
    clock.advance(5)
    other = ev.evaluate(bash("deploy b"))
    assert not other.blocked
    [used] = other.overrides
    assert (used["mechanism"], used["reason"], used["grant_id"]) == (
        "explicit",
        "user approved in chat",
        grant.grant_id,
    )
    clock.advance(5)
    retry = ev.evaluate(bash("deploy a"))
    assert [(o["mechanism"], "grant_id" in o) for o in retry.overrides] == [("retry", False)]
    clock.advance(5)
    assert ev.evaluate(bash("deploy c")).blocked  # one-shot
    check_books(ev, blocks=3, overrides=2)


def test_a_grant_bound_to_a_call_survives_other_blocks(gate: tuple[fp.Evaluator, Clock]) -> None:
    """``call=``: only a retry of the named call passes, whatever was blocked in between, even
    past the retry window; the others stay blocked and the grant is never spent on them."""
    ev, clock = gate
    blocked = ev.evaluate(bash("rm -rf build"))
    assert blocked.blocking is not None
    call = blocked.blocking.call_id
    assert call == call_id_of(event_identity(bash("rm -rf build"))) and len(call) == 8
    assert f"--call {call} " in blocked.message
    assert records(ev, "block")[-1]["call_id"] == call
    grant = ev.override("s1", "gate", reason="this one only", call=call)
    assert (grant.call_id, grant.input_summary) == (call, "Bash: rm -rf build")
    for command in ("rm -rf src", "rm -rf /", "rm -rf src"):
        clock.advance(30)
        assert ev.evaluate(bash(command)).blocked  # other calls: blocked, the grant kept
    assert ev.status("s1").behaviors["gate"].override_granted == grant.granted_at
    clock.advance(200)  # past A's retry window, within the grant's life
    retry = ev.evaluate(bash("rm -rf build"))
    assert not retry.blocked
    assert [(o["mechanism"], o["reason"], o["grant_id"]) for o in retry.overrides] == [
        ("explicit", "this one only", grant.grant_id)
    ]
    clock.advance(1)
    assert ev.evaluate(bash("rm -rf build")).blocked  # one-shot
    check_books(ev, blocks=6, overrides=1)


def test_a_bound_grant_is_spent_on_its_retry_in_the_window(
    gate: tuple[fp.Evaluator, Clock],
) -> None:
    """Block A, grant --call A, block B, retry A: A passes (explicit, the user's reason); the
    retry of B then passes by retry, as it would have."""
    ev, clock = gate
    call = ev.evaluate(bash("make release")).blocking.call_id  # type: ignore[union-attr]
    ev.override("s1", "gate", reason="release approved", call=call)
    clock.advance(1)
    assert ev.evaluate(bash("make clean")).blocked
    clock.advance(1)
    retry = ev.evaluate(bash("make release"))
    assert [(o["mechanism"], o["reason"]) for o in retry.overrides] == [
        ("explicit", "release approved")
    ]
    clock.advance(1)
    again = ev.evaluate(bash("make clean"))
    assert [o["mechanism"] for o in again.overrides] == ["retry"]
    # B's block replaced A's pending one: A passed as the block it would have been (counted),
    # overridden by the grant, so the override rate stays <= 1
    check_books(ev, blocks=3, overrides=2)


def test_a_grant_expires_after_grant_seconds_whatever_the_window(tmp_path: Path) -> None:
    clock = Clock(1_000.0)
    ev = fp.Evaluator(fp.builtin_catalog(), clock=clock, grant_seconds=120, override_window=10)
    for i in range(5):  # search-first soft-blocks its fifth write without a search
        decision = ev.evaluate(write(f"/r/{i}"))
    assert decision.blocked and decision.blocking is not None
    call = decision.blocking.call_id
    ev.override("s1", "search-first", reason="bound", call=call)
    clock.advance(121)  # past the grant
    assert ev.evaluate(write("/r/4")).blocked
    ev.override("s1", "search-first", reason="unbound")
    clock.advance(120)  # inclusive
    assert [o["reason"] for o in ev.evaluate(write("/r/a.py")).overrides] == ["unbound"]


def test_an_unknown_call_id_is_refused_naming_the_recent_ones() -> None:
    ev = fp.Evaluator(fp.builtin_catalog())
    with pytest.raises(ValueError, match="none of search-first lately"):
        ev.override("s1", "search-first", reason="r", call="0000beef")
    for i in range(6):
        ev.evaluate(write(f"/r/{i}"))
    known = [call_id_of(event_identity(write(f"/r/{i}"))) for i in (5, 4)]
    with pytest.raises(ValueError) as refused:
        ev.override("s1", "search-first", reason="r", call="0000beef")
    text = str(refused.value)
    assert text.startswith("no soft-blocked call 0000beef of search-first in session s1")
    assert f"{known[0]} (Write: /r/5), {known[1]} (Write: /r/4)" in text  # newest first
    assert [r["kind"] for r in ev.audit.records()].count("grant") == 0  # nothing granted


def test_a_lost_grant_is_reconciled_from_the_log_once(tmp_path: Path) -> None:
    """Audited first (SPEC §4 triple write): a grant whose state write was lost comes back
    from the log; reconciling again changes nothing; a spent or replaced grant never comes
    back."""
    from forge_policy.engine.reconcile import reconcile_session
    from forge_policy.state import SessionState

    sink = JsonlAuditSink(tmp_path / "overrides.log")
    clock = Clock(1_000.0)
    ev = fp.Evaluator(fp.builtin_catalog(), audit=sink, clock=clock)
    ev.override("s1", "search-first", reason="first", call="")
    clock.advance(1)
    ev.override("s1", "search-first", reason="second")
    logged = list(sink.records())
    state = SessionState.new(900.0)  # the state lost both writes
    assert reconcile_session(state, logged) == []
    grant = state.behavior("search-first").grant
    assert grant is not None and grant.reason == "second"  # the replaced one stays gone
    before = json.dumps(state.to_dict(), sort_keys=True)
    reconcile_session(state, logged)
    assert json.dumps(state.to_dict(), sort_keys=True) == before  # idempotent
    # spend it, lose the state again: the override names the grant, which stays spent
    for i in range(4):
        ev.evaluate(write(f"/r/{i}"))
    assert [o["reason"] for o in ev.evaluate(write("/r/x")).overrides] == ["second"]
    lost = SessionState.new(900.0)
    added = reconcile_session(lost, list(sink.records()))
    assert len(added) == 1 and lost.behavior("search-first").grant is None


def test_forge_grant_seconds_is_read_and_checked() -> None:
    assert Config.from_env({}, cwd="/p").grant_seconds == 600.0
    config = Config.from_env({"FORGE_GRANT_SECONDS": "90", "FORGE_STORE": "memory"}, cwd="/p")
    assert config.grant_seconds == 90.0
    assert config.build_evaluator().settings.grant_seconds == 90.0
    for bad in ("soon", "0", "-5", "nan"):
        with pytest.raises(ConfigError, match="FORGE_GRANT_SECONDS"):
            Config.from_env({"FORGE_GRANT_SECONDS": bad}, cwd="/p")


# -- through the real hook process and the CLI -------------------------------------------------


def cli(project: Project, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(SCRIPT), *args],
        capture_output=True,
        text=True,
        env=project.env,
        cwd=project.dir,
        timeout=60,
    )
    assert result.returncode == code, result.stderr
    return result


def denied(out: dict[str, Any] | None) -> bool:
    return out is not None and out["hookSpecificOutput"].get("permissionDecision") == "deny"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def test_the_regression_through_the_hook_and_the_cli(project: Project) -> None:
    """Block A → ``override`` → block B → retry A, as Claude Code and a user would run it."""
    out, _ = project.run(project.bash("echo soft-me A"))
    assert denied(out) and out is not None
    reason = out["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.endswith(to_override("softy", project.session))
    assert f"--call {CALL}" in reason
    confirmed = cli(
        project, "override", "softy", "--session", project.session, "--reason", "user said ok"
    ).stdout
    assert confirmed.startswith(
        f"override granted: the next soft-blocked call of softy in session {project.session} "
        "within 10 min (until "
    )
    assert "A retry of a call blocked in the last 60 s passes by retry" in confirmed
    out, _ = project.run(project.bash("echo soft-me B"))  # the next blocked call: passes
    assert not denied(out)
    out, _ = project.run(project.bash("echo soft-me A"))  # the retry of A: passes by retry
    assert not denied(out)
    out, _ = project.run(project.bash("echo soft-me C"))  # the grant is spent
    assert denied(out)
    log = project.audit()
    [given] = [r for r in log if r["kind"] == "grant"]
    overrides = [(r["mechanism"], r.get("grant_id")) for r in log if r["kind"] == "override"]
    assert overrides == [("explicit", given["grant_id"]), ("retry", None)]
    row = project.status().behaviors["softy"]
    assert (row.blocks, row.overrides) == (3, 2)
    assert "intact" in cli(project, "audit", "--verify").stdout


def test_a_call_bound_grant_through_the_hook_and_the_cli(project: Project) -> None:
    out, _ = project.run(project.bash("echo soft-me A"))
    assert denied(out)
    call = project.call_ids[-1]
    [block] = [r for r in project.audit() if r["kind"] == "block"]
    assert block["call_id"] == call  # the message and the record name the same call
    wrong = cli(
        project,
        "override",
        "softy",
        "--session",
        project.session,
        "--reason",
        "ok",
        "--call",
        "0000beef",
        code=1,
    ).stderr
    assert f"no soft-blocked call 0000beef of softy in session {project.session}" in wrong
    assert f"recent soft-blocked calls: {call} (Bash: echo soft-me A)" in wrong
    confirmed = cli(
        project,
        "override",
        "softy",
        "--session",
        project.session,
        "--reason",
        "A only",
        "--call",
        call,
    ).stdout
    assert confirmed.startswith(
        f"override granted: only call {call} of softy in session {project.session} "
        "(Bash: echo soft-me A) goes through once, when it is retried within 10 min"
    )
    assert "no other call uses this grant" in confirmed
    for command in ("echo soft-me B", "echo soft-me C"):
        out, _ = project.run(project.bash(command))
        assert denied(out)  # never spent on another call, never lost to these blocks
    out, _ = project.run(project.bash("echo soft-me A"))
    assert not denied(out)
    out, _ = project.run(project.bash("echo soft-me A"))
    assert denied(out)  # one-shot
    log = project.audit()
    [given] = [r for r in log if r["kind"] == "grant"]
    assert (given["call_id"], given["input_summary"]) == (call, "Bash: echo soft-me A")
    overrides = [
        (r["mechanism"], r["reason"], r["grant_id"]) for r in log if r["kind"] == "override"
    ]
    assert overrides == [("explicit", "A only", given["grant_id"])]
    assert "intact" in cli(project, "audit", "--verify").stdout
    row = project.status().behaviors["softy"]
    assert (row.blocks, row.overrides) == (5, 1)  # A, B, C, A passed by the grant, A again
