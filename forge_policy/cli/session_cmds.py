"""Session commands: ``status``, ``explain``, ``override``, ``purge``."""

from __future__ import annotations

import sys

from forge_policy.cli._format import short, table, to_json
from forge_policy.cli.context import OK, USAGE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Callable, Iterable
    from typing import Any

    from forge_policy.cli.context import Context
    from forge_policy.engine.inputs import Settings
    from forge_policy.ops.floor_report import HarnessFloor
    from forge_policy.reports.status import OverrideGrant, Status


def register(command: Callable[..., Any]) -> None:
    """Add this group's commands to the parser."""
    p = command(
        "status",
        cmd_status,
        "Show each live session's counters, levels, next thresholds, overrides and pending "
        "blocks (or one session's with --session), and whether serve mode answers.",
    )
    p.add_argument("--session", metavar="SID", help="only this session")
    p.add_argument("--json", action="store_true", help="print JSON")
    p = command(
        "explain",
        cmd_explain,
        "Dry-run one hook event (JSON, from stdin or --file) against the catalog and the "
        "session's current state: every behavior, trigger and condition with its result and "
        "the level it would reach. Changes nothing.",
    )
    p.add_argument("--file", "-f", metavar="FILE", help="read the event from FILE")
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


def cmd_status(args: Namespace, ctx: Context) -> int:
    """``forge-policy status [--session SID] [--json]``."""
    from forge_policy.ops.admin import status
    from forge_policy.serve import probe

    sessions = status(ctx.evaluator, args.session)
    serve = probe(ctx.config.root)
    audit = _audit_health(ctx)
    floors = _floors(ctx)
    exceptions = _exceptions(ctx)
    if args.json:
        ctx.print_json(
            {
                "sessions": to_json(sessions),
                "serve": serve,
                "audit": audit,
                "floor": [f.to_dict() for f in floors],
                "exceptions": exceptions,
            }
        )
        return OK
    if not sessions:
        ctx.print("no live sessions")
    for session in sessions:
        _print_session(ctx, session)
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


def _print_session(ctx: Context, session: Status) -> None:
    if not session.exists:
        ctx.print(f"session {session.session_id}: no live state")
        return
    ctx.print(
        f"session {session.session_id} (started {session.created_at}, "
        f"last active {session.last_accessed_at})"
    )
    rows: list[list[object]] = []
    for behavior_id, b in session.behaviors.items():
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
                b.level.label if b.level is not None else None,
                b.next_threshold if b.next_threshold is not None else "max",
                b.blocks,
                b.overrides,
                pending,
            ]
        )
    header = ["behavior", "on", "count", "level", "next", "blocks", "overrides", "pending"]
    ctx.print("  " + table(header, rows).replace("\n", "\n  "))
    if session.flags:
        ctx.print(f"  flags: {', '.join(_flag_summary(session.flags))}")
    if session.totals:
        totals = ", ".join(f"{k}={v:g}" for k, v in session.totals.items())
        ctx.print(f"  totals: {totals}")


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
    from forge_policy.model import Event

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
    blocker = f" by {decision.blocking.behavior_id}" if decision.blocking else ""
    ctx.print(
        f"{event.event_name}{subject} in session {event.session_id}: "
        f"{decision.outcome}{blocker} (dry run: nothing was recorded)"
    )
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
