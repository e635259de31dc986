"""JavaScript (``node -e``) read for ``child_process`` and ``fs`` calls.

Modules are followed through ``require("child_process")``, ``import … from "node:fs"``,
destructuring (``const {execSync: run} = require(...)``) and the core modules ``node -e`` and
``node -p`` expose as globals (``fs.rmSync(...)`` without a ``require``).

>>> read("require('child_process').execSync('rm -rf ~')")
(('rm -rf ~',), True)
>>> read("const fs = require('fs'); fs.rmSync('/', {recursive: true})")
(('rm -r -f /',), True)
>>> read("console.log('rm -rf /')")
((), True)
"""

from __future__ import annotations

import re

from forge_policy.commands.interpreters._effects import HOME, Found, join_paths
from forge_policy.commands.interpreters._tokens import (
    Arg,
    Lexer,
    LexError,
    Script,
    Token,
    Value,
    next_of,
    punctuation,
    sink_first_path,
    sink_two_paths,
    unescape,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.commands.interpreters._tokens import Sink

_BLANK = re.compile(r"[ \t\r\f\v\ufeff\xa0]++")
_NAME = re.compile(r"[A-Za-z_$\u0080-\uffff][\w$\u0080-\uffff]*+")
_NUMBER = re.compile(r"\.?\d[\w.]*+")
_PUNCT = punctuation(
    [
        *("===", "!==", "...", "**=", "<<=", ">>=", ">>>", "??", "?.", "=>", "==", "!=", "<="),
        *(">=", "&&", "||", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "**", "<<"),
        *(">>",),
    ]
)
_REGEX_AFTER = frozenset(
    {
        *("return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case"),
        *("do", "else", "yield", "await"),
    }
)
_CORE = frozenset({"fs", "child_process", "os", "path", "vm"})


class _Lexer(Lexer):
    __slots__ = ("braces",)

    def __init__(self, text: str, found: Found) -> None:
        super().__init__(text, found)
        self.braces: list[bool] = []  # True: the brace closes a template's ${

    def regex_allowed(self) -> bool:
        if not self.tokens:
            return True
        last = self.tokens[-1]
        if last.kind == "name":
            return last.text in _REGEX_AFTER
        return last.kind == "op" and last.text not in (")", "]", "}")

    def template(self, first: bool) -> None:
        """A template literal from the cursor; ``${`` hands back to the lexer."""
        raw: list[str] = []
        text = self.text
        while True:
            hit = next_of(text, self.pos, "`\\$")
            if hit < 0:
                raise LexError("unclosed template literal")
            raw.append(text[self.pos : hit])
            char = text[hit]
            if char == "\\":
                raw.append(text[hit : hit + 2])
                self.pos = hit + 2
            elif char == "$" and text.startswith("${", hit):
                self.pos = hit + 2
                self.emit("str", "`", None)
                self.braces.append(True)
                return
            elif char == "$":
                raw.append("$")
                self.pos = hit + 1
            else:
                self.pos = hit + 1
                value = unescape("".join(raw)) if first else None
                self.emit("str", "`", value)
                return
            self.found.step()

    def lex(self) -> list[Token]:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char == "\n":
                self.newline()
            elif self.match(_BLANK):
                pass
            elif text.startswith("//", self.pos) or (self.pos == 0 and text.startswith("#!")):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise LexError("unclosed comment")
                self.pos = end + 2
            elif char in "'\"":
                self.pos += 1
                raw = self.until(char)
                self.emit("str", char, unescape(raw))
            elif char == "`":
                self.pos += 1
                self.template(first=True)
            elif char == "/" and self.regex_allowed():
                self.pos += 1
                self.regex()
            elif (name := self.match(_NAME)) is not None:
                self.emit("name", name)
            elif (number := self.match(_NUMBER)) is not None:
                self.emit("num", number)
            else:
                op = self.operator(_PUNCT)
                if op == "{":
                    self.braces.append(False)
                elif op == "}" and self.braces and self.braces.pop():
                    self.template(first=False)
                    continue
                self.emit("op", op)
        return self.tokens

    def regex(self) -> None:
        text = self.text
        in_class = False
        while self.pos < len(text):
            char = text[self.pos]
            if char == "\\":
                self.pos += 2
                continue
            if char == "\n":
                break
            self.pos += 1
            if char == "[":
                in_class = True
            elif char == "]":
                in_class = False
            elif char == "/" and not in_class:
                self.match(_NAME)
                self.emit("regex", "/")
                return
        raise LexError("unclosed regular expression")


def _module(name: str) -> str:
    name = name.removeprefix("node:")
    return {"fs/promises": "fs", "fs.promises": "fs"}.get(name, name)


class _Script(Script):
    concat = "+"
    assign_starts = frozenset({";", "{", "}", "(", ",", "const", "let", "var"})

    def __init__(self, tokens: list[Token], found: Found, depth: int) -> None:
        self.refs: dict[str, str] = {}
        super().__init__(tokens, found, depth)

    def _bind_all(self) -> None:
        self._modules()  # first: a literal may call a module's function (``o.homedir()``)
        super()._bind_all()

    def _modules(self) -> None:
        """Names bound to modules or their members: requires, imports, destructuring."""
        tokens = self.tokens
        for at, token in enumerate(tokens):
            self.found.step()
            if token.kind == "name" and token.text == "import" and at + 1 < len(tokens):
                self._import(at + 1)
            elif token.kind == "op" and token.text == "=" and at:
                source = self._source(at + 1)
                if source is None:
                    continue
                before = tokens[at - 1]
                if before.kind == "name":
                    self.refs[before.text] = source
                elif before.text == "}":
                    start = self._opening(at - 1)
                    if start is not None:
                        self._members(start + 1, at - 1, source)

    def _opening(self, close_at: int) -> int | None:
        depth = 0
        for at in range(close_at, max(-1, close_at - 400), -1):
            text = self.tokens[at].text
            if text == "}":
                depth += 1
            elif text == "{":
                depth -= 1
                if depth == 0:
                    return at
        return None

    def _source(self, at: int) -> str | None:
        """The module an expression stands for: ``require("fs")``, ``await import("fs")``,
        a chain over a bound name (``cp.execSync``)."""
        tokens = self.tokens
        if at < len(tokens) and tokens[at].text == "await":
            at += 1
        called = self.callee(at) if at < len(tokens) else None
        if called is None:
            return None
        name, end = called
        if end < len(tokens) and tokens[end].text in ("(", "[", "+"):
            return None
        return name if name.partition(".")[0] in _CORE else None

    def _members(self, start: int, end: int, module: str) -> None:
        tokens = self.tokens
        at = start
        while at < end:
            if tokens[at].kind == "name":
                name = tokens[at].text
                if at + 2 < end and tokens[at + 1].text in (":", "as"):
                    self.refs[tokens[at + 2].text] = f"{module}.{name}"
                    at += 3
                    continue
                self.refs[name] = f"{module}.{name}"
            at += 1

    def _import(self, at: int) -> None:
        tokens = self.tokens
        end = at
        if at < len(tokens) and tokens[at].text in ("(", "."):
            return  # import("fs"), import.meta: an expression, read as a callee
        while end < len(tokens) and end - at < 200 and tokens[end].text not in ("from", ";"):
            end += 1
        if end + 1 >= len(tokens) or tokens[end + 1].kind != "str":
            return
        module = _module(str(tokens[end + 1].value or ""))
        at_ = at
        while at_ < end:
            token = tokens[at_]
            if token.text == "{":
                close = self.skip_group(at_) - 1
                self._members(at_ + 1, close, module)
                at_ = close + 1
            elif token.text == "*" and at_ + 2 < end and tokens[at_ + 1].text == "as":
                self.refs[tokens[at_ + 2].text] = module
                at_ += 3
            elif token.kind == "name":
                self.refs[token.text] = module
                at_ += 1
            else:
                at_ += 1

    def callee(self, at: int) -> tuple[str, int] | None:
        tokens = self.tokens
        token = tokens[at]
        if token.kind != "name" or (at and tokens[at - 1].text in (".", "?.")):
            return None
        end = at + 1
        if (
            token.text in ("require", "import")
            and at + 3 < len(tokens)
            and tokens[at + 1].text == "("
            and tokens[at + 2].kind == "str"
            and tokens[at + 3].text == ")"
        ):
            names = [_module(str(tokens[at + 2].value or ""))]
            end = at + 4
        else:
            names = [self.refs.get(token.text, token.text)]
        while end + 1 < len(tokens):
            if tokens[end].text in (".", "?.") and tokens[end + 1].kind == "name":
                names.append(tokens[end + 1].text)
                end += 2
            elif (
                tokens[end].text == "["
                and tokens[end + 1].kind == "str"
                and end + 2 < len(tokens)
                and tokens[end + 2].text == "]"
            ):
                names.append(str(tokens[end + 1].value))
                end += 3
            else:
                break
        return _module(".".join(names)).replace("fs.promises.", "fs."), end

    def canonical(self, name: str) -> str:
        if name in self.sinks:
            return name
        last = name.rpartition(".")[2]
        return _BY_NAME.get(last, name)

    def special(self, at: int) -> tuple[Value, int] | None:
        called = self.callee(at)
        if called is None:
            return None
        name, end = called
        tokens = self.tokens
        if name in ("process.env.HOME", "process.env.USERPROFILE"):
            return HOME, end
        is_call = end < len(tokens) and tokens[end].text == "("
        if name == "os.homedir" and is_call:
            return HOME, self.skip_group(end)
        if name in ("path.join", "path.resolve", "path.posix.join") and is_call:
            args, after = self.args_in(end)
            parts = [self.literal(arg) for arg in args]
            if parts and all(isinstance(p, str) for p in parts):
                return join_paths([str(p) for p in parts]), after
            return None, after
        return None

    def options(self, arg: Arg | None) -> set[str]:
        """The keys set to ``true`` in an object literal argument."""
        if arg is None or self.tokens[arg.start].text != "{":
            return set()
        tokens = self.tokens
        return {
            tokens[at].text
            for at in range(arg.start + 1, arg.end - 2)
            if tokens[at].kind == "name"
            and tokens[at + 1].text == ":"
            and tokens[at + 2].text == "true"
        }


def _exec(script: Script, args: list[Arg]) -> None:
    line = script.text(args[0] if args else None)
    if line is not None:
        script.found.shell(line)


def _spawn(script: Script, args: list[Arg]) -> None:
    assert isinstance(script, _Script)
    program = script.text(args[0] if args else None)
    if program is None:
        return
    words: list[str] = []
    rest = args[1:]
    if rest and script.tokens[rest[0].start].text != "{":
        listed = script.literal(rest[0])
        if not isinstance(listed, list):
            script.found.unknown()
            return
        words = listed
        rest = rest[1:]
    if "shell" in script.options(rest[0] if rest else None):
        script.found.shell(" ".join([program, *words]))
    else:
        script.found.argv([program, *words])


def _fork(script: Script, args: list[Arg]) -> None:
    path = script.text(args[0] if args else None)
    if path is not None:
        script.found.argv(["node", path])


def _remove(directory: bool) -> Sink:
    def sink(script: Script, args: list[Arg]) -> None:
        assert isinstance(script, _Script)
        path = script.text(args[0] if args else None)
        if path is None:
            return
        options = script.options(args[1] if len(args) > 1 else None)
        # options that are not an object literal may say recursive: read them as if they did
        unread = len(args) > 1 and script.tokens[args[1].start].text != "{"
        if "recursive" in options or unread:
            script.found.rm_rf(path)
        elif directory:
            script.found.rmdir(path)
        else:
            script.found.rm(path, force="force" in options)

    return sink


def _copy(script: Script, args: list[Arg]) -> None:
    assert isinstance(script, _Script)
    source = script.text(args[0] if args else None)
    target = script.text(args[1] if len(args) > 1 else None)
    if source is not None and target is not None:
        options = script.options(args[2] if len(args) > 2 else None)
        script.found.copy(source, target, "recursive" in options)


def _open(script: Script, args: list[Arg]) -> None:
    path = script.text(args[0] if args else None)
    if path is None:
        return
    flags = script.literal(args[1]) if len(args) > 1 else "r"
    if not isinstance(flags, str):
        script.found.read(path)
        script.found.unknown()
        return
    if "r" in flags or "+" in flags:
        script.found.read(path)
    if any(c in flags for c in "wa+"):
        script.found.write(path)


def _chmod(script: Script, args: list[Arg]) -> None:
    path = script.text(args[0] if args else None)
    if path is None:
        return
    if len(args) > 1:
        token = script.tokens[args[1].start]
        raw = str(token.value) if token.kind == "str" else token.text
        digits = raw.lower().removeprefix("0o")
        if args[1].end == args[1].start + 1 and digits.isdigit() and set(digits) <= set("01234567"):
            script.found.chmod(int(digits, 8), path)
            return
    script.found.unknown()


def _evaluate(last: bool) -> Sink:
    """Code in a string: the first argument (``eval``), or the last (``Function``'s body)."""

    def sink(script: Script, args: list[Arg]) -> None:
        code = script.text((args[-1] if last else args[0]) if args else None)
        if code is None:
            return
        script.read_nested(code)

    return sink


def _fs(names: str, sink: Sink) -> dict[str, Sink]:
    return {f"fs.{n}": sink for n in names.split()}


_SINKS: dict[str, Sink] = {
    **{f"child_process.{n}": _exec for n in ("exec", "execSync")},
    **{f"child_process.{n}": _spawn for n in ["spawn", "spawnSync", "execFile", "execFileSync"]},
    "child_process.fork": _fork,
    **_fs("rmSync rm", _remove(directory=False)),
    **_fs("rmdirSync rmdir", _remove(directory=True)),
    **_fs("unlinkSync unlink", sink_first_path("rm")),
    **_fs("readFileSync readFile createReadStream", sink_first_path("read")),
    **_fs(
        "writeFileSync writeFile appendFileSync appendFile createWriteStream truncateSync truncate",
        sink_first_path("write"),
    ),
    **_fs("mkdirSync mkdir", sink_first_path("mkdir")),
    **_fs("renameSync rename", sink_two_paths("move")),
    **_fs("copyFileSync copyFile cpSync cp", _copy),
    **_fs("symlinkSync symlink", sink_two_paths("link")),
    **_fs("chmodSync chmod", _chmod),
    **_fs("openSync open", _open),
    **{n: _evaluate(last=False) for n in ("eval", "vm.runInThisContext", "vm.runInNewContext")},
    "vm.Script": _evaluate(last=False),
    "Function": _evaluate(last=True),
}
# names only these sinks have, whatever their receiver
_BY_NAME = {
    "execSync": "child_process.execSync",
    "spawnSync": "child_process.spawnSync",
    "execFileSync": "child_process.execFileSync",
    "rmSync": "fs.rmSync",
    "rmdirSync": "fs.rmdirSync",
    "unlinkSync": "fs.unlinkSync",
    "readFileSync": "fs.readFileSync",
    "writeFileSync": "fs.writeFileSync",
}
_Script.sinks = _SINKS
_Script.lexer = _Lexer


def read(code: str) -> tuple[tuple[str, ...], bool]:
    """The effects of a JavaScript program: ``(shell lines, complete)``."""
    return _Script.read(code)
