"""The append-only JSONL audit log (SPEC §9): ``<FORGE_ROOT>/audit/overrides.log``.

One canonical JSON object per line, hash-chained (see :mod:`forge_policy.audit.verify`).
``append_many`` takes an exclusive lock on ``overrides.log.lock``, reads the last line, repairs a
torn tail left by a crash, appends every record with one ``write`` and fsyncs before returning.
The lock file also holds the head of the chain (last seq and hash), so that records dropped from
the end of the log, or an edited last line, are reported by :meth:`JsonlAuditSink.verify`.

**The spool** (SPEC §9: a hard block never waits for a lock). Within a hook call
(:func:`forge_policy._budget.in_hook_call`), a batch whose lock is not had in time (at once for a
hard block, else before the hook's deadline) is not lost and does not wait: it is written, fsynced,
to a file of its own in ``overrides.log.spool/`` (named by the time it was spooled, the process and
a random suffix, so files sort in spooling order). The next append that holds the lock folds every
spooled file into the chain first, in that order, each record marked ``"spooled": "<file>"`` (its
own ``timestamp`` kept: readers that stop at the first record older than they need skip marked
ones), then removes the files. ``verify`` counts the records still waiting
(:attr:`~forge_policy.audit.verify.VerifyReport.spooled`). Outside a hook call a lock wait past its
timeout is an :class:`~forge_policy.AuditError`, as before.

>>> import tempfile, pathlib
>>> log = pathlib.Path(tempfile.mkdtemp()) / "audit" / "overrides.log"
>>> sink = JsonlAuditSink(log, fsync=False)
>>> from forge_policy.audit.base import write  # every writer's way in: redacted on the way
>>> write(sink, [{"kind": "block", "note": "token: 'abcd1234'"}])
>>> [(r["seq"], r["note"]) for r in sink.records()]
[(1, "token: '[REDACTED]'")]
>>> sink.verify()
VerifyReport(ok=True, records=1, problems=[], torn_tail=False)
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import json
import os
import re
import stat
import time
from pathlib import Path
from typing import NamedTuple

import attrs

from forge_policy._budget import in_hook_call, no_wait
from forge_policy._infra.answer_first import defer
from forge_policy._infra.answer_first import running as answer_running
from forge_policy._infra.filelock import DEFAULT_TIMEOUT, FileLock, refuse_symlinked_folders
from forge_policy._time import iso
from forge_policy.audit._tail import classify, first_line_hash, format_head, read_head, tail
from forge_policy.audit.verify import (
    GENESIS,
    Appended,
    ChainChecker,
    encode_line,
    line_hash,
)
from forge_policy.audit.verify import parse_line as _parse
from forge_policy.errors import AuditError, AuditIntegrityError, LockTimeout, StoreError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any, BinaryIO

    from forge_policy.audit._index import SessionIndex
    from forge_policy.audit.base import Span
    from forge_policy.audit.verify import Checkpoint, VerifyReport

#: the first ``timestamp`` of a canonical line; only a hint (a nested object could hold one)
_STAMP = re.compile(rb'"timestamp":"([^"\\]{1,64})"')
_FLAGS = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


class _Names(NamedTuple):
    """A sink's paths as text (:meth:`JsonlAuditSink._names`), for the ``path`` and
    ``lock_path`` objects they were computed from."""

    path: Path
    lock: Path
    text: str
    lock_text: str
    spool_text: str
    folder: str
    #: the two folders above the log (absolute logs only), as refuse_symlinked_folders walks
    folders: tuple[str, ...] | None


def _is_symlink(path: str) -> bool:
    """``Path(path).is_symlink()`` on text: False for a missing name, other errors raised."""
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError as exc:
        if exc.errno in _IGNORED_ERRNOS or getattr(exc, "winerror", None) in _IGNORED_WINERRORS:
            return False
        raise
    except ValueError:
        return False


#: the errors pathlib's ``is_symlink`` reads as "no symlink" (pathlib._IGNORED_ERRNOS)
_IGNORED_ERRNOS = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)
_IGNORED_WINERRORS = (21, 123, 1921)  # not ready, invalid name, cannot be resolved


def default_path() -> Path:
    """``$FORGE_ROOT/audit/overrides.log`` (``FORGE_ROOT`` defaults to ``.forge``).

    >>> default_path().as_posix()
    '.forge/audit/overrides.log'
    """
    return Path(os.environ.get("FORGE_ROOT") or ".forge") / "audit" / "overrides.log"


class JsonlAuditSink:
    """A hash-chained, append-only JSONL audit log, safe across threads and processes.

    ``path`` defaults to :func:`default_path`; parent directories are created on the first
    append. A symlinked log (or lock file) is refused. ``fsync=False`` skips the fsync (tests,
    benchmarks): a power loss may then lose records, or be reported as truncation.
    ``lock_timeout`` bounds the wait for the writer lock (``FORGE_LOCK_TIMEOUT``'s default, then
    :class:`~forge_policy.AuditError`); ``clock`` stamps recovery records. ``session_index``
    (a long-lived process: the warm worker, ``serve``): keep an index of the sessions the log
    holds lines of, read on from where the last lookup stopped, so that
    :meth:`session_records_since` of a session the log holds nothing of reads no log
    (:mod:`forge_policy.audit._index`); a one-call process would read the whole log to build it.

    Capabilities beyond :class:`~forge_policy.AuditSink` (:mod:`forge_policy.audit.base`):
    :class:`~forge_policy.audit.base.Verifiable`, :class:`~forge_policy.audit.base.Checkpointed`
    and :class:`~forge_policy.audit.base.RecordsSince`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        fsync: bool = True,
        lock_timeout: float = DEFAULT_TIMEOUT,
        clock: Callable[[], float] = time.time,
        session_index: bool = False,
    ) -> None:
        self.path = Path(path) if path is not None else default_path()
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.fsync = fsync
        self.lock_timeout = lock_timeout
        self.clock = clock
        #: where this sink's last append began and ended (a
        #: :class:`~forge_policy.audit.base.Checkpointed` sink), None before the first
        self.last_append: Appended | None = None
        self._names_of: _Names | None = None
        #: ``session_index``: the sessions the log holds lines of, kept by a long-lived process
        #: (:mod:`forge_policy.audit._index`): a new session's lookup then reads no log
        self._index: SessionIndex | None = None
        if session_index:
            from forge_policy.audit._index import SessionIndex

            self._index = SessionIndex()
        self._refuse_symlink()

    def __repr__(self) -> str:
        return f"JsonlAuditSink({str(self.path)!r})"

    def _names(self) -> _Names:
        """The text of this sink's paths (the log, its lock file, its spool folder, its
        folder and the folders above it that must not be symlinks), computed once per
        ``path``/``lock_path`` and not per append: pathlib builds a new object for each
        ``with_name`` or ``parent``. A relative log's folders are not kept (they depend on the
        process's directory)."""
        names = self._names_of
        if names is not None and names.path is self.path and names.lock is self.lock_path:
            return names
        text = str(self.path)
        folders: tuple[str, ...] | None = None
        if os.path.isabs(text):
            first = os.path.dirname(os.path.abspath(text))
            folders = (first, os.path.dirname(first))
        names = _Names(
            self.path,
            self.lock_path,
            text,
            str(self.lock_path),
            str(self.path.with_name(self.path.name + ".spool")),
            str(self.path.parent),
            folders,
        )
        self._names_of = names
        return names

    def _refuse_symlink(self) -> None:
        names = self._names()
        for path in (names.text, names.lock_text):
            if _is_symlink(path):
                raise AuditError(f"audit log path is a symlink, refused: {path!r}")
        try:
            if names.folders is None:
                refuse_symlinked_folders(names.text)
            else:  # refuse_symlinked_folders's two levels, their names computed once
                for folder in names.folders:
                    if os.path.islink(folder):
                        raise OSError(errno.ELOOP, "is a symlinked folder", folder)
        except OSError as exc:
            raise AuditError(
                f"audit log folder is a symlink, refused: {str(exc.filename)!r}"
            ) from None

    def _open(self, path: Path, flags: int, *, checked: bool = False) -> int:
        """Open ``path`` refusing symlinked names; ``checked``: :meth:`_locked` has just
        refused them, under the lock this open is made in (checked once per append)."""
        if not checked:
            self._refuse_symlink()  # O_NOFOLLOW does the same atomically where it exists
        return os.open(path, flags | _FLAGS, 0o600)

    @contextlib.contextmanager
    def _locked(self, create: bool = True) -> Iterator[int]:
        """Hold the exclusive writer lock; yield the lock file's descriptor."""
        self._refuse_symlink()  # O_NOFOLLOW does the same atomically where it exists
        lock = FileLock(self._names().lock_text, timeout=self.lock_timeout, create=create)
        with self._lock_errors():
            lock.__enter__()
        try:
            yield lock.fd
        finally:
            with self._lock_errors():
                lock.__exit__(None, None, None)

    def _take_lock(self) -> FileLock:
        """:meth:`_locked`'s acquisition without its generators (the append's, once per
        call): the lock, taken; its errors as this sink's (:meth:`_lock_errors`'s)."""
        self._refuse_symlink()  # O_NOFOLLOW does the same atomically where it exists
        lock = FileLock(self._names().lock_text, timeout=self.lock_timeout)
        try:
            lock.__enter__()
        except (LockTimeout, StoreError) as exc:
            raise self._lock_error(exc) from exc
        return lock

    def _release_lock(self, lock: FileLock) -> None:
        """:meth:`_locked`'s release of a lock :meth:`_take_lock` took."""
        try:
            lock.__exit__(None, None, None)
        except (LockTimeout, StoreError) as exc:
            raise self._lock_error(exc) from exc

    def _lock_error(self, exc: StoreError) -> AuditError:
        if isinstance(exc, LockTimeout):
            return AuditError(
                f"audit log lock not acquired within {self.lock_timeout:g} s: "
                f"{str(self.lock_path)!r}"
            )
        return AuditError(f"audit log lock: {exc}")

    @contextlib.contextmanager
    def _lock_errors(self) -> Iterator[None]:
        """The lock's errors (a store's family) as this sink's, chained."""
        try:
            yield
        except LockTimeout as exc:
            raise AuditError(
                f"audit log lock not acquired within {self.lock_timeout:g} s: "
                f"{str(self.lock_path)!r}"
            ) from exc
        except StoreError as exc:
            raise AuditError(f"audit log lock: {exc}") from exc

    def append_many(self, records: Iterable[dict[str, Any]]) -> None:
        """Append records durably and in order: one locked write, one fsync.

        Every string is redacted; ``seq`` and ``prev`` are set by the sink. A torn tail, or
        records missing from the end, are first noted by a ``recovery`` record.
        """
        self._append_many(records, sync=self.fsync)

    def append_unsynced(self, records: Iterable[dict[str, Any]]) -> None:
        """:meth:`append_many` without the fsync (:class:`~forge_policy.audit.base.Unsynced`):
        for records a power cut may lose (``seen``); the write itself is done before return,
        so a crash of the process loses nothing. Spooled records folded in are fsynced."""
        self._append_many(records, sync=False)

    def append_sync_after_answer(self, records: Iterable[dict[str, Any]]) -> None:
        """:meth:`append_many` for a denial's records
        (:class:`~forge_policy.audit.base.SyncsAfterAnswer`): written before the return, and
        inside an answer-first scope fsynced once the answer is out, through a descriptor of
        the same open log (before the scope's state write). Durable at once outside a scope, on
        the append that creates the log (its folder is fsynced too) and on one that folds a
        spool file in (the file is removed)."""
        self._append_many(records, sync=True, after_answer=True)

    def _append_many(
        self, records: Iterable[dict[str, Any]], *, sync: bool, after_answer: bool = False
    ) -> None:
        batch = list(records)
        if not batch:
            return
        try:
            names = self._names()
            if not os.path.isdir(names.folder):  # one stat per append, not a failing mkdir
                self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                lock = self._take_lock()
            except AuditError as exc:
                if isinstance(exc.__cause__, LockTimeout) and in_hook_call():
                    self._spool(batch)  # durable, in a file of its own; folded by the next append
                    return
                raise
            lock_fd = lock.fd
            try:
                spooled, folded = self._spooled()
                sync = self.fsync and (sync or bool(spooled))  # a folded spool file is removed
                # whether the open creates the log matters to an fsynced append only (its
                # folder is fsynced then): an unsynced one (``seen``) skips the stat
                created = sync and not os.path.exists(names.text)
                later = after_answer and sync and not (created or spooled) and answer_running()
                flags = os.O_RDWR | os.O_APPEND | os.O_CREAT
                fd = self._open(self.path, flags, checked=True)
                try:
                    head = read_head(lock_fd)
                    synced = sync and not later
                    before, seq, digest = self._append(fd, folded + batch, head, sync=synced)
                    origin = first_line_hash(fd)
                    if later:  # the same open file, fsynced and closed once the answer is out
                        held = os.dup(fd)
                        defer(lambda: self._sync_then_head(held, seq, digest))
                finally:
                    os.close(fd)
                self.last_append = Appended(before, seq, digest, origin)
                if created and sync and os.name != "nt":
                    _fsync_dir(self.path.parent)
                if not later:  # else once the records are durable: never ahead of them
                    _write_head(lock_fd, format_head(seq, digest))
                for name in spooled:  # in the chain and fsynced: the spool file has served
                    os.unlink(self.spool_dir / name)
            finally:
                self._release_lock(lock)
        except OSError as exc:
            raise AuditError(f"cannot append to audit log {str(self.path)!r}: {exc}") from exc

    def _sync_then_head(self, fd: int, seq: int, digest: str) -> None:
        """After a warm denial's answer: fsync the log through ``fd`` (then closed), then move
        the head anchor to ``seq`` unless a later append moved it further. The anchor is
        unsynced too: written before the fsync, a power cut could keep it and lose the records
        it names, and the next append would report as removed what the cut took."""
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        # an anchor behind the log is harmless (only one ahead of it is reported), so a lock
        # held elsewhere (an agent's, SPEC §9) leaves it for the next append to move
        with contextlib.suppress(AuditError), no_wait(HEAD_WAIT), self._locked(False) as lock_fd:
            head = read_head(lock_fd)
            if head is None or head[0] < seq:
                _write_head(lock_fd, format_head(seq, digest))

    @property
    def spool_dir(self) -> Path:
        """The folder of the batches spooled while the lock was held (``overrides.log.spool``)."""
        return self.path.with_name(self.path.name + ".spool")

    def _spool(self, batch: list[dict[str, Any]]) -> None:
        """Write ``batch`` durably to a new file of the spool (refusing a symlinked spool)."""
        folder = self.spool_dir
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o700)
        if folder.is_symlink() or not folder.is_dir():
            raise AuditError(f"audit spool is not a folder of its own, refused: {str(folder)!r}")
        name = f"{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}.jsonl"
        data = b"".join(
            json.dumps(r, ensure_ascii=False, sort_keys=True).encode("utf-8") + b"\n" for r in batch
        )
        fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FLAGS, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if self.fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        if self.fsync and os.name != "nt":
            _fsync_dir(folder)

    def spooled_files(self) -> list[str]:
        """The spool's files waiting to be folded, oldest first."""
        try:
            names = os.listdir(self.spool_dir)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(name for name in names if name.endswith(".jsonl"))

    def spooled_records(self) -> list[dict[str, Any]]:
        """The records waiting in the spool, oldest first (each marked with its file)."""
        return self._spooled()[1]

    def _spooled(self) -> tuple[list[str], list[dict[str, Any]]]:
        """The spool's files and their records, oldest first (a line that is not a JSON
        object, from a crash while spooling, is kept as a ``recovery`` note)."""
        try:  # no spool folder, the usual case: one lstat
            mode = os.lstat(self._names().spool_text).st_mode
        except (FileNotFoundError, NotADirectoryError):
            return [], []
        if stat.S_ISLNK(mode):
            return [], []
        names = self.spooled_files()
        records: list[dict[str, Any]] = []
        for name in names:
            try:
                fd = os.open(self.spool_dir / name, os.O_RDONLY | _FLAGS)
            except FileNotFoundError:
                continue
            with open(fd, "rb") as handle:
                data = handle.read()
            for line in data.splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    record = None
                if not isinstance(record, dict):
                    record = {
                        "kind": "recovery",
                        "reason": "unreadable line in an audit spool file",
                        "dropped_sha256": line_hash(line),
                    }
                records.append({**record, "spooled": name})
        return names, records

    def _append(
        self, fd: int, batch: list[dict[str, Any]], head: tuple[int, str] | None, *, sync: bool
    ) -> tuple[int, int, str]:
        seq, prev, prefix, torn = tail(fd)
        before = seq
        notes: list[dict[str, Any]] = []
        if torn is not None:
            offset, dropped = torn
            os.ftruncate(fd, offset)
            notes.append(
                {
                    "reason": "torn tail after a crash: incomplete last line dropped",
                    "offset": offset,
                    "dropped_bytes": len(dropped),
                    "dropped_sha256": line_hash(dropped),
                }
            )
        if head is not None and head[0] > seq:
            notes.append(
                {
                    "reason": "records missing from the end of the log",
                    "head_seq": head[0],
                    "head_hash": head[1],
                    "log_seq": seq,
                }
            )
        if notes:
            stamp = iso(self.clock())
            from forge_policy.audit.records import Recovery, to_dict  # rare: off the hook's path

            batch = [to_dict(Recovery(timestamp=stamp, **n)) for n in notes] + batch
        lines: list[bytes] = []
        for record in batch:
            seq += 1
            line = encode_line(record, seq, prev)
            prev = line_hash(line)
            lines.append(line)
        view = memoryview(prefix + b"\n".join(lines) + b"\n")
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
        return before, seq, prev

    def records(self) -> Iterator[dict[str, Any]]:
        """Every record oldest first, with its ``seq`` (without ``prev``); a torn tail is
        skipped. An unreadable line elsewhere raises :class:`~forge_policy.AuditIntegrityError`.
        """
        for number, raw, kind in self._lines(-1):
            if kind == "torn":
                continue
            record = _parse(raw)
            if record is None:
                raise AuditIntegrityError(f"{self.path}:{number}: unreadable audit record")
            record.pop("prev", None)
            yield record

    def records_newest_first(self) -> Iterator[dict[str, Any]]:
        """Every record of :meth:`records`, newest first, read backwards from the log's end
        in 64 KiB blocks (:class:`~forge_policy.audit.base.NewestFirst`): a page of the latest
        records costs a page. A torn tail is skipped; an unreadable line elsewhere raises
        :class:`~forge_policy.AuditIntegrityError`, as :meth:`records` does."""
        try:
            handle = open(self._open(self.path, os.O_RDONLY), "rb")  # noqa: SIM115 (generator)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise AuditError(f"cannot read the audit log {str(self.path)!r}: {exc}") from exc
        with handle:
            last = True
            for raw in _lines_newest_first(handle):
                record = _parse(raw)
                if record is None:
                    if last:  # a torn tail: repaired by the next append, never a record
                        last = False
                        continue
                    raise AuditIntegrityError(f"{self.path}: unreadable audit record: {raw[:60]!r}")
                last = False
                record.pop("prev", None)
                yield record

    def records_since(self, since: float) -> list[dict[str, Any]]:
        """The records stamped at or after ``since`` (epoch seconds), oldest first.

        Reads the log backwards from its end and stops at the first record older than
        ``since`` (:func:`~forge_policy.audit.base.newest_since`), so the cost is proportional
        to the recent records, not the log's size.
        """
        from forge_policy.audit.base import newest_since

        try:
            with open(self._open(self.path, os.O_RDONLY), "rb") as handle:
                found = newest_since(_newest_first(handle), since)
        except FileNotFoundError:
            found = []
        except OSError as exc:
            raise AuditError(f"cannot read the audit log {str(self.path)!r}: {exc}") from exc
        return found + self._spooled_since(since, None)

    def _spooled_since(self, since: float, session_id: str | None) -> list[dict[str, Any]]:
        """The spooled records (of ``session_id``, or all) stamped at or after ``since``: they
        follow the log's own in every reader that rebuilds or reconciles a session, so a held
        lock hides no count."""
        from forge_policy._time import parse_iso

        return [
            record
            for record in self._spooled()[1]
            if (session_id is None or record.get("session_id") == session_id)
            and not 0 <= parse_iso(record.get("timestamp"), default=-1.0) < since
        ]

    def session_records_since(self, session_id: str, since: float) -> list[dict[str, Any]]:
        """One session's records stamped at or after ``since``, oldest first
        (:class:`~forge_policy.audit.base.SessionRecordsSince`): read back from the end like
        :meth:`records_since`, but only the session's lines (found on the raw bytes) and the
        one that ends the scan are parsed."""
        index = self._index
        try:
            with open(self._open(self.path, os.O_RDONLY), "rb") as handle:
                if index is not None and not index.holds(handle.fileno(), session_id):
                    found = []  # the log holds no line of the session: nothing to read back
                else:
                    found = _session_newest_since(_lines_newest_first(handle), session_id, since)
        except FileNotFoundError:
            found = []
        except OSError as exc:
            raise AuditError(f"cannot read the audit log {str(self.path)!r}: {exc}") from exc
        return found + self._spooled_since(since, session_id)

    def session_records_after(self, session_id: str, seq: int, since: float) -> Span | None:
        """One session's records above ``seq`` (and from ``since`` on), oldest first, with the
        log's last ``seq`` and first line's hash (:class:`~forge_policy.audit.base.
        SessionRecordsAfter`): read back from the end, stopping at the first line at or below
        ``seq`` (every line above it is parsed: they are what was appended since) or, with
        ``seq`` 0, as :meth:`session_records_since` does."""
        from forge_policy.audit.base import Span

        try:
            with open(self._open(self.path, os.O_RDONLY), "rb") as handle:
                origin = first_line_hash(handle.fileno())
                lines = _lines_newest_first(handle)
                head: list[bytes] = []
                last = 0
                for raw in lines:  # the newest readable line says where the log ends
                    head.append(raw)
                    record = _parse(raw)
                    if record is not None:
                        last = _seq_of(record)
                        break
                stream = itertools.chain(head, lines)
                if seq > 0:
                    found = _session_after(stream, session_id, seq)
                else:
                    found = _session_newest_since(stream, session_id, since)
        except FileNotFoundError:
            found, last, origin = [], 0, GENESIS
        except OSError as exc:
            raise AuditError(f"cannot read the audit log {str(self.path)!r}: {exc}") from exc
        if last < seq:
            return None  # the log is behind the position: not the log read then
        return Span(found + self._spooled_since(since, session_id), last, origin)

    def verify(self, checkpoints: Iterable[Checkpoint] = ()) -> VerifyReport:
        """Check every line: JSON, ``seq`` continuity, the hash chain, the head anchor and the
        sessions' ``checkpoints``.

        Reads a snapshot: the size and head are taken under the writer lock (when it can be
        had), so appends running meanwhile are neither waited for nor misreported.
        """
        head: tuple[int, str] | None = None
        size = -1
        with contextlib.suppress(AuditError, OSError), self._locked(create=False) as lock_fd:
            head = read_head(lock_fd)
            size = self.path.stat().st_size if self.path.exists() else 0
        checker = ChainChecker(checkpoints)
        torn: list[str] = []
        last = 0
        for number, raw, kind in self._lines(size):
            if kind == "torn":
                torn.append(
                    f"line {number}: torn tail ({len(raw)} bytes), repaired by the next append"
                )
                continue
            last = number
            checker.check(f"line {number}", raw)
            if kind == "unterminated":
                torn.append(f"line {number}: no trailing newline, completed by the next append")
        checker.check_head(head, f"line {last}")
        report = checker.report(bool(torn), torn)
        spooled = len(self.spooled_records())
        return attrs.evolve(report, spooled=spooled) if spooled else report

    def _lines(self, limit: int) -> Iterator[tuple[int, bytes, str]]:
        try:
            if not self.path.exists():
                return
            with open(self._open(self.path, os.O_RDONLY), "rb") as file:
                yield from classify(file, limit)
        except OSError as exc:
            raise AuditError(f"cannot read audit log {str(self.path)!r}: {exc}") from exc

    def close(self) -> None:
        """Nothing to release: the log is opened per call."""


