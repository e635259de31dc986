"""The hash chain shared by the file and SQLite audit sinks, and the report of ``verify()``.

Every stored record is one canonical JSON line (sorted keys, compact separators, UTF-8) that
carries ``seq`` (1-based, contiguous) and ``prev``: the sha256 hex of the previous line's exact
bytes (``"0" * 64`` for the first). Editing, removing or reordering any line breaks the ``prev``
of the line after it or the ``seq`` sequence; the sinks anchor the last line separately so that
dropping records from the end is detected too.

>>> line = encode_line(clean({"kind": "block", "note": "password='hunter22'"}), 1, GENESIS)
>>> print(line.decode()[:46])
{"kind":"block","note":"password='[REDACTED]'"
>>> checker = ChainChecker()
>>> checker.check("line 1", line)["seq"]
1
>>> checker.report().ok
True
"""

from __future__ import annotations

import json
import math
from typing import NamedTuple

from forge_policy.model import sha256_hex  # the builtin sha256: hashlib loads OpenSSL
from forge_policy.secrets import redact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from forge_policy.audit._report import VerifyReport as VerifyReport

GENESIS = "0" * 64
"""The ``prev`` of the first record."""
INTEGRITY = "integrity"
"""The kind of a record noting that records were lost: it keeps the log failed for good."""

CHAIN_KEYS = ("seq", "prev")
"""Keys the sinks set on every record; values a caller passes under them are replaced."""


def clean(value: object) -> Any:
    """A JSON-ready, redacted copy of ``value``: every string (keys too) goes through
    :func:`~forge_policy.secrets.redact`; anything that is not JSON becomes redacted text.

    >>> clean({"cmd": "export KEY=AKIAABCDEFGHIJKLMNOP", "n": (1, 2.5, None)})
    {'cmd': 'export KEY=[REDACTED]', 'n': [1, 2.5, None]}
    """
    if isinstance(value, str):
        return _text(value)
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {_text(str(k)): clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    return _text(str(value))


def _text(text: str) -> str:
    text = redact(text)
    if text.isascii():  # no lone surrogate: UTF-8 as it is (a record's texts mostly are)
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates cannot be written as UTF-8
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def canonical(record: Mapping[str, Any]) -> bytes:
    """Sorted keys, compact separators, UTF-8: the exact bytes of one stored line."""
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def encode_line(record: Mapping[str, Any], seq: int, prev: str) -> bytes:
    """The stored line of ``record`` (JSON-ready and redacted: :func:`clean` ran on it when it
    was written, :func:`forge_policy.audit.base.write`) at position ``seq`` after a line hashing
    to ``prev``; without the newline. :class:`~forge_policy.AuditError` for a value that is not
    JSON (a writer that bypassed ``write``)."""
    body = dict(record)
    body["seq"] = seq
    body["prev"] = prev
    try:
        return canonical(body)
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        from forge_policy.errors import AuditError

        raise AuditError(
            f"audit record is not JSON ({exc}); records reach a sink through "
            "forge_policy.audit.base.write"
        ) from None


def line_hash(line: bytes) -> str:
    """sha256 hex of a line's bytes (without its newline)."""
    return sha256_hex(line)


def parse_line(line: bytes) -> dict[str, Any] | None:
    """The record of a stored line, or None when it is not a JSON object with an int ``seq``."""
    try:
        value = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):  # a tampered line: a finding
        return None
    if not isinstance(value, dict):
        return None
    seq = value.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool):
        return None
    return value


class Appended(NamedTuple):
    """Where one append began and ended: the log's last seq before it, the seq and line hash
    of the last record it wrote, and the hash of the log's first line (which names the log:
    a log deleted and started anew has another)."""

    before: int
    seq: int
    hash: str
    origin: str


Checkpoint = tuple[str, int, str]
"""``(session id, seq, line hash)``: where the log stood after a session's last audited
decision, as its state records it (:attr:`~forge_policy.state.SessionState.audit_checkpoint`)."""


