"""``forge-policy audit``: the governance summary and the hash-chain check, and ``audit log``:
the records themselves, newest first (:mod:`forge_policy.ops.audit_log`), paged on a terminal.
"""

from __future__ import annotations

from forge_policy.cli._format import limit_count, since_time, table, to_json
from forge_policy.cli.context import INTEGRITY_FAILURE, OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Callable
    from typing import Any

    from forge_policy.cli.context import Context
    from forge_policy.ops.audit_log import LogPage

#: Records ``audit log`` shows unless ``--limit`` says otherwise; ``audit --json``'s ``recent``.
LOG_LIMIT = 50
RECENT = 20


def register(command: Callable[..., Any]) -> None:
    """Add ``audit`` and ``audit log`` to the parser."""
    from forge_policy.ops.audit_log import KINDS

    p = command(
        "audit",
        cmd_audit,
        "Governance summary: behaviors installed and enabled; per behavior violations, blocks, "
        "overrides and override rate (healthy < 0.3 <= review <= 0.7 < ineffective). "
        "'audit log' lists the records themselves.",
    )
    p.add_argument(
        "--verify", action="store_true", help="check the audit log's hash chain (exit 4 if broken)"
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print JSON: the counts, per-behavior rows (sessions, last seen) and the "
        f"{RECENT} most recent records",
    )
    sub = p.add_subparsers(dest="audit_command", metavar="log", required=False)
    text = (
        "The audit records, newest first: time (local), kind, session, behavior, level and "
        "what the record is about. Paged through $PAGER (less) on a terminal. The number in "
        "the first column is what explain --record takes."
    )
    log = sub.add_parser("log", help=text, description=text, formatter_class=p.formatter_class)
    log.set_defaults(handler=cmd_audit_log)
    log.add_argument("--session", metavar="SID", help="only this session's records")
    log.add_argument("--behavior", metavar="ID", help="only this behavior's records")
    log.add_argument(
        "--kind",
        action="append",
        choices=KINDS,
        metavar="KIND",
        help=f"only records of this kind (repeatable): {', '.join(KINDS)}",
    )
    log.add_argument(
        "--since",
        type=since_time,
        metavar="WHEN",
        help="only records from then on: a duration back from now (30m, 2h, 3d, 1w) or an "
        "ISO date or time (2026-01-31, 2026-01-31T09:00; local time without a zone)",
    )
    log.add_argument(
        "--limit",
        type=limit_count,
        default=LOG_LIMIT,
        metavar="N",
        help=f"at most N records (default {LOG_LIMIT}; 0: all)",
    )
    log.add_argument("--json", action="store_true", help="print JSON (every field of a record)")
    log.add_argument("--no-pager", action="store_true", help="never page the output")


def cmd_audit(args: Namespace, ctx: Context) -> int:
    """``forge-policy audit [--verify] [--json]``."""
    from forge_policy.ops.admin import governance, verify_audit

    evaluator = ctx.evaluator
    verified = verify_audit(evaluator) if args.verify else None
    if verified is not None and not verified.ok:
        if args.json:
            ctx.print_json({"verify": verified.to_dict()})
        for problem in verified.problems:
            ctx.note(f"audit log: {problem}")
        ctx.note(f"integrity failure: the audit log ({verified.records} records) is broken")
        return INTEGRITY_FAILURE
    summary = governance(evaluator)
    if args.json:
        result = to_json(summary)
        result.update(_activity(ctx, result.get("behaviors", {})))
        if verified is not None:
            result["verify"] = verified.to_dict()
        ctx.print_json(result)
        return OK
    enabled = summary.enabled or ()
    seen = summary.kinds.get("seen", 0)
    ctx.print(
        f"{summary.installed} behaviors installed, {len(enabled)} enabled; "
        f"{summary.records} audit record{'s' if summary.records != 1 else ''}"
        + (f" ({seen} of them seen: one per decided tool call)" if seen else "")
    )
    rows: list[list[object]] = [
        [behavior_id, e.enabled, e.violations, e.blocks, e.overrides, e.override_rate, e.band]
        for behavior_id, e in summary.behaviors.items()
    ]
    t = summary.totals
    rows.append(["total", None, t.violations, t.blocks, t.overrides, t.override_rate, t.band])
    header = ["behavior", "on", "violations", "blocks", "overrides", "rate", "band"]
    from forge_policy.cli._color import colors

    paint = colors(ctx.out)
    bands = {"healthy": paint.green, "review": paint.yellow, "ineffective": paint.red}
    ctx.print(table(header, rows, tone=lambda i, text: bands.get(text, str)(text)))
    ctx.print("override rate = overrides / blocks: healthy < 0.3 <= review <= 0.7 < ineffective")
    if summary.records:
        ctx.print("the records themselves: forge-policy audit log [--session SID] [--since 2h]")
    if verified is not None:
        ctx.print(f"audit log intact: {verified.records} records, hash chain verified")
        if verified.spooled:
            ctx.print(
                f"audit spool: {verified.spooled} record(s) written while the audit lock was "
                "held, folded into the chain by the next append"
            )
    return OK


