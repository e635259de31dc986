"""Answer first (forge_policy._infra.answer_first): in the warm worker's answer the session
state and the ``seen`` record are written after the answer is out, its locks held until then."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest
from helpers import bash, write_catalog
from hookrun import rule

import forge_policy as fp
from forge_policy._infra.answer_first import answer_first, defer, settle
from forge_policy._infra.filelock import FileLock
from forge_policy.state import SessionState
from forge_policy.stores import FileStore

T0 = 1_800_000_000.0


def counted(current: SessionState | None) -> tuple[str, SessionState]:
    state = current if current is not None else SessionState.new(T0)
    state.behavior("b").counter += 1
    return "decided", state


def on_disk(path: Path) -> dict[str, object]:
    if not path.exists():
        return {}
    sessions: dict[str, object] = json.loads(path.read_text())["sessions"]
    return sessions


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / ".forge" / "runtime" / "state.json"


def test_work_runs_in_order_after_the_block_even_when_it_raises() -> None:
    done: list[str] = []
    errors: list[str] = []
    with pytest.raises(RuntimeError), answer_first(on_error=errors.append):
        assert defer(lambda: done.append("first"))
        assert defer(lambda: done.append("second"))
        raise RuntimeError("the answer failed")
    assert done == ["first", "second"] and errors == []
    assert not defer(lambda: done.append("outside"))  # no scope: declined, never run
    assert done == ["first", "second"]


def test_failing_work_is_reported_and_the_rest_still_runs() -> None:
    done: list[str] = []
    errors: list[str] = []

    def broken() -> None:
        raise OSError("disk full")

    with answer_first(on_error=errors.append):
        defer(broken)
        defer(lambda: done.append("after"))
    assert done == ["after"]
    assert errors == ["work after the answer failed: OSError: disk full"]


def test_outside_a_scope_the_store_writes_before_returning(path: Path) -> None:
    store = FileStore(path)
    assert store.transact("s1", counted) == "decided"
    assert "s1" in on_disk(path)


def test_the_state_is_written_after_the_answer_with_the_lock_held(path: Path) -> None:
    store = FileStore(path)
    with answer_first(on_error=pytest.fail):
        assert store.transact("s1", counted) == "decided"
        assert on_disk(path) == {}  # the answer goes out first
        # the lock is held until the write: another process's transaction would wait
        with pytest.raises(fp.LockTimeout), FileLock(str(path) + ".lock", timeout=0.05):
            pass
    assert on_disk(path)["s1"]["behaviors"]["b"]["counter"] == 1  # type: ignore[index]
    with FileLock(str(path) + ".lock", timeout=0.05):  # and released after it
        pass


def test_a_second_transaction_in_the_scope_writes_the_first_one_first(path: Path) -> None:
    store = FileStore(path, lock_timeout=0.5)
    with answer_first(on_error=pytest.fail):
        store.transact("s1", counted)
        # the same thread again (a reconcile, a second event): no wait on its own lock
        started = time.monotonic()
        store.transact("s1", counted)
        assert time.monotonic() - started < 0.4
        assert on_disk(path)["s1"]["behaviors"]["b"]["counter"] == 1  # type: ignore[index]
        settle()
        assert on_disk(path)["s1"]["behaviors"]["b"]["counter"] == 2  # type: ignore[index]
    assert on_disk(path)["s1"]["behaviors"]["b"]["counter"] == 2  # type: ignore[index]


def test_another_thread_waits_for_the_write_and_reads_it(path: Path) -> None:
    store = FileStore(path)
    seen: list[int] = []
    entered = threading.Event()

    def other() -> None:
        entered.set()

        def read(current: SessionState | None) -> tuple[None, None]:
            seen.append(current.behavior("b").counter if current is not None else 0)
            return None, None

        store.transact("s1", read)

    with answer_first(on_error=pytest.fail):
        store.transact("s1", counted)
        thread = threading.Thread(target=other)
        thread.start()
        entered.wait(5)
        time.sleep(0.1)  # it is waiting for the lock the deferred write holds
        assert seen == []
    thread.join(5)
    assert seen == [1]  # it read the written state, never the one before it


def test_a_write_that_fails_after_the_answer_is_reported_and_releases_the_lock(
    path: Path,
) -> None:
    store = FileStore(path)
    errors: list[str] = []

    def oversized(current: SessionState | None) -> tuple[str, SessionState]:
        state = SessionState.new(T0)
        state.behavior("b").counter = 1
        state.data["padding"] = "x" * 64
        return "decided", state

    store.MAX_BYTES = 10  # type: ignore[misc]  # this store's writes are all refused
    with answer_first(on_error=errors.append):
        assert store.transact("s1", oversized) == "decided"
    assert len(errors) == 1 and "over the 10-byte cap" in errors[0]
    assert on_disk(path) == {}
    with FileLock(str(path) + ".lock", timeout=0.05):
        pass


def test_a_failing_apply_writes_nothing_and_keeps_no_lock(path: Path) -> None:
    store = FileStore(path)

    def broken(current: SessionState | None) -> tuple[str, SessionState]:
        raise ValueError("the decision failed")

    with answer_first(on_error=pytest.fail):
        with pytest.raises(ValueError):
            store.transact("s1", broken)
        with FileLock(str(path) + ".lock", timeout=0.05):
            pass
    assert on_disk(path) == {}


def test_the_evaluator_answers_before_its_writes_and_status_reads_the_log_meanwhile(
    tmp_path: Path,
) -> None:
    """A warm answer's order: the block record is in the log before the answer (its fsync follows,
    then the state and the ``seen`` record); ``status`` in between rebuilds the session from
    the log (SPEC §9), so it never shows a counted block as missing."""
    state_path, log_path = tmp_path / "state.json", tmp_path / "audit.log"
    evaluator = fp.Evaluator(
        fp.builtin_catalog(),
        store=FileStore(state_path),
        audit=fp.JsonlAuditSink(log_path),
        record_calls=True,
    )
    event = fp.Event(
        "PreToolUse", "s1", tool_name="Bash", tool_input={"command": "git push --force"}
    )

    def kinds() -> list[str]:
        return [json.loads(line)["kind"] for line in log_path.read_text().splitlines()]

    with answer_first(on_error=pytest.fail):
        assert evaluator.evaluate(event).outcome == "hard_block"
        assert kinds() == ["block"]  # the source of truth, before the answer
        assert not state_path.exists()  # the state follows the answer
        row = evaluator.status("s1").behaviors["no-destructive-git"]
        assert (row.counter, row.blocks) == (1, 1)  # rebuilt from the log meanwhile
    assert kinds() == ["block", "seen"]
    assert on_disk(state_path)["s1"]["behaviors"]["no-destructive-git"]["counter"] == 1  # type: ignore[index]
    row = evaluator.status("s1").behaviors["no-destructive-git"]
    assert (row.counter, row.blocks) == (1, 1)


# -- a denial's fsync after the answer ------------------------------------------------------------


class Disk:
    """What reaches the disk, in order: each fsync (named by the file its descriptor is open
    on, through ``/proc/self/fd``) and each rename, and the marks a test adds ("answer").

    A spy around the real calls: every call still runs."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.events: list[str] = []
        fsync, replace = os.fsync, os.replace

        def spied_fsync(fd: int) -> None:
            self.events.append("fsync " + Path(os.readlink(f"/proc/self/fd/{fd}")).name)
            fsync(fd)

        def spied_replace(src: str, dst: str, **kw: object) -> None:
            replace(src, dst, **kw)  # type: ignore[arg-type]
            self.events.append("rename " + Path(dst).name)

        monkeypatch.setattr(os, "fsync", spied_fsync)
        monkeypatch.setattr(os, "replace", spied_replace)

    def mark(self, what: str) -> None:
        self.events.append(what)

    def before(self, mark: str) -> list[str]:
        return self.events[: self.events.index(mark)]


