"""Codex's ``apply_patch`` format, read the way Codex reads it: which files a patch adds,
updates, deletes or moves, and whether a shell command runs ``apply_patch``.

One parser for both ways a patch reaches the disk: Codex's ``apply_patch`` tool (the Codex
adapter, :mod:`forge_policy.harness.codex`) and ``apply_patch`` run from a shell command (the
facts, :func:`forge_policy.facts._patches.event_patches`). It follows ``openai/codex``
``codex-rs/apply-patch/src/parser.rs`` at commit 0ffd5a8d (read 2026-12-02): the text is
trimmed, then it must start with ``*** Begin Patch`` and end with ``*** End Patch`` (or be
wrapped in a ``<<'EOF'`` … ``EOF`` here-document, which the lenient mode strips); a hunk header
is trimmed before it is read (``"  *** Add File: x"`` is a header), a ``*** Move to:`` line is
not (it must follow its ``*** Update File:`` line as it is); an update's chunk lines start with
``' '``, ``'+'`` or ``'-'``. And ``codex-rs/apply-patch/src/invocation.rs`` (fe074c02) and
``standalone_executable.rs``: ``apply_patch``/``applypatch`` take the patch as their one
argument (after an optional ``--preserve-crlf``) or on stdin; ``codex
--codex-run-as-apply-patch PATCH`` is the same program.

Codex's parser has changed before (a newer one may trim more), so :attr:`Patch.mentioned` also
keeps every line of the text that, trimmed, is a file header or a ``*** Move to:``: a reader
that checks those too cannot be outrun by a header this parser reads as text.

>>> patch = parse('''*** Begin Patch
... *** Add File: a.py
... +x = 1
... *** Update File: b.py
... *** Move to: c.py
... @@
... -old
... +new
...   *** Delete File: .forge/audit
... *** End Patch''')
>>> [(c.kind, c.path, c.move_to) for c in patch.changes]
[('add', 'a.py', ''), ('update', 'b.py', 'c.py')]
>>> patch.paths()
['a.py', 'b.py', 'c.py', '.forge/audit']
>>> parse("not a patch")
Traceback (most recent call last):
...
forge_policy.commands.patches.PatchError: the first line of the patch must be '*** Begin Patch'
"""

from __future__ import annotations

import os

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "
EOF_MARKER = "*** End of File"
#: the programs that apply a patch (Codex's arg0 names, and its hidden flag)
APPLY_PATCH_NAMES = frozenset({"apply_patch", "applypatch"})
CODEX_FLAG = "--codex-run-as-apply-patch"
#: Rust's ``char::is_whitespace`` (Unicode White_Space): what ``str::trim`` removes. Python's
#: ``str.strip()`` also removes U+001C..U+001F, which Rust keeps.
_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_HEADERS = (ADD, DELETE, UPDATE, MOVE)


class PatchError(ValueError):
    """The text is not a patch Codex would apply (Codex refuses it too)."""


class Change:
    """One file of a patch: ``kind`` is ``add``, ``delete`` or ``update``; ``path`` as written
    (relative to the folder the patch is applied in); ``move_to`` the new name of an updated
    file (``""``: none); ``content`` an added file's text; ``chunks`` an update's
    ``(old text, new text)`` pairs."""

    __slots__ = ("chunks", "content", "kind", "move_to", "path")

    def __init__(
        self,
        kind: str,
        path: str,
        *,
        move_to: str = "",
        content: str = "",
        chunks: list[tuple[str, str]] | None = None,
    ) -> None:
        self.kind = kind
        self.path = path
        self.move_to = move_to
        self.content = content
        self.chunks = chunks or []

    def __repr__(self) -> str:
        move = f" -> {self.move_to}" if self.move_to else ""
        return f"<Change {self.kind} {self.path}{move}>"


class Patch:
    """A parsed patch: its :class:`Change` list, and the paths of every header-like line
    (:attr:`mentioned`, see the module doc)."""

    __slots__ = ("changes", "mentioned")

    def __init__(self, changes: list[Change], mentioned: list[str]) -> None:
        self.changes = changes
        self.mentioned = mentioned

    def paths(self) -> list[str]:
        """Every path the patch writes, deletes or moves to, as written, first-seen order."""
        found: dict[str, None] = {}
        for change in self.changes:
            found.setdefault(change.path)
            if change.move_to:
                found.setdefault(change.move_to)
        for path in self.mentioned:
            found.setdefault(path)
        return [path for path in found if path]


def _trim(text: str) -> str:
    return text.strip(_WHITESPACE)


