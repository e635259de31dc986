"""The file store (SPEC §9): every session in one JSON document, ``.forge/runtime/state.json``.

Files beside the state, all in one folder::

    state.json                    {"schema_version": 1, "sessions": {ID: SESSION}, ...}
    state.json.lock               its lock file: never deleted, never renamed, never read
    state.json.tmp                the next version while it is being written
    state.json.corrupt-<UTC>      a corrupt state, moved aside and reported

Every read-modify-write holds the OS lock of :mod:`forge_policy._infra.filelock`: the kernel
drops it when its holder dies, and a live holder is never robbed. Writes go to a temporary file
that is fsynced and renamed over ``state.json``, then the folder is fsynced: a reader sees the old
or the new document, never a torn one, so reads (:meth:`FileStore.load`) need no lock, and a crash
loses at most the transaction in flight. In the warm worker's answer the write follows the
answer (:mod:`forge_policy._infra.answer_first`), the locks kept until it is done.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import threading
import time

from forge_policy._infra.answer_first import defer, settle
from forge_policy._infra.filelock import (
    DEFAULT_TIMEOUT,
    FLAGS,
    NOFOLLOW,
    FileLock,
    os_error,
    refuse_symlink,
    refuse_symlinked_folders,
)
from forge_policy.errors import StoreError
from forge_policy.secrets import redact_json
from forge_policy.state import SCHEMA_VERSION, SessionState, copy_json
from forge_policy.stores._recovery import report

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T")


class _Corrupt(Exception):
    """The state file exists but is not a state document; the message says why."""


_KINDS = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}


def _kind(value: object) -> str:
    return "null" if value is None else _KINDS.get(type(value), "a number")


def _parse(data: bytes, path: str) -> dict[str, Any]:
    """Check a state document's shape; every bad shape is :class:`_Corrupt`, never dropped."""
    if not data.strip():
        raise _Corrupt("empty file")
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise _Corrupt(f"not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise _Corrupt(f"expected a JSON object, got {_kind(doc)}")
    version = doc.setdefault("schema_version", SCHEMA_VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _Corrupt(f"schema_version: expected a positive integer, got {_kind(version)}")
    if version > SCHEMA_VERSION:
        # a newer forge_policy wrote it: refuse rather than move aside data this one cannot read
        raise StoreError(
            f"{path}: schema_version {version} is newer than this forge_policy "
            f"reads ({SCHEMA_VERSION}); upgrade forge_policy"
        )
    sessions = doc.setdefault("sessions", {})
    if not isinstance(sessions, dict):
        raise _Corrupt(f"sessions: expected an object, got {_kind(sessions)}")
    for session_id, session in sessions.items():
        if not isinstance(session, dict):
            where = json.dumps(session_id[:40])  # quoted and escaped: it goes to a terminal
            raise _Corrupt(f"sessions[{where}]: expected an object, got {_kind(session)}")
    return doc


class FileStore:
    """Session state in one JSON file, safe for concurrent hook processes.

    ``lock_timeout`` bounds the wait for the lock (then :class:`~forge_policy.LockTimeout`);
    ``fsync=False`` trades durability across power loss for speed (writes stay atomic).
    ``on_recovery`` receives a ``{"kind": "recovery", ...}`` record when a corrupt state file is
    moved aside, e.g. ``audit.append_many([record])``. Nothing is touched on disk before the
    first transaction, so a bad path surfaces as :class:`~forge_policy.StoreError` there.

    Expiry: :meth:`purge` scans every session. With ``ttl`` set, a write also drops expired
    sessions, at most once per :attr:`PURGE_INTERVAL` seconds (by ``clock``, stamped in the
    document as ``purged_at`` so that short-lived hook processes share the schedule): the write
    rewrites the whole file anyway, and the allow path, which writes nothing, never scans.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "runtime" / "state.json"
    >>> store = FileStore(path)
    >>> store.transact("s1", lambda cur: (cur is None, SessionState.new(0.0)))
    True
    >>> store.session_ids()
    ['s1']
    >>> sorted(json.loads(path.read_text())["sessions"])
    ['s1']
    """

    #: Larger state files are treated as corrupt (moved aside), and larger writes refused.
    MAX_BYTES = 64 * 1024 * 1024
    #: Opportunistic purge (``ttl`` set) runs at most this often, in seconds.
    PURGE_INTERVAL = 3600.0

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        lock_timeout: float = DEFAULT_TIMEOUT,
        fsync: bool = True,
        on_recovery: Callable[[dict[str, Any]], None] | None = None,
        ttl: float | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = os.path.abspath(os.fspath(path))
        self.lock_path = self.path + ".lock"
        self.lock_timeout = lock_timeout
        self.fsync = fsync
        self.on_recovery = on_recovery
        self.ttl = ttl
        self.clock = clock
        self._folder = os.path.dirname(self.path)
        self._folder_ready = False
        self._threads = threading.RLock()  # a nested transact times out instead of hanging
        # (stat identity, document) of the last cached read; never mutated, only replaced
        self._parsed: tuple[tuple[int, int, int, int], dict[str, Any]] | None = None

    def __repr__(self) -> str:
        return f"FileStore({self.path!r})"

    # -- the RuntimeStore protocol ---------------------------------------------------------

    def transact(
        self, session_id: str, apply: Callable[[SessionState | None], tuple[T, SessionState | None]]
    ) -> T:
        settle()  # a write this thread handed over holds the lock: it goes first
        self._threads.acquire()
        held = True
        try:
            lock = self._lock().__enter__()
            try:
                # the cached document when the file is still the one it was parsed from
                # (checked under the lock): a write re-serialises it but does not re-parse it
                doc = self._read_locked(cached=True)
                raw = doc["sessions"].get(session_id)
                # readers may hold the cached session: ``apply`` gets its own copy
                result, new_state = apply(SessionState(copy_json(raw)) if raw is not None else None)
                if new_state is None:
                    return result
                # readers only ever look sessions up: replacing or dropping one in place is safe
                doc["sessions"][session_id] = redact_json(new_state.to_dict())
                if self.ttl is not None:
                    self._purge_due(doc, keep=session_id)
                # in a warm answer the write follows the answer, the locks held until it is
                # done (forge_policy._infra.answer_first); elsewhere it is written now
                if defer(lambda: self._commit_and_release(doc, lock)):
                    held = False
                    return result
                self._commit(doc)
                return result
            finally:
                if held:
                    lock.__exit__(None, None, None)
        finally:
            if held:
                self._threads.release()

    def _commit_and_release(self, doc: dict[str, Any], lock: FileLock) -> None:
        """A write handed over by :meth:`transact`, then the locks it kept for it."""
        try:
            self._commit(doc)
        finally:
            try:
                lock.__exit__(None, None, None)
            finally:
                self._threads.release()

    def load(self, session_id: str) -> SessionState | None:
        raw = self._snapshot()["sessions"].get(session_id)
        return SessionState(raw) if raw is not None else None

    def peek(self, session_id: str) -> SessionState | None:
        """The session for reading only (see :func:`~forge_policy.stores.base.read_only`):
        lockless, and the document is parsed again only when the file's identity changed, so a
        long-lived store (the warm worker, ``serve``) pays a stat, not a parse, per read."""
        raw = self._snapshot(cached=True)["sessions"].get(session_id)
        return SessionState(raw) if raw is not None else None

    def session_ids(self) -> list[str]:
        return sorted(self._snapshot()["sessions"])

    def purge(self, now: float, ttl: float) -> int:
        settle()
        with self._threads, self._lock():
            doc = self._read_locked(cached=True)
            removed = self._drop_expired(doc, now, ttl, keep=None)
            if removed:
                self._commit(doc)
            return removed

    def close(self) -> None:
        """Nothing to release: no descriptor outlives a call."""

    def __enter__(self) -> FileStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _lock(self) -> FileLock:
        try:
            refuse_symlinked_folders(self.path)  # before the lock file is created through one
        except OSError as exc:
            raise os_error(self.path, "cannot lock", exc) from exc
        if not self._folder_ready:
            try:
                os.makedirs(self._folder, exist_ok=True)
            except OSError as exc:
                raise os_error(self._folder, "cannot create the folder", exc) from exc
            self._folder_ready = True
        return FileLock(self.lock_path, timeout=self.lock_timeout)

    # -- reading ---------------------------------------------------------------------------

    def _read(self, cached: bool = False) -> dict[str, Any]:
        """The current document; :class:`_Corrupt` when the file is not one. ``cached``: the
        last document parsed by a cached read if the file is still that one (callers must not
        mutate it), else a fresh parse that becomes the cached one."""
        try:
            refuse_symlink(self.path)
            refuse_symlinked_folders(self.path)
            fd = os.open(self.path, os.O_RDONLY | NOFOLLOW | FLAGS)
        except FileNotFoundError:
            return {"schema_version": SCHEMA_VERSION, "sessions": {}}
        except OSError as exc:
            if exc.errno == errno.ELOOP and os.path.islink(self.path):
                # never followed: the link itself is moved aside like a corrupt file
                raise _Corrupt("a symlink, not the state file") from None
            raise os_error(self.path, "cannot open", exc) from exc
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise StoreError(f"{self.path}: not a regular file")
            # every write renames a new file in: a new inode, new times (never the same four)
            identity = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
            if cached and self._parsed is not None and self._parsed[0] == identity:
                return self._parsed[1]
            if info.st_size > self.MAX_BYTES:
                raise _Corrupt(f"{info.st_size} bytes, over the {self.MAX_BYTES}-byte cap")
            with open(fd, "rb", closefd=False) as handle:
                data = handle.read(self.MAX_BYTES + 1)
        except OSError as exc:
            raise os_error(self.path, "cannot read", exc) from exc
        finally:
            os.close(fd)
        if len(data) > self.MAX_BYTES:
            raise _Corrupt(f"over the {self.MAX_BYTES}-byte cap")
        doc = _parse(data, self.path)
        if cached:
            self._parsed = (identity, doc)
        return doc

    def _read_locked(self, cached: bool = False) -> dict[str, Any]:
        """The current document, with a corrupt file moved aside first. Lock held."""
        try:
            return self._read(cached)
        except _Corrupt as exc:
            self._recover(str(exc))
            return {"schema_version": SCHEMA_VERSION, "sessions": {}}

    def _snapshot(self, cached: bool = False) -> dict[str, Any]:
        """A lockless read (``cached``: through the parsed-document cache, read-only); only a
        corrupt file needs the lock, to move it aside safely."""
        try:
            return self._read(cached)
        except _Corrupt:
            settle()
            with self._threads, self._lock():
                return self._read_locked()

    def _recover(self, reason: str) -> None:
        """Move a corrupt state aside (never drop it), report it, and let a fresh state begin."""
        now = time.time()
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z"
        target = f"{self.path}.corrupt-{stamp}"
        suffix = 1
        while os.path.lexists(target):
            target = f"{self.path}.corrupt-{stamp}-{suffix}"
            suffix += 1
        try:
            os.rename(self.path, target)
            self._sync_folder()
        except OSError as exc:
            raise os_error(self.path, "cannot move the corrupt state aside", exc) from exc
        from forge_policy._time import iso
        from forge_policy.audit import records

        reason = " ".join(reason.split())[:200]
        record = records.to_dict(
            records.Recovery(timestamp=iso(now), path=self.path, moved_to=target, reason=reason)
        )
        message = f"{self.path}: corrupt state ({reason}) moved to {target}; starting afresh"
        report(record, message, self.on_recovery)

    # -- writing ---------------------------------------------------------------------------

    def _commit(self, doc: dict[str, Any]) -> None:
        """:meth:`_write` ``doc``, which then becomes the cached document; when the write fails
        the cache is dropped (``doc`` may be the cached document changed in place: what was
        not written must never be served). Lock held: no other writer can replace the file
        between the rename and the stat."""
        try:
            self._write(doc)
        except BaseException:
            self._parsed = None
            raise
        info = os.stat(self.path, follow_symlinks=False)
        self._parsed = ((info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns), doc)

    def _write(self, doc: dict[str, Any]) -> None:
        """Temp file + fsync + atomic rename + folder fsync. Lock held."""
        try:
            data = json.dumps(
                doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False
            ).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise StoreError(f"{self.path}: session state is not JSON: {exc}") from exc
        if len(data) > self.MAX_BYTES:
            # written, it would be read back as corrupt; refuse and keep the last good state
            raise StoreError(
                f"{self.path}: state would be {len(data)} bytes, over the "
                f"{self.MAX_BYTES}-byte cap; run `forge-policy purge`"
            )
        # one fixed temp name is safe under the lock, and a crashed writer's leftover is
        # replaced rather than piling up
        tmp = self.path + ".tmp"
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | FLAGS, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                if self.fsync:
                    os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, self.path)
            self._sync_folder()
        except OSError as exc:
            with contextlib.suppress(OSError):  # e.g. a full disk: leave no half file behind
                os.unlink(tmp)
            raise os_error(self.path, "cannot write", exc) from exc

    def _sync_folder(self) -> None:
        # the rename is durable only once the folder's entry is on disk
        if not self.fsync or os.name != "posix":
            return
        fd = os.open(self._folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | FLAGS)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    # -- expiry ----------------------------------------------------------------------------

    def _drop_expired(self, doc: dict[str, Any], now: float, ttl: float, keep: str | None) -> int:
        sessions = doc["sessions"]
        expired = [
            sid
            for sid, data in sessions.items()
            if sid != keep and SessionState(data).expired(now, ttl)
        ]
        for sid in expired:
            del sessions[sid]
        return len(expired)

    def _purge_due(self, doc: dict[str, Any], keep: str) -> None:
        assert self.ttl is not None
        now = self.clock()
        last = doc.get("purged_at")
        if (
            isinstance(last, int | float)
            and not isinstance(last, bool)
            and 0 <= now - last < self.PURGE_INTERVAL
        ):
            return
        self._drop_expired(doc, now, self.ttl, keep)
        doc["purged_at"] = now
