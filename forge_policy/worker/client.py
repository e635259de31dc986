"""The hook client: asks the project's warm worker, else decides itself.

``forge-policy init`` writes ``python -I -S …/forge_policy/worker/launch.py`` into
``.claude/settings.json``, which runs :func:`main` from this module's cached bytecode. It runs
once per agent tool call, so it imports only interpreter built-ins (``sys``, ``posix``,
``time``) and ``_socket``: no ``site``, no ``os``, not the package. The line:

1. read the raw event from stdin (at most the hook's limit plus one byte);
2. unless ``FORGE_WORKER=off`` (or ``FORGE_STORE=memory``, whose state a hook process never
   keeps, and a worker would): find ``<FORGE_ROOT>/runtime/worker/`` (owned by this user, no
   access for group or others), connect to ``worker.sock`` in it, check with ``SO_PEERCRED`` that
   the peer runs as this user, send the request (:func:`encode_request`) and read the answer
   before the deadline;
3. a complete answer: write its stdout and stderr bytes, exit with its exit code (the harness
   adapter's: 0 for every harness so far);
4. anything else (no worker, stale socket, impostor, refusal, short, malformed or late answer):
   start a worker when none answers (detached, one per root: a ``worker.starting`` marker
   created with ``O_EXCL`` keeps parallel clients from starting several), then evaluate this
   event in-process with the full engine (:func:`forge_policy.hook.main`). A failure of the
   worker never becomes an allow.

The worker answers only when it would answer exactly as this process would: the client sends
its working directory, the identity of this file (a reinstall changes it: the worker then exits
and a new one starts) and the variables the answer depends on (:func:`relevant`). It also sends
its deadline: a worker that gets to the request after it refuses instead of evaluating, so that
the in-process evaluation that follows is the only one.

The worker is authenticated by where it is and who runs it, not by a MAC as ``serve``'s
answers are (:mod:`forge_policy.serve.auth`): only this user can create the socket in the
private folder, and ``SO_PEERCRED`` names the process that listens on it. Anything that could
still pass those checks runs as this user, so it could read any shared key too (and is outside
the threat model: forge-policy is no sandbox against code running as its own user). A MAC would
add no protection and would cost the warm path what it exists to save: ``hmac`` loads OpenSSL
(``_hashlib``), ~7 ms, some 40 % of the bare ``python -I -S`` start the warm call is measured
against. Nor are they built-ins: ``_hashlib`` is a shared library (``lib-dynload``), and so
is ``_sha256`` in some 3.11 builds (pyenv's; Debian's builds it in). What these checks cannot
catch, a worker that breaks, is caught by the answer's form: anything but one complete,
well-formed answer before the deadline is evaluated in-process (step 4).

``--worker ROOT`` runs the worker itself (:mod:`forge_policy.worker.server`). ``--harness NAME``
and ``--event NAME`` (``forge-policy hook``'s options, written by ``init`` for other coding-agent
CLIs) go to the worker with the request; any other argument goes to the in-process hook
(``--help``, ``--via-serve``).

>>> encode_request([b"hook", b"x"])[:8]
b'FPW1\\x00\\x00\\x00\\x02'
>>> decode_answer(encode_answer(b"A", b"out\\n", b"", 2))
(b'A', b'out\\n', b'', 2)
"""

import _socket
import posix
import sys
import time

MAGIC = b"FPW1"
FOLDER = b"worker"
SOCKET = b"worker.sock"
STARTING = b"worker.starting"
#: Seconds after which a ``worker.starting`` marker is stale (its client died before the worker
#: came up).
STARTING_STALE = 10.0
CONNECT_TIMEOUT = 0.5
#: Seconds a client waits for the worker's answer (``FORGE_WORKER_TIMEOUT``).
ANSWER_TIMEOUT = 10.0
MAX_INPUT = 8 * 1024 * 1024  # forge_policy.harness.payload.MAX_INPUT (a test pins it)
MAX_ANSWER = 16 * 1024 * 1024
#: How a worker of another version refuses (it exits right after).
CHANGED = b"the package changed"
#: Variables whose value can change a hook's answer, by prefix or name.
PREFIXES = (b"FORGE_", b"DISABLE_", b"GIT_")
NAMES = (b"CLAUDE_PROJECT_DIR", b"XDG_CACHE_HOME", b"HOME", b"PATH")
#: Client-side knobs: they do not change an answer.
CLIENT_ONLY = (b"FORGE_WORKER", b"FORGE_WORKER_TIMEOUT", b"FORGE_WORKER_IDLE_SECONDS")


