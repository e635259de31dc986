"""What one command line defines for the commands after it: variables, loops, functions, aliases,
files written — the shell state the command model (:mod:`forge_policy.commands.execution`) reads.

The reading is an allowlist (SPEC §6): the builtins that set state are read exactly where the
command line decides them, and marked *unknown* where it does not (the running fact is then
incomplete only if an unknown value decides what runs, through :func:`truncated`):

- variables: ``X=v``, ``declare``/``typeset``/``local``/``export``/``readonly X=v``, ``printf -v
  X …``, ``read X <<< v`` (``read``/``mapfile`` from input the command line does not show: unknown;
  ``declare -n``: incomplete; a changed ``IFS``: incomplete);
- ``for``/``select`` loops: each item of a literal list (a glob or a substitution stands for an
  unknown item, :data:`UNKNOWN`);
- functions (``f() { …; }``, ``function f { …; }``) run where they are called, their positional
  parameters set; aliases (``alias x='rm -rf'``) expand where they are called, as if
  ``expand_aliases`` were on;
- files the call writes (``echo … > x.sh``, ``cat > x <<EOF``, ``tee x``) with their text when the
  command line shows it, and the paths other commands name (which they may write).

>>> state = ShellState()
>>> state.builtin(["printf", "-v", "c", "rm"], None, "/p")
>>> state.expand_words(["$c", "-rf", "~"], {})
['rm', '-rf', '~']
"""

from __future__ import annotations

import os
import re

from forge_policy._budget import read_outside, truncated
from forge_policy._lazy import lazy_pattern
from forge_policy.commands.expansion import BREAK, parameters
from forge_policy.commands.paths import expand_path
from forge_policy.commands.shell import Command, basename, echo_text, stdin_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

#: the operand that stands for words fed from input the command line does not show
UNKNOWN = "…"
#: at most this many items of one loop are read (past it: incomplete)
MAX_LOOP_ITEMS = 64
_ASSIGNMENT = lazy_pattern(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=(.*)", re.S)
_NAME = lazy_pattern(r"[A-Za-z_][A-Za-z0-9_]*")
_WHOLE = lazy_pattern(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[^{}]*\}|[0-9@*])")
_GLOB_CHARS = lazy_pattern(r"[*?\[]")
_DECLARERS = frozenset({"declare", "typeset", "local", "export", "readonly"})
_READ_VALUED = frozenset({"-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"})
_RESERVED = frozenset({"for", "select", "while", "until", "if", "case", "function", "then", "do",
                       "else", "elif", "coproc", "time", "!", "{"})  # fmt: skip
_OUTPUT = frozenset({">", ">>", ">|", "&>", "&>>"})
# programs whose operands are not files they write (so running one of those files later is
# running a file the call did not change)
_NOT_WRITERS = frozenset({"chmod", "chown", "chgrp", "ls", "stat", "test", "[", "file", "cat",
                          "head", "tail", "wc", "less", "more", "echo", "printf", "git", "source",
                          ".", "sh", "bash", "zsh", "dash", "ksh", "python", "python3", "diff",
                          "grep", "rg", "shellcheck", "which", "type", "command"})  # fmt: skip
_ENV_SPLIT = ("-S", "--split-string")


