"""The methods attrs generates, compiled once per install and then read back: the cold hook's
largest single cost after starting Python.

attrs writes each class's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` ... as Python
source and :func:`compile` s it (its ``_compile_and_eval``) every time the class is built, that
is in every process: in a cold hook (an allow or a hard block) ~44 compilations, ~64M of its
~340M instructions, mostly parsing. The source is a pure function of the class, so the code
object is too: :func:`compile_`, put in place of :func:`compile` while attrs is imported
(its own classes) and then as ``attr._make``'s ``compile``, answers an attrs script it has
seen from :data:`_cache`, keyed by the script itself, its file name and its compiler flags
(exactly what the code object depends on); anything else is compiled as it would be. One part
of a script is not a function of the class: ``__hash__`` starts with ``hash()`` of a name,
which changes with the process's hash seed; the cache keeps that script with :data:`_SEED` in
its place and puts this process's number into the code's constants (:func:`_swap`).

It is also :mod:`typing`'s ``compile``: a ``NamedTuple`` under ``from __future__ import
annotations`` checks each string annotation by compiling it (:class:`typing.ForwardRef`), ~32
on the cold path, and the first :func:`compile` of a process builds the interpreter's 119 AST
classes (~9M instructions): with every compilation a hit, a cold hook compiles nothing.

After the answer the hook writes the new ones (:func:`save`) beside forge_policy's own bytecode,
in its ``__pycache__`` folder, the way Python writes a ``.pyc``: same owner, same trust (whoever
can write there can already write forge_policy's ``.pyc`` files; the installation is
governance, :mod:`forge_policy.facts.controls`), same version guard (the interpreter's bytecode
magic number leads the file, the cache tag and optimisation level name it). A missing,
unreadable, foreign or damaged file is an empty cache: everything is compiled as before.
Nothing is written under ``-B`` / ``PYTHONDONTWRITEBYTECODE``, or where the folder is not
writable.
"""

from __future__ import annotations

import builtins
import contextlib
import marshal
import os
import sys
from importlib._bootstrap_external import MAGIC_NUMBER  # (frozen: no import)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType

#: The compiler flags a ``compile()`` call inherits from its caller's code (CPython's
#: ``PyCF_MASK``: the ``__future__`` features' flags, without ``nested_scopes``' ``CO_NESTED``,
#: which every nested function's code carries).
_FUTURE = 0x20000 | 0x40000 | 0x80000 | 0x100000 | 0x200000 | 0x400000 | 0x800000 | 0x1000000
#: attrs' file names for the scripts it generates.
_ATTRS = "<attrs generated "
#: :class:`typing.ForwardRef`'s file name and mode ``eval``: a string annotation of a
#: ``NamedTuple`` (attrs' own, the cache's, the audit log's ...), checked by compiling it.
_FORWARD = "<string>"
#: The longest forward reference kept (an annotation, not a program).
_FORWARD_SIZE = 200
#: The file's first line, after the magic number.
_HEADER = b"forge-policy attrs code 1\n"
#: What the cached ``__hash__`` scripts hold in place of the class's seeded hash (no ``hash()``
#: of a string is this: it is out of the range of ``sys.hash_info.width``'s 64 bits).
_SEED = 2**64 + 0x5EED
#: Entries kept at most: a file past it starts over with this process's new ones.
LIMIT = 600

_compile = builtins.compile
_cache: dict[tuple[str, str, int], CodeType] | None = None
_new: dict[tuple[str, str, int], CodeType] = {}


def path() -> str:
    """The cache file: ``forge_policy/__pycache__/attrs-code.<cache tag>[.opt-N].marshal``."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    opt = f".opt-{sys.flags.optimize}" if sys.flags.optimize else ""
    name = f"attrs-code.{sys.implementation.cache_tag}{opt}.marshal"
    return os.path.join(package, "__pycache__", name)


def _read() -> dict[tuple[str, str, int], CodeType]:
    try:
        with open(path(), "rb") as file:
            data = file.read()
        start = len(MAGIC_NUMBER) + len(_HEADER)
        if data[:start] != MAGIC_NUMBER + _HEADER:
            return {}
        entries = marshal.loads(data[start:])
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if type(entries) is not dict:
        return {}
    code_type = type(_read.__code__)
    return {
        key: code
        for key, code in entries.items()
        if type(key) is tuple
        and len(key) == 3
        and type(key[0]) is str
        and type(key[1]) is str
        and type(key[2]) is int
        and type(code) is code_type
    }


def _unseeded(source: str, filename: str) -> tuple[int | None, str]:
    """An attrs ``__hash__`` starts its tuple with the class's ``hash()`` of a name, a number
    that changes with every process's hash seed: that line with :data:`_SEED` instead, and the
    number (``None``, the source as it is, when there is none)."""
    if "def __hash__(" not in source:
        return None, source
    name = filename[len(_ATTRS) : -1].partition(" ")[2]
    for qualified in (name, name.rpartition("-")[0]):  # (attrs' "-N" for a name seen before)
        type_hash = hash(f"{_ATTRS}hash {qualified}>")
        line = f" {type_hash},\n"
        if qualified and source.count(line) == 1 and str(_SEED) not in source:
            return type_hash, source.replace(line, f" {_SEED},\n")
    return None, source


def _swap(code: CodeType, type_hash: int) -> CodeType:
    """``code`` with the number :data:`_SEED` stands for (in its functions' constants)."""
    consts = tuple(
        type_hash
        if type(const) is int and const == _SEED
        else _swap(const, type_hash)
        if type(const) is type(code)
        else const
        for const in code.co_consts
    )
    changed = any(a is not b for a, b in zip(consts, code.co_consts, strict=True))
    return code.replace(co_consts=consts) if changed else code


def compile_(
    source: object,
    filename: object,
    mode: str,
    flags: int = 0,
    dont_inherit: bool = False,
    optimize: int = -1,
    **more: object,
) -> object:
    """:func:`compile` as its caller would get it; an attrs script or a forward reference seen
    before from the cache."""
    if not dont_inherit:  # what compile() itself would take from its caller: its future flags
        flags |= sys._getframe(1).f_code.co_flags & _FUTURE
    if (
        type(source) is str
        and type(filename) is str
        and (
            (mode == "exec" and filename.startswith(_ATTRS))
            or (mode == "eval" and filename == _FORWARD and len(source) <= _FORWARD_SIZE)
        )
        and optimize == -1
        and not more
        and not flags & ~_FUTURE
    ):
        type_hash, source = _unseeded(source, filename)
        if type_hash is None and "def __hash__(" in source:  # a seeded script not understood
            return _compile(source, filename, mode, flags, True)
        global _cache
        if _cache is None:
            _cache = _read()
        key = (filename, source, flags)
        code = _cache.get(key)
        if code is None:
            code = _compile(source, filename, mode, flags, True)
            _cache[key] = _new[key] = code
        return code if type_hash is None else _swap(code, type_hash)
    return _compile(source, filename, mode, flags, True, optimize, **more)  # type: ignore[call-overload]


def save() -> None:
    """Write what this process compiled to the cache file (atomically); never raises."""
    if not _new or sys.dont_write_bytecode:
        return
    entries = _read()
    entries.update(_new)
    if len(entries) > LIMIT:  # (attrs or the classes changed a lot: start over)
        entries = dict(_new)
    target = path()
    temporary = f"{target}.{os.getpid()}.tmp"
    try:
        data = MAGIC_NUMBER + _HEADER + marshal.dumps(entries)
        with open(temporary, "wb") as file:
            file.write(data)
        os.replace(temporary, target)
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return
    _new.clear()