def relevant(environ: dict[bytes, bytes]) -> list[bytes]:
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


def _u32(number: int) -> bytes:
    return number.to_bytes(4, "big")


def encode_request(items: list[bytes]) -> bytes:
    """``MAGIC``, the item count, then each item as a 4-byte length and its bytes."""
    parts: list[bytes] = [MAGIC, _u32(len(items))]
    for item in items:
        parts.append(_u32(len(item)))
        parts.append(item)
    return b"".join(parts)


def decode_request(data: bytes) -> list[bytes]:
    """The items of :func:`encode_request`; raises ``ValueError`` for anything else."""
    if data[:4] != MAGIC or len(data) < 8:
        raise ValueError("not a worker request")
    count = int.from_bytes(data[4:8], "big")
    items: list[bytes] = []
    position = 8
    for _ in range(count):
        if position + 4 > len(data):
            raise ValueError("request cut short")
        size = int.from_bytes(data[position : position + 4], "big")
        position += 4
        if position + size > len(data):
            raise ValueError("request cut short")
        items.append(data[position : position + size])
        position += size
    if position != len(data):
        raise ValueError("trailing bytes after the request")
    return items


def encode_answer(status: bytes, out: bytes, err: bytes, code: int = 0) -> bytes:
    """``MAGIC``, a status byte (``A`` answer, ``R`` refused), the exit code (one byte), stdout
    and stderr with lengths."""
    return b"".join((MAGIC, status, bytes((code,)), _u32(len(out)), out, _u32(len(err)), err))


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


def root_of(environ: dict[bytes, bytes], cwd: bytes) -> bytes:
    """``FORGE_ROOT`` resolved as :meth:`forge_policy.config.env.Config.from_env` does.

    >>> root_of({b"CLAUDE_PROJECT_DIR": b"/p/"}, b"/elsewhere")
    b'/p/.forge'
    >>> root_of({b"FORGE_ROOT": b"../state", b"HOME": b"/h"}, b"/p/sub")
    b'/p/state'
    """
    project = environ.get(b"CLAUDE_PROJECT_DIR", b"").strip() or cwd
    value = environ.get(b"FORGE_ROOT", b"").strip() or b".forge"
    if value == b"~" or value.startswith(b"~/"):
        value = environ.get(b"HOME", b"/") + value[1:]
    return _normpath(_join(_normpath(_join(cwd, project)), value))


