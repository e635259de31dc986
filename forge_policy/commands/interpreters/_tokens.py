"""A tokenizer-level reader for JavaScript, Perl, Ruby and PHP: not a parser.

Each language's lexer (in its own module) turns the program into :class:`Token` items: names,
variables, string literals (their value when it is literal, None when it interpolates),
commands (backticks, ``qx{}``, ``%x()``), word lists (``qw()``, ``%w[]``), numbers and
operators. :class:`Script` then reads what the sinks of that language are called with: a call
is a name, or a chain such as ``FileUtils.rm_rf``, followed by its arguments (in parentheses
or, where the language allows it, up to the end of the statement). An argument is literal when
it is a string, a list of strings, a name bound once to a literal, or a concatenation of those.

Code that ends in the middle of something (an unclosed string, bracket or comment, a trailing
operator) does not parse: the program is incomplete. Every pattern is anchored at a position
and possessive, so lexing is linear in the size of the program.

>>> tokens = [Token("name", "system"), Token("op", "("), Token("str", '"ls"', "ls"),
...           Token("op", ")")]
>>> [t.text for t in tokens]
['system', '(', '"ls"', ')']
"""

from __future__ import annotations

import functools
import re

from forge_policy.commands.interpreters._effects import MAX_LITERAL, MAX_NESTING, Found
from forge_policy.errors import FactTimeout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    Sink = Callable[["Script", list["Arg"]], None]

Value = str | list[str] | None

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = frozenset(")]}")
# binary operators: a program cannot end with one
TRAILING = frozenset(
    {
        *("+", "-", "*", "/", "%", "=", "==", "===", "!=", "!==", "<", ">", "<=", ">=", "&&", "||"),
        *("&", "|", "^", ",", ".", "..", "...", "?", ":", "=>", "**", "=~", "!~", "<=>"),
    }
)


class Token:
    """One token: ``kind`` (name, var, str, cmd, list, num, op), its source ``text``, the
    ``value`` of a literal (None when it is not literal), and whether a newline precedes it."""

    __slots__ = ("kind", "nl", "text", "value")

    def __init__(self, kind: str, text: str, value: Value = None, nl: bool = False) -> None:
        self.kind = kind
        self.text = text
        self.value = value
        self.nl = nl

    def __repr__(self) -> str:
        return f"Token({self.kind!r}, {self.text!r}, {self.value!r})"


class Arg:
    """One argument of a call: a slice ``start:end`` of the token list."""

    __slots__ = ("end", "start")

    def __init__(self, start: int, end: int) -> None:
        self.start = start
        self.end = end


class LexError(Exception):
    """The program does not lex (an unclosed string or comment): internal to the readers."""


