"""The one file lock (``forge_policy._infra.filelock``): portalocker under a timeout, its errors
translated, a symlink refused, and the same lock as a bare ``flock`` (older releases took that)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import forge_policy as fp
from forge_policy._infra import filelock as _filelock
from forge_policy._infra.filelock import FileLock


@pytest.fixture
def lock_path(tmp_path: Path) -> str:
    return str(tmp_path / "state.json.lock")


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(os.name != "posix", reason="flock is POSIX")
def test_a_bare_flock_holder_and_the_lock_exclude_each_other(lock_path: str) -> None:
    """A release that called ``fcntl.flock`` itself may run beside this one during an upgrade."""
    import fcntl

    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(fp.LockTimeout):
            FileLock(lock_path, timeout=0.02).__enter__()
        fcntl.flock(fd, fcntl.LOCK_UN)
        with FileLock(lock_path, timeout=0.0), pytest.raises(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released on exit
    finally:
        os.close(fd)


def test_timeout_names_the_file_and_the_seconds_and_leaks_no_descriptor(lock_path: str) -> None:
    with FileLock(lock_path, timeout=0.0):
        before = open_fds()
        with pytest.raises(fp.LockTimeout) as caught:
            FileLock(lock_path, timeout=0.0).__enter__()
        assert open_fds() == before
    assert (
        str(caught.value) == f"{lock_path}: lock not acquired within 0 s: another process holds it"
    )
    assert caught.value.code == "store_lock_timeout"


@settings(max_examples=10, deadline=None)
@given(timeout=st.floats(min_value=0.0, max_value=0.05))
def test_a_held_lock_is_waited_for_the_whole_timeout_then_refused(
    tmp_path_factory: pytest.TempPathFactory, timeout: float
) -> None:
    path = str(tmp_path_factory.mktemp("lock") / "x.lock")
    with FileLock(path, timeout=0.0):
        start = time.monotonic()
        with pytest.raises(fp.LockTimeout):
            FileLock(path, timeout=timeout).__enter__()
        elapsed = time.monotonic() - start
    assert timeout <= elapsed < timeout + 1.0  # never gives up early; never hangs


def test_a_symlinked_lock_file_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("keep")
    link = tmp_path / "state.json.lock"
    link.symlink_to(target)
    with pytest.raises(fp.StoreError, match="refusing a symlink") as caught:
        FileLock(str(link), timeout=0.0).__enter__()
    assert isinstance(caught.value.__cause__, OSError)
    assert target.read_text() == "keep"


def test_os_errors_become_store_errors_chained(tmp_path: Path) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    with pytest.raises(fp.StoreError, match="cannot open the lock file") as caught:
        FileLock(str(folder), timeout=0.0).__enter__()
    assert not isinstance(caught.value, fp.LockTimeout)
    assert isinstance(caught.value.__cause__, IsADirectoryError)
    with pytest.raises(fp.StoreError, match="cannot open the lock file"):
        FileLock(str(tmp_path / "missing.lock"), timeout=0.0, create=False).__enter__()
    assert not (tmp_path / "missing.lock").exists()


def test_portalocker_errors_become_store_errors_chained(lock_path: str) -> None:
    import portalocker

    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    os.close(fd)  # a stale descriptor: portalocker raises its LockException (EBADF)
    with pytest.raises(fp.StoreError, match="cannot lock: Bad file descriptor") as caught:
        _filelock._try_lock(fd, lock_path)
    assert isinstance(caught.value.__cause__, portalocker.LockException)


def test_the_lock_file_is_kept_and_reused(lock_path: str) -> None:
    for _ in range(3):
        with FileLock(lock_path, timeout=0.0):
            pass
    inode = os.stat(lock_path).st_ino
    with FileLock(lock_path, timeout=0.0):
        pass
    assert os.stat(lock_path).st_ino == inode
    assert os.stat(lock_path).st_mode & 0o777 == 0o600
