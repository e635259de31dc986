"""Session commands: ``status``, ``explain``, ``override``, ``purge``."""

from __future__ import annotations

import sys

from forge_policy.cli._format import limit_count, short, table, to_json
from forge_policy.cli.context import OK, USAGE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

    from forge_policy.cli.context import Context
    from forge_policy.engine.inputs import Settings
    from forge_policy.model import Event
    from forge_policy.ops.floor_report import HarnessFloor
    from forge_policy.reports.explain import ExplainReport
    from forge_policy.reports.status import BehaviorStatus, OverrideGrant, Status


def register(command: Callable[..., Any]) -> None:
    """Add this group's commands to the parser."""
    p = command(
        "status",
        cmd_status,
        "Show each live session's counters, levels, next thresholds, overrides and pending "
        "blocks (or one session's with --session), and whether serve mode answers.",
    )
    p.add_argument("--session", metavar="SID", help="only this session")
    p.add_argument(
        "--limit",
        metavar="N",
        type=limit_count,
        default=None,
        help=f"show the N most recently active sessions (default {STATUS_LIMIT}; --json: all; "
        "0: all)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p = command(
        "explain",
        cmd_explain,
        "Dry-run one hook event (JSON, from stdin or --file) against the catalog and the "
        "session's current state: every behavior, trigger and condition with its result and "
        "the level it would reach. Changes nothing.",
    )
    p.add_argument("--file", "-f", metavar="FILE", help="read the event from FILE")
    p.add_argument(
        "--record",
        metavar="N",
        type=int,
        help="re-explain audit record N (the number forge-policy audit log shows): its call "
        "decided again with today's catalog, in a fresh session (or --session's), beside "
        "what was recorded",
    )
    p.add_argument("--session", metavar="SID", help="use this session id instead of the event's")
    p.add_argument("--json", action="store_true", help="print JSON")
    p = command(
        "override",
        cmd_override,
        "Let the next soft-blocked call of a behavior in a session through once, or with "
        "--call only a retry of the call a block named; the grant lives FORGE_GRANT_SECONDS "
        "(600) and is recorded in the audit log when given and when used. Hard blocks have none.",
    )
    p.add_argument("behavior_id", metavar="ID")
    p.add_argument("--session", metavar="SID", required=True)
    p.add_argument("--reason", metavar="TEXT", required=True)
    p.add_argument(
        "--call",
        metavar="CALL",
        default="",
        help="the call id the soft block named (e.g. 1a2b3c4d): only a retry of that exact call "
        "passes, whatever else is blocked in between",
    )
    p.add_argument(
        "--new-session",
        action="store_true",
        help="grant ahead of the session's first event (else an unknown session is refused)",
    )
    p.add_argument("--json", action="store_true", help="print the grant as JSON")
    p = command("purge", cmd_purge, "Delete the sessions whose last access is older than the TTL.")
    p.add_argument("--json", action="store_true", help="print JSON")


#: Sessions ``status`` shows on a terminal unless ``--limit`` says otherwise.
STATUS_LIMIT = 10


def by_recency(sessions: Iterable[Status]) -> list[Status]:
    """Sessions newest first: by last activity, then start, then id (a session without a
    readable stamp last).

    >>> from forge_policy.reports.status import Status
    >>> old = Status("a", True, last_accessed_at="2026-01-01T00:00:00.000000+00:00")
    >>> new = Status("b", True, last_accessed_at="2026-01-02T00:00:00.000000+00:00")
    >>> [s.session_id for s in by_recency([old, Status("c", True), new])]
    ['b', 'a', 'c']
    """
    from forge_policy._time import parse_iso

    def key(session: Status) -> tuple[float, float, str]:
        last = parse_iso(session.last_accessed_at, default=-1.0)
        return (-last, -parse_iso(session.created_at, default=-1.0), session.session_id)

    return sorted(sessions, key=key)


