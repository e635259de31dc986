"""What the hook client needs of the warm worker's protocol: one owner for each rule of it.

:mod:`forge_policy.worker.client` (run under ``python -I -S``, once per agent tool call) loads
this module and nothing else of the package, so it holds only functions and constants: a class
costs some 0.2-0.7 M instructions to build in a fresh interpreter (the client's own start is
21.6 M), so the protocol's classes (:class:`~forge_policy.worker.protocol.HookRequest`,
:class:`~forge_policy.worker.protocol.HookOptions`) are built on what is here, in
:mod:`~forge_policy.worker.protocol`, which re-exports it for the worker, the hook and the CLI.
It imports interpreter built-ins only (``posix``, ``sys``, ``time``; ``_socket`` and ``pwd``
inside the functions that need them, ``errno`` under ``FORGE_TEST_PEERCRED`` only), so the
client can load it from its own folder without the package or ``site``. What it owns:

- the files of ``<FORGE_ROOT>/runtime/worker/``: one folder per environment fingerprint
  (:func:`fingerprint`, :func:`slot_of`), the log and the refusal counts (:func:`record`) beside
  them; the socket's address (:func:`address`: a deep folder is reached through
  ``/proc/self/fd`` on Linux, refused elsewhere), who may be at the other end
  (:func:`peer_uid`, one reader for every system's peer credentials, and
  :func:`authenticates_peers`, whether this system has one: no worker where it has not;
  :func:`private_folder`) and the limits (:data:`MAX_INPUT`,
  :data:`MAX_REQUEST`, :data:`MAX_ANSWER`, the timeouts);
- the client's half of the framing: a request is ``MAGIC``, an item count and length-prefixed
  items (:func:`encode_request`); an answer is ``MAGIC``, a status byte, an exit code and
  length-prefixed stdout and stderr (:func:`decode_answer`); each side writes its message,
  shuts its side down, and the other reads to the end with :func:`receive`, the one read loop
  (the worker's half, ``decode_request`` and ``encode_answer``, is in
  :mod:`~forge_policy.worker.protocol`);
- what a hook request carries, in order (:func:`hook_items`, :func:`hook_fields`): besides the
  event and the hook's arguments, the variables an answer depends on (:func:`relevant`), the
  client file's identity (:func:`own_identity`) and the client's deadline;
- the project's discovery, as git finds a work tree (:func:`project_of`, :func:`discover`), and
  ``FORGE_ROOT`` resolution (:func:`root_of`, :func:`place`), which
  :meth:`forge_policy.config.env.Config.from_env` uses too: the client and the engine find the
  same project, so the same state, audit log and worker;
- the hook's options: their grammar (:func:`parse_options`, :func:`options_argv`; ``--harness``,
  ``--event``, ``--via-serve``, ``--help``), read here for ``forge-policy hook``, the client and
  the worker, and declared from :data:`OPTIONS` for the CLI's argparse.

>>> encode_request([b"hook", b"x"])[:8]
b'FPW1\\x00\\x00\\x00\\x02'
>>> parse_options(["--harness=codex", "--event", "Stop"])
('codex', 'Stop', False, False)
"""

import sys
import time

if sys.platform == "win32":  # pragma: no cover - hook options only: the worker is POSIX
    import nt as posix
else:
    import posix

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _socket import socket
    from collections.abc import Callable, Iterable, Mapping, Sequence


