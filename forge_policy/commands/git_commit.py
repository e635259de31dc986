"""The ``git commit`` message parser behind ``facts.commit_message`` and ``facts.staged_files``.

Built on the lexer of :mod:`forge_policy.commands.shell`, so quoting, here-documents, ``$(…)``,
chains (``git add . && git commit …``), ``cd``, ``git -C`` and ``sh -c`` are handled the way a
shell would. Upstream (seed-systems a.6) scanned only ``-m``/``--message`` followed by a space.
It missed ``-F``, here-documents, ``-am``, ``--message=``, ``-mX`` and escaped quotes.

>>> commit_messages('git commit -m "fix: say \\\\"hi\\\\"" --trailer "Co-authored-by: X"', "/r")
['fix: say "hi"\\n\\nCo-authored-by: X']
"""

from __future__ import annotations

import os

import attrs

from forge_policy._budget import note
from forge_policy.commands.paths import expand_path
from forge_policy.commands.shell import (
    Command,
    iter_commands,
    literal_subst,
    read_text,
    stdin_text,
    strip_wrappers,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

# fmt: off
_GIT_VALUE_OPTS = frozenset({"-c", "--git-dir", "--work-tree", "--namespace", "--config-env",
                             "--super-prefix"})
_COMMIT_VALUE_OPTS = frozenset({"author", "date", "reuse-message", "reedit-message", "fixup",
                                "squash", "cleanup", "template", "pathspec-from-file"})
# fmt: on


# no generated repr: it would cost class-creation time in every hook process (see shell.py)
@attrs.frozen(eq=False, repr=False)
class Commit:
    """One ``git commit`` invocation: the directory git runs in, its message, ``-a``.

    ``all_`` in the constructor (``all`` is a builtin), ``all`` on the instance.

    >>> commit = Commit("/r", "fix: x", all_=True)
    >>> commit.cwd, commit.message, commit.all
    ('/r', 'fix: x', True)
    """

    cwd: str
    message: str
    all: bool = attrs.field(alias="all_")


def commits(
    command: str,
    cwd: str,
    *,
    distinct: bool = False,
    read: Iterable[tuple[list[str], Command, str]] | None = None,
) -> list[Commit]:
    """Every ``git commit`` in a shell command, with its message (``""`` when none is given);
    ``distinct``: a plain command repeated in a run of plain commands is read once (the fact
    only asks which messages there are; a padded command then costs its distinct commands).
    ``read``: what ``iter_commands(command, cwd, distinct=distinct)`` gave, when the caller has
    it and no substitution was read in it (this parser reads ``$(cat FILE)``; with no
    substitution, the lexer's reading does not depend on how substitutions are read)."""
    if read is not None:
        return [c for argv, cmd, at in read if argv and (c := _git_commit(argv, cmd, at))]

    def subst(done: list[Command], raw: str) -> str:
        argv = strip_wrappers(done[0].words) if len(done) == 1 else []
        if len(argv) >= 2 and os.path.basename(argv[0]) == "cat":
            files = [a for a in argv[1:] if not a.startswith("-")]
            texts = [read_text(f, cwd) for f in files]
            if files and None not in texts:
                return "".join(t or "" for t in texts).rstrip("\n")
        return literal_subst(done, raw)

    found: list[Commit] = []
    for argv, cmd, current in iter_commands(command, cwd, subst, distinct=distinct):
        commit = _git_commit(argv, cmd, current)
        if commit is not None:
            found.append(commit)
    return found


def commit_messages(command: str, cwd: str) -> list[str]:
    """The message of each ``git commit`` in ``command`` that carries one, in order.

    Sources: ``-m``/``--message``/``--message=``/``-mX``/``-am X``, ``-F file``/``--file``
    (relative to the commit's directory, at most 1 MiB), ``-F -`` fed by a here-document,
    here-string, ``<`` or a pipe from ``echo``/``printf``/``cat``, and ``--trailer``. Several
    ``-m`` are paragraphs joined by a blank line, as git does.

    >>> commit_messages("git commit -F - <<-EOF\\n\\tfeat: x\\n\\tEOF", "/r")
    ['feat: x']
    """
    return [c.message for c in commits(command, cwd) if c.message]


def _git_commit(argv: list[str], cmd: Command, cwd: str) -> Commit | None:
    if os.path.basename(argv[0]) not in ("git", "git.exe"):
        return None
    i, count = 1, len(argv)
    while i < count and argv[i].startswith("-"):
        if argv[i] == "-C" and i + 1 < count:
            cwd = os.path.normpath(os.path.join(cwd, expand_path(argv[i + 1])))
        i += 2 if argv[i] == "-C" or argv[i] in _GIT_VALUE_OPTS else 1
    if i >= count or argv[i] != "commit":
        return None
    args = argv[i + 1 :]
    paragraphs: list[str | None] = []
    trailers: list[str] = []
    all_ = False
    j = 0
    while j < len(args):
        arg = args[j]
        j += 1
        if arg == "--":
            break
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            kind = _long_option(name)
            if kind in ("message", "file", "trailer", "value") and not eq:
                if j >= len(args):
                    break
                value, j = args[j], j + 1
            if kind == "message":
                paragraphs.append(value)
            elif kind == "file":
                paragraphs.append(_message_file(value, cmd, cwd))
            elif kind == "trailer":
                trailers.append(value)
            all_ = all_ or kind == "all"
            continue
        if not arg.startswith("-") or arg == "-":
            continue  # a pathspec
        for k in range(1, len(arg)):
            flag, rest = arg[k], arg[k + 1 :]
            all_ = all_ or flag == "a"
            if flag in "mFcCt":
                if not rest:
                    if j >= len(args):
                        break
                    rest, j = args[j], j + 1
                if flag == "m":
                    paragraphs.append(rest)
                elif flag == "F":
                    paragraphs.append(_message_file(rest, cmd, cwd))
                break
            if flag in "uS":
                break  # optional value attached: -uno, -Skeyid
    body = [p.strip("\n") for p in paragraphs if p is not None]
    if trailers:
        body.append("\n".join(trailers))
    return Commit(cwd, "\n\n".join(p for p in body if p), all_)


def _long_option(name: str) -> str:
    """What a ``git commit --NAME`` is, with git's unambiguous-prefix abbreviations."""
    if name and "message".startswith(name):
        return "message"
    if len(name) >= 3 and "file".startswith(name):
        return "file"
    if len(name) >= 2 and "trailer".startswith(name):
        return "trailer"
    return "value" if name in _COMMIT_VALUE_OPTS else name


def _message_file(path: str, cmd: Command, cwd: str) -> str | None:
    if path in ("-", "/dev/stdin"):
        text = stdin_text(cmd, cwd)
        if text is None:
            note("git commit -F -: the message comes from a stdin the command line does not show")
        return text
    return read_text(path, cwd)
