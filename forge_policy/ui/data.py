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
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

    from forge_policy.catalog.catalog import Catalog
    from forge_policy.config.env import Config
    from forge_policy.engine.evaluator import Evaluator
    from forge_policy.reports.status import Status

#: The most recent blocks and overrides the page lists.
RECENT = 50
#: The live sessions the page draws, most recently active first.
SESSIONS = 20
#: Audit record kinds that carry a behavior's counter and level (a point of a timeline).
COUNTED = ("violation", "block", "override")


def gather(
    evaluator: Evaluator,
    *,
    now: float,
    config: Config | None = None,
    transcripts: Sequence[str] = (),
) -> dict[str, Any]:
    """Every section of the dashboard as of ``now`` (epoch seconds). ``config`` (the project's
    layers: locks and exceptions for the suggestions, the candidate's folder and tally, the
    project folder) and ``transcripts`` (files or folders for the coverage gaps; none: Claude
    Code's folder for the project, when it exists) are optional: without them those sections
    say less."""
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
        "suggestions": lambda: tuning(evaluator, records, config, now),
        "shadow": lambda: shadow(records, config),
        "coverage": lambda: gaps(records, config, transcripts),
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
        count = counter if isinstance(counter, int) else 0
        # the call's facts are not recorded: a template naming one shows an ellipsis
        text = message(behavior, level, count, event, window, facts=lambda name: "…")
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


# -- suggestions, shadow verdicts, coverage gaps -----------------------------------------------


def tuning(
    evaluator: Evaluator, records: list[dict[str, Any]], config: Config | None, now: float
) -> list[dict[str, Any]]:
    """``forge-policy suggest``'s proposals (:func:`forge_policy.ops.suggest.suggestions`),
    each with the command that applies it; the dashboard applies nothing."""
    from forge_policy.ops.suggest import suggestions

    settings = config.current_settings() if config is not None else None
    found = suggestions(records, evaluator.catalog, settings, now=now)
    return [s.to_dict() for s in found]


def shadow(records: list[dict[str, Any]], config: Config | None) -> dict[str, Any]:
    """``forge-policy shadow report``: where the candidate catalog would have decided
    differently (:func:`forge_policy.ops.shadow_report.shadow_report`), and which candidate
    is configured (``candidate``, None: none)."""
    from forge_policy.engine.candidate import compared_events
    from forge_policy.ops.shadow_report import shadow_report

    compared = None
    candidate = None
    if config is not None:
        settings = config.current_settings()
        candidate = settings.candidate if settings is not None else None
        compared = compared_events(config.root) if config.store != "memory" else None
    report = shadow_report(records, compared=compared).to_dict()
    report["candidate"] = candidate
    return report


def claude_code_folder(project: str, home: str | None = None) -> str:
    """Where Claude Code keeps a project's transcripts: ``~/.claude/projects/`` and the
    project's absolute path with every character but letters and digits made ``-``.

    >>> claude_code_folder("/home/u/my.app", home="/home/u")
    '/home/u/.claude/projects/-home-u-my-app'
    """
    import os
    import re

    base = home if home is not None else os.path.expanduser("~")
    return os.path.join(base, ".claude", "projects", re.sub(r"[^A-Za-z0-9]", "-", project))


def gaps(
    records: list[dict[str, Any]], config: Config | None, transcripts: Sequence[str]
) -> dict[str, Any]:
    """The tool calls of the transcripts that got no decision
    (:func:`forge_policy.ops.coverage.coverage`), with the transcripts read
    (``transcripts``); ``note`` says why nothing was checked when there is none."""
    import os

    from forge_policy.ops.coverage import coverage, hook_matchers
    from forge_policy.ops.transcript import read_transcripts

    project = os.path.abspath(config.project_dir) if config is not None else None
    paths = list(transcripts)
    if not paths and project is not None:
        folder = claude_code_folder(project)
        paths = [folder] if os.path.isdir(folder) else []
    if not paths:
        where = f" (looked in {claude_code_folder(project)})" if project is not None else ""
        return {"transcripts": [], "note": f"no transcript to compare with{where}"}
    read = read_transcripts(paths)
    matchers = hook_matchers(project) if project is not None else None
    found = coverage(read, records, matchers=matchers, project=project).to_dict()
    found["transcripts"] = paths
    return found
