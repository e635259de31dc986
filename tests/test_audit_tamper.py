"""An audit log whose tail cannot silently disappear (issue 10 route 7), through the real hook
and the real CLI: the agent drops the last records of ``overrides.log``; the next hook's append
notes it in a ``recovery`` record, and ``forge-policy audit --verify`` fails (exit 4) from then
on — it used to say ok once the next append had chained on."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from hookrun import SCRIPT, Project


def verify(project: Project) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), "audit", "--verify"],
        capture_output=True,
        text=True,
        env=project.env,
        cwd=project.dir,
        timeout=60,
    )


def test_dropping_the_last_records_is_an_integrity_failure_for_good(tmp_path: Path) -> None:
    project = Project(tmp_path)
    for _ in range(3):
        answer, _ = project.run(project.bash("echo hard-me"))
        assert answer is not None and "deny" in str(answer)
    assert verify(project).returncode == 0
    log = project.root / "audit" / "overrides.log"
    lines = log.read_bytes().splitlines(keepends=True)
    # the agent drops its last block (and the seen record of its call, written after it)
    assert json.loads(lines[-1])["kind"] == "seen" and json.loads(lines[-2])["kind"] == "block"
    log.write_bytes(b"".join(lines[:-2]))
    answer, _ = project.run(project.bash("echo hard-me"))  # still blocked, and appended
    assert answer is not None and "deny" in str(answer)
    # the sink sees its anchor ahead of the log, the evaluator the session's checkpoint
    assert [r["kind"] for r in project.audit()][-3:] == ["recovery", "block", "integrity"]
    for _ in range(2):  # and it stays failed, however many appends follow
        result = verify(project)
        assert result.returncode == 4, result.stdout + result.stderr
        assert "removed from the end of the log" in result.stdout + result.stderr
        project.run(project.bash("echo hard-me"))


def test_a_sabotaged_state_is_rebuilt_from_the_log_not_reset(tmp_path: Path) -> None:
    """Issue 10 route 5: a state of an unknown version, or garbage, written over
    ``state.json`` used to reset every counter (garbage: moved aside, afresh; another version:
    decided from default levels). The session now goes on from what the audit log holds."""
    project = Project(tmp_path)
    for n in range(2):
        answer, _ = project.run(project.bash(f"echo soft-me {n}"))  # soft block, audited
        assert answer is not None and "deny" in str(answer)
    state = project.root / "runtime" / "state.json"
    for n, sabotage in enumerate(("not json at all", '{"schema_version": 99, "sessions": {}}')):
        state.write_text(sabotage)
        answer, err = project.run(project.bash(f"echo soft-me again {n}"))
        assert answer is not None and "deny" in str(answer)
        last = [r for r in project.audit() if r["kind"] == "block"][-1]
        assert last["counter"] == 3 + n  # counted on top of the log's count, never from 1
    assert "rebuilt from the audit log" in err  # the unreadable version: decided on the log


def test_a_broken_store_is_repaired_not_bypassed_for_good(tmp_path: Path) -> None:
    """Issue 10 route 5: a symlink over ``state.json``, or bytes over the SQLite database,
    forced stateless decisions for every later event. Each is moved aside, the session is
    rebuilt from the log, and the next event is decided on a real state again. (A state of a
    *newer* schema version is left alone, as a newer forge_policy may have written it: every
    event is decided on the log meanwhile, as the test above shows.)"""
    for store in ("file", "sqlite:"):
        project = Project(tmp_path / store.strip(":"))
        env = {"FORGE_STORE": store}
        for n in range(2):
            project.run(project.bash(f"echo soft-me {n}"), **env)
        runtime = project.root / "runtime"
        if store == "file":
            decoy = tmp_path / "decoy.json"
            decoy.write_text('{"sessions": {}}')
            (runtime / "state.json").unlink()
            (runtime / "state.json").symlink_to(decoy)
        else:
            for leftover in runtime.glob("state.db-*"):
                leftover.unlink()
            (runtime / "state.db").write_bytes(b"not a database " * 200)
        for n in range(2):
            answer, err = project.run(project.bash(f"echo soft-me again {n}"), **env)
            assert answer is not None and "deny" in str(answer)
            assert "session state unavailable" not in err  # decided on a state, not stateless
        assert [r["counter"] for r in project.audit() if r["kind"] == "block"] == [1, 2, 3, 4]
        assert list(runtime.glob("state.*.corrupt-*")) or list(runtime.glob("state.json.corrupt-*"))


def test_symlinked_governance_folders_are_refused(tmp_path: Path) -> None:
    """Issue 10 route 10: a symlinked ``.forge/runtime`` or ``.forge/audit`` was followed, so
    the state and the log could be swapped from elsewhere. Both are refused with a clear
    message; blocks still block and nothing is written through the link."""
    project = Project(tmp_path)
    project.run(project.bash("ls"))
    for name in ("runtime", "audit"):
        folder = project.root / name
        folder.mkdir(exist_ok=True)
        elsewhere = tmp_path / f"elsewhere-{name}"
        folder.rename(elsewhere)
        folder.symlink_to(elsewhere, target_is_directory=True)
        before = sorted(p.name for p in elsewhere.iterdir())
        answer, err = project.run(project.bash("echo hard-me"))
        assert answer is not None and "deny" in str(answer)
        assert "symlink" in err, err
        assert sorted(p.name for p in elsewhere.iterdir()) == before
        folder.unlink()
        elsewhere.rename(folder)


def status(project: Project) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), "status"],
        capture_output=True,
        text=True,
        env=project.env,
        cwd=project.dir,
        timeout=60,
    )


def test_deleting_the_log_with_its_anchor_is_an_integrity_failure(tmp_path: Path) -> None:
    """Issue 10 route 7: deleting ``overrides.log`` and its lock (the anchor) used to leave a
    fresh log that verified. Each session's state keeps a checkpoint of the log (the seq and
    hash it saw written, and the log's first line), so the loss is found by ``audit --verify``
    and ``status`` at once, and noted in the log by the session's next append, for good."""
    project = Project(tmp_path)
    for _ in range(3):
        project.run(project.bash("echo hard-me"))
    audit = project.root / "audit"
    for name in ("overrides.log", "overrides.log.lock"):
        (audit / name).unlink()
    result = verify(project)
    assert result.returncode == 4, result.stdout + result.stderr
    # seq 5: the third block (each call's seen record follows its block)
    assert "saw it reach seq 5: records were removed" in result.stdout + result.stderr
    shown = status(project)
    assert shown.returncode == 0 and "audit: INTEGRITY FAILURE" in shown.stdout, shown.stdout
    answer, _ = project.run(project.bash("echo hard-me"))  # still blocked, and noted
    assert answer is not None and "deny" in str(answer)
    assert [r["kind"] for r in project.audit()] == ["block", "integrity"]
    for _ in range(2):  # the next appends do not launder it
        project.run(project.bash("echo hard-me"))
        assert verify(project).returncode == 4


def test_a_log_replaced_by_a_longer_one_is_an_integrity_failure(tmp_path: Path) -> None:
    """The log deleted with its anchor and grown past the session's checkpoint by another
    session before this one's next event: its first line is not the one the session saw."""
    project = Project(tmp_path)
    for _ in range(2):
        project.run(project.bash("echo hard-me"))
    for name in ("overrides.log", "overrides.log.lock"):
        (project.root / "audit" / name).unlink()
    for _ in range(4):
        project.run(project.bash("echo hard-me", session_id="another-session"))
    project.run(project.bash("echo hard-me"))
    notes = [r for r in project.audit() if r["kind"] == "integrity"]
    assert len(notes) == 1 and "starts with another record" in notes[0]["reason"]
    result = verify(project)
    assert result.returncode == 4 and "starts with another record" in result.stdout + result.stderr
