"""A crash between the audit write and the state write, repaired from the audit log."""

from __future__ import annotations

from typing import TYPE_CHECKING

import forge_policy as fp
from forge_policy.audit.base import session_records
from forge_policy.audit.jsonl import JsonlAuditSink
from forge_policy.engine.reconcile import reconcile_session
from forge_policy.levels import Level
from forge_policy.stores.memory import MemoryStore
from tests.helpers import CrashingStore, bash, behavior_yaml, write_catalog

from .conftest import FakeClock

if TYPE_CHECKING:
    from pathlib import Path

    from forge_policy.state import SessionState


def write(i: int) -> fp.Event:
    return fp.Event("PreToolUse", "s1", tool_name="Write", tool_input={"file_path": f"/r/f{i}.py"})


def setup(tmp_path: Path, clock: FakeClock) -> tuple[fp.Evaluator, CrashingStore, JsonlAuditSink]:
    store = CrashingStore()
    sink = JsonlAuditSink(tmp_path / "overrides.log")
    ev = fp.Evaluator(fp.builtin_catalog(), store=store, audit=sink, clock=clock)
    for i in range(5):
        clock.advance(1)
        ev.evaluate(write(i))
    return ev, store, sink


def reconcile(store: MemoryStore, sink: JsonlAuditSink) -> list[str]:
    def apply(current: SessionState | None) -> tuple[list[str], SessionState | None]:
        assert current is not None
        added = reconcile_session(current, session_records(sink, "s1"))
        return added, current if added else None

    return store.transact("s1", apply)


def test_lost_override_is_restored_and_not_granted_twice(tmp_path: Path, clock: FakeClock) -> None:
    ev, store, sink = setup(tmp_path, clock)
    store.armed = True
    clock.advance(5)
    ev.evaluate(write(4))  # override by retry: audited, then the crash loses the state write
    state = store.load("s1")
    assert state is not None and state.behavior("search-first").pending_block is not None
    (oid,) = [r["override_id"] for r in sink.records() if r["kind"] == "override"]

    assert reconcile(store, sink) == [oid]
    assert reconcile(store, sink) == []  # idempotent
    bstate = store.load("s1").behavior("search-first")  # type: ignore[union-attr]
    assert [o["override_id"] for o in bstate.overrides] == [oid]
    assert bstate.pending_block is None
    clock.advance(5)
    again = ev.evaluate(write(4))  # one override per block: this is a new violation
    assert again.blocked and again.violations[0].counter == 6


def test_the_evaluator_reconciles_before_granting_a_second_override(
    tmp_path: Path, clock: FakeClock
) -> None:
    ev, store, sink = setup(tmp_path, clock)
    store.armed = True
    clock.advance(5)
    ev.evaluate(write(4))  # override by retry: audited, then the crash loses the state write
    clock.advance(5)
    again = ev.evaluate(write(4))  # the stale pending block must not pass a second call
    assert again.blocked and again.violations[0].counter == 6
    assert sum(r["kind"] == "override" for r in sink.records()) == 1


def test_a_lost_grant_spent_on_a_retry_does_not_pass_the_block_twice(
    tmp_path: Path, clock: FakeClock
) -> None:
    """A retry of a pending block that spends a grant is recorded as an ``explicit`` override
    that consumed the pending block too (one block, one pass). Replayed after a lost state
    write, it must clear both (its ``released`` says so): reconciliation once cleared only the
    grant, and the stale pending block passed the same call again, a second override of one
    block."""
    ev, store, sink = setup(tmp_path, clock)  # the fifth write soft-blocked: pending
    # bound to the blocked call (SPEC §4 ``--call``): only then does its retry spend the grant
    call = [r for r in sink.records() if r["kind"] == "block"][-1]["call_id"]
    ev.override("s1", "search-first", reason="approved in chat", call=call)
    store.armed = True
    clock.advance(5)
    spent = ev.evaluate(write(4))  # the retry spends the grant: audited, then the state is lost
    assert [o["mechanism"] for o in spent.overrides] == ["explicit"]
    clock.advance(5)
    again = ev.evaluate(write(4))  # one override per block: this is a new violation
    assert [r["mechanism"] for r in sink.records() if r["kind"] == "override"] == ["explicit"]
    assert again.blocked and again.violations[0].counter == 6


