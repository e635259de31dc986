"""The one file lock (``forge_policy._infra.filelock``): portalocker under a timeout, its errors
translated, a symlink refused, and the same lock as a bare ``flock`` (older releases took that)."""

from __future__ import annotations

import os
import sys
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
    import importlib.util
    import inspect

    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    os.close(fd)  # a stale descriptor: portalocker raises its LockException (EBADF)
    with pytest.raises(fp.StoreError, match="cannot lock: Bad file descriptor") as caught:
        _filelock._try_lock(fd, lock_path)
    cause = caught.value.__cause__
    assert isinstance(cause, _filelock._portalocker().exceptions.LockException)
    spec = importlib.util.find_spec("portalocker")  # portalocker's own class, from its own file
    assert spec is not None and spec.submodule_search_locations
    folder = os.path.realpath(next(iter(spec.submodule_search_locations)))
    assert os.path.realpath(inspect.getfile(type(cause))) == os.path.join(folder, "exceptions.py")


def test_the_lock_loads_portalocker_s_locking_modules_without_its_package() -> None:
    """The package's ``__init__`` reads its metadata (``importlib.metadata``, ``email``) and
    imports its lock classes and redis lock: ~25 ms the in-process hook paid on each allow."""
    import subprocess

    code = (
        "import os, sys, tempfile\n"
        "from forge_policy._infra.filelock import FileLock\n"
        "with FileLock(os.path.join(tempfile.mkdtemp(), 'x.lock'), timeout=1.0):\n"
        "    pass\n"
        "names = ('portalocker', 'portalocker.utils', 'importlib.metadata', 'email', 'redis',\n"
        "         'forge_policy._infra._portalocker.portalocker')\n"
        "print(sorted(m for m in names if m in sys.modules))\n"
        "import portalocker\n"  # a process that imports the package itself: the lock follows
        "from forge_policy._infra import filelock\n"
        "filelock._LOCKER.clear()\n"
        "print(filelock._portalocker() is portalocker)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == [
        "['forge_policy._infra._portalocker.portalocker']",
        "True",
    ]


def test_another_portalocker_layout_falls_back_to_the_package(
    monkeypatch: pytest.MonkeyPatch, lock_path: str
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(  # an install where portalocker's folder cannot be found
        importlib.util, "find_spec", lambda name, *a: None if name == "portalocker" else real(name)
    )
    monkeypatch.setattr(_filelock, "_LOCKER", [])
    monkeypatch.delitem(sys.modules, "portalocker", raising=False)
    with FileLock(lock_path, timeout=1.0) as held, pytest.raises(fp.LockTimeout):
        FileLock(lock_path, timeout=0.01).__enter__()  # still locked, by the package's lock
    assert held.fd == -1
    assert _filelock._portalocker() is sys.modules["portalocker"]
