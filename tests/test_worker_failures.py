"""Every way the worker can fail the client, with real processes: the client then answers
in-process, exactly as ``FORGE_WORKER=off`` does — a failure never becomes an allow."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hookrun import CLIENT_PY, ClientProject, stop_workers, worker_pids

from forge_policy.cli.worker_cmds import refusals
from forge_policy.worker import protocol
from forge_policy.worker.protocol import encode_answer

NOBODY = 65534
#: A stand-in for the worker: listens on the socket (an inherited fd, else PATH) and does
#: one thing wrong. Plain ``socket`` only, so any interpreter of any user can run it.
STAND_IN = r"""
import os, signal, socket, sys, time
behaviour, path = sys.argv[1], sys.argv[2]
if path.isdigit():
    server = socket.socket(fileno=int(path))
else:  # by its name in its folder: a deep path is longer than a socket address may be
    server = socket.socket(socket.AF_UNIX)
    os.chdir(os.path.dirname(path))
    server.bind(os.path.basename(path))
server.listen(8)
print("ready", flush=True)
while True:
    conn, _ = server.accept()
    if behaviour == "hangup":  # the request left unread: the client's next read is a reset
        time.sleep(0.2)
        conn.close()
        continue
    while conn.recv(65536):  # the whole request first
        pass
    if behaviour == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif behaviour == "sleep":
        time.sleep(30)
    elif behaviour == "drip":  # a well-formed start, then nothing: late, not short
        conn.sendall(bytes.fromhex(sys.argv[3]))
        time.sleep(30)
    elif behaviour == "flood":  # more than any answer may be
        try:
            while True:
                conn.sendall(b"FPW1A" + bytes(65536))
        except OSError:
            pass
    else:
        conn.sendall(bytes.fromhex(sys.argv[3]))
    conn.close()
