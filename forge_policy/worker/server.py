"""The warm workers: one process per ``FORGE_ROOT`` and environment answering hook clients over a
Unix socket.

Started detached by :mod:`forge_policy.worker.client` when no worker answers (``python -I -S
client.py --worker ROOT`` runs this module as ``__main__``, from the client's own tree), with
the client's environment and working directory. A worker answers only clients whose working
directory and answer-relevant variables are exactly its own, so each distinct set gets its own
worker: Claude Code's calls (``CLAUDE_PROJECT_DIR`` set), Codex's or Cursor's (another
environment), a shell with another ``PATH``. Their files live in ``<FORGE_ROOT>/runtime/worker/``
(mode 0700, owned by this user; a folder that is not is refused), one folder per environment
named by its :func:`~forge_policy.worker.protocol.fingerprint`::

    <fingerprint>/worker.lock      the file lock (the project's one) held for the worker's
                                   whole life: one worker per environment
    <fingerprint>/worker.sock      the socket (mode 0600); a stale one (no lock holder) is
                                   replaced
    <fingerprint>/worker.pid       the pid, for ``forge-policy worker status|stop``
    <fingerprint>/worker.starting  created by the client that starts a worker, removed once it
                                   listens
    worker.log                     the workers' stderr: start, stop and why
    refusals.log                   the calls clients evaluated in-process, and why

At most ``FORGE_WORKER_MAX`` (:data:`~forge_policy.worker.protocol.MAX_WORKERS`) workers run per
root: one that starts asks the others how long they have been idle and stops the least recently
used beyond the bound (:func:`make_room`), and removes the folders of workers that are gone.

Why a worker per environment, not the environment sent with each request and applied by one
worker: what an answer depends on is read from ``os.environ`` in many places (``PATH`` when a
command is resolved, ``HOME`` and ``GIT_*`` by git and the facts, ``FORGE_*`` by the
configuration), and ``os.environ`` is one per process while requests run on threads: one
request's ``PATH`` would leak into another's evaluation, or the requests would have to be
serialised and every cache keyed by the environment. A process per environment keeps each
evaluation exactly the in-process one, at the price of one more interpreter per distinct
environment (bounded).

Every connection's peer must run as this user (:func:`~forge_policy.worker.protocol.peer_uid`:
``SO_PEERCRED`` on Linux, ``LOCAL_PEERCRED`` on macOS…), else it is closed unanswered;
the client checks the same of the worker. There is no MAC on this protocol (unlike ``serve``'s,
:mod:`forge_policy.serve.auth`): a peer that passes both checks runs as this user and could read
any key (:mod:`forge_policy.worker.client` says why).
A hook request is answered only when the client's identity (the client file's stat identity:
a reinstall changes it), working directory and answer-relevant variables
(:func:`~forge_policy.worker.protocol.relevant`) equal the worker's own; otherwise it is refused
and the client evaluates in-process. A changed identity also stops the worker, so the next
client starts one of the new version. Requests are served by one thread each, the thread that
accepted the connection (the free request threads wait in ``accept``; one that answered waits
again: :data:`SPARE_THREADS`), through the handler ``serve`` uses
(:class:`~forge_policy.serve.warm.Warm`). What a decision still writes once it is final and
audited (the session state, the ``seen`` record) is written after the answer is sent, the
session's lock held until then (:mod:`forge_policy._infra.answer_first`). The worker exits after
``FORGE_WORKER_IDLE_SECONDS`` (900) without a request, on SIGTERM/SIGINT, on a ``stop``
request, or when its socket file is removed or replaced.

With ``FORGE_OTEL`` on (:mod:`forge_policy.telemetry`) the worker exports a span per decision
and the decision metrics, batched by the SDK's own threads; a request thread records in memory,
and the answer's latency only once the answer is written and the connection closed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import threading
import time

from forge_policy._infra.answer_first import answer_first
from forge_policy._lazy import kept
from forge_policy.worker import protocol

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.config.env import Config
    from forge_policy.ops.statusline import FloorCache
    from forge_policy.telemetry.export import Exporting

LOCK_WAIT = 3.0
DRAIN_SECONDS = 5.0
TICK = 0.25
#: Request threads kept waiting in ``accept`` once theirs is answered: starting a thread per
#: connection costs ~60-100 us (its stack, and ``Thread.start`` waits until it runs) on every hook
#: call. The thread that accepts answers: handing the connection over to another thread cost one
#: more wake-up on the way to every answer, ~0.15-0.25 ms of its wall time when the worker wakes
#: from cold caches between hook calls. More connections at once than free threads still get a
#: new thread each, never a wait.
SPARE_THREADS = 4


def folder_of(root: str) -> str:
    """``<root>/runtime/worker`` (:func:`forge_policy.worker.protocol.folder_of`)."""
    return os.fsdecode(protocol.folder_of(os.fsencode(root)))


def slot_here(root: str) -> str:
    """The folder of the worker for this process's environment and working directory."""
    print_ = protocol.fingerprint(os.getcwdb(), protocol.relevant(os.environb))
    return os.fsdecode(protocol.slot_of(os.fsencode(root), print_))


