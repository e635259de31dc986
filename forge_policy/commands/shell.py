"""A small, total shell lexer for the command analyser: words, redirections, here-documents.

This is not a shell. It splits a command line the way POSIX ``sh`` does: quotes, backslashes,
operators, redirections, here-documents, ``$(…)``, backticks and ``$'…'``. The only expansions
are quote removal, ``~``/``$HOME`` in paths, and the substitutions whose output is certain
(``$(cat <<EOF …)``, ``$(echo …)``, ``$(printf …)``). Every other ``$(…)`` keeps its source
text, so a rule that matches a message still sees the words inside. It never raises and runs in
linear time. Malformed input, such as an unclosed quote, ``$(`` or here-document, runs to the end
of the text.

Speed matters: a condition on a fact the lexer feeds is undetermined when the fact runs out of
budget (and a blocking rule then refuses the call), so an ordinary command, a 1 MB here-document
included, must be read well within it. Runs of plain simple commands (words, blanks and ``;``,
``&&``, ``||``, newlines between them) are split by regular expressions in one step instead of
character by character, and ``distinct=True`` (for facts that only ask *which* commands run)
reads a command repeated in such a run once. Past :data:`MAX_DEPTH` levels of nesting the inner
text stays a word, and the running fact is marked incomplete (:func:`truncated`).

>>> [c.words for c in lex("a 'b c' | d \\"$(cat <<'E'\\nx\\nE\\n)\\"")]
[['a', 'b c'], ['cat'], ['d', 'x']]
"""

from __future__ import annotations

import functools
import os
import re

import attrs

from forge_policy._budget import check_deadline, read_bounded, truncated
from forge_policy._lazy import lazy_pattern
from forge_policy.commands.expansion import PROCESS_SUBSTITUTION, braces
from forge_policy.commands.launchers import LAUNCHERS, launch
from forge_policy.commands.paths import expand_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    Subst = Callable[[list["Command"], str], str]

MAX_DEPTH = 32  # nesting of $(…), backticks and sh -c
MAX_MESSAGE_BYTES = 1 << 20

_PLAIN_STOP = lazy_pattern(r"[ \t\r\n'\"\\$`;&|()<>#]")
_SPECIAL = frozenset(" \t\r\n'\"\\$`;&|()<>#")
_OPERATOR = lazy_pattern(r"<<<|<<-|&>>|<<|<>|<&|>>|>&|>\||&>|&&|\|\||;;|\|&|[<>|;&]")
# A run of plain simple commands: words of plain characters, blanks, and the separators ``;``,
# ``&&``, ``||`` and newline after each command. Possessive quantifiers: no backtracking.
_WORD = r"[^\s'\"\\$`;&|()<>#]++"
_BULK = re.compile(
    rf"(?:[ \t]*+(?:{_WORD}(?:[ \t]++{_WORD})*+[ \t]*+)?+(?:;(?!;)|&&|\|\||\n))*+"
    # then the first words of a command that goes on with something else (each one complete:
    # followed by a blank, or by the end of the text)
    rf"[ \t]*+(?:{_WORD}[ \t]++)*+(?:{_WORD}\Z)?+"
)
_ESCAPES = lazy_pattern(r"(?:\\[^\n])+")
_BULK_SEPARATOR = re.compile(r";|&&|\|\||\n")
_CWD_WORDS = ("cd", "pushd", "popd")
_LEADING_TABS = lazy_pattern(r"^\t+", re.M)
_DQ_STOP = lazy_pattern(r'["\\`]|\$\(')
_ARITH_STOP = lazy_pattern(r"[()`$]")
_BACKTICK_ESCAPE = lazy_pattern(r"\\([\\`$])")
#: the lexer looks at its budget every this many steps
_CHECK_EVERY = 2048
_CONVERSION = lazy_pattern(r"%%|%[-+ #0-9.]*[sbdiouxXcfeEgG]")
_ANSI_ESCAPE = lazy_pattern(r"\\(x[0-9A-Fa-f]{1,2}|[0-7]{1,3}|.)", re.S)
_ASSIGNMENT = lazy_pattern(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
# a leading word that only looks like one (``1A=2``, ``A-B=2``, ``=2``): POSIX sh runs it as a
# program that is not found, but shells differ on names, so what follows is read as the command
# too (fail closed), never dropped
_ASSIGNMENT_LIKE = lazy_pattern(r"[^=/\s'\"$`\\-][^=/\s'\"$`\\]*=|=")
# fmt: off
_ANSI = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "f": "\f",
         "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_OPERATORS = ("<<<", "<<-", "&>>", "<<", "<>", "<&", ">>", ">&", ">|", "&>", "&&", "||", ";;",
              "|&", "<", ">", "|", ";", "&")
