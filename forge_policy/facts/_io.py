"""What several fact providers share: bounded file reads, the event's directory and shell
commands, the git dir.

Every provider module may import this one; it imports only :mod:`forge_policy._budget`.

>>> read_text("/nonexistent/x") is None
True
"""

from __future__ import annotations

import os

from forge_policy._budget import CURRENT, truncated
from forge_policy._budget import read_bounded as read_bounded

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.model import Event

#: What :func:`read_text` reads at most (a bigger file is skipped with a note).
MAX_TEXT_BYTES = 1 << 20


def event_cwd(event: Event) -> str:
    """The directory the event's relative paths are resolved against (the process's if unset).

    >>> from forge_policy.model import Event
    >>> event_cwd(Event("Stop", "s", cwd="/repo"))
    '/repo'
    """
    if event.cwd:
        return event.cwd
    # the process's directory, read once per event for all its providers (a system call each
    # time otherwise, ten per Bash call): the run carries the event's shared work
    run = CURRENT.get()
    memo = run.shared if run is not None else None
    if memo is None:
        return os.getcwd()
    held = memo.get(_PROCESS_CWD)
    if held is not None and held[0] is event:
        return held[1]  # type: ignore[no-any-return]
    cwd = os.getcwd()
    memo[_PROCESS_CWD] = (event, cwd, (), ())  # the shape of facts._runtime.shared's entries
    return cwd


_PROCESS_CWD = "\0the process's directory"


def event_commands(event: Event) -> list[str]:
    """The shell commands of a tool call: ``tool_input.command`` and ``tool_input.commands``.

    A command that could not be read (an :class:`~forge_policy.values.Unknown`: an MCP call's
    command argument, :mod:`forge_policy.facts.mcp`) makes the running fact incomplete
    (:func:`~forge_policy._budget.truncated`), so a blocking rule reads it as a possible match.
    """
    tool_input = event.tool_input
    command = tool_input.get("command")
    if type(command) is str and "commands" not in tool_input:
        return [command]  # one plain command (an Unknown is a str subclass): the common case
    found: list[str] = []
    # an Unknown (a str with a reason; this module imports only _budget) is no command
    reason = getattr(command, "reason", None) if isinstance(command, str) else None
    if isinstance(reason, str):
        truncated(f"the command could not be read: {reason}")
    elif isinstance(command, str):
        found.append(command)
    listed = tool_input.get("commands")
    for item in listed if isinstance(listed, list) else []:
        if isinstance(item, dict):
            item = item.get("command")
        if isinstance(item, str):
            found.append(item)
    return found


def read_text(path: str, limit: int = MAX_TEXT_BYTES) -> str | None:
    """A regular file's text (UTF-8, bad bytes replaced) when it exists and holds at most
    ``limit`` bytes, else ``None`` (a missing file silently, any other problem with a note)."""
    if not os.path.isfile(path):
        return None
    data = read_bounded(path, limit)
    return None if data is None else data.decode("utf-8", "replace")


def git_dir(root: str) -> str | None:
    """The repository's common git directory at ``root``: ``.git``, or where a ``.git`` file
    points (a worktree's or submodule's), following ``commondir``; ``None`` when there is none.

    >>> git_dir("/nonexistent") is None
    True
    """
    dot_git = os.path.join(root, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    text = read_text(dot_git)
    if not text or not text.startswith("gitdir:"):
        return None
    gitdir = os.path.normpath(os.path.join(root, text[len("gitdir:") :].strip()))
    common = read_text(os.path.join(gitdir, "commondir"))
    return os.path.normpath(os.path.join(gitdir, common.strip())) if common else gitdir
