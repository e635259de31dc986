"""The hook answers within its deadline whatever locks the agent holds (SPEC §9, issue 23).

An agent can hold the state and audit locks itself (``flock .forge/runtime/state.json.lock
sleep 600 &``): before ``FORGE_HOOK_DEADLINE`` the hook then waited out both lock timeouts,
30 to 40 s, past the 30 s Claude Code waits — and a hook Claude Code times out does not block.
These tests hold both locks with real ``flock`` processes and run the real hook process (both
``forge-policy hook`` and the command ``init`` writes, through the warm-worker client): a hard
block is refused at once and its record spooled, not lost; a soft block is decided statelessly
at the deadline on the session rebuilt from the log and its spool, and
audited ``degraded``; a harmless call still passes. Not
timed (speed goes to ``tests/benchmarks/bench_hook_deadline.py``): each call must return, within
a generous subprocess timeout, with the right answer.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import forge_policy
from forge_policy.config.env import (
    DEFAULT_HOOK_DEADLINE,
    MAX_HOOK_DEADLINE,
    Config,
    hook_deadline_from,
)
from forge_policy.errors import ConfigError
from forge_policy.ops import harness_config
from forge_policy.worker import protocol

sys.path.insert(0, str(Path(__file__).resolve().parent))
from helpers import behavior_yaml
from hookrun import HOOK, Project, contains

LAUNCH = [
    sys.executable,
    "-I",
    "-S",
    str(Path(forge_policy.__file__).parent / "worker" / "launch.py"),
]
FLOCK = shutil.which("flock")
needs_flock = pytest.mark.skipif(FLOCK is None, reason="flock(1) is not installed")


@contextlib.contextmanager
def agent_holds(*locks: Path) -> Iterator[None]:
    """Hold each lock file with a ``flock … sleep`` process, as an agent's Bash call would."""
    assert FLOCK is not None
    holders = []
    try:
        for lock in locks:
            lock.parent.mkdir(parents=True, exist_ok=True)
            lock.touch()
            # its own process group: the ``sleep`` child holds the lock too, and goes with it
            holders.append(
                subprocess.Popen([FLOCK, str(lock), "sleep", "600"], start_new_session=True)
            )
        for lock in locks:  # taken: a non-blocking flock fails
            for _ in range(200):
                probe = subprocess.run([FLOCK, "-n", str(lock), "true"], check=False)
                if probe.returncode != 0:
                    break
                time.sleep(0.05)
            else:
                pytest.fail(f"{lock} was not taken by its holder")
        yield
    finally:
        for holder in holders:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(holder.pid, signal.SIGKILL)
            holder.wait()


def call(project: Project, command: str, hook: list[str]) -> tuple[dict, str]:
    """Run one PreToolUse Bash call through ``hook``; (parsed stdout or {}, stderr)."""
    result = subprocess.run(
        hook,
        input=json.dumps(project.bash(command)).encode(),
        capture_output=True,
        env=project.env,
        cwd=project.dir,
        timeout=120,  # generous: it must return, with the right answer
    )
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 0, err
    assert "Traceback" not in err, err
    out = result.stdout.decode().strip()
    return (json.loads(out) if out else {}), err


def decision(answer: dict) -> str:
    return answer.get("hookSpecificOutput", {}).get("permissionDecision", "allow")


def spooled(project: Project) -> list[dict]:
    """The decision records waiting in the spool (the floor's own `floor` notes left out:
    these projects run with `floor: off`, which is noted on every shell call; and the `seen`
    record of every call)."""
    folder = project.root / "audit" / "overrides.log.spool"
    if not folder.is_dir():
        return []
    records = [
        json.loads(line)
        for name in sorted(folder.iterdir())
        for line in name.read_text().splitlines()
    ]
    return [r for r in records if r.get("kind") not in ("floor", "seen")]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = Project(tmp_path, catalog={})  # the built-in catalog
    project.env["FORGE_HOOK_DEADLINE"] = "3"
    project.run(project.bash("ls"))  # a warm project: the catalog cache is built
    return project


def locks(project: Project) -> tuple[Path, Path]:
    return (
        project.root / "runtime" / "state.json.lock",
        project.root / "audit" / "overrides.log.lock",
    )