_WRAPPERS: dict[str, frozenset[str]] = {
    name: frozenset(opts.split()) for name, opts in {
        "sudo": "-u -g -C -D -h -p -r -t -U -T -R --user --group --close-from --chdir --host "
        "--prompt --role --type --other-user --command-timeout",
        "doas": "-u -C", "env": "-u -C -S -P --unset --chdir --split-string",
        "command": "", "builtin": "", "exec": "-a", "nohup": "", "time": "-f -o --format --output",
        "nice": "-n --adjustment", "timeout": "-s -k --signal --kill-after",
        "stdbuf": "-i -o -e --input --output --error",
        # reserved words that a command can follow
        "!": "", "{": "", "if": "", "then": "", "else": "", "elif": "", "do": "", "while": "",
        "until": "",
    }.items()
}
#: programs that run a shell script given with ``-c``, on stdin or as a here-document
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish"})
_SSH_VALUE_OPTS = frozenset("bcDEeFIiJLlmOoPpQRSWw")  # OpenSSH 9 options that take a value
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
    #: ended by ``(``: ``f()`` names a function whose body follows
    opens: bool = False


class _Scope:
    """The command being built in one nesting level (top level or one ``$(…)``)."""

    __slots__ = ("brace", "cmd", "done", "heredocs", "parts", "quoted", "sink", "started", "want")

    def __init__(self, sink: list[Command]) -> None:
        self.sink = sink
        self.done: list[Command] = []
        self.cmd = Command()
        self.parts: list[str] = []
        self.started = False
        self.quoted = False
        self.brace = False  # an unquoted part holds "{": brace expansion may apply
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
            if self.brace:
                self.brace = False
                self.cmd.words.extend(braces(text))
            else:
                self.cmd.words.append(text)
            return
        self.brace = False
        self.want = None
        want.target = text
        self.cmd.redirects.append(want)
        if want.op in ("<<", "<<-"):
            self.heredocs.append(want)

    def end_command(self, op: str) -> None:
        self.end_word()
        redirected = self.want is not None  # ``<(``: a process substitution, not ``f()``
        self.want = None
        cmd = self.cmd
        if redirected and op == "(" and cmd.words:
            # the command reads the substitution's output as a file: bash names it so
            cmd.words.append(PROCESS_SUBSTITUTION)
        if cmd.words or cmd.redirects:
            self.sink.append(cmd)
            self.done.append(cmd)
            self.cmd = Command()
            if op in ("|", "|&"):
                self.cmd.piped_from = cmd
            elif op == "(" and not redirected:
                cmd.opens = True


