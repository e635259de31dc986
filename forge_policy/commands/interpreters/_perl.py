"""Perl (``perl -e``) read for ``system``, ``exec``, backticks, ``qx{}``, pipe ``open``s,
``unlink`` and ``File::Path``'s ``rmtree``/``remove_tree``.

>>> read('system("git reset --hard")')
(('git reset --hard',), True)
>>> read("use File::Path qw(remove_tree); remove_tree('/tmp/x', {verbose => 1})")
(('rm -r -f /tmp/x',), True)
>>> read('print "rm -rf /\\n"')
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
    sink_paths,
    sink_shell,
    sink_two_paths,
    unescape,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.commands.interpreters._tokens import Sink

_BLANK = re.compile(r"[ \t\r\f\v]++")
_NAME = re.compile(r"[A-Za-z_]\w*+(?:::\w++)*+")
_NUMBER = re.compile(r"\d[\w.]*+")
_VAR = re.compile(r"[$@%&]#?(?:\{\^?\w++\}|\$*+(?:::)?+\w++(?:::\w++)*+|\^\w|[^\w\s{])")
_MODIFIERS = re.compile(r"[a-z]*+")
_HEREDOC = re.compile(r"<<(~?)(?:\"([^\"\n]*+)\"|'([^'\n]*+)'|([A-Za-z_]\w*+))")
_INTERPOLATES = re.compile(r"[$@][\w{:$]")
_PUNCT = punctuation(
    [
        *("<=>", "**", "++", "--", "->", "=>", "==", "!=", "<=", ">=", "=~", "!~", "&&", "||"),
        *("//", "..", "...", "::", "+=", "-=", "*=", "/=", ".=", "%=", "x=", "**=", "||=", "&&="),
        *("//=", "<<", ">>"),
    ]
)
_QUOTES = frozenset({"q", "qq", "qw", "qx", "m", "qr", "s", "tr", "y"})
_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_REGEX_AFTER = frozenset(
    {
        *("split", "grep", "map", "join", "if", "unless", "and", "or", "not", "return", "push"),
        *("unshift", "when", "while", "until", "x", "lt", "gt", "le", "ge", "eq", "ne", "cmp"),
        *("print", "say", "die", "warn"),
    }
)


class _Lexer(Lexer):
    __slots__ = ()

    def value_context(self) -> bool:
        if not self.tokens:
            return True
        last = self.tokens[-1]
        if last.kind == "name":
            return last.text in _REGEX_AFTER
        return last.kind == "op" and last.text not in (")", "]", "}")

    def heredoc_context(self) -> bool:
        """``<<"EOT"`` starts a here-document unless it follows a value (``$x << 2``)."""
        if not self.tokens:
            return True
        last = self.tokens[-1]
        return not (last.kind in ("var", "num", "str") or last.text in (")", "]", "}"))

    def delimited(self) -> str:
        """The text between the delimiter at the cursor and its closing pair."""
        opener = self.text[self.pos]
        self.pos += 1
        close = _PAIRS.get(opener, opener)
        return self.until(close, open_=opener if close != opener else "")

    def quote_like(self, name: str) -> bool:
        """``q{}``, ``qq//``, ``qw()``, ``qx{}``, ``m//``, ``s///``, ``tr///``..."""
        text = self.text
        after = self.pos
        while after < len(text) and text[after] in " \t":
            after += 1
        if after >= len(text):
            return False
        delim = text[after]
        if delim.isalnum() or delim in "_,;)}\n" or text.startswith("=>", after):
            return False
        if delim == "=" or (self.tokens and self.tokens[-1].text in ("->", "{")):
            return False
        self.pos = after
        body = self.delimited()
        if name in ("s", "tr", "y"):
            if delim in _PAIRS:
                self.match(_BLANK)
                if self.pos >= len(text):
                    raise LexError("unclosed substitution")
                self.delimited()
            else:
                self.until(delim)
        self.match(_MODIFIERS)
        if name == "q":
            self.emit("str", "q", unescape(body, only="\\" + delim + _PAIRS.get(delim, "")))
        elif name == "qq":
            self.emit("str", "qq", _interpolated(body))
        elif name == "qw":
            self.emit("list", "qw", body.split())
        elif name == "qx":
            self.emit("cmd", "qx", body if delim == "'" else _interpolated(body))
        else:
            self.emit("regex", name)
        return True

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
            elif at_line_start and char == "=" and text[self.pos + 1 : self.pos + 2].isalpha():
                end = text.find("\n=cut", self.pos)
                if end < 0:
                    break
                line_end = text.find("\n", end + 1)
                self.pos = len(text) if line_end < 0 else line_end
            elif at_line_start and text.startswith(("__END__", "__DATA__"), self.pos):
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
            elif char == "<" and self.heredoc_context() and (heredoc := self.match(_HEREDOC)):
                found = _HEREDOC.match(heredoc)
                assert found is not None
                indented, double, single, bare = found.groups()
                tag = single if single is not None else (double if double is not None else bare)
                body = self.heredoc_body(tag, indented=bool(indented))
                self.emit("str", "<<", body if single is not None else _interpolated(body))
            elif char == "/" and self.value_context():
                self.pos += 1
                self.until("/")
                self.match(_MODIFIERS)
                self.emit("regex", "/")
            elif (
                char in "$@%&"
                and (char in "$@" or self.value_context())
                and (var := self.match(_VAR))
            ):
                self.emit("var", var)
            elif (name := self.match(_NAME)) is not None:
                filetest = (
                    len(name) == 1
                    and self.tokens
                    and self.tokens[-1].text == "-"
                    and text[self.pos - 2 : self.pos - 1] == "-"
                )
                if name in _QUOTES and not filetest and self.quote_like(name):
                    continue
                self.emit("name", name)
            elif (number := self.match(_NUMBER)) is not None:
                self.emit("num", number)
            else:
                self.emit("op", self.operator(_PUNCT))
        return self.tokens


