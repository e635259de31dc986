"""Search facts: which paths a look at the code covers, and which looks would cover a write.

search-first gives credit per file instead of one consumable flag. A *key* is an absolute path:
a file (``/repo/src/a.py``) or a directory with a trailing separator (``/repo/src/``), which
stands for everything under it. ``facts.search_credits`` are the keys a Read, Grep, Glob or LS
earns; ``facts.write_credits`` the keys any one of which credits a Write or Edit of a file: the
file itself and each directory above it. So a new file is credited by a search of its folder,
an edited file by a Read of it or by a search that covered it.

>>> from forge_policy.model import Event
>>> def credits(tool, **tool_input):
...     return provide_search_credits(Event("PreToolUse", "s", tool_name=tool,
...                                         tool_input=tool_input, cwd="/r"))
>>> credits("Grep", pattern="def main", glob="src/**/*.py"), credits("Glob", pattern="*.md")
(['/r/src/'], ['/r/'])
>>> credits("Read", file_path="/r/src/a.py", offset=10, limit=5)
['/r/src/a.py']
>>> credits("Bash", command="ls -la docs && grep -rn TODO src/")
['/r/docs/', '/r/src/']
>>> provide_write_credits(Event("PreToolUse", "s", tool_name="Write", cwd="/r",
...                             tool_input={"file_path": "src/new.py", "content": ""}))
['/r/src/new.py', '/r/src/', '/r/', '/']
"""

from __future__ import annotations

import os

from forge_policy._budget import read_outside
from forge_policy.facts._io import event_cwd

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.model import Event

#: the tools whose call looks at the code, and the tool_input key naming where they look
_LOOKS = {"Read": "file_path", "Grep": "path", "Glob": "path", "LS": "path"}
#: the tools that write a file, and the key naming it
_WRITES = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
           "NotebookEdit": "notebook_path"}  # fmt: skip
_GLOB_CHARS = frozenset("*?[{")
_MAX_PATH = 4096


def provide_search_credits(event: Event) -> list[str]:
    """``facts.search_credits``: the keys this call's look at the code earns.

    A Read credits its file (a folder: everything under it). A Grep credits the file or folder it
    searched, the working directory when it names none, narrowed by the folder part of its
    ``glob``; a Glob its ``path`` joined with the folder part of its ``pattern``; an LS its
    folder. A shell command earns what its reading, searching and listing commands name
    (:func:`_shell_looks`). Any other call earns nothing.
    """
    if event.tool_name == "Bash":
        # the credits of commands that name no file (ls, make) are kept across calls
        from forge_policy.facts.commands import kept_value

        return kept_value("search_credits", event, lambda: _shell_looks(event))
    key = _LOOKS.get(event.tool_name or "")
    if key is None:
        return []
    tool_input = event.tool_input if isinstance(event.tool_input, dict) else {}
    cwd = event_cwd(event)
    target = tool_input.get(key)
    given = isinstance(target, str) and bool(target)
    if event.tool_name == "Read" and not given:
        return []
    where = _absolute(target, cwd) if given else cwd  # type: ignore[arg-type]
    if not where:
        return []
    if event.tool_name == "Read":
        return [_as_dir(where) if os.path.isdir(where) else where]
    if event.tool_name == "Grep" and os.path.isfile(where):
        return [where]
    pattern = tool_input.get("pattern" if event.tool_name == "Glob" else "glob")
    if isinstance(pattern, str) and pattern:
        where = _absolute(_literal_folder(pattern), where) or where
    return [_as_dir(where)]


def provide_write_credits(event: Event) -> list[str]:
    """``facts.write_credits``: the keys any one of which credits this Write or Edit: the file,
    then each folder above it up to the root. ``[]`` for any other call."""
    key = _WRITES.get(event.tool_name or "")
    tool_input = event.tool_input if isinstance(event.tool_input, dict) else {}
    target = tool_input.get(key) if key else None
    if not isinstance(target, str) or not target:
        return []
    path = _absolute(target, event_cwd(event))
    if not path:
        return []
    keys = [path]
    folder = os.path.dirname(path)
    while True:
        keys.append(_as_dir(folder))
        parent = os.path.dirname(folder)
        if parent == folder:
            return keys
        folder = parent


