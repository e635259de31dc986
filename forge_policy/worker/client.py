"""The hook client: asks the project's warm worker, else decides itself.

``forge-policy init`` writes ``python -I -S …/forge_policy/worker/launch.py`` into
``.claude/settings.json``, which runs :func:`main` from this module's cached bytecode. It runs
once per agent tool call, so it imports only interpreter built-ins (``sys``, ``posix``,
``time``), ``_socket`` and, from its own folder, :mod:`~forge_policy.worker.wire` (the wire
format, the hook's options, ``FORGE_ROOT``; built-ins only): no ``site``, no ``os``, not the
package. What only a call the worker does not answer needs (step 4) is in
:mod:`~forge_policy.worker.fallback`, imported then: a warm call never unmarshals it. The line:

1. read the raw event from stdin (at most the hook's limit plus one byte);
2. unless ``FORGE_WORKER=off`` (or ``FORGE_STORE=memory``, whose state a hook process never
   keeps, and a worker would): find ``<FORGE_ROOT>/runtime/worker/<fingerprint>/``, the folder of
   the worker for this working directory and these variables
   (:func:`~forge_policy.worker.wire.fingerprint`; it and its parent owned by this user, no
   access for group or others), connect to ``worker.sock`` in it, check with the system's peer
   credentials (:func:`~forge_policy.worker.wire.peer_uid`: ``SO_PEERCRED`` on Linux,
   ``LOCAL_PEERCRED`` on macOS) that the peer runs as this user, send the request
   (:func:`~forge_policy.worker.wire.encode_request`) and read the answer before the
   deadline (``FORGE_WORKER_TIMEOUT``, at most :data:`~forge_policy.worker.wire.WORKER_SHARE`
   of ``FORGE_HOOK_DEADLINE``: the in-process evaluation that may follow keeps the rest, and
   the whole call answers within the hook's deadline, counted from this process's start);
3. a complete answer: write its stdout and stderr bytes, exit with its exit code (the harness
   adapter's: 0 for every harness so far), at once (:func:`run`: no interpreter teardown);
4. anything else (no worker, stale socket, impostor, refusal, short, malformed or late answer,
   :mod:`~forge_policy.worker.fallback`): start a worker when none answers (detached, one
   per root and environment: a ``worker.starting`` marker created with ``O_EXCL`` keeps
   parallel clients from starting several), count the reason
   (:func:`~forge_policy.worker.wire.record`: one appended line, shown by ``forge-policy
   worker status``), then evaluate this event in-process with the full engine
   (:func:`forge_policy.hook.main`). A failure of the worker never becomes an allow.

The worker answers only when it would answer exactly as this process would: the client sends
its working directory, the identity of this file (a reinstall changes it: the worker then exits
and a new one starts) and the variables the answer depends on
(:func:`~forge_policy.worker.wire.relevant`). It also sends
its deadline: a worker that gets to the request after it refuses instead of evaluating, so that
the in-process evaluation that follows is the only one.

The worker is authenticated by where it is and who runs it, not by a MAC as ``serve``'s answers
are (:mod:`forge_policy.serve.auth`): only this user can create the socket in the private
folder, and the kernel names the user of the process that listens on it
(:func:`~forge_policy.worker.wire.peer_uid`; on a system where it cannot,
:func:`~forge_policy.worker.wire.authenticates_peers`, no worker is asked or started).
Anything that could still pass those checks runs as this user, so it could read any shared key
too (and is outside the threat model: forge-policy is no sandbox against code running as its own
user). A MAC would add no protection and would cost the warm path what it exists to save:
``hmac`` loads OpenSSL (``_hashlib``), ~7 ms, some 40 % of the bare ``python -I -S`` start the
warm call is measured against. Nor are they built-ins: ``_hashlib`` is a shared library
(``lib-dynload``), and so is ``_sha256`` in some 3.11 builds (pyenv's; Debian's builds it in).
What these checks cannot catch, a worker that breaks, is caught by the answer's form: anything
but one complete, well-formed answer before the deadline is evaluated in-process (step 4).

``statusline`` as the first argument makes it Claude Code's ``statusLine`` command instead
(:func:`statusline`: the worker's line, else the line computed here; read-only, always exit 0).
``--worker ROOT`` runs the worker itself (:mod:`forge_policy.worker.server`). ``--harness NAME``
and ``--event NAME`` (``forge-policy hook``'s options, written by ``init`` for other coding-agent
CLIs) go to the worker with the request; any other argument goes to the in-process hook
(``--help``, ``--via-serve``, and arguments the hook does not take).
"""

