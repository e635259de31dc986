"""The RuntimeStore contract, run against memory, file and SQLite stores alike (SPEC §9)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import forge_policy as fp
from forge_policy.state import SessionState, touch_interval
from forge_policy.stores import MemoryStore

from .conftest import KINDS, Backend

T0 = 1_800_000_000.0


def put(store: Any, session_id: str, now: float = T0, **flags: bool) -> None:
    def apply(current: SessionState | None) -> tuple[None, SessionState]:
        state = current if current is not None else SessionState.new(now)
        state.flags.update(flags)
        state.touch(now)
        return None, state

    store.transact(session_id, apply)


def test_is_a_runtime_store(store: Any) -> None:
    assert isinstance(store, fp.RuntimeStore)
    with store as entered:
        assert entered is store


def test_transact_round_trip(store: Any) -> None:
    seen: list[SessionState | None] = []

    def bump(current: SessionState | None) -> tuple[int, SessionState]:
        seen.append(current)
        state = current if current is not None else SessionState.new(T0)
        state.behavior("b").counter += 1
        state.totals["tokens"] = state.totals.get("tokens", 0) + 2.5
        return state.behavior("b").counter, state

    assert store.transact("s1", bump) == 1
    assert store.transact("s1", bump) == 2
    assert len(seen) == 2  # apply runs once per transaction: it may append to the audit log
    assert seen[0] is None and seen[1] is not None
    loaded = store.load("s1")
    assert loaded.behavior("b").counter == 2
    assert loaded.totals == {"tokens": 5.0}
    assert loaded.to_dict() == seen[1].to_dict()  # bump mutated the view it then returned


def test_returning_none_writes_nothing(backend: Backend) -> None:
    store = backend.open()
    assert store.transact("new", lambda current: ("read", None)) == "read"
    assert store.load("new") is None and store.session_ids() == []
    if backend.kind == "file":
        assert not backend.path.exists()  # the allow path does not even create the file
    put(store, "s1", flag=True)
    before = backend.fingerprint()

    def read_and_scribble(current: SessionState | None) -> tuple[bool, None]:
        assert current is not None
        current.flags["scribbled"] = True  # mutating the view must not leak into the store
        return True, None

    assert store.transact("s1", read_and_scribble) is True
    assert store.transact("s2", lambda current: (current, None)) is None
    assert backend.fingerprint() == before
    assert store.load("s1").flags == {"flag": True}
    put(store, "s1", written=True)
    assert backend.fingerprint() != before  # the fingerprint does see a write


def test_exception_in_apply_aborts_without_writing(backend: Backend) -> None:
    store = backend.open()
    put(store, "s1", flag=True)
    before = backend.fingerprint()

    class Boom(Exception):
        pass

    def explode(current: SessionState | None) -> tuple[None, SessionState]:
        assert current is not None
        current.flags["half-done"] = True
        raise Boom("apply failed")

    with pytest.raises(Boom):
        store.transact("s1", explode)
    assert backend.fingerprint() == before
    assert store.load("s1").flags == {"flag": True}
    put(store, "s1", again=True)  # the lock was released
    assert store.load("s1").flags == {"flag": True, "again": True}


def test_load_returns_copies(store: Any) -> None:
    put(store, "s1", flag=True)
    loaded = store.load("s1")
    loaded.flags["mutated"] = True
    loaded.behavior("b").counter = 99
    assert store.load("s1").flags == {"flag": True}
    assert "b" not in store.load("s1").behavior_ids()
    assert store.load("unknown") is None

    kept: list[SessionState] = []

    def keep(current: SessionState | None) -> tuple[None, SessionState]:
        state = SessionState.new(T0)
        kept.append(state)
        return None, state

    store.transact("s2", keep)
    kept[0].flags["after-commit"] = True  # the caller's object is not the stored one
    assert store.load("s2").flags == {}


def test_read_only_sees_every_committed_write(store: Any) -> None:
    """``read_only`` (the allow path's read: the store's ``peek``, else ``load``) shows the
    state of the last committed transaction — never an older parse, never a torn one."""
    from forge_policy.stores.base import read_only

    assert read_only(store, "s1") is None
    for n in range(1, 4):
        put(store, "s1", T0 + n, **{f"f{n}": True})
        seen = read_only(store, "s1")
        assert seen is not None and seen.to_dict() == store.load("s1").to_dict()
        assert sorted(seen.flags) == [f"f{k}" for k in range(1, n + 1)]
    held = read_only(store, "s1")
    put(store, "s1", T0 + 9, late=True)  # a write after the read does not change what was read
    assert "late" not in held.flags and "late" in read_only(store, "s1").flags


def test_session_ids_sorted(store: Any) -> None:
    assert store.session_ids() == []
    for sid in ("zeta", "alpha", "mid", "ünï", "alpha"):
        put(store, sid)
    assert store.session_ids() == ["alpha", "mid", "zeta", "ünï"]


def test_purge_by_ttl_on_last_access_not_creation(store: Any) -> None:
    ttl = 86400.0
    put(store, "old", now=T0)
    put(store, "created-old-touched-recently", now=T0)
    put(store, "created-old-touched-recently", now=T0 + 2 * ttl)
    put(store, "exactly-at-ttl", now=T0 + ttl)
    now = T0 + 2 * ttl
    assert store.purge(now, ttl) == 1  # "old" only: "exactly-at-ttl" is not past the ttl
    assert store.session_ids() == ["created-old-touched-recently", "exactly-at-ttl"]
    assert store.purge(now, ttl) == 0
    # the one expiry rule allows the touch slack (forge_policy.state.is_expired)
    assert store.purge(now + ttl + touch_interval(ttl), ttl) == 1
    assert store.purge(now + ttl + touch_interval(ttl) + 1, ttl) == 1
    assert store.session_ids() == []


def test_unknown_keys_survive(store: Any) -> None:
    doc = SessionState.new(T0).to_dict()
    doc["x-future"] = {"nested": [1, "two", None, True]}
    doc["behaviors"] = {"b": {"counter": 3, "x-note": "kept"}}
    store.transact("s1", lambda current: (None, SessionState(doc)))
    ev = fp.Evaluator(fp.builtin_catalog(), store=store, clock=lambda: T0 + 1)
    grep = fp.Event("PreToolUse", "s1", tool_name="Grep", tool_input={"pattern": "x"}, cwd="/p")
    ev.evaluate(grep)
    data = store.load("s1").to_dict()
    assert data["x-future"] == {"nested": [1, "two", None, True]}
    assert data["behaviors"]["b"] == {"counter": 3, "x-note": "kept"}
    assert data["flags"] == {"searched:/p/": True}  # search-first's credit for the folder


def test_evaluator_end_to_end_escalates_and_overrides(store: Any) -> None:
    clock = [T0]
    ev = fp.Evaluator(fp.builtin_catalog(), store=store, clock=lambda: clock[0])
    code = {"file_path": "/src/app.py", "content": "print(1)"}
    write = fp.Event("PreToolUse", "s1", tool_name="Write", tool_input=code)
    outcomes = []
    for _ in range(5):
        clock[0] += 1
        decision = ev.evaluate(write)
        assert not decision.diagnostics  # decided with state, not the stateless fallback
        outcomes.append(decision.outcome)
    assert outcomes == ["nudge", "nudge", "warning", "warning", "soft_block"]
    clock[0] += 30  # within the 60 s override window
    sixth = ev.evaluate(write)
    assert not sixth.blocked
    assert [o["mechanism"] for o in sixth.overrides] == ["retry"]
    bstate = store.load("s1").behavior("search-first")
    assert bstate.counter == 5
    assert [o["mechanism"] for o in bstate.overrides] == ["retry"]
    assert ev.status("s1").behaviors["search-first"].counter == 5


# -- the oracle: random operation sequences give the same answers on every store -------------

op = st.one_of(
    st.tuples(st.just("put"), st.sampled_from("abcd"), st.integers(0, 10)),
    st.tuples(st.just("read"), st.sampled_from("abcd"), st.just(0)),
    st.tuples(st.just("fail"), st.sampled_from("abcd"), st.just(0)),
    st.tuples(st.just("purge"), st.just(""), st.integers(0, 10)),
)


def run(store: Any, ops: list[tuple[str, str, int]]) -> list[object]:
    answers: list[object] = []
    for name, sid, t in ops:
        now = T0 + t * 1000.0
        if name == "put":

            def bump(current: SessionState | None, now: float = now) -> tuple[int, SessionState]:
                state = current if current is not None else SessionState.new(now)
                state.behavior("b").counter += 1
                state.touch(now)
                return state.behavior("b").counter, state

            answers.append(store.transact(sid, bump))
        elif name == "read":
            answers.append(store.transact(sid, lambda cur: (cur and cur.to_dict(), None)))
        elif name == "fail":
            with pytest.raises(ZeroDivisionError):
                store.transact(sid, lambda cur: (1 / 0, cur))
        else:
            answers.append(store.purge(now, 2500.0))
        loaded = store.load(sid) if sid else None
        answers.append((store.session_ids(), loaded and loaded.to_dict()))
    return answers


@given(st.lists(op, max_size=25))
def test_matches_memory_store(ops: list[tuple[str, str, int]]) -> None:
    expected = run(MemoryStore(), ops)
    with tempfile.TemporaryDirectory() as folder:
        for kind in KINDS[1:]:
            backend = Backend(kind, Path(folder) / kind)
            try:
                assert run(backend.open(), ops) == expected
            finally:
                backend.close()