LADDER = {
    "nudger": rule("nudger", "nudge", "nudge-me"),
    "softy": rule("softy", "soft_block", "soft-me"),
    "asker": rule("asker", "soft_block", "ask-me", override="user"),
    "hardy": rule("hardy", "hard_block", "hard-me"),
}


@pytest.fixture
def laddered(tmp_path: Path) -> tuple[fp.Evaluator, Path]:
    """An evaluator over the file store and the JSONL log, with a block of each kind."""
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("the spy names descriptors through /proc/self/fd (Linux)")
    catalog = fp.load_catalog(write_catalog(tmp_path / "behaviors", LADDER))
    log = tmp_path / "audit.log"
    evaluator = fp.Evaluator(
        catalog, store=FileStore(tmp_path / "state.json"), audit=fp.JsonlAuditSink(log)
    )
    fp.JsonlAuditSink(log).append_many([{"kind": "note"}])  # the log exists (its creation syncs)
    return evaluator, log


def answered(evaluator: fp.Evaluator, disk: Disk, command: str) -> str:
    """The outcome of ``command`` in a warm answer's scope, the answer marked on the disk."""
    with answer_first(on_error=pytest.fail):
        outcome = evaluator.evaluate(bash(command)).outcome
        disk.mark("answer")
    disk.mark("scope ended")
    return outcome


@pytest.mark.parametrize(
    ("command", "outcome"), [("hard-me", "hard_block"), ("soft-me", "soft_block")]
)
def test_a_denial_is_answered_before_its_fsync_which_precedes_the_state(
    laddered: tuple[fp.Evaluator, Path], monkeypatch: pytest.MonkeyPatch, command: str, outcome: str
) -> None:
    evaluator, log = laddered
    disk = Disk(monkeypatch)
    assert answered(evaluator, disk, command) == outcome
    kinds = [json.loads(line)["kind"] for line in log.read_text().splitlines()]
    assert kinds == ["note", "block"]  # written before the answer (the spy saw no fsync of it)
    assert disk.before("answer") == []
    after = disk.before("scope ended")[1:]
    assert after.index("fsync audit.log") < after.index("rename state.json")
    assert after[0] == "fsync audit.log"


