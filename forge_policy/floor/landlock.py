"""The Landlock launcher: applies a floor to this process, then ``exec``s ``/bin/bash -c``.

``command_for(floor, command, "landlock")`` writes
``python -I -S …/forge_policy/floor/launch.py FLOOR COMMAND``; ``launch.py`` runs :func:`main`
from this module's cached bytecode. ``FLOOR`` is the floor's JSON
(:meth:`forge_policy.floor.model.Floor.to_json`) inline when it starts with ``{``, else the
path of a file holding it (refused when the floor itself would leave that file writable).
Like the hook client (:mod:`forge_policy.worker.client`) it imports nothing from the package
and nothing outside the standard library: ``posix``, ``sys``, ``_json`` (the C scanner
``json`` uses, without ``json``'s ``re``/``enum`` imports) and ``_ctypes`` (the only way to
make a system call from the standard library, used without the ``ctypes`` package and its
``os``/``struct`` imports). Python has no Landlock binding. The PyPI packages looked at
(``landlock`` 1.0.0.dev5, ``landlockpy`` 0.2.0, ``py-landlock`` 0.1.1) are pure-Python
``ctypes`` bindings of the same three system calls, in ``.dev``/0.x releases; they import the
``ctypes`` package (and ``enum``), which the launcher's start would pay on every shell call, and
would have to be importable under ``-I -S``: none is clearly better than these ~60 lines.

**What it holds** (Landlock allow-lists hierarchies; rights granted on a folder cover
everything beneath it, and nothing can be subtracted): writes (create, write, truncate,
remove, rename, link, make) only under the floor's writable roots, plus writes to
``/dev/null``, ``/dev/zero``, ``/dev/full``, ``/dev/tty``, ``/dev/ptmx``, ``/dev/pts`` and
``/dev/shm``; device nodes are made nowhere. So ``$HOME``, the system and the engine's
installation stay unwritten *when they lie outside the writable roots*. **What it does not
hold**: the never-written paths inside a writable root (governance folders in the project, a
venv inside the project) and every never-read path (reads are not restricted at all); the
hook alone decides on those (:func:`forge_policy.floor.sandbox.unheld`). As root, the
capability bounding set is emptied before ``exec``, so the command runs without capabilities
(as under bubblewrap). Landlock ABI :data:`ABI_MIN` (Linux 6.2) or later is required: before
it, ``truncate(2)`` was not controlled.

**Fails closed**: a bad floor document, an old kernel, or any system call failing ends the
launcher with exit status :data:`EXIT_SETUP` and one line on stderr; the command is not run.
"""

import posix
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Landlock ABI the launcher needs: 3 added LANDLOCK_ACCESS_FS_TRUNCATE.
ABI_MIN = 3
#: exit status when the sandbox cannot be set up (the command was not run)
EXIT_SETUP = 125
FLOOR_FORMAT = 1  # forge_policy.floor.model.FLOOR_FORMAT (the launcher imports no package)
SHELL = "/bin/bash"

# <linux/landlock.h>; the system call numbers are the same on every architecture but alpha
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
WRITE_FILE = 1 << 1
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
_PR_SET_NO_NEW_PRIVS, _PR_CAPBSET_DROP = 38, 24
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_DEVICE_FILES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts")
_DEVICE_DIRS = ("/dev/shm",)


class SetupError(Exception):
    """The floor cannot be applied; the message is the one line the launcher prints."""


_LIBC: "dict[str, Any]" = {}


def _function(name: str) -> "Any":
    """``name`` of the C library as a callable returning a C ``long`` (errno kept), built on
    ``_ctypes`` directly: the ``ctypes`` package would import ``os``, ``struct`` and more."""
    if not _LIBC:
        import _ctypes

        class Long(_ctypes._SimpleCData):  # type: ignore[type-arg]  # ctypes.c_long
            _type_ = "l"

        class Function(_ctypes.CFuncPtr):
            _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
            _restype_ = Long

        class Library:
            _handle = _ctypes.dlopen(None, 2)  # type: ignore[arg-type]  # this process, RTLD_NOW

        _LIBC.update(long=Long, function=Function, library=Library(), errno=_ctypes.get_errno)
    if name not in _LIBC:
        _LIBC[name] = _LIBC["function"]((name, _LIBC["library"]))
    return _LIBC[name]


def _call(name: str, *args: int | bytes | None) -> int:
    """``name(*args)`` with integers passed as C ``long``; :class:`SetupError` when it fails."""
    function = _function(name)
    long = _LIBC["long"]
    result = int(function(*(long(a) if isinstance(a, int) else a for a in args)))
    if result < 0:
        errno = _LIBC["errno"]()
        raise SetupError(f"{name}{args[:1]} failed: {posix.strerror(errno)}")
    return result


def abi() -> int:
    """The Landlock ABI this kernel offers (0: none, or disabled at boot)."""
    try:
        return _call("syscall", _CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION)
    except (ImportError, OSError, AttributeError, SetupError):
        return 0