class _Lexer:
    __slots__ = ("bulk", "commands", "distinct", "seen", "subst", "text")

    def __init__(
        self,
        text: str,
        subst: Subst,
        commands: list[Command],
        distinct: bool = False,
        bulk: bool = True,
    ) -> None:
        self.text = text
        self.subst = subst
        self.commands = commands
        self.distinct = distinct
        self.bulk = bulk  # False: character by character only (the tests' reference)
        self.seen: set[str] = set()

    def scan(self, i: int, depth: int, nested: bool) -> tuple[int, list[Command], bool]:
        """Lex from ``i``; in a ``$(…)`` stop after its ``)``. Returns (end, commands, closed)."""
        s, n = self.text, len(self.text)
        sc = _Scope(self.commands)
        paren = 0
        i = self._bulk(sc, i, nested)
        countdown = _CHECK_EVERY
        while i < n:
            countdown -= 1
            if not countdown:
                check_deadline()
                countdown = _CHECK_EVERY
            c = s[i]
            if c not in _SPECIAL:
                m = _PLAIN_STOP().search(s, i + 1)
                j = n if m is None else m.start()
                part = s[i:j]
                sc.parts.append(part)
                sc.started = True
                if "{" in part:
                    sc.brace = True
                i = j
            elif c == " " or c == "\t" or c == "\r":
                if sc.started:
                    sc.end_word()
                i += 1
            elif c == "\n":
                sc.end_command("\n")
                i = self._bodies(sc, i + 1, nested) if sc.heredocs else i + 1
                i = self._bulk(sc, i, nested)
            elif c == "#":
                i = self._hash(sc, i)
            elif c == "\\":
                i = self._backslash(sc, i)
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
                i = self._dollar_paren(i, depth, sc.parts)
            elif c == "$" and s.startswith("$'", i):
                i = self._ansi_c(i + 2, sc)
            elif c == "$":
                m = _PLAIN_STOP().search(s, i + 1)
                j = n if m is None else m.start()
                part = s[i:j]
                sc.add(part)
                if "{" in part[2:]:
                    sc.brace = True
                i = j
            elif c == "`":
                sc.add("")
                i = self._backtick(i + 1, depth, sc.parts)
            elif c == ")" and nested and paren == 0:
                sc.end_command(")")
                return i + 1, sc.done, True
            elif c == "(" or c == ")":
                paren += 1 if c == "(" else -1 if paren else 0
                sc.end_command(c)
                i += 1
            else:  # ; & | < >
                i = self._operator(sc, i, nested)
        sc.end_command("")
        return n, sc.done, False

    def _hash(self, sc: _Scope, i: int) -> int:
        """``#`` inside a word is a character; at a word's start it comments out the line."""
        if sc.started:
            sc.add("#")
            return i + 1
        j = self.text.find("\n", i)
        return len(self.text) if j < 0 else j

    def _backslash(self, sc: _Scope, i: int) -> int:
        """A line continuation (dropped), or a run of escaped characters (each one quoted)."""
        s = self.text
        if s.startswith("\\\n", i):
            return i + 2
        m = _ESCAPES().match(s, i)
        if m is None:  # a backslash at the end of the text
            sc.add("\\", quoted=True)
            return i + 2
        sc.add(m.group()[1::2], quoted=True)  # each escape: "\\" + a char
        return m.end()

    def _operator(self, sc: _Scope, i: int, nested: bool) -> int:
        """A redirection operator (``2>err``: its file descriptor dropped) starts a target; any
        other (``;``, ``&&``, ``|``…) ends the command."""
        c = self.text[i]
        found = _OPERATOR().match(self.text, i)
        op = found.group() if found is not None else c
        i += len(op)
        if c == "<" or c == ">" or op.startswith("&>"):
            if sc.started and not sc.quoted and "".join(sc.parts).isdigit():
                sc.parts, sc.started = [], False  # a file descriptor: 2>err
            sc.end_word()
            sc.want = Redirect(op)
        else:
            sc.end_command(op)
            if op == ";" or op == "&&" or op == "||":
                i = self._bulk(sc, i, nested)
        return i

    def _bulk(self, sc: _Scope, i: int, nested: bool) -> int:
        """At the start of a command: read a run of plain simple commands in one step."""
        cmd = sc.cmd
        if not self.bulk or sc.heredocs or sc.want is not None or sc.started or cmd.words:
            return i
        if cmd.redirects:
            return i
        if cmd.piped_from is not None:  # "a |" then a newline: the pipeline goes on
            return i
        m = _BULK.match(self.text, i)
        if m is None or m.end() == i:
            return i
        distinct = self.distinct and not nested
        seen = self.seen
        sink, done = sc.sink, sc.done
        run = m.group()
        segments = _BULK_SEPARATOR.split(run)
        last = segments.pop()
        sc.cmd.words = _expand_braces(last.split()) if "{" in last else last.split()
        if distinct and not any(word in run for word in _CWD_WORDS):
            segments = list(dict.fromkeys(segments))  # in C: most padding goes here
        for segment in segments:
            if distinct:
                segment = segment.strip(" \t")
                if segment in seen:
                    continue
                if any(word in segment for word in _CWD_WORDS):
                    seen.clear()  # the directory may change: what follows is read again
                else:
                    seen.add(segment)
            words = segment.split()
            if "{" in segment:
                words = _expand_braces(words)
            if words:
                cmd = Command(words)
                sink.append(cmd)
                done.append(cmd)
        return m.end()

    def _bodies(self, sc: _Scope, i: int, nested: bool) -> int:
        """Read the bodies of the here-documents opened on the line that just ended: each one
        runs to its delimiter line (found by one regex search, however long the body)."""
        s, n = self.text, len(self.text)
        for redirect in sc.heredocs:
            strip, delim = redirect.op == "<<-", redirect.target
            m = _delimiter(delim, strip, nested and bool(delim)).search(s, i) if i < n else None
            if m is None:  # unterminated: the body runs to the end of the text
                body, i = s[i:], n
                if body and not body.endswith("\n"):
                    body += "\n"
            else:
                body = s[i : m.start()]
                # bash accepts "EOF)" closing $(… <<EOF: stop at the ")"
                i = m.end() - 1 if m.group(1) is None else m.end() + 1
            redirect.body = _LEADING_TABS().sub("", body) if strip else body
        sc.heredocs = []
        return min(i, n)

    def _double(self, i: int, depth: int, parts: list[str]) -> int:
        s, n = self.text, len(self.text)
        while i < n:
            m = _DQ_STOP().search(s, i)
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
            else:  # "$("
                i = self._dollar_paren(j, depth, parts)
        parts.append(s[i:])
        return n

    def _dollar_paren(self, i: int, depth: int, parts: list[str]) -> int:
        """At ``$(``: an arithmetic expansion ``$((…))`` when its ``))`` closes it, else a
        command substitution (as bash decides)."""
        if self.text.startswith("$((", i):
            end = self._arithmetic(i + 3, depth)
            if end is not None:
                parts.append(self.text[i:end])  # its value is unknown: the "$" stays
                return end
        return self._substitution(i + 2, depth, parts)

    def _arithmetic(self, i: int, depth: int) -> int | None:
        """The end of ``$((…))`` opened before ``i``, or None when it is not one. The command
        substitutions inside are read (their commands run)."""
        s, n = self.text, len(self.text)
        if depth >= MAX_DEPTH:
            return None  # read as a substitution, which marks the fact incomplete
        level = 0
        while i < n:
            m = _ARITH_STOP().search(s, i)
            if m is None:
                return None
            j = m.start()
            c = s[j]
            if c == "(":
                level += 1
                i = j + 1
            elif c == ")":
                if level:
                    level -= 1
                    i = j + 1
                elif s.startswith("))", j):
                    return j + 2
                else:
                    return None
            elif c == "`":
                i = self._backtick(j + 1, depth, [])
            elif s.startswith("$((", j):
                end = self._arithmetic(j + 3, depth + 1)
                if end is None:
                    return None
                i = end
            elif s.startswith("$(", j):
                i = self._substitution(j + 2, depth, [])
            else:
                i = j + 1
        return None

    def _substitution(self, i: int, depth: int, parts: list[str]) -> int:
        if depth >= MAX_DEPTH:
            truncated(f"substitutions nested deeper than {MAX_DEPTH} levels were not read")
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
        inner = _BACKTICK_ESCAPE().sub(r"\1", s[i:end])
        if depth >= MAX_DEPTH:
            truncated(f"substitutions nested deeper than {MAX_DEPTH} levels were not read")
            parts.append(inner)
        else:
            lexer = _Lexer(inner, self.subst, self.commands, bulk=self.bulk)
            done = lexer.scan(0, depth + 1, False)[1]
            parts.append(self.subst(done, inner))
        return min(end + 1, n)

    def _ansi_c(self, i: int, sc: _Scope) -> int:
        s, n = self.text, len(self.text)
        end = self._closing(i, "'")
        sc.add(unescape(s[i:end]), quoted=True)
        return min(end + 1, n)


