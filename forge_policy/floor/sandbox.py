"""forge_policy's own floor: a shell command rewritten to run under an OS sandbox (SPEC §13).

:func:`command_for` is the rewrite the hook hands the harness (``updatedInput`` and its kin):
the original command, byte for byte, run by ``/bin/bash -c`` inside the sandbox, in the same
working directory with the same environment. The text is for a POSIX shell (bash, zsh, dash).
:func:`methods_available` says which methods hold on this machine, best first.

**bwrap** (:func:`bwrap_argv`) holds the whole floor with mounts, in this order (a later mount
hides an earlier one at the same place, so the order is the policy):

1. the whole file system read-only (``--ro-bind / /``), a fresh ``/dev`` (no host disks) and a
   fresh ``/proc`` in a new PID namespace (the host's ``/proc/<pid>/root`` and ``cwd`` of other
   processes would otherwise lead around every mount); capabilities dropped (root included),
   a new session (no terminal injection), the sandbox ends with its parent;
2. read-write: the writable roots and the *pins* (below), outer before inner;
3. read-only: the never-written paths that lie in a writable place, outer before inner, so no
   writable root bound later can undo them (all writable binds come first);
4. hidden: never-read folders under an empty read-only tmpfs, files under ``/dev/null``.

Every path is resolved first (``realpath``): a floor path that is a symlink is held where it
points, so a write through the link meets the read-only mount. A mount point cannot be removed
or renamed (``EBUSY``), but a folder *above* one can, and the mount moves with it: renaming
``.git`` would carry the read-only ``.git/hooks`` away and leave the name free for a new one.
So every folder between a writable root and a mount inside it is *pinned*: bound read-write
onto itself, which keeps its content writable and makes its name immovable.

**Paths that do not exist** cannot be bound. Find the nearest existing ancestor: if it is not
writable under the floor (the read-only root, or another never-written or never-read path such
as ``.claude/`` for a missing ``.claude/settings.local.json``), or this user cannot create
entries in it anyway, the path is held as it is. When that ancestor is a *file* (a git
worktree's ``.git`` pointer file for ``.git/hooks``), the file is kept read-only, so nothing can
be created under it and no folder can replace it. Otherwise — a missing folder in a writable
place, such as ``.cursor/`` of a harness the project does not use, ``.git/`` outside a
repository — the path is **not held by the OS** and :func:`unheld` names it: the hook alone
decides on it. A placeholder mount would hold it, but bubblewrap creates its mount point on the
host and it could never be removed safely (Linux detaches the mounts of a removed directory in
every namespace), so each call would leave empty ``.cursor/``, ``.gemini/``, ``.agents/`` …
folders behind, which harness detection reads as harnesses in use, and a ``.git/`` folder that
stops ``git init``. A harness folder that does not exist configures nothing yet; ``init``
creates the folders of the harnesses a project uses, and from then on they are held.

A floor path reached through a **symbolic link that lies in a writable folder** cannot be held
(no mount pins a link: it could be replaced by a real folder of that name):
:func:`bwrap_argv` and :func:`command_for` raise :class:`ValueError` for it (fail closed). When
the nearest existing ancestor of a missing path is a *file* (a git worktree's ``.git`` pointer
file for ``.git/hooks``), that file is kept read-only: nothing can be created under it, and it
cannot be replaced by a folder.

**landlock** (:mod:`forge_policy.floor.landlock`, run by ``floor/launch.py``) can only
allow-list hierarchies: it holds *writes only under the writable roots* (so the installation,
``$HOME`` and the system stay unwritten when they lie outside them), but not the never-written
paths *inside* a writable root (governance folders in the project, a venv in the project) and
no read denial at all (:func:`unheld` lists what a method leaves to the hook).

**sandbox-exec** (macOS, :func:`seatbelt_profile`) denies by path, so missing paths are held
without traces. It is generated and unit-tested here, **never run**: this is Linux.

>>> from forge_policy.floor.model import Floor, FloorPath
>>> kept = (FloorPath("/p/.forge", "protect-governance"),)
>>> floor = Floor("/p", (FloorPath("/p", "project"),), kept)
>>> shlex.split(command_for(floor, "echo 'hi'", "sandbox-exec"))[-3:]
['/bin/bash', '-c', "echo 'hi'"]
>>> unheld(floor, "bwrap"), unheld(floor, "landlock")
((), (FloorPath('/p/.forge', 'protect-governance'),))
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from forge_policy.floor.model import Floor, FloorPath

METHODS = ("bwrap", "landlock", "sandbox-exec")
SHELL = "/bin/bash"
SANDBOX_EXEC = "/usr/bin/sandbox-exec"
#: the launcher ``command_for(..., "landlock")`` runs (``python -I -S``, built-ins only)
LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launch.py")
#: bubblewrap's options before the binds: see the module docstring, step 1
BWRAP_BASE = (
    "--die-with-parent",
    "--new-session",
    "--unshare-pid",
    "--cap-drop",
    "ALL",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
)


def _under(path: str, roots: set[str] | list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _depth(path: str) -> tuple[int, str]:
    return (path.rstrip("/").count("/"), path)


def _outermost(paths: set[str]) -> list[str]:
    """``paths`` without those lying under another one, outer first."""
    return [p for p in sorted(paths, key=_depth) if not _under(p, paths - {p})]


class _Plan:
    """The resolved floor: which real paths are writable, kept and hidden."""

    def __init__(self, floor: Floor) -> None:
        real = os.path.realpath
        self.kept = {real(p.path) for p in floor.never_written}
        self.hidden = {real(p.path) for p in floor.never_read}
        closed = self.kept | self.hidden
        self.writable = {
            real(p.path)
            for p in floor.writable
            if os.path.isdir(p.path) and not _under(real(p.path), closed)
        }

        for held in (*floor.never_written, *floor.never_read):
            self._check_links(held.path)

    def writable_at(self, path: str) -> bool:
        return _under(path, self.writable) and not _under(path, self.kept | self.hidden)

    def _check_links(self, path: str) -> None:
        """A symbolic link on the way to a held path, in a folder the sandbox may write, could
        be replaced by a real folder of the same name: no mount can pin a link. Refuse."""
        prefix = ""
        for part in os.path.normpath(path).split("/")[1:]:
            prefix += "/" + part
            if os.path.islink(prefix) and self.writable_at(
                os.path.realpath(os.path.dirname(prefix))
            ):
                raise ValueError(
                    f"floor: {prefix} is a symbolic link in a folder the sandbox may write: "
                    f"it could be replaced, so {path} cannot be held"
                )

    def guard_missing(self, path: str) -> tuple[str, str] | None:
        """How to keep the missing ``path`` uncreatable: ``("file", ancestor)`` when the nearest
        existing ancestor is a file (it is kept, so no folder can replace it), ``None`` when
        nothing is needed, ``("unheld", first missing component)`` when only the hook holds it
        (a missing folder in a writable place: see the module docstring)."""
        parent, first = _missing(path)
        if not self.writable_at(parent) or not os.access(parent, os.W_OK):
            return None
        if not os.path.isdir(parent):
            return ("file", parent)  # e.g. a git worktree's `.git` pointer file
        return ("unheld", first)


def _missing(path: str) -> tuple[str, str]:
    """The nearest existing ancestor of ``path`` (resolved, missing) and the first missing
    component below it."""
    child = path
    parent = os.path.dirname(path)
    while parent != child and not os.path.lexists(parent):
        child, parent = parent, os.path.dirname(parent)
    return parent, child


#: :func:`bwrap_argv` per floor, with the fingerprint of the file system it was computed on.
_ARGV_MEMO: dict[Floor, tuple[tuple[object, ...], list[str]]] = {}
_ARGV_MEMO_MAX = 64


def _fingerprint(floor: Floor) -> tuple[object, ...]:
    """What :func:`bwrap_argv`'s answer depends on: who asks, the bubblewrap found, and the
    ``lstat`` of every floor path and each of its ancestors (a path that appears, disappears,
    is renamed or replaced by a link, anywhere on its way from ``/``, changes one of them)."""
    seen: dict[str, object] = {}
    for held in (*floor.writable, *floor.never_written, *floor.never_read):
        path = held.path
        while path not in seen:
            try:
                st = os.lstat(path)
                seen[path] = (st.st_dev, st.st_ino, st.st_mode, st.st_uid, st.st_gid)
            except OSError:
                seen[path] = None
            parent = os.path.dirname(path)
            if parent == path:
                break
            path = parent
    return (os.geteuid(), os.getegid(), shutil.which("bwrap"), tuple(seen.items()))


def bwrap_argv(floor: Floor) -> list[str]:
    """bubblewrap's command line (program first, up to the ``--`` before the command) that
    applies ``floor``; see the module docstring for the order and the rules.
    :class:`ValueError` when a held path is reached through a link the sandbox could replace.

    Memoised per floor while :func:`_fingerprint` is unchanged (the warm hook rewrites every
    shell call: resolving each path again cost ~2.4 ms a call; the fingerprint, ~0.1 ms)."""
    key = _fingerprint(floor)
    memo = _ARGV_MEMO.get(floor)
    if memo is not None and memo[0] == key:
        return list(memo[1])
    argv = _bwrap_argv(floor)
    if len(_ARGV_MEMO) >= _ARGV_MEMO_MAX:
        _ARGV_MEMO.clear()
    _ARGV_MEMO[floor] = (key, argv)
    return list(argv)


def _bwrap_argv(floor: Floor) -> list[str]:
    plan = _Plan(floor)
    ro: list[str] = []
    hide: list[tuple[str, str]] = []  # (path, "dir" | "file")
    missing: list[str] = []
    for path in _outermost(plan.kept - {h for h in plan.kept if _under(h, plan.hidden)}):
        if not os.path.lexists(path):
            missing.append(path)
        elif _under(path, plan.writable):
            ro.append(path)
    for path in _outermost(plan.hidden):
        if os.path.isdir(path):
            hide.append((path, "dir"))
        elif os.path.lexists(path):
            hide.append((path, "file"))
        else:
            missing.append(path)
    for path in missing:
        guard = plan.guard_missing(path)
        if guard and guard[0] == "file" and guard[1] not in ro:
            ro.append(guard[1])
    mounts = set(plan.writable) | set(ro) | {p for p, _ in hide}
    pins: set[str] = set()
    for mount in mounts:
        parent = os.path.dirname(mount)
        while parent != "/" and plan.writable_at(parent) and parent not in plan.writable:
            pins.add(parent)
            parent = os.path.dirname(parent)
    argv = [_bwrap_program(), *BWRAP_BASE]
    for path in sorted(plan.writable | (pins - mounts), key=_depth):
        argv += ["--bind", path, path]
    for path in sorted(ro, key=_depth):
        argv += ["--ro-bind", path, path]
    for path, kind in sorted(hide, key=lambda item: _depth(item[0])):
        if kind == "file":
            argv += ["--ro-bind", "/dev/null", path]
        else:
            argv += ["--tmpfs", path, "--remount-ro", path]
    return argv


def _bwrap_program() -> str:
    found = shutil.which("bwrap")
    return os.path.realpath(found) if found else "bwrap"


def _sbpl(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def seatbelt_profile(floor: Floor) -> str:
    """The ``sandbox-exec`` (Seatbelt, macOS) profile that applies ``floor``: everything
    allowed but writes outside the writable roots and a few devices, writes to the
    never-written paths, reads and writes of the never-read ones, and renaming or removing a
    folder above a held path inside a writable root (which would carry it away). Only deny
    rules follow ``(allow default)``, so their order does not matter. Untested here (Linux)."""
    real = os.path.realpath
    writable = sorted({real(p.path) for p in floor.writable}, key=_depth)
    kept = sorted({real(p.path) for p in floor.never_written}, key=_depth)
    hidden = sorted({real(p.path) for p in floor.never_read}, key=_depth)
    allowed = [f"(subpath {_sbpl(p)})" for p in writable]
    allowed += [f"(literal {_sbpl(d)})" for d in ("/dev/null", "/dev/zero", "/dev/dtracehelper")]
    allowed += ['(regex #"^/dev/tty")', '(regex #"^/dev/fd/")', '(regex #"^/dev/ttys[0-9]+$")']
    lines = ["(version 1)", "(allow default)", "(deny file-write*", "  (require-not (require-any"]
    lines += [f"    {rule}" for rule in allowed]
    lines.append("  )))")
    if kept:
        lines.append("(deny file-write*")
        lines += [f"  (subpath {_sbpl(p)})" for p in kept]
        lines.append(")")
    if hidden:
        lines.append("(deny file-read* file-write*")
        lines += [f"  (subpath {_sbpl(p)})" for p in hidden]
        lines.append(")")
    above: set[str] = set()
    for path in (*kept, *hidden):
        parent = os.path.dirname(path)
        while parent != "/" and _under(parent, writable) and parent not in writable:
            above.add(parent)
            parent = os.path.dirname(parent)
    if above:
        lines.append("(deny file-write-unlink")
        lines += [f"  (literal {_sbpl(p)})" for p in sorted(above, key=_depth)]
        lines.append(")")
    return "\n".join(lines) + "\n"


def unheld(floor: Floor, method: str) -> tuple[FloorPath, ...]:
    """The floor's paths that ``method`` does not hold (the hook alone decides on them): for
    ``bwrap`` the missing ones that could be created in a writable place (module docstring);
    none for ``sandbox-exec``; for ``landlock`` every never-read path and the never-written
    paths inside a writable root."""
    _check_method(method)
    if method == "bwrap":
        plan = _Plan(floor)
        held = (*floor.never_written, *floor.never_read)
        return tuple(
            p
            for p in held
            if not os.path.lexists(os.path.realpath(p.path))
            and (plan.guard_missing(os.path.realpath(p.path)) or ("",))[0] == "unheld"
        )
    if method != "landlock":
        return ()
    roots = [os.path.realpath(p.path) for p in floor.writable]
    inside = [p for p in floor.never_written if _under(os.path.realpath(p.path), roots)]
    return (*inside, *floor.never_read)


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise ValueError(f"unknown floor method {method!r}; expected one of {METHODS}")


def _refuse_writable(floor: Floor, program: str, landlock: bool = False) -> None:
    """A program the sandbox could rewrite would hold the next call's sandbox: refuse it."""
    for path in {program, os.path.realpath(program)}:
        if floor.writes_allowed(path) or (
            landlock and _under(path, [os.path.realpath(p.path) for p in floor.writable])
        ):
            raise ValueError(f"floor: {path} is writable inside the sandbox; refusing to run it")