import _socket
import posix
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

    from forge_policy.worker import fallback
if TYPE_CHECKING or (__spec__ is not None and __spec__.parent):
    from forge_policy.worker import wire
else:  # run by file (launch.py, ``-I -S client.py --worker``): wire.py from this folder
    sys.path.insert(0, __file__.rpartition("/")[0] or ".")
    try:
        import wire  # type: ignore[no-redef]
    finally:
        del sys.path[0]  # nothing else is imported from this folder by name


def _load_fallback() -> None:
    """Import :mod:`~forge_policy.worker.fallback` (the slow paths) as this module's
    ``fallback``, the way this module found ``wire``: only a call that leaves the warm path
    loads it."""
    global fallback
    if TYPE_CHECKING or (__spec__ is not None and __spec__.parent):
        from forge_policy.worker import fallback
    else:
        sys.path.insert(0, __file__.rpartition("/")[0] or ".")
        try:
            import fallback  # type: ignore[no-redef]
        finally:
            del sys.path[0]


class Unavailable(Exception):
    """The worker gave no usable answer; ``start`` says whether to start one, ``note`` whether
    the hook says why on stderr (not for a lasting state of this folder: it is counted only)."""

    def __init__(self, reason: str, start: bool = False, note: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.start = start
        self.note = note


def exchange(folder: bytes, request: bytes, timeout: float) -> tuple[bytes, bytes, bytes, int]:
    """Send ``request`` to the worker in ``folder`` (one environment's, inside the private
    worker folder: :func:`~forge_policy.worker.wire.slot_of`); return its decoded answer or
    raise :class:`Unavailable`. Checks both folders and the peer before sending anything."""
    problem = wire.address_problem(folder + b"/" + wire.SOCKET)
    if problem:  # no worker could listen there either: none is started
        raise Unavailable(problem, note=False)
    for each in (folder.rpartition(b"/")[0], folder):
        if not wire.private_folder(each):
            try:
                posix.stat(each)
            except OSError:
                what = "no worker folder" if each != folder else "no worker for this environment"
                raise Unavailable(what, start=True) from None
            raise Unavailable("worker folder is not private to this user")
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        _connect(sock, folder)
        deadline = time.monotonic() + timeout
        try:
            sock.settimeout(timeout)
            sock.sendall(request)
            sock.shutdown(_socket.SHUT_WR)
            data = wire.receive(sock, wire.MAX_ANSWER, deadline)
        except TimeoutError:
            raise Unavailable(f"no answer within {timeout:g} s") from None
        except OSError as exc:
            raise Unavailable(f"connection lost ({exc.strerror or exc})") from None
    finally:
        sock.close()
    if data is None:
        raise Unavailable("answer too large")
    try:
        return wire.decode_answer(data)
    except ValueError as exc:
        raise Unavailable(str(exc)) from None


def _connect(sock: _socket.socket, folder: bytes) -> None:
    """Connect to the worker's socket in ``folder`` and check that it runs as this user."""
    address, fd = wire.address(folder, wire.SOCKET)
    sock.settimeout(wire.CONNECT_TIMEOUT)
    try:
        sock.connect(address)
    except (FileNotFoundError, ConnectionRefusedError) as exc:
        raise Unavailable(f"no worker ({exc.strerror})", start=True) from None
    except OSError as exc:
        raise Unavailable(f"cannot connect ({exc.strerror or exc})") from None
    finally:
        if fd >= 0:
            posix.close(fd)
    try:
        uid = wire.peer_uid(sock)
    except OSError as exc:  # never trust a peer the kernel did not name
        raise Unavailable(f"cannot authenticate the worker ({exc.strerror or exc})") from None
    if uid != posix.geteuid():
        raise Unavailable("the worker socket belongs to another user")


def _listening(folder: bytes) -> bool:
    """Whether a worker of this user accepts connections on ``folder``'s socket now."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        _connect(sock, folder)
    except (Unavailable, OSError):
        return False
    finally:
        sock.close()
    return True


#: When this process read its event (:func:`time.monotonic`): the hook's deadline counts from it.
STARTED = [time.monotonic()]


def in_process(here: bytes, raw: bytes | None, args: list[str], note: str = "") -> int:
    """The full hook in this process (:func:`forge_policy.worker.fallback.in_process`)."""
    _load_fallback()
    return fallback.in_process(here, raw, args, note, STARTED[0])


def read_stdin() -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size <= wire.MAX_INPUT:
        # 64 KiB for the event (a few hundred bytes) and for the read that finds the end: a
        # 1 MiB buffer is mmap-ed and unmapped (two system calls), so only a large event gets one
        step = 1 << 20 if len(chunks) > 1 else 1 << 16
        chunk = posix.read(0, min(step, wire.MAX_INPUT + 1 - size))
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
    if args[:1] == ["statusline"]:
        return statusline(here)
    if args[:1] == ["--worker"]:
        _load_fallback()
        return fallback.serve(here, args[1:])
    try:
        harness, event, via_serve, help_ = wire.parse_options(args)
    except ValueError:
        return in_process(here, None, args)  # the hook reports them
    if help_ or via_serve:  # the worker neither prints help nor asks `forge-policy serve`
        return in_process(here, None, args)
    environ = posix.environ
    try:
        raw = read_stdin()
    except OSError:
        return in_process(here, None, args)
    STARTED[0] = time.monotonic()
    if environ.get(b"FORGE_WORKER", b"").strip() not in (b"", b"on"):
        return in_process(here, raw, args)  # off (or unknown: the hook reports it)
    if not wire.authenticates_peers():  # the worker's peer could not be named
        return in_process(here, raw, args)
    if environ.get(b"FORGE_STORE", b"").strip() == b"memory":
        return in_process(here, raw, args)  # a hook process starts empty; a worker would not
    deadline = seconds(environ, b"FORGE_HOOK_DEADLINE", wire.HOOK_DEADLINE)
    if deadline < 0 or min(seconds(environ, name, 1.0) for name in wire.CLIENT_ONLY[1:]) < 0:
        return in_process(here, raw, args)  # the hook names the unusable variable
    return ask(here, raw, args, wire.options_argv(harness, event, via_serve))


#: Seconds a status line waits for the worker before it computes the line itself.
STATUSLINE_TIMEOUT = 1.0


def statusline(here: bytes) -> int:
    """Claude Code's ``statusLine`` command (``… statusline``): the worker's line for the status
    JSON on stdin, else the line computed here (:mod:`forge_policy.ops.statusline`). Read-only:
    it starts no worker and records no refusal (both write files), and it always exits 0 with
    one line, :data:`~forge_policy.worker.fallback.UNKNOWN` at worst: a status line decides
    nothing."""
    environ = posix.environ
    try:
        raw = b"" if posix.isatty(0) else read_stdin()
    except OSError:
        raw = b""
    color = not environ.get(b"NO_COLOR", b"") and environ.get(b"TERM", b"") != b"dumb"
    if (
        environ.get(b"FORGE_WORKER", b"").strip() in (b"", b"on")
        and environ.get(b"FORGE_STORE", b"").strip() != b"memory"
        and wire.authenticates_peers()
    ):
        try:
            cwd = posix.getcwdb()
            relevant = wire.relevant(environ)
            slot = wire.slot_of(wire.root_of(environ, cwd), wire.fingerprint(cwd, relevant))
            flags = [] if color else ["--no-color"]
            deadline = time.monotonic() + STATUSLINE_TIMEOUT
            identity = wire.own_identity(here)
            items = wire.hook_items(identity, deadline, cwd, flags, raw, relevant, b"statusline")
            status, out, _, _ = exchange(slot, wire.encode_request(items), STATUSLINE_TIMEOUT)
            if status == b"A" and out:
                _write_all(1, out)
                ANSWERED[0] = True  # nothing but built-ins ran: exit at once (:func:`run`)
                return 0
        except Exception:  # any failure: the line is computed here
            pass
    _load_fallback()
    out = fallback.status_line(here, raw)
    try:  # noqa: SIM105 - contextlib is not a built-in module
        _write_all(1, out)
    except OSError:
        pass
    return 0


def ask(here: bytes, raw: bytes, args: list[str], options: list[str]) -> int:
    """Ask the worker (starting one when none answers) with the hook's ``options``
    (:func:`~forge_policy.worker.wire.options_argv`); evaluate in-process on any failure."""
    environ = posix.environ
    root = slot = b""
    try:
        cwd = posix.getcwdb()
        root = wire.root_of(environ, cwd)
        relevant = wire.relevant(environ)
        slot = wire.slot_of(root, wire.fingerprint(cwd, relevant))
        timeout = min(
            seconds(environ, b"FORGE_WORKER_TIMEOUT", wire.ANSWER_TIMEOUT),
            seconds(environ, b"FORGE_HOOK_DEADLINE", wire.HOOK_DEADLINE) * wire.WORKER_SHARE,
        )
        items = wire.hook_items(
            wire.own_identity(here),
            # the worker starts no evaluation past this instant (CLOCK_MONOTONIC is system-wide)
            time.monotonic() + timeout,
            cwd,
            options,
            raw,
            relevant,
        )
        status, out, err, code = exchange(slot, wire.encode_request(items), timeout)
    except Unavailable as exc:  # started, counted, then evaluated in-process
        _load_fallback()
        why = (exc.reason, exc.start, exc.note)
        return fallback.unavailable(here, raw, args, (root, slot), why, _listening, STARTED[0])
    except OSError as exc:
        return in_process(here, raw, args, f"{exc.strerror or exc}")
    except Exception as exc:  # never a traceback, never an allow: the engine decides
        return in_process(here, raw, args, f"internal error: {exc!r}")
    if status != b"A":  # counted, then evaluated in-process
        _load_fallback()
        return fallback.refused(here, raw, args, (root, slot), out, _listening, STARTED[0])
    try:
        _write_all(2, err)
        _write_all(1, out)
    except OSError:
        return 1
    ANSWERED[0] = True
    return code


#: Set once the worker's answer is written: all that is left is to exit (:func:`run`).
ANSWERED = [False]


def run() -> "NoReturn":
    """Run :func:`main` as the hook command and exit with its code (``launch.py``).

    Once the worker's answer (or status line) is written the process ends with ``posix._exit``,
    skipping the interpreter's teardown (freeing every module and object: ~1 ms, a sixth of the
    ``python -I -S`` start the warm call is measured against) that nobody needs on that path:
    the answer went out with ``posix.write`` (nothing is buffered), no thread was started, no
    ``atexit`` handler registered. Every other path (the in-process engine, which may flush
    files or export telemetry at exit) ends with ``sys.exit`` as usual.

    ``launch.py``, the file the launcher runs, is compiled from source on every call (a script
    has no cached bytecode), so it holds only what must run before this module loads: the path
    to this folder, and the cyclic collector off from the start, as ``forge-policy hook`` has
    it: a process that answers one call and ends gains nothing from its passes over what the
    imports allocate. (The worker starts as ``client.py --worker`` and keeps its collector.)"""
    code = main()
    if ANSWERED[0]:
        posix._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
