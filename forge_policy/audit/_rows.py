"""The hash chain as table rows: what the SQLite and PostgreSQL sinks store and check alike.

A row is ``(seq, ts, kind, override_id, session_id, record, prev_hash, hash)``: the record's
canonical JSON (without ``seq``/``prev``), the columns an index or a query reads beside it, and
``hash``, the sha256 of the line the JSONL sink would write for it (record + ``seq`` +
``prev = prev_hash``), so every sink verifies alike.

>>> rows, last = chain_rows([{"kind": "block", "session_id": "s1"}], 0, GENESIS)
>>> rows[0][:5], last == rows[0][7]
((1, None, 'block', None, 's1'), True)
>>> verify_rows(rows, head_seq=1).ok
True
"""

from __future__ import annotations

import json

from forge_policy.audit.verify import (
    GENESIS,
    ChainChecker,
    VerifyReport,
    canonical,
    encode_line,
    line_hash,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from forge_policy.audit.verify import Checkpoint

__all__ = ["GENESIS", "chain_rows", "columns", "verify_rows"]

Row = tuple[int, "str | None", str, "str | None", "str | None", str, str, str]


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def columns(record: dict[str, Any]) -> tuple[str | None, str, str | None, str | None]:
    """``(ts, kind, override_id, session_id)`` of a record, as stored beside it."""
    return (
        _text(record.get("timestamp")),
        str(record.get("kind", "")),
        _text(record.get("override_id")),
        _text(record.get("session_id")),
    )


def chain_rows(batch: Iterable[dict[str, Any]], seq: int, prev: str) -> tuple[list[Row], str]:
    """The rows of records (JSON-ready and redacted: :func:`forge_policy.audit.base.write`)
    appended after ``seq`` (whose line hashed to ``prev``), and the hash of the last one."""
    rows: list[Row] = []
    for record in batch:
        seq += 1
        digest = line_hash(encode_line(record, seq, prev))
        rows.append((seq, *columns(record), canonical(record).decode("utf-8"), prev, digest))
        prev = digest
    return rows, prev


def verify_rows(
    rows: Iterable[Sequence[Any]], head_seq: int | None, checkpoints: Iterable[Checkpoint] = ()
) -> VerifyReport:
    """Check rows oldest first: JSON, ``seq`` continuity, the hash chain, the columns, that
    none was deleted from the end (``head_seq``, the highest seq ever appended, when the table
    keeps it) and the sessions' ``checkpoints``."""
    checker = ChainChecker(checkpoints)
    extra: list[str] = []
    for seq, ts, kind, override_id, session_id, text, prev_hash, digest in rows:
        where = f"row seq {seq}"
        try:
            record = json.loads(text)
        except ValueError:
            record = None
        if isinstance(record, dict):
            line = canonical({**record, "seq": seq, "prev": prev_hash})
            if (ts, kind, override_id, session_id) != columns(record):
                extra.append(f"{where}: columns do not match the record (edited)")
        else:
            line = str(text).encode("utf-8", "replace")
        checker.check(where, line)
        if line_hash(line) != digest:
            extra.append(f"{where}: hash does not match the record (edited)")
    if head_seq is not None:
        checker.check_head((int(head_seq), checker.last_hash), f"row seq {checker.last_seq}")
    return checker.report(False, extra)
