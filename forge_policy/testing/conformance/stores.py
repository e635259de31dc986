"""The :class:`~forge_policy.RuntimeStore` conformance suite, for any store (SPEC §9).

Subclass :class:`RuntimeStoreSuite` in a test module, name the subclass ``Test…`` and give it a
``make_store`` fixture returning a factory; pytest then runs every requirement against it::

    import pytest
    from forge_policy.testing.conformance import RuntimeStoreSuite

    class TestMyStore(RuntimeStoreSuite):
        @pytest.fixture
        def make_store(self, tmp_path):
            return lambda: MyStore(tmp_path / "state")

Each call of the factory must open a store over the *same* backing data (as reopening a file
would); an in-memory store returns the same object each time. The suite closes what it opens.
:class:`~forge_policy.MemoryStore` is the oracle: a store must be indistinguishable from it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forge_policy._infra.answer_first import answer_first
from forge_policy.state import SessionState, touch_interval
from forge_policy.stores.base import RuntimeStore, read_only
from forge_policy.stores.memory import MemoryStore
from forge_policy.testing.conformance._opened import closing_each

T0 = 1_800_000_000.0
# far past every time the suite writes: purge(RESET, 0) empties a store
_RESET = T0 + 1e9

Fingerprint = Callable[[], object]


def put(store: RuntimeStore, session_id: str, now: float = T0, **flags: bool) -> None:
    """Create or update ``session_id`` with ``flags`` set, last accessed at ``now``."""

    def apply(current: SessionState | None) -> tuple[None, SessionState]:
        state = current if current is not None else SessionState.new(now)
        state.flags.update(flags)
        state.touch(now)
        return None, state

    store.transact(session_id, apply)


_OP = st.one_of(
    st.tuples(st.just("put"), st.sampled_from("abcd"), st.integers(0, 10)),
    st.tuples(st.just("read"), st.sampled_from("abcd"), st.just(0)),
    st.tuples(st.just("fail"), st.sampled_from("abcd"), st.just(0)),
    st.tuples(st.just("purge"), st.just(""), st.integers(0, 10)),
)


def run_ops(
    store: RuntimeStore, ops: list[tuple[str, str, int]], *, in_answers: bool = False
) -> list[object]:
    """Every answer ``store`` gives to ``ops`` (the oracle test compares them with memory's).
    ``in_answers``: each op runs as a warm worker's request does, in an
    :func:`~forge_policy._infra.answer_first` scope that the store may hand its write to; what
    it read back is read once the scope has ended (as the next request would)."""
    answers: list[object] = []
    for name, sid, t in ops:
        errors: list[str] = []
        with answer_first(on_error=errors.append) if in_answers else contextlib.nullcontext():
            _run_op(store, name, sid, t, answers)
        assert errors == [], errors
        loaded = store.load(sid) if sid else None
        answers.append((store.session_ids(), loaded and loaded.to_dict()))
    return answers


def _run_op(store: RuntimeStore, name: str, sid: str, t: int, answers: list[object]) -> None:
    """One op of :func:`run_ops`, its answer appended to ``answers``."""
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


class RuntimeStoreSuite:
    """Every requirement of :class:`~forge_policy.RuntimeStore`, as tests.

    Provide ``make_store`` (a fixture returning a factory, see the module docstring).
    Optionally override ``fingerprint``: a fixture returning a callable that captures
    everything a write would change in the backing data (file bytes and mtimes, say); by
    default the suite compares the documents a freshly opened store reads back.

    The requirements, each checked by the test named after it:

    - **It is a RuntimeStore** (``test_is_a_runtime_store``): the protocol's methods exist.
    - **One call, one apply** (``test_transact_round_trip``): ``transact`` calls ``apply``
      exactly once with the stored state (None when unknown), writes the state it returns and
      returns its result; the evaluator appends to the audit log inside ``apply``, so a
      retrying backend retries before calling it, never after.
    - **None writes nothing** (``test_returning_none_writes_nothing``): not even the access
      time, and a mutation of the view ``apply`` received does not leak into the store.
    - **Abort on error** (``test_exception_in_apply_aborts_without_writing``): the exception
      propagates unchanged, nothing is written, the session is not left locked.
    - **Copies in, copies out** (``test_load_returns_copies``): mutating a loaded state, or the
      state handed to ``transact`` after it returns, changes nothing stored.
    - **Reads see commits** (``test_read_only_sees_every_committed_write``): ``load`` and the
      optional ``peek`` (:func:`~forge_policy.stores.base.read_only`) return the last
      committed version, never an older or torn one.
    - **Reopening sees the data** (``test_a_reopened_store_sees_what_was_written``).
    - **Sorted ids** (``test_session_ids_sorted``): ``session_ids`` is sorted, without
      duplicates.
    - **Expiry by last access** (``test_purge_by_ttl_on_last_access_not_creation``):
      ``purge`` removes exactly what :meth:`~forge_policy.SessionState.expired` says (the one
      expiry rule, touch slack included) and returns how many.
    - **Faithful documents** (``test_unknown_keys_survive``): unknown keys round-trip.
    - **Works under the evaluator** (``test_evaluator_end_to_end_escalates_and_overrides``).
    - **Indistinguishable from memory** (``test_matches_memory_store``): random sequences of
      writes, reads, failing applies and purges give MemoryStore's answers; also when each runs
      in a warm answer's scope (``test_matches_memory_store_answering_first``), to which a
      store may hand its write (:mod:`forge_policy._infra.answer_first`: the file store does).

    Requirements of :class:`~forge_policy.RuntimeStore` the suite cannot check without knowing
    the backend, which a store's own tests must cover: mutual exclusion across threads and
    processes; a stored document that is not a session is moved aside and reported; backend
    failures raise :class:`~forge_policy.StoreError`, and a wait past its timeout
    :class:`~forge_policy.LockTimeout`, never a hang.
    """

    @pytest.fixture
    def make_store(self) -> Callable[[], RuntimeStore]:
        raise NotImplementedError(
            f"{type(self).__name__}: define a make_store fixture returning a factory of stores"
        )

    @pytest.fixture
    def open_store(self, make_store: Callable[[], RuntimeStore]) -> Iterator[Callable[[], Any]]:
        """``make_store``, closing every store it opened when the test ends."""
        yield from closing_each(make_store)

    @pytest.fixture
    def store(self, open_store: Callable[[], Any]) -> Any:
        return open_store()

    @pytest.fixture
    def fingerprint(self, open_store: Callable[[], Any]) -> Fingerprint:
        """What a fresh store reads back: every session's document."""

        def read_back() -> object:
            fresh = open_store()
            return {sid: fresh.load(sid).to_dict() for sid in fresh.session_ids()}

        return read_back

    def test_is_a_runtime_store(self, store: Any) -> None:
        assert isinstance(store, RuntimeStore)

    def test_transact_round_trip(self, store: Any) -> None:
        seen: list[SessionState | None] = []

        def bump(current: SessionState | None) -> tuple[int, SessionState]:
            seen.append(current)
            state = current if current is not None else SessionState.new(T0)
            state.behavior("b").counter += 1
            state.totals["tokens"] = state.totals.get("tokens", 0) + 2.5
            return state.behavior("b").counter, state

        assert store.transact("s1", bump) == 1
        assert store.transact("s1", bump) == 2
        assert len(seen) == 2, "apply must run exactly once per transact"
        assert seen[0] is None and seen[1] is not None
        loaded = store.load("s1")
        assert loaded.behavior("b").counter == 2
        assert loaded.totals == {"tokens": 5.0}
        assert loaded.to_dict() == seen[1].to_dict()  # bump mutated the view it then returned

    def test_returning_none_writes_nothing(self, store: Any, fingerprint: Fingerprint) -> None:
        assert store.transact("new", lambda current: ("read", None)) == "read"
        assert store.load("new") is None and store.session_ids() == []
        put(store, "s1", flag=True)
        before = fingerprint()

        def read_and_scribble(current: SessionState | None) -> tuple[bool, None]:
            assert current is not None
            current.flags["scribbled"] = True  # mutating the view must not leak into the store
            current.touch(T0 + 5)
            return True, None

        assert store.transact("s1", read_and_scribble) is True
        assert store.transact("s2", lambda current: (current, None)) is None
        assert fingerprint() == before
        assert store.load("s1").flags == {"flag": True}
        put(store, "s1", written=True)
        assert fingerprint() != before, "the fingerprint must see a write"

    def test_exception_in_apply_aborts_without_writing(
        self, store: Any, fingerprint: Fingerprint
    ) -> None:
        put(store, "s1", flag=True)
        before = fingerprint()

        class Boom(Exception):
            pass

        def explode(current: SessionState | None) -> tuple[None, SessionState]:
            assert current is not None
            current.flags["half-done"] = True
            raise Boom("apply failed")

        with pytest.raises(Boom):
            store.transact("s1", explode)
        assert fingerprint() == before
        assert store.load("s1").flags == {"flag": True}
        put(store, "s1", again=True)  # the lock was released
        assert store.load("s1").flags == {"flag": True, "again": True}

    def test_load_returns_copies(self, store: Any) -> None:
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

    def test_read_only_sees_every_committed_write(self, store: Any) -> None:
        assert read_only(store, "s1") is None
        for n in range(1, 4):
            put(store, "s1", T0 + n, **{f"f{n}": True})
            seen = read_only(store, "s1")
            assert seen is not None and seen.to_dict() == store.load("s1").to_dict()
            assert sorted(seen.flags) == [f"f{k}" for k in range(1, n + 1)]
        held = read_only(store, "s1")
        assert held is not None
        put(store, "s1", T0 + 9, late=True)  # a later write does not change what was read
        after = read_only(store, "s1")
        assert after is not None and "late" in after.flags and "late" not in held.flags

    def test_a_reopened_store_sees_what_was_written(
        self, store: Any, open_store: Callable[[], Any]
    ) -> None:
        put(store, "s1", T0, flag=True)
        put(store, "s2", T0 + 1)
        again = open_store()
        assert again.session_ids() == ["s1", "s2"]
        assert again.load("s1").to_dict() == store.load("s1").to_dict()
        put(again, "s1", T0 + 2, later=True)
        assert store.load("s1").flags == {"flag": True, "later": True}

    def test_session_ids_sorted(self, store: Any) -> None:
        assert store.session_ids() == []
        for sid in ("zeta", "alpha", "mid", "ünï", "alpha"):
            put(store, sid)
        assert store.session_ids() == ["alpha", "mid", "zeta", "ünï"]

    def test_purge_by_ttl_on_last_access_not_creation(self, store: Any) -> None:
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

    def test_unknown_keys_survive(self, store: Any) -> None:
        import forge_policy as fp

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

    def test_evaluator_end_to_end_escalates_and_overrides(self, store: Any) -> None:
        import forge_policy as fp

        clock = [T0]
        ev = fp.Evaluator(fp.builtin_catalog(), store=store, clock=lambda: clock[0])
        code = {"file_path": "/src/app.py", "content": "print(1)"}
        write = fp.Event("PreToolUse", "s1", tool_name="Write", tool_input=code)
        outcomes = []
        for _ in range(5):
            clock[0] += 1
            decision = ev.evaluate(write)
            assert not decision.diagnostics, decision.diagnostics  # decided with state
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

    def test_per_agent_counters_survive(self, store: Any, open_store: Callable[[], Any]) -> None:
        """Issue 27: a behavior's per-agent breakdown and the subagents a session announced
        round-trip like its counter, and a reopened store continues each agent's ladder."""
        import forge_policy as fp

        clock = [T0]
        ev = fp.Evaluator(fp.builtin_catalog(), store=store, clock=lambda: clock[0])
        code = {"file_path": "/src/app.py", "content": "print(1)"}

        def write(agent_id: str = "", agent: str = "") -> fp.Event:
            return fp.Event(
                "PreToolUse",
                "s1",
                tool_name="Write",
                tool_input=code,
                agent_id=agent_id,
                agent=agent,
            )

        explore = ("a-1", "Explore")
        ev.evaluate(fp.Event("SubagentStart", "s1", agent_id="a-1", agent="Explore"))
        outcomes = []
        for agent in (explore, explore, ("", ""), explore):
            clock[0] += 1
            outcomes.append(ev.evaluate(write(*agent)).outcome)
        # the session's ladder (search-first: nudge, nudge, warning…) counts every agent
        assert outcomes == ["nudge", "nudge", "warning", "warning"]
        again = open_store()
        data = again.load("s1").to_dict()
        assert data == store.load("s1").to_dict()
        shares = data["behaviors"]["search-first"]["agents"]
        assert {k: (v["type"], v["counter"], v["effective_level"]) for k, v in shares.items()} == {
            "": ("", 1, "warning"),
            "a-1": ("Explore", 3, "warning"),
        }
        assert data["agents"]["a-1"]["type"] == "Explore"
        clock[0] += 1
        reopened = fp.Evaluator(fp.builtin_catalog(), store=again, clock=lambda: clock[0])
        assert reopened.evaluate(write(*explore)).outcome == "soft_block"
        rows = reopened.status("s1").behaviors["search-first"].agents
        assert [(r.agent_id, r.counter, r.blocks) for r in rows] == [("", 1, 0), ("a-1", 4, 1)]

    # the store is emptied by a purge before each example (the factory reopens the same data)
    @settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(ops=st.lists(_OP, max_size=25))
    def test_matches_memory_store(self, store: Any, ops: list[tuple[str, str, int]]) -> None:
        store.purge(_RESET, 0.0)
        assert store.session_ids() == []
        assert run_ops(store, ops) == run_ops(MemoryStore(), ops)

    @settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(ops=st.lists(_OP, max_size=25))
    def test_matches_memory_store_answering_first(
        self, store: Any, ops: list[tuple[str, str, int]]
    ) -> None:
        store.purge(_RESET, 0.0)
        assert run_ops(store, ops, in_answers=True) == run_ops(MemoryStore(), ops)