def status_summary(sessions: Iterable[Status]) -> dict[str, int]:
    """The first line of ``status``: live sessions, and their violations, blocks and
    overrides summed over behaviors.

    >>> status_summary([])
    {'sessions': 0, 'violations': 0, 'blocks': 0, 'overrides': 0}
    """
    out = {"sessions": 0, "violations": 0, "blocks": 0, "overrides": 0}
    for session in sessions:
        if not session.exists:
            continue
        out["sessions"] += 1
        for b in session.behaviors.values():
            out["violations"] += b.counter
            out["blocks"] += b.blocks
            out["overrides"] += b.overrides
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def cmd_status(args: Namespace, ctx: Context) -> int:
    """``forge-policy status [--session SID] [--limit N] [--json]``."""
    from forge_policy.ops.admin import status
    from forge_policy.serve import probe

    sessions = by_recency(status(ctx.evaluator, args.session))
    summary = status_summary(sessions)
    limit = args.limit if args.limit is not None else (0 if args.json else STATUS_LIMIT)
    shown = sessions[:limit] if limit else sessions
    serve = probe(ctx.config.root)
    audit = _audit_health(ctx)
    floors = _floors(ctx)
    exceptions = _exceptions(ctx)
    if args.json:
        ctx.print_json(
            {
                "sessions": to_json(shown),
                "serve": serve,
                "audit": audit,
                "floor": [f.to_dict() for f in floors],
                "summary": summary,
                "more": len(sessions) - len(shown),
                "exceptions": exceptions,
            }
        )
        return OK
    from forge_policy.cli._color import colors

    paint = colors(ctx.out)
    if any(s.exists for s in sessions):
        ctx.print(
            paint.bold(_plural(summary["sessions"], "live session"))
            + ": "
            + ", ".join(
                paint.count(summary[key], _plural(summary[key], key.rstrip("s")), key)
                for key in ("violations", "blocks", "overrides")
            )
        )
    if not sessions:
        ctx.print("no live sessions")
    now = ctx.evaluator.clock()
    for session in shown:
        _print_session(ctx, session, now, every=args.session is not None)
    if len(shown) < len(sessions):
        ctx.print(
            f"… {len(sessions) - len(shown)} more (older) session"
            f"{'s' if len(sessions) - len(shown) != 1 else ''}: --limit 0 shows all"
        )
    for name, backend in (("store", ctx.evaluator.store), ("audit", ctx.evaluator.audit)):
        where = getattr(backend, "where", None)  # a shared database's DSN, password masked
        if isinstance(where, str):
            ctx.print(f"{name}: {type(backend).__name__} {where}")
    problems = audit["problems"]
    if isinstance(problems, list) and problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        ctx.print(
            f"audit: INTEGRITY FAILURE: {problems[0]}{more}; "
            "forge-policy audit --verify lists every problem"
        )
    if serve["configured"] and not serve["answering"]:
        fallback = (
            "Claude Code lets EVERY call through while it is down (http hooks)"
            if serve["mode"] == "http"
            else "hooks evaluate in-process meanwhile"
        )
        ctx.print(
            f"serve: configured ({serve['mode']}) but NOT answering: {serve['detail']}; "
            f"{fallback}. Start it with: forge-policy serve"
        )
    elif serve["configured"]:
        ctx.print(f"serve: {serve['detail']} at {serve['url']} ({serve['mode']})")
    for floor in floors:
        line = f"floor ({floor.harness}): {floor.headline()}"
        if floor.warning:
            line += f"; warning: {floor.warning}"
        elif floor.state == "none":
            line += f": {floor.detail}"
        if floor.hook_only:
            line += f"; only the hook holds: {', '.join(code for code, _ in floor.hook_only)}"
        ctx.print(line)
    _print_exceptions(ctx, exceptions)
    return OK


def _exceptions(ctx: Context) -> list[dict[str, object]]:
    """The configured exceptions, soonest to expire first
    (:mod:`forge_policy.ops.exception_report`)."""
    from forge_policy.ops.exception_report import rows

    return rows(ctx.config, ctx.evaluator.audit)


def _print_exceptions(ctx: Context, exceptions: list[dict[str, object]]) -> None:
    from forge_policy.ops.exception_report import line_of

    if not exceptions:
        return
    live = sum(1 for row in exceptions if not row["expired"])
    expired = len(exceptions) - live
    more = f", {expired} expired" if expired else ""
    ctx.print(f"exceptions: {live} active{more} (behavior, match, until, reason, where, uses)")
    for row in exceptions:
        ctx.print("  " + line_of(row))


