"""Which sessions a JSONL audit log holds lines of: a long-lived process's cache (the warm
worker, ``serve``), so that a new session's first counted event answers "the log holds nothing of
this session" without reading the log back over the last TTL (SPEC §9's rebuild of a session
with no state: ~1 µs a line, 11 ms at 10,000 lines of other sessions).

The index keeps every session id found in the log's complete lines up to ``offset`` (a superset:
an id found where a record would not count it, in a nested object or an unreadable line, is kept
too: it only sends the lookup to the full read). Each lookup reads what was appended since
(complete lines only; an unterminated last line is looked at for that lookup alone) and checks,
before trusting what it holds, that the log is still the one it read: the same device and inode,
no shorter than ``offset``, the same first line and the same bytes just before ``offset``. Any
doubt (rotated, truncated, rewritten, a torn tail dropped by a repair) rebuilds it from the first
byte. An edit in the middle of a log that keeps its first line and its end is not seen, as it is
not by a catch-up from a stored position (:func:`forge_policy.audit.base.records_after`): the log
is append-only, and such an edit is what ``forge-policy audit verify`` reports.

Nothing here turns an unreadable log into an answer: a read error is raised to the caller, as
the full read raises it.

>>> import os, tempfile
>>> from forge_policy.audit.verify import GENESIS, encode_line
>>> path = os.path.join(tempfile.mkdtemp(), "log")
>>> with open(path, "wb") as f:
...     _ = f.write(encode_line({"kind": "seen", "session_id": "a"}, 1, GENESIS) + b"\\n")
>>> index = SessionIndex()
>>> fd = os.open(path, os.O_RDONLY)
>>> index.holds(fd, "a"), index.holds(fd, "b")
(True, False)
>>> os.close(fd)
"""

from __future__ import annotations

import os
import re
import threading

from forge_policy.audit.verify import parse_line

#: a ``"session_id": "<text>"`` pair of a line without a backslash (no escape can then spell the
#: key or the value otherwise, and no string value can hold a quote): every such pair, at any
#: depth, so a superset of the top-level one a record's ``session_id`` reads
_PAIR = re.compile(rb'"session_id"[ \t\r]*:[ \t\r]*"([^"\\\n]*)"')  # never across lines
#: how much is read at a time, and the bytes before ``offset`` kept to recognise the log
_CHUNK = 1 << 20
_MARK = 256
#: a larger log is not indexed (its first build, ~2 ms a MiB, would hold one answer past the
#: hook's deadline): it is read back from the end, as without the index
MAX_BYTES = 64 << 20


def sessions_in(data: bytes) -> set[str]:
    """The session ids of ``data``'s lines: every string a line's record (:func:`parse_line`)
    holds under ``session_id``, and possibly more (see :data:`_PAIR`).

    >>> sorted(sessions_in(b'{"session_id":"a","seq":1}\\n{"n":{"session_id":"b"},"seq":2}'))
    ['a', 'b']
    >>> sessions_in(b'{"note":"\\\\"session_id\\\\":\\\\"x\\\\"","seq":3}')  # text, not a key
    set()
    """
    if b"\\" not in data:
        return {raw.decode("utf-8", "surrogateescape") for raw in _PAIR.findall(data)}
    found: set[str] = set()
    for line in data.split(b"\n"):
        if b"\\" not in line:
            found.update(raw.decode("utf-8", "surrogateescape") for raw in _PAIR.findall(line))
            continue
        record = parse_line(line)  # an escape: what the record says, as the full read parses it
        session = record.get("session_id") if record is not None else None
        if isinstance(session, str):
            found.add(session)
    return found


class SessionIndex:
    """The sessions of one log's complete lines up to ``offset``; thread-safe (one lock)."""

    __slots__ = ("_lock", "first", "identity", "mark", "offset", "sessions")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.identity: tuple[int, int] | None = None
        self.offset = 0
        self.first = b""  # the log's first bytes, up to its first newline or _MARK
        self.mark = b""  # the bytes just before ``offset``
        self.sessions: set[str] = set()

    def holds(self, fd: int, session_id: str) -> bool:
        """Whether the log open at ``fd`` may hold a line of ``session_id`` (False: it holds
        none, read up to its size at this call). Raises :class:`OSError` as a read does."""
        with self._lock:
            info = os.fstat(fd)
            if info.st_size > MAX_BYTES:
                self.identity = None
                self.sessions = set()
                return True  # not indexed: the caller reads the log
            if not self._same_log(fd, info):
                self.identity = (info.st_dev, info.st_ino)
                self.offset, self.first, self.mark = 0, b"", b""
                self.sessions = set()
            rest = self._read_to(fd, info.st_size)
            return session_id in self.sessions or (bool(rest) and session_id in sessions_in(rest))

    def _same_log(self, fd: int, info: os.stat_result) -> bool:
        if self.identity != (info.st_dev, info.st_ino) or info.st_size < self.offset:
            return False
        if self.offset == 0:
            return True
        if os.pread(fd, len(self.first), 0) != self.first:
            return False
        return os.pread(fd, len(self.mark), self.offset - len(self.mark)) == self.mark

    def _read_to(self, fd: int, size: int) -> bytes:
        """Index the complete lines from ``offset`` up to ``size``; return the bytes after the
        last newline (an unterminated line, usually none), not indexed."""
        position = self.offset
        pending = b""
        while position < size:
            data = os.pread(fd, min(_CHUNK, size - position), position)
            if not data:
                break  # shrank meanwhile: the next lookup's checks rebuild
            position += len(data)
            data = pending + data
            cut = data.rfind(b"\n") + 1
            pending = data[cut:]
            if cut:
                self._consume(data[:cut])
        return pending

    def _consume(self, lines: bytes) -> None:
        """Add complete ``lines`` (ending with a newline) read at ``offset``."""
        if self.offset == 0:
            self.first = lines[: min(lines.find(b"\n") + 1, _MARK)]
        self.sessions |= sessions_in(lines)
        self.offset += len(lines)
        self.mark = (self.mark + lines)[-_MARK:]
