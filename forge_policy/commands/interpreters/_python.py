"""Python programs read with the standard library's :mod:`ast`: the calls that reach the shell
or the filesystem, with their literal arguments.

A name counts as a literal only when the program binds it exactly once, by ``name = <literal>``
(or by imports of one module), so a later rebinding in a branch or a loop cannot hide behind an
earlier value. Literals are ``str`` constants, f-strings, ``+``, ``%s`` and ``str.format`` of
literals, lists and tuples of them, ``os.path.join``/``expanduser``, ``pathlib.Path`` and
``Path.home()``, ``os.environ["HOME"]`` and ``shlex.split``. A sink whose argument is anything
else leaves the program incomplete.

>>> read("import shutil; shutil.rmtree('/')")
(('rm -r -f /',), True)
>>> read("import subprocess as sp; cmd = ['git', 'reset', '--hard']; sp.run(cmd)")
(('git reset --hard',), True)
>>> read("import os; os.system(cmd)")
((), False)
"""

from __future__ import annotations

import ast
import posixpath
import shlex
import string

from forge_policy.commands.interpreters._effects import (
    HOME,
    MAX_LITERAL,
    MAX_NESTING,
    Found,
    join_paths,
    path_word,
    word,
)
from forge_policy.errors import FactTimeout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Handler = Callable[["_Reader", ast.Call], None]

_MAX_DEPTH = 64  # of one literal expression, names followed included


class _Path(str):
    """A ``pathlib.Path`` whose value is literal."""

    __slots__ = ()


class _Ambiguous:
    """A name bound more than once, or by something that is not read."""


_AMBIGUOUS = _Ambiguous()
# methods that change a list (or dict) in place
_MUTATORS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "reverse", "sort", "update"}
    | {"setdefault", "add", "discard", "__setitem__", "__iadd__"}
)
# statements that bind their ``name``
_NAMED = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.ExceptHandler,
    ast.MatchAs,
    ast.MatchStar,
)
_BUILTINS = frozenset({"open", "exec", "eval", "compile", "__import__", "getattr", "str"})
# modules known under another name
_CANONICAL = {
    "posix": "os",
    "posixpath": "os.path",
    "pathlib.PosixPath": "pathlib.Path",
    "pathlib.PurePath": "pathlib.Path",
    "pathlib.PurePosixPath": "pathlib.Path",
    "commands": "subprocess",
}


def _canonical(name: str) -> str:
    for old, new in _CANONICAL.items():
        if name == old or name.startswith(old + "."):
            return new + name[len(old) :]
    return name


def _expanduser(value: str) -> str:
    if value == "~" or value.startswith("~/"):
        return HOME + value[1:]
    return value


def _format(template: str, args: list[object], kwargs: dict[str, object]) -> str | None:
    """``template.format(...)`` of literals, fields without conversions or format specs."""
    out: list[str] = []
    auto = 0
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        return None
    for text, field, spec, conversion in parsed:
        out.append(text)
        if field is None:
            continue
        if spec or conversion:
            return None
        value: object
        if field == "":
            value = args[auto] if auto < len(args) else None
            auto += 1
        elif field.isdigit():
            value = args[int(field)] if int(field) < len(args) else None
        else:
            value = kwargs.get(field)
        if not isinstance(value, str):
            return None
        out.append(value)
    return "".join(out)


def _percent(template: str, args: list[object]) -> str | None:
    """``template % args`` when every directive is ``%s`` (or ``%%``) and the args literal."""
    pieces = template.split("%")
    out = [pieces[0]]
    index = 0
    skip = False
    for piece in pieces[1:]:
        if skip:
            out.append(piece)
            skip = False
            continue
        if piece == "":
            out.append("%")
            skip = True
            continue
        if not piece.startswith("s") or index >= len(args):
            return None
        value = args[index]
        if not isinstance(value, str):
            return None
        out.append(value + piece[1:])
        index += 1
    return "".join(out) if index == len(args) else None


def _capped(value: object) -> object:
    if isinstance(value, str) and len(value) > MAX_LITERAL:
        return None
    return value


