"""A small, total shell lexer for the fact providers: words, redirections, here-documents.

This is not a shell. It splits a command line the way POSIX ``sh`` does: quotes, backslashes,
operators, redirections, here-documents, ``$(…)``, backticks and ``$'…'``. The only expansions
are quote removal, ``~``/``$HOME`` in paths, and the substitutions whose output is certain
(``$(cat <<EOF …)``, ``$(echo …)``, ``$(printf …)``). Every other ``$(…)`` keeps its source
text, so a rule that matches a message still sees the words inside. It never raises and runs in
linear time. Malformed input, such as an unclosed quote, ``$(`` or here-document, runs to the end
of the text.

>>> [c.words for c in lex("a 'b c' | d \\"$(cat <<'E'\\nx\\nE\\n)\\"")]
[['a', 'b c'], ['cat'], ['d', 'x']]
"""

from __future__ import annotations

import os
import re

import attrs

from forge_policy.facts._runtime import check_deadline

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from forge_policy.model import Event

    Subst = Callable[[list["Command"], str], str]

MAX_DEPTH = 12  # nesting of $(…), backticks and sh -c
MAX_MESSAGE_BYTES = 1 << 20

_PLAIN_STOP = re.compile(r"[ \t\r\n'\"\\$`;&|()<>#]")
_DQ_STOP = re.compile(r'["\\$`]')
_BACKTICK_ESCAPE = re.compile(r"\\([\\`$])")
_ANSI_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|[0-7]{1,3}|.)", re.S)
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
# fmt: off
_ANSI = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "f": "\f",
         "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_OPERATORS = ("<<<", "<<-", "&>>", "<<", "<>", "<&", ">>", ">&", ">|", "&>", "&&", "||", ";;",
              "|&", "<", ">", "|", ";", "&")
_WRAPPERS: dict[str, frozenset[str]] = {
    name: frozenset(opts.split()) for name, opts in {
        "sudo": "-u -g -C -D -h -p -r -t -U -T -R", "doas": "-u -C", "env": "-u -C -S",
        "command": "", "builtin": "", "exec": "-a", "nohup": "", "time": "-f -o",
        "nice": "-n", "timeout": "-s -k", "stdbuf": "-i -o -e",
        # reserved words that a command can follow
        "!": "", "{": "", "if": "", "then": "", "else": "", "elif": "", "do": "", "while": "",
        "until": "",
    }.items()
}
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh"})
# fmt: on


# The hook runs in a fresh process per tool call: a generated repr costs ~0.1 ms of class
# creation there, for records that never had one, so these keep object's repr.
@attrs.define(eq=False, repr=False)
class Redirect:
    """One redirection: operator, target word and, for ``<<``/``<<-``, the here-document body.

    The lexer fills ``target`` and ``body`` in as it reads them, so the class is mutable.
    Compared by identity, as before attrs: a here-document is matched to its own redirection.

    >>> redirect = Redirect(">")
    >>> redirect.op, redirect.target, redirect.body
    ('>', '', None)
    """

    op: str
    target: str = ""
    body: str | None = None


@attrs.define(eq=False, repr=False)
class Command:
    """One simple command: its words after quote removal, its redirections, its pipe source.

    Compared by identity, as before attrs (two ``ls`` in one line are two commands).

    >>> command = Command()
    >>> command.words, command.redirects, command.piped_from
    ([], [], None)
    """

    words: list[str] = attrs.Factory(list)
    redirects: list[Redirect] = attrs.Factory(list)
    piped_from: Command | None = None


class _Scope:
    """The command being built in one nesting level (top level or one ``$(…)``)."""

    __slots__ = ("cmd", "done", "heredocs", "parts", "quoted", "sink", "started", "want")

    def __init__(self, sink: list[Command]) -> None:
        self.sink = sink
        self.done: list[Command] = []
        self.cmd = Command()
        self.parts: list[str] = []
        self.started = False
        self.quoted = False
        self.want: Redirect | None = None
        self.heredocs: list[Redirect] = []

    def add(self, text: str, quoted: bool = False) -> None:
        self.parts.append(text)
        self.started = True
        self.quoted = self.quoted or quoted

    def end_word(self) -> None:
        if not self.started:
            return
        text = "".join(self.parts)
        self.parts = []
        self.started = self.quoted = False
        want = self.want
        if want is None:
            self.cmd.words.append(text)
            return
        self.want = None
        want.target = text
        self.cmd.redirects.append(want)
        if want.op in ("<<", "<<-"):
            self.heredocs.append(want)

    def end_command(self, op: str) -> None:
        self.end_word()
        self.want = None
        cmd = self.cmd
        if cmd.words or cmd.redirects:
            self.sink.append(cmd)
            self.done.append(cmd)
            self.cmd = Command()
            if op in ("|", "|&"):
                self.cmd.piped_from = cmd


