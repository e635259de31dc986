"""The one exclusive file lock of forge_policy, with its timeout (SPEC §9, §10).

:class:`~forge_policy.stores.file.FileStore` locks ``state.json.lock`` and
:class:`~forge_policy.audit.jsonl.JsonlAuditSink` locks ``overrides.log.lock`` with it; this is
the only lock-wait loop of the package. The lock is portalocker's (``flock`` on POSIX,
``LockFileEx`` on Windows) on a lock file that is never deleted or renamed. The OS releases it
when the holding process dies, so a crashed holder never blocks anyone, and nothing here looks at
the file's existence, age or content, so a live holder is never robbed: waiters only time out.

portalocker is imported when a lock is first taken, never by ``import forge_policy``, and then
only its locking modules (``portalocker.portalocker`` with ``constants``, ``exceptions`` and
``types``: :func:`_portalocker`): the package's ``__init__`` costs ~25 ms more (its
``__about__`` reads the installed metadata through ``importlib.metadata``, which pulls in
``email``; its ``utils`` and optional ``redis`` lock), which the in-process hook would pay on
every allowed call that records itself (the ``seen`` record takes the audit lock). Its errors,
and the OS's, leave this module as :class:`~forge_policy.StoreError` (a wait past the timeout as
:class:`~forge_policy.LockTimeout`), chained with ``from``.
"""

from __future__ import annotations

import errno
import os
import sys
import time
import types
from typing import Any

from forge_policy._budget import lock_wait
from forge_policy.errors import LockTimeout, StoreError

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
FLAGS = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)

DEFAULT_TIMEOUT = 15.0
"""Seconds a lock is waited for unless told otherwise: ``FORGE_LOCK_TIMEOUT``'s default. Fitted
to the harness, not to a quiet machine: a hook may wait for the state lock and then for the
audit lock after its worker gave up (``FORGE_WORKER_TIMEOUT``, 10 s), all within Claude Code's
60 s hook timeout; 2 s lost a third of the increments of 64 parallel hooks on 2 busy cores."""

_FIRST_DELAY = 0.0005  # the first wait between attempts; doubled up to _MAX_DELAY
_MAX_DELAY = 0.01  # short enough that a freed lock is taken within ~10 ms


def refuse_symlink(path: str) -> None:
    """Raise ELOOP for a symlink where ``O_NOFOLLOW`` cannot (it checks inside ``open``)."""
    if not NOFOLLOW and os.path.islink(path):  # pragma: no cover - not POSIX
        raise OSError(errno.ELOOP, "is a symlink", path)


def refuse_symlinked_folders(path: str, levels: int = 2) -> None:
    """Raise ELOOP when one of the ``levels`` folders above ``path`` (``runtime/`` or
    ``audit/``, and the ``.forge`` folder above it) is a symlink: ``O_NOFOLLOW`` guards the
    file's own name only, and a symlinked governance folder lets its files be swapped from
    elsewhere (issue 10: "no symlinks among the existing path components")."""
    folder = os.path.dirname(os.path.abspath(path))
    for _ in range(levels):
        if os.path.islink(folder):
            raise OSError(errno.ELOOP, "is a symlinked folder", folder)
        folder = os.path.dirname(folder)


def os_error(path: str, doing: str, exc: OSError) -> StoreError:
    """The store's error for an OS failure, naming the path; symlinks get their own words.

    >>> str(os_error("/p/state.json", "cannot read", OSError(errno.EACCES, "Permission denied")))
    '/p/state.json: cannot read: Permission denied'
    >>> str(os_error("/p/state.json", "cannot open", OSError(errno.ELOOP, "loop")))
    '/p/state.json: refusing a symlink'
    """
    if exc.errno in (errno.ELOOP, errno.EMLINK):
        if exc.filename and exc.filename != path:
            return StoreError(f"{path}: refusing a symlinked folder: {exc.filename}")
        return StoreError(f"{path}: refusing a symlink")
    return StoreError(f"{path}: {doing}: {exc.strerror or exc}")