def _mutated(node: ast.Attribute | ast.Subscript) -> str | None:
    """The name a node changes in place (``args.append(x)``, ``args[0] = x``): no longer the
    literal it was bound to."""
    if not isinstance(node.value, ast.Name):
        return None
    if isinstance(node, ast.Attribute):
        return node.value.id if node.attr in _MUTATORS else None
    return None if isinstance(node.ctx, ast.Load) else node.value.id


def _path_method(base: _Path, method: str, args: list[object]) -> object:
    """``Path(…).expanduser()``, ``.resolve()``, ``.absolute()``, ``.joinpath(…)``, else None."""
    if method == "expanduser":
        return _Path(_expanduser(base))
    if method in ("resolve", "absolute"):
        return base
    if method == "joinpath" and all(isinstance(a, str) for a in args):
        return _Path(join_paths([base, *(str(a) for a in args)]))
    return None


def _path_function(name: str, args: list[object]) -> object:
    """``pathlib.Path(…)``, ``Path.home()``, ``Path.cwd()``, ``os.getcwd()``,
    ``os.path.join(…)`` of literal arguments, else None."""
    strings = all(isinstance(a, str) for a in args)
    if name == "pathlib.Path":
        return _Path(join_paths([str(a) for a in args]) if args else ".") if strings else None
    if name == "pathlib.Path.home" and not args:
        return _Path(HOME)
    if name in ("pathlib.Path.cwd", "os.getcwd") and not args:
        return _Path(".") if name == "pathlib.Path.cwd" else "."
    if name == "os.path.join" and strings and args:
        return join_paths([str(a) for a in args])
    return None


def _string_function(name: str, one: str) -> object:
    """A function of one literal string (``os.path.expanduser``, ``shlex.split``…), else None."""
    if name == "os.path.expanduser":
        return _expanduser(one)
    if name == "os.path.expandvars":
        value = one.replace("${HOME}", HOME).replace("$HOME", HOME)
        return value if "$" not in value else None
    if name in ("os.getenv", "os.environ.get"):
        return HOME if one == "HOME" else None
    if name in ("os.path.abspath", "os.path.realpath", "os.path.normpath", "os.fspath"):
        return str(one)
    if name == "builtins.str":
        return str(one)
    if name == "os.path.dirname":
        return posixpath.dirname(one)
    if name == "shlex.split":
        try:
            return shlex.split(one)
        except ValueError:
            return None
    return None