def command_for(floor: Floor, command: str, method: str, *, python: str | None = None) -> str:
    """The shell text that runs ``command`` under ``floor`` with ``method`` (one of
    :data:`METHODS`). :class:`ValueError` for any other method, for a command holding a NUL
    (no argument can carry one), when the program that would apply the floor (bubblewrap,
    the launcher's interpreter) lies where the sandboxed command could rewrite it, and when
    bubblewrap cannot hold the floor (:func:`bwrap_argv`): the caller must not run the command
    unsandboxed then.
    ``python``: the interpreter that runs the Landlock launcher (default: this one; any
    CPython 3.11+ does, the launcher needs only the standard library)."""
    _check_method(method)
    if "\0" in command:
        raise ValueError("floor: a command cannot hold a NUL character")
    if method == "bwrap":
        argv = bwrap_argv(floor)
        if not argv[0].startswith("/"):
            raise ValueError("floor: bubblewrap (bwrap) is not installed")
        _refuse_writable(floor, argv[0])
        return shlex.join([*argv, "--", SHELL, "-c", command])
    if method == "landlock":
        interpreter = python or sys.executable
        for program in (interpreter, LAUNCHER):
            _refuse_writable(floor, program, landlock=True)
        return shlex.join([interpreter, "-I", "-S", LAUNCHER, floor.to_json(), command])
    return shlex.join([SANDBOX_EXEC, "-p", seatbelt_profile(floor), SHELL, "-c", command])


