"""Ruby (``ruby -e``) read for ``system``, ``exec``, ``spawn``, backticks, ``%x()``,
``IO.popen``, ``Open3`` and the ``FileUtils``/``File``/``Dir`` calls that delete, read or
write.

>>> read('require "fileutils"; FileUtils.rm_rf("/")')
(('rm -r -f /',), True)
>>> read("`rm -rf /home/user`")
(('rm -rf /home/user',), True)
>>> read("puts 'rm -rf /'")
((), True)
"""

from __future__ import annotations

import re
import textwrap

from forge_policy.commands.interpreters._effects import HOME, join_paths
from forge_policy.commands.interpreters._tokens import (
    Arg,
    Lexer,
    LexError,
    Script,
    Token,
    Value,
    punctuation,
    sink_paths,
    sink_shell,
    sink_two_paths,
    unescape,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.commands.interpreters._tokens import Sink

_BLANK = re.compile(r"[ \t\r\f\v]++|\\\n")
_NAME = re.compile(r"[A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*+(?:[?!](?!=))?+")
_NUMBER = re.compile(r"\d[\w.]*+")
_VAR = re.compile(r"@@?\w++|\$(?:\w++|[^\w\s])")
_PERCENT = re.compile(r"%([qQwWiIxrs]?+)([^\w\s])")
_HEREDOC = re.compile(r"<<([~-]?+)(?:\"([^\"\n]*+)\"|'([^'\n]*+)'|`([^`\n]*+)`|([A-Z_]\w*+))")
_INTERPOLATES = re.compile(r"#[{@$]")
_MODIFIERS = re.compile(r"[a-z]*+")
_PUNCT = punctuation(
    [
        *("<=>", "===", "**", "++", "--", "->", "=>", "==", "!=", "<=", ">=", "=~", "!~", "&&"),
        *("||", "..", "...", "::", "+=", "-=", "*=", "/=", "%=", "||=", "&&=", "<<", ">>", "&."),
    ]
)
_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_VALUE_AFTER = frozenset(
    {
        *("if", "unless", "while", "until", "and", "or", "not", "return", "when", "puts", "p"),
        *("print", "then", "do", "else", "elsif", "in"),
    }
)


def _interpolated(raw: str) -> str | None:
    for home in ("#{Dir.home}", "#{ENV['HOME']}", '#{ENV["HOME"]}'):
        raw = raw.replace(home, HOME)
    if _INTERPOLATES.search(raw.replace("\\#", "")):
        return None
    return unescape(raw)


class _Lexer(Lexer):
    __slots__ = ()

    def value_context(self) -> bool:
        if not self.tokens:
            return True
        last = self.tokens[-1]
        if last.kind == "name":
            return last.text in _VALUE_AFTER or (
                self.text[self.pos - 1 : self.pos] in " \t"
                and self.text[self.pos + 1 : self.pos + 2] not in " \t=\n"
            )
        return last.kind == "op" and last.text not in (")", "]", "}")

    def percent(self, kind: str, delim: str) -> None:
        close = _PAIRS.get(delim, delim)
        body = self.until(close, open_=delim if close != delim else "")
        if kind in ("w", "W", "i", "I"):
            self.emit("list", "%w", body.split())
        elif kind == "q":
            self.emit("str", "%q", unescape(body, only="\\" + delim + close))
        elif kind in ("Q", ""):
            self.emit("str", "%Q", _interpolated(body))
        elif kind == "x":
            self.emit("cmd", "%x", _interpolated(body))
        elif kind == "s":
            self.emit("str", ":", body)
        else:
            self.match(_MODIFIERS)
            self.emit("regex", "%r")

    def lex(self) -> list[Token]:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            at_line_start = self.pos == 0 or text[self.pos - 1] == "\n"
            if char == "\n":
                self.newline()
            elif self.match(_BLANK):
                pass
            elif char == "#":
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            elif at_line_start and text.startswith("=begin", self.pos):
                end = text.find("\n=end", self.pos)
                if end < 0:
                    raise LexError("unclosed =begin")
                line_end = text.find("\n", end + 1)
                self.pos = len(text) if line_end < 0 else line_end
            elif at_line_start and text.startswith("__END__", self.pos):
                break
            elif char == "'":
                self.pos += 1
                self.emit("str", "'", unescape(self.until("'"), only="\\'"))
            elif char == '"':
                self.pos += 1
                self.emit("str", '"', _interpolated(self.until('"')))
            elif char == "`":
                self.pos += 1
                self.emit("cmd", "`", _interpolated(self.until("`")))
            elif char == "%" and self.value_context() and (found := _PERCENT.match(text, self.pos)):
                self.pos = found.end()
                self.percent(found.group(1), found.group(2))
            elif (
                char == "<" and self.value_context() and (heredoc := _HEREDOC.match(text, self.pos))
            ):
                self.pos = heredoc.end()
                self.heredoc(heredoc)
            elif char == "/" and self.value_context():
                self.pos += 1
                self.until("/")
                self.match(_MODIFIERS)
                self.emit("regex", "/")
            elif char in "@$" and (var := self.match(_VAR)):
                self.emit("var", var)
            elif (name := self.match(_NAME)) is not None:
                self.emit("name", name)
            elif (number := self.match(_NUMBER)) is not None:
                self.emit("num", number)
            else:
                self.emit("op", self.operator(_PUNCT))
        return self.tokens

    def heredoc(self, found: re.Match[str]) -> None:
        flavour, double, single, command, bare = found.groups()
        tag = next(t for t in (double, single, command, bare) if t is not None)
        body = self.heredoc_body(tag, indented=bool(flavour))
        if flavour == "~":
            body = textwrap.dedent(body)
        if command is not None:
            self.emit("cmd", "<<`", _interpolated(body))
        else:
            self.emit("str", "<<", body if single is not None else _interpolated(body))


class _Script(Script):
    concat = "+"
    bare_calls = True
    stop_words = frozenset({"if", "unless", "while", "until", "and", "or", "do", "then", "rescue"})
    assign_starts = frozenset({";", "{", "}", "(", ",", "|"})

    def canonical(self, name: str) -> str:
        return name.removeprefix("Kernel.").removeprefix("Process.")

    def special(self, at: int) -> tuple[Value, int] | None:
        called = self.callee(at)
        if called is None:
            return None
        name, end = called
        tokens = self.tokens
        if name == "Dir.home":
            if end + 1 < len(tokens) and tokens[end].text == "(" and tokens[end + 1].text == ")":
                end += 2
            return HOME, end
        if name == "ENV" and end + 2 < len(tokens) and tokens[end].text == "[":
            key = tokens[end + 1].value
            if key == "HOME" and tokens[end + 2].text == "]":
                return HOME, end + 3
            return None
        if name in ("File.expand_path", "File.join") and end < len(tokens):
            if tokens[end].text == "(":
                args, after = self.args_in(end)
            else:
                args, after = self.bare_args(end)
            parts = [self.literal(arg) for arg in args]
            if not parts or not all(isinstance(p, str) for p in parts):
                return None, after
            if name == "File.expand_path":
                path = str(parts[0])
                if path == "~" or path.startswith("~/"):
                    return HOME + path[1:], after
                return path, after
            return join_paths([str(p) for p in parts]), after
        return None

    def program(self, args: list[Arg]) -> list[Arg]:
        """The arguments that make a command: not an environment hash, not ``chdir:``."""
        tokens = self.tokens
        return [
            a
            for a in args
            if tokens[a.start].text != "{"
            and not (a.start + 1 < a.end and tokens[a.start + 1].text in (":", "=>"))
            and not (tokens[a.start].kind == "op" and tokens[a.start].text == ":")
        ]


def _shell(script: Script, args: list[Arg]) -> None:
    assert isinstance(script, _Script)
    sink_shell(script, script.program(args))


def _each(action: str) -> Sink:
    inner = sink_paths(action)

    def sink(script: Script, args: list[Arg]) -> None:
        assert isinstance(script, _Script)
        inner(script, script.program(args))

    return sink


def _first(action: str) -> Sink:
    """The first argument is the path (``File.write(path, text)``)."""
    inner = sink_paths(action)

    def sink(script: Script, args: list[Arg]) -> None:
        inner(script, args[:1])

    return sink


def _open(script: Script, args: list[Arg]) -> None:
    path = script.text(args[0] if args else None)
    if path is None:
        return
    mode = script.literal(args[1]) if len(args) > 1 else "r"
    if not isinstance(mode, str):
        script.found.read(path)
        script.found.unknown()
        return
    if "r" in mode or "+" in mode:
        script.found.read(path)
    if any(c in mode for c in "wa+"):
        script.found.write(path)


def _chmod(script: Script, args: list[Arg]) -> None:
    token = script.tokens[args[0].start] if args else None
    paths = script.strings(args[1:]) if len(args) > 1 else None
    digits = (token.text if token is not None else "").lower().replace("0o", "0")
    if token is None or token.kind != "num" or not digits.isdigit() or paths is None:
        script.found.unknown()
        return
    for path in paths:
        script.found.chmod(int(digits, 8), path)


def _eval(script: Script, args: list[Arg]) -> None:
    code = script.text(args[0] if args else None)
    if code is not None:
        script.read_nested(code)


def _fu(names: str, sink: Sink) -> dict[str, Sink]:
    return {f"FileUtils.{n}": sink for n in names.split()}


_SINKS: dict[str, Sink] = {
    **dict.fromkeys(("system", "exec", "spawn"), _shell),
    **dict.fromkeys(("IO.popen", "popen"), lambda script, args: _shell(script, args[:1])),
    **{
        f"Open3.{n}": _shell
        for n in ["capture2", "capture2e", "capture3", "popen2", "popen2e", "popen3"]
    },
    **_fu("rm_rf rm_r rmtree remove_dir remove_entry remove_entry_secure", _each("rm_rf")),
    **_fu("rm remove", _each("rm")),
    "FileUtils.rm_f": _each("rm_f"),
    "FileUtils.rmdir": _each("rmdir"),
    **dict.fromkeys(("File.delete", "File.unlink"), _each("rm")),
    **dict.fromkeys(("Dir.delete", "Dir.rmdir", "Dir.unlink"), _each("rmdir")),
    **dict.fromkeys(
        ("File.read", "File.readlines", "File.foreach", "File.binread", "IO.read", "IO.readlines"),
        _each("read"),
    ),
    **dict.fromkeys(("File.open", "File.new"), _open),
    **dict.fromkeys(("File.write", "File.binwrite", "IO.write"), _first("write")),
    **_fu("mkdir mkdir_p makedirs", _each("mkdir")),
    "Dir.mkdir": _each("mkdir"),
    **dict.fromkeys(("FileUtils.mv", "FileUtils.move", "File.rename"), sink_two_paths("move")),
    **dict.fromkeys(("FileUtils.cp", "FileUtils.copy"), sink_two_paths("copy")),
    "FileUtils.cp_r": lambda script, args: _copy_r(script, args),
    **dict.fromkeys(("FileUtils.ln_s", "File.symlink"), sink_two_paths("link")),
    **dict.fromkeys(("FileUtils.chmod", "File.chmod"), _chmod),
    **dict.fromkeys(("eval", "instance_eval", "binding.eval"), _eval),
}


def _copy_r(script: Script, args: list[Arg]) -> None:
    source = script.text(args[0] if args else None)
    target = script.text(args[1] if len(args) > 1 else None)
    if source is not None and target is not None:
        script.found.copy(source, target, recursive=True)


_Script.sinks = _SINKS
_Script.lexer = _Lexer


def read(code: str) -> tuple[tuple[str, ...], bool]:
    """The effects of a Ruby program: ``(shell lines, complete)``."""
    return _Script.read(code)
