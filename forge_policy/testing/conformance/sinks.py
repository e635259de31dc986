"""The :class:`~forge_policy.AuditSink` conformance suite, for any sink (SPEC §4, §9).

Subclass :class:`AuditSinkSuite` in a test module, name the subclass ``Test…`` and give it a
``make_sink`` fixture returning a factory; pytest then runs every requirement against it::

    import pytest
    from forge_policy.testing.conformance import AuditSinkSuite

    class TestMySink(AuditSinkSuite):
        @pytest.fixture
        def make_sink(self, tmp_path):
            return lambda: MySink(tmp_path / "audit.log")

Each call of the factory must open a sink over the *same* stored records (as reopening a log
would); an in-memory sink returns the same object each time. The suite closes what it opens.

A sink never redacts: every writer (the engine, the hook, the CLI, the git hooks, the
adapters) hands records over through :func:`forge_policy.audit.base.write`, which makes them
JSON-ready and redacted first. A sink stores what it is given.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from forge_policy.audit.base import (
    AuditSink,
    Checkpointed,
    NewestFirst,
    RecordsSince,
    SessionRecordsAfter,
    SessionRecordsSince,
    SyncsAfterAnswer,
    Verifiable,
    newest_first,
    recent_records,
    records_after,
    session_records,
    write,
)
from forge_policy.testing.conformance._opened import closing_each

T0 = 1_800_000_000.0
# an AWS key id, built here so that the file itself holds none (AKIA…EXAMPLE is a placeholder)
_AWS_ID = "AKIA" + "IOSFODNN7EXAMPL3"


def block(i: int, session: str = "s1", behavior: str = "search-first") -> dict[str, Any]:
    """A block record, numbered by ``i``."""
    return {"kind": "block", "session_id": session, "behavior_id": behavior, "counter": i, "i": i}


def override(oid: str, session: str = "s1", behavior: str = "search-first") -> dict[str, Any]:
    """An override record with id ``oid``."""
    return {
        "kind": "override",
        "override_id": oid,
        "session_id": session,
        "behavior_id": behavior,
        "counter": 5,
        "mechanism": "retry",
        "reason": "",
    }


def plain(records: Any) -> list[dict[str, Any]]:
    """Records without the ``seq`` a :class:`~forge_policy.audit.base.Verifiable` sink adds."""
    return [{k: v for k, v in r.items() if k != "seq"} for r in records]


def _claims(sink: object, capability: type) -> bool:
    """Whether ``sink`` has an optional capability (without narrowing its type: the suite
    keeps calling the sink's other methods)."""
    return isinstance(sink, capability)


def _end(sink: Any) -> int:
    """Where a log ends: its last ``seq`` (a sink that numbers no record, the memory sink:
    how many records it holds, each record's place being its position)."""
    records = list(sink.records())
    seqs = [r["seq"] for r in records if "seq" in r]
    return max(seqs) if seqs else len(records)


def _stamped(i: int, session: str, at: float, **extra: Any) -> dict[str, Any]:
    from forge_policy._time import iso

    return {**block(i, session), "timestamp": iso(at), **extra}


class AuditSinkSuite:
    """Every requirement of :class:`~forge_policy.AuditSink` and of the optional capabilities a
    sink claims, as tests. Provide ``make_sink`` (see the module docstring).

    For every sink:

    - **It is an AuditSink** (``test_is_an_audit_sink``); an empty sink reads back nothing,
      and appending nothing changes nothing (``test_empty``).
    - **As written, in order** (``test_append_and_read_back_in_order``): ``records`` yields
      every record appended, oldest first, equal to what was appended (any iterable); a sink
      that is not :class:`~forge_policy.audit.base.Verifiable` stores the caller's keys as
      they are, ``seq`` included (``test_seq_is_the_verifiable_sinks_own``).
    - **No shared mutable data** (``test_caller_records_are_not_mutated``,
      ``test_nested_values_read_back_are_copies``).
    - **Reopening keeps every record** (``test_a_reopened_sink_keeps_every_record``): the
      factory's next sink reads what the first wrote and appends after it, also after
      ``close`` (called twice: it is idempotent).
    - **Concurrent appenders** (``test_threads_keep_every_record_and_their_order``): no record
      lost, each thread's order kept.
    - **The reading helpers agree** (``test_reading_helpers_agree``):
      :func:`~forge_policy.audit.base.session_records` and the optional
      ``records_for_session`` give one session's records as ``records`` would.
    - **Works under the evaluator** (``test_evaluator_writes_blocks_and_a_retry_override``).
    - **Stored as given** (``test_secrets_never_reach_the_sink``): records written through
      :func:`~forge_policy.audit.base.write` are stored and read back redacted, as given; the
      sink adds nothing that brings a secret back.

    For a sink that claims a capability:

    - :class:`~forge_policy.audit.base.Verifiable` (``test_seq_is_the_verifiable_sinks_own``):
      ``seq`` numbers the records from 1, replacing a caller's ``seq``/``prev``, and
      ``verify()`` of an untouched log is ok (also after reopening and under threads).
    - :class:`~forge_policy.audit.base.Checkpointed`
      (``test_a_checkpointed_sink_says_where_each_append_began_and_ended``).
    - :class:`~forge_policy.audit.base.RecordsSince` /
      :class:`~forge_policy.audit.base.SessionRecordsSince`
      (``test_recent_records_are_those_stamped_since``).
    - :class:`~forge_policy.audit.base.SessionRecordsAfter`
      (``test_records_after_a_position_are_those_appended_since``): a read from a position
      returns the session's records appended after it, and its position is the log's end; a
      log behind the position is refused (None). :func:`~forge_policy.audit.base.
      records_after` agrees with :func:`~forge_policy.audit.base.recent_records` on every sink.
    - :class:`~forge_policy.audit.base.NewestFirst`
      (``test_newest_first_is_every_record_in_reverse``): ``records_newest_first`` is
      ``records`` reversed, ``seq`` included, and a reader that stops early leaves the sink
      usable; :func:`~forge_policy.audit.base.newest_first` agrees for every sink.

    Requirements the suite cannot check without knowing the backend, which a sink's own tests
    must cover: durable before return (a crash loses nothing acknowledged); ``verify()``
    finds edits, removals, insertions and truncation of the stored log; backend failures
    raise :class:`~forge_policy.AuditError` and an unreadable record
    :class:`~forge_policy.AuditIntegrityError`; concurrent processes lose no record.
    """

    @pytest.fixture
    def make_sink(self) -> Callable[[], AuditSink]:
        raise NotImplementedError(
            f"{type(self).__name__}: define a make_sink fixture returning a factory of sinks"
        )

    @pytest.fixture
    def open_sink(self, make_sink: Callable[[], AuditSink]) -> Iterator[Callable[[], Any]]:
        """``make_sink``, closing every sink it opened when the test ends."""
        yield from closing_each(make_sink)

    @pytest.fixture
    def sink(self, open_sink: Callable[[], Any]) -> Any:
        return open_sink()

    def test_is_an_audit_sink(self, sink: Any) -> None:
        assert isinstance(sink, AuditSink)

    def test_empty(self, sink: Any) -> None:
        assert list(sink.records()) == []
        sink.append_many([])
        assert list(sink.records()) == []

    def test_append_and_read_back_in_order(self, sink: Any) -> None:
        first = [block(1), override("o1"), {"kind": "bypass", "behaviors": ["a", "b"], "n": None}]
        second = [block(2), {"kind": "violation", "nested": {"x": [1, 2.5, True]}}]
        sink.append_many(first)
        sink.append_many(iter(second))  # any iterable
        assert plain(sink.records()) == first + second

    def test_seq_is_the_verifiable_sinks_own(self, sink: Any) -> None:
        sink.append_many([block(i) for i in range(10)])
        sink.append_many([{**block(10), "seq": 99, "prev": "forged"}])  # the sink's keys
        seqs = [r.get("seq") for r in sink.records()]
        if _claims(sink, Verifiable):
            assert seqs == list(range(1, 12))
            assert sink.verify().ok
        else:
            assert seqs == [None] * 10 + [99]

    def test_a_checkpointed_sink_says_where_each_append_began_and_ended(self, sink: Any) -> None:
        if not _claims(sink, Checkpointed):
            pytest.skip(f"{sink!r} keeps no checkpoints (an optional capability)")
        assert sink.last_append is None
        sink.append_many([block(0), block(1)])
        first = sink.last_append
        assert first is not None and (first.before, first.seq) == (0, 2)
        sink.append_many([block(2)])
        second = sink.last_append
        assert second is not None and (second.before, second.seq) == (2, 3)
        assert second.origin == first.origin != second.hash  # the first line names the log
        checkpoints = [("s", 1, first.origin), ("s", 2, first.hash), ("s", 3, second.hash)]
        assert sink.verify(checkpoints).ok
        assert not sink.verify([("s", 4, second.hash)]).ok  # a seq the log never reached

    def test_a_denial_appended_in_an_answer_first_scope_is_read_at_once(
        self, sink: Any, open_sink: Callable[[], Any]
    ) -> None:
        """``SyncsAfterAnswer``: the records are there before the scope's work runs (only
        their fsync may wait for it), in order with the durable ones, and kept once it ran."""
        if not _claims(sink, SyncsAfterAnswer):
            pytest.skip(f"{sink!r} appends a denial durably (an optional capability)")
        from forge_policy._infra.answer_first import answer_first

        errors: list[str] = []
        sink.append_many([block(1)])
        with answer_first(on_error=errors.append):
            sink.append_sync_after_answer([block(2), override("o2")])
            assert plain(sink.records()) == [block(1), block(2), override("o2")]
            write(sink, [block(3)], denial=True)
        sink.append_sync_after_answer([block(4)])  # outside a scope: durable before the return
        assert errors == []
        sink.close()
        expected = [block(1), block(2), override("o2"), block(3), block(4)]
        assert plain(open_sink().records()) == expected
        if _claims(sink, Verifiable):
            assert open_sink().verify().ok

    def test_caller_records_are_not_mutated(self, sink: Any) -> None:
        record = block(1)
        before = dict(record)
        sink.append_many([record])
        assert record == before
        read = next(iter(sink.records()))
        read["kind"] = "changed"
        assert next(iter(sink.records()))["kind"] == "block"

    def test_nested_values_read_back_are_copies(self, sink: Any) -> None:
        record: dict[str, Any] = {"kind": "bypass", "behaviors": ["a"], "nested": {"x": [1]}}
        sink.append_many([record])
        record["behaviors"].append("changed after the append")
        read = next(iter(sink.records()))
        read["behaviors"].append("b")
        read["nested"]["x"].append(2)
        expected = [{"kind": "bypass", "behaviors": ["a"], "nested": {"x": [1]}}]
        assert plain(sink.records()) == expected

    def test_a_reopened_sink_keeps_every_record(
        self, sink: Any, open_sink: Callable[[], Any]
    ) -> None:
        sink.append_many([block(1), override("o1")])
        sink.close()
        sink.close()
        again = open_sink()
        again.append_many([block(2)])
        assert plain(again.records()) == [block(1), override("o1"), block(2)]
        if _claims(again, Verifiable):
            assert [r["seq"] for r in again.records()] == [1, 2, 3]
            assert again.verify().ok

    def test_threads_keep_every_record_and_their_order(self, sink: Any) -> None:
        def work(t: int) -> None:
            for i in range(25):
                sink.append_many([{"kind": "block", "thread": t, "i": i}])

        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        records = list(sink.records())
        assert len(records) == 100
        for t in range(4):
            assert [r["i"] for r in records if r["thread"] == t] == list(range(25))
        if _claims(sink, Verifiable):
            assert sink.verify().ok

    def test_reading_helpers_agree(self, sink: Any) -> None:
        from forge_policy.audit.insights import override_ids, summarize

        records = [
            block(5),
            override("o1"),
            block(6, session="s2"),
            override("o2", session="s2"),
            {"kind": "recovery"},
        ]
        sink.append_many(records)
        assert override_ids(sink) == {"o1", "o2"}
        assert plain(session_records(sink, "s2")) == records[2:4]
        assert summarize(sink.records()) == summarize(records)

    def test_evaluator_writes_blocks_and_a_retry_override(self, sink: Any) -> None:
        import forge_policy as fp
        from forge_policy.audit.insights import override_ids, summarize
        from forge_policy.testing.clock import FakeClock

        clock = FakeClock()
        ev = fp.Evaluator(fp.builtin_catalog(), audit=sink, clock=clock)

        def write(i: int, tool_use_id: str = "") -> fp.Event:
            code = {"file_path": f"/src/m{i}.py", "content": "x = 1\n"}
            return fp.Event(
                "PreToolUse", "s1", tool_name="Write", tool_input=code, tool_use_id=tool_use_id
            )

        for i in range(5):
            clock.advance(1)
            decision = ev.evaluate(write(i))
        assert decision.blocked
        clock.advance(10)
        assert not ev.evaluate(write(4, tool_use_id="toolu_other")).blocked
        # every counted violation is on the record (the source of truth), then the block
        violations = [r for r in sink.records() if r["kind"] == "violation"]
        counters = [r["counter"] for r in violations if r["behavior_id"] == "search-first"]
        assert counters == [1, 2, 3, 4]
        records = [r for r in sink.records() if r["kind"] != "violation"]
        assert [r["kind"] for r in records] == ["block", "override"]
        assert records[0]["counter"] == 5
        (oid,) = override_ids(sink)
        assert ev.status("s1").behaviors["search-first"].overrides == 1
        assert summarize(records).behaviors["search-first"].override_rate == 1.0
        assert oid == records[1]["override_id"]

    def test_secrets_never_reach_the_sink(self, sink: Any, open_sink: Callable[[], Any]) -> None:
        write(
            sink,
            [
                {
                    "kind": "override",
                    "reason": "key sk-abcdefghijklmnopqrstuvwx",
                    "input_summary": f'Bash: export AWS={_AWS_ID} password="pw12345"',
                }
            ],
        )
        sink.close()
        text = repr(list(open_sink().records()))  # what was stored, read back anew
        for secret in ("sk-abcdefghijklmnopqrstuvwx", _AWS_ID, "pw12345"):
            assert secret not in text

    def test_recent_records_are_those_stamped_since(self, sink: Any) -> None:
        """``session_records_since`` (a cheaper read of one session) returns what
        ``records_since`` returns for that session; ``recent_records`` agrees with both."""
        if not _claims(sink, RecordsSince):  # SessionRecordsSince is defined against it
            pytest.skip(f"{sink!r} has no records_since (an optional capability)")
        records = [_stamped(i, f"s{i % 3}", T0 + i) for i in range(30)]
        # another session's record holding an older nested stamp must not end the scan early
        nested = {"timestamp": "2000-01-01T00:00:00Z"}
        records.insert(25, _stamped(99, "s2", T0 + 25, nested=nested))
        records.append({"kind": "diagnostic", "session_id": "s1"})  # unstamped: never ends it
        sink.append_many(records)
        for session in ("s0", "s1", "s2", "nobody", 's"1'):
            for since in (0.0, T0 + 10.5, T0 + 24.5, T0 + 100):
                expected = [
                    r
                    for r in (sink.records_since(since) if _claims(sink, RecordsSince) else [])
                    if r.get("session_id") == session
                ]
                if _claims(sink, SessionRecordsSince):
                    assert list(sink.session_records_since(session, since)) == expected
                if _claims(sink, RecordsSince):
                    assert list(recent_records(sink, session, since)) == expected

    def test_records_after_a_position_are_those_appended_since(self, sink: Any) -> None:
        """A catch-up's read (:func:`~forge_policy.audit.base.records_after`): on any sink the
        session's recent records; on a :class:`~forge_policy.audit.base.SessionRecordsAfter`
        sink, from a position on, exactly the session's records appended after it."""
        first = [_stamped(i, f"s{i % 2}", T0 + i) for i in range(10)]
        sink.append_many(first)
        records, position = records_after(sink, "s1", T0 + 3.5)
        assert records == list(recent_records(sink, "s1", T0 + 3.5))
        assert [r["i"] for r in records][-3:] == [5, 7, 9]  # a sink without a time read: all
        if not _claims(sink, SessionRecordsAfter):
            assert position is None
            return
        assert position is not None
        assert position[0] == _end(sink)
        # appended later, whatever their stamps (an old one too): every one of them, in order
        later = [_stamped(20, "s1", T0 + 20), _stamped(21, "s0", T0 + 21)]
        later.append(_stamped(22, "s1", T0 - 1000))
        sink.append_many(later)
        again, moved = records_after(sink, "s1", T0 + 3.5, position)
        assert [r["i"] for r in again] == [20, 22]
        assert again == [r for r in sink.records() if r["i"] in (20, 22)]
        assert moved is not None and moved[0] == position[0] + 3 and moved[1] == position[1]
        assert records_after(sink, "s1", T0, moved)[0] == []  # nothing appended since
        span = sink.session_records_after("s0", position[0], float("-inf"))
        assert [r["i"] for r in span.records] == [21]
        assert (span.seq, span.origin) == moved
        assert sink.session_records_after("s1", moved[0] + 5, 0.0) is None  # log behind it
        # a position in another log (another first line): read from ``since`` as without one
        elsewhere = (position[0], "0" * 64)
        assert records_after(sink, "s1", T0 + 3.5, elsewhere) == records_after(sink, "s1", T0 + 3.5)

    def test_a_position_taken_on_an_empty_log_reads_all_appended_since(self, sink: Any) -> None:
        """A session's state can be written before the log holds a record (a SubagentStart,
        say): its catch-up position is then ``seq`` 0, and the next catch-up must read every
        record of the session appended since, rather than fail or skip one."""
        records, position = records_after(sink, "s1", T0)
        assert records == []
        if not _claims(sink, SessionRecordsAfter):
            assert position is None
            return
        assert position is not None and position[0] == 0
        sink.append_many([_stamped(1, "s1", T0 + 1), _stamped(2, "s0", T0 + 2)])
        sink.append_many([_stamped(3, "s1", T0 + 3)])
        again, moved = records_after(sink, "s1", T0, position)
        assert [r["i"] for r in again] == [1, 3]
        assert moved is not None and moved[0] == _end(sink)

    def test_newest_first_is_every_record_in_reverse(self, sink: Any) -> None:
        """What ``forge-policy audit log`` reads: newest first, exactly the records."""
        assert list(newest_first(sink)) == []
        sink.append_many([block(i) for i in range(5)])
        sink.append_many([override("o1"), block(5, session="s2")])
        expected = list(reversed(list(sink.records())))
        assert plain(expected)[0] == block(5, session="s2")
        assert list(newest_first(sink)) == expected
        if not _claims(sink, NewestFirst):
            return
        assert list(sink.records_newest_first()) == expected
        reader = iter(sink.records_newest_first())
        assert next(reader) == expected[0]  # a page of one: stopped early
        del reader
        sink.append_many([block(6)])  # the sink is still usable, and the new record leads
        assert plain([next(iter(sink.records_newest_first()))]) == [block(6)]
        many = [block(i, session="s3") for i in range(600)]  # more than a read batch
        sink.append_many(many)
        assert plain(sink.records_newest_first())[:600] == list(reversed(many))
        assert list(sink.records_newest_first()) == list(reversed(list(sink.records())))