def _interpolated(raw: str) -> str | None:
    """A double-quoted string's value, None when it interpolates a variable."""
    for home in ("$ENV{HOME}", "$ENV{'HOME'}", '$ENV{"HOME"}'):
        raw = raw.replace(home, HOME)
    if _INTERPOLATES.search(raw.replace("\\$", "").replace("\\@", "")):
        return None
    return unescape(raw)


class _Script(Script):
    concat = "."
    bare_calls = True
    stop_words = frozenset({"or", "and", "if", "unless", "while", "until", "for", "foreach"})

    def canonical(self, name: str) -> str:
        for prefix in ("CORE::GLOBAL::", "CORE::", "File::Path::", "File::Copy::"):
            name = name.removeprefix(prefix)
        return name

    def special(self, at: int) -> tuple[Value, int] | None:
        tokens = self.tokens
        if (
            tokens[at].text == "$ENV"
            and at + 3 < len(tokens)
            and tokens[at + 1].text == "{"
            and tokens[at + 3].text == "}"
            and (tokens[at + 2].text == "HOME" or tokens[at + 2].value == "HOME")
        ):
            return HOME, at + 4
        return None

    def strings(self, args: list[Arg]) -> list[str] | None:  # type: ignore[override]
        # a trailing option hash (``{verbose => 1}``) is not a path
        kept = [a for a in args if self.tokens[a.start].text != "{"]
        return super().strings(kept)


def _open(script: Script, args: list[Arg]) -> None:
    if len(args) < 2:
        script.found.unknown()
        return
    mode = script.literal(args[1])
    if not isinstance(mode, str):
        script.found.unknown()
        return
    if len(args) == 2:
        spec = mode.strip()
        if spec.startswith("|") or spec.endswith("|"):
            script.found.shell(spec.strip("|").strip())
            return
        for prefix in ("+<", "+>", ">>", "<", ">"):
            if spec.startswith(prefix):
                _open_path(script, prefix, spec[len(prefix) :].strip())
                return
        _open_path(script, "<", spec)
        return
    mode = mode.strip()
    if mode in ("-|", "|-"):
        if len(args) == 3:
            line = script.text(args[2])
            if line is not None:
                script.found.shell(line)
        else:
            words = script.strings(args[2:])
            if words:
                script.found.argv(words)
        return
    path = script.text(args[2])
    if path is not None:
        _open_path(script, mode, path)


def _open_path(script: Script, mode: str, path: str) -> None:
    if mode.startswith("+") or mode.startswith("<"):
        script.found.read(path)
    if mode.startswith("+") or mode.startswith(">"):
        script.found.write(path)


def _chmod(script: Script, args: list[Arg]) -> None:
    paths = script.strings(args[1:]) if len(args) > 1 else None
    token = script.tokens[args[0].start] if args else None
    if token is None or token.kind != "num" or not token.text.isdigit() or paths is None:
        script.found.unknown()
        return
    for path in paths:
        script.found.chmod(int(token.text, 8), path)


def _eval(script: Script, args: list[Arg]) -> None:
    if args and script.tokens[args[0].start].text == "{":
        return  # a block: its code is read where it stands
    code = script.text(args[0] if args else None)
    if code is not None:
        script.read_nested(code)


_SINKS: dict[str, Sink] = {
    "system": sink_shell,
    "exec": sink_shell,
    "readpipe": sink_shell,
    "unlink": sink_paths("rm"),
    "rmdir": sink_paths("rmdir"),
    "rmtree": sink_paths("rm_rf"),
    "remove_tree": sink_paths("rm_rf"),
    "mkpath": sink_paths("mkdir"),
    "make_path": sink_paths("mkdir"),
    "rename": sink_two_paths("move"),
    "move": sink_two_paths("move"),
    "copy": sink_two_paths("copy"),
    "symlink": sink_two_paths("link"),
    "truncate": lambda script, args: sink_paths("write")(script, args[:1]),
    "open": _open,
    "chmod": _chmod,
    "eval": _eval,
}
_Script.sinks = _SINKS
_Script.lexer = _Lexer


def read(code: str) -> tuple[tuple[str, ...], bool]:
    """The effects of a Perl program: ``(shell lines, complete)``."""
    return _Script.read(code)
