"""What the dashboard shows, gathered from a configured project's store and audit log.

:func:`gather` reads the audit log once and the live sessions' states, and returns one
JSON-ready dict (every string redacted by :func:`forge_policy.audit.verify.clean`): the page
renders it and ``/data.json`` serves it. Each section is gathered on its own: an unreadable
audit log or a failing check leaves that section with an ``error`` and the others intact.

>>> import forge_policy as fp
>>> data = gather(fp.Evaluator(fp.builtin_catalog()), now=0.0)
>>> data["sessions"], data["recent"], data["rates"]["totals"]["blocks"]
([], [], 0)
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

    from forge_policy.catalog.catalog import Catalog
    from forge_policy.engine.evaluator import Evaluator
    from forge_policy.reports.status import Status

#: The most recent blocks and overrides the page lists.
RECENT = 50
#: The live sessions the page draws, most recently active first.
SESSIONS = 20
#: Audit record kinds that carry a behavior's counter and level (a point of a timeline).
COUNTED = ("violation", "block", "override")


def gather(evaluator: Evaluator, *, now: float) -> dict[str, Any]:
    """Every section of the dashboard as of ``now`` (epoch seconds)."""
    from forge_policy._time import iso
    from forge_policy.audit.verify import clean

    records: list[dict[str, Any]] = []
    problem = None
    try:
        records = list(evaluator.audit.records())
    except Exception as exc:  # an unreadable log is shown, never a crash of the page
        problem = _failure(exc)
    data: dict[str, Any] = {
        "generated_at": iso(now),
        "catalog": {"behaviors": len(evaluator.catalog), "enabled": _enabled(evaluator.catalog)},
        "records": len(records),
        "audit_error": problem,
    }
    sections: dict[str, Callable[[], Any]] = {
        "sessions": lambda: sessions(evaluator, records),
        "recent": lambda: recent(evaluator.catalog, records, evaluator.settings.override_window),
        "rates": lambda: rates(evaluator),
        "integrity": lambda: integrity(evaluator),
    }
    for name, build in sections.items():
        try:
            data[name] = build()
        except Exception as exc:  # one broken section must not hide the rest
            data[name] = {"error": _failure(exc)}
    cleaned = clean(data)
    assert isinstance(cleaned, dict)
    return cleaned


def _failure(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _enabled(catalog: Catalog) -> int:
    return sum(1 for b in catalog.behaviors if b.enabled)


# -- sessions ----------------------------------------------------------------------------------


def sessions(evaluator: Evaluator, records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The :data:`SESSIONS` most recently active live sessions: per behavior that has a counter
    its counter, level, blocks, overrides and pending block, and the timeline of its counter
    and level as the audit log recorded them (``[unix time, counter, level, kind]``)."""
    from forge_policy._time import parse_iso
    from forge_policy.ops.admin import status

    def recency(s: Status) -> tuple[float, str]:
        return (-parse_iso(s.last_accessed_at, default=-1.0), s.session_id)

    live = sorted(status(evaluator), key=recency)[:SESSIONS]
    wanted = {s.session_id for s in live}
    points: dict[str, dict[str, list[list[object]]]] = {}
    for record in records:
        sid = record.get("session_id")
        if sid not in wanted or record.get("kind") not in COUNTED:
            continue
        point = _point(record)
        if point is not None:
            series = points.setdefault(str(sid), {})
            series.setdefault(str(record.get("behavior_id")), []).append(point)
    return [_session(s, points.get(s.session_id, {})) for s in live]


def _point(record: Mapping[str, Any]) -> list[object] | None:
    from forge_policy._time import parse_iso

    counter = record.get("counter")
    stamp = parse_iso(record.get("timestamp"), default=-1.0)
    if not isinstance(counter, int) or isinstance(counter, bool) or stamp < 0:
        return None
    level = record.get("level")
    return [stamp, counter, level if isinstance(level, str) else None, record.get("kind")]


