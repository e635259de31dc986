"""The worker on macOS and the BSDs, tested on Linux (issue 28).

Each system's peer check is :func:`~forge_policy.worker.protocol.read_peer_uid` with that
system's ``getsockopt`` level, option and answer layout. Here the kernel call is the seam: the
unit tests hand it answers built with ``struct`` from each system's header, and
:func:`~forge_policy.worker.protocol.translated` answers it from Linux's real ``SO_PEERCRED``
re-encoded in the other layout. ``FORGE_TEST_PEERCRED=darwin`` makes the real client and the
worker it starts run that system's check (its constants, its decoding, its socket-path rule)
over that translation: what is emulated is only the layout the other kernel writes, never the
user it names. What no test here can show is that a real macOS or BSD kernel answers as its
header says: the worker is untested there.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hookrun import ClientProject, stop_workers, worker_pids

from forge_policy.cli.worker_cmds import refusals
from forge_policy.worker import protocol

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the other systems are emulated over Linux's"
)

OTHERS = ["darwin", "freebsd", "dragonfly", "openbsd", "netbsd"]
HARD = "echo hard-me"
NOBODY = 65534


def _xucred(uid: int, groups: list[int], version: int = 0) -> bytes:
    """``struct xucred`` (<sys/ucred.h>): u_int cr_version, uid_t cr_uid, short cr_ngroups,
    gid_t cr_groups[16] (76 bytes: two bytes of padding after the short)."""
    padded = [*groups, *[0] * (16 - len(groups))]
    return struct.pack("=IIh2x16I", version, uid, len(groups), *padded)


#: (system, getsockopt level, option, the answer its kernel writes for uid 501, gid 20, pid 4242)
ANSWERS = [
    ("darwin", 0, 1, _xucred(501, [20, 12, 61])),
    # FreeBSD and DragonFly: the same xucred, then a pointer-sized union (cr_pid on FreeBSD)
    ("freebsd", 0, 1, _xucred(501, [20]) + struct.pack("=i4x", 4242)),
    ("dragonfly", 0, 1, _xucred(501, [20]) + bytes(8)),
    # OpenBSD struct sockpeercred {uid_t uid; gid_t gid; pid_t pid;}
    ("openbsd", 0xFFFF, 0x1022, struct.pack("=IIi", 501, 20, 4242)),
    # NetBSD struct unpcbid {pid_t unp_pid; uid_t unp_euid; gid_t unp_egid;}
    ("netbsd", 0, 3, struct.pack("=iII", 4242, 501, 20)),
    # Linux struct ucred {pid_t pid; uid_t uid; gid_t gid;}
    ("linux", socket.SOL_SOCKET, socket.SO_PEERCRED, struct.pack("=iII", 4242, 501, 20)),
]


def _kernel(level: int, option: int, answer: bytes) -> Callable[[int, int, int], bytes]:
    """A ``getsockopt`` that answers only ``level``/``option``, as much as the buffer holds."""

    def getsockopt(got_level: int, got_option: int, size: int) -> bytes:
        if (got_level, got_option) != (level, option):
            raise OSError(errno.ENOPROTOOPT, "Protocol not available")
        return answer[:size]

    return getsockopt


@pytest.mark.parametrize(("system", "level", "option", "answer"), ANSWERS)
def test_each_system_reads_the_uid_where_its_header_puts_it(
    system: str, level: int, option: int, answer: bytes
) -> None:
    module = socket if system == "linux" else None  # Linux's numbers are this module's
    assert protocol.read_peer_uid(_kernel(level, option, answer), system, module) == 501
    assert protocol.authenticates_peers(system)


def test_openbsd_is_not_read_as_linux() -> None:
    """OpenBSD's Python has ``SO_PEERCRED`` too, but its struct puts the uid first: read as
    Linux's ucred (as the client did on any system with the constant) it yields the gid."""
    answer = struct.pack("=IIi", 501, 20, 4242)
    linux = _kernel(socket.SOL_SOCKET, socket.SO_PEERCRED, answer)
    assert protocol.read_peer_uid(linux, "linux", socket) == 20  # the wrong user
    assert protocol.read_peer_uid(_kernel(0xFFFF, 0x1022, answer), "openbsd") == 501