class _Lexer:
    __slots__ = ("commands", "subst", "text")

    def __init__(self, text: str, subst: Subst, commands: list[Command]) -> None:
        self.text = text
        self.subst = subst
        self.commands = commands

    def scan(self, i: int, depth: int, nested: bool) -> tuple[int, list[Command], bool]:
        """Lex from ``i``; in a ``$(…)`` stop after its ``)``. Returns (end, commands, closed)."""
        s, n = self.text, len(self.text)
        sc = _Scope(self.commands)
        paren = 0
        while i < n:
            c = s[i]
            if c in " \t\r":
                sc.end_word()
                i += 1
            elif c == "\n":
                sc.end_command("\n")
                i = self._bodies(sc, i + 1, nested)
            elif c == "#":
                if sc.started:
                    sc.add("#")
                    i += 1
                else:
                    j = s.find("\n", i)
                    i = n if j < 0 else j
            elif c == "\\":
                if s.startswith("\\\n", i):
                    i += 2
                else:
                    sc.add(s[i + 1 : i + 2] or "\\", quoted=True)
                    i += 2
            elif c == "'":
                j = s.find("'", i + 1)
                j = n if j < 0 else j
                sc.add(s[i + 1 : j], quoted=True)
                i = j + 1
            elif c == '"':
                sc.add("", quoted=True)
                i = self._double(i + 1, depth, sc.parts)
            elif c == "$" and s.startswith("$(", i):
                sc.add("")
                i = self._substitution(i + 2, depth, sc.parts)
            elif c == "$" and s.startswith("$'", i):
                i = self._ansi_c(i + 2, sc)
            elif c == "`":
                sc.add("")
                i = self._backtick(i + 1, depth, sc.parts)
            elif c == ")" and nested and paren == 0:
                sc.end_command(")")
                return i + 1, sc.done, True
            elif c in "();&|<>":
                op = c if c in "()" else next(o for o in _OPERATORS if s.startswith(o, i))
                if op[0] in "<>" or op.startswith("&>"):
                    if sc.started and not sc.quoted and "".join(sc.parts).isdigit():
                        sc.parts, sc.started = [], False  # a file descriptor: 2>err
                    sc.end_word()
                    sc.want = Redirect(op)
                else:
                    paren += 1 if op == "(" else -1 if op == ")" and paren else 0
                    sc.end_command(op)
                i += len(op)
            else:
                m = _PLAIN_STOP.search(s, i + 1)
                j = n if m is None else m.start()
                sc.add(s[i:j])
                i = j
        sc.end_command("")
        return n, sc.done, False

    def _bodies(self, sc: _Scope, i: int, nested: bool) -> int:
        """Read the bodies of the here-documents opened on the line that just ended."""
        s, n = self.text, len(self.text)
        for redirect in sc.heredocs:
            strip, delim = redirect.op == "<<-", redirect.target
            lines: list[str] = []
            while i < n:
                j = s.find("\n", i)
                end = n if j < 0 else j
                line = s[i:end]
                text = line.lstrip("\t") if strip else line
                check = text.rstrip("\r")
                if check == delim:
                    i = end + 1
                    break
                if nested and delim and check.startswith(delim):
                    rest = check[len(delim) :].lstrip(" \t")
                    if rest.startswith(")"):  # bash accepts "EOF)" closing $(… <<EOF
                        i = end - len(text) + len(check) - len(rest)
                        break
                lines.append(text)
                i = end + 1
            redirect.body = "".join(f"{line}\n" for line in lines)
        sc.heredocs = []
        return min(i, n)

    def _double(self, i: int, depth: int, parts: list[str]) -> int:
        s, n = self.text, len(self.text)
        while i < n:
            m = _DQ_STOP.search(s, i)
            if m is None:
                break
            j = m.start()
            parts.append(s[i:j])
            c = s[j]
            if c == '"':
                return j + 1
            if c == "\\":
                nxt = s[j + 1 : j + 2]
                if nxt in ('"', "\\", "$", "`"):
                    parts.append(nxt)
                elif nxt != "\n":
                    parts.append("\\")
                    i = j + 1
                    continue
                i = j + 2
            elif c == "`":
                i = self._backtick(j + 1, depth, parts)
            elif s.startswith("$(", j):
                i = self._substitution(j + 2, depth, parts)
            else:
                parts.append("$")
                i = j + 1
        parts.append(s[i:])
        return n

    def _substitution(self, i: int, depth: int, parts: list[str]) -> int:
        if depth >= MAX_DEPTH:
            parts.append("$(")
            return i
        end, done, closed = self.scan(i, depth + 1, True)
        parts.append(self.subst(done, self.text[i : end - 1 if closed else end]))
        return end

    def _closing(self, i: int, quote: str) -> int:
        """The index of the first ``quote`` at or after ``i`` not escaped by a backslash (an
        even run of backslashes before it), or the end of the text."""
        s = self.text
        j = i
        while True:
            k = s.find(quote, j)
            if k < 0:
                return len(s)
            b = k
            while b > i and s[b - 1] == "\\":
                b -= 1
            if (k - b) % 2 == 0:
                return k
            j = k + 1

    def _backtick(self, i: int, depth: int, parts: list[str]) -> int:
        s, n = self.text, len(self.text)
        end = self._closing(i, "`")
        inner = _BACKTICK_ESCAPE.sub(r"\1", s[i:end])
        if depth >= MAX_DEPTH:
            parts.append(inner)
        else:
            done = _Lexer(inner, self.subst, self.commands).scan(0, depth + 1, False)[1]
            parts.append(self.subst(done, inner))
        return min(end + 1, n)

    def _ansi_c(self, i: int, sc: _Scope) -> int:
        s, n = self.text, len(self.text)
        end = self._closing(i, "'")
        sc.add(unescape(s[i:end]), quoted=True)
        return min(end + 1, n)