def parse(text: str) -> dict[str, object]:
    """The floor document of ``text``, checked as :meth:`Floor.from_dict` checks it
    (:class:`SetupError` naming the field otherwise); path lists hold plain strings."""
    try:
        import _json

        class Context:
            strict = True
            object_hook = None
            object_pairs_hook = None
            parse_float = float
            parse_int = int
            parse_constant = float
            memo: dict[str, str] = {}  # noqa: RUF012

        text = text.strip(" \t\n\r")
        document, end = _json.make_scanner(Context())(text, 0)  # type: ignore[arg-type]
        if end != len(text):
            raise ValueError("extra data")
    except (ValueError, StopIteration) as exc:
        raise SetupError(f"floor: not JSON: {exc!r}") from None
    if not isinstance(document, dict):
        raise SetupError("floor: expected a JSON object")
    if document.get("format") != FLOOR_FORMAT:
        raise SetupError(f"floor: format: expected {FLOOR_FORMAT}, got {document.get('format')!r}")
    project = document.get("project")
    if not isinstance(project, str) or not project.startswith("/"):
        raise SetupError("floor: project: expected an absolute path")
    out: dict[str, object] = {"project": project}
    for field in ("writable", "never_written", "never_read"):
        rows = document.get(field, [])
        if not isinstance(rows, list):
            raise SetupError(f"floor: {field}: expected a list")
        paths = []
        for i, row in enumerate(rows):
            if not (
                isinstance(row, dict)
                and isinstance(row.get("path"), str)
                and isinstance(row.get("reason"), str)
            ):
                raise SetupError(f"floor: {field}[{i}]: expected {{path, reason}} strings")
            if not row["path"].startswith("/"):
                raise SetupError(f"floor: {field}[{i}].path: must be absolute")
            paths.append(row["path"].rstrip("/") or "/")
        out[field] = paths
    return out


def _real(path: str) -> str:
    """``os.path.realpath`` without ``os``: resolve each existing component."""
    parts = [p for p in path.split("/") if p and p != "."]
    done = ""
    hops = 0
    while parts:
        part = parts.pop(0)
        if part == "..":
            done = done.rpartition("/")[0]
            continue
        candidate = done + "/" + part
        try:
            target = posix.readlink(candidate)
        except OSError:
            done = candidate
            continue
        hops += 1
        if hops > 40:
            raise SetupError(f"floor: {path}: too many symbolic links")
        if target.startswith("/"):
            done = ""
        parts[:0] = [p for p in target.split("/") if p and p != "."]
    return done or "/"


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _read_floor(argument: str) -> dict[str, object]:
    if argument.lstrip().startswith("{"):
        return parse(argument)
    try:
        fd = posix.open(argument, posix.O_RDONLY | posix.O_CLOEXEC)
        try:
            chunks = []
            while chunk := posix.read(fd, 1 << 16):
                chunks.append(chunk)
        finally:
            posix.close(fd)
    except OSError as exc:
        raise SetupError(f"floor: {argument}: {exc.strerror}") from None
    floor = parse(b"".join(chunks).decode("utf-8", "replace"))
    real = _real(argument)
    if _under(real, [_real(p) for p in floor["writable"]]):  # type: ignore[attr-defined]
        raise SetupError(f"floor: {argument} lies in a writable root: the command could change it")
    return floor


def _add_rule(ruleset: int, path: str, access: int) -> None:
    try:
        fd = posix.open(path, posix.O_PATH | posix.O_CLOEXEC)
    except OSError:
        return  # nothing there: nothing to allow
    try:
        attr = access.to_bytes(8, sys.byteorder) + fd.to_bytes(4, sys.byteorder, signed=True)
        _call("syscall", _ADD_RULE, ruleset, _RULE_PATH_BENEATH, attr, 0)
    finally:
        posix.close(fd)


def apply(floor: dict[str, object]) -> None:
    """Restrict this process (and what it ``exec``s) to ``floor``'s writable roots."""
    version = abi()
    if version < ABI_MIN:
        raise SetupError(f"landlock: this kernel offers ABI {version}, the floor needs {ABI_MIN}")
    make = MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO | MAKE_SYM
    writes = WRITE_FILE | REMOVE_DIR | REMOVE_FILE | make | REFER | TRUNCATE
    handled = writes | MAKE_CHAR | MAKE_BLOCK
    attr = handled.to_bytes(8, sys.byteorder)
    ruleset = _call("syscall", _CREATE_RULESET, attr, len(attr), 0)
    try:
        for root in floor["writable"]:  # type: ignore[attr-defined]
            _add_rule(ruleset, _real(root), writes)
        for device in _DEVICE_FILES:
            _add_rule(ruleset, device, WRITE_FILE | TRUNCATE)
        for folder in _DEVICE_DIRS:
            _add_rule(ruleset, folder, writes)
        _call("prctl", _PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        if posix.geteuid() == 0:
            _drop_capabilities()
        _call("syscall", _RESTRICT_SELF, ruleset, 0)
    finally:
        posix.close(ruleset)


def _drop_capabilities() -> None:
    """Empty the bounding set, so the ``exec``ed command starts without capabilities."""
    for cap in range(64):
        try:
            _call("prctl", _PR_CAPBSET_DROP, cap, 0, 0, 0)
        except SetupError:
            if cap < 32:  # past the last capability the kernel knows: EINVAL
                raise SetupError("landlock: cannot drop root's capabilities") from None
            break
    _call("prctl", _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)


def main(argv: list[str]) -> int:
    """``FLOOR COMMAND``: apply the floor and ``exec`` ``/bin/bash -c COMMAND`` (same working
    directory and environment); on any failure print one line and return :data:`EXIT_SETUP`."""
    if len(argv) != 2:
        sys.stderr.write("forge-policy floor: usage: launch.py FLOOR COMMAND\n")
        return EXIT_SETUP
    try:
        apply(_read_floor(argv[0]))
        posix.execv(SHELL, [SHELL, "-c", argv[1]])
    except SetupError as exc:
        message = str(exc)
    except OSError as exc:
        message = f"landlock: {exc.strerror or exc}"
    except Exception as exc:  # whatever it is, the command must not run
        message = f"landlock: {type(exc).__name__}: {exc}"
    sys.stderr.write(f"forge-policy floor: {message}; the command was not run\n")
    return EXIT_SETUP