@pytest.mark.parametrize(
    ("system", "answer", "why"),
    [
        ("darwin", _xucred(501, [20], version=1), "xucred version 1, not 0"),
        ("darwin", _xucred(501, [20])[:8], "8 bytes, not a whole xucred"),  # cut short
        ("darwin", struct.pack("=iII", 4242, 501, 20), "12 bytes, not a whole xucred"),
        ("freebsd", b"", "0 bytes"),
        ("openbsd", struct.pack("=II", 501, 20), "8 bytes, not a whole sockpeercred"),
        ("netbsd", bytes(8), "8 bytes, not a whole unpcbid"),
    ],
)
def test_an_answer_that_is_not_one_whole_known_struct_names_nobody(
    system: str, answer: bytes, why: str
) -> None:
    _, level, option, _ = next(entry for entry in ANSWERS if entry[0] == system)
    getsockopt = _kernel(level, option, answer)  # a kernel that wrote another layout
    with pytest.raises(OSError, match=why):
        protocol.read_peer_uid(getsockopt, system)


def test_a_system_without_a_peer_check_has_no_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(OSError, match="no peer credentials on sunos"):
        protocol.read_peer_uid(_kernel(0, 1, _xucred(501, [])), "sunos")
    for platform, name, known in [
        ("freebsd14", "freebsd", True),
        ("openbsd7", "openbsd", True),
        ("netbsd10", "netbsd", True),
        ("darwin", "darwin", True),
        ("sunos5", "sunos", False),
        ("aix7", "aix", False),
        ("cygwin", "cygwin", False),
    ]:
        monkeypatch.setattr(sys, "platform", platform)
        assert (protocol.system(), protocol.authenticates_peers()) == (name, known)


@pytest.mark.parametrize("system", [*OTHERS, "linux"])
def test_the_translated_kernel_names_the_real_user(system: str) -> None:
    left, right = socket.socketpair(socket.AF_UNIX)
    with left, right:
        assert protocol.peer_uid(left) == os.geteuid()
        if system != "linux":
            getsockopt = protocol.translated(left, system)
            assert protocol.read_peer_uid(getsockopt, system) == os.geteuid()
            with pytest.raises(OSError) as raised:  # Linux's own request: unknown there
                getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
            assert raised.value.errno == errno.ENOPROTOOPT


def _system_python() -> str:
    if os.geteuid() != 0:
        pytest.skip("needs root to run a process as another user")
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.path.exists(candidate):
            return candidate
    pytest.skip("no system python3 another user can run")


@pytest.mark.parametrize("system", [*OTHERS, "linux"])
def test_each_check_names_another_user_as_another_user(system: str) -> None:
    """A peer of user ``nobody``: every system's reading names it, none as this user."""
    python = _system_python()
    folder = Path(tempfile.mkdtemp(prefix="fp", dir="/tmp"))
    try:
        folder.chmod(0o777)
        server = socket.socket(socket.AF_UNIX)
        with server:
            server.bind(str(folder / "s"))
            os.chmod(folder / "s", 0o777)
            server.listen(1)
            probe = "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])"
            probe += "; s.recv(1)"
            peer = subprocess.Popen(
                [python, "-I", "-S", "-c", probe, str(folder / "s")], user=NOBODY
            )
            try:
                server.settimeout(10)
                conn, _ = server.accept()
                with conn:
                    if system == "linux":
                        uid = protocol.read_peer_uid(conn.getsockopt, system, socket)
                    else:
                        uid = protocol.read_peer_uid(protocol.translated(conn, system), system)
            finally:
                peer.kill()
                peer.wait(timeout=5)
        assert uid == NOBODY != os.geteuid()
    finally:
        shutil.rmtree(folder)


def test_a_long_socket_path_is_reached_only_on_linux(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 100)
    deep.mkdir()
    folder = os.fsencode(deep)
    with pytest.raises(OSError, match=r"the socket path is \d+ bytes, more than the 103"):
        protocol.address(folder, protocol.SOCKET, "darwin")
    path, fd = protocol.address(folder, protocol.SOCKET, "linux")
    try:
        assert path == b"/proc/self/fd/%d/worker.sock" % fd
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(path)
        assert (deep / "worker.sock").exists()
    finally:
        os.close(fd)
    short = os.fsencode(tempfile.mkdtemp(prefix="fp", dir="/tmp"))
    try:
        assert protocol.address(short, protocol.SOCKET, "darwin") == (short + b"/worker.sock", -1)
    finally:
        shutil.rmtree(short)


# -- the real client and worker, running another system's check ------------------------------