def _lines(text: str) -> list[str]:
    """Rust's ``str::lines``: split on ``\\n``, a trailing ``\\r`` dropped from each line, no
    empty last line."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def mentioned(text: str) -> list[str]:
    """The path of every line that, trimmed, starts with a file header or ``*** Move to:``
    (trimmed too: a reader cannot tell which spelling a Codex build applies).

    >>> mentioned("x\\n   *** Move to:  .forge/a \\n*** Add File: b")
    ['.forge/a', 'b']
    """
    out: dict[str, None] = {}
    for line in _lines(text):
        line = _trim(line)
        for header in _HEADERS:
            if line.startswith(header):
                out.setdefault(_trim(line[len(header) :]))
    return [path for path in out if path]


def parse(text: str) -> Patch:
    """The patch in ``text``, as Codex's lenient parser reads it; :class:`PatchError` when
    Codex would refuse it."""
    lines = _lines(_trim(text.replace("\r\n", "\n")))
    try:
        _boundaries(lines)
    except PatchError:
        if not (
            len(lines) >= 4
            and lines[0] in ("<<EOF", "<<'EOF'", '<<"EOF"')
            and lines[-1].endswith("EOF")
        ):
            raise
        lines = lines[1:-1]
        _boundaries(lines)
    body = lines[1:-1]
    changes: list[Change] = []
    at = 0
    while at < len(body):
        change, used = _hunk(body, at)
        changes.append(change)
        at += used
    return Patch(changes, mentioned(text))


def _boundaries(lines: list[str]) -> None:
    if not lines or lines[0] != BEGIN:
        raise PatchError(f"the first line of the patch must be {BEGIN!r}")
    if len(lines) < 2 or lines[-1] != END:
        raise PatchError(f"the last line of the patch must be {END!r}")


def _hunk(lines: list[str], at: int) -> tuple[Change, int]:
    """The hunk starting at ``lines[at]`` and the number of lines it takes."""
    first = _trim(lines[at])
    if first.startswith(ADD):
        added: list[str] = []
        for line in lines[at + 1 :]:
            if not line.startswith("+"):
                break
            added.append(line[1:])
        content = "".join(f"{line}\n" for line in added)
        return Change("add", first[len(ADD) :], content=content), 1 + len(added)
    if first.startswith(DELETE):
        return Change("delete", first[len(DELETE) :]), 1
    if first.startswith(UPDATE):
        path = first[len(UPDATE) :]
        used = 1
        move_to = ""
        if at + used < len(lines) and lines[at + used].startswith(MOVE):
            move_to = lines[at + used][len(MOVE) :]
            used += 1
        chunks: list[tuple[str, str]] = []
        while at + used < len(lines):
            line = lines[at + used]
            if not _trim(line):
                used += 1
                continue
            if line.startswith("***"):
                break
            chunk, taken = _chunk(lines, at + used, not chunks)
            chunks.append(chunk)
            used += taken
        if not chunks:
            raise PatchError(f"update file hunk for path {path!r} is empty")
        return Change("update", path, move_to=move_to, chunks=chunks), used
    raise PatchError(f"{first!r} is not a valid hunk header")


def _chunk(lines: list[str], at: int, first: bool) -> tuple[tuple[str, str], int]:
    """One ``@@`` chunk of an update: ``((old text, new text), lines taken)``."""
    start = at
    seen_marker = False
    while at < len(lines) and (lines[at] == "@@" or lines[at].startswith("@@ ")):
        seen_marker = True
        at += 1
    if not seen_marker and not first:
        raise PatchError(f"expected an update hunk to start with @@, got {lines[start]!r}")
    if at >= len(lines):
        raise PatchError("update hunk does not contain any lines")
    old: list[str] = []
    new: list[str] = []
    taken = 0
    for line in lines[at:]:
        if line == EOF_MARKER:
            if taken == 0:
                raise PatchError("update hunk does not contain any lines")
            taken += 1
            break
        sign = line[:1]
        if sign == "":
            old.append("")
            new.append("")
        elif sign == " ":
            old.append(line[1:])
            new.append(line[1:])
        elif sign == "+":
            new.append(line[1:])
        elif sign == "-":
            old.append(line[1:])
        elif taken == 0:
            raise PatchError(f"unexpected line in update hunk: {line!r}")
        else:
            break
        taken += 1
    return ("\n".join(old), "\n".join(new)), at - start + taken


def applied(argv: list[str], stdin: str | None) -> tuple[bool, str | None]:
    """Whether ``argv`` runs ``apply_patch`` (or ``codex --codex-run-as-apply-patch``), and the
    patch text it gets: its argument, else ``stdin`` (``None``: not known).

    >>> applied(["apply_patch", "P"], None), applied(["applypatch"], "Q"), applied(["ls"], "")
    ((True, 'P'), (True, 'Q'), (False, None))
    >>> applied(["/usr/bin/codex", "--codex-run-as-apply-patch", "P"], None)
    (True, 'P')
    """
    if not argv:
        return False, None
    name = os.path.basename(argv[0])
    args = argv[1:]
    if name == "codex" and args[:1] == [CODEX_FLAG]:
        args = args[1:]
    elif name not in APPLY_PATCH_NAMES:
        return False, None
    if args[:1] == ["--preserve-crlf"]:
        args = args[1:]
    return True, (args[0] if args else stdin)