def lost_hard_block(tmp_path: Path, clock: FakeClock) -> tuple[fp.Evaluator, CrashingStore]:
    """Behavior ``up`` soft-blocks, then hard-blocks from its second violation: ``make a`` was
    soft-blocked and granted an override, then ``make b`` hard-blocked (audited; the state
    write lost)."""
    esc = "    escalation:\n      - after: 2\n        level: hard_block\n"
    yaml = behavior_yaml("up", default_level="soft_block", escalation=esc)
    catalog = fp.load_catalog(write_catalog(tmp_path / "behaviors", {"up": yaml}))
    store = CrashingStore()
    sink = JsonlAuditSink(tmp_path / "overrides.log")
    ev = fp.Evaluator(catalog, store=store, audit=sink, clock=clock)
    assert ev.evaluate(bash("make a")).outcome == "soft_block"
    ev.override("s1", "up", reason="approved")
    store.armed = True
    clock.advance(1)
    assert ev.evaluate(bash("make b")).outcome == "hard_block"
    return ev, store


def test_a_lost_hard_block_leaves_nothing_to_override(tmp_path: Path, clock: FakeClock) -> None:
    """SPEC §4: hard_block has no pending block and no override. Replaying a lost hard_block
    record must clear the behavior's pending block and grant, as the evaluator does when it
    escalates; the reconciled state keeps both (status() shows a pending block)."""
    ev, store = lost_hard_block(tmp_path, clock)
    ev.reconcile("s1")
    bstate = store.load("s1").behavior("up")  # type: ignore[union-attr]
    assert bstate.effective_level is Level.HARD_BLOCK
    assert (bstate.pending_block, bstate.grant) == (None, None)


def test_a_lost_hard_block_is_not_overridden(tmp_path: Path, clock: FakeClock) -> None:
    """The evaluator reconciles before it grants an override, but decides again only when the
    log held overrides the state lacked: a lost hard_block is not replayed, so the retry of the
    earlier soft-blocked call passes on the stale pending block (and grant), and the log shows
    an override after the behavior reached hard_block."""
    ev, _ = lost_hard_block(tmp_path, clock)
    clock.advance(1)
    retry = ev.evaluate(bash("make a"))
    assert (retry.outcome, retry.overrides) == ("hard_block", ())


def test_lost_block_raises_the_counter_once(tmp_path: Path, clock: FakeClock) -> None:
    store = CrashingStore()
    sink = JsonlAuditSink(tmp_path / "overrides.log")
    ev = fp.Evaluator(fp.builtin_catalog(), store=store, audit=sink, clock=clock)
    for i in range(4):
        clock.advance(1)
        ev.evaluate(write(i))
    store.armed = True
    clock.advance(1)
    ev.evaluate(write(4))  # the fifth violation: block audited, state lost
    assert store.load("s1").behavior("search-first").counter == 4  # type: ignore[union-attr]
    for _ in range(2):
        reconcile_into = store.load("s1")
        assert reconcile_into is not None
        reconcile_session(reconcile_into, session_records(sink, "s1"))
        bstate = reconcile_into.behavior("search-first")
        assert (bstate.counter, bstate.effective_level, bstate.blocks) == (
            5,
            Level.SOFT_BLOCK,
            1,
        )


def test_records_of_an_expired_session_are_ignored(clock: FakeClock) -> None:
    from forge_policy.state import SessionState

    state = SessionState.new(clock.now)
    old = {
        "kind": "override",
        "override_id": "old",
        "behavior_id": "b",
        "timestamp": "2000-01-01T00:00:00+00:00",
    }
    assert reconcile_session(state, [old]) == []
    assert state.behavior_ids() == []


def _counted(counter: int, when: str, **extra: object) -> dict[str, object]:
    return {
        "kind": "block",
        "timestamp": when,
        "session_id": "s1",
        "behavior_id": "no-destructive-git",
        "counter": counter,
        "level": "hard_block",
        "call_hash": f"h{when}",
        **extra,
    }


def test_a_stateless_count_racing_a_transaction_is_not_lost() -> None:
    """SPEC §4 (never lose an increment) against §9 (a hard block waits for no lock): a call
    decided statelessly counted its number from the log while a transaction counted the same
    number from the state; folded back, it is one more, once however often it is read."""
    from forge_policy.engine.session import from_log
    from forge_policy.state import SessionState

    first = _counted(1, "2026-01-01T00:00:01+00:00")
    mine = _counted(2, "2026-01-01T00:00:02+00:00")  # the transaction's, in the state
    racing = _counted(2, "2026-01-01T00:00:02.5+00:00", degraded="rebuilt")  # the log's
    state = SessionState.new(0.0)
    reconcile_session(state, [first, mine])
    assert state.behavior("no-destructive-git").counter == 2
    reconcile_session(state, [first, mine, racing])
    assert state.behavior("no-destructive-git").counter == 3
    reconcile_session(state, [first, mine, racing])  # a second catch-up reads it again
    assert state.behavior("no-destructive-git").counter == 3
    # a stateless count ahead of the state (records the state missed) keeps its own number
    ahead = _counted(7, "2026-01-01T00:00:03+00:00", degraded="rebuilt")
    reconcile_session(state, [ahead])
    assert state.behavior("no-destructive-git").counter == 7
    # the log alone (what the next stateless call rebuilds) counts them the same way
    sink = fp.MemoryAuditSink()
    sink.append_many([first, mine, racing])
    rebuilt, counted = from_log(sink, "s1", 0.0)
    assert (rebuilt.behavior("no-destructive-git").counter, counted) == (3, 3)