#: (bwrap's path and mtime, kernel release, effective uid, platform) -> methods; one probe per
#: process and machine state, so a warm hook pays nothing after its first call.
_PROBED: dict[tuple[object, ...], tuple[str, ...]] = {}


def methods_available(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The methods that hold a floor on this machine, best first: ``bwrap`` when one real run
    of it with :data:`BWRAP_BASE` succeeds (an AppArmor-restricted user namespace makes it
    fail on Ubuntu), ``landlock`` when the kernel offers Landlock ABI
    :data:`~forge_policy.floor.landlock.ABI_MIN` or later, ``sandbox-exec`` on macOS.
    ``environ``'s ``PATH`` finds bubblewrap. The answer is cached in-process, keyed on
    bubblewrap's path and mtime and the kernel release."""
    bwrap = shutil.which("bwrap", path=environ.get("PATH", os.defpath))
    try:
        mtime = os.stat(bwrap).st_mtime_ns if bwrap else 0
    except OSError:
        mtime = 0
    key = (bwrap, mtime, os.uname().release, os.geteuid(), sys.platform)
    if key not in _PROBED:
        _PROBED[key] = _probe(bwrap)
    return _PROBED[key]


def _probe(bwrap: str | None) -> tuple[str, ...]:
    found: list[str] = []
    if sys.platform == "darwin":
        return ("sandbox-exec",) if os.access(SANDBOX_EXEC, os.X_OK) else ()
    if not sys.platform.startswith("linux"):
        return ()
    if bwrap:
        try:
            done = subprocess.run(
                [bwrap, *BWRAP_BASE, "--", "/bin/true"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            done = None
        if done is not None and done.returncode == 0:
            found.append("bwrap")
    from forge_policy.floor import landlock

    if landlock.abi() >= landlock.ABI_MIN:
        found.append("landlock")
    return tuple(found)