def _floors(ctx: Context) -> list[HarnessFloor]:
    """Which floor holds each harness's shell calls (``doctor`` says what it covers)."""
    import os

    from forge_policy.ops.floor_report import floors

    config = ctx.config
    return floors(os.path.abspath(config.project_dir), config.root, os.environ)


def _audit_health(ctx: Context) -> dict[str, object]:
    """The audit log's chain and checkpoints, checked as ``audit --verify`` does (``checked``
    is false for a sink that keeps no chain)."""
    from forge_policy.errors import AuditError, Refused
    from forge_policy.ops.admin import verify_audit

    try:
        report = verify_audit(ctx.evaluator)
    except Refused:
        return {"checked": False, "ok": None, "problems": []}
    except (AuditError, OSError) as exc:
        return {"checked": True, "ok": False, "problems": [f"cannot read the log: {exc}"]}
    return {"checked": True, "ok": report.ok, "problems": list(report.problems)}


#: what the columns of a session's table mean (issue 25: "next" had no legend)
STATUS_LEGEND = (
    "count: violations so far; level: the level reached (ask: a block the user approves); "
    "next: the count of the next escalation (max: none above)"
)


def _quiet(b: BehaviorStatus) -> bool:
    """A behavior with nothing to tell in a session: on (or off for the whole project, which
    ``list`` shows), never fired, nothing pending or granted."""
    return not (
        b.counter
        or b.blocks
        or b.overrides
        or b.pending_block
        or b.override_granted
        or b.session_disabled
    )


def _print_session(ctx: Context, session: Status, now: float, *, every: bool = True) -> None:
    """One session: its times and a row per behavior (``every``: false leaves out the quiet
    ones, :func:`_quiet`, and says how many; ``status --session SID`` shows every one)."""
    from forge_policy.cli._format import ago, local_time

    if not session.exists:
        ctx.print(f"session {session.session_id}: no live state")
        return
    ctx.print(
        f"session {session.session_id} (last active {local_time(session.last_accessed_at)}, "
        f"{ago(session.last_accessed_at, now)}; started {local_time(session.created_at)})"
    )
    rows: list[list[object]] = []
    quiet = 0
    for behavior_id, b in session.behaviors.items():
        if not every and _quiet(b):
            quiet += 1
            continue
        if not b.enabled and not b.counter:
            rows.append([behavior_id, "off", 0, None, None, 0, 0, None])
            continue
        pending = "block" if b.pending_block else None
        if b.override_granted:
            pending = "override granted"
        rows.append(
            [
                behavior_id,
                "off"
                if not b.enabled
                else f"inactive (profile {b.inactive_under})"
                if b.inactive_under
                else "on",
                b.counter,
                b.level_shown,
                b.next_threshold if b.next_threshold is not None else "max",
                b.blocks,
                b.overrides,
                pending,
            ]
        )
        rows += _agent_rows(b)
    header = ["behavior", "on", "count", "level", "next", "blocks", "overrides", "pending"]
    if rows:
        ctx.print("  " + table(header, rows).replace("\n", "\n  "))
        ctx.print(f"  {STATUS_LEGEND}")
    if quiet:
        ctx.print(
            f"  {'no behavior fired' if not rows else f'{quiet} more behaviors quiet'}: "
            f"forge-policy status --session {session.session_id} shows every one"
        )
    if session.flags:
        ctx.print(f"  flags: {', '.join(_flag_summary(session.flags))}")
    if session.totals:
        totals = ", ".join(f"{k}={v:g}" for k, v in session.totals.items())
        ctx.print(f"  totals: {totals}")


def _agent_rows(b: BehaviorStatus) -> list[list[object]]:
    """A behavior's counters by agent under its row (issue 27: only on a session where a
    subagent took part): the root thread, then each subagent by id and type."""
    from forge_policy.levels import shown_level

    rows: list[list[object]] = []
    for share in b.agents:
        who = "root thread" if share.root else f"agent {share.agent_id}"
        if share.type:
            who += f" ({share.type})"
        level = shown_level(share.level, "agent") if share.level is not None else None
        rows.append([f"  └ {who}", "", share.counter, level, "", share.blocks, "", None])
    return rows


