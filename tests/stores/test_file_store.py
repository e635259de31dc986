"""FileStore specifics: the on-disk document, corrupt inputs, symlinks, the lock, fsync, expiry."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
from pathlib import Path
from typing import Any

import pytest

import forge_policy as fp
from forge_policy._infra.filelock import FileLock
from forge_policy.state import SessionState
from forge_policy.stores import FileStore

T0 = 1_800_000_000.0


def new_session(current: SessionState | None) -> tuple[str, SessionState]:
    state = current if current is not None else SessionState.new(T0)
    state.behavior("b").counter += 1
    return "written", state


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / ".forge" / "runtime" / "state.json"


def test_layout_and_document(path: Path) -> None:
    store = FileStore(path)
    assert not path.parent.exists()  # nothing on disk before the first transaction
    store.transact("s1", new_session)
    assert sorted(p.name for p in path.parent.iterdir()) == ["state.json", "state.json.lock"]
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["schema_version"] == 1
    assert doc["sessions"]["s1"]["behaviors"]["b"]["counter"] == 1
    assert path.stat().st_mode & 0o777 == 0o600


def test_unknown_top_level_keys_and_missing_version(path: Path) -> None:
    path.parent.mkdir(parents=True)
    session = SessionState.new(T0).to_dict()
    path.write_text(json.dumps({"sessions": {"s1": session}, "x-tool": {"keep": [1, 2]}}))
    store = FileStore(path)
    store.transact("s2", new_session)
    doc = json.loads(path.read_text())
    assert doc["x-tool"] == {"keep": [1, 2]}
    assert doc["schema_version"] == 1
    assert sorted(doc["sessions"]) == ["s1", "s2"]


def test_newer_schema_is_refused_not_moved(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.write_text('{"schema_version": 2, "sessions": {}}')
    with pytest.raises(fp.StoreError, match="newer"):
        FileStore(path).transact("s1", new_session)
    assert path.read_text() == '{"schema_version": 2, "sessions": {}}'
    assert list(path.parent.glob("*.corrupt-*")) == []


CORRUPT = {
    "garbage": b"\x00\xff\xfe not json at all",
    "truncated": b'{"schema_version": 1, "sessions": {"s1": {"flags": {',
    "array": b"[1, 2, 3]",
    "sessions-list": b'{"schema_version": 1, "sessions": []}',
    "session-string": b'{"schema_version": 1, "sessions": {"s1": "oops"}}',
    "version-string": b'{"schema_version": "1", "sessions": {}}',
    "empty": b"",
    "bad-utf8": b'{"sessions": {"\xc3\x28": {}}}',
    "deep": b"[" * 100_000 + b"]" * 100_000,
}


@pytest.mark.parametrize("through", ["transact", "load"])
@pytest.mark.parametrize("name", sorted(CORRUPT))
def test_corrupt_state_is_moved_aside_and_reported(
    path: Path, name: str, through: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path.parent.mkdir(parents=True)
    path.write_bytes(CORRUPT[name])
    records: list[dict[str, Any]] = []
    store = FileStore(path, on_recovery=records.append)
    if through == "transact":
        assert store.transact("s1", new_session) == "written"
        assert store.load("s1").behavior("b").counter == 1  # a fresh state began
    else:
        assert store.load("s1") is None
        assert not path.exists()
    (moved,) = path.parent.glob("state.json.corrupt-*")
    assert moved.read_bytes() == CORRUPT[name]  # never silently dropped
    assert moved.name[len("state.json.corrupt-") :].endswith("Z")
    assert records == [
        {
            "kind": "recovery",
            "timestamp": records[0]["timestamp"],
            "path": str(path),
            "moved_to": str(moved),
            "reason": records[0]["reason"],
        }
    ]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert str(moved) in err and records[0]["reason"] in err


def test_huge_state_file_is_moved_aside(path: Path) -> None:
    path.parent.mkdir(parents=True)
    with path.open("wb") as handle:  # sparse: 64 MiB + 1 byte without writing them
        handle.truncate(FileStore.MAX_BYTES + 1)
    records: list[dict[str, Any]] = []
    store = FileStore(path, on_recovery=records.append)
    assert store.session_ids() == []
    assert "over the 67108864-byte cap" in records[0]["reason"]
    assert Path(records[0]["moved_to"]).stat().st_size == FileStore.MAX_BYTES + 1


def test_write_over_the_cap_is_refused_and_the_last_state_kept(path: Path) -> None:
    store = FileStore(path)
    store.transact("s1", new_session)
    before = path.read_bytes()
    store.MAX_BYTES = len(before) + 10  # type: ignore[misc]

    def grow(current: SessionState | None) -> tuple[None, SessionState]:
        assert current is not None
        current.totals["padding"] = "x" * 100
        return None, current

    with pytest.raises(fp.StoreError, match="cap"):
        store.transact("s1", grow)
    assert path.read_bytes() == before


def test_two_recoveries_in_one_instant_do_not_collide(path: Path) -> None:
    path.parent.mkdir(parents=True)
    store = FileStore(path)
    for _ in range(3):
        path.write_bytes(b"garbage")
        store.session_ids()
    assert len(list(path.parent.glob("state.json.corrupt-*"))) == 3


def test_a_failing_recovery_callback_does_not_undo_the_recovery(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path.parent.mkdir(parents=True)
    path.write_bytes(b"garbage")

    def broken(record: dict[str, Any]) -> None:
        raise RuntimeError("audit is down")

    assert FileStore(path, on_recovery=broken).transact("s1", new_session) == "written"
    assert "on_recovery failed: RuntimeError: audit is down" in capsys.readouterr().err


def test_a_symlinked_lock_is_refused(path: Path, tmp_path: Path) -> None:
    path.parent.mkdir(parents=True)
    target = tmp_path / "elsewhere.json"
    target.write_text('{"sessions": {}}')
    Path(str(path) + ".lock").symlink_to(target)
    store = FileStore(path)
    with pytest.raises(fp.StoreError, match="refusing a symlink") as caught:
        store.transact("s1", new_session)
    assert isinstance(caught.value.__cause__, OSError)  # the OS's error, chained
    assert target.read_text() == '{"sessions": {}}'


def test_a_symlinked_state_is_moved_aside_never_followed(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 10 route 5: a symlink over ``state.json`` used to force stateless decisions for
    good. The link itself is moved aside (its target untouched, never read) and reported, and
    a real file begins — which the evaluator fills from the audit log."""
    path.parent.mkdir(parents=True)
    target = tmp_path / "elsewhere.json"
    target.write_text('{"sessions": {"s1": {"flags": {"planted": true}}}}')
    path.symlink_to(target)
    store = FileStore(path)
    assert store.load("s1") is None  # the target's session is never read
    assert store.transact("s1", new_session) == "written"
    assert path.is_file() and not path.is_symlink()
    [moved] = list(path.parent.glob("state.json.corrupt-*"))
    assert moved.is_symlink() and target.read_text().startswith('{"sessions": {"s1"')
    assert "a symlink, not the state file" in capsys.readouterr().err