def _newest_first(handle: BinaryIO) -> Iterator[dict[str, Any]]:
    """The log's records from its last line back; a torn tail or a blank line is skipped."""
    for raw in _lines_newest_first(handle):
        record = _parse(raw)
        if record is not None:
            record.pop("prev", None)
            yield record


def _lines_newest_first(handle: BinaryIO) -> Iterator[bytes]:
    """The log's non-blank lines from its last back, read in 64 KiB blocks."""
    handle.seek(0, os.SEEK_END)
    position = handle.tell()
    buffer = b""
    while position > 0:
        step = min(1 << 16, position)
        position -= step
        handle.seek(position)
        buffer = handle.read(step) + buffer
        lines = buffer.split(b"\n")
        buffer = lines[0] if position > 0 else b""
        for raw in reversed(lines[1:] if position > 0 else lines):
            if raw.strip():
                yield raw


def _session_newest_since(lines: Iterable[bytes], session_id: str, since: float) -> list[Any]:
    """:func:`~forge_policy.audit.base.newest_since` over one session's records, from lines
    given newest first: a line of another session is not parsed unless its timestamp (sliced
    from the canonical line) says it may end the scan, which its parsed record then decides."""
    from forge_policy._time import iso, parse_iso

    needle = b'"session_id":' + json.dumps(session_id, ensure_ascii=False).encode("utf-8")
    # the evaluator's stamps (fixed-width UTC) sort as text: compared as bytes, as a hint only
    # (another format may sort wrongly: a later line then decides, or a few more are read)
    # -inf (every record: a catch-up from a position taken on an empty log) has no stamp
    threshold = iso(since).encode("ascii") if since > float("-inf") else b""

    def may_matter(raw: bytes) -> bool:
        if needle in raw:
            return True
        hint = _STAMP.search(raw)
        return hint is None or hint.group(1) < threshold  # after ``since``: no match, no end

    def ends(record: dict[str, Any]) -> bool:
        stamp = parse_iso(record.get("timestamp"), default=-1.0)
        return 0 <= stamp < since and "spooled" not in record

    return _scan_session(filter(may_matter, lines), session_id, ends)