def log(message: str) -> None:
    """One line on the worker's stderr (``worker.log``), redacted."""
    from forge_policy.secrets import redact

    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    sys.stderr.write(f"{stamp} forge-policy worker[{os.getpid()}]: {redact(message)}\n")
    sys.stderr.flush()


class Worker:
    """The listening socket and the warm handler of one root."""

    def __init__(
        self,
        config: Config,
        folder: str,
        identity: bytes,
        idle: float,
        telemetry: Exporting | None = None,
    ) -> None:
        from forge_policy.serve.warm import Warm

        self.config = config
        self.folder = folder
        self.identity = identity
        self.idle = idle
        self.cwd = os.getcwdb()
        self.environ = protocol.relevant(os.environb)
        self.fingerprint = protocol.fingerprint(self.cwd, self.environ).decode()
        self.started = time.time()
        self.telemetry = telemetry
        self.warm = Warm(config, observers=() if telemetry is None else (telemetry.recorder,))
        self.stopping = threading.Event()
        self.reason = ""
        self.busy = 0
        self.last = time.monotonic()
        self._busy_lock = threading.Lock()
        self._free = 0  # request threads waiting in accept (under _busy_lock)
        self._uid = os.geteuid()  # the peer every connection must run as
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.path = os.path.join(folder, os.fsdecode(protocol.SOCKET))
        self.inode = -1
        self._floor: FloorCache | None = None  # the status line's, made on its first request
        self.status_lines = 0

    def stop(self, reason: str) -> None:
        """Ask the request threads and :meth:`serve` to finish (requests in flight complete)."""
        if not self.stopping.is_set():
            self.reason = reason
            self.stopping.set()
            self._withdraw()  # new clients must not reach a worker that is going away
            # wakes the threads in accept now on Linux (EINVAL); elsewhere their TICK timeout does
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)

    def listen(self) -> None:
        """Replace a stale socket file and listen (the caller holds the lock)."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        address, fd = protocol.address(os.fsencode(self.folder), protocol.SOCKET)
        try:
            self.sock.bind(address)
        finally:
            if fd >= 0:
                os.close(fd)
        os.chmod(self.path, 0o600)
        self.inode = os.stat(self.path).st_ino
        self.sock.listen(128)
        if not sys.platform.startswith("linux"):
            # shutting the socket down wakes the threads blocked in accept on Linux (EINVAL,
            # :meth:`stop`); elsewhere they look every TICK whether the worker stops (each wait
            # a poll: a connection then wakes every free thread, one of which gets it)
            self.sock.settimeout(TICK)

    def _withdraw(self) -> None:
        """Remove the socket file if it is still ours (a successor may have replaced it)."""
        if self._ours():
            with contextlib.suppress(OSError):
                os.unlink(self.path)

    def _ours(self) -> bool:
        try:
            return os.stat(self.path).st_ino == self.inode
        except OSError:
            return False

    def serve(self) -> None:
        """Answer until stopped, idle, or the socket file is no longer ours: the request threads
        accept and answer (:meth:`_requests`), this one checks every :data:`TICK`."""
        self.last = time.monotonic()  # idle time counts from here, not from a slow start-up
        with self._busy_lock:
            self._free += 1
        threading.Thread(target=self._requests, daemon=True).start()
        while not self.stopping.wait(TICK):
            with self._busy_lock:
                idle = not self.busy and time.monotonic() - self.last > self.idle
            if idle:
                self.stop(f"idle for {self.idle:g} s")
            elif not self._ours():
                self.stop("the socket file was removed or replaced")

    def _requests(self) -> None:
        """A request thread: accept one connection, answer it; again, while at most
        :data:`SPARE_THREADS` are free (the others end). The free threads all wait in
        ``accept``, which wakes one of them per connection (the kernel's choice; on Linux no
        other thread wakes): the thread that accepts answers, with no hand-over to another
        thread and no turn to pass on the way to the answer. A connection that leaves no thread
        free starts one, so the next connection is accepted at once, never after an answer."""
        while True:
            conn = self._accept()
            if conn is None:
                return  # stopping
            with self._busy_lock:
                self.busy += 1
                self._free -= 1
                more = self._free == 0
                if more:
                    self._free += 1  # the thread started below
            if more:
                threading.Thread(target=self._requests, daemon=True).start()
            self._handle(conn)
            with self._busy_lock:
                if self._free >= SPARE_THREADS or self.stopping.is_set():
                    return
                self._free += 1

    def _accept(self) -> socket.socket | None:
        """The next connection whose peer runs as this user; None once stopping."""
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:  # the socket shut (stopping), or TICK without a connection
                if self.sock.fileno() < 0:
                    return None  # closed (:meth:`close`): nothing more to accept
                continue
            try:
                if protocol.peer_uid(conn) == self._uid:
                    return conn
                conn.close()  # never answer another user
            except OSError as exc:  # not named, not answered
                log(f"closed a connection whose peer is not named: {exc}")
                conn.close()
        return None

    def close(self) -> None:
        """Stop listening (removing the socket file if it is still ours), then drain."""
        self.stopping.set()  # also when serve() ended by an exception: no request thread goes on
        self._withdraw()
        self.sock.close()
        deadline = time.monotonic() + DRAIN_SECONDS
        while self.busy and time.monotonic() < deadline:
            time.sleep(0.01)

    def _handle(self, conn: socket.socket) -> None:
        started = time.perf_counter()
        used = True
        try:
            # what the decision still writes (its state, its seen record) follows the answer
            with answer_first(on_error=log):
                with conn:
                    conn.settimeout(protocol.REQUEST_TIMEOUT)
                    answer, used = self._answer(protocol.receive(conn, protocol.MAX_REQUEST))
                    conn.sendall(answer)
                if self.telemetry is not None:  # the answer is out: its latency, recorded
                    self.telemetry.answered(time.perf_counter() - started)
        except OSError:
            pass  # the client went away: it evaluates in-process
        except Exception as exc:  # the client gets no answer and evaluates in-process
            log(f"request failed: {type(exc).__name__}: {exc}")
        finally:
            with self._busy_lock:
                self.busy -= 1
                if used:
                    self.last = time.monotonic()

    def _answer(self, data: bytes | None) -> tuple[bytes, bool]:
        """The answer, and whether the request used the worker: ``status`` and ``stop`` ask
        about it and leave its idle time alone. Otherwise every worker that starts (asking the
        others how long they have been idle) and every ``worker settle`` would make the workers
        it asks the most recently used: the one stopped beyond the bound would no longer be the
        least recently used, and a worker asked often enough would never idle out."""
        if data is None:
            return protocol.encode_answer(b"R", b"request too large", b""), True
        try:
            items = protocol.decode_request(data)
        except ValueError as exc:
            return protocol.encode_answer(b"R", str(exc).encode(), b""), True
        kind = items[0] if items else b""
        if kind == b"status":
            return protocol.encode_answer(b"A", json.dumps(self.status()).encode(), b""), False
        if kind == b"stop":
            self.stop("asked to stop")
            return protocol.encode_answer(b"A", b"stopping", b""), False
        try:
            request = protocol.HookRequest.decode(items)
        except ValueError as exc:
            return protocol.encode_answer(b"R", str(exc).encode(), b""), True
        refusal = self._refusal(request)
        if refusal:
            return protocol.encode_answer(b"R", refusal, b""), True
        if request.kind == b"statusline":
            color = "--no-color" not in request.args  # the client's NO_COLOR, not ours
            return protocol.encode_answer(b"A", self.status_line(request.raw, color), b""), True
        options = _hook_options(request.args)
        if options is None:  # the in-process hook reports the arguments
            return protocol.encode_answer(b"R", b"arguments the worker does not take", b""), True
        # the client's wait ends at request.deadline: answer before it (SPEC §9)
        text, notes, code = self.warm.answer(request.raw, deadline=request.deadline, **options)
        out = text.encode("utf-8", "surrogatepass") + b"\n" if text else b""
        return protocol.encode_answer(
            b"A", out, notes.encode("utf-8", "backslashreplace"), code
        ), True

    def _refusal(self, request: protocol.HookRequest) -> bytes:
        """Why this worker must not answer ``request`` as the client would (b"": it may)."""
        if request.identity != self.identity:
            self.stop("the package changed on disk: a client of another version asked")
            return protocol.CHANGED + b": the worker restarts"
        if request.cwd != self.cwd:
            return b"another working directory than the worker's"
        if request.environ != self.environ:
            return b"other values of " + b", ".join(_differing(request.environ, self.environ))
        if request.expired():  # the client has given up and evaluates in-process
            return b"past the client's deadline"
        return b""

    def status_line(self, raw: bytes, color: bool) -> bytes:
        """Claude Code's status line for its status JSON ``raw``, as ``forge-policy statusline``
        prints it in-process (:mod:`forge_policy.ops.statusline`), with a newline."""
        from forge_policy.ops import statusline
        from forge_policy.reports.statusline import UNKNOWN

        with self._busy_lock:
            self.status_lines += 1
            if self._floor is None:
                self._floor = statusline.FloorCache()
        try:
            session_id = statusline.parse_input(raw)
            evaluator = self.warm.current().evaluator
            if session_id is None or evaluator is None:
                line = UNKNOWN
            else:
                floor = self._floor.get(self.config, evaluator.catalog)
                line = statusline.line_for(evaluator, session_id, floor, color=color)
        except Exception as exc:  # the line says "?", the log says why
            log(f"status line failed: {type(exc).__name__}: {exc}")
            line = UNKNOWN
        return line.encode("utf-8", "replace") + b"\n"

    def status(self) -> dict[str, object]:
        """What ``forge-policy worker status`` shows."""
        from forge_policy import __version__

        return {
            **self.warm.health(),
            "version": __version__,
            "started": self.started,
            "uptime": round(time.time() - self.started, 3),
            "idle": round(time.monotonic() - self.last, 3),
            "idle_exit": self.idle,
            "cwd": os.fsdecode(self.cwd),
            "in_flight": self.busy,
            "status_lines": self.status_lines,
            "fingerprint": self.fingerprint,
            "environment": environment(self.environ),
        }


#: Variables whose value ``worker status`` shows (paths, no secrets); the others only by name and
#: a digest of the value, so that two workers' environments can be told apart.
SHOWN = ("CLAUDE_PROJECT_DIR", "FORGE_ROOT", "FORGE_PROFILE", "FORGE_DISABLE")


def environment(entries: list[bytes]) -> dict[str, str]:
    """``NAME`` → what ``worker status`` may show of its value: the value for :data:`SHOWN`,
    else a digest (``#`` and 8 hex digits) and, for ``PATH``, the number of entries.

    >>> environment([b"CLAUDE_PROJECT_DIR=/p", b"PATH=/a:/b"])["PATH"][-11:]
    '(2 entries)'
    """
    shown: dict[str, str] = {}
    for entry in entries:
        name, _, value = entry.partition(b"=")
        key = os.fsdecode(name)
        if key in SHOWN:
            shown[key] = os.fsdecode(value)
            continue
        digest = "#" + protocol.fingerprint(b"", [value]).decode()[-8:]
        if key == "PATH":
            digest += f" ({len(value.split(b':'))} entries)"
        shown[key] = digest
    return shown


def _differing(theirs: list[bytes], ours: list[bytes]) -> list[bytes]:
    """The names (never the values) of the variables that differ."""
    left, right = set(theirs), set(ours)
    return sorted({entry.split(b"=", 1)[0] for entry in left ^ right})


@kept
def _harnesses() -> Any:
    from forge_policy.harness.registry import HARNESSES

    return HARNESSES


def _hook_options(args: list[str]) -> dict[str, str] | None:
    """``harness`` and ``event`` from the client's ``forge-policy hook`` arguments, or None
    when they are not valid hook options the worker answers (a pure function of ``args``: the
    answers for the few argument lists a project's hooks send are kept)."""
    key = tuple(args)
    if key in _OPTIONS:
        found = _OPTIONS[key]
        return None if found is None else dict(found)
    harnesses = _harnesses()
    try:
        options = protocol.HookOptions.parse(args, harnesses)
    except ValueError:
        options = None
    found = None
    if options is not None and options.for_worker:
        found = {"harness": options.harness, "event": options.event}
    if len(_OPTIONS) >= 64:  # a client sending ever new arguments: no unbounded growth
        _OPTIONS.clear()
    _OPTIONS[key] = found
    return None if found is None else dict(found)


#: :func:`_hook_options`'s answers by argument list
_OPTIONS: dict[tuple[str, ...], dict[str, str] | None] = {}


def run(args: list[str], here: bytes | None = None) -> int:
    """The worker process for ``ROOT`` (``args``); returns its exit code. ``here`` is the
    client file whose identity clients must present (default: this package's).

    The worker lock (the project's one file lock, :mod:`forge_policy._infra.filelock`) is held
    for the worker's whole life: one worker per root. A stopping worker releases it within its
    drain, so a successor waits up to :data:`LOCK_WAIT` for it.
    """
    from forge_policy._infra.filelock import FileLock
    from forge_policy.errors import LockTimeout, StoreError

    if len(args) != 1:
        log("usage: client.py --worker ROOT")
        return 2
    config = _config(args[0])
    if config is None:
        return 1
    folder = slot_here(config.root)
    with contextlib.ExitStack() as held:
        try:
            lock = os.path.join(folder, os.fsdecode(protocol.LOCK))
            held.enter_context(FileLock(lock, timeout=LOCK_WAIT))
        except LockTimeout:
            log("not started: another worker holds the lock")
            return 0
        except StoreError as exc:
            log(f"not started: {exc}")
            return 1
        if here is None:
            here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "client.py").encode()
        telemetry = _telemetry()
        worker = Worker(config, folder, protocol.own_identity(here), config.worker_idle, telemetry)
        _serve(worker)
    log(f"stopped after {worker.warm.requests} requests: {worker.reason}")
    if telemetry is not None:  # after the lock: a successor need not wait for the collector
        from forge_policy.telemetry import STOP_FLUSH_SECONDS

        if not telemetry.close(STOP_FLUSH_SECONDS):
            log(f"telemetry: the last export did not finish within {STOP_FLUSH_SECONDS:g} s")
    return 0


def _telemetry() -> Exporting | None:
    """This worker's OpenTelemetry export (``FORGE_OTEL``), or None: off, or it cannot start
    (logged; the worker answers the same without it)."""
    from forge_policy import telemetry

    if telemetry.problem(os.environ):
        log(telemetry.problem(os.environ))
    try:
        exporting = telemetry.start(os.environ, "worker")
    except Exception as exc:  # the extra missing, a bad OTEL_* value: never a reason not to answer
        log(f"telemetry off: {type(exc).__name__}: {exc}")
        return None
    if exporting is not None:
        log("telemetry: exporting spans and metrics over OTLP/HTTP (FORGE_OTEL)")
    return exporting


def _config(root: str) -> Config | None:
    """The configuration a worker for ``root`` runs with, or None (logged) when it must not
    start."""
    from forge_policy.config.env import Config
    from forge_policy.errors import ConfigError, ProjectConfigError

    try:
        config = Config.from_env(os.environ)
    except (ConfigError, ProjectConfigError) as exc:  # FORGE_* or a configuration layer
        log(f"not started: {exc}")
        return None
    if config.root != os.path.abspath(root):
        log(f"not started: FORGE_ROOT resolves to {config.root}, not {root}")
        return None
    if config.store == "memory":
        log("not started: FORGE_STORE=memory: a hook process keeps no state, a worker would")
        return None
    if not protocol.authenticates_peers():
        log(f"not started: {protocol.system()} cannot name a socket's peer: clients unchecked")
        return None
    slot = os.fsencode(slot_here(config.root))
    problem = protocol.address_problem(slot + b"/" + protocol.SOCKET)
    if problem:
        log(f"not started: {problem}")
        return None
    for folder in (folder_of(config.root), slot_here(config.root)):
        if not protocol.private_folder(os.fsencode(folder)):
            log(f"not started: {folder} is not a folder private to this user")
            return None
    return config


def _serve(worker: Worker) -> None:
    """Listen, announce (pid file, the client's start marker removed), serve, clean up."""
    pid_path = os.path.join(worker.folder, os.fsdecode(protocol.PID))
    try:
        worker.listen()
        with open(pid_path, "w", encoding="ascii") as file:
            file.write(f"{os.getpid()}\n")
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda signum, frame: worker.stop(f"signal {signum}"))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(worker.folder, os.fsdecode(protocol.STARTING)))
        log(f"listening on {worker.path} (catalog {worker.warm.health()['catalog']})")
        threading.Thread(target=make_room, args=(worker.folder, worker_max()), daemon=True).start()
        worker.serve()
    finally:
        worker.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(pid_path)