def _flag_summary(flags: Iterable[str]) -> list[str]:
    """Flags for a terminal: a keyed flag (``NAME:KEY``, one per path, up to 512) shown as
    ``NAME (N keys)``, plain flags as they are (``--json`` lists every key).

    >>> _flag_summary(["planned", "searched:/p/a.py", "searched:/p/src/"])
    ['planned', 'searched (2 keys)']
    """
    counts: dict[str, int] = {}
    for flag in flags:
        name, keyed, _key = flag.partition(":")
        counts[name if keyed else flag] = counts.get(name, 0) + 1 if keyed else 0
    return [f"{name} ({n} key{'s' if n != 1 else ''})" if n else name for name, n in counts.items()]


def cmd_explain(args: Namespace, ctx: Context) -> int:
    """``forge-policy explain [--file F] [--session SID] [--json]``."""
    import json

    from forge_policy.errors import EventError
    from forge_policy.levels import shown_level
    from forge_policy.model import Event

    if args.record is not None:
        return _explain_record(args, ctx)
    if args.file:
        with open(args.file, encoding="utf-8") as file:
            text = file.read()
    elif sys.stdin.isatty():
        ctx.note("explain: give the event as JSON on stdin or with --file")
        return USAGE
    else:
        text = sys.stdin.read()
    from forge_policy._limits import MAX_JSON_DEPTH, json_too_deep

    deep = f"event: nested deeper than {MAX_JSON_DEPTH} levels; refused"  # as the hook refuses it
    if json_too_deep(text.encode("utf-8", "replace"), MAX_JSON_DEPTH):
        raise EventError(deep)
    try:
        payload = json.loads(text)
    except ValueError as exc:
        raise EventError(f"event: not valid JSON: {exc}") from None
    except RecursionError:
        raise EventError(deep) from None
    if args.session and isinstance(payload, dict):
        payload["session_id"] = args.session
    report = ctx.evaluator.explain(Event.from_claude_code(payload))
    if args.json:
        ctx.print_json(to_json(report))
        return OK
    decision = report.decision
    event = decision.event
    subject = f" {event.tool_name}" if event.tool_name else ""
    blocking = decision.blocking
    blocker = f" by {blocking.behavior_id}" if blocking else ""
    outcome = shown_level(decision.outcome, blocking.override_mode if blocking else "agent")
    ctx.print(
        f"{event.event_name}{subject} in session {event.session_id}: "
        f"{outcome}{blocker} (dry run: nothing was recorded)"
    )
    _print_trace(ctx, report)
    return OK


def _print_trace(ctx: Context, report: ExplainReport) -> None:
    """Every behavior, trigger and condition of a dry run, then the messages it would show."""
    decision = report.decision
    for entry in report.behaviors:
        ctx.print(f"  {entry.behavior_id}: {entry.result}")
        for trigger in entry.triggers:
            ctx.print(f"    trigger {trigger.trigger_index} {trigger.trigger}: {trigger.effect}")
            for c in trigger.conditions:
                mark = "match" if c.matched else "no match"
                ctx.print(
                    f"      {mark}: {c.field} {c.operator} {short(c.value)} "
                    f"(actual {short(c.actual)})"
                )
    for message in decision.messages:
        ctx.print("\n" + message)
    for diagnostic in decision.diagnostics:
        ctx.note(diagnostic)