MAGIC = b"FPW1"
#: ``<FORGE_ROOT>/runtime/<FOLDER>`` holds the workers' files: a folder per environment
#: fingerprint (:func:`slot_of`) with the socket, lock, pid file and start marker of the worker
#: that serves it, and, shared, :data:`LOG` and :data:`REFUSALS`.
FOLDER = b"worker"
SOCKET = b"worker.sock"
STARTING = b"worker.starting"
LOCK = b"worker.lock"
PID = b"worker.pid"
LOG = b"worker.log"
#: One line per hook call the client evaluated in-process although the worker was on
#: (``<unix time> <reason>``); ``forge-policy worker status`` counts them by reason.
REFUSALS = b"refusals.log"
#: The refusal file is started afresh past this size (the counts then cover less time).
REFUSALS_MAX = 256 * 1024
#: Workers per ``FORGE_ROOT`` (``FORGE_WORKER_MAX``): a worker that starts stops the least
#: recently used ones beyond it.
MAX_WORKERS = 4
#: Seconds after which a ``worker.starting`` marker is stale (its client died before the worker
#: came up).
STARTING_STALE = 10.0
CONNECT_TIMEOUT = 0.5
#: Seconds a client waits for the worker's answer (``FORGE_WORKER_TIMEOUT``).
ANSWER_TIMEOUT = 10.0
#: ``FORGE_HOOK_DEADLINE``'s default (forge_policy.config.env.DEFAULT_HOOK_DEADLINE: a test pins
#: it): the whole hook call, worker and in-process fallback included, answers within it.
HOOK_DEADLINE = 10.0
#: The share of the hook's deadline a client gives the worker (``FORGE_WORKER_TIMEOUT`` bounded
#: by it): the rest is the in-process evaluation's, should the worker not answer.
WORKER_SHARE = 0.5
#: Seconds the worker waits for each part of a request.
REQUEST_TIMEOUT = 5.0
MAX_INPUT = 8 * 1024 * 1024  # forge_policy.harness.payload.MAX_INPUT (a test pins it)
#: The largest request a worker reads: an event and what goes with it.
MAX_REQUEST = MAX_INPUT + 1024 * 1024
MAX_ANSWER = 16 * 1024 * 1024
#: How a worker of another version refuses (it exits right after).
CHANGED = b"the package changed"
#: Variables whose value can change a hook's answer, by prefix or name; ``OTEL_``: where its
#: telemetry goes (a worker exports per its own environment, :mod:`forge_policy.telemetry`).
PREFIXES = (b"FORGE_", b"DISABLE_", b"GIT_", b"OTEL_")
NAMES = (b"CLAUDE_PROJECT_DIR", b"XDG_CACHE_HOME", b"HOME", b"PATH")
#: Client-side knobs: they do not change an answer.
CLIENT_ONLY = (
    b"FORGE_WORKER",
    b"FORGE_WORKER_TIMEOUT",
    b"FORGE_WORKER_IDLE_SECONDS",
    b"FORGE_WORKER_MAX",
)
#: A Mersenne prime: :func:`fingerprint` is the request's bytes as a number modulo it.
_MODULUS = (1 << 61) - 1


# -- what a request carries -------------------------------------------------------------------


def relevant(environ: "Mapping[bytes, bytes]") -> list[bytes]:
    """The sorted ``NAME=VALUE`` entries of ``environ`` (bytes) that can change an answer.

    >>> relevant({b"PATH": b"/bin", b"FORGE_ROOT": b"x", b"TERM": b"xterm", b"FORGE_WORKER": b"on"})
    [b'FORGE_ROOT=x', b'PATH=/bin']
    """
    found: list[bytes] = []
    for name, value in environ.items():
        if name in CLIENT_ONLY:
            continue
        if name in NAMES or name.startswith(PREFIXES):
            found.append(name + b"=" + value)
    found.sort()
    return found


