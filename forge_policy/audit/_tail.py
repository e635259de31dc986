"""Reading a JSONL audit log from its end: the last record, a torn tail, the head anchor.

A *torn tail* is what a crash can leave after the last complete record: bytes without a
trailing newline, or a last line that is not a record (e.g. NUL bytes). A last line that *is* the
next record of the chain but lacks its newline is *unterminated*: it is kept, not dropped.

>>> import io
>>> from forge_policy.audit.verify import GENESIS, encode_line
>>> one = encode_line({"kind": "block"}, 1, GENESIS)
>>> [kind for _, _, kind in classify(io.BytesIO(one + b"\\n" + b'{"kind":"bl'))]
['line', 'torn']
"""

from __future__ import annotations

import os

from forge_policy.audit.verify import GENESIS, line_hash, parse_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO

HEAD_SIZE = 86  # b"%020d %s\n": seq, a space, sha256 hex, a newline
_CHUNK = 8192

Tail = tuple[int, str, bytes, tuple[int, bytes] | None]
"""``(last seq, last hash, prefix to write first, torn (offset, dropped bytes) or None)``."""


def format_head(seq: int, digest: str) -> bytes:
    """The head anchor: the last seq and hash, fixed width so one write replaces it.

    >>> len(format_head(7, "ab" * 32)) == HEAD_SIZE
    True
    """
    return b"%020d %s\n" % (seq, digest.encode("ascii"))


def read_head(fd: int) -> tuple[int, str] | None:
    """The head anchor of a lock file, or None when absent or unreadable."""
    data = _pread(fd, 0, HEAD_SIZE)
    parts = data.split()
    if len(data) != HEAD_SIZE or len(parts) != 2 or not parts[0].isdigit():
        return None
    return int(parts[0]), parts[1].decode("ascii", "replace")


def first_line_hash(fd: int) -> str:
    """The hash of an open log's first line (:data:`GENESIS` for an empty log)."""
    start, chunk = 0, _CHUNK
    buf = b""
    while True:
        data = _pread(fd, start, chunk)
        buf += data
        cut = buf.find(b"\n")
        if cut >= 0:
            return line_hash(buf[:cut])
        if not data:
            return line_hash(buf) if buf else GENESIS
        start += len(data)
        chunk *= 2


def classify(file: BinaryIO, limit: int = -1) -> Iterator[tuple[int, bytes, str]]:
    """``(line number, bytes without newline, kind)`` of each line of a log, up to ``limit``
    bytes (-1: all); kind is ``line``, ``unterminated`` or ``torn`` (the last line only)."""
    pending: bytes | None = None
    prev = GENESIS
    seq = 0
    number = 0
    remaining = limit
    for raw in file:
        if remaining >= 0:
            if remaining == 0:
                break
            raw = raw[:remaining]
            remaining -= len(raw)
        if pending is not None:  # not the last line: it ends with a newline
            body = pending[:-1]
            yield number, body, "line"
            record = parse_line(body)
            seq = record["seq"] if record is not None else seq + 1
            prev = line_hash(body)
        number += 1
        pending = raw
    if pending is None:
        return
    if pending.endswith(b"\n"):
        body = pending[:-1]
        yield number, body, "line" if parse_line(body) is not None else "torn"
    else:
        yield number, pending, _unterminated_kind(pending, seq, prev)


def tail(fd: int) -> Tail:
    """Where the next record goes in an open log (see :data:`Tail`)."""
    size = os.fstat(fd).st_size
    if size == 0:
        return 0, GENESIS, b"", None
    # the last byte and the chunk before it in one read (the last line is usually in it)
    want = min(size, _CHUNK + 1)
    block = _pread(fd, size - want, want)
    if len(block) != want:  # the file changed meanwhile (writers hold the lock): no shortcut
        block = _pread(fd, size - 1, 1)
        block = b"\n" if block == b"\n" else b""
    if block[-1:] == b"\n":
        start, line = _line_ending_at(fd, size - 1, block[:-1])
        record = parse_line(line)
        if record is not None:
            return record["seq"], line_hash(line), b"", None
        seq, prev = _record_before(fd, start)
        return seq, prev, b"", (start, line + b"\n")
    start, fragment = _line_ending_at(fd, size, block)
    seq, prev = _record_before(fd, start)
    if _unterminated_kind(fragment, seq, prev) == "unterminated":
        return seq + 1, line_hash(fragment), b"\n", None
    return seq, prev, b"", (start, fragment)


def _unterminated_kind(line: bytes, seq: int, prev: str) -> str:
    record = parse_line(line)
    if record is not None and record["seq"] == seq + 1 and record.get("prev") == prev:
        return "unterminated"
    return "torn"


def _pread(fd: int, offset: int, size: int) -> bytes:
    if _PREAD is not None:  # one system call, and the file's offset stays (O_APPEND writes)
        data: bytes = _PREAD(fd, size, offset)
        return data
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, size)


_PREAD = getattr(os, "pread", None)  # not on Windows


def _line_ending_at(fd: int, end: int, known: bytes = b"") -> tuple[int, bytes]:
    """``(start, bytes)`` of the line whose bytes end at offset ``end`` (newline excluded);
    ``known``: the bytes just before ``end``, already read (a shorter read, the file's end
    moved, is not used)."""
    buf = b""
    pos = end
    chunk = _CHUNK
    if known and len(known) <= end:
        start = end - len(known)
        cut = known.rfind(b"\n")
        if cut >= 0:
            return start + cut + 1, known[cut + 1 :]
        buf, pos = known, start
    while pos > 0:
        step = min(chunk, pos)
        pos -= step
        buf = _pread(fd, pos, step) + buf
        cut = buf.rfind(b"\n")
        if cut >= 0:
            return pos + cut + 1, buf[cut + 1 :]
        chunk *= 2
    return 0, buf


def _record_before(fd: int, start: int) -> tuple[int, str]:
    """``(seq, hash)`` of the line ending just before offset ``start`` (a line start)."""
    if start == 0:
        return 0, GENESIS
    _, line = _line_ending_at(fd, start - 1)
    record = parse_line(line)
    if record is not None:
        return record["seq"], line_hash(line)
    # an unreadable line before the tail (corruption verify reports): count lines, chain on
    return _pread(fd, 0, start).count(b"\n"), line_hash(line)