@needs_flock
@pytest.mark.parametrize("hook", [HOOK, LAUNCH], ids=["forge-policy-hook", "init-command"])
@pytest.mark.parametrize("command", ["rm -rf ~", "rm -rf $HOME", "git push --force origin main"])
def test_a_hard_block_is_refused_with_both_locks_held(
    project: Project, hook: list[str], command: str
) -> None:
    with agent_holds(*locks(project)):
        answer, err = call(project, command, hook)
        assert decision(answer) == "deny", (answer, err)
        waiting = spooled(project)
    # its record is not lost: it waits in the spool, marked degraded
    assert [r["level"] for r in waiting if r.get("kind") == "block"] == ["hard_block"]
    assert all(r.get("degraded") for r in waiting if r.get("kind") == "block")
    # the next call that holds the lock folds it into the chain, in order, and verify agrees
    project.run(project.bash("git push --force"))
    assert spooled(project) == []
    folded = [r for r in project.audit() if r.get("spooled")]
    assert [r["level"] for r in folded if r.get("kind") == "block"] == ["hard_block"]
    verify = subprocess.run(
        [*HOOK[:-1], "audit", "--verify", "--json"],
        capture_output=True,
        env=project.env,
        cwd=project.dir,
        timeout=120,
    )
    assert verify.returncode == 0, verify.stderr
    report = json.loads(verify.stdout)["verify"]
    assert report["ok"] and report.get("spooled", 0) == 0


@needs_flock
@pytest.mark.parametrize("command", ["npm install left-pad", "yarn add lodash", "chmod -R 777 ."])
def test_a_soft_block_at_the_deadline_is_decided_statelessly_and_audited_degraded(
    project: Project, command: str
) -> None:
    with agent_holds(*locks(project)):
        answer, err = call(project, command, HOOK)
        waiting = spooled(project)
    assert decision(answer) in ("deny", "ask"), (answer, err)
    assert "session state unavailable" in err
    blocks = [r for r in waiting if r.get("kind") == "block"]
    assert [(r["level"], r["degraded"]) for r in blocks] == [("soft_block", "rebuilt")]


@needs_flock
def test_holding_the_locks_stops_no_escalation(tmp_path: Path) -> None:
    """Calls decided at the deadline count: the spool is read with the log, so the third
    violation soft-blocks as it would have with no lock held, and every count reaches the
    state once the locks are free."""
    escalation = "    escalation:\n      - {after: 3, level: soft_block}\n"
    climber = behavior_yaml(
        "climber", default_level="nudge", escalation=escalation, triggers=contains("climb-me")
    )
    project = Project(tmp_path, catalog={"climber": climber})
    project.env["FORGE_HOOK_DEADLINE"] = "3"
    first, _ = project.run(project.bash("echo climb-me"))  # unlocked: a nudge, counted
    assert decision(first or {}) == "allow"
    with agent_holds(*locks(project)):
        second, _ = call(project, "echo climb-me 2", HOOK)
        third, err = call(project, "echo climb-me 3", HOOK)
        waiting = spooled(project)
    assert decision(second) == "allow"
    assert decision(third) == "deny", (third, err)
    assert [(r["kind"], r["counter"], r["degraded"]) for r in waiting] == [
        ("violation", 2, "rebuilt"),
        ("block", 3, "rebuilt"),
    ]
    assert project.counter("climber") == 3


@needs_flock
@pytest.mark.parametrize("command", ["ls", "echo hello", "git status"])
def test_a_harmless_call_still_passes_with_both_locks_held(project: Project, command: str) -> None:
    with agent_holds(*locks(project)):
        answer, err = call(project, command, HOOK)
    assert decision(answer) == "allow", (answer, err)
    # its seen record did not wait for the audit lock either: it waits in the spool
    folder = project.root / "audit" / "overrides.log.spool"
    waiting = [json.loads(line) for f in folder.iterdir() for line in f.read_text().splitlines()]
    assert [(r["kind"], r["outcome"]) for r in waiting if r["kind"] == "seen"] == [
        ("seen", "allow")
    ]