def test_a_leftover_temp_file_is_replaced_not_followed(path: Path, tmp_path: Path) -> None:
    path.parent.mkdir(parents=True)
    target = tmp_path / "victim"
    target.write_text("untouched")
    Path(str(path) + ".tmp").symlink_to(target)
    FileStore(path).transact("s1", new_session)
    assert target.read_text() == "untouched"
    assert not Path(str(path) + ".tmp").exists()


def test_state_path_that_is_a_folder_is_a_store_error(path: Path) -> None:
    path.mkdir(parents=True)
    with pytest.raises(fp.StoreError, match="not a regular file"):
        FileStore(path).transact("s1", new_session)


@pytest.mark.parametrize("fsync", [True, False])
def test_fsync_file_then_rename_then_folder(
    path: Path, fsync: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import stat

    steps: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync_spy(fd: int) -> None:
        steps.append("fsync folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "fsync file")
        real_fsync(fd)

    def replace_spy(src: Any, dst: Any) -> None:
        steps.append("rename")
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync_spy)
    monkeypatch.setattr(os, "replace", replace_spy)
    store = FileStore(path, fsync=fsync)
    store.transact("s1", new_session)
    # the data is on disk before the rename publishes it; the folder entry after it
    assert steps == (["fsync file", "rename", "fsync folder"] if fsync else ["rename"])
    store.transact("s1", lambda current: (None, None))
    assert len(steps) == (3 if fsync else 1)  # nothing written, nothing synced


def _lock_and_die(lock_path: str, ready: Any) -> None:
    lock = FileLock(lock_path, timeout=1.0).__enter__()
    assert lock
    ready.set()
    os.kill(os.getpid(), signal.SIGKILL)  # dies holding the lock, without unlocking


def test_a_dead_holders_lock_never_blocks(path: Path) -> None:
    path.parent.mkdir(parents=True)
    lock_path = str(path) + ".lock"
    ctx = multiprocessing.get_context("fork")
    ready = ctx.Event()
    proc = ctx.Process(target=_lock_and_die, args=(lock_path, ready))
    proc.start()
    proc.join()
    assert ready.is_set() and proc.exitcode == -signal.SIGKILL
    os.utime(lock_path, (0, 0))  # an ancient lock file with content: neither matters
    Path(lock_path).write_text("pid 1 holds this")
    store = FileStore(path, lock_timeout=0.0)  # no waiting at all
    assert store.transact("s1", new_session) == "written"


def test_portalocker_and_the_store_exclude_each_other(path: Path) -> None:
    import portalocker

    path.parent.mkdir(parents=True)
    store = FileStore(path, lock_timeout=0.05)
    flags = portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING
    with portalocker.Lock(str(path) + ".lock", mode="a", flags=flags, fail_when_locked=True):
        with pytest.raises(fp.LockTimeout, match=r"state\.json\.lock"):
            store.transact("s1", new_session)
        assert store.load("s1") is None  # reads need no lock

    def inside(current: SessionState | None) -> tuple[None, None]:
        with pytest.raises(portalocker.AlreadyLocked):
            portalocker.Lock(str(path) + ".lock", mode="a", timeout=0, flags=flags).acquire()
        return None, None

    store.transact("s1", inside)


def test_nested_transact_times_out_instead_of_hanging(path: Path) -> None:
    store = FileStore(path, lock_timeout=0.05)
    with pytest.raises(fp.LockTimeout):
        store.transact("a", lambda cur: (store.transact("b", new_session), None))


def test_opportunistic_purge_on_write(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [T0]
    store = FileStore(path, ttl=100.0, clock=lambda: clock[0])
    old = SessionState.new(T0 - 1000)
    store.transact("old", lambda cur: (None, old))  # first write: purges, but keeps its own
    assert store.session_ids() == ["old"]
    scans: list[int] = []
    real = FileStore._drop_expired
    monkeypatch.setattr(
        FileStore, "_drop_expired", lambda self, *a, **k: (scans.append(1), real(self, *a, **k))[1]
    )
    store.transact("s1", new_session)
    assert scans == [] and "old" in store.session_ids()  # within the interval: no scan
    store.transact("s1", lambda cur: (None, None))
    clock[0] += FileStore.PURGE_INTERVAL
    store.transact("s1", new_session)
    assert scans == [1] and store.session_ids() == ["s1"]
    assert json.loads(path.read_text())["purged_at"] == clock[0]


def test_portalocker_is_imported_only_when_a_lock_is_taken_and_sqlite3_never(path: Path) -> None:
    """Importing portalocker costs tens of ms: a process that only reads must not pay it, and
    one that locks loads its locking modules only, not its package (``importlib.metadata``)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import forge_policy as fp\n"
        "from forge_policy.stores import FileStore\n"
        "names = ('portalocker', 'forge_policy._infra._portalocker.portalocker', 'sqlite3',\n"
        "         'importlib.metadata', 'email')\n"
        "seen = lambda: sorted(m for m in names if m in sys.modules)\n"
        f"store = FileStore({str(path)!r})\n"
        "ev = fp.Evaluator(fp.builtin_catalog(), store=store)\n"
        "store.load('s'), store.session_ids()\n"
        "print(seen())\n"
        "ev.evaluate(fp.Event('PreToolUse', 's', tool_name='Write', tool_input={}))\n"
        "print(seen())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "['forge_policy._infra._portalocker.portalocker']"]
    assert (
        json.loads(path.read_text())["sessions"]["s"]["behaviors"]["search-first"]["counter"] == 1
    )


def _imports(stderr: str) -> list[tuple[int, str]]:
    """``(depth, module)`` of each ``-X importtime`` line, in its (post-order) sequence."""
    rows = []
    for line in stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1]
            rows.append((len(name) - len(name.lstrip()), name.strip()))
    return rows


def _imported_by(rows: list[tuple[int, str]], parent: str) -> set[str]:
    """The modules first imported while ``parent`` was being imported (its subtree)."""
    at = next(i for i, (_, name) in enumerate(rows) if name == parent)
    depth, inside = rows[at][0], set()
    for level, name in reversed(rows[:at]):
        if level <= depth:
            break
        inside.add(name)
    return inside


@pytest.mark.parametrize("coverage", [True, False])
@pytest.mark.parametrize("store", ["file", "memory"])
def test_the_state_lock_is_the_only_heavy_import_of_a_hook(
    tmp_path: Path, store: str, coverage: bool
) -> None:
    """A warm hook process: the file store's lock (and the audit log's) brings portalocker,
    and only when the event writes: an allowed call appends its ``seen`` record to the log
    (unless ``coverage: false``: then the allow path reads without a lock), a counted
    violation is appended to the log whatever the store; nothing else of this package's stores
    or audit sinks brings a heavy module (typing and dataclasses come with attrs and cattrs,
    the model's and the cache's: tests/test_hook_e2e.py pins those)."""
    from hookrun import Project

    project = Project(tmp_path)
    if not coverage:
        config = project.root / "config.yaml"
        config.write_text(config.read_text() + "coverage: false\n")
    for command in ("ls", "ls", "echo nudge-me"):  # warm the cache, allow, then write state
        _, err = project.run(project.bash(command), FORGE_STORE=store, PYTHONPROFILEIMPORTTIME="1")
        rows = _imports(err)
        heavy = {name for _, name in rows if name.startswith(HEAVY)}
        if command == "ls" and "ruamel" in {n.split(".")[0] for _, n in rows}:
            continue  # the cold run that compiled the catalog
        if command == "ls" and not coverage:
            assert heavy == set()
        else:  # portalocker's locking modules, never its package (importlib.metadata, email)
            assert LOCK in heavy
            assert heavy - {LOCK} <= _imported_by(rows, LOCK)
            assert {n.split(".")[0] for n in heavy} == {"forge_policy"}


LOCK = "forge_policy._infra._portalocker.portalocker"
HEAVY = (
    "portalocker",
    "sqlite3",
    "forge_policy._infra._portalocker",
    "importlib.metadata",
    "email",
)


def test_peek_parses_the_document_only_when_the_file_changed(tmp_path: Path) -> None:
    """Issue 9: a long-lived file store (worker, serve) pays a stat, not a parse, per allow;
    a write by another store instance (another process) is seen at once."""
    path = tmp_path / "state.json"
    mine, other = FileStore(str(path)), FileStore(str(path))
    for store in (mine, other):
        store.transact("s", lambda cur: (None, SessionState.new(0.0)))
    first = mine.peek("s")
    assert first is not None and mine.peek("s").data is first.data  # cached: the same object

    def flag(cur: SessionState | None) -> tuple[None, SessionState]:
        assert cur is not None
        cur.flags["seen"] = True
        return None, cur

    other.transact("s", flag)
    again = mine.peek("s")
    assert again is not None and again.flags == {"seen": True} and first.flags == {}
    path.write_text("{not json")  # corrupt: moved aside under the lock, never served stale
    assert mine.peek("s") is None
    assert list(tmp_path.glob("state.json.corrupt-*"))
