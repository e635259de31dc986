"""What several fact providers share: bounded file reads, the event's directory, the git dir.

Every provider module may import this one; it imports only :mod:`forge_policy.facts._runtime`.

>>> read_text("/nonexistent/x") is None
True
"""

from __future__ import annotations

import os
import stat

from forge_policy.facts._runtime import note

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
    return event.cwd or os.getcwd()


def read_bounded(path: str, limit: int) -> bytes | None:
    """A regular file's bytes if it holds at most ``limit`` of them, else ``None`` and a note.

    The file is opened non-blocking and checked after opening, so a FIFO or device swapped in
    after a ``stat`` cannot hang the hook.

    >>> read_bounded("/nonexistent/x", 10) is None
    True
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError) as exc:
        note(f"skipped {path}: unreadable ({getattr(exc, 'strerror', None) or exc})")
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            note(f"skipped {path}: not a regular file")
            return None
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            note(f"skipped {path}: too large ({max(size, info.st_size)} bytes, limit {limit})")
            return None
        return b"".join(chunks)
    except OSError as exc:
        note(f"skipped {path}: unreadable ({exc.strerror or exc})")
        return None
    finally:
        os.close(fd)


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
