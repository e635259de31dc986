"""The hook client's slow paths: what :mod:`forge_policy.worker.client` does when the worker
gives no answer, and the worker's start.

The client runs once per agent tool call and loads this module only when it leaves the warm
path (a call the worker answers never unmarshals it); like the client it imports interpreter
built-ins only, and :mod:`~forge_policy.worker.wire` from its own folder. It never imports
the client (the client hands it what it needs: no import cycle). What it owns:

- :func:`unavailable` and :func:`refused`: a failed or refused exchange, handled as the client's
  step 4 says: start a worker when none answers (detached, one per root and environment: a
  ``worker.starting`` marker created with ``O_EXCL`` keeps parallel clients from starting
  several, :func:`start_worker`), count the reason (:func:`count`:
  :func:`~forge_policy.worker.wire.record`, shown by ``forge-policy worker status``), then
  evaluate the event in-process;
- :func:`in_process`: the full engine (:func:`forge_policy.hook.main`) in this process, after
  :func:`enable_packages` made the package importable without ``site``; an engine that does not
  even import exits 2 (or prints the refusal of a harness that reads JSON, :data:`BROKEN_ENGINE`);
- :func:`status_line` (the status line computed here) and :func:`serve` (``--worker``: the
  worker itself, :mod:`forge_policy.worker.server`).
"""

import posix
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
if TYPE_CHECKING or (__spec__ is not None and __spec__.parent):
    from forge_policy.worker import wire
else:  # run by file (launch.py): the client's wire.py, already imported by that name
    sys.path.insert(0, __file__.rpartition("/")[0] or ".")
    try:
        import wire  # type: ignore[no-redef]
    finally:
        del sys.path[0]  # nothing else is imported from this folder by name


def enable_packages(here: bytes) -> None:
    """Make the package and its dependencies importable after ``-S``, as ``site`` would but
    without running the ``import`` lines of ``.pth`` files: the tree this file belongs to
    first, then the site folders of this interpreter (its venv's, found as ``site`` finds it:
    ``pyvenv.cfg`` beside or above the executable) and the folders their ``.pth`` path lines
    name. An ``import`` line is code run at every start of the engine: one written by an agent
    would patch the hook before it decides. No dependency needs one (an editable install's
    finder is such a line; the tree this file is in is the package it would find), and
    ``sitecustomize``/``usercustomize`` stay unimported as ``-S`` leaves them."""
    import os
    import site

    executable = os.path.abspath(sys.executable)
    bin_dir = os.path.dirname(executable)
    prefixes = [sys.prefix]
    for conf in (os.path.join(bin_dir, "pyvenv.cfg"), os.path.join(bin_dir, "..", "pyvenv.cfg")):
        if not os.path.isfile(conf):
            continue
        system = "true"
        with open(conf, encoding="utf-8") as f:
            for line in f:
                key, eq, value = line.partition("=")
                if eq and key.strip().lower() == "include-system-site-packages":
                    system = value.strip().lower()
        venv = os.path.dirname(bin_dir)
        prefixes = [venv, sys.prefix] if system == "true" else [venv]
        sys.prefix = sys.exec_prefix = venv
        break
    known = set(sys.path)
    for folder in site.getsitepackages(prefixes):
        if folder in known or not os.path.isdir(folder):
            continue
        sys.path.append(folder)
        known.add(folder)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".pth") and not name.startswith("."):
                _path_lines(folder, name, known)
    tree = here.decode("utf-8", "surrogateescape").rsplit("/", 3)[0]
    if tree not in sys.path:
        sys.path.insert(0, tree)


def _path_lines(folder: str, name: str, known: set[str]) -> None:
    """The folders a ``.pth`` file adds to ``sys.path`` (its ``import`` lines skipped)."""
    import os

    try:
        with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
            lines = f.read(1 << 20).splitlines()
    except OSError:
        return
    for line in lines:
        if not line.strip() or line.startswith(("#", "import ", "import\t")):
            continue
        path = os.path.normpath(os.path.join(folder, line.rstrip()))
        if path not in known and os.path.exists(path):
            sys.path.append(path)
            known.add(path)