def _session(status: Status, timeline: dict[str, list[list[object]]]) -> dict[str, Any]:
    behaviors = {
        behavior_id: {
            "counter": b.counter,
            "level": b.level_shown,
            "next_threshold": b.next_threshold,
            "blocks": b.blocks,
            "overrides": b.overrides,
            "pending_block": b.pending_block,
            "enabled": b.enabled,
        }
        for behavior_id, b in status.behaviors.items()
        if b.counter or b.blocks or b.overrides or b.pending_block or behavior_id in timeline
    }
    return {
        "id": status.session_id,
        "created_at": status.created_at,
        "last_accessed_at": status.last_accessed_at,
        "disabled": list(status.disabled),
        "behaviors": behaviors,
        "timeline": timeline,
    }


# -- recent blocks and overrides ---------------------------------------------------------------


def recent(catalog: Catalog, records: list[dict[str, Any]], window: float) -> list[dict[str, Any]]:
    """The :data:`RECENT` newest blocks and overrides, newest first: number (the record's
    ``seq``, as ``audit log`` and ``explain --record`` name it), time, session, behavior,
    level, the call, and the reason: an override's own, a block's as the agent read it."""
    found: list[dict[str, Any]] = []
    for position in range(len(records) - 1, -1, -1):
        record = records[position]
        kind = record.get("kind")
        if kind not in ("block", "override"):
            continue
        seq = record.get("seq")
        found.append(
            {
                "number": seq if isinstance(seq, int) else position + 1,
                "timestamp": record.get("timestamp"),
                "kind": kind,
                "session_id": record.get("session_id"),
                "behavior_id": record.get("behavior_id"),
                "level": record.get("level"),
                "mechanism": record.get("mechanism"),
                "call": record.get("input_summary"),
                "reason": (
                    str(record.get("reason") or "")
                    if kind == "override"
                    else block_reason(catalog, record, window)
                ),
            }
        )
        if len(found) == RECENT:
            break
    return found


def block_reason(catalog: Catalog, record: Mapping[str, Any], window: float) -> str:
    """The first line of the reason a block gave, rendered again from today's catalog (the
    audit record keeps the call, not the text); "" for a behavior no longer in the catalog."""
    import forge_policy as fp
    from forge_policy.levels import Level
    from forge_policy.render.messages import message

    behavior = catalog.get(str(record.get("behavior_id")))
    if behavior is None:
        return ""
    try:
        level = Level.parse(str(record.get("level")))
        counter = record.get("counter")
        event = fp.Event(
            str(record.get("event") or "PreToolUse"),
            str(record.get("session_id") or ""),
            tool_name=str(record.get("tool_name") or ""),
        )
        text = message(behavior, level, counter if isinstance(counter, int) else 0, event, window)
    except Exception:  # a template that needs the call's own facts: the record says the rest
        return ""
    return text.splitlines()[0] if text else ""


# -- override rates ----------------------------------------------------------------------------


def rates(evaluator: Evaluator) -> dict[str, Any]:
    """Per behavior violations, blocks, overrides, override rate and band, and the totals
    (:func:`forge_policy.ops.admin.governance`, as ``forge-policy audit`` shows them)."""
    from forge_policy.ops.admin import governance

    summary = governance(evaluator)
    return {
        "behaviors": {
            behavior_id: {
                "enabled": b.enabled,
                "violations": b.violations,
                "blocks": b.blocks,
                "overrides": b.overrides,
                "override_rate": b.override_rate,
                "band": b.band,
                "mechanisms": dict(b.mechanisms),
            }
            for behavior_id, b in summary.behaviors.items()
        },
        "totals": {
            "violations": summary.totals.violations,
            "blocks": summary.totals.blocks,
            "overrides": summary.totals.overrides,
            "override_rate": summary.totals.override_rate,
            "band": summary.totals.band,
        },
    }


# -- integrity ---------------------------------------------------------------------------------


def integrity(evaluator: Evaluator) -> dict[str, Any]:
    """The hash-chain check of ``audit --verify``; ``ok`` None for a sink with no chain."""
    from forge_policy.errors import Refused
    from forge_policy.ops.admin import verify_audit

    try:
        return verify_audit(evaluator).to_dict()
    except Refused as exc:
        return {"ok": None, "records": None, "problems": [str(exc)], "torn_tail": False}