class _Reader:
    __slots__ = ("bindings", "depth", "found", "stars", "values")

    def __init__(self, tree: ast.AST, found: Found, depth: int) -> None:
        self.found = found
        self.depth = depth
        self.bindings: dict[str, object] = {}
        self.stars: list[str] = []
        self.values: dict[str, object] = {}
        self._bind_all(tree)

    # -- names -----------------------------------------------------------------------------

    def _bind(self, name: str, value: object) -> None:
        old = self.bindings.get(name)
        if name not in self.bindings:
            self.bindings[name] = value
        elif not (isinstance(old, str) and old == value):
            self.bindings[name] = _AMBIGUOUS

    def _bind_all(self, tree: ast.AST) -> None:
        handled: set[int] = set()
        mutated: set[str] = set()
        for node in ast.walk(tree):
            self.found.step()
            if isinstance(node, ast.Import | ast.ImportFrom):
                self._bind_import(node)
            elif isinstance(node, ast.Assign | ast.AnnAssign | ast.NamedExpr):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if node.value is not None:
                    for target in targets:
                        self._bind_target(target, node.value, handled)
            elif isinstance(node, ast.Attribute | ast.Subscript):
                name = _mutated(node)
                if name is not None:
                    mutated.add(name)
            else:
                self._bind_unread(node, handled)
        for name in mutated:  # a module's functions (``os.remove``) change nothing
            if isinstance(self.bindings.get(name), ast.expr):
                self.bindings[name] = _AMBIGUOUS

    def _bind_import(self, node: ast.Import | ast.ImportFrom) -> None:
        """``import a.b as c``, ``from m import n``; ``from m import *`` is looked up later."""
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.partition(".")[0]
                self._bind(alias.asname or top, alias.name if alias.asname else top)
            return
        module = node.module or ""
        for alias in node.names:
            if node.level:
                self._bind(alias.asname or alias.name, _AMBIGUOUS)
            elif alias.name == "*":
                self.stars.append(module)
            else:
                self._bind(alias.asname or alias.name, f"{module}.{alias.name}")

    def _bind_unread(self, node: ast.AST, handled: set[int]) -> None:
        """A name bound to what the reader does not follow: a store or ``del`` other than an
        assignment it read, a parameter, a function or class."""
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            if id(node) not in handled:
                self._bind(node.id, _AMBIGUOUS)
        elif isinstance(node, ast.arg):
            self._bind(node.arg, _AMBIGUOUS)
        elif isinstance(node, _NAMED):
            self._bind(node.name or "", _AMBIGUOUS)

    def _bind_target(self, target: ast.expr, value: ast.expr, handled: set[int]) -> None:
        if isinstance(target, ast.Name):
            handled.add(id(target))
            self._bind(target.id, value)
        elif (
            isinstance(target, ast.Tuple | ast.List)
            and isinstance(value, ast.Tuple | ast.List)
            and len(target.elts) == len(value.elts)
            and not any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts))
        ):
            for sub, val in zip(target.elts, value.elts, strict=True):
                self._bind_target(sub, val, handled)

    def qual(self, node: ast.expr, depth: int = 0) -> str | None:
        """The dotted name an expression stands for (``o.path.join`` -> ``os.path.join``)."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(node, ast.Name):
            bound = self.bindings.get(node.id)
            if isinstance(bound, str):
                return _canonical(bound)
            if isinstance(bound, ast.expr):
                return self.qual(bound, depth + 1)
            if bound is None:
                for module in self.stars:
                    if f"{_canonical(module)}.{node.id}" in _SINKS:
                        return f"{_canonical(module)}.{node.id}"
                if node.id in _BUILTINS:
                    return f"builtins.{node.id}"
            return None
        if isinstance(node, ast.Attribute):
            base = self.qual(node.value, depth + 1)
            return _canonical(f"{base}.{node.attr}") if base else None
        if isinstance(node, ast.Call) and node.args:
            func = self.qual(node.func, depth + 1)
            first = self.value(node.args[0], depth + 1)
            if func == "builtins.__import__" and isinstance(first, str):
                return _canonical(first.partition(".")[0])
            if func == "importlib.import_module" and isinstance(first, str):
                return _canonical(first)
            if func == "builtins.getattr" and len(node.args) >= 2:
                attr = self.value(node.args[1], depth + 1)
                base = self.qual(node.args[0], depth + 1)
                if base and isinstance(attr, str):
                    return _canonical(f"{base}.{attr}")
        return None

    # -- literal values --------------------------------------------------------------------

    def value(self, node: ast.expr, depth: int = 0) -> object:
        """The literal value of an expression, or None when it is not literal."""
        if depth > _MAX_DEPTH:
            return None
        self.found.step()
        return _capped(self._value(node, depth + 1))

    def _value(self, node: ast.expr, depth: int) -> object:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bytes):
                return node.value.decode("latin-1")
            return node.value if isinstance(node.value, str | int) else None
        if isinstance(node, ast.JoinedStr):
            parts: list[str] = []
            for part in node.values:
                value = (
                    self.value(part.value, depth)
                    if isinstance(part, ast.FormattedValue)
                    and part.format_spec is None
                    and part.conversion in (-1, ord("s"))
                    else self.value(part, depth)
                    if isinstance(part, ast.Constant)
                    else None
                )
                if not isinstance(value, str):
                    return None
                parts.append(value)
            return "".join(parts)
        if isinstance(node, ast.List | ast.Tuple):
            items = [self.value(e, depth) for e in node.elts]
            return items if all(isinstance(i, str | int) for i in items) else None
        if isinstance(node, ast.Name):
            if node.id not in self.values:  # once per name: ``b = a + a; c = b + b`` ...
                bound = self.bindings.get(node.id)
                self.values[node.id] = (
                    self.value(bound, depth) if isinstance(bound, ast.expr) else None
                )
            return self.values[node.id]
        if isinstance(node, ast.BinOp):
            return self._binop(node, depth)
        if isinstance(node, ast.Subscript):
            if self.qual(node.value, depth) == "os.environ":
                return HOME if self.value(node.slice, depth) == "HOME" else None
            return None
        if isinstance(node, ast.Attribute):
            base = self.value(node.value, depth)
            if isinstance(base, _Path) and node.attr == "parent":
                return _Path(posixpath.dirname(base))
            return {"os.sep": "/", "os.devnull": "/dev/null", "os.curdir": "."}.get(
                self.qual(node, depth) or ""
            )
        if isinstance(node, ast.Call):
            return self._call_value(node, depth)
        return None

    def _binop(self, node: ast.BinOp, depth: int) -> object:
        left, right = self.value(node.left, depth), self.value(node.right, depth)
        if isinstance(node.op, ast.Add) and type(left) is str and type(right) is str:
            return left + right
        paths = isinstance(left, _Path) or isinstance(right, _Path)
        if (
            isinstance(node.op, ast.Div)
            and isinstance(left, str)
            and isinstance(right, str)
            and paths
        ):
            return _Path(join_paths([left, right]))
        if isinstance(node.op, ast.Mod) and type(left) is str:
            args = right if isinstance(right, list) else [right]
            return _percent(left, args)
        return None

    def _call_value(self, node: ast.Call, depth: int) -> object:
        args = [self.value(a, depth) for a in node.args if not isinstance(a, ast.Starred)]
        if len(args) != len(node.args):
            return None
        func = node.func
        if isinstance(func, ast.Attribute):
            base = self.value(func.value, depth)
            if isinstance(base, _Path):
                return _path_method(base, func.attr, args)
            if type(base) is str:
                return self._str_method(base, node, func.attr, args, depth)
        name = self.qual(func, depth)
        if name is None:
            return None
        if len(args) == 1 and isinstance(args[0], str):
            found = _string_function(name, args[0])
            if found is not None:
                return found
        return _path_function(name, args)

    def _str_method(
        self, base: str, node: ast.Call, method: str, args: list[object], depth: int
    ) -> object:
        """``"…".format(…)``, ``" ".join([…])``, ``.split()``, ``.strip()``…, else None."""
        if method == "format" and not any(k.arg is None for k in node.keywords):
            kwargs = {str(k.arg): self.value(k.value, depth) for k in node.keywords}
            return _format(base, args, kwargs)
        if method == "join" and len(args) == 1 and isinstance(args[0], list):
            items = args[0]
            return base.join(items) if all(type(i) is str for i in items) else None
        if method == "split" and not node.keywords and len(args) <= 1:
            if not all(isinstance(a, str) for a in args):
                return None
            return base.split(str(args[0])) if args else base.split()
        if method in ("strip", "encode", "decode") and not args:
            return base.strip() if method == "strip" else base
        return None

    # -- sinks -----------------------------------------------------------------------------

    def arg(self, node: ast.Call, index: int, keyword: str | None = None) -> object:
        """Argument ``index`` (or ``keyword=``); None when absent or not literal."""
        for kw in node.keywords:
            if keyword is not None and kw.arg == keyword:
                return self.value(kw.value)
        if index < len(node.args) and not any(
            isinstance(a, ast.Starred) for a in node.args[: index + 1]
        ):
            return self.value(node.args[index])
        return None

    def text(self, node: ast.Call, index: int, keyword: str | None = None) -> str | None:
        """A string argument; a missing or non-literal one leaves the program incomplete."""
        value = self.arg(node, index, keyword)
        if isinstance(value, str):
            return value
        self.found.unknown()
        return None

    def words(self, values: object) -> list[str] | None:
        if isinstance(values, list) and all(isinstance(v, str) for v in values):
            return [str(v) for v in values]
        self.found.unknown()
        return None

    def call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute):
            base = self.value(func.value)
            if isinstance(base, _Path):
                method = _PATH_METHODS.get(func.attr)
                if method is not None:
                    method(self, node, base)
                return
        name = self.qual(func)
        if name is None and isinstance(func, ast.Attribute):
            # a receiver that is not read (a parameter, a computed module): a name that only
            # a sink has still counts as that sink
            name = _BY_ATTRIBUTE.get(func.attr) if node.args or node.keywords else None
            if name is None and func.attr in _PATH_METHODS and func.attr in _PATH_EFFECTS:
                self.found.unknown()
                return
        handler = _SINKS.get(name or "")
        if handler is not None:
            handler(self, node)

    def run(self, tree: ast.AST) -> None:
        calls: list[ast.Call] = []
        called: set[int] = set()
        references: list[ast.expr] = []
        for node in ast.walk(tree):
            self.found.step()
            if isinstance(node, ast.Call):
                calls.append(node)
                called.add(id(node.func))
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name | ast.Attribute):
                called.add(id(node.value))  # ``run = os.system``: followed where it is called
            elif isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Load):
                references.append(node)
        calls.sort(key=lambda n: (n.lineno, n.col_offset))
        for node in calls:
            self.found.step()
            self.call(node)
        for ref in references:
            # a sink handed on as a value (``map(os.system, cmds)``) runs with unread arguments
            if id(ref) not in called and (self.qual(ref) or "") in _SINKS:
                self.found.unknown()
                break


# -- sink handlers ---------------------------------------------------------------------------


def _shell(reader: _Reader, node: ast.Call) -> None:
    line = reader.text(node, 0, "cmd")
    if line is not None:
        reader.found.shell(line)


def _subprocess(reader: _Reader, node: ast.Call) -> None:
    args = reader.arg(node, 0, "args")
    shell = False
    for kw in node.keywords:
        if kw.arg == "shell":
            value = reader.value(kw.value)
            shell = bool(value) if isinstance(value, int) else True  # unknown: as a shell
        elif kw.arg is None:
            shell = True  # **options may say shell=True
    if isinstance(args, str):
        if shell:
            reader.found.shell(args)
        else:
            reader.found.argv([args])
        return
    words = reader.words(args)
    if words:
        if shell:
            reader.found.shell(words[0])
        else:
            reader.found.argv(words)


def _exec_list(skip: int, env: bool) -> Handler:
    """``os.execl``-style: ``skip`` leading arguments (a spawn mode), the path, then argv."""

    def handler(reader: _Reader, node: ast.Call) -> None:
        values = [reader.value(a) for a in node.args]
        if env:
            values = values[:-1]
        words = reader.words(values[skip:])
        if words:
            reader.found.argv([words[0], *words[2:]])

    return handler


def _exec_vector(skip: int) -> Handler:
    """``os.execv``-style: ``skip`` leading arguments, the path, then the argv list."""

    def handler(reader: _Reader, node: ast.Call) -> None:
        path = reader.text(node, skip)
        words = reader.words(reader.arg(node, skip + 1))
        if path is not None and words is not None:
            reader.found.argv([path, *words[1:]])

    return handler


def _program_args(reader: _Reader, node: ast.Call) -> None:
    words = reader.words([reader.value(a) for a in node.args])
    if words:
        reader.found.argv(words)


def _pty_spawn(reader: _Reader, node: ast.Call) -> None:
    value = reader.arg(node, 0, "argv")
    words = [value] if isinstance(value, str) else reader.words(value)
    if words:
        reader.found.argv([str(w) for w in words])


def _on_path(action: str, index: int = 0, keyword: str = "path") -> Handler:
    def handler(reader: _Reader, node: ast.Call) -> None:
        path = reader.text(node, index, keyword)
        if path is not None:
            getattr(reader.found, action)(path)

    return handler


def _two_paths(action: str, recursive: bool = False) -> Handler:
    def handler(reader: _Reader, node: ast.Call) -> None:
        source, target = reader.text(node, 0, "src"), reader.text(node, 1, "dst")
        if source is not None and target is not None:
            if action == "copy":
                reader.found.copy(source, target, recursive)
            elif action == "link":
                reader.found.link(source, target)
            else:
                reader.found.move(source, target)

    return handler


def _open_mode(reader: _Reader, path: str, mode: object) -> None:
    if not isinstance(mode, str):
        reader.found.read(path)
        reader.found.unknown()
        return
    if "r" in mode or "+" in mode or not any(c in mode for c in "wax"):
        reader.found.read(path)
    if any(c in mode for c in "wax+"):
        reader.found.write(path)


def _open(reader: _Reader, node: ast.Call) -> None:
    path = reader.arg(node, 0, "file")
    if isinstance(path, int) and not isinstance(path, bool):
        return  # a file descriptor already open
    if not isinstance(path, str):
        reader.found.unknown()
        return
    mode = reader.arg(node, 1, "mode") if len(node.args) > 1 or node.keywords else "r"
    if mode is None and not any(k.arg == "mode" for k in node.keywords) and len(node.args) < 2:
        mode = "r"
    _open_mode(reader, path, mode)


def _os_open(reader: _Reader, node: ast.Call) -> None:
    path = reader.text(node, 0, "path")
    if path is None:
        return
    flags = {
        n.attr if isinstance(n, ast.Attribute) else n.id
        for n in ast.walk(node.args[1] if len(node.args) > 1 else node)
        if isinstance(n, ast.Attribute | ast.Name)
    }
    if "O_WRONLY" not in flags:
        reader.found.read(path)
    if flags & {"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"}:
        reader.found.write(path)


def _chmod(reader: _Reader, node: ast.Call) -> None:
    path, mode = reader.text(node, 0, "path"), reader.arg(node, 1, "mode")
    if path is not None and isinstance(mode, int):
        reader.found.chmod(mode, path)
    elif path is not None:
        reader.found.unknown()


def _code(reader: _Reader, node: ast.Call) -> None:
    """``exec``/``eval`` of a literal string: read that program too. Code downloaded and run
    (``exec(urlopen(URL).read())``) is ``curl URL | python3``, and not known."""
    if node.args:
        for inner in ast.walk(node.args[0]):
            if isinstance(inner, ast.Call) and reader.qual(inner.func) in _FETCHES:
                url = reader.arg(inner, 0, "url")
                if isinstance(url, str):
                    reader.found.shell(f"curl -fsSL {word(url)} | python3")
    source = reader.text(node, 0, "source")
    if source is not None:
        if reader.depth >= MAX_NESTING:
            reader.found.unknown()
        else:
            _read_into(source, reader.found, reader.depth + 1)


_FETCHES = frozenset(
    {
        *("urllib.request.urlopen", "urllib.urlopen", "urllib2.urlopen", "requests.get"),
        *("httpx.get", "requests.request", "urllib.request.Request"),
    }
)


def _run_path(reader: _Reader, node: ast.Call) -> None:
    path = reader.text(node, 0, "path_name")
    if path is not None:
        reader.found.argv(["python3", path])


_SINKS: dict[str, Handler] = {
    **dict.fromkeys(
        (
            "os.system",
            "os.popen",
            "subprocess.getoutput",
            "subprocess.getstatusoutput",
            "asyncio.create_subprocess_shell",
            "platform.popen",
        ),
        _shell,
    ),
    **dict.fromkeys(
        (f"subprocess.{n}" for n in ("run", "call", "check_call", "check_output", "Popen")),
        _subprocess,
    ),
    "os.execl": _exec_list(0, False),
    "os.execlp": _exec_list(0, False),
    "os.execle": _exec_list(0, True),
    "os.execlpe": _exec_list(0, True),
    "os.spawnl": _exec_list(1, False),
    "os.spawnlp": _exec_list(1, False),
    "os.spawnle": _exec_list(1, True),
    "os.spawnlpe": _exec_list(1, True),
    **dict.fromkeys(("os.execv", "os.execvp", "os.execve", "os.execvpe"), _exec_vector(0)),
    **dict.fromkeys(("os.spawnv", "os.spawnvp", "os.spawnve", "os.spawnvpe"), _exec_vector(1)),
    **dict.fromkeys(("os.posix_spawn", "os.posix_spawnp"), _exec_vector(0)),
    "asyncio.create_subprocess_exec": _program_args,
    "pty.spawn": _pty_spawn,
    "shutil.rmtree": _on_path("rm_rf"),
    "os.remove": _on_path("rm"),
    "os.unlink": _on_path("rm"),
    "os.rmdir": _on_path("rmdir"),
    "os.removedirs": _on_path("rmdir", keyword="name"),
    "os.truncate": _on_path("write"),
    "os.mkdir": _on_path("mkdir"),
    "os.makedirs": _on_path("mkdir", keyword="name"),
    "os.rename": _two_paths("move"),
    "os.renames": _two_paths("move"),
    "os.replace": _two_paths("move"),
    "shutil.move": _two_paths("move"),
    "shutil.copy": _two_paths("copy"),
    "shutil.copy2": _two_paths("copy"),
    "shutil.copyfile": _two_paths("copy"),
    "shutil.copytree": _two_paths("copy", recursive=True),
    "os.symlink": _two_paths("link"),
    "os.chmod": _chmod,
    "os.open": _os_open,
    "builtins.open": _open,
    "io.open": _open,
    "codecs.open": _open,
    "builtins.exec": _code,
    "builtins.eval": _code,
    "runpy.run_path": _run_path,
}

# attribute names no other common library uses for something harmless
_BY_ATTRIBUTE = {
    "system": "os.system",
    "popen": "os.popen",
    "rmtree": "shutil.rmtree",
    "check_output": "subprocess.check_output",
    "check_call": "subprocess.check_call",
    "Popen": "subprocess.Popen",
    "getoutput": "subprocess.getoutput",
    "getstatusoutput": "subprocess.getstatusoutput",
    "create_subprocess_shell": "asyncio.create_subprocess_shell",
    "create_subprocess_exec": "asyncio.create_subprocess_exec",
    **{f"exec{s}": f"os.exec{s}" for s in ("l", "lp", "le", "lpe", "v", "vp", "ve", "vpe")},
    **{f"spawn{s}": f"os.spawn{s}" for s in ("l", "lp", "le", "lpe", "v", "vp", "ve", "vpe")},
}


def _path_open(reader: _Reader, node: ast.Call, path: str) -> None:
    _open_mode(reader, path, reader.arg(node, 0, "mode") if node.args or node.keywords else "r")


def _path_target(action: str) -> Callable[[_Reader, ast.Call, str], None]:
    def handler(reader: _Reader, node: ast.Call, path: str) -> None:
        target = reader.text(node, 0, "target")
        if target is None:
            return
        if action == "link":
            reader.found.link(target, path)
        else:
            reader.found.move(path, target)

    return handler


def _path_chmod(reader: _Reader, node: ast.Call, path: str) -> None:
    mode = reader.arg(node, 0, "mode")
    if isinstance(mode, int):
        reader.found.chmod(mode, path)
    else:
        reader.found.unknown()


_PATH_METHODS: dict[str, Callable[[_Reader, ast.Call, str], None]] = {
    "unlink": lambda reader, node, path: reader.found.rm(path),
    "rmdir": lambda reader, node, path: reader.found.rmdir(path),
    "read_text": lambda reader, node, path: reader.found.read(path),
    "read_bytes": lambda reader, node, path: reader.found.read(path),
    "write_text": lambda reader, node, path: reader.found.write(path),
    "write_bytes": lambda reader, node, path: reader.found.write(path),
    "touch": lambda reader, node, path: reader.found.shell(f"touch {path_word(path)}"),
    "mkdir": lambda reader, node, path: reader.found.mkdir(path),
    "open": _path_open,
    "rename": _path_target("move"),
    "replace": _path_target("move"),
    "symlink_to": _path_target("link"),
    "chmod": _path_chmod,
}
# methods that change or read files, when their receiver could not be read
_PATH_EFFECTS = frozenset(
    {"unlink", "rmdir", "read_text", "read_bytes", "write_text", "write_bytes", "symlink_to"}
)


def _read_into(code: str, found: Found, depth: int) -> None:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        found.unknown()
        return
    try:
        reader = _Reader(tree, found, depth)
        reader.run(tree)
    except RecursionError:
        found.unknown()


def read(code: str) -> tuple[tuple[str, ...], bool]:
    """The effects of a Python program: ``(shell lines, complete)``."""
    found = Found()
    try:
        _read_into(code, found, 0)
    except FactTimeout:
        found.unknown()
    return found.effects()
