"""``forge-policy suggest [--since WHEN] [--json] [--apply N|KEY|N:KEY]``: tuning proposals
from the audit log (:mod:`forge_policy.ops.suggest`), each with its evidence; one is written to
the project layer only when ``--apply`` names it (:mod:`forge_policy.ops.suggest_apply`)."""

from __future__ import annotations

from forge_policy.cli.context import OK, USAGE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Callable, Mapping
    from typing import Any

    from forge_policy.cli.context import Context
    from forge_policy.ops.suggest import Suggestion


def register(command: Callable[..., Any]) -> None:
    """Add ``suggest`` to the parser."""
    from forge_policy.cli._format import since_time

    p = command(
        "suggest",
        cmd_suggest,
        "Tuning suggestions from the audit log, each with its evidence: behaviors overridden "
        "too often (demote, or block later), one call blocked then overridden again and again "
        "(an expiring exception for exactly that command), behaviors that never fired, "
        "escalation ladders never climbed. Nothing changes unless --apply names one: it is "
        "written to .forge/config.yaml (comments kept) and audited (kind tuning).",
    )
    p.add_argument(
        "--since",
        type=since_time,
        metavar="WHEN",
        help="only records from then on: a duration back from now (30m, 2h, 3d, 1w) or an "
        "ISO date or time (give the same --since to --apply)",
    )
    p.add_argument(
        "--apply",
        metavar="N[:KEY]",
        help="apply suggestion N (as listed; N:KEY or KEY refuses if the log changed so that "
        "N now means another change)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")


def cmd_suggest(args: Namespace, ctx: Context) -> int:
    """``forge-policy suggest [--since WHEN] [--json] [--apply N|KEY|N:KEY]``."""
    import time

    from forge_policy.ops.suggest import suggestions

    if args.apply is not None:
        refused = _guard()
        if refused:
            ctx.note(refused)
            return USAGE
    config = ctx.config
    catalog = config.load_catalog()
    settings = config.current_settings()
    sink = config.open_audit()
    now = time.time()
    records = list(_records(sink.records(), args.since))
    found = suggestions(records, catalog, settings, now=now)
    if args.apply is not None:
        return _apply(args, ctx, found, now)
    sessions = {r.get("session_id") for r in records if isinstance(r.get("session_id"), str)}
    where = _where(sink)
    if args.json:
        ctx.print_json(
            {
                "audit": where,
                "records": len(records),
                "sessions": len(sessions),
                "since": args.since,
                "suggestions": [s.to_dict() for s in found],
            }
        )
        return OK
    ctx.print(
        f"{len(found)} suggestion{'s' if len(found) != 1 else ''} from {len(records)} audit "
        f"record{'s' if len(records) != 1 else ''} in {len(sessions)} session"
        f"{'s' if len(sessions) != 1 else ''}: {where}"
    )
    for suggestion in found:
        ctx.print(_text(suggestion))
    if found:
        ctx.print("nothing was changed; each applies with the command under it")
    return OK


def _guard() -> str | None:
    """Why ``--apply`` may not run here: it changes governance (:mod:`forge_policy.cli.guard`)."""
    import os
    import sys

    from forge_policy.cli.guard import has_terminal, refusal

    return refusal("suggest --apply", os.environ, tty=has_terminal(sys.stdin))


def _records(
    records: Any, since: float | None
) -> Any:  # Iterator[Mapping[str, Any]], read once, oldest first
    from forge_policy._time import parse_iso

    for record in records:
        if since is not None and parse_iso(record.get("timestamp"), default=-1.0) < since:
            continue
        yield record


def _apply(args: Namespace, ctx: Context, found: list[Suggestion], now: float) -> int:
    from forge_policy.errors import Refused
    from forge_policy.ops.suggest import find
    from forge_policy.ops.suggest_apply import apply

    try:
        chosen = find(found, str(args.apply))
    except LookupError as exc:
        raise Refused(str(exc)) from None
    applied = apply(ctx.config, chosen, now=now)
    if args.json:
        ctx.print_json(applied.to_dict())
        return OK
    if applied.changed:
        ctx.print(f"applied suggestion {chosen.number} [{chosen.key}]: {chosen.title}")
        ctx.print(f"  wrote {applied.file}; audited (kind tuning)")
    else:
        ctx.print(f"suggestion {chosen.number} [{chosen.key}] is already in {applied.file}")
    ctx.print(f"  now: {applied.effective}")
    return OK


def _where(sink: Any) -> str:
    where = getattr(sink, "where", None) or getattr(sink, "path", None)
    return f"{type(sink).__name__} {where}" if where else type(sink).__name__


def _text(s: Suggestion) -> str:
    lines = [f"{s.number:>2}  [{s.key}]  {s.kind}: {s.title}"]
    lines.append(f"    evidence: {_evidence(s.evidence)}")
    for member in s.evidence.get("covers", ()):
        lines.append(f"      covers {member['command']!r} ({member['blocks']} blocked)")
    if s.change is not None:
        lines.append(f"    change (.forge/config.yaml): {_yaml(s.change)}")
    if s.refused:
        lines.append(f"    not applicable: {s.refused}")
    elif s.change is not None:
        lines.append(f"    apply: forge-policy suggest --apply {s.number}:{s.key}")
    return "\n".join(lines)


def _evidence(e: Mapping[str, Any]) -> str:
    parts: list[str] = []
    for name in ("blocks", "overrides"):
        if name in e:
            parts.append(f"{e[name]} {name}")
    if "override_rate" in e:
        parts.append(f"override rate {e['override_rate']} ({e['band']})")
    if e.get("mechanisms"):
        parts.append("by " + ", ".join(f"{k} {v}" for k, v in e["mechanisms"].items()))
    if "highest_count" in e:
        parts.append(f"highest count {e['highest_count']}")
    if "sessions" in e:
        parts.append(f"{e['sessions']} session{'s' if e['sessions'] != 1 else ''}")
    if e.get("first"):
        parts.append(f"{e['first'][:10]} … {e['last'][:10]}")
    if e.get("records"):
        parts.append("records " + ", ".join(f"#{n}" for n in e["records"]))
    if "ladder_now" in e:
        parts.append(f"ladder now: {e['ladder_now']}")
    return "; ".join(parts)


def _yaml(change: Mapping[str, Any]) -> str:
    """The change as the layer file would read it, in one line of flow YAML."""
    import json

    def flow(value: Any) -> str:
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k}: {flow(v)}" for k, v in value.items()) + "}"
        if isinstance(value, list):
            return "[" + ", ".join(flow(v) for v in value) + "]"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str) and (not value or any(c in value for c in ":{}[],#'\"")):
            return json.dumps(value)
        return str(value)

    return flow(dict(change))