def fingerprint(cwd: bytes, entries: "Sequence[bytes]") -> bytes:
    """16 hex digits naming a working directory and :func:`relevant` variables: the folder of
    the worker that serves exactly them (:func:`slot_of`). Computed in C (the bytes as one
    number modulo a 61-bit prime: no hash module is a built-in); two environments that share a
    fingerprint only meet a worker that refuses the other one (it compares them in full).

    >>> fingerprint(b"/p", [b"PATH=/bin"]) == fingerprint(b"/p", [b"PATH=/bin"])
    True
    >>> fingerprint(b"/p", [b"PATH=/bin"]) != fingerprint(b"/p", [b"PATH=/usr/bin"])
    True
    >>> len(fingerprint(b"/p", []))
    16
    """
    data = b"\1" + cwd + b"\0" + b"\0".join(entries)
    number = int.from_bytes(data, "big") % _MODULUS
    number = (number * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF  # spread: both steps are
    return b"%016x" % (number ^ (number >> 29))  # one-to-one on 64 bits


def is_fingerprint(name: bytes | str) -> bool:
    """Whether a folder name under ``runtime/worker`` is a :func:`fingerprint`."""
    text = name.encode() if isinstance(name, str) else name
    return len(text) == 16 and not text.strip(b"0123456789abcdef")


def record(folder: bytes, reason: str) -> None:
    """Count one in-process evaluation the worker could have answered, with its reason
    (:data:`REFUSALS` in ``folder``, the private worker folder). One appended line, written
    only on this slow path; never raises."""
    line = b"%d %s\n" % (int(time.time()), reason.replace("\n", " ").encode("utf-8", "replace"))
    try:
        fd = posix.open(
            folder + b"/" + REFUSALS, posix.O_WRONLY | posix.O_APPEND | posix.O_CREAT, 0o600
        )
    except OSError:
        return
    try:
        if posix.fstat(fd).st_size > REFUSALS_MAX:
            posix.ftruncate(fd, 0)
        posix.write(fd, line)
    except OSError:
        pass
    finally:
        posix.close(fd)


def own_identity(path: bytes) -> bytes:
    """What a reinstall of the package changes: the file's device, inode, size and mtime."""
    st = posix.stat(path)
    return b"%d:%d:%d:%d" % (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


# -- framing ----------------------------------------------------------------------------------


def _u32(number: int) -> bytes:
    return number.to_bytes(4, "big")


def encode_request(items: "Sequence[bytes]") -> bytes:
    """``MAGIC``, the item count, then each item as a 4-byte length and its bytes."""
    parts: list[bytes] = [MAGIC, _u32(len(items))]
    for item in items:
        parts.append(_u32(len(item)))
        parts.append(item)
    return b"".join(parts)


def decode_answer(data: bytes) -> tuple[bytes, bytes, bytes, int]:
    """``(status, stdout, stderr, exit code)``; raises ``ValueError`` unless ``data`` is exactly
    one well-formed answer."""
    if data[:4] != MAGIC or len(data) < 14 or data[4:5] not in (b"A", b"R"):
        raise ValueError("malformed answer")
    code = data[5]
    size = int.from_bytes(data[6:10], "big")
    out = data[10 : 10 + size]
    rest = data[10 + size :]
    if len(out) != size or len(rest) < 4:
        raise ValueError("answer cut short")
    err_size = int.from_bytes(rest[:4], "big")
    err = rest[4:]
    if len(err) != err_size:
        raise ValueError("answer cut short" if len(err) < err_size else "malformed answer")
    return data[4:5], out, err, code


def receive(sock: "socket", limit: int, deadline: float | None = None) -> bytes | None:
    """Everything the peer sends until it shuts its side down, or None once it is more than
    ``limit`` bytes. With a ``deadline`` (:func:`time.monotonic`), reading past it raises
    ``TimeoutError``; without one, the socket's own timeout applies to each read."""
    chunks: list[bytes] = []
    size = 0
    while True:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            sock.settimeout(left)
        chunk = sock.recv(65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return None


#: What a request asks for: a hook's answer, or the status line of Claude Code's ``statusLine``
#: command (the raw input is then Claude Code's status JSON, the arguments empty).
KINDS = (b"hook", b"statusline")


def hook_items(
    identity: bytes,
    deadline: float,
    cwd: bytes,
    args: "Sequence[str]",
    raw: bytes,
    environ: "Sequence[bytes]",
    kind: bytes = b"hook",
) -> list[bytes]:
    """The items of a ``hook`` (or ``statusline``: :data:`KINDS`) request for
    :func:`encode_request`: the kind, then the client's identity (:func:`own_identity`), the
    instant (:func:`time.monotonic`, system-wide) after which it no longer waits, its working
    directory, the hook's arguments, the raw event and, last, the variables an answer depends
    on (:func:`relevant`).

    >>> hook_items(b"id", 5.0, b"/p", ["--harness", "codex"], b"{}", [b"HOME=/h"])
    [b'hook', b'id', b'5.000000', b'/p', b'--harness\\x00codex', b'{}', b'HOME=/h']
    """
    given = "\0".join(args).encode("utf-8", "surrogateescape")
    return [kind, identity, b"%.6f" % deadline, cwd, given, raw, *environ]


def hook_fields(
    items: "Sequence[bytes]",
) -> "tuple[bytes, float, bytes, list[str], bytes, list[bytes], bytes]":
    """``(identity, deadline, cwd, args, raw, environ, kind)`` of the items of a decoded
    ``hook`` or ``statusline`` request (:func:`hook_items`); ``ValueError`` for any other. A
    deadline that is no number is one long past.

    >>> hook_fields(hook_items(b"id", 5.0, b"/p", [], b"{}", [], b"statusline"))
    (b'id', 5.0, b'/p', [], b'{}', [], b'statusline')
    """
    if len(items) < 6 or items[0] not in KINDS:
        raise ValueError("unknown request")
    identity, deadline, cwd, given, raw = items[1:6]
    try:
        when = float(deadline)
    except ValueError:
        when = float("-inf")
    args = given.decode("utf-8", "surrogateescape").split("\0") if given else []
    return identity, when, cwd, args, raw, list(items[6:]), items[0]


# -- where the worker is, and who ---------------------------------------------------------------


def folder_of(root: bytes) -> bytes:
    """``<root>/runtime/worker``: the workers' files."""
    return root + b"/runtime/" + FOLDER


def slot_of(root: bytes, print_: bytes) -> bytes:
    """``<root>/runtime/worker/<fingerprint>``: the files of the worker for one environment."""
    return folder_of(root) + b"/" + print_


#: The longest socket path bound or connected to directly: ``sockaddr_un.sun_path`` holds 104
#: bytes on macOS and the BSDs, 108 on Linux, the terminating NUL included.
MAX_ADDRESS = 103


def address_problem(path: bytes, system: str | None = None) -> str:
    """Why the socket ``path`` cannot be reached on ``system`` (default: :func:`system`), or
    "" when it can. Only Linux reaches a longer path (through ``/proc/self/fd``, :func:`address`);
    elsewhere the worker is off for that folder and the hook evaluates in-process: the socket
    stays in the private folder, never in a shorter shared one (``/tmp``) whose name another user
    could take first.

    >>> address_problem(b"/p/worker.sock", "darwin")
    ''
    >>> address_problem(b"/p" * 60, "darwin")
    'the socket path is 120 bytes, more than the 103 a Unix socket address holds here'
    >>> address_problem(b"/p" * 60, "linux")
    ''
    """
    if len(path) <= MAX_ADDRESS or (system or _system()) == "linux":
        return ""
    return (
        f"the socket path is {len(path)} bytes, more than the {MAX_ADDRESS} a Unix socket "
        "address holds here"
    )


def address(folder: bytes, name: bytes, system: str | None = None) -> tuple[bytes, int]:
    """A path ``connect``/``bind`` accept: Unix socket paths are limited (:data:`MAX_ADDRESS`),
    so on Linux a deep folder is reached through ``/proc/self/fd``. Returns (address, fd or -1):
    the caller closes the fd once connected or bound. Raises ``OSError`` where the path is too
    long for ``system`` (:func:`address_problem`)."""
    path = folder + b"/" + name
    problem = address_problem(path, system)
    if problem:
        raise OSError(problem)
    if len(path) <= MAX_ADDRESS:
        return path, -1
    fd = posix.open(folder, posix.O_RDONLY | getattr(posix, "O_DIRECTORY", 0))
    return b"/proc/self/fd/%d/%s" % (fd, name), fd


# -- who is at the other end of the socket ----------------------------------------------------

#: How each system names the user at the other end of a connected Unix socket, by
#: :func:`system`: the layout of what ``getsockopt`` returns (:data:`LAYOUTS`), and its level
#: and option, each as the ``_socket`` constant's name with, for a module that lacks it, the
#: number from the system's headers (None: the module's only; Linux's differ by architecture).
#: A system not listed has no peer check: no worker there (the hook evaluates in-process).
PEER_CHECKS: "dict[str, tuple[str, tuple[str, int | None], tuple[str, int | None]]]" = {
    "linux": ("ucred", ("SOL_SOCKET", None), ("SO_PEERCRED", None)),
    # <sys/un.h>: SOL_LOCAL 0, LOCAL_PEERCRED 0x001 (macOS, FreeBSD, DragonFly BSD)
    "darwin": ("xucred", ("SOL_LOCAL", 0), ("LOCAL_PEERCRED", 1)),
    "freebsd": ("xucred", ("SOL_LOCAL", 0), ("LOCAL_PEERCRED", 1)),
    "dragonfly": ("xucred", ("SOL_LOCAL", 0), ("LOCAL_PEERCRED", 1)),
    # OpenBSD <sys/socket.h>: SOL_SOCKET 0xffff, SO_PEERCRED 0x1022 (not Linux's layout)
    "openbsd": ("sockpeercred", ("SOL_SOCKET", 0xFFFF), ("SO_PEERCRED", 0x1022)),
    # NetBSD <sys/un.h>: level 0, LOCAL_PEEREID 0x0003 (what its getpeereid(3) reads)
    "netbsd": ("unpcbid", ("SOL_LOCAL", 0), ("LOCAL_PEEREID", 3)),
}
#: Per layout: the bytes asked for, the fewest a whole answer has, the offset of the uid (a
#: 32-bit ``uid_t`` in the machine's byte order) and of a version word that must be 0 (-1: none).
LAYOUTS = {
    # Linux struct ucred {pid_t pid; uid_t uid; gid_t gid;}
    "ucred": (12, 12, 4, -1),
    # OpenBSD struct sockpeercred {uid_t uid; gid_t gid; pid_t pid;}: the uid first
    "sockpeercred": (12, 12, 0, -1),
    # NetBSD struct unpcbid {pid_t unp_pid; uid_t unp_euid; gid_t unp_egid;}
    "unpcbid": (12, 12, 4, -1),
    # <sys/ucred.h> struct xucred {u_int cr_version; uid_t cr_uid; short cr_ngroups;
    # gid_t cr_groups[16]; ...}: 76 bytes on macOS, a pointer-sized union more on FreeBSD and
    # DragonFly; cr_version is XUCRED_VERSION (0)
    "xucred": (128, 76, 4, 0),
}
#: Set (on Linux only) to a key of :data:`PEER_CHECKS`, the client and worker run that system's
#: peer check: its constants and decoding, over Linux's ``SO_PEERCRED`` answer re-encoded in that
#: system's layout (:func:`translated`). For tests: it never names a user the kernel did not.
FORCED = b"FORGE_TEST_PEERCRED"


def _forced() -> bytes:
    if not sys.platform.startswith("linux"):
        return b""
    return posix.environ.get(FORCED, b"").strip()


def _system() -> str:
    forced = _forced()
    if forced:
        return forced.decode("ascii", "replace")
    return sys.platform.rstrip("0123456789")  # freebsd14, openbsd7, netbsd10 → their name


def system() -> str:
    """The system whose peer check and socket paths apply: ``sys.platform`` without its
    version digits (``linux``, ``darwin``, ``freebsd``…), or, on Linux, ``FORGE_TEST_PEERCRED``."""
    return _system()


def _constant(entry: "tuple[str, int | None]", module: object) -> int | None:
    name, number = entry
    found = getattr(module, name, None) if module is not None else None
    return found if isinstance(found, int) else number


def authenticates_peers(system: str | None = None) -> bool:
    """Whether ``system`` (default: this one, :func:`system`) can name the user at the other
    end of a Unix socket: the one owner of "may a worker run here", asked by the client, the
    worker, ``init`` and ``doctor``. Without it the hook evaluates in-process on every call.

    >>> authenticates_peers("darwin"), authenticates_peers("openbsd"), authenticates_peers("sunos")
    (True, True, False)
    """
    name = system or _system()
    check = PEER_CHECKS.get(name)
    if check is None:
        return False
    if _forced():
        return name == "linux" or _linux_check() is not None
    import _socket

    return None not in (_constant(check[1], _socket), _constant(check[2], _socket))


def _linux_check() -> "tuple[int, int] | None":
    import _socket

    level, option = PEER_CHECKS["linux"][1:]
    found = (_constant(level, _socket), _constant(option, _socket))
    return None if None in found else found  # type: ignore[return-value]


def read_peer_uid(
    getsockopt: "Callable[[int, int, int], bytes]", system: str, module: object = None
) -> int:
    """The uid in ``system``'s peer credentials, read with ``getsockopt(level, option,
    size)`` (a connected socket's method): the seam the other systems' checks are tested
    through. ``module`` gives the ``getsockopt`` constants (``_socket``; None: the numbers of
    :data:`PEER_CHECKS`). Raises ``OSError`` for a system without a check or an answer that is
    not one whole, known structure: the peer is then unauthenticated, never trusted.

    >>> xucred = bytes(4) + (501).to_bytes(4, sys.byteorder) + bytes(68)
    >>> read_peer_uid(lambda level, option, size: xucred, "darwin")
    501
    >>> read_peer_uid(lambda level, option, size: b"\\1" + xucred[1:], "darwin")
    Traceback (most recent call last):
    ...
    OSError: darwin peer credentials: xucred version 1, not 0
    """
    check = PEER_CHECKS.get(system)
    if check is None:
        raise OSError(f"no peer credentials on {system}: the worker's peer cannot be named")
    layout, level_entry, option_entry = check
    asked, least, at, version = LAYOUTS[layout]
    level, option = _constant(level_entry, module), _constant(option_entry, module)
    if level is None or option is None:
        raise OSError(f"no {option_entry[0]} in this Python's socket module")
    data = getsockopt(level, option, asked)
    if not least <= len(data) <= asked:
        raise OSError(f"{system} peer credentials: {len(data)} bytes, not a whole {layout}")
    if version >= 0:
        number = int.from_bytes(data[version : version + 4], sys.byteorder)
        if number != 0:
            raise OSError(f"{system} peer credentials: {layout} version {number}, not 0")
    return int.from_bytes(data[at : at + 4], sys.byteorder)


def translated(sock: "socket", system: str) -> "Callable[[int, int, int], bytes]":
    """A ``getsockopt`` for :func:`read_peer_uid` that answers ``system``'s request as that
    system's kernel would, from Linux's ``SO_PEERCRED`` answer for ``sock``: the same pid, uid
    and gid in ``system``'s layout (an ``xucred`` lists the gid as its one group). Any other
    request fails as an unknown option does (``ENOPROTOOPT``). Only the layout is emulated:
    the user is the one Linux's kernel names."""
    layout, level_entry, option_entry = PEER_CHECKS[system]
    wanted = (_constant(level_entry, None), _constant(option_entry, None))

    def getsockopt(level: int, option: int, size: int) -> bytes:
        linux = _linux_check()
        if linux is None or (level, option) != wanted:
            import errno

            raise OSError(errno.ENOPROTOOPT, f"{system}: unknown socket option {level}/{option}")
        ucred = sock.getsockopt(linux[0], linux[1], 12)
        pid, uid, gid = (ucred[k : k + 4] for k in (0, 4, 8))
        if layout == "xucred":
            data = bytes(4) + uid + (1).to_bytes(2, sys.byteorder) + bytes(2) + gid + bytes(60)
        elif layout == "sockpeercred":
            data = uid + gid + pid
        else:  # ucred, unpcbid: pid, uid, gid
            data = pid + uid + gid
        return data[:size]

    return getsockopt


def peer_uid(sock: "socket", system: str | None = None) -> int:
    """The uid of the process at the other end of a connected Unix socket, by ``system``'s
    peer check (default: this system's, :func:`system`): Linux's ``SO_PEERCRED``, macOS's,
    FreeBSD's and DragonFly's ``LOCAL_PEERCRED``, OpenBSD's ``SO_PEERCRED``, NetBSD's
    ``LOCAL_PEEREID``. Raises ``OSError`` where there is none or its answer is malformed."""
    import _socket

    name = system or _system()
    if _forced() and name != "linux":
        return read_peer_uid(translated(sock, name), name)
    return read_peer_uid(sock.getsockopt, name, _socket)


def private_folder(folder: bytes) -> bool:
    """Whether ``folder`` is a directory owned by this user with no group/other access."""
    try:
        st = posix.stat(folder)
    except OSError:
        return False
    return (
        (st.st_mode & 0o170000) == 0o040000
        and st.st_uid == posix.geteuid()
        and not (st.st_mode & 0o077)
    )


# -- FORGE_ROOT -------------------------------------------------------------------------------


def _join(base: bytes, path: bytes) -> bytes:
    """``posixpath.join`` of two parts."""
    if path.startswith(b"/"):
        return path
    return base + path if not base or base.endswith(b"/") else base + b"/" + path


def _normpath(path: bytes) -> bytes:
    parts: list[bytes] = []
    for part in path.split(b"/"):
        if part in (b"", b"."):
            continue
        if part == b"..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    # as posixpath.normpath: POSIX leaves a leading "//" (exactly two) implementation-defined
    lead = b"//" if path.startswith(b"//") and not path.startswith(b"///") else b"/"
    return lead + b"/".join(parts)


def _expanduser(path: bytes, home: bytes | None) -> bytes:
    """``posixpath.expanduser``, with ``home`` for ``$HOME`` (None: unset)."""
    if not path.startswith(b"~"):
        return path
    end = path.find(b"/", 1)
    end = len(path) if end < 0 else end
    import pwd

    try:
        if end == 1:
            if home is None:
                home = pwd.getpwuid(posix.getuid()).pw_dir.encode("utf-8", "surrogateescape")
        else:
            name = path[1:end].decode("utf-8", "surrogateescape")
            home = pwd.getpwnam(name).pw_dir.encode("utf-8", "surrogateescape")
    except KeyError:
        return path  # no such user: the path stays as it is
    home = home.rstrip(b"/")
    return (home + path[end:]) or b"/"


def place(project: bytes, value: bytes, home: bytes | None) -> bytes:
    """A ``FORGE_*`` path as an absolute, normalized one: ``~`` expanded (``home`` is
    ``$HOME``, None when unset), a relative path against the (absolute) ``project`` folder.

    >>> place(b"/p", b"../state", None), place(b"/p", b"~/s", b"/h/"), place(b"/p", b"/x/./y", None)
    (b'/state', b'/h/s', b'/x/y')
    """
    return _normpath(_join(project, _expanduser(value, home)))


#: What marks a repository's top level, where the walk up for the project stops (git's own
#: mark: a folder in a clone, a file in a worktree or a submodule).
REPOSITORY = b".git"
#: The most folders the walk up looks at (a tree deeper than this is not searched further up).
MAX_WALK = 128


def _kind(path: bytes) -> int:
    """The file type bits of ``path`` (symbolic links followed), 0 when it does not exist."""
    try:
        return posix.stat(path).st_mode & 0o170000
    except (OSError, ValueError):
        return 0


def start_of(environ: "Mapping[bytes, bytes]", cwd: bytes) -> bytes:
    """Where the search for the project starts: ``$CLAUDE_PROJECT_DIR`` (against ``cwd``),
    else ``cwd``; absolute and normalized."""
    return _normpath(_join(cwd, environ.get(b"CLAUDE_PROJECT_DIR", b"").strip() or cwd))


def marker_of(value: bytes) -> bytes:
    """The folder name that marks a project for a ``FORGE_ROOT`` value: the value itself when
    it is a path below the project (``.forge``, ``state/forge``), else b"" (an absolute path, a
    ``~`` or a ``..`` names one folder for every project: nothing marks the project then).

    >>> marker_of(b".forge"), marker_of(b"/srv/forge"), marker_of(b"../state"), marker_of(b"~/f")
    (b'.forge', b'', b'', b'')
    """
    if value.startswith((b"/", b"~")) or b".." in value.split(b"/"):
        return b""
    return value


def discover(start: bytes, marker: bytes) -> bytes:
    """The project folder of ``start`` (absolute, normalized), found as git finds a work tree:
    the nearest folder at or above ``start`` holding the folder ``marker`` (the ``FORGE_ROOT``
    name, b"" for none), else the top level of the repository ``start`` is in (the nearest
    folder holding ``.git``: the walk stops there, a ``.forge`` above a repository is not
    its project), else ``start`` itself. Two ``stat`` calls per folder, at most
    :data:`MAX_WALK` folders: this runs on every hook call.

    >>> import os, tempfile
    >>> top = os.fsencode(os.path.realpath(tempfile.mkdtemp()))
    >>> for folder in (b"/repo/.git", b"/repo/src/deep", b"/repo/sub/.forge", b"/plain/a"):
    ...     os.makedirs(top + folder)
    >>> [discover(top + f, b".forge")[len(top) :] for f in (b"/repo/src/deep", b"/repo/sub")]
    [b'/repo', b'/repo/sub']
    >>> discover(top + b"/plain/a", b".forge") == top + b"/plain/a"  # unless /tmp has a .forge
    True
    """
    folder = start
    for _ in range(MAX_WALK):
        if marker and _kind(_join(folder, marker)) == 0o040000:
            return folder
        if _kind(_join(folder, REPOSITORY)):
            return folder
        parent = folder.rpartition(b"/")[0] or b"/"
        if parent == folder:
            break
        folder = parent
    return start


def project_of(environ: "Mapping[bytes, bytes]", cwd: bytes) -> bytes:
    """The project folder: :func:`discover` from :func:`start_of` (``$CLAUDE_PROJECT_DIR``,
    else ``cwd``), with ``FORGE_ROOT``'s name (default ``.forge``) as the mark."""
    value = environ.get(b"FORGE_ROOT", b"").strip() or b".forge"
    return discover(start_of(environ, cwd), marker_of(value))


def root_of(environ: "Mapping[bytes, bytes]", cwd: bytes) -> bytes:
    """``FORGE_ROOT`` resolved: :func:`place` of its value (default ``.forge``) in the project.

    >>> root_of({b"CLAUDE_PROJECT_DIR": b"/p/"}, b"/elsewhere")
    b'/p/.forge'
    >>> root_of({b"FORGE_ROOT": b"../state", b"HOME": b"/h"}, b"/p/sub")
    b'/p/state'
    """
    value = environ.get(b"FORGE_ROOT", b"").strip() or b".forge"
    return place(project_of(environ, cwd), value, environ.get(b"HOME"))


# -- the hook's options -----------------------------------------------------------------------

USAGE = (
    "usage: forge-policy hook [--harness NAME] [--event NAME] [--via-serve]  (event JSON on stdin)"
)
#: ``forge-policy hook``'s options: flag, default (a bool: a switch) and help, as the CLI's
#: argparse declares them.
OPTIONS = (
    (
        "--harness",
        "claude-code",
        "claude-code (default), codex, gemini, cursor, copilot or antigravity",
    ),
    (
        "--event",
        "",
        "the harness's event name, for payloads that do not carry it (Copilot CLI "
        "camelCase entries, Antigravity CLI)",
    ),
    (
        "--via-serve",
        False,
        "ask the running `forge-policy serve` first; evaluate in-process unless it "
        "gives a complete answer signed for this request",
    ),
)


def parse_options(args: "Iterable[str]") -> "tuple[str, str, bool, bool]":
    """``(harness, event, via_serve, help)`` of the hook's arguments ``args`` (``-h``/``--help``
    stops there); ``ValueError`` naming an argument the hook does not take, with :data:`USAGE`.
    Only their form is read: whether the harness and its event are known is
    :meth:`~forge_policy.worker.protocol.HookOptions.check`'s (the client cannot load the
    harness registry).

    >>> parse_options(["--via-serve"])
    ('claude-code', '', True, False)
    >>> parse_options(["--harness"])
    Traceback (most recent call last):
    ...
    ValueError: forge-policy hook: unexpected argument '--harness'
    usage: forge-policy hook [--harness NAME] [--event NAME] [--via-serve]  (event JSON on stdin)
    """
    found = {"--harness": "claude-code", "--event": ""}
    via_serve = False
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        name, eq, value = arg.partition("=")
        if arg in ("-h", "--help"):
            return found["--harness"], found["--event"], via_serve, True
        if name in found and (eq or rest):
            found[name] = value if eq else rest.pop(0)
        elif arg == "--via-serve":
            via_serve = True
        else:
            raise ValueError(f"forge-policy hook: unexpected argument {arg!r}\n{USAGE}")
    return found["--harness"], found["--event"], via_serve, False


def options_argv(harness: str, event: str, via_serve: bool) -> list[str]:
    """The arguments :func:`parse_options` reads back as these options.

    >>> options_argv("codex", "Stop", False)
    ['--harness', 'codex', '--event', 'Stop']
    """
    args = ["--harness", harness]
    args += ["--event", event] if event else []
    return args + (["--via-serve"] if via_serve else [])