class ShellState:
    """The state a command line builds up as it runs (see the module doc)."""

    __slots__ = (
        "_paths",
        "_resolved",
        "aliases",
        "capture",
        "functions",
        "loops",
        "mentioned",
        "unknown",
        "variables",
        "version",
        "written",
    )  # fmt: skip

    def __init__(self) -> None:
        self.variables: dict[str, str] = {}
        self.unknown: set[str] = set()
        self.loops: dict[str, list[str]] = {}
        self.functions: dict[str, list[tuple[list[str], Command]]] = {}
        self.aliases: dict[str, str] = {}
        self.written: dict[str, str | None] = {}
        self.mentioned: list[tuple[list[str], str]] = []
        self._paths: set[str] = set()
        self._resolved = 0
        #: the function being defined: ``[name, body, open braces, body started]``
        self.capture: list[object] | None = None
        #: grows with every change, so that a command read once under a state is not read again
        self.version = 0

    # --- variables -----------------------------------------------------------------------

    def lookup(self, name: str, local: dict[str, str]) -> str | None:
        """A variable's value where the command line decides it, else None."""
        if name in local:
            return local[name]
        if name in self.unknown:
            return None
        value = self.variables.get(name)
        return _environment(name) if value is None else value

    def assign(self, name: str, value: str) -> None:
        if name == "IFS" and value.strip(" \t\n"):  # blanks only: split as modelled, or less
            truncated("IFS is assigned: word splitting on other characters is not modelled")
        self.variables[name] = value
        self.unknown.discard(name)
        self.loops.pop(name, None)
        self.version += 1

    def forget(self, name: str) -> None:
        """``name`` gets a value the command line does not show."""
        self.variables.pop(name, None)
        self.loops.pop(name, None)
        self.unknown.add(name)
        self.version += 1

    def expand(self, word: str, local: dict[str, str]) -> str:
        """``word`` with its parameters expanded (:func:`parameters`), ``$IFS`` as a blank."""
        if "$" not in word:
            return word
        out = parameters(word, lambda name: self.lookup(name, local), self.assign)
        return out.replace(BREAK, " ")

    def expand_words(self, argv: list[str], local: dict[str, str]) -> list[str]:
        """``argv`` with parameters expanded: ``$IFS`` splits a word, and so do blanks in the
        value of a word that is one expansion (``c='rm -rf'; $c ~``) or names the program."""
        out: list[str] = []
        lookup = self.lookup
        for i, word in enumerate(argv):
            if "$" not in word:
                out.append(word)
                continue
            value = parameters(word, lambda name: lookup(name, local), self.assign)
            if BREAK in value:
                out.extend(w for part in value.split(BREAK) for w in part.split())
            elif (
                value != word and (i == 0 or _WHOLE().fullmatch(word)) and value.split() != [value]
            ):
                out.extend(value.split())
            else:
                out.append(value)
        return out

    def mentions_loop(self, argv: list[str]) -> list[str]:
        """The loop variables ``argv`` reads."""
        if not self.loops:
            return []
        text = " ".join(argv)
        if "$" not in text:
            return []
        return [n for n in self.loops if re.search(rf"\$\{{?[#!]?{n}(?![A-Za-z0-9_])", text)]

    # --- builtins that set state ---------------------------------------------------------

    def builtin(
        self,
        argv: list[str],
        cmd: Command | None,
        cwd: str,
        targets: list[str] | None = None,
        local: dict[str, str] | None = None,
    ) -> None:
        """Read what a (expanded) simple command sets for the commands after it (``targets``:
        its redirections' targets, expanded; ``local``: its ``NAME=value`` prefixes)."""
        name = basename(argv[0])
        if name in _DECLARERS:
            self._declare(argv)
        elif name == "printf" and len(argv) > 2 and argv[1].startswith("-v"):
            target, rest = (argv[2], argv[3:]) if argv[1] == "-v" else (argv[1][2:], argv[2:])
            text = echo_text(["printf", *rest]) if rest else ""
            self.assign(target, text or "")
        elif name == "read":
            self._read(argv, cmd, cwd, local.get("IFS", " ") if local else " ")
        elif name in ("mapfile", "readarray"):
            operands = [a for a in argv[1:] if not a.startswith("-")]
            self.forget(operands[-1] if operands else "MAPFILE")
        elif name in ("for", "select") and len(argv) > 1:
            self._loop(argv)
        elif name == "set" and "--" in argv:
            args = argv[argv.index("--") + 1 :]
            for key in [k for k in self.variables if k.isdigit()]:
                del self.variables[key]
            for k, arg in enumerate(args, start=1):
                self.assign(str(k), arg)
            joined = " ".join(args)
            self.assign("@", joined)
            self.assign("*", joined)
            self.assign("#", str(len(args)))
        elif name == "alias":
            for word in argv[1:]:
                m = _ASSIGNMENT().fullmatch(word)
                if m is not None:
                    self.aliases[m.group(1)] = m.group(3)
                    self.version += 1
        elif name == "unalias":
            for word in argv[1:]:
                self.aliases.pop(word, None)
            self.version += 1
        if cmd is not None:
            self._writes(argv, cmd, cwd, targets)

    def _declare(self, argv: list[str]) -> None:
        flags = ""
        for word in argv[1:]:
            if word.startswith(("-", "+")):
                flags += word[1:]
                continue
            m = _ASSIGNMENT().fullmatch(word)
            name = m.group(1) if m is not None else word
            if "n" in flags:
                truncated(f"{argv[0]} -n {word}: a name reference is not modelled")
            elif "a" in flags or "A" in flags or "f" in flags:
                self.forget(name)
            elif m is not None:
                self.assign(name, m.group(3))

    def _read(self, argv: list[str], cmd: Command | None, cwd: str, ifs: str) -> None:
        """``read NAMES``: the first line of input the command line shows, split at blanks
        (``IFS=`` prefix: not split); other separators are not modelled (the names are
        unknown)."""
        names: list[str] = []
        array = ""
        i = 1
        while i < len(argv):
            word = argv[i]
            if word in _READ_VALUED:
                array = argv[i + 1] if word == "-a" and i + 1 < len(argv) else array
                i += 2
                continue
            if not word.startswith("-"):
                names.append(word)
            i += 1
        if array:
            self.forget(array)
        names = names or ([] if array else ["REPLY"])
        text = stdin_text(cmd, cwd) if cmd is not None else None
        if text is None or ifs.strip(" \t\n"):
            for name in names:
                self.forget(name)
            return
        line = text.split("\n", 1)[0]
        if not ifs:
            fields = [line] + [""] * (len(names) - 1)
        else:
            fields = line.split(None, max(len(names) - 1, 0)) if names else []
        for k, name in enumerate(names):
            self.assign(name, fields[k] if k < len(fields) else "")

    def _loop(self, argv: list[str]) -> None:
        name = argv[1]
        if not _NAME().fullmatch(name):
            return  # for ((…)): arithmetic, its variables are numbers
        items = argv[3:] if argv[2:3] == ["in"] else [UNKNOWN]
        known = [UNKNOWN if _unknown_item(item) else item for item in items]
        known = list(dict.fromkeys(known))
        if len(known) > MAX_LOOP_ITEMS:
            truncated(f"a loop over more than {MAX_LOOP_ITEMS} items: the rest was not read")
            del known[MAX_LOOP_ITEMS:]
        self.variables.pop(name, None)
        self.unknown.discard(name)
        self.loops[name] = known
        self.version += 1

    def _writes(self, argv: list[str], cmd: Command, cwd: str, targets: list[str] | None) -> None:
        """The files the command writes, with their text when the command line shows it."""
        name = basename(argv[0])
        for k, redirect in enumerate(cmd.redirects):
            target = targets[k] if targets is not None else redirect.target
            if redirect.op not in _OUTPUT or not target:
                continue
            path = _path(target, cwd)
            text: str | None = None
            if name in ("echo", "printf"):
                text = echo_text(argv)
            elif name == "cat" and len(argv) == 1:
                text = stdin_text(cmd, cwd)
            if redirect.op.endswith(">>") and path in self.written:
                before = self.written[path]
                text = None if before is None or text is None else before + text
            self.written[path] = text
            self.version += 1
        if name == "tee":
            text = stdin_text(cmd, cwd)
            for word in argv[1:]:
                if not word.startswith("-"):
                    self.written[_path(word, cwd)] = text
                    self.version += 1
        elif name not in _NOT_WRITERS and len(argv) > 1:
            self.mentioned.append((argv, cwd))  # resolved when a script is run (rarely)
            self.version += 1

    # --- what runs ------------------------------------------------------------------------

    def script_of(self, path: str, cwd: str, how: str) -> str | None:
        """The text of a script the call runs (``sh x.sh``, ``./x``, ``source x``) when the
        call wrote it and shows the text; incomplete when the call wrote or may have written it
        otherwise; None (not read, as any file already there) when the call did not touch it."""
        if "$" in path or UNKNOWN in path or "`" in path:
            truncated(f"{how} {path}: a script named by a value decided when the command runs")
            return None
        full = _path(path, cwd)
        if full in self.written:
            text = self.written[full]
            if text is None:
                truncated(f"{how} {path}: this call writes it with text the command does not show")
            return text
        if full in self._mentioned():
            truncated(f"{how} {path}: this call may change it before running it")
        return None

    def wrote(self, path: str, cwd: str) -> bool:
        """Whether the call wrote ``path`` before this point (with text shown or not)."""
        return "$" not in path and _path(path, cwd) in self.written

    def _mentioned(self) -> set[str]:
        """The paths the commands so far name as operands (which they may write), resolved
        once each."""
        paths = self._paths
        for argv, cwd in self.mentioned[self._resolved :]:
            for word in argv[1:]:
                if word.startswith("-"):
                    word = word.partition("=")[2]
                if word and "$" not in word and len(word) < 4096:
                    paths.add(_path(word, cwd))
        self._resolved = len(self.mentioned)
        return paths

    def define(self, words: list[str], cmd: Command) -> list[str] | None:
        """Follow a function definition: None when ``words`` is an ordinary command, else the
        part of it that is a body command (``[]`` when none: the header, or the closing
        brace)."""
        capture = self.capture
        if capture is None:
            header = words[1:] if words[:1] == ["function"] else words
            if words[:1] == ["function"] and len(words) >= 2 and _NAME().fullmatch(words[1]):
                rest = words[2:]
                if rest[:1] == ["()"]:
                    rest = rest[1:]
                self.capture = [words[1], [], 0, False]
                return self.define(rest, cmd) if rest else []
            if cmd.opens and len(header) == 1 and _function_name(header[0]):
                self.capture = [header[0], [], 0, False]
                return []
            return None
        name, body, level, started = capture
        assert isinstance(body, list) and isinstance(level, int) and isinstance(name, str)
        if not words:
            return []
        if not started:
            capture[3] = True
            opened = 0
            while opened < len(words) and words[opened] == "{":
                opened += 1
            if not opened:  # a body that is one command (a subshell, a loop head)
                body.append((words, cmd))
                self._defined(name, body)
                return words
            capture[2] = level = opened
            words = words[opened:]
            if not words:
                return []
        if words[0] == "}":
            level -= 1
            capture[2] = level
            if level <= 0:
                self._defined(name, body)
            return []
        if words[0] == "{":
            capture[2] = level + 1
        body.append((words, cmd))
        return words

    def _defined(self, name: str, body: list[tuple[list[str], Command]]) -> None:
        self.functions[name] = body
        self.capture = None
        self.version += 1

    def called(self, argv: list[str]) -> Iterator[tuple[list[str], Command, dict[str, str]]]:
        """The body of a function ``argv`` calls, each command with the call's positional
        parameters."""
        args = argv[1:]
        local = {str(k): arg for k, arg in enumerate(args, start=1)}
        joined = " ".join(args)
        local.update({"@": joined, "*": joined, "#": str(len(args)), "0": argv[0]})
        for words, cmd in self.functions.get(argv[0], []):
            yield words, cmd, local

    def alias_text(self, argv: list[str]) -> str | None:
        value = self.aliases.get(argv[0])
        if value is None:
            return None
        import shlex  # only an alias call pays its import

        return " ".join([value, *(shlex.quote(word) for word in argv[1:])])