@pytest.mark.parametrize(
    ("calls", "outcome"),
    [(["nudge-me"], "nudge"), (["ask-me"], "soft_block"), (["soft-me", "soft-me"], "allow")],
    ids=["nudge", "ask", "override"],
)
def test_a_call_that_may_run_is_on_durable_record_before_its_answer(
    laddered: tuple[fp.Evaluator, Path],
    monkeypatch: pytest.MonkeyPatch,
    calls: list[str],
    outcome: str,
) -> None:
    """A nudge runs; a soft block the user can approve (``ask``) may run; the retry of an
    agent's soft block runs, overridden (SPEC §4: the log is fsynced first)."""
    evaluator, log = laddered
    disk = Disk(monkeypatch)
    for command in calls[:-1]:
        answered(evaluator, disk, command)
    disk.events.clear()
    assert answered(evaluator, disk, calls[-1]) == outcome
    assert disk.before("answer") == ["fsync audit.log"]
    if outcome == "allow":
        assert json.loads(log.read_text().splitlines()[-1])["kind"] == "override"


def test_outside_a_scope_a_denial_is_durable_before_its_answer(
    laddered: tuple[fp.Evaluator, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cold hook, the library and the CLI answer after every write, as before."""
    evaluator, _ = laddered
    disk = Disk(monkeypatch)
    assert evaluator.evaluate(bash("hard-me")).outcome == "hard_block"
    assert disk.events[0] == "fsync audit.log"
    assert disk.events.index("fsync audit.log") < disk.events.index("rename state.json")


def test_the_first_record_of_a_log_is_durable_before_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The append that creates the log fsyncs it and its folder at once: the folder's entry
    would otherwise wait for the answer with nothing holding it."""
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("the spy names descriptors through /proc/self/fd (Linux)")
    log = tmp_path / "audit" / "audit.log"
    sink = fp.JsonlAuditSink(log)
    disk = Disk(monkeypatch)
    with answer_first(on_error=pytest.fail):
        sink.append_sync_after_answer([{"kind": "block"}])
        disk.mark("answer")
    assert disk.before("answer") == ["fsync audit.log", "fsync audit"]
    disk.events.clear()
    with answer_first(on_error=pytest.fail):
        sink.append_sync_after_answer([{"kind": "block"}])
        disk.mark("answer")
        assert len(log.read_text().splitlines()) == 2  # every reader sees it meanwhile
    assert disk.events == ["answer", "fsync audit.log"]
    assert fp.JsonlAuditSink(log).verify().ok


def head_of(log: Path) -> int:
    """The seq the log's head anchor (in its lock file) names."""
    from forge_policy.audit._tail import read_head

    fd = os.open(str(log) + ".lock", os.O_RDONLY)
    try:
        found = read_head(fd)
    finally:
        os.close(fd)
    assert found is not None
    return found[0]


def test_the_head_anchor_moves_once_the_denial_is_durable_and_never_back(tmp_path: Path) -> None:
    """The lock file's head anchor (what a truncation of the log is found by) names a denial's
    records only once they are fsynced: a power cut between could otherwise keep the anchor and
    lose the records, and the next append would report them removed. A later append that moved
    the anchor further meanwhile keeps its place."""
    log = tmp_path / "audit.log"
    sink = fp.JsonlAuditSink(log)
    sink.append_many([{"kind": "note"}])
    with answer_first(on_error=pytest.fail):
        sink.append_sync_after_answer([{"kind": "block"}])
        assert head_of(log) == 1  # answered: the record is in the log, not yet named by the anchor
    assert head_of(log) == 2
    with answer_first(on_error=pytest.fail):
        sink.append_sync_after_answer([{"kind": "block"}])
        fp.JsonlAuditSink(log).append_many([{"kind": "override"}])  # another writer, durable
        assert head_of(log) == 4
    assert head_of(log) == 4  # the denial's deferred anchor (3) does not move it back
    assert fp.JsonlAuditSink(log).verify().ok


def test_a_held_audit_lock_leaves_the_anchor_behind_and_reports_nothing(tmp_path: Path) -> None:
    """After the answer the anchor waits at most 0.1 s for the lock (an agent may hold it,
    SPEC §9): the anchor left behind is harmless, and the next append moves it."""
    log = tmp_path / "audit.log"
    sink = fp.JsonlAuditSink(log)
    sink.append_many([{"kind": "note"}])
    held = FileLock(str(log) + ".lock", timeout=1)
    start = time.monotonic()
    with answer_first(on_error=pytest.fail):
        sink.append_sync_after_answer([{"kind": "block"}])
        held.__enter__()  # the agent's lock, taken after the append, held past the answer
    assert time.monotonic() - start < 2
    held.__exit__(None, None, None)
    assert head_of(log) == 1
    sink.append_many([{"kind": "override"}])
    assert [r["seq"] for r in sink.records()] == [1, 2, 3]
    assert fp.JsonlAuditSink(log).verify().ok