class Lexer:
    """Helpers shared by the languages' lexers: a cursor over the text and the token list."""

    __slots__ = ("found", "jumps", "nl", "pos", "text", "tokens")

    def __init__(self, text: str, found: Found) -> None:
        self.text = text
        self.jumps: dict[int, int] = {}
        self.pos = 0
        self.tokens: list[Token] = []
        self.nl = False
        self.found = found

    def lex(self) -> list[Token]:
        """The tokens of the whole text (each language's own; :class:`LexError` when the text
        cannot be read)."""
        raise NotImplementedError

    def emit(self, kind: str, text: str, value: Value = None) -> None:
        self.tokens.append(Token(kind, text, value, self.nl))
        self.nl = False
        self.found.step()

    def match(self, pattern: re.Pattern[str]) -> str | None:
        """Match ``pattern`` at the cursor and move past it."""
        found = pattern.match(self.text, self.pos)
        if found is None:
            return None
        self.pos = found.end()
        return found.group()

    def operator(self, pattern: re.Pattern[str]) -> str:
        """The operator at the cursor (any one character that starts nothing else)."""
        found = self.match(pattern)
        if found is None:
            found = self.text[self.pos]
            self.pos += 1
        return found

    def until(self, close: str, escapes: bool = True, open_: str = "") -> str:
        """The raw text up to the unescaped ``close`` (nesting ``open_``); the cursor moves
        past it. Raises :class:`LexError` at the end of the text."""
        text, pos, depth = self.text, self.pos, 0
        if not open_:  # the usual case: one match in C, backslash escapes and all
            found = _body(close, escapes).match(text, pos)
            if found is None:
                raise LexError(f"unclosed {close!r}")
            self.pos = found.end()
            return text[pos : found.end() - 1]
        stops = close + open_ + ("\\" if escapes else "")
        start = pos
        while True:
            hit = next_of(text, pos, stops)
            if hit < 0:
                raise LexError(f"unclosed {close!r}")
            char = text[hit]
            if char == "\\":
                pos = hit + 2
            elif open_ and char == open_:
                depth += 1
                pos = hit + 1
            elif depth:
                depth -= 1
                pos = hit + 1
            else:
                self.pos = hit + 1
                return text[start:hit]
            self.found.step()

    def heredoc_body(self, tag: str, indented: bool, trailing: bool = False) -> str:
        """The lines after the current one up to the line ``tag`` (indented when allowed; with
        ``trailing``, followed by anything but a word character, as PHP's ``EOT;``). The
        lexer skips them when it reaches the end of the current line (:attr:`jumps`)."""
        text = self.text
        line_end = text.find("\n", self.pos)
        if line_end < 0:
            raise LexError(f"here-document {tag!r} has no body")
        pos = self.jumps.get(line_end, line_end + 1)
        start = pos
        while pos < len(text):
            end = text.find("\n", pos)
            line = text[pos:] if end < 0 else text[pos:end]
            bare = line.strip() if indented else line
            if bare == tag or (
                trailing
                and bare.startswith(tag)
                and not bare[len(tag)].isalnum()
                and bare[len(tag)] != "_"
            ):
                self.jumps[line_end] = len(text) if end < 0 else end
                return text[start:pos]
            if end < 0:
                break
            pos = end + 1
            self.found.step()
        raise LexError(f"here-document {tag!r} is not closed")

    def newline(self) -> None:
        """At a newline: skip the here-document bodies that start after it."""
        self.nl = True
        self.pos = self.jumps.pop(self.pos, self.pos) + 1


@functools.cache
def _body(close: str, escapes: bool) -> re.Pattern[str]:
    """The body of a quoted string up to and with its closing ``close`` (possessive: no
    backtracking)."""
    char = re.escape(close)
    if escapes:
        return re.compile(rf"(?:[^{char}\\]++|\\[\s\S])*+{char}")
    return re.compile(rf"[^{char}]*+{char}")


@functools.cache
def _stops(chars: str) -> re.Pattern[str]:
    return re.compile("[" + re.escape(chars) + "]")


def next_of(text: str, pos: int, chars: str) -> int:
    """Index of the first of ``chars`` at or after ``pos``, or -1 (one scan, not one per
    character: a text of many backslashes and no closing quote stays linear).

    >>> next_of("ab'c|", 0, "'|"), next_of("abc", 0, "'")
    (2, -1)
    """
    found = _stops(chars).search(text, pos)
    return -1 if found is None else found.start()


_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "a": "\a", "e": "\x1b", "f": "\f"}
_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u\{[0-9A-Fa-f]{1,6}\}|u[0-9A-Fa-f]{4}|.)", re.S)


def unescape(raw: str, only: str | None = None) -> str:
    """Backslash escapes of a double-quoted string (``only``: the characters a backslash
    escapes in a single-quoted one, such as ``\\\\'``)."""
    if "\\" not in raw:
        return raw

    def one(found: re.Match[str]) -> str:
        code = found.group(1)
        if only is not None:
            return code if code in only else "\\" + code
        if code[0] == "x" and len(code) > 1:
            return chr(int(code[1:], 16))
        if code[0] == "u" and len(code) > 1:
            return chr(min(int(code[1:].strip("{}"), 16), 0x10FFFF))
        if code == "\n":
            return ""
        return _SIMPLE_ESCAPES.get(code, code)

    return _ESCAPE.sub(one, raw)