def _activity(ctx: Context, behaviors: dict[str, Any]) -> dict[str, Any]:
    """What ``audit --json`` adds to the counts: per behavior the sessions it fired in and
    when it was last and first seen (``behaviors`` is updated in place), the log's first and
    last stamps, and the :data:`RECENT` newest records
    (:func:`forge_policy.ops.audit_log.brief`)."""
    from forge_policy.ops.audit_log import HIDDEN_KINDS, brief, numbered

    recent: list[dict[str, Any]] = []
    sessions: dict[str, set[str]] = {}
    first: str | None = None
    last: str | None = None
    for number, record in numbered(ctx.evaluator.audit):  # newest first
        if len(recent) < RECENT and record.get("kind") not in HIDDEN_KINDS:
            recent.append(brief(number, record))
        stamp = record.get("timestamp")
        stamp = stamp if isinstance(stamp, str) else None
        last = last or stamp
        first = stamp or first
        behavior_id = record.get("behavior_id")
        row = behaviors.get(behavior_id) if isinstance(behavior_id, str) else None
        if row is None:
            continue
        row.setdefault("last_seen", stamp)
        if stamp:
            row["first_seen"] = stamp
        session_id = record.get("session_id")
        if isinstance(session_id, str):
            sessions.setdefault(str(behavior_id), set()).add(session_id)
    for behavior_id, row in behaviors.items():
        row.setdefault("last_seen", None)
        row.setdefault("first_seen", None)
        row["sessions_seen"] = len(sessions.get(behavior_id, ()))
    return {"first_record": first, "last_record": last, "recent": recent}


def cmd_audit_log(args: Namespace, ctx: Context) -> int:
    """``forge-policy audit log [--session SID] [--behavior ID] [--kind K] [--since WHEN]
    [--limit N] [--json] [--no-pager]``."""
    from forge_policy.ops.audit_log import LogQuery, brief, read_log

    query = LogQuery(
        session=args.session,
        behavior=args.behavior,
        kinds=tuple(args.kind or ()),
        since=args.since,
        limit=args.limit,
    )
    page = read_log(ctx.evaluator.audit, query)
    if args.json:
        ctx.print_json(
            {
                "audit": _where(ctx),
                "records": [brief(n, r) for n, r in page.records],
                "more": page.more,
            }
        )
        return OK
    from forge_policy.cli._pager import page as show

    show(ctx, _log_text(ctx, page, query), allowed=not args.no_pager)
    return OK


def _where(ctx: Context) -> str:
    audit = ctx.evaluator.audit
    where = getattr(audit, "where", None) or getattr(audit, "path", None)
    return f"{type(audit).__name__} {where}" if where else type(audit).__name__


def _log_text(ctx: Context, page: LogPage, query: Any) -> str:
    from forge_policy.cli._color import colors
    from forge_policy.cli._format import local_time
    from forge_policy.ops.audit_log import brief

    filters = [
        f"{name} {value}"
        for name, value in (
            ("session", query.session),
            ("behavior", query.behavior),
            ("kind", ",".join(query.kinds) or None),
            ("since", local_time(query.since) if query.since is not None else None),
        )
        if value
    ]
    where = f" ({'; '.join(filters)})" if filters else ""
    if not page.records:
        return f"no audit records{where}: {_where(ctx)}"
    paint = colors(ctx.out)
    rows: list[list[object]] = []
    for number, record in page.records:
        row = brief(number, record)
        rows.append(
            [
                number,
                local_time(row["timestamp"]),
                row["kind"],
                row["session_id"],
                row["behavior_id"],
                row["level"],
                row["what"],
            ]
        )
    header = ["#", "time", "kind", "session", "behavior", "level", "what"]
    lines = [
        f"{len(page.records)} audit record{'s' if len(page.records) != 1 else ''}, newest first"
        f"{where}: {_where(ctx)}",
        table(header, rows, tone=lambda i, text: paint.tone(text) if i in (2, 5) else text),
    ]
    if page.more:
        lines.append(
            f"… more records: --limit 0 shows all (or narrow with --since, --session, "
            f"--behavior, --kind); explain --record {page.records[0][0]} re-explains one"
        )
    else:
        lines.append(f"re-explain one: forge-policy explain --record {page.records[0][0]}")
    return "\n".join(lines)
