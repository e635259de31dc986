"""A decision's records appended with the session's checkpoint of the log (SPEC §9).

The evaluator keeps in each session's state where the log stood after its last decision: the
checkpoint ``(seq, line hash, first line's hash)``. :func:`append_checkpointed` appends a
decision's records and returns the new checkpoint; a log that holds fewer records than the
session last saw, or starts with another record, lost some (truncated, or deleted with its
anchor and started anew): that is appended as an ``integrity`` record, which keeps
``audit --verify`` failing, never repaired into a "recovery".

>>> from forge_policy.audit.memory import MemoryAuditSink
>>> sink = MemoryAuditSink()
>>> append_checkpointed(sink, [{"kind": "block", "session_id": "s"}], None, "s", 0.0) is None
True
>>> [r["kind"] for r in sink.records()]
['block']
"""

from __future__ import annotations

from forge_policy.audit.base import checkpointed, write

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.audit.base import AuditSink

    Checkpoint = tuple[int, str, str]


def append_checkpointed(
    sink: AuditSink,
    records: list[dict[str, Any]],
    seen: Checkpoint | None,
    session_id: str,
    now: float,
    *,
    denial: bool = False,
) -> Checkpoint | None:
    """Append ``records`` (the source of truth, before the state); return the checkpoint the
    session's state keeps after them (None: the sink keeps none). ``seen`` is the session's
    previous checkpoint: a log behind it gets an ``integrity`` record first. ``denial``: the
    records of a decision that lets nothing run (:func:`~forge_policy.audit.base.write`)."""
    write(sink, records, denial=denial)
    log = checkpointed(sink)
    appended = log.last_append if log is not None else None
    if log is None or appended is None:
        return None
    if seen is not None and (appended.before < seen[0] or appended.origin != seen[2]):
        write(
            sink,
            [
                integrity_record(
                    session_id, seen[0], appended.before, appended.origin == seen[2], now
                )
            ],
        )
        appended = log.last_append or appended
    return appended.seq, appended.hash, appended.origin


def integrity_record(
    session_id: str, checkpoint_seq: int, log_seq: int, same_origin: bool, now: float
) -> dict[str, Any]:
    """The ``integrity`` record of a log found behind a session's checkpoint.

    >>> integrity_record("s", 9, 4, True, 0.0)["reason"][:54]
    "the audit log held 4 records when session 's' had seen"
    """
    from forge_policy._time import iso
    from forge_policy.audit.verify import INTEGRITY

    reason = (
        f"the audit log held {log_seq} records when session {session_id!r} "
        f"had seen it reach seq {checkpoint_seq}"
        + ("" if same_origin else ", and it starts with another record")
        + ": records were removed or the log was replaced"
    )
    return {
        "kind": INTEGRITY,
        "timestamp": iso(now),
        "session_id": session_id,
        "reason": reason,
        "checkpoint_seq": checkpoint_seq,
        "log_seq": log_seq,
    }