def env_split(words: list[str]) -> list[str] | None:
    """``env -S 'rm -rf' x`` as the words env runs (``['env', 'rm', '-rf', 'x']``), or None
    when no ``env`` in ``words`` splits a string.

    >>> env_split(["sudo", "env", "-S", "rm -rf ~"])
    ['sudo', 'env', 'rm', '-rf', '~']
    """
    if not any(basename(w) == "env" for w in words):
        return None
    for i, word in enumerate(words):
        if basename(word) != "env":
            continue
        out = list(words[: i + 1])
        j = i + 1
        found = False
        while j < len(words) and words[j].startswith("-"):
            opt = words[j]
            if opt in _ENV_SPLIT and j + 1 < len(words):
                out.extend(shlex_split(words[j + 1]))
                found = True
                j += 2
                continue
            for long in ("--split-string=", "-S"):
                if opt.startswith(long) and len(opt) > len(long):
                    out.extend(shlex_split(opt[len(long) :]))
                    found = True
                    break
            else:
                out.append(opt)
            j += 1
            if found:
                break
        if found:
            return out + words[j:]
    return None


def shlex_split(text: str) -> list[str]:
    """``text`` split as ``env -S`` splits it (quotes honoured; unbalanced: at blanks)."""
    import shlex  # only ``env -S`` pays its import

    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _unknown_item(item: str) -> bool:
    return "$" in item or "`" in item or UNKNOWN in item or bool(_GLOB_CHARS().search(item))


def _function_name(word: str) -> bool:
    return bool(word) and word not in _RESERVED and not any(c in word for c in "$`=\"'")


def _path(word: str, cwd: str) -> str:
    return os.path.normpath(os.path.join(cwd or "/", expand_path(word)))


def _environment(name: str) -> str | None:
    """The variables whose value the hook knows as the agent's shell would."""
    read_outside()  # the reading depends on the environment, not on its text alone
    if name == "HOME":
        return os.path.expanduser("~")
    if name == "TMPDIR":
        import tempfile

        return os.environ.get("TMPDIR") or tempfile.gettempdir()
    return None