def own_identity(path: bytes) -> bytes:
    """What a reinstall of the package changes: this file's device, inode, size and mtime."""
    st = posix.stat(path)
    return b"%d:%d:%d:%d" % (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _address(folder: bytes, name: bytes) -> tuple[bytes, int]:
    """A path ``connect``/``bind`` accept: Unix socket paths are limited to ~107 bytes, so a
    deep folder is reached through ``/proc/self/fd`` (Linux). Returns (address, fd or -1)."""
    path = folder + b"/" + name
    if len(path) < 100:
        return path, -1
    fd = posix.open(folder, posix.O_RDONLY | getattr(posix, "O_DIRECTORY", 0))
    return b"/proc/self/fd/%d/%s" % (fd, name), fd


def peer_uid(sock: _socket.socket) -> int:
    """The uid of the process at the other end of a connected Unix socket (``SO_PEERCRED``)."""
    creds = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    return int.from_bytes(creds[4:8], sys.byteorder)


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


class Unavailable(Exception):
    """The worker gave no usable answer; ``start`` says whether to start one."""

    def __init__(self, reason: str, start: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.start = start


def exchange(folder: bytes, request: bytes, timeout: float) -> tuple[bytes, bytes, bytes, int]:
    """Send ``request`` to the worker in ``folder``; return its decoded answer or raise
    :class:`Unavailable`. Checks the folder and the peer before sending anything."""
    if not private_folder(folder):
        try:
            posix.stat(folder)
        except OSError:
            raise Unavailable("no worker folder", start=True) from None
        raise Unavailable("worker folder is not private to this user")
    address, fd = _address(folder, SOCKET)
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        try:
            sock.connect(address)
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            raise Unavailable(f"no worker ({exc.strerror})", start=True) from None
        except OSError as exc:
            raise Unavailable(f"cannot connect ({exc.strerror or exc})") from None
        finally:
            if fd >= 0:
                posix.close(fd)
        if peer_uid(sock) != posix.geteuid():
            raise Unavailable("the worker socket belongs to another user")
        deadline = time.monotonic() + timeout
        chunks: list[bytes] = []
        size = 0
        try:
            sock.settimeout(timeout)
            sock.sendall(request)
            sock.shutdown(_socket.SHUT_WR)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                sock.settimeout(left)
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_ANSWER:
                    raise Unavailable("answer too large")
        except TimeoutError:
            raise Unavailable(f"no answer within {timeout:g} s") from None
        except OSError as exc:
            raise Unavailable(f"connection lost ({exc.strerror or exc})") from None
    finally:
        sock.close()
    try:
        return decode_answer(b"".join(chunks))
    except ValueError as exc:
        raise Unavailable(str(exc)) from None


def _mkdir(path: bytes, mode: int) -> None:
    try:  # noqa: SIM105 - contextlib is not a built-in module
        posix.mkdir(path, mode)
    except FileExistsError:
        pass


def start_worker(root: bytes, here: bytes) -> bool:
    """Start a detached worker for ``root`` unless another client is starting one; never raises
    (a worker that does not start only means this event is evaluated in-process)."""
    try:
        for path, mode in ((root, 0o777), (root + b"/runtime", 0o777)):
            _mkdir(path, mode)
        folder = root + b"/runtime/" + FOLDER
        _mkdir(folder, 0o700)
        if not private_folder(folder):
            return False
        marker = folder + b"/" + STARTING
        for _ in range(2):
            try:
                fd = posix.open(marker, posix.O_WRONLY | posix.O_CREAT | posix.O_EXCL, 0o600)
            except FileExistsError:
                if time.time() - posix.stat(marker).st_mtime < STARTING_STALE:
                    return False  # another client is starting it
                posix.unlink(marker)  # its client died before the worker came up
                continue
            posix.close(fd)
            break
        else:
            return False
        _spawn(root, here, folder)
        return True
    except OSError:
        return False


def _spawn(root: bytes, here: bytes, folder: bytes) -> None:
    """Double fork: the worker is reparented to init and never holds the hook's pipes."""
    pid = posix.fork()
    if pid:
        posix.waitpid(pid, 0)
        return
    try:
        posix.setsid()
        if posix.fork() == 0:
            null = posix.open(b"/dev/null", posix.O_RDWR)
            log = posix.open(
                folder + b"/worker.log", posix.O_WRONLY | posix.O_CREAT | posix.O_APPEND, 0o600
            )
            posix.dup2(null, 0)
            posix.dup2(null, 1)
            posix.dup2(log, 2)
            posix.closerange(3, 1 << 16)  # no pipe of the harness may outlive this hook
            executable = sys.executable.encode()
            posix.execv(executable, [executable, b"-I", b"-S", here, b"--worker", root])
    finally:
        posix._exit(0)


def enable_packages(here: bytes) -> None:
    """Make the package and its dependencies importable after ``-S``: the site folders of this
    interpreter (and their ``.pth`` files), then the tree this file belongs to, first."""
    import site

    site.main()
    tree = here.decode("utf-8", "surrogateescape").rsplit("/", 3)[0]
    if tree not in sys.path:
        sys.path.insert(0, tree)


def in_process(here: bytes, raw: bytes | None, args: list[str], note: str = "") -> int:
    """The full hook in this process: what ``forge-policy hook`` would answer.

    An engine that does not even import (a broken install) exits 2, the code Claude Code (and
    Codex, Gemini CLI and Cursor) treat as a blocking error, unless ``FORGE_ON_ERROR=allow``;
    for the harnesses that do not (:data:`BROKEN_ENGINE`) it prints their refusal too.
    """
    try:
        enable_packages(here)
        import io

        from forge_policy.hook import main
    except Exception as exc:
        allow = posix.environ.get(b"FORGE_ON_ERROR", b"").strip() == b"allow"
        what = "letting the event through" if allow else "refusing the event"
        sys.stderr.write(f"forge-policy: cannot load the engine ({exc!r}); {what}\n")
        if not allow:
            refusal = _broken_engine_refusal(args)
            if refusal:
                sys.stdout.write(refusal + "\n")
                sys.stdout.flush()
        return 0 if allow else 2

    if note:
        sys.stderr.write(f"forge-policy: worker: {note}; evaluating in-process\n")
        sys.stderr.flush()
    stdin = sys.stdin if raw is None else io.BytesIO(raw)
    return main(stdin, sys.stdout, sys.stderr, None, args)


#: What a harness that does not block on exit 2 reads as a refusal, per harness and the events
#: it is printed at ("" = the event was not named), for a hook whose engine does not import.
BROKEN_ENGINE = {
    "copilot": (
        '{"permissionDecision":"deny","permissionDecisionReason":'
        '"forge-policy cannot load its engine, so this call is refused"}',
        ("preToolUse", "PreToolUse"),
    ),
    "antigravity": (
        '{"decision":"deny","reason":'
        '"forge-policy cannot load its engine, so this call is refused"}',
        ("PreToolUse", ""),
    ),
}


def hook_options(args: list[str]) -> list[str] | None:
    """``args`` when they are only ``--harness NAME`` / ``--event NAME`` (the worker can answer
    them), else None.

    >>> hook_options(["--harness", "codex"]), hook_options(["--help"])
    (['--harness', 'codex'], None)
    """
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg in ("--harness", "--event") and rest:
            rest.pop(0)
        elif not arg.startswith(("--harness=", "--event=")):
            return None
    return list(args)


def _option(args: list[str], name: str) -> str:
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return ""


def _broken_engine_refusal(args: list[str]) -> str:
    entry = BROKEN_ENGINE.get(_option(args, "--harness"))
    if entry is None or _option(args, "--event") not in entry[1]:
        return ""
    return entry[0]


def read_stdin() -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size <= MAX_INPUT:
        chunk = posix.read(0, min(1 << 20, MAX_INPUT + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[posix.write(fd, view) :]


def seconds(environ: dict[bytes, bytes], name: bytes, default: float) -> float:
    """A positive number of seconds from ``environ``, ``default`` when unset, -1 when unusable
    (the in-process hook then reports the variable, as it does for every ``FORGE_*``).

    >>> seconds({b"T": b"2.5"}, b"T", 10.0), seconds({}, b"T", 10.0), seconds({b"T": b"x"}, b"T", 1)
    (2.5, 10.0, -1)
    """
    text = environ.get(name, b"").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        return -1
    return value if 0 < value < float("inf") else -1


def main(argv: list[str] | None = None) -> int:
    """Run the client once; return the process exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    here = __file__.encode("utf-8", "surrogateescape")
    if not here.startswith(b"/"):
        here = posix.getcwdb() + b"/" + here
    if args[:1] == ["--worker"]:
        enable_packages(here)
        import runpy  # ``python -m forge_policy.worker.server``, from this file's tree

        sys.argv = [sys.argv[0], *args[1:]]
        runpy.run_module("forge_policy.worker.server", run_name="__main__", alter_sys=True)
        return 0  # not reached: the server exits
    options = hook_options(args)
    if options is None:
        return in_process(here, None, args)
    environ = posix.environ
    try:
        raw = read_stdin()
    except OSError:
        return in_process(here, None, options)
    if environ.get(b"FORGE_WORKER", b"").strip() not in (b"", b"on"):
        return in_process(here, raw, options)  # off (or unknown: the hook reports it)
    if not hasattr(_socket, "SO_PEERCRED"):  # the peer cannot be authenticated (not Linux)
        return in_process(here, raw, options)
    if environ.get(b"FORGE_STORE", b"").strip() == b"memory":
        return in_process(here, raw, options)  # a hook process starts empty; a worker would not
    if min(seconds(environ, name, 1.0) for name in CLIENT_ONLY[1:]) < 0:
        return in_process(here, raw, options)  # the hook names the unusable variable
    root = b""
    try:
        cwd = posix.getcwdb()
        root = root_of(environ, cwd)
        folder = root + b"/runtime/" + FOLDER
        timeout = seconds(environ, b"FORGE_WORKER_TIMEOUT", ANSWER_TIMEOUT)
        # the worker starts no evaluation past this instant (CLOCK_MONOTONIC is system-wide)
        deadline = b"%.6f" % (time.monotonic() + timeout)
        identity = own_identity(here)
        given = "\0".join(options).encode("utf-8", "surrogateescape")
        items = [b"hook", identity, deadline, cwd, given, raw, *relevant(environ)]
        status, out, err, code = exchange(folder, encode_request(items), timeout)
    except Unavailable as exc:
        if exc.start:
            start_worker(root, here)
            return in_process(here, raw, options)
        return in_process(here, raw, options, exc.reason)
    except OSError as exc:
        return in_process(here, raw, options, f"{exc.strerror or exc}")
    except Exception as exc:  # never a traceback, never an allow: the engine decides
        return in_process(here, raw, options, f"internal error: {exc!r}")
    if status != b"A":
        if out.startswith(CHANGED):  # that worker is exiting: start one of this version
            start_worker(root, here)
        reason = out.decode("utf-8", "replace")
        return in_process(here, raw, options, f"refused: {reason}")
    try:
        _write_all(2, err)
        _write_all(1, out)
    except OSError:
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