"""
FORGED_ALLOW = encode_answer(b"A", b"", b"")
HARD = "echo hard-me"


pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the worker needs Linux (SO_PEERCRED, /proc)"
)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[ClientProject]:
    project = ClientProject(tmp_path)
    yield project
    stop_workers(project.root)
    assert worker_pids(project.root) == []


def _expected(project: ClientProject, command: str = HARD) -> bytes:
    return project.call(project.bash(command), FORGE_WORKER="off").stdout


def _private_folder(project: ClientProject) -> Path:
    project.slot().mkdir(parents=True, mode=0o700)
    project.folder.chmod(0o700)
    return project.slot() / "worker.sock"


def _bound(path: Path) -> socket.socket:
    """A Unix socket bound at ``path`` (through ``/proc/self/fd`` when the path is long)."""
    address, fd = protocol.address(os.fsencode(path.parent), os.fsencode(path.name))
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(address)
    finally:
        if fd >= 0:
            os.close(fd)
    return sock


class StandIn:
    """A stand-in worker process; killed on :meth:`close`."""

    def __init__(self, args: list[str], **popen: object) -> None:
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, **popen)  # type: ignore[call-overload]
        assert self.process.stdout.readline() == b"ready\n"

    def close(self) -> None:
        self.process.kill()
        self.process.wait(timeout=5)
        assert self.process.stdout is not None
        self.process.stdout.close()


@pytest.mark.parametrize(
    ("behaviour", "answer", "reason"),
    [
        ("kill", b"", "malformed answer"),  # the worker dies mid-request (SIGKILL)
        ("send", b"HTTP/1.1 200 OK\r\n\r\n", "malformed answer"),
        ("send", FORGED_ALLOW[:-3], "malformed answer"),  # cut short
        ("send", encode_answer(b"A", b"{}" * 10, b"")[:15], "answer cut short"),
        ("send", FORGED_ALLOW + b"more", "malformed answer"),  # trailing bytes
        ("send", b"FPW1X" + FORGED_ALLOW[5:], "malformed answer"),  # unknown status
        ("sleep", b"", "no answer within 0.3 s"),  # late: past the deadline
        ("drip", FORGED_ALLOW[:6], "no answer within 0.3 s"),  # begun, never finished
        ("hangup", b"", "connection lost (Connection reset by peer)"),
        ("flood", b"", "answer too large"),
        ("send", encode_answer(b"R", b"busy", b""), "refused: busy"),  # a refusal, any reason
    ],
)
def test_a_broken_worker_is_answered_in_process(
    project: ClientProject, behaviour: str, answer: bytes, reason: str
) -> None:
    path = _private_folder(project)
    stand_in = StandIn([sys.executable, "-c", STAND_IN, behaviour, str(path), answer.hex()])
    try:
        started = time.monotonic()
        got = project.call(project.bash(HARD), FORGE_WORKER_TIMEOUT="0.3")
        assert time.monotonic() - started < 10
    finally:
        stand_in.close()
    assert got.stdout == _expected(project) and b'"deny"' in got.stdout
    assert f"forge-policy: worker: {reason}; evaluating in-process" in got.stderr
    assert worker_pids(project.root) == []  # a live (if broken) socket is not replaced
    assert refusals(str(project.root))["reasons"] == {reason: 1}  # counted for worker status
    status = project.run_cli("worker", "status", check=1).stdout
    assert "evaluated in-process although the worker is on: 1 call since " in status
    assert f"      1  {reason}\n" in status


def test_a_stale_socket_is_replaced(project: ClientProject) -> None:
    path = _private_folder(project)
    dead = _bound(path)
    dead.close()  # the file stays, nobody listens: what a crashed worker leaves
    got = project.call(project.bash(HARD))
    assert got.stdout == _expected(project) and got.stderr == ""
    pid = project.wait_worker()
    assert project.call(project.bash(HARD)).stdout == got.stdout
    assert project.requests() == 1 and worker_pids(project.root) == [pid]


def test_a_worker_killed_with_sigkill_is_replaced(project: ClientProject) -> None:
    project.call(project.bash("ls"))
    old = project.wait_worker()
    os.kill(old, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while worker_pids(project.root) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert (project.slot() / "worker.sock").exists()  # stale socket and pid file left behind
    got = project.call(project.bash(HARD))
    assert got.stdout == _expected(project) and b'"deny"' in got.stdout
    new = project.wait_worker()
    assert new != old and worker_pids(project.root) == [new]


def test_a_folder_open_to_others_is_not_used(project: ClientProject) -> None:
    path = _private_folder(project)
    project.folder.chmod(0o755)
    stand_in = StandIn([sys.executable, "-c", STAND_IN, "send", str(path), FORGED_ALLOW.hex()])
    try:
        got = project.call(project.bash(HARD))
    finally:
        stand_in.close()
    assert got.stdout == _expected(project) and b'"deny"' in got.stdout
    assert "worker folder is not private to this user; evaluating in-process" in got.stderr
    assert worker_pids(project.root) == []


def _other_user_python() -> str:
    if os.geteuid() != 0:
        pytest.skip("needs root to run a process as another user")
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.path.exists(candidate):
            return candidate
    pytest.skip("no system python3 another user can run")


def test_an_impostor_socket_of_another_user_is_refused(project: ClientProject) -> None:
    python = _other_user_python()
    path = _private_folder(project)
    sock = _bound(path)  # bound here, listened on by the other user: SO_PEERCRED names it
    os.chown(path, NOBODY, NOBODY)
    try:
        stand_in = StandIn(
            [python, "-I", "-S", "-c", STAND_IN, "send", str(sock.fileno()), FORGED_ALLOW.hex()],
            pass_fds=(sock.fileno(),),
            user=NOBODY,
        )
    finally:
        sock.close()
    try:
        got = project.call(project.bash(HARD))
    finally:
        stand_in.close()
    assert got.stdout == _expected(project) and b'"deny"' in got.stdout  # not the forged allow
    assert "the worker socket belongs to another user; evaluating in-process" in got.stderr


def test_the_worker_does_not_answer_another_user(project: ClientProject) -> None:
    python = _other_user_python()
    project.call(project.bash("ls"))
    project.wait_worker()
    folder_fd = os.open(project.slot(), os.O_RDONLY)
    project.folder.chmod(0o711)  # let the other user reach the socket at all
    project.slot().chmod(0o711)
    (project.slot() / "worker.sock").chmod(0o666)
    probe = (
        "import socket, sys\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "s.connect(sys.argv[1])\n"
        "print(repr(s.recv(100)))\n"
    )
    try:
        result = subprocess.run(
            [python, "-I", "-S", "-c", probe, f"/proc/self/fd/{folder_fd}/worker.sock"],
            capture_output=True,
            pass_fds=(folder_fd,),
            user=NOBODY,
            timeout=10,
        )
    finally:
        project.folder.chmod(0o700)
        project.slot().chmod(0o700)
        os.close(folder_fd)
    assert result.stdout == b"b''\n", result  # connected, then closed unanswered
    assert project.requests() == 0


def test_a_changed_package_restarts_the_worker(project: ClientProject, tmp_path: Path) -> None:
    tree = tmp_path / "site" / "forge_policy"
    shutil.copytree(CLIENT_PY.parents[1], tree, ignore=shutil.ignore_patterns("__pycache__"))
    project.client = tree / "worker" / "launch.py"
    project.call(project.bash("ls"))
    old = project.wait_worker()
    assert project.call(project.bash("ls")).stderr == "" and project.requests() == 1
    module = tree / "worker" / "client.py"
    staged = module.with_name("client.py.new")
    staged.write_text(module.read_text() + "\n# reinstalled\n")
    os.replace(staged, module)  # what pip does: a new file, a new inode
    got = project.call(project.bash(HARD))
    assert got.stdout == _expected(project) and b'"deny"' in got.stdout
    assert "refused: the package changed: the worker restarts" in got.stderr
    new = project.wait_worker()
    # the old worker stops once it has answered, but its process may still be ending (draining,
    # the interpreter's exit) when the new one answers on a loaded machine: give it 10 s
    deadline = time.monotonic() + 10
    while old in worker_pids(project.root) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert new != old and worker_pids(project.root) == [new]
    assert project.call(project.bash(HARD)).stderr == ""
    assert "a client of another version asked" in project.log()


def test_a_stalled_worker_never_evaluates_after_the_client_gave_up(
    project: ClientProject,
) -> None:
    project.call(project.bash("ls"))
    pid = project.wait_worker()
    os.kill(pid, signal.SIGSTOP)  # stalled: the connection waits in the listen backlog
    try:
        got = project.call(project.bash("echo nudge-me"), FORGE_WORKER_TIMEOUT="0.3")
    finally:
        os.kill(pid, signal.SIGCONT)
    assert "worker: no answer within 0.3 s; evaluating in-process" in got.stderr
    assert b"[nudger] nudger: Bash (1)" in got.stdout
    time.sleep(0.5)  # the resumed worker reads the late request, and refuses it
    assert project.requests() == 0 and project.counter("nudger") == 1  # evaluated once


def test_an_engine_that_does_not_load_fails_closed(project: ClientProject, tmp_path: Path) -> None:
    tree = tmp_path / "broken" / "forge_policy"
    shutil.copytree(CLIENT_PY.parent, tree / "worker", ignore=shutil.ignore_patterns("__pyc*"))
    (tree / "__init__.py").write_text('raise ImportError("half-installed")\n')
    for env, code in (({}, 2), ({"FORGE_ON_ERROR": "allow"}, 0)):
        result = subprocess.run(
            [sys.executable, "-I", "-S", str(tree / "worker" / "launch.py")],
            input=b'{"hook_event_name": "PreToolUse"}',
            capture_output=True,
            env={**project.env, "FORGE_WORKER": "off", **env},
            cwd=project.dir,
            timeout=30,
        )
        assert result.returncode == code and result.stdout == b""  # 2: Claude Code blocks
        assert b"cannot load the engine (ImportError('half-installed'))" in result.stderr


def test_a_symlinked_worker_lock_stops_the_worker_from_starting(
    project: ClientProject, tmp_path: Path
) -> None:
    """The worker's lock is the project's file lock: a symlinked lock file is refused (and
    said so in the log), never followed; the call is answered in-process."""
    project.slot().mkdir(parents=True, mode=0o700)
    project.folder.chmod(0o700)
    elsewhere = tmp_path / "elsewhere.lock"
    elsewhere.write_bytes(b"")
    (project.slot() / "worker.lock").symlink_to(elsewhere)
    got = project.call(project.bash(HARD))  # no worker answers: this call starts one
    assert got.stdout == _expected(project) and b'"deny"' in got.stdout
    deadline = time.monotonic() + 20
    while "not started" not in project.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "not started: " in project.log() and "refusing a symlink" in project.log()
    assert "Traceback" not in project.log()
    assert worker_pids(project.root) == [] and elsewhere.read_bytes() == b""