def _expand_braces(words: list[str]) -> list[str]:
    return [out for word in words for out in braces(word)]


@functools.lru_cache(maxsize=64)
def _delimiter(delim: str, strip: bool, closing: bool) -> re.Pattern[str]:
    """The line that ends a here-document: the delimiter alone (group 1 set), or, inside a
    ``$(…)``, the delimiter and ``)`` (group 1 None); ``<<-`` allows leading tabs."""
    if "\n" in delim or (strip and delim.startswith("\t")):
        return re.compile(r"(?!)")  # no line is such a delimiter (its tabs would be stripped)
    tabs = "\t*" if strip else ""
    # a line's trailing carriage returns are not compared, so a delimiter ending in one never
    # stands alone
    alone = r"(?!)()" if delim.endswith("\r") else r"(\r*)$"
    end = alone + (r"|[ \t]*\)" if closing else "")
    return re.compile(rf"^{tabs}{re.escape(delim)}(?:{end})", re.M)


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

    return _ANSI_ESCAPE().sub(one, text)


def literal_subst(done: list[Command], raw: str) -> str:
    """A substitution's output when it is certain, else its source text (see module doc)."""
    if len(done) == 1:
        argv = strip_wrappers(done[0].words)
        name = basename(argv[0]) if argv else ""
        if name == "cat" and len(argv) == 1:
            body = stdin_text(done[0], "")
            if body is not None:
                return body.rstrip("\n")
        elif name in ("echo", "printf"):
            text = echo_text(argv)
            if text is not None:
                return text.rstrip("\n")
    return raw


