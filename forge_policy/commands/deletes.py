"""What the programs of a command delete recursively, and where that is relative to the project.

A recursive delete is ``rm -r`` (``-R``, ``--recursive``), ``find … -delete`` and ``rsync
--delete`` (of what the destination holds), however the program was reached
(:mod:`forge_policy.commands.execution`: ``xargs``, ``find -exec``, ``busybox``, interpreter code).
Each target gets a **scope**, checked in this order:

=========  ===================================================================================
root       ``/`` or everything in it (``/*``)
home       the home folder or everything in it (``~``, ``$HOME/*``)
project    the project folder (the event's cwd, unless that is ``/`` or the home folder),
           everything in it (``*``, ``.``), or a folder that holds it (``..``, ``/tmp`` when
           the project lives there)
inside     a path inside the project (``build/``, ``./dist``)
temp       a path inside a temporary directory, or everything in one (``/tmp/x``,
           ``$TMPDIR/x``, ``/var/tmp/*``), written as such: a relative path that leaves the
           project is outside it wherever the project lives, and on a remote host (``ssh``)
           nothing is known to be temporary or inside the project
outside    any other path (``/etc``, ``~/Documents``, ``../other``)
unknown    a target the command line does not decide: ``$VAR``, ``$(…)``, the words ``xargs``
           reads from a pipe, what a narrowed ``find`` finds, a remote host's relative path
=========  ===================================================================================

>>> from forge_policy.commands.execution import runs
>>> for run in runs("cd /p && rm -rf build ../q /", "/p"):
...     for delete in recursive_deletes(run, "/p"): print(delete)
inside forced: /p/build by rm -r -f build ../q /
outside forced: /q by rm -r -f build ../q /
root forced: / by rm -r -f build ../q /
"""

from __future__ import annotations

import functools
import os

import attrs

from forge_policy._budget import read_outside
from forge_policy.commands.execution import UNKNOWN, Run, find_walk, opaque
from forge_policy.commands.paths import expand_path
from forge_policy.commands.shell import split_options

_TEMP_ROOTS = ("/tmp", "/var/tmp", "/private/tmp", "/dev/shm")


@attrs.define(eq=False, repr=False)
class Delete:
    """One target of a recursive delete.

    >>> from forge_policy.commands.execution import Run
    >>> str(Delete("/", "root", True, Run(["rm", "-r", "-f", "/"], "/p", "xargs")))
    'root forced: / by rm -r -f / reached through xargs'
    """

    path: str
    scope: str
    forced: bool
    run: Run

    def __str__(self) -> str:
        forced = " forced" if self.forced else ""
        return f"{self.scope}{forced}: {self.path} by {self.run.reading}"


def recursive_deletes(run: Run, project: str) -> list[Delete]:
    """The recursive deletes of one run, each with its scope relative to ``project``."""
    argv = run.argv
    name = argv[0] if argv else ""
    if name == "rm":
        written, operands = split_options(argv[1:])
        options = set(written)
        if not ({"-r", "-R", "--recursive"} & options):
            return []
        forced = bool({"-f", "--force"} & options)
        targets = operands  # none: rm deletes nothing (it never reads names on stdin)
    elif name == "rsync" and any(a.startswith("--delete") for a in argv):
        _options, operands = split_options(argv[1:])
        # --delete empties the destination of what the source lacks: its contents
        forced, targets = True, [os.path.join(operands[-1], "*")] if len(operands) > 1 else []
    elif name == "find":
        roots, filtered, removes = find_walk(argv)
        if not removes:
            return []
        forced, targets = True, [UNKNOWN] if filtered else roots
    else:
        return []
    found: list[Delete] = []
    for word in targets:
        path, where = scope(word, run.cwd, project)
        found.append(Delete(path, where, forced, run))
    return found


def scope(word: str, cwd: str, project: str) -> tuple[str, str]:
    """``(absolute path, scope)`` of one delete operand (see the module doc).

    >>> scope("*", "/p", "/p"), scope("/tmp/x", "/p", "/p"), scope("$X", "/p", "/p")
    (('/p/*', 'project'), ('/tmp/x', 'temp'), ('$X', 'unknown'))
    """
    if not word or opaque(word):
        return word, "unknown"
    text = expand_path(word)
    if text.startswith("~") or (not cwd and not text.startswith("/")):
        return word, "unknown"  # ~user that does not exist here; a remote relative path
    path = os.path.normpath(os.path.join(cwd, text))
    folder, name = os.path.split(path)
    whole = path
    if name and not name.strip("*.?"):  # "*", ".*": everything in the folder
        whole = folder
    elif name and set(name) & set("*?["):
        whole = os.path.join(folder, "x")  # some entries of the folder
    local = bool(cwd)
    root = os.path.normpath(project) if project and local else ""
    if root in ("/", _home()):
        root = ""  # a "project" that is the whole disk or the home folder bounds nothing
    where = _where(whole, root)
    if where == "outside" and local and text.startswith("/"):
        temp = _temp_roots()
        inside = whole != path and whole in temp  # everything in /tmp, not /tmp itself
        if inside or any(whole.startswith(root + "/") for root in temp):
            where = "temp"
    return path, where


def _where(path: str, project: str) -> str:
    if path == "/":
        return "root"
    if path == _home():
        return "home"
    if project and (path == project or project.startswith(path.rstrip("/") + "/")):
        return "project"
    if project and path.startswith(project.rstrip("/") + "/"):
        return "inside"
    return "outside"


def _home() -> str:
    read_outside()  # the environment decides
    return (os.environ.get("HOME") or os.path.expanduser("~")).rstrip("/") or "/"


def _temp_roots() -> tuple[str, ...]:
    read_outside()
    return _temp_roots_for(os.environ.get("TMPDIR", ""))


@functools.cache
def _temp_roots_for(tmpdir: str) -> tuple[str, ...]:
    import tempfile  # ~8 ms (shutil, random, bz2, lzma): only a delete's check pays it

    roots = list(_TEMP_ROOTS)
    for value in (tmpdir, tempfile.gettempdir()):
        value = value.rstrip("/")
        if value and value not in roots:
            roots.append(value)
    return tuple(roots)