def test_a_stateless_count_decided_before_the_state_was_created_is_not_lost() -> None:
    """64 hooks racing a new session: those that went stateless while the first transaction
    held the lock stamped their violations before the state it created (2 to 8 of 65 counts
    were lost at load 25 to 60, tests/stores/test_hook_contention.py). A stateless count up to
    RECONCILE_MARGIN before the state's creation is folded back; an older one, of an expired
    session's earlier life, and a transaction's record from before it are not."""
    from forge_policy._time import parse_iso
    from forge_policy.engine.reconcile import RECONCILE_MARGIN
    from forge_policy.state import SessionState

    born = parse_iso("2026-01-01T00:01:00+00:00")
    state = SessionState.new(born)
    reconcile_session(state, [_counted(1, "2026-01-01T00:01:00+00:00")])  # the creator's
    early = _counted(1, "2026-01-01T00:00:59.5+00:00", degraded="rebuilt")
    reconcile_session(state, [early])
    assert state.behavior("no-destructive-git").counter == 2
    past = f"2026-01-01T00:00:{59 - RECONCILE_MARGIN:04.1f}+00:00"  # just past the margin
    reconcile_session(state, [_counted(9, past, degraded="rebuilt"), _counted(9, past)])
    assert state.behavior("no-destructive-git").counter == 2


def test_a_catch_up_from_its_position_still_finds_a_lost_override(
    tmp_path: Path, clock: FakeClock
) -> None:
    """The state keeps where its last catch-up left the log (``reconciled``), so the next one
    reads only what was appended since (issue 28: flat history); an override audited after that
    position whose state write was lost is among them, and still passes one block once."""
    ev, store, sink = setup(tmp_path, clock)  # the fifth write soft-blocked: pending
    clock.advance(5)
    assert ev.evaluate(write(4)).overrides  # the retry: a catch-up over the override window
    state = store.load("s1")
    assert state is not None and state.reconciled is not None
    seqs = [r["seq"] for r in sink.records()]
    position = state.reconciled[0]
    assert position in seqs and position < seqs[-1]  # the log's end before the retry's append
    clock.advance(5)
    assert ev.evaluate(write(4)).blocked  # a new block (counter 6), caught up from the position
    store.armed = True
    clock.advance(5)
    assert ev.evaluate(write(4)).overrides  # overridden: audited, then the state write is lost
    clock.advance(5)
    again = ev.evaluate(write(4))  # the stale pending block must not pass a second call
    assert again.blocked and again.violations[0].counter == 7
    assert sum(r["kind"] == "override" for r in sink.records()) == 2
    after = store.load("s1")
    assert after is not None and after.reconciled is not None
    assert after.reconciled[0] > position


def test_a_position_in_another_log_is_not_trusted(tmp_path: Path, clock: FakeClock) -> None:
    """A state whose position names another log (another first line: the log was replaced)
    catches up by time, as without a position: the lost override is still found."""
    ev, store, sink = setup(tmp_path, clock)
    clock.advance(5)
    ev.evaluate(write(4))
    clock.advance(5)
    assert ev.evaluate(write(4)).blocked

    def elsewhere(current: SessionState | None) -> tuple[None, SessionState | None]:
        assert current is not None and current.reconciled is not None
        seq, since, _ = current.reconciled
        current.set_reconciled(seq + 1000, since, "0" * 64)  # ahead of this log, and not it
        return None, current

    store.transact("s1", elsewhere)
    store.armed = True
    clock.advance(5)
    assert ev.evaluate(write(4)).overrides  # audited, then the state write is lost
    clock.advance(5)
    again = ev.evaluate(write(4))
    assert again.blocked and again.violations[0].counter == 7
    state = store.load("s1")
    assert state is not None and state.reconciled is not None
    assert sink.last_append is not None
    assert state.reconciled[2] == sink.last_append.origin  # read anew: this log's position
    assert state.reconciled[0] < [r["seq"] for r in sink.records()][-1]
