"""The audit sink interface (SPEC §4, §9): append-only records, written before state.

One required interface, :class:`AuditSink`, and eight optional capabilities, each a small
protocol a sink may also satisfy (OPA's storage interfaces are the model):

============================  ================================  ===================================
capability                    method                            used by
============================  ================================  ===================================
:class:`SessionRecords`       ``records_for_session(id)``       reconciling one session's state
:class:`RecordsSince`         ``records_since(epoch)``          reconciling after an override
:class:`SessionRecordsSince`  ``session_records_since(id, t)``  the same for one session, cheaper
:class:`SessionRecordsAfter`  ``session_records_after(id, n, t)``  a catch-up from a known seq
:class:`NewestFirst`          ``records_newest_first()``        ``forge-policy audit log``
:class:`Verifiable`           ``verify()``                      ``forge-policy audit --verify``
:class:`Checkpointed`         ``last_append``, checkpoints      the state's checkpoint of the log
:class:`Unsynced`             ``append_unsynced(records)``      ``seen`` records, off the fsync
:class:`SyncsAfterAnswer`     ``append_sync_after_answer(r)``   a denial's records, fsync after it
============================  ================================  ===================================

Callers never probe for a method by name: they call the helpers below
(:func:`session_records`, :func:`recent_records`, :func:`records_after`, :func:`newest_first`,
:func:`verifier`, :func:`checkpointed`),
written only against these protocols, which fall back to :meth:`AuditSink.records` where a
capability is missing.

>>> from forge_policy.audit.memory import MemoryAuditSink
>>> sink = MemoryAuditSink()
>>> isinstance(sink, AuditSink), isinstance(sink, Verifiable)
(True, False)
>>> sink.append_many([{"kind": "block", "session_id": "a"}, {"kind": "block", "session_id": "b"}])
>>> [r["session_id"] for r in session_records(sink, "b")]
['b']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar, runtime_checkable

from forge_policy._lazy import kept

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from typing import TypeGuard

    from forge_policy.audit.verify import Appended, Checkpoint, VerifyReport


@runtime_checkable
class AuditSink(Protocol):
    """Where overrides, blocks and bypasses are recorded: the source of truth (SPEC §9).

    Records are JSON objects with a ``kind`` (``override``, ``block``, ``violation``,
    ``bypass``, ``recovery``, ``diagnostic``, ``seen``, …: :mod:`forge_policy.audit.records`).
    A sink must meet every requirement below; the audit conformance suite
    (:class:`forge_policy.testing.conformance.AuditSinkSuite`; subclass it for your own sink)
    checks those it can without knowing the backend:

    - **Durable before return.** ``append_many`` returns only once its records would survive a
      crash of the process (fsync, a committed transaction): the evaluator acknowledges an
      override only after it. A denial's records may go through :class:`SyncsAfterAnswer`
      instead: written before the return too, their fsync after a warm answer.
    - **Stored as given.** Records arrive JSON-ready and already redacted: every writer hands
      them over through :func:`write`, which runs :func:`forge_policy.audit.verify.clean` (the
      agent-shield patterns of :func:`forge_policy.secrets.redact`), so a sink never redacts.
      A value that is not JSON (a caller that bypassed :func:`write`) is refused with
      :class:`~forge_policy.AuditError`, or stored as JSON would store it (tuples as lists).
    - **As written, in order.** :meth:`records` yields every record appended, oldest first, equal
      to what was appended, plus ``seq`` for a :class:`Verifiable` sink. Concurrent appenders
      (threads; processes, for a durable sink) lose no record, and each appender's records keep
      its order.
    - **No shared mutable data.** The caller's records are never mutated, and a record read back
      is the caller's to change: the next read is unaffected.
    - **One error family.** Backend failures are raised as :class:`~forge_policy.AuditError`
      (``from`` the backend's exception); a stored record that cannot be read back as
      :class:`~forge_policy.AuditIntegrityError`.

    >>> from forge_policy.audit.memory import MemoryAuditSink
    >>> isinstance(MemoryAuditSink(), AuditSink)
    True
    """

    def append_many(self, records: Iterable[dict[str, Any]]) -> None:
        """Durably append records (JSON-ready, redacted by :func:`write`), in order."""
        ...

    def records(self) -> Iterator[dict[str, Any]]:
        """Every record, oldest first."""
        ...

    def close(self) -> None:
        """Release the backend's resources; the sink may reopen them on its next call."""
        ...


@runtime_checkable
class SessionRecords(Protocol):
    """An audit sink that reads one session's records without scanning the others.

    ``records_for_session(session_id)`` must yield exactly the records of :meth:`AuditSink.records`
    whose ``session_id`` equals ``session_id``, oldest first, as :meth:`AuditSink.records` would
    yield them (``seq`` included). Only the cost may differ (SQLite answers from an index).

    >>> from forge_policy.audit.lazy import LazyJsonlSink
    >>> isinstance(LazyJsonlSink("overrides.log"), SessionRecords)
    True
    """

    def records_for_session(self, session_id: str) -> Iterable[dict[str, Any]]:
        """The records of one session, oldest first."""
        ...


@runtime_checkable
class RecordsSince(Protocol):
    """An audit sink that reads its recent records without reading the whole log.

    ``records_since(since)`` must return, oldest first, at least every record whose
    ``timestamp`` (UTC ISO 8601, as the evaluator stamps it) is at or after ``since`` (epoch
    seconds) and that was appended after the last record stamped before ``since``; records without
    a readable ``timestamp`` in that stretch are included. Records are appended in decision order,
    so a sink may stop reading at the first record older than ``since``; callers leave a margin
    for the time between a decision and its append.

    >>> from forge_policy.audit.lazy import LazyJsonlSink
    >>> isinstance(LazyJsonlSink("overrides.log"), RecordsSince)
    True
    """

    def records_since(self, since: float) -> Iterable[dict[str, Any]]:
        """The records stamped at or after ``since``, oldest first."""
        ...


@runtime_checkable
class SessionRecordsSince(Protocol):
    """An audit sink that reads one session's recent records without parsing the others'.

    ``session_records_since(session_id, since)`` must return, oldest first, at least every
    record that ``records_since(since)`` returns whose ``session_id`` equals ``session_id``
    (:class:`RecordsSince`'s requirements, for one session); only the cost may differ.

    >>> from forge_policy.audit.lazy import LazyJsonlSink
    >>> isinstance(LazyJsonlSink("overrides.log"), SessionRecordsSince)
    True
    """

    def session_records_since(self, session_id: str, since: float) -> Iterable[dict[str, Any]]:
        """One session's records stamped at or after ``since``, oldest first."""
        ...


class Span(NamedTuple):
    """What :meth:`SessionRecordsAfter.session_records_after` read: the session's records,
    oldest first, and where the log stood when they were read (the ``seq`` of its last record,
    0 for an empty log; the hash of its first line, which names the log, or for the memory sink
    a token of its own): every record appended later has a higher ``seq``."""

    records: list[dict[str, Any]]
    seq: int
    origin: str


@runtime_checkable
class SessionRecordsAfter(Protocol):
    """A sink that reads one session's records from a known ``seq`` on, so that a catch-up
    reads what was appended since the last one, not the session's history. On a
    :class:`Verifiable` sink ``seq`` is the records' own; the memory sink numbers its records
    by their place in the log without storing it in them.

    ``session_records_after(session_id, seq, since)`` returns a :class:`Span`: at least every
    record of the session whose ``seq`` is above ``seq`` and that ``session_records_since(
    session_id, since)`` would return (the read may stop at the first record at or below
    ``seq``, or at the first one stamped before ``since``; ``since`` = ``-inf`` reads every
    record above ``seq``), oldest first, with the log's last ``seq`` and first line's hash at
    the read. None when the log's last ``seq`` is below ``seq`` (a log that lost records or
    started anew: the caller reads by time instead). Only the cost may differ from
    :func:`recent_records` filtered by ``seq``.

    >>> from forge_policy.audit.lazy import LazyJsonlSink
    >>> isinstance(LazyJsonlSink("overrides.log"), SessionRecordsAfter)
    True
    """

    def session_records_after(self, session_id: str, seq: int, since: float) -> Span | None:
        """One session's records above ``seq`` (and from ``since`` on), with the log's end."""
        ...


@runtime_checkable
class NewestFirst(Protocol):
    """An audit sink that reads its records from the newest back, without reading the whole
    log first: ``forge-policy audit log`` shows a page of the latest records of a long log.

    ``records_newest_first()`` must yield exactly the records of :meth:`AuditSink.records`, in
    the reverse order (``seq`` included), lazily: a caller that stops after N records has paid
    for about N (a backward read of a JSONL log, a descending query of a table).

    >>> from forge_policy.audit.lazy import LazyJsonlSink
    >>> isinstance(LazyJsonlSink("overrides.log"), NewestFirst)
    True
    """

    def records_newest_first(self) -> Iterator[dict[str, Any]]:
        """Every record, newest first."""
        ...


@runtime_checkable
class Verifiable(Protocol):
    """An audit sink whose records form a hash chain that can be checked (SPEC §9).

    Such a sink numbers what it stores: ``seq`` is the record's position in the log, 1 for the
    first record and one more for each next one, set by the sink at append time (a ``seq`` or
    ``prev`` key a caller passes is replaced), and :meth:`AuditSink.records` yields it with each
    record. Each stored record also carries ``prev``, the sha256 of the previous record's
    canonical line (:mod:`forge_policy.audit.verify`).

    ``verify()`` reads everything stored and returns a
    :class:`~forge_policy.audit.verify.VerifyReport` whose ``ok`` is false, with a problem naming
    the line or row, when any record was edited, removed (from the middle *or the end*: the sink
    anchors the last seq and hash apart from the records), inserted, reordered or made
    unreadable. It never raises for what it finds, never writes, and does not block appenders.

    >>> from forge_policy.audit.sqlite import SQLiteAuditSink
    >>> isinstance(SQLiteAuditSink(":memory:"), Verifiable)
    True
    """

    def verify(self) -> VerifyReport:
        """Check every stored record and the chain's anchored end."""
        ...


@runtime_checkable
class Checkpointed(Protocol):
    """A :class:`Verifiable` sink that says where its last append began and ended, so the
    evaluator can keep a checkpoint of the log in each session's state (SPEC §9).

    ``last_append`` is the :class:`~forge_policy.audit.verify.Appended` of this object's latest
    ``append_many`` (the log's last seq when it began, the seq and line hash of the last record
    it wrote, the hash of the log's first line), None before the first; shared by threads, it
    may name a later append, never a record that is not in the log. Its ``verify`` takes
    ``checkpoints``, an iterable of
    ``(session id, seq, line hash)``: a line at such a seq that hashes otherwise, or a log that
    ends before such a seq, is a problem. A log that lost records (even one deleted with its
    anchor and started anew) is then reported rather than trusted.

    >>> from forge_policy.audit.sqlite import SQLiteAuditSink
    >>> isinstance(SQLiteAuditSink(":memory:"), Checkpointed)
    True
    """

    last_append: Appended | None

    def verify(self, checkpoints: Iterable[Checkpoint] = ()) -> VerifyReport:
        """Check every stored record, the anchored end and the sessions' checkpoints."""
        ...


@runtime_checkable
class Unsynced(Protocol):
    """An audit sink that can append records without waiting for them to reach the disk.

    ``append_unsynced(records)`` must do what :meth:`AuditSink.append_many` does (order, hash
    chain, spool), except that a power cut may lose what it wrote (a crash of the process must
    not). For records whose loss misleads no decision — a ``seen`` record says only that a hook
    ran — so that the allow path pays no fsync. Sinks without it append them durably.

    >>> from forge_policy.audit.lazy import LazyJsonlSink
    >>> isinstance(LazyJsonlSink("overrides.log"), Unsynced)
    True
    """

    def append_unsynced(self, records: Iterable[dict[str, Any]]) -> None:
        """Append records in order, the fsync left to the next durable append or the OS."""
        ...


@runtime_checkable
class SyncsAfterAnswer(Protocol):
    """An audit sink that can append a denial's records now and fsync them once the answer is
    out (:mod:`forge_policy._infra.answer_first`).

    ``append_sync_after_answer(records)`` must do what :meth:`AuditSink.append_many` does, the
    records written (in order, chained, visible to every reader) before it returns; inside an
    answer-first scope the fsync may be handed to the scope (it then runs before the state
    write the scope runs after it), outside one it is done before the return. For the records
    of a decision that lets nothing run: a power cut may lose that call whole, never one that
    ran. Sinks without it append them durably.

    >>> from forge_policy.audit.lazy import LazyJsonlSink
    >>> isinstance(LazyJsonlSink("overrides.log"), SyncsAfterAnswer)
    True
    """

    def append_sync_after_answer(self, records: Iterable[dict[str, Any]]) -> None:
        """Append records in order, durably by the time the answer-first scope ends."""
        ...


_Capability = TypeVar("_Capability")
#: ``isinstance`` of each sink class against each capability, as first asked.
_CLAIMED: dict[tuple[type, object], bool] = {}


def _claims(sink: object, capability: Callable[..., _Capability]) -> TypeGuard[_Capability]:
    """``isinstance(sink, capability)``, remembered per class: a protocol's ``isinstance``
    walks the protocol's members on every call (several microseconds, a refusal the most), and
    a block asks two of them. A capability is a class's methods (and attributes its
    ``__init__`` sets); a class with ``__getattr__`` (a wrapper, whose capabilities may be
    another object's) is asked every time."""
    kind = type(sink)
    key = (kind, capability)
    known = _CLAIMED.get(key)
    if known is None:
        known = isinstance(sink, capability)  # type: ignore[arg-type]
        if getattr(kind, "__getattr__", None) is None:
            _CLAIMED[key] = known
    return known


@kept
def _clean() -> Callable[[object], Any]:
    from forge_policy.audit.verify import clean

    return clean


def write(
    sink: AuditSink,
    records: Iterable[Mapping[str, Any]],
    *,
    durable: bool = True,
    denial: bool = False,
) -> None:
    """Hand ``records`` to ``sink``: the one way the engine, the hook, the CLI and the adapters
    write audit records. Each is made JSON-ready and redacted here
    (:func:`~forge_policy.audit.verify.clean`), so that no sink has to redact and no secret
    reaches a backend, whichever writes it. ``durable=False``: records a power cut may lose
    (:class:`Unsynced`); ``denial``: the records of a decision that lets nothing run, whose
    fsync may follow a warm answer (:class:`SyncsAfterAnswer`).

    >>> from forge_policy.audit.memory import MemoryAuditSink
    >>> sink = MemoryAuditSink()
    >>> write(sink, [{"kind": "bypass", "note": "export KEY=AKIAABCDEFGHIJKLMNOP", "ids": ("a",)}])
    >>> next(sink.records())
    {'kind': 'bypass', 'note': 'export KEY=[REDACTED]', 'ids': ['a']}
    """
    clean = _clean()
    cleaned = [clean(dict(record)) for record in records]
    if not durable and _claims(sink, Unsynced):
        sink.append_unsynced(cleaned)  # ``durable=False``: see :class:`Unsynced`
        return
    if denial and _claims(sink, SyncsAfterAnswer):
        sink.append_sync_after_answer(cleaned)
        return
    sink.append_many(cleaned)


def session_records(sink: AuditSink, session_id: str) -> Iterator[dict[str, Any]]:
    """The records of one session, oldest first: the sink's :class:`SessionRecords` query when
    it has one, else a scan of :meth:`AuditSink.records`.

    >>> from forge_policy.audit.memory import MemoryAuditSink
    >>> sink = MemoryAuditSink()
    >>> sink.append_many([{"kind": "block", "session_id": "a"}, {"kind": "bypass"}])
    >>> [r["kind"] for r in session_records(sink, "a")]
    ['block']
    """
    if _claims(sink, SessionRecords):
        yield from sink.records_for_session(session_id)
        return
    for record in sink.records():
        if record.get("session_id") == session_id:
            yield record


def recent_records(sink: AuditSink, session_id: str, since: float) -> Iterator[dict[str, Any]]:
    """The records of one session from ``since`` (epoch seconds) on, oldest first: the sink's
    :class:`RecordsSince` query (a backward read of a JSONL log) when it has one, else all of
    the session's records (:func:`session_records`), which is a superset.

    >>> from forge_policy.audit.memory import MemoryAuditSink
    >>> sink = MemoryAuditSink()
    >>> sink.append_many([{"kind": "block", "session_id": "a"}])
    >>> [r["kind"] for r in recent_records(sink, "a", since=0.0)]
    ['block']
    """
    if _claims(sink, SessionRecordsSince):
        yield from sink.session_records_since(session_id, since)
        return
    if not _claims(sink, RecordsSince):
        yield from session_records(sink, session_id)
        return
    for record in sink.records_since(since):
        if record.get("session_id") == session_id:
            yield record


def records_after(
    sink: AuditSink, session_id: str, since: float, after: tuple[int, str] | None = None
) -> tuple[list[dict[str, Any]], tuple[int, str] | None]:
    """One session's records for a catch-up, oldest first, and the log's position when they
    were read (``(seq, origin)``: see :class:`Span`), or None when the sink keeps no positions.

    ``after`` is the position of an earlier read (``(seq, origin)``): then only the records
    appended since are read (every one above ``seq``, whatever its stamp), unless the log is no
    longer the one read then (another first line, or it ends below ``seq``), which is read from
    ``since`` on like the rest. A sink without :class:`SessionRecordsAfter` gets
    :func:`recent_records` (``since``), as before it.

    >>> from forge_policy.audit.jsonl import JsonlAuditSink
    >>> import tempfile, os
    >>> sink = JsonlAuditSink(os.path.join(tempfile.mkdtemp(), "log"))
    >>> sink.append_many([{"kind": "block", "session_id": "a", "n": 1}])
    >>> records, position = records_after(sink, "a", 0.0)
    >>> [r["n"] for r in records], position[0]
    ([1], 1)
    >>> sink.append_many([{"kind": "block", "session_id": "a", "n": 2}])
    >>> [r["n"] for r in records_after(sink, "a", 0.0, position)[0]]
    [2]
    """
    reader = sink
    if not _claims(reader, SessionRecordsAfter):
        return list(recent_records(sink, session_id, since)), None
    if after is not None:
        span = reader.session_records_after(session_id, after[0], float("-inf"))
        if span is not None and span.seq >= 0 and span.origin == after[1]:
            return span.records, (span.seq, span.origin)
    span = reader.session_records_after(session_id, 0, since)
    if span is None:  # cannot happen (no log ends below 0): read as a sink without positions
        return list(recent_records(sink, session_id, since)), None
    return span.records, ((span.seq, span.origin) if span.seq >= 0 else None)


def newest_first(sink: AuditSink) -> Iterator[dict[str, Any]]:
    """Every record, newest first: the sink's :class:`NewestFirst` read when it has one (a page
    of a long log costs a page), else :meth:`AuditSink.records` read whole and reversed.

    >>> from forge_policy.audit.memory import MemoryAuditSink
    >>> sink = MemoryAuditSink()
    >>> sink.append_many([{"kind": "block", "i": 1}, {"kind": "override", "i": 2}])
    >>> [r["i"] for r in newest_first(sink)]
    [2, 1]
    """
    if _claims(sink, NewestFirst):
        yield from sink.records_newest_first()
        return
    yield from reversed(list(sink.records()))


def newest_since(newest_first: Iterable[dict[str, Any]], since: float) -> list[dict[str, Any]]:
    """The records stamped at or after ``since``, oldest first, from records given newest
    first: the one stop rule of every sink's ``records_since`` (records are appended in
    decision order, so the first older one ends the scan; callers leave a margin for the
    seconds between a decision and its append; an unstamped record never stops it, nor a record
    folded late from the JSONL spool, marked ``spooled``).

    >>> newest_since([{"timestamp": 30.0}, {"timestamp": 20.0}, {"timestamp": 10.0}], 15.0)
    [{'timestamp': 20.0}, {'timestamp': 30.0}]
    """
    from forge_policy._time import parse_iso

    found = []
    for record in newest_first:
        stamp = parse_iso(record.get("timestamp"), default=-1.0)
        if 0 <= stamp < since and "spooled" not in record:  # a folded record is late: not the end
            break
        found.append(record)
    found.reverse()
    return found


def verifier(sink: AuditSink) -> Verifiable | None:
    """The sink as a :class:`Verifiable`, or None when it keeps no hash chain.

    >>> from forge_policy.audit.memory import MemoryAuditSink
    >>> verifier(MemoryAuditSink()) is None
    True
    """
    return sink if _claims(sink, Verifiable) else None


def checkpointed(sink: AuditSink) -> Checkpointed | None:
    """The sink as a :class:`Checkpointed`, or None when it keeps no checkpoints.

    >>> from forge_policy.audit.memory import MemoryAuditSink
    >>> checkpointed(MemoryAuditSink()) is None
    True
    """
    return sink if _claims(sink, Checkpointed) else None