def recorded_event(number: int, record: Mapping[str, Any], session_id: str) -> Event:
    """The event an audit ``block``/``violation`` record was decided on, rebuilt from its
    ``event_input`` (:func:`forge_policy.engine.records.recorded_input`) for ``session_id``;
    :class:`~forge_policy.errors.Refused` saying why when the record holds no call.

    >>> record = {"kind": "block", "event": "PreToolUse", "tool_name": "Bash",
    ...           "event_input": {"tool_input": {"command": "git push -f"}}}
    >>> recorded_event(7, record, "s").tool_input["command"]
    'git push -f'
    >>> recorded_event(8, {"kind": "block", "input_summary": "Bash: make"}, "s")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    forge_policy.errors.Refused: audit record 8 was written before records kept the call's input ...
    """
    from forge_policy.errors import Refused
    from forge_policy.model import Event

    kind = record.get("kind")
    if kind not in ("block", "violation"):
        raise Refused(
            f"audit record {number} is a {kind or 'kindless'} record: only block and violation "
            "records hold a decided call (forge-policy audit log --kind block lists them)"
        )
    kept = record.get("event_input")
    if not isinstance(kept, dict):
        summary = record.get("input_summary") or "no summary"
        raise Refused(
            f"audit record {number} was written before records kept the call's input (it holds "
            f"only the summary {summary!r}, redacted and cut to 100 characters): give the event "
            "yourself, as JSON on stdin or with --file"
        )
    tool_input = kept.get("tool_input")
    return Event(
        str(record.get("event") or "PreToolUse"),
        session_id,
        tool_name=str(record.get("tool_name") or ""),
        tool_input=tool_input if isinstance(tool_input, dict) else {},
        prompt=str(kept.get("prompt") or ""),
        agent=str(kept.get("agent") or ""),
        agent_id=str(record.get("agent_id") or ""),
        cwd=str(kept.get("cwd") or ""),
        tool_use_id=str(record.get("tool_use_id") or ""),
        permission_mode=str(kept.get("permission_mode") or ""),
        harness=str(kept.get("harness") or "claude-code"),
    )


def _explain_record(args: Namespace, ctx: Context) -> int:
    """``forge-policy explain --record N [--session SID] [--json]``: the recorded decision
    beside today's dry run of the same call."""
    from forge_policy.cli._color import colors
    from forge_policy.cli._format import local_time
    from forge_policy.errors import Refused
    from forge_policy.ops.audit_log import brief, find_record

    record = find_record(ctx.evaluator.audit, args.record)
    if record is None:
        raise Refused(
            f"no audit record {args.record}: forge-policy audit log shows the records and "
            "their numbers"
        )
    session_id = args.session or f"explain-record-{args.record}"
    event = recorded_event(args.record, record, session_id)
    report = ctx.evaluator.explain(event)
    decision = report.decision
    behavior_id = str(record.get("behavior_id") or "")
    today = next((v for v in decision.violations if v.behavior_id == behavior_id), None)
    recorded_level = str(record.get("level") or "")
    today_level = today.level.label if today is not None else None
    if args.json:
        ctx.print_json(
            {
                "record": brief(args.record, record),
                "recorded": {"behavior_id": behavior_id, "level": recorded_level},
                "today": {
                    "session_id": session_id,
                    "behavior_level": today_level,
                    "same": today_level == recorded_level,
                    "input_cut": bool(record["event_input"].get("cut")),
                    "explain": to_json(report),
                },
            }
        )
        return OK
    paint = colors(ctx.out)
    what = record.get("input_summary") or event.tool_name or "-"
    ctx.print(
        f"audit record {args.record} ({local_time(record.get('timestamp'))}, session "
        f"{record.get('session_id')}): {event.event_name} {what}"
    )
    counter = record.get("counter")
    ctx.print(
        f"  recorded: {behavior_id} {paint.tone(recorded_level)}"
        + (f" (violation {counter} of the session)" if counter else "")
    )
    blocker = f" by {decision.blocking.behavior_id}" if decision.blocking else ""
    fresh = "a fresh session" if not args.session else f"session {session_id}'s current state"
    now = paint.tone(today_level) if today_level else "does not fire"
    ctx.print(
        f"  today:    {behavior_id} {now}; outcome {paint.tone(decision.outcome)}{blocker} "
        f"(today's catalog, dry run in {fresh}: nothing was recorded)"
    )
    if today_level != recorded_level:
        ctx.print(
            "  differs: today's catalog, its configuration or the session's counters decide "
            "otherwise (escalation counts violations per session: --session SID uses a live one)"
        )
    if record["event_input"].get("cut"):
        ctx.print(
            "  note: a long value of the call was cut when recorded; rules reading it may differ"
        )
    _print_trace(ctx, report)
    return OK