class Script:
    """Reads the calls of one tokenized program. A language gives its sinks (callee name ->
    handler), how it resolves a callee (:meth:`callee`) and the literal forms of its own
    (:meth:`special`); this class does the rest."""

    concat = "+"  # the string concatenation operator
    bare_calls = False  # calls without parentheses (Perl, Ruby)
    stop_words: frozenset[str] = frozenset()  # words that end a bare call's arguments
    sinks: dict[str, Sink] = {}  # noqa: RUF012 - filled per language, never mutated
    lexer: type[Lexer] = Lexer  # the language's own, set beside its sinks
    assign_starts = frozenset({";", "{", "}", "(", ",", "my", "our", "local"})

    def __init__(self, tokens: list[Token], found: Found, depth: int) -> None:
        self.tokens = tokens
        self.found = found
        self.depth = depth
        self.bindings: dict[str, Value] = {}
        self.assigned: dict[str, int] = {}
        self._bind_all()

    @classmethod
    def read(cls, code: str) -> tuple[tuple[str, ...], bool]:
        """The effects of a program of this language: ``(shell lines, complete)``; a program
        that does not lex, is unbalanced or runs out of budget is incomplete."""
        found = Found()
        try:
            cls._read_into(code, found, 0)
        except FactTimeout:
            found.unknown()
        return found.effects()

    @classmethod
    def _read_into(cls, code: str, found: Found, depth: int) -> None:
        try:
            tokens = cls.lexer(code, found).lex()
        except LexError:
            found.unknown()
            return
        script = cls(tokens, found, depth)
        if not script.balanced():
            found.unknown()
        script.run()

    def read_nested(self, code: str) -> None:
        """Read code this program evaluates (``eval``, a string run as code) one level deeper;
        past :data:`MAX_NESTING` levels it is unknown."""
        if self.depth >= MAX_NESTING:
            self.found.unknown()
        else:
            type(self)._read_into(code, self.found, self.depth + 1)

    # -- structure -------------------------------------------------------------------------

    def balanced(self) -> bool:
        """Brackets match and the program does not end with an operator."""
        stack: list[str] = []
        for token in self.tokens:
            if token.kind != "op":
                continue
            if token.text in _OPEN:
                stack.append(_OPEN[token.text])
            elif token.text in _CLOSE and (not stack or stack.pop() != token.text):
                return False
        if stack:
            return False
        return not (
            self.tokens and self.tokens[-1].kind == "op" and self.tokens[-1].text in TRAILING
        )

    def skip_group(self, index: int) -> int:
        """The index after the bracket group opened at ``index``."""
        depth = 0
        tokens = self.tokens
        for at in range(index, len(tokens)):
            token = tokens[at]
            if token.kind == "op":
                if token.text in _OPEN:
                    depth += 1
                elif token.text in _CLOSE:
                    depth -= 1
                    if depth == 0:
                        return at + 1
        return len(tokens)

    def args_in(self, open_at: int) -> tuple[list[Arg], int]:
        """The comma-separated arguments of the group opened at ``open_at`` and the index
        after its closing bracket."""
        tokens = self.tokens
        args: list[Arg] = []
        start = at = open_at + 1
        while at < len(tokens):
            token = tokens[at]
            if token.kind == "op" and token.text in _OPEN:
                at = self.skip_group(at)
                continue
            if token.kind == "op" and (token.text in _CLOSE or token.text == ","):
                if at > start:
                    args.append(Arg(start, at))
                if token.text != ",":
                    return args, at + 1
                start = at + 1
            at += 1
        if at > start:
            args.append(Arg(start, at))
        return args, at

    def bare_args(self, start: int) -> tuple[list[Arg], int]:
        """The arguments of a call without parentheses, up to the end of the statement."""
        tokens = self.tokens
        args: list[Arg] = []
        at = begin = start
        while at < len(tokens):
            token = tokens[at]
            if at > start and token.nl and tokens[at - 1].text not in (",", "\\"):
                break
            if token.kind == "op" and token.text in _OPEN:
                at = self.skip_group(at)
                continue
            if (token.kind == "op" and (token.text in _CLOSE or token.text in (";", "}"))) or (
                token.kind == "name" and token.text in self.stop_words
            ):
                break
            if token.kind == "op" and token.text == ",":
                if at > begin:
                    args.append(Arg(begin, at))
                begin = at + 1
            at += 1
        if at > begin:
            args.append(Arg(begin, at))
        return args, at

    # -- literal values --------------------------------------------------------------------

    def _mutated(self) -> None:
        """Names whose value the program changes in place are not literals: ``a.push(x)``,
        ``s << x``, ``s.gsub!(…)``, ``a[0] = x``, ``push @a, x``, ``array_push($a, x)``."""
        tokens = self.tokens
        for at, token in enumerate(tokens):
            if token.kind not in ("name", "var"):
                continue
            after = tokens[at + 1].text if at + 1 < len(tokens) else ""
            method = tokens[at + 2].text if at + 2 < len(tokens) else ""
            changed = (
                after in (".", "->") and (method in _MUTATORS or method.endswith("!"))
            ) or after == "<<"
            if after in ("[", "{") and not changed:  # an element set: ``a[0] = x``
                close = self.skip_group(at + 1)
                assigns = tokens[close].text if close < len(tokens) else ""
                changed = assigns.endswith("=") and assigns not in _COMPARE
            if token.text in _MUTATING_CALLS:
                target = at + 2 if after == "(" else at + 1
                if target < len(tokens) and tokens[target].kind in ("name", "var"):
                    self.assigned[tokens[target].text] = 2
            if changed:
                self.assigned[token.text] = 2
            self.found.step()

    def _bind_all(self) -> None:
        self._mutated()
        tokens = self.tokens
        for at, token in enumerate(tokens):
            if token.kind not in ("name", "var") or at + 1 >= len(tokens):
                continue
            after = tokens[at + 1]
            if after.kind != "op" or not after.text.endswith("=") or after.text in _COMPARE:
                continue
            before = tokens[at - 1] if at else None
            if after.text != "=" or not (
                before is None
                or token.nl
                or (before.kind in ("op", "name") and before.text in self.assign_starts)
                or before.text in ("const", "let", "var")
            ):
                self.assigned[token.text] = 2
                continue
            self.assigned[token.text] = self.assigned.get(token.text, 0) + 1
            value, end = self.expr(at + 2)
            ends = end >= len(tokens) or tokens[end].nl or tokens[end].text in (";", ",", ")")
            self.bindings[token.text] = value if ends else None
            self.found.step()

    def bound(self, name: str) -> Value:
        if self.assigned.get(name) == 1:
            return self.bindings.get(name)
        return None

    def special(self, at: int) -> tuple[Value, int] | None:
        """A literal form of the language at ``at`` (``os.homedir()``): (value, end)."""
        return None

    def operand(self, at: int) -> tuple[Value, int]:
        tokens = self.tokens
        if at >= len(tokens):
            return None, at
        own = self.special(at)
        if own is not None:
            return own
        token = tokens[at]
        if token.kind in ("str", "list"):
            return token.value, at + 1
        if token.kind in ("name", "var") and not (
            at + 1 < len(tokens) and tokens[at + 1].text in ("(", ".", "[", "->", "::")
        ):
            return self.bound(token.text), at + 1
        if token.kind == "op" and token.text == "[":
            return self.items(at)
        return None, at + 1

    def items(self, at: int) -> tuple[Value, int]:
        """A bracketed list of literal strings: ``["rm", "-rf", x]``."""
        args, end = self.args_in(at)
        out: list[str] = []
        for arg in args:
            value = self.literal(arg)
            if isinstance(value, list):
                out.extend(value)
            elif isinstance(value, str):
                out.append(value)
            else:
                return None, end
        return out, end

    def expr(self, at: int) -> tuple[Value, int]:
        """A literal expression at ``at``: operands joined by the concatenation operator."""
        value, at = self.operand(at)
        tokens = self.tokens
        while at < len(tokens) and tokens[at].kind == "op" and tokens[at].text == self.concat:
            right, at = self.operand(at + 1)
            if isinstance(value, str) and isinstance(right, str):
                value = value + right if len(value) + len(right) <= MAX_LITERAL else None
            else:
                value = None
        return value, at

    def literal(self, arg: Arg) -> Value:
        """The value of an argument when all of it is literal, else None."""
        value, end = self.expr(arg.start)
        return value if end == arg.end else None

    def text(self, arg: Arg | None) -> str | None:
        """A string argument; a missing or non-literal one leaves the program incomplete."""
        value = self.literal(arg) if arg is not None else None
        if isinstance(value, str):
            return value
        self.found.unknown()
        return None

    def strings(self, args: Sequence[Arg]) -> list[str] | None:
        """All the arguments as one list of strings (lists are spread), or None."""
        out: list[str] = []
        for arg in args:
            value = self.literal(arg)
            if isinstance(value, list):
                out.extend(value)
            elif isinstance(value, str):
                out.append(value)
            else:
                self.found.unknown()
                return None
        return out

    # -- calls -----------------------------------------------------------------------------

    def callee(self, at: int) -> tuple[str, int] | None:
        """The name of what is called at ``at`` and the index of what follows it."""
        token = self.tokens[at]
        if token.kind != "name":
            return None
        if at and self.tokens[at - 1].text in (".", "->", "::"):
            return None
        if self.key(at):
            return None
        names = [token.text]
        end = at + 1
        tokens = self.tokens
        while (
            end + 1 < len(tokens)
            and tokens[end].text in (".", "::")
            and (tokens[end + 1].kind == "name")
        ):
            names.append(tokens[end + 1].text)
            end += 2
        return ".".join(names), end

    def key(self, at: int) -> bool:
        """The name at ``at`` is a hash key (``system => 1``, ``$h{system}``), not a call."""
        tokens = self.tokens
        after = tokens[at + 1].text if at + 1 < len(tokens) else ""
        return after == "=>" or (at > 0 and tokens[at - 1].text == "{" and after == "}")

    def command(self, token: Token) -> None:
        """A backtick-style command token."""
        if isinstance(token.value, str):
            self.found.shell(token.value)
        else:
            self.found.unknown()

    def run(self) -> None:
        tokens = self.tokens
        at = 0
        while at < len(tokens):
            self.found.step()
            token = tokens[at]
            if token.kind == "cmd":
                self.command(token)
                at += 1
                continue
            called = self.callee(at)
            if called is None:
                at += 1
                continue
            name, end = called
            sink = self.sinks.get(self.canonical(name))
            if sink is None:
                at += 1
                continue
            if end < len(tokens) and tokens[end].text == "(" and not tokens[end].nl:
                args, _ = self.args_in(end)
            elif self.bare_calls and not (at and tokens[at - 1].text in (":", "\\", "&")):
                # a bare name; not a symbol (``:system``) nor a reference (``\\&system``)
                args, _ = self.bare_args(end)
            else:
                if end < len(tokens) and tokens[end].text in (")", ","):
                    # handed on as a value (``files.forEach(fs.unlinkSync)``): unread arguments
                    self.found.unknown()
                at += 1
                continue
            sink(self, args)
            at = end  # arguments are read again: calls inside them count too

    def canonical(self, name: str) -> str:
        return name