def lex(text: str, subst: Subst = literal_subst, *, distinct: bool = False) -> list[Command]:
    """Every simple command in ``text`` in completion order (a ``$(…)`` before its user).

    ``distinct``: a plain top-level command repeated in a run of plain commands is listed
    once (until a ``cd``, ``pushd`` or ``popd``, after which commands are listed again).

    >>> [c.words for c in lex("a; a; a && b", distinct=True)]
    [['a'], ['b']]
    """
    commands: list[Command] = []
    _Lexer(text, subst, commands, distinct).scan(0, 0, False)
    return commands


def strip_wrappers(words: list[str]) -> list[str]:
    """The argv after leading ``NAME=value`` words and ``sudo``/``env``/``nohup``-style wrappers.

    >>> strip_wrappers(["A=1", "sudo", "-u", "me", "env", "B=2", "git", "commit"])
    ['git', 'commit']
    """
    if words:
        first = words[0]
        name = basename(first)
        if "=" not in first and name not in _WRAPPERS and name not in LAUNCHERS:
            return words  # nothing to strip (the common case): the list itself
    i, count = 0, len(words)
    while i < count:
        word = words[i]
        if _ASSIGNMENT().match(word) or (_ASSIGNMENT_LIKE().match(word) and i + 1 < count):
            i += 1
            continue
        name = basename(word)
        opts = _WRAPPERS.get(name)
        if opts is None:
            # a launcher that runs its arguments as a command (setsid, flock FILE, taskset
            # MASK…: commands/launchers.py); one that runs a string is followed as a script
            launched = launch(words[i:]) if name in LAUNCHERS else None
            if launched is not None and launched.argv:
                return strip_wrappers(launched.argv)
            break
        i += 1
        # ``env -`` is ``env -i``; a lone ``-`` ends the other wrappers' options
        while i < count and words[i].startswith("-") and (words[i] != "-" or name == "env"):
            if words[i] == "--":
                i += 1
                break
            i += 2 if words[i] in opts else 1
        if name == "timeout" and i < count:
            i += 1  # the duration
    return words[i:]


def basename(word: str) -> str:
    """``os.path.basename`` for POSIX paths, without its function calls (hot in the lexer).

    >>> basename("/usr/bin/git"), basename("git"), basename("dir/")
    ('git', 'git', '')
    """
    return word[word.rfind("/") + 1 :]


def echo_text(argv: list[str]) -> str | None:
    """What ``echo``/``printf`` print (format directives are not applied)."""
    name = basename(argv[0])
    if name == "printf":
        return _printf(argv[1], argv[2:]) if len(argv) > 1 else None
    args, escapes, newline = argv[1:], False, True
    while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
        escapes = escapes or "e" in args[0]
        newline = newline and "n" not in args[0]
        args = args[1:]
    text = " ".join(args)
    return (unescape(text) if escapes else text) + ("\n" if newline else "")


