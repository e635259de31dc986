"""Session commands: ``status``, ``explain``, ``override``, ``purge``."""

from __future__ import annotations

import sys

from forge_policy.cli._format import dumps, short, table
from forge_policy.cli.context import OK, USAGE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Callable
    from typing import Any

    from forge_policy.catalog.catalog import Catalog
    from forge_policy.cli.context import Context


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
        "Let the next soft-blocked call of a behavior in a session through (once, within the "
        "override window); recorded in the audit log when it is used. Hard blocks have none.",
    )
    p.add_argument("behavior_id", metavar="ID")
    p.add_argument("--session", metavar="SID", required=True)
    p.add_argument("--reason", metavar="TEXT", required=True)
    command("purge", cmd_purge, "Delete the sessions whose last access is older than the TTL.")


def cmd_status(args: Namespace, ctx: Context) -> int:
    """``forge-policy status [--session SID] [--json]``."""
    from forge_policy.ops.admin import status
    from forge_policy.serve import probe

    report = status(ctx.evaluator, args.session)
    report["serve"] = probe(ctx.config.root)
    if args.json:
        ctx.print(dumps(report))
        return OK
    if not report["sessions"]:
        ctx.print("no live sessions")
    for session in report["sessions"]:
        _print_session(ctx, session)
    serve = report["serve"]
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
    return OK


def _print_session(ctx: Context, session: dict[str, Any]) -> None:
    if not session["exists"]:
        ctx.print(f"session {session['session_id']}: no live state")
        return
    ctx.print(
        f"session {session['session_id']} (started {session['created_at']}, "
        f"last active {session['last_accessed_at']})"
    )
    rows = []
    for behavior_id, b in session["behaviors"].items():
        if not b["enabled"] and not b["counter"]:
            rows.append([behavior_id, "off", 0, None, None, 0, 0, None])
            continue
        pending = "block" if b["pending_block"] else None
        if b.get("override_granted"):
            pending = "override granted"
        rows.append(
            [
                behavior_id,
                "on" if b["enabled"] else "off",
                b["counter"],
                b["level"],
                b["next_threshold"] if b["next_threshold"] is not None else "max",
                b["blocks"],
                b["overrides"],
                pending,
            ]
        )
    header = ["behavior", "on", "count", "level", "next", "blocks", "overrides", "pending"]
    ctx.print("  " + table(header, rows).replace("\n", "\n  "))
    if session["flags"]:
        ctx.print(f"  flags: {', '.join(session['flags'])}")
    if session["totals"]:
        totals = ", ".join(f"{k}={v:g}" for k, v in session["totals"].items())
        ctx.print(f"  totals: {totals}")


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
    try:
        payload = json.loads(text)
    except ValueError as exc:
        raise EventError(f"event: not valid JSON: {exc}") from None
    if args.session and isinstance(payload, dict):
        payload["session_id"] = args.session
    evaluator = ctx.evaluator
    result = evaluator.explain(Event.from_claude_code(payload))
    result["behaviors"] = _per_behavior(evaluator.catalog, result)
    if args.json:
        ctx.print(dumps(result))
        return OK
    subject = f" {result['tool_name']}" if result["tool_name"] else ""
    blocker = f" by {result['blocking_behavior']}" if result["blocking_behavior"] else ""
    ctx.print(
        f"{result['event']}{subject} in session {result['session_id']}: "
        f"{result['outcome']}{blocker} (dry run: nothing was recorded)"
    )
    for entry in result["behaviors"]:
        ctx.print(f"  {entry['behavior_id']}: {entry['result']}")
        for trigger in entry["triggers"]:
            ctx.print(
                f"    trigger {trigger['trigger_index']} {trigger['trigger']}: {trigger['effect']}"
            )
            for c in trigger["conditions"]:
                mark = "match" if c["matched"] else "no match"
                ctx.print(
                    f"      {mark}: {c['field']} {c['operator']} {short(c['value'])} "
                    f"(actual {short(c['actual'])})"
                )
    for message in result["messages"]:
        ctx.print("\n" + message)
    for diagnostic in result["diagnostics"]:
        ctx.note(diagnostic)
    return OK


def _per_behavior(catalog: Catalog, result: dict[str, Any]) -> list[dict[str, Any]]:
    """Every catalog behavior with what happened to it in an explain trace."""
    violations = {v["behavior_id"]: v for v in result["violations"]}
    event = result["event"]
    blocker = result["blocking_behavior"]
    stopped = False
    entries = []
    for behavior in catalog.behaviors:
        trace = [t for t in result["trace"] if t["behavior_id"] == behavior.id]
        triggers = [t for t in trace if "trigger_index" in t]
        special = next((t for t in trace if "trigger_index" not in t), None)
        violation = violations.get(behavior.id)
        if not behavior.enabled:
            text = "disabled"
        elif event not in behavior.events:
            text = f"no trigger for {event}"
        elif stopped:
            text = f"not evaluated: the chain stopped at {blocker}'s block"
        elif special is not None and "skipped" in special:
            text = "skipped: its applies_to (tools, agents, profiles) excludes this event"
        elif special is not None and "override" in special:
            text = f"passes: pending block released (override by {special['override']})"
        elif violation is not None:
            text = f"violation {violation['counter']}: would reach {violation['level']}"
            if violation["overridden"]:
                text += f", let through (override: {violation['overridden']})"
            elif violation["shadow"]:
                text += " (shadow: not shown)"
        elif not triggers:
            text = "no trigger matches"
        else:
            text = "no violation"
        stopped = stopped or behavior.id == blocker
        entries.append({"behavior_id": behavior.id, "result": text, "triggers": triggers})
    return entries


def cmd_override(args: Namespace, ctx: Context) -> int:
    """``forge-policy override ID --session SID --reason TEXT``."""
    from forge_policy.errors import Refused
    from forge_policy.ops.admin import find_behavior

    evaluator = ctx.evaluator
    find_behavior(evaluator.catalog, args.behavior_id)
    try:
        evaluator.override(args.session, args.behavior_id, reason=args.reason)
    except (KeyError, ValueError) as exc:
        raise Refused(str(exc.args[0])) from None
    window = int(evaluator.settings.override_window)
    ctx.print(
        f"override granted: the next soft-blocked call of {args.behavior_id} in session "
        f"{args.session} within {window} s goes through once; it is recorded in the audit log "
        "when used"
    )
    return OK


def cmd_purge(args: Namespace, ctx: Context) -> int:
    """``forge-policy purge``."""
    evaluator = ctx.evaluator
    ttl = evaluator.settings.ttl
    removed = evaluator.store.purge(evaluator.clock(), ttl)
    ctx.print(f"purged {removed} expired session{'s' if removed != 1 else ''} (TTL {ttl:g} s)")
    return OK
