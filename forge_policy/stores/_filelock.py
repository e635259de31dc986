"""An exclusive OS file lock with a timeout, for :class:`~forge_policy.stores.file.FileStore`.

The lock is ``flock`` on a lock file that is never deleted or renamed. The kernel releases it when
the holding process dies, so a crashed holder never blocks anyone, and nothing here looks at the
file's existence, age or content, so a live holder is never robbed: waiters only time out.

On POSIX this calls ``fcntl.flock`` directly — the very call portalocker makes there, so the two
interoperate on one lock file — because importing portalocker costs ~35 ms per hook process.
Other platforms import portalocker, lazily.
"""

from __future__ import annotations

import errno
import os
import time

from forge_policy.errors import LockTimeout, StoreError

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
FLAGS = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def refuse_symlink(path: str) -> None:
    """Raise ELOOP for a symlink where ``O_NOFOLLOW`` cannot (it checks inside ``open``)."""
    if not NOFOLLOW and os.path.islink(path):  # pragma: no cover - not POSIX
        raise OSError(errno.ELOOP, "is a symlink", path)


def os_error(path: str, doing: str, exc: OSError) -> StoreError:
    """The store's error for an OS failure, naming the path; symlinks get their own words."""
    if exc.errno in (errno.ELOOP, errno.EMLINK):
        return StoreError(f"{path}: refusing a symlink")
    return StoreError(f"{path}: {doing}: {exc.strerror or exc}")


def try_lock(fd: int) -> bool:
    """Take the exclusive lock on an open file without waiting; False when another holds it."""
    if os.name == "posix":
        import fcntl

        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    import portalocker  # pragma: no cover - not POSIX

    try:  # pragma: no cover
        portalocker.lock(fd, portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING)
    except portalocker.AlreadyLocked:  # pragma: no cover
        return False
    return True  # pragma: no cover


class FileLock:
    """One acquisition of the lock on ``path``; a context manager.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "state.json.lock")
    >>> with FileLock(path, timeout=1.0):
    ...     with FileLock(path, timeout=0.01):  # a second open file: it must wait, then fail
    ...         pass
    Traceback (most recent call last):
    ...
    forge_policy.errors.LockTimeout: ...
    """

    __slots__ = ("_fd", "path", "timeout")

    def __init__(self, path: str, *, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self._fd = -1

    def __enter__(self) -> FileLock:
        try:
            refuse_symlink(self.path)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | NOFOLLOW | FLAGS, 0o600)
        except OSError as exc:
            raise os_error(self.path, "cannot open the lock file", exc) from exc
        try:
            deadline = time.monotonic() + self.timeout
            delay = 0.0005
            while not try_lock(fd):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise LockTimeout(
                        f"{self.path}: lock not acquired within "
                        f"{self.timeout:g} s: another process holds it"
                    )
                jitter = 0.5 + (time.perf_counter_ns() % 1000) / 1000  # waiters fall out of step
                time.sleep(min(delay * jitter, remaining))
                delay = min(delay * 2, 0.01)
        except OSError as exc:
            os.close(fd)
            raise os_error(self.path, "cannot lock", exc) from exc
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return self

    def __exit__(self, *exc_info: object) -> None:
        fd, self._fd = self._fd, -1
        try:
            # unlock before closing: a child forked meanwhile shares the open file description,
            # and closing only our descriptor would leave the lock held by that child
            unlock(fd)
        finally:
            os.close(fd)


def unlock(fd: int) -> None:
    """Release a lock taken with :func:`try_lock`."""
    if os.name == "posix":
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_UN)
    else:  # pragma: no cover
        import portalocker

        portalocker.unlock(fd)