def cmd_override(args: Namespace, ctx: Context) -> int:
    """``forge-policy override ID --session SID --reason TEXT [--json]``."""
    from forge_policy.cli import guard
    from forge_policy.errors import Refused
    from forge_policy.model import OVERRIDE_BY_USER
    from forge_policy.ops.admin import find_behavior, status

    evaluator = ctx.evaluator
    behavior = find_behavior(evaluator.catalog, args.behavior_id)
    if not args.session.strip():
        raise Refused("--session is empty: name the session whose blocked call to let through")
    if not args.reason.strip():  # the audit log's only account of why the call went through
        raise Refused("--reason is empty: say why the blocked call may go through")
    try:
        evaluator.check_overridable(args.behavior_id)
    except (KeyError, ValueError) as exc:
        raise Refused(str(exc.args[0])) from None
    if behavior.override == OVERRIDE_BY_USER:
        refused = guard.user_override_refusal(behavior.id, tty=guard.has_terminal(sys.stdin))
        if refused:
            ctx.note(refused)
            return USAGE
    if not args.new_session and not evaluator.status(args.session).exists:
        live = [s.session_id for s in status(evaluator)]
        known = f"live sessions: {', '.join(live[:5])}" if live else "no session is live"
        raise Refused(
            f"session {args.session!r} has no live state (a typo? {known}); "
            "to grant ahead of its first event, add --new-session"
        )
    if args.call and not args.call.strip():
        raise Refused("--call is empty: name the call id the block message gave")
    try:
        grant = evaluator.override(
            args.session, args.behavior_id, reason=args.reason, call=args.call
        )
    except (KeyError, ValueError) as exc:
        raise Refused(str(exc.args[0])) from None
    if args.json:
        ctx.print_json(grant)
        return OK
    ctx.print(grant_confirmation(grant, evaluator.settings))
    return OK


def grant_confirmation(grant: OverrideGrant, settings: Settings) -> str:
    """Exactly which call(s) a grant will let through (SPEC §4), for ``override``'s output.

    >>> from forge_policy.engine.inputs import Settings
    >>> from forge_policy.engine.reports import OverrideGrant
    >>> g = OverrideGrant("g1", "s1", "b", "ok", "t0", "2026-01-01T00:10:00.000000+00:00")
    >>> text = grant_confirmation(g, Settings())
    >>> text.split(" (until")[0]
    'override granted: the next soft-blocked call of b in session s1 within 10 min'
    >>> "A retry of a call blocked in the last 60 s passes by retry" in text
    True
    """
    lasting = _duration(settings.grant_seconds)
    if grant.call_id:
        what = (
            f"only call {grant.call_id} of {grant.behavior_id} in session {grant.session_id} "
            f"({grant.input_summary or 'no summary'}) goes through once, when it is retried "
            f"within {lasting} (until {grant.valid_until}); no other call uses this grant."
        )
    else:
        what = (
            f"the next soft-blocked call of {grant.behavior_id} in session {grant.session_id} "
            f"within {lasting} (until {grant.valid_until}) goes through once. A retry of a "
            f"call blocked in the last {_duration(settings.override_window)} passes by retry "
            "and does not use this grant."
        )
    audited = f"Grant {grant.grant_id}: recorded in the audit log now and when used."
    return f"override granted: {what} {audited}"


def _duration(seconds: float) -> str:
    """``600`` -> ``10 min``, ``60`` -> ``60 s``, ``90`` -> ``90 s``."""
    if seconds >= 120 and seconds % 60 == 0:
        return f"{int(seconds // 60)} min"
    return f"{seconds:g} s"


def cmd_purge(args: Namespace, ctx: Context) -> int:
    """``forge-policy purge [--json]``."""
    evaluator = ctx.evaluator
    ttl = evaluator.settings.ttl
    removed = evaluator.store.purge(evaluator.clock(), ttl)
    if getattr(args, "json", False):
        ctx.print_json({"purged": removed, "ttl_seconds": ttl})
        return OK
    ctx.print(f"purged {removed} expired session{'s' if removed != 1 else ''} (TTL {ttl:g} s)")
    return OK