def unescape(text: str) -> str:
    r"""Backslash escapes as ``printf`` and ``$'…'`` read them (``\n``, ``\t``, ``\x41``, ``\101``).

    >>> unescape(r"a\tb\x41\101\q")
    'a\tbAA\\q'
    """

    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if code[0] == "x" and len(code) > 1:
            return chr(int(code[1:], 16))
        if code[0] in "01234567":
            return chr(int(code, 8))
        return _ANSI.get(code, "\\" + code)

    return _ANSI_ESCAPE.sub(one, text)


def literal_subst(done: list[Command], raw: str) -> str:
    """A substitution's output when it is certain, else its source text (see module doc)."""
    if len(done) == 1:
        argv = strip_wrappers(done[0].words)
        name = os.path.basename(argv[0]) if argv else ""
        if name == "cat" and len(argv) == 1:
            body = stdin_text(done[0], "")
            if body is not None:
                return body.rstrip("\n")
        elif name in ("echo", "printf"):
            text = echo_text(argv)
            if text is not None:
                return text.rstrip("\n")
    return raw


def lex(text: str, subst: Subst = literal_subst) -> list[Command]:
    """Every simple command in ``text`` in completion order (a ``$(…)`` before its user)."""
    commands: list[Command] = []
    _Lexer(text, subst, commands).scan(0, 0, False)
    return commands


def strip_wrappers(words: list[str]) -> list[str]:
    """The argv after leading ``NAME=value`` words and ``sudo``/``env``/``nohup``-style wrappers.

    >>> strip_wrappers(["A=1", "sudo", "-u", "me", "env", "B=2", "git", "commit"])
    ['git', 'commit']
    """
    i, count = 0, len(words)
    while i < count:
        word = words[i]
        if _ASSIGNMENT.match(word):
            i += 1
            continue
        name = os.path.basename(word)
        opts = _WRAPPERS.get(name)
        if opts is None:
            break
        i += 1
        while i < count and words[i].startswith("-") and words[i] != "-":
            if words[i] == "--":
                i += 1
                break
            i += 2 if words[i] in opts else 1
        if name == "timeout" and i < count:
            i += 1  # the duration
    return words[i:]