def worker_max() -> int:
    """``FORGE_WORKER_MAX``: workers per root (:data:`~forge_policy.worker.protocol.MAX_WORKERS`
    when unset or not a whole number from 1)."""
    text = os.environ.get("FORGE_WORKER_MAX", "").strip()
    if not text:
        return protocol.MAX_WORKERS
    if not text.isdigit() or int(text) < 1:
        log(
            f"FORGE_WORKER_MAX: expected a whole number from 1, got {text!r}; using "
            f"{protocol.MAX_WORKERS}"
        )
        return protocol.MAX_WORKERS
    return int(text)


def make_room(own: str, bound: int) -> list[str]:
    """Keep at most ``bound`` workers for the root whose worker folder holds ``own`` (this
    worker's slot): ask every other one how long it has been idle, stop the least recently used
    beyond the bound, and remove the folders of workers that are gone. Returns the fingerprints
    stopped. Never raises (logged): a worker too many only costs memory until it idles out."""
    from forge_policy.worker.client import Unavailable, exchange

    parent = os.path.dirname(own)
    live: list[tuple[float, str]] = []
    stopped: list[str] = []
    try:
        names = sorted(os.listdir(parent))
    except OSError as exc:
        log(f"cannot list the other workers: {exc}")
        return stopped
    for name in names:
        slot = os.path.join(parent, name)
        if slot == own or not protocol.is_fingerprint(name) or not os.path.isdir(slot):
            continue
        try:
            status, out, _, _ = exchange(
                os.fsencode(slot), protocol.encode_request([b"status"]), 2.0
            )
            idle = float(json.loads(out)["idle"]) if status == b"A" else 0.0
        except Unavailable:
            _remove_if_gone(slot)
            continue
        except (ValueError, KeyError, TypeError):
            idle = 0.0  # a worker of another version: counted, stopped only as idle 0
        live.append((idle, name))
    live.sort(reverse=True)  # the longest idle first
    while len(live) + 1 > bound and live:
        idle, name = live.pop(0)
        try:
            exchange(
                os.fsencode(os.path.join(parent, name)), protocol.encode_request([b"stop"]), 2.0
            )
        except Unavailable as exc:
            log(f"could not stop worker {name}: {exc.reason}")
            continue
        log(f"stopped worker {name} (idle {idle:g} s): more than {bound} environments")
        stopped.append(name)
    return stopped


def _remove_if_gone(slot: str) -> None:
    """Remove a worker folder whose worker is gone: no socket, no start under way."""
    starting = os.path.join(slot, os.fsdecode(protocol.STARTING))
    if os.path.exists(os.path.join(slot, os.fsdecode(protocol.SOCKET))):
        return
    try:
        if time.time() - os.stat(starting).st_mtime < protocol.STARTING_STALE:
            return
    except OSError:
        pass
    for name in (protocol.LOCK, protocol.PID, protocol.STARTING):
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(slot, os.fsdecode(name)))
    with contextlib.suppress(OSError):
        os.rmdir(slot)


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