def sink_shell(script: Script, args: list[Arg]) -> None:
    """One argument: a command line for the shell; several: a program and its arguments."""
    if len(args) > 1:
        words = script.strings(args)
        if words:
            script.found.argv(words)
        return
    value = script.literal(args[0]) if args else None
    if isinstance(value, list):
        script.found.argv(value)
    elif isinstance(value, str):
        script.found.shell(value)
    else:
        script.found.unknown()


def sink_paths(action: str) -> Sink:
    """Each argument a path (``unlink "a", "b"``)."""

    def sink(script: Script, args: list[Arg]) -> None:
        paths = script.strings(args) if args else None
        if not args:
            script.found.unknown()
        for path in paths or ():
            getattr(script.found, action)(path)

    return sink


def sink_first_path(action: str) -> Sink:
    def sink(script: Script, args: list[Arg]) -> None:
        path = script.text(args[0] if args else None)
        if path is not None:
            getattr(script.found, action)(path)

    return sink


def sink_two_paths(action: str) -> Sink:
    def sink(script: Script, args: list[Arg]) -> None:
        source = script.text(args[0] if args else None)
        target = script.text(args[1] if len(args) > 1 else None)
        if source is not None and target is not None:
            getattr(script.found, action)(source, target)

    return sink


# methods that change their receiver (strings in Ruby, arrays everywhere)
_MUTATORS = frozenset(
    {
        *("append", "extend", "insert", "push", "unshift", "splice", "concat", "replace"),
        *("prepend", "pop", "shift", "clear", "fill", "reverse", "sort", "update", "set"),
        *("add", "delete", "remove", "slice!", "copyWithin"),
    }
)
# functions that change their first argument
_MUTATING_CALLS = frozenset(
    {"push", "unshift", "splice", "chomp", "chop", "array_push", "array_unshift", "array_splice"}
)
_COMPARE = frozenset({"==", "===", "!=", "!==", "<=", ">=", "=~", "!~", "<=>", "=>"})


def punctuation(operators: Sequence[str]) -> re.Pattern[str]:
    """A pattern for the longest of ``operators`` or any other single character."""
    ordered = sorted(operators, key=len, reverse=True)
    return re.compile("|".join(re.escape(op) for op in ordered) + r"|[^\s\w]")
