"""``forge-policy shadow report``: what the candidate catalog (``candidate:``,
``FORGE_CANDIDATE_DIR``) would have decided differently, per behavior, with examples; read-only
(the work is :func:`forge_policy.ops.shadow_report.shadow_report`)."""

from __future__ import annotations

from forge_policy.cli._format import since_time, table
from forge_policy.cli.context import OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Callable
    from typing import Any

    from forge_policy.cli.context import Context
    from forge_policy.ops.shadow_report import ShadowReport

#: Examples per behavior the terminal shows (``--json``/``--html``: every one kept).
TEXT_EXAMPLES = 3


def register(command: Callable[..., Any]) -> None:
    """Add ``shadow report`` to the parser."""
    p = command(
        "shadow",
        cmd_shadow_report,
        "The live shadow: what the candidate catalog (candidate: in the configuration, or "
        "FORGE_CANDIDATE_DIR), decided beside the active one on every event, would have decided "
        "differently. It never decides; this reads the audit log and writes nothing.",
    )
    sub = p.add_subparsers(dest="shadow_command", metavar="report", required=True)
    text = (
        "Per behavior, how many events the candidate would have decided differently "
        "(would block, would no longer block, another level), with recent examples: the live "
        "counterpart of replay --against."
    )
    report = sub.add_parser(
        "report", help=text, description=text, formatter_class=p.formatter_class
    )
    report.set_defaults(handler=cmd_shadow_report)
    report.add_argument(
        "--since",
        type=since_time,
        metavar="WHEN",
        help="only events from then on: a duration back from now (30m, 2h, 3d, 1w) or an "
        "ISO date or time (2026-01-31, 2026-01-31T09:00; local time without a zone)",
    )
    report.add_argument("--json", action="store_true", help="print JSON")
    report.add_argument(
        "--html", metavar="REPORT.html", help="also write a self-contained HTML report"
    )


def cmd_shadow_report(args: Namespace, ctx: Context) -> int:
    """``forge-policy shadow report [--since WHEN] [--json] [--html F]``."""
    from forge_policy.engine.candidate import compared_events
    from forge_policy.ops.shadow_report import shadow_report

    config = ctx.config
    settings = config.current_settings()
    folder = settings.candidate if settings is not None else None
    origin = settings.origins.get("candidate", "") if settings is not None else ""
    since = args.since
    compared = compared_events(config.root, since) if config.store != "memory" else None
    report = shadow_report(config.open_audit().records(), since=since, compared=compared)
    if args.html:
        from forge_policy.render.shadow_html import write_report

        write_report(args.html, report, folder)
    if args.json:
        ctx.print_json({"candidate": folder, "origin": origin or None, **report.to_dict()})
    else:
        ctx.print(_text(report, folder, origin))
    if args.html:
        ctx.note(f"wrote {args.html}")
    if folder is None and not report.differed:
        ctx.note(
            "no candidate catalog is configured: set candidate: DIR in .forge/config.yaml "
            "(relative to that file) or FORGE_CANDIDATE_DIR, and every event is decided by it "
            "too, without deciding anything"
        )
    return OK


def _text(report: ShadowReport, folder: str | None, origin: str) -> str:
    lines = []
    if folder is not None:
        lines.append(f"candidate catalog: {folder}" + (f" (from {origin})" if origin else ""))
    else:
        lines.append("candidate catalog: none configured")
    seen = ""
    if report.compared is not None:
        seen = f"{report.compared} event{'s' if report.compared != 1 else ''} compared, "
    rate = f" ({report.rate:.1%})" if report.rate is not None else ""
    lines.append(
        f"{seen}{report.differed} decided differently{rate}"
        + (
            f" in {report.sessions} session{'s' if report.sessions != 1 else ''}"
            if report.sessions
            else ""
        )
    )
    for problem in report.problems:
        lines.append(f"problem: {problem}")
    if not report.differed:
        if folder is not None:
            lines.append("no difference recorded" + (" in that time" if report.since else ""))
        return "\n".join(lines)
    d = report.directions
    lines.append(
        f"would block {d.get('would_block', 0)}, would no longer block "
        f"{d.get('would_unblock', 0)}, another level {d.get('level', 0)}"
    )
    rows = [
        [b.behavior_id, b.would_block, b.would_unblock, b.level, b.total] for b in report.behaviors
    ]
    lines.append("")
    lines.append(table(["behavior", "would block", "no longer blocks", "level", "events"], rows))
    for behavior in report.behaviors:
        lines.append("")
        lines.append(f"{behavior.behavior_id}:")
        for example in behavior.examples[:TEXT_EXAMPLES]:
            before = example.before or "-"
            after = example.after or "-"
            when = example.timestamp[:19].replace("T", " ")
            lines.append(
                f"  {when}  {example.session_id}  {before} -> {after}  {example.input_summary}"
            )
    return "\n".join(lines)