def _shell_looks(event: Event) -> list[str]:
    """What the reading (``cat``, ``head``, ``grep`` … with file operands), searching (``rg``,
    ``grep -r``, ``git grep``) and listing (``ls``, ``find``, ``tree``, ``fd``) commands of a
    shell call look at: each operand, a folder standing for everything under it; a search or a
    listing without operands looks at its working directory.

    >>> from forge_policy.model import Event
    >>> _shell_looks(Event("PreToolUse", "s", tool_name="Bash", cwd="/nowhere",
    ...                    tool_input={"command": "cd src && rg -n parse; cat ../a.txt | wc -l"}))
    ['/nowhere/src/', '/nowhere/a.txt']
    """
    from forge_policy.commands import reader_operands
    from forge_policy.facts._io import event_commands
    from forge_policy.facts.commands import command_words

    cwd = event_cwd(event)
    keys: dict[str, None] = {}
    for command in event_commands(event):
        for argv, _cmd, current in command_words(event, command, cwd)[0]:
            if not argv:
                continue  # only assignments or redirections (``> file``)
            name = os.path.basename(argv[0])
            if name == "git" and argv[1:2] == ["grep"]:
                operands, whole = _plain_operands(argv[2:]), True
            elif name in _LISTERS:
                operands, whole = _plain_operands(argv[1:], stop=name == "find"), True
            else:
                operands = reader_operands(argv)
                recursive = any(a.startswith("-") and a[1:2] != "-" and "r" in a.lower()
                                for a in argv[1:]) or "--recursive" in argv  # fmt: skip
                whole = name in _SEARCHERS or (name in ("grep", "egrep", "fgrep") and recursive)
                if not operands and not whole:
                    continue
            if whole and not operands:
                keys.setdefault(_as_dir(current))
            for operand in operands:
                read_outside()  # the disk (and ~) decides what an operand looks at
                path = _absolute(_literal_path(operand), current)
                if not path:
                    continue
                # what the disk does not know: a listing or a recursive search names a folder
                folder = os.path.isdir(path) or (whole and not os.path.lexists(path))
                keys.setdefault(_as_dir(path) if folder else path)
    return list(keys)


#: commands that list or find files (their operands are folders), and searches that default to
#: the working directory
_LISTERS = frozenset({"ls", "find", "tree", "fd", "fdfind", "exa", "eza", "du"})
_SEARCHERS = frozenset({"rg", "ag", "ack"})


def _plain_operands(args: list[str], stop: bool = False) -> list[str]:
    """The arguments that are not options (``find``: up to its first expression)."""
    operands = []
    for arg in args:
        if arg == "--":
            continue
        if arg.startswith("-") or arg in ("(", "!"):
            if stop:
                break
            continue
        operands.append(arg)
    return operands


def _literal_path(word: str) -> str:
    """A shell word's path without its wildcards: ``src/*.py`` looks at ``src``."""
    if not _GLOB_CHARS & set(word):
        return word
    folder = _literal_folder(word)
    return folder or "."


def _absolute(path: str, base: str) -> str:
    """``path`` made absolute against ``base`` and normalised (``~`` expanded); ``""`` for a
    path that cannot name a file."""
    if "\0" in path or len(path) > _MAX_PATH:
        return ""
    if path.startswith("file://"):
        path = path[7:]
    return os.path.normpath(os.path.join(base, os.path.expanduser(path)))


def _as_dir(path: str) -> str:
    return path if path.endswith(os.sep) else path + os.sep


def _literal_folder(pattern: str) -> str:
    """The folders a glob pattern starts with before its first wildcard (``src/**/*.py`` →
    ``src``; ``*.py`` → ``""``); the last component is a name, never a folder.

    >>> _literal_folder("src/**/*.py"), _literal_folder("*.md"), _literal_folder("docs/a.md")
    ('src', '', 'docs')
    """
    parts = pattern.split("/")[:-1]
    literal: list[str] = []
    for part in parts:
        if _GLOB_CHARS & set(part):
            break
        literal.append(part)
    return "/".join(literal) if literal != [""] else "/"