class FileLock:
    """One acquisition of the exclusive lock on the file ``path``; a context manager.

    The lock file is opened without following a symlink (a symlinked lock file is refused) and
    created with mode 0600 unless ``create`` is false. Attempts repeat, with a jittered backoff,
    until ``timeout`` seconds have passed (``0``: one attempt; within a hook call, at most until
    its deadline: :func:`forge_policy._budget.lock_wait`), then
    :class:`~forge_policy.LockTimeout`. While held, :attr:`fd` is the lock file's descriptor
    (the audit log keeps the head of its hash chain in it).

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "state.json.lock")
    >>> with FileLock(path, timeout=1.0) as lock:
    ...     lock.fd >= 0
    ...     with FileLock(path, timeout=0.01):  # a second open file: it waits, then fails
    ...         pass
    Traceback (most recent call last):
    ...
    forge_policy.errors.LockTimeout: ...: lock not acquired within 0.01 s: another process holds it
    """

    __slots__ = ("create", "fd", "path", "timeout")

    def __init__(self, path: str, *, timeout: float = DEFAULT_TIMEOUT, create: bool = True) -> None:
        self.path = path
        self.timeout = timeout
        self.create = create
        self.fd = -1

    def __repr__(self) -> str:
        return f"FileLock({self.path!r}, timeout={self.timeout:g})"

    def __enter__(self) -> FileLock:
        flags = os.O_RDWR | NOFOLLOW | FLAGS | (os.O_CREAT if self.create else 0)
        try:
            refuse_symlink(self.path)
            fd = os.open(self.path, flags, 0o600)
        except OSError as exc:
            raise os_error(self.path, "cannot open the lock file", exc) from exc
        try:
            self._wait(fd)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd
        return self

    def _wait(self, fd: int) -> None:
        timeout = lock_wait(self.timeout)  # the hook's deadline bounds it; a hard block: 0
        deadline = time.monotonic() + timeout
        delay = _FIRST_DELAY
        while not _try_lock(fd, self.path):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise LockTimeout(
                    f"{self.path}: lock not acquired within "
                    f"{round(timeout, 3):g} s: another process holds it"
                )
            jitter = 0.5 + (time.perf_counter_ns() % 1000) / 1000  # waiters fall out of step
            time.sleep(min(delay * jitter, remaining))
            delay = min(delay * 2, _MAX_DELAY)

    def __exit__(self, *exc_info: object) -> None:
        fd, self.fd = self.fd, -1
        try:
            # unlock before closing: a child forked meanwhile shares the open file description,
            # and closing only our descriptor would leave the lock held by that child
            _unlock(fd, self.path)
        finally:
            os.close(fd)


#: The name under which :func:`_portalocker` loads portalocker's locking modules.
CORE = "forge_policy._infra._portalocker"

_LOCKER: list[Any] = []


def _portalocker() -> Any:
    """portalocker's ``portalocker`` module (``lock``, ``unlock``, ``LockFlags``; its
    ``exceptions`` as ``.exceptions``), loaded without running the package's ``__init__``.

    Python runs a package's ``__init__`` before any of its submodules, so the submodules are
    loaded from portalocker's own folder under a private package name, :data:`CORE`: the same
    files, the same compiled bytecode, only the metadata lookup and the unused lock classes are
    skipped. A process that already imported ``portalocker`` uses it as is, and an install
    whose layout differs (the module or one of the names this file uses is missing) falls back
    to ``import portalocker``: the lock is the same ``flock`` either way.

    >>> core = _portalocker()
    >>> core.LockFlags.EXCLUSIVE is not None and issubclass(core.exceptions.AlreadyLocked,
    ...                                                      core.exceptions.LockException)
    True
    """
    if _LOCKER:
        return _LOCKER[0]
    core: Any = sys.modules.get("portalocker")
    if core is None:
        try:
            core = _load_core()
        except Exception:  # another layout: the whole package
            core = None
    if core is None:
        import portalocker as core
    _LOCKER.append(core)
    return core


def _load_core() -> Any:
    """portalocker's locking module under :data:`CORE`, or None when the install differs."""
    import importlib.util

    spec = importlib.util.find_spec("portalocker")
    folders = list(spec.submodule_search_locations or ()) if spec else []
    if not folders:
        return None
    package = sys.modules.get(CORE)
    if package is None:
        package = types.ModuleType(CORE, "portalocker's locking modules, without its __init__")
        package.__path__ = folders
        package.__package__ = CORE
        sys.modules[CORE] = package
    try:
        # __import__, not importlib.import_module: -X importtime reports the former only
        core = __import__(f"{CORE}.portalocker", fromlist=["lock"])
        flags = core.LockFlags
        if not (
            callable(core.lock)
            and callable(core.unlock)
            and flags.EXCLUSIVE
            and flags.NON_BLOCKING
            and issubclass(core.exceptions.AlreadyLocked, core.exceptions.LockException)
        ):
            return None
    except Exception:
        for name in [n for n in sys.modules if n == CORE or n.startswith(f"{CORE}.")]:
            del sys.modules[name]
        return None
    return core


#: ``LockFlags.EXCLUSIVE | LockFlags.NON_BLOCKING``, combined once: ``|`` of two enum flags
#: runs Python code of the enum module (~0.6 us) on every lock
_EXCLUSIVE_NOW: list[Any] = []


def _exclusive_now(core: Any) -> Any:
    flags = core.LockFlags.EXCLUSIVE | core.LockFlags.NON_BLOCKING
    _EXCLUSIVE_NOW.append(flags)
    return flags


def _try_lock(fd: int, path: str) -> bool:
    """Take the exclusive lock without waiting; False when another holds it."""
    core = _portalocker()
    try:
        core.lock(fd, _EXCLUSIVE_NOW[0] if _EXCLUSIVE_NOW else _exclusive_now(core))
    except core.exceptions.AlreadyLocked:
        return False
    except core.exceptions.LockException as exc:
        raise _lock_error(path, "cannot lock", exc) from exc
    return True


def _unlock(fd: int, path: str) -> None:
    core = _portalocker()
    try:
        core.unlock(fd)
    except core.exceptions.LockException as exc:
        raise _lock_error(path, "cannot unlock", exc) from exc


def _lock_error(path: str, doing: str, exc: Exception) -> StoreError:
    """portalocker wraps the OS error as its first argument; name that, not the wrapper."""
    cause = exc.args[0] if exc.args else exc
    if isinstance(cause, OSError):
        return os_error(path, doing, cause)
    return StoreError(f"{path}: {doing}: {cause}")