def expand_path(word: str) -> str:
    """``~``, ``~/x``, ``$HOME/x`` and ``${HOME}/x`` expanded; other words unchanged."""
    for prefix in ("${HOME}", "$HOME"):
        if word == prefix or word.startswith(prefix + "/"):
            return os.path.expanduser("~") + word[len(prefix) :]
    if not word.startswith("~"):
        return word
    try:
        return os.path.expanduser(word)
    except (KeyError, ValueError):  # a user name with NUL or a lone surrogate
        return word


def echo_text(argv: list[str]) -> str | None:
    """What ``echo``/``printf`` print (format directives are not applied)."""
    name = os.path.basename(argv[0])
    if name == "printf":
        return unescape(argv[1]) if len(argv) > 1 else None
    args, escapes, newline = argv[1:], False, True
    while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
        escapes = escapes or "e" in args[0]
        newline = newline and "n" not in args[0]
        args = args[1:]
    text = " ".join(args)
    return (unescape(text) if escapes else text) + ("\n" if newline else "")


def stdin_text(cmd: Command, cwd: str, hops: int = 0) -> str | None:
    """What a command reads on stdin, when the command line shows it (``<<``, ``<<<``, ``<``,
    or ``echo``/``printf``/``cat`` piped into it); ``None`` otherwise."""
    for redirect in reversed(cmd.redirects):
        if redirect.op in ("<<", "<<-"):
            return redirect.body or ""
        if redirect.op == "<<<":
            return redirect.target + "\n"
        if redirect.op in ("<", "<>"):
            return read_text(redirect.target, cwd) if cwd else None
    source = cmd.piped_from
    if source is None or hops > 8:
        return None
    argv = strip_wrappers(source.words)
    name = os.path.basename(argv[0]) if argv else ""
    if name in ("echo", "printf"):
        return echo_text(argv)
    if name == "cat":
        files = [a for a in argv[1:] if a != "-" and not a.startswith("-")]
        if not files:
            return stdin_text(source, cwd, hops + 1)
        texts = [read_text(f, cwd) for f in files] if cwd else [None]
        return None if None in texts else "".join(t or "" for t in texts)
    return None


def read_text(path: str, cwd: str) -> str | None:
    """A text file named on a command line, relative to ``cwd``, at most 1 MiB (else ``None``)."""
    from forge_policy.facts._io import read_bounded

    data = read_bounded(os.path.join(cwd, expand_path(path)), MAX_MESSAGE_BYTES)
    return None if data is None else data.decode("utf-8", "replace")


def iter_commands(
    text: str, cwd: str, subst: Subst = literal_subst, depth: int = 0
) -> Iterator[tuple[list[str], Command, str]]:
    """``(argv, command, cwd)`` for each simple command, following ``cd`` and ``sh -c``."""
    current = cwd
    for cmd in lex(text, subst):
        check_deadline()
        argv = strip_wrappers(cmd.words)
        if not argv:
            continue
        name = os.path.basename(argv[0])
        if name in ("cd", "pushd"):
            target = next((a for a in argv[1:] if not a.startswith("-")), "~")
            if "-" not in argv[1:2]:  # cd - goes back to a directory we do not know
                current = os.path.normpath(os.path.join(current, expand_path(target)))
            continue
        yield argv, cmd, current
        script = _shell_script(argv) if depth < MAX_DEPTH else None
        if script is not None:
            yield from iter_commands(script, current, subst, depth + 1)


def _shell_script(argv: list[str]) -> str | None:
    name = os.path.basename(argv[0])
    if name == "eval":
        return " ".join(argv[1:])
    if name not in _SHELLS:
        return None
    i, run = 1, False
    while i < len(argv):
        arg = argv[i]
        if arg in ("-o", "+o", "-O", "+O"):
            i += 2
            continue
        if arg[:1] not in ("-", "+") or arg == "--":
            break
        run = run or (not arg.startswith("--") and "c" in arg)
        i += 1
    return argv[i] if run and i < len(argv) else None


def event_commands(event: Event) -> list[str]:
    """The shell commands of a tool call: ``tool_input.command`` and ``tool_input.commands``."""
    tool_input = event.tool_input
    found: list[str] = []
    command = tool_input.get("command")
    if isinstance(command, str):
        found.append(command)
    listed = tool_input.get("commands")
    for item in listed if isinstance(listed, list) else []:
        if isinstance(item, dict):
            item = item.get("command")
        if isinstance(item, str):
            found.append(item)
    return found