@pytest.fixture
def short() -> Iterator[Path]:
    """A folder whose project's socket path fits a Unix socket address (pytest's do not)."""
    folder = Path(tempfile.mkdtemp(prefix="fp", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _project(base: Path, system: str) -> ClientProject:
    project = ClientProject(base)
    project.env[os.fsdecode(protocol.FORCED)] = system
    return project


@pytest.mark.parametrize("system", OTHERS)
def test_the_worker_answers_warm_with_another_systems_check(short: Path, system: str) -> None:
    project = _project(short, system)
    try:
        want = project.call(project.bash(HARD), FORGE_WORKER="off").stdout
        first = project.call(project.bash(HARD))
        assert first.stdout == want and b'"deny"' in want and first.stderr == ""
        pid = project.wait_worker(slot=project.slot())
        before = project.requests()
        got = project.call(project.bash(HARD))
        assert got.stdout == want and got.stderr == ""
        assert project.requests() == before + 1  # answered by the worker
        assert worker_pids(project.root) == [pid]
        assert refusals(str(project.root))["reasons"] == {
            "no worker for this environment: started one": 1
        }
    finally:
        stop_workers(project.root)


def test_a_system_without_a_peer_check_never_starts_a_worker(short: Path) -> None:
    project = _project(short, "sunos")
    want = project.call(project.bash(HARD), FORGE_WORKER="off").stdout
    for _ in range(2):
        got = project.call(project.bash(HARD))
        assert got.stdout == want and b'"deny"' in want and got.stderr == ""
    assert not project.folder.exists() and worker_pids(project.root) == []


def test_a_deep_folder_elsewhere_than_linux_is_evaluated_in_process(tmp_path: Path) -> None:
    project = _project(tmp_path, "darwin")
    assert len(os.fsencode(project.slot() / "worker.sock")) > protocol.MAX_ADDRESS
    want = project.call(project.bash(HARD), FORGE_WORKER="off").stdout
    for _ in range(2):
        got = project.call(project.bash(HARD))
        assert got.stdout == want and b'"deny"' in want
        assert got.stderr == ""  # a lasting state of this folder: counted, not said each call
    assert worker_pids(project.root) == [] and not project.slot().exists()
    [(reason, count)] = refusals(str(project.root))["reasons"].items()
    assert count == 2 and reason.startswith("the socket path is ")
    status = project.run_cli("worker", "status", check=1).stdout
    assert "the socket path is" in status and "2  the socket path is" in status


def test_an_impostor_is_refused_by_another_systems_check(short: Path) -> None:
    python = _system_python()
    from test_worker_failures import FORGED_ALLOW, STAND_IN, StandIn, _bound

    project = _project(short, "darwin")
    project.slot().mkdir(parents=True, mode=0o700)
    project.folder.chmod(0o700)
    path = project.slot() / "worker.sock"
    sock = _bound(path)
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
    want = project.call(project.bash(HARD), FORGE_WORKER="off").stdout
    assert got.stdout == want and b'"deny"' in got.stdout  # not the forged allow
    assert "the worker socket belongs to another user; evaluating in-process" in got.stderr


@pytest.mark.parametrize(
    ("system", "worker", "check"),
    [
        ("darwin", True, "LOCAL_PEERCRED"),
        ("netbsd", True, "LOCAL_PEEREID"),
        ("sunos", False, None),
        ("", True, "SO_PEERCRED"),  # this system, Linux: said in the JSON only
    ],
)
def test_init_and_doctor_follow_the_peer_check(
    tmp_path: Path, system: str, worker: bool, check: str | None
) -> None:
    project = _project(tmp_path, system) if system else ClientProject(tmp_path)
    record = project.root / "runtime" / "hook-client"
    said = project.run_cli("init").stdout
    assert record.read_text().endswith("/worker/launch.py\n") is worker
    assert ("hooks run the warm-worker client" in said) is worker
    assert ("warm worker: not available on sunos" in said) is (not worker)
    doctor = json.loads(project.run_cli("doctor", "--json").stdout)["worker"]
    assert doctor["available"] is worker and doctor["peer_check"] == check
    assert doctor["system"] == (system or "linux")
    text = project.run_cli("doctor").stdout
    if not system:
        assert "warm worker" not in text
    elif worker:
        assert f"warm worker: available (the worker's user is checked with {check})" in text
        assert f"untested on a real {system} system" in text
    else:
        assert "warm worker: not available on sunos" in text