class ChainChecker:
    """Checks stored lines one by one, oldest first, collecting every problem.

    ``checkpoints`` are the places sessions saw the log reach: a line at such a seq must hash
    as recorded, and a log that ends before one lost records — even when the log and its
    anchor were deleted together and a new chain started.
    """

    __slots__ = (
        "_checkpoints",
        "_expected",
        "_prev",
        "last_hash",
        "last_seq",
        "problems",
        "records",
    )

    def __init__(self, checkpoints: Iterable[Checkpoint] = ()) -> None:
        self._checkpoints: dict[int, list[tuple[str, str]]] = {}
        for session_id, seq, digest in checkpoints:
            self._checkpoints.setdefault(seq, []).append((session_id, digest))
        self._expected = 1
        self._prev = GENESIS
        self.problems: list[str] = []
        self.records = 0
        self.last_seq = 0
        self.last_hash = GENESIS

    def check(self, where: str, line: bytes) -> dict[str, Any] | None:
        """Check one line (``where`` names it in problems); return its record if readable."""
        record = parse_line(line)
        if record is None:
            self.problems.append(f"{where}: not a JSON object with a seq")
            self._expected += 1
        else:
            seq = record["seq"]
            if seq != self._expected:
                self.problems.append(
                    f"{where}: seq {seq}, expected {self._expected} "
                    "(a record was removed, reordered or inserted)"
                )
            if record.get("prev") != self._prev:
                self.problems.append(
                    f"{where}: prev does not match the hash of the record "
                    "before it (edited, removed or reordered)"
                )
            if canonical(record) != line:
                self.problems.append(f"{where}: not in canonical form (edited)")
            if record.get("kind") == INTEGRITY:
                self.problems.append(f"{where}: {record.get('reason', 'integrity failure')}")
            if record.get("kind") == "recovery" and "head_seq" in record:
                # an append found the log shorter than its anchored head: the records it lost
                # stay lost, so the log stays failed (never laundered into a "recovery")
                self.problems.append(
                    f"{where}: records {record.get('log_seq', '?')}+1..{record['head_seq']} "
                    "were removed from the end of the log before this append"
                )
            self._expected = seq + 1
            self.records += 1
            self.last_seq = seq
        self._prev = self.last_hash = line_hash(line)
        if record is not None and record["seq"] in self._checkpoints:
            for session_id, digest in self._checkpoints.pop(record["seq"]):
                if digest != self.last_hash:
                    self.problems.append(
                        f"{where}: not the record session {session_id!r} saw written at seq "
                        f"{record['seq']} (the log was rewritten or replaced)"
                    )
        return record

    def check_head(self, head: tuple[int, str] | None, where: str) -> None:
        """Compare the end of the chain with the anchored head ``(seq, hash)``, if known."""
        if head is None:
            return
        seq, digest = head
        if seq > self.last_seq:
            self.problems.append(
                f"log ends at seq {self.last_seq} but the head records seq "
                f"{seq}: records were removed from the end"
            )
        elif seq == self.last_seq and digest != self.last_hash:
            self.problems.append(f"{where}: last record does not match the head hash (edited)")

    def report(self, torn_tail: bool = False, extra: list[str] | None = None) -> VerifyReport:
        """The :class:`VerifyReport` of everything checked."""
        furthest: dict[str, int] = {}
        for seq, seen in self._checkpoints.items():
            for session_id, _digest in seen:
                furthest[session_id] = max(seq, furthest.get(session_id, 0))
        missing = [
            f"log ends at seq {self.last_seq} but session {session_id!r} saw it reach seq "
            f"{seq}: records were removed"
            for session_id, seq in sorted(furthest.items())
        ]
        from forge_policy.audit._report import VerifyReport

        return VerifyReport(self.records, [*self.problems, *(extra or []), *missing], torn_tail)


def __getattr__(name: str) -> Any:
    """:class:`VerifyReport`, built on first use (a hook call never verifies a whole log)."""
    if name == "VerifyReport":
        from forge_policy.audit._report import VerifyReport

        return VerifyReport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