@needs_flock
def test_the_spool_keeps_order_across_calls(project: Project) -> None:
    with agent_holds(*locks(project)):
        for command in ("rm -rf ~", "git push --force", "rm -rf /"):
            assert decision(call(project, command, HOOK)[0]) == "deny"
    assert len(spooled(project)) == 3
    verify = subprocess.run(
        [*HOOK[:-1], "audit", "--verify", "--json"],
        capture_output=True,
        env=project.env,
        cwd=project.dir,
        timeout=120,
    )
    # verify knows what waits: the three blocks and the seen record of each call
    assert json.loads(verify.stdout)["verify"]["spooled"] == 6
    project.run(project.bash("git reset --hard"))  # the next record folds the spool first
    summaries = [r["input_summary"] for r in project.audit() if r.get("spooled")]
    assert summaries == ["Bash: rm -rf ~", "Bash: git push --force", "Bash: rm -rf /"]


@pytest.mark.parametrize("value", ["soon", "0", "1", "-3", "nan", "inf", "100"])
def test_an_unusable_deadline_names_the_variable(value: str) -> None:
    with pytest.raises(ConfigError, match=r"^FORGE_HOOK_DEADLINE: "):
        Config.from_env({"FORGE_HOOK_DEADLINE": value}, cwd="/p")


def test_the_deadline_defaults_to_ten_seconds_everywhere() -> None:
    assert hook_deadline_from({}) == DEFAULT_HOOK_DEADLINE == protocol.HOOK_DEADLINE == 10.0
    assert Config.from_env({"FORGE_HOOK_DEADLINE": "4.5"}, cwd="/p").hook_deadline == 4.5


#: How each harness reads its hook entry's timeout: seconds, or Gemini CLI's milliseconds.
UNIT = {"gemini": 1000}
#: The key that makes a failed or timed-out hook block, where the harness has one.
CLOSING = {"claude-code": ("onFailure", "block"), "cursor": ("failClosed", True)}


@pytest.mark.parametrize("harness", sorted(harness_config.SPECS))
def test_init_gives_every_harness_a_timeout_beyond_the_largest_deadline(harness: str) -> None:
    spec = harness_config.SPECS[harness]
    event = (
        next(e for e in spec.events if e.lower() in ("pretooluse", "beforetool"))
        if any(e.lower() in ("pretooluse", "beforetool") for e in spec.events)
        else spec.events[0]
    )
    entry = spec.handler("/bin/forge-policy hook", event)
    seconds = entry[spec.timeout_key] / UNIT.get(harness, 1)
    assert seconds >= MAX_HOOK_DEADLINE + 5, (harness, entry)
    if harness in CLOSING:
        key, value = CLOSING[harness]
        assert entry[key] == value, entry


@pytest.mark.parametrize("linked", ["runtime", "forge"])
def test_a_symlinked_runtime_or_forge_folder_receives_nothing(tmp_path: Path, linked: str) -> None:
    """The Harness Home contract: no cache, key, state or audit written through a link."""
    project = Project(tmp_path, catalog={}, floor=None)  # nothing written into .forge first
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if linked == "runtime":
        project.root.mkdir(parents=True, exist_ok=True)
        (project.root / "config.yaml").write_text("floor: off\n")
        (project.root / "runtime").symlink_to(elsewhere, target_is_directory=True)
    else:
        (elsewhere / "runtime").mkdir()
        (elsewhere / "config.yaml").write_text("floor: off\n")  # read through the link
        project.root.symlink_to(elsewhere, target_is_directory=True)
    for command in ("rm -rf ~", "git push --force", "ls"):
        answer, err = call(project, command, HOOK)
        assert decision(answer) == ("allow" if command == "ls" else "deny"), (answer, err)
    assert "symlink" in err
    written = sorted(p.name for p in elsewhere.rglob("*") if p.is_file())
    assert not [n for n in written if n.startswith(("catalog-cache", "state", "overrides"))], (
        written
    )


def test_doctor_names_a_symlinked_runtime_folder(tmp_path: Path) -> None:
    from forge_policy.ops.doctor import hook_findings

    project = tmp_path / "project"
    (project / ".forge").mkdir(parents=True)
    assert [f.code for f in hook_findings(project, "claude-code")] == []
    (tmp_path / "elsewhere").mkdir()
    (project / ".forge" / "runtime").symlink_to(tmp_path / "elsewhere")
    found = [f for f in hook_findings(project, "claude-code") if f.code == "symlinked-state"]
    assert len(found) == 1 and ".forge/runtime is a symlink" in found[0].reason