def in_process(
    here: bytes, raw: bytes | None, args: list[str], note: str = "", started: float | None = None
) -> int:
    """The full hook in this process: what ``forge-policy hook`` would answer (``raw``: the
    event the client read at ``started``, :func:`time.monotonic`; None: the hook reads stdin).

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
    started = started if raw is not None else None  # else the hook reads and starts it
    return main(stdin, sys.stdout, sys.stderr, None, args, started=started)


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


def _broken_engine_refusal(args: list[str]) -> str:
    try:
        harness, event, _, _ = wire.parse_options(args)
    except ValueError:
        return ""
    entry = BROKEN_ENGINE.get(harness)
    if entry is None or event not in entry[1]:
        return ""
    return entry[0]


def _mkdir(path: bytes, mode: int) -> None:
    try:  # noqa: SIM105 - contextlib is not a built-in module
        posix.mkdir(path, mode)
    except FileExistsError:
        pass


def make_folder(root: bytes) -> bytes:
    """Create ``<root>/runtime/worker`` (mode 0700) and the folders above it; return it."""
    for path, mode in ((root, 0o777), (root + b"/runtime", 0o777)):
        _mkdir(path, mode)
    parent = wire.folder_of(root)
    _mkdir(parent, 0o700)
    return parent


def start_worker(
    root: bytes, here: bytes, slot: bytes, listening: "Callable[[bytes], bool]"
) -> bool:
    """Start a detached worker for ``root`` and this environment (its folder ``slot``) unless
    another client is starting one (``listening``: whether a worker of this user accepts
    connections in a folder now, the client's check); never raises (a worker that does not
    start only means this event is evaluated in-process)."""
    try:
        parent = make_folder(root)
        _mkdir(slot, 0o700)
        if not (wire.private_folder(parent) and wire.private_folder(slot)):
            return False
        folder = slot
        marker = folder + b"/" + wire.STARTING
        for _ in range(2):
            try:
                fd = posix.open(marker, posix.O_WRONLY | posix.O_CREAT | posix.O_EXCL, 0o600)
            except FileExistsError:
                if time.time() - posix.stat(marker).st_mtime < wire.STARTING_STALE:
                    return False  # another client is starting it
                posix.unlink(marker)  # its client died before the worker came up
                continue
            posix.close(fd)
            break
        else:
            return False
        if listening(folder):
            # a worker came up between this client's failed connect and its marker: once it
            # listened it removed its own client's marker, which the O_EXCL above cannot see.
            # Another would only wait for the worker lock and exit ("not started").
            posix.unlink(marker)
            return False
        _spawn(root, here, parent)
        return True
    except OSError:
        return False


def _spawn(root: bytes, here: bytes, folder: bytes) -> None:
    """Double fork: the worker is reparented to init and never holds the hook's pipes. It
    inherits this process's environment and working directory: the ones it serves."""
    pid = posix.fork()
    if pid:
        posix.waitpid(pid, 0)
        return
    try:
        posix.setsid()
        if posix.fork() == 0:
            null = posix.open(b"/dev/null", posix.O_RDWR)
            log = posix.open(
                folder + b"/" + wire.LOG, posix.O_WRONLY | posix.O_CREAT | posix.O_APPEND, 0o600
            )
            posix.dup2(null, 0)
            posix.dup2(null, 1)
            posix.dup2(log, 2)
            posix.closerange(3, 1 << 16)  # no pipe of the harness may outlive this hook
            executable = sys.executable.encode()
            posix.execv(executable, [executable, b"-I", b"-S", here, b"--worker", root])
    finally:
        posix._exit(0)


def count(root: bytes, reason: str) -> None:
    """Record why this call is evaluated in-process (:func:`~forge_policy.worker.wire.record`),
    where ``forge-policy worker status`` counts it; only into a private worker folder."""
    folder = wire.folder_of(root)
    if root and wire.private_folder(folder):
        wire.record(folder, reason)


def unavailable(
    here: bytes,
    raw: bytes,
    args: list[str],
    where: "tuple[bytes, bytes]",
    why: "tuple[str, bool, bool]",
    listening: "Callable[[bytes], bool]",
    started: float,
) -> int:
    """The worker gave no usable answer (``why``: the client's reason, whether to start a
    worker, whether the hook says why on stderr; ``where``: the root and the environment's
    folder): start one when none answers, count the reason, evaluate in-process."""
    root, slot = where
    reason, start, note = why
    if start:
        started_one = start_worker(root, here, slot, listening)
        what = "started one" if started_one else "one is starting"
        count(root, f"no worker for this environment: {what}")
        return in_process(here, raw, args, started=started)
    if not note:  # a lasting state: counted where `worker status` shows it
        try:  # noqa: SIM105 - contextlib is not a built-in module
            make_folder(root)
        except OSError:
            pass
    count(root, reason)
    return in_process(here, raw, args, reason if note else "", started)


def refused(
    here: bytes,
    raw: bytes,
    args: list[str],
    where: "tuple[bytes, bytes]",
    out: bytes,
    listening: "Callable[[bytes], bool]",
    started: float,
) -> int:
    """The worker refused the request (``out``: why): a worker of another version is exiting,
    so one of this version is started; counted, then evaluated in-process."""
    root, slot = where
    if out.startswith(wire.CHANGED):
        start_worker(root, here, slot, listening)
    reason = f"refused: {out.decode('utf-8', 'replace')}"
    count(root, reason)
    return in_process(here, raw, args, reason, started)


#: What the status line says when even the engine does not load
#: (:data:`forge_policy.reports.statusline.UNKNOWN`).
UNKNOWN = b"forge-policy: ?\n"


def status_line(here: bytes, raw: bytes) -> bytes:
    """The status line for the status JSON ``raw``, computed in this process
    (:mod:`forge_policy.ops.statusline`); :data:`UNKNOWN` when the engine does not load."""
    try:
        enable_packages(here)
        import os

        from forge_policy.ops.statusline import in_process as line_here

        return line_here(raw, os.environ).encode("utf-8", "replace") + b"\n"
    except Exception:
        return UNKNOWN


def serve(here: bytes, args: list[str]) -> int:
    """``--worker ROOT``: run the worker (``python -m forge_policy.worker.server``) from the tree
    this file is in; it exits itself."""
    enable_packages(here)
    import runpy

    sys.argv = [sys.argv[0], *args]
    runpy.run_module("forge_policy.worker.server", run_name="__main__", alter_sys=True)
    return 0  # not reached: the server exits