def _seq_of(record: dict[str, Any]) -> int:
    """A stored record's ``seq`` (-1 when it has none: such a line cannot bound a read)."""
    seq = record.get("seq")
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else -1


def _session_after(lines: Iterable[bytes], session_id: str, after: int) -> list[Any]:
    """One session's records above ``after``, oldest first, from lines given newest first:
    the scan ends at the first line at or below it (a line without a ``seq`` does not end it)."""
    return _scan_session(lines, session_id, lambda record: 0 <= _seq_of(record) <= after)


def _scan_session(
    lines: Iterable[bytes], session_id: str, ends: Callable[[dict[str, Any]], bool]
) -> list[Any]:
    """The one scan of both reads above: one session's records, oldest first, from lines given
    newest first, up to the first parsed record that ``ends`` the scan (not kept)."""
    found: list[dict[str, Any]] = []
    for raw in lines:
        record = _parse(raw)
        if record is None:
            continue
        if ends(record):
            break
        if record.get("session_id") == session_id:
            record.pop("prev", None)
            found.append(record)
    found.reverse()
    return found


#: The longest wait (seconds) for the lock to move the head anchor after a warm denial.
HEAD_WAIT = 0.1


def _write_head(fd: int, head: bytes) -> None:
    """Write the head anchor at the start of the lock file: one ``pwrite`` where there is one."""
    if hasattr(os, "pwrite"):
        os.pwrite(fd, head, 0)
        return
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, head)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
