"""PHP (``php -r``) read for ``shell_exec``, ``system``, ``exec``, ``passthru``, ``popen``,
``proc_open``, backticks and the file functions that delete, read or write.

>>> read("echo shell_exec('git reset --hard');")
(('git reset --hard',), True)
>>> read("$f = '/etc/passwd'; echo file_get_contents($f);")
(('cat /etc/passwd',), True)
>>> read("echo 'rm -rf /';")
((), True)
"""

from __future__ import annotations

import re

from forge_policy.commands.interpreters._effects import HOME
from forge_policy.commands.interpreters._tokens import (
    Arg,
    Lexer,
    LexError,
    Script,
    Token,
    Value,
    punctuation,
    sink_first_path,
    sink_shell,
    sink_two_paths,
    unescape,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.commands.interpreters._tokens import Sink

_BLANK = re.compile(r"[ \t\r\f\v]++")
_NAME = re.compile(r"\\?+[A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*+(?:\\[A-Za-z_]\w*+)*+")
_NUMBER = re.compile(r"\d[\w.]*+")
_VAR = re.compile(r"\$++\w++")
_HEREDOC = re.compile(r"<<<[ \t]*+(?:\"(\w++)\"|'(\w++)'|(\w++))")
_INTERPOLATES = re.compile(r"\$[A-Za-z_{]|\{\$")
_PUNCT = punctuation(
    [
        *("<=>", "===", "!==", "**", "++", "--", "->", "=>", "==", "!=", "<=", ">=", "&&", "||"),
        *("??", "..", "...", "::", "+=", "-=", "*=", "/=", ".=", "%=", "??=", "<<", ">>", "?->"),
    ]
)
_TAGS = re.compile(r"<\?(?:php\b|=)?+|\?>")


def _interpolated(raw: str) -> str | None:
    if _INTERPOLATES.search(raw.replace("\\$", "")):
        return None
    return unescape(raw)


class _Lexer(Lexer):
    __slots__ = ()

    def lex(self) -> list[Token]:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char == "\n":
                self.newline()
            elif self.match(_BLANK) or self.match(_TAGS):
                pass
            elif char == "#" or text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise LexError("unclosed comment")
                self.pos = end + 2
            elif char == "'":
                self.pos += 1
                self.emit("str", "'", unescape(self.until("'"), only="\\'"))
            elif char == '"':
                self.pos += 1
                self.emit("str", '"', _interpolated(self.until('"')))
            elif char == "`":
                self.pos += 1
                self.emit("cmd", "`", _interpolated(self.until("`")))
            elif char == "<" and (heredoc := _HEREDOC.match(text, self.pos)):
                self.pos = heredoc.end()
                double, single, bare = heredoc.groups()
                tag = next(t for t in (double, single, bare) if t is not None)
                body = self.heredoc_body(tag, indented=True, trailing=True).removesuffix("\n")
                self.emit("str", "<<<", body if single is not None else _interpolated(body))
            elif char == "$" and (var := self.match(_VAR)):
                self.emit("var", var)
            elif (name := self.match(_NAME)) is not None:
                self.emit("name", name.lstrip("\\"))
            elif (number := self.match(_NUMBER)) is not None:
                self.emit("num", number)
            else:
                self.emit("op", self.operator(_PUNCT))
        return self.tokens


class _Script(Script):
    concat = "."
    assign_starts = frozenset({";", "{", "}", "(", ","})

    def canonical(self, name: str) -> str:
        return name.lower()

    def callee(self, at: int) -> tuple[str, int] | None:
        token = self.tokens[at]
        if token.kind != "name" or (at and self.tokens[at - 1].text in ("->", "::", "?->")):
            return None
        return token.text, at + 1

    def special(self, at: int) -> tuple[Value, int] | None:
        tokens = self.tokens
        token = tokens[at]
        if at + 3 < len(tokens) and tokens[at + 1].text in ("(", "["):
            key = tokens[at + 2].value
            closes = tokens[at + 3].text in (")", "]")
            if token.text.lower() == "getenv" and key == "HOME" and closes:
                return HOME, at + 4
            if token.text in ("$_SERVER", "$_ENV") and key == "HOME" and closes:
                return HOME, at + 4
        if token.text.lower() == "array" and at + 1 < len(tokens) and tokens[at + 1].text == "(":
            return self.items(at + 1)
        return None


def _command(script: Script, args: list[Arg]) -> None:
    """The first argument is the command (the others are its output, status or pipes)."""
    sink_shell(script, args[:1])


def _fopen(script: Script, args: list[Arg]) -> None:
    path = script.text(args[0] if args else None)
    if path is None:
        return
    mode = script.literal(args[1]) if len(args) > 1 else None
    if not isinstance(mode, str):
        script.found.read(path)
        script.found.unknown()
        return
    if "r" in mode or "+" in mode:
        script.found.read(path)
    if any(c in mode for c in "waxc+"):
        script.found.write(path)


def _pcntl_exec(script: Script, args: list[Arg]) -> None:
    path = script.text(args[0] if args else None)
    words = script.literal(args[1]) if len(args) > 1 else []
    if not isinstance(words, list):
        script.found.unknown()
    elif path is not None:
        script.found.argv([path, *words])


def _chmod(script: Script, args: list[Arg]) -> None:
    path = script.text(args[0] if args else None)
    token = script.tokens[args[1].start] if len(args) > 1 else None
    if path is None:
        return
    if token is None or token.kind != "num" or not token.text.isdigit():
        script.found.unknown()
        return
    script.found.chmod(int(token.text, 8), path)


def _eval(script: Script, args: list[Arg]) -> None:
    code = script.text(args[0] if args else None)
    if code is not None:
        script.read_nested(code)


_SINKS: dict[str, Sink] = {
    **dict.fromkeys(("shell_exec", "system", "exec", "passthru", "proc_open", "popen"), _command),
    "pcntl_exec": _pcntl_exec,
    "unlink": sink_first_path("rm"),
    "rmdir": sink_first_path("rmdir"),
    **dict.fromkeys(
        (
            "file_get_contents",
            "readfile",
            "file",
            "highlight_file",
            "show_source",
            "parse_ini_file",
        ),
        sink_first_path("read"),
    ),
    "fopen": _fopen,
    "file_put_contents": sink_first_path("write"),
    "mkdir": sink_first_path("mkdir"),
    "rename": sink_two_paths("move"),
    "copy": sink_two_paths("copy"),
    "symlink": sink_two_paths("link"),
    "chmod": _chmod,
    "eval": _eval,
}
_Script.sinks = _SINKS
_Script.lexer = _Lexer


def read(code: str) -> tuple[tuple[str, ...], bool]:
    """The effects of a PHP program: ``(shell lines, complete)``."""
    return _Script.read(code)