def _printf(form: str, args: list[str]) -> str:
    """``printf FORMAT ARGS``: ``%s``/``%b``/``%d``-style conversions take the arguments in turn,
    the format repeating while arguments remain (widths and precisions are not applied)."""
    text = unescape(form)
    if not args or all(m.group() == "%%" for m in _CONVERSION().finditer(text)):
        return text.replace("%%", "%")  # nothing takes an argument (a round takes at least one)
    out: list[str] = []
    rest = iter(args)
    left = len(args)

    def take(m: re.Match[str]) -> str:
        nonlocal left
        if m.group() == "%%":
            return "%"
        left -= 1
        return next(rest, "")

    while left > 0:  # each round takes at least one argument
        out.append(_CONVERSION().sub(take, text))
    return "".join(out)


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
    name = basename(argv[0]) if argv else ""
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
    data = read_bounded(os.path.join(cwd, expand_path(path)), MAX_MESSAGE_BYTES)
    return None if data is None else data.decode("utf-8", "replace")


def iter_commands(
    text: str,
    cwd: str,
    subst: Subst = literal_subst,
    depth: int = 0,
    *,
    distinct: bool = False,
    bare: bool = False,
) -> Iterator[tuple[list[str], Command, str]]:
    """``(argv, command, cwd)`` for each simple command, following ``cd`` and ``sh -c``.

    ``distinct`` is :func:`lex`'s; ``bare`` also yields the commands with no argv (only
    assignments, wrappers or redirections, such as ``> file``) with ``argv == []``.
    """
    current = cwd
    for cmd in lex(text, subst, distinct=distinct):
        check_deadline()
        argv = strip_wrappers(cmd.words)
        if not argv:
            if bare:
                yield argv, cmd, current
            continue
        name = basename(argv[0])
        if name in ("cd", "pushd"):
            target = next((a for a in argv[1:] if not a.startswith("-")), "~")
            if "-" not in argv[1:2]:  # cd - goes back to a directory we do not know
                current = os.path.normpath(os.path.join(current, expand_path(target)))
            continue
        yield argv, cmd, current
        if name != "eval" and name not in SHELLS and name not in LAUNCHERS and name != "tmux":
            continue
        script = _shell_script(argv)
        if script is None:
            continue
        if depth >= MAX_DEPTH:
            truncated(f"shell scripts nested deeper than {MAX_DEPTH} levels were not read")
            continue
        yield from iter_commands(script, current, subst, depth + 1, distinct=distinct, bare=bare)


def _shell_script(argv: list[str]) -> str | None:
    name = basename(argv[0])
    if name == "eval":
        return " ".join(argv[1:])
    if name in SHELLS:
        return shell_c_script(argv)
    launched = launch(argv)  # flock -c, su -c, script -c, watch, sg, tmux new, screen…
    return launched.script if launched is not None else None


def shell_c_script(argv: list[str]) -> str | None:
    """The script of ``sh -c SCRIPT`` (``bash -xc``, ``sh -o x -c``), else None.

    >>> shell_c_script(["bash", "-o", "pipefail", "-xc", "rm x", "name"])
    'rm x'
    >>> shell_c_script(["sh", "x.sh"]) is None
    True
    """
    if basename(argv[0]) not in SHELLS:
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


def ssh_remote_command(argv: list[str]) -> str | None:
    """The command ``ssh [options] DESTINATION COMMAND…`` runs on the remote host, else None.

    >>> ssh_remote_command(["ssh", "-p", "22", "host", "rm", "-rf", "/"])
    'rm -rf /'
    >>> ssh_remote_command(["ssh", "host"]) is None
    True
    """
    if basename(argv[0]) != "ssh":
        return None
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        flag = argv[i]
        i += 1
        if len(flag) == 2 and flag[1] in _SSH_VALUE_OPTS:
            i += 1
    remote = argv[i + 1 :]  # after the destination
    return " ".join(remote) if remote else None


def split_options(args: list[str]) -> tuple[list[str], list[str]]:
    """``(options, operands)`` of a command's arguments, as written (``--`` ends the options;
    a lone ``-`` is an operand).

    >>> split_options(["-rf", "a", "-", "--", "-b"])
    (['-rf'], ['a', '-', '-b'])
    """
    options: list[str] = []
    operands: list[str] = []
    for i, arg in enumerate(args):
        if arg == "--":
            operands.extend(args[i + 1 :])
            break
        if arg.startswith("-") and arg != "-":
            options.append(arg)
        else:
            operands.append(arg)
    return options, operands
