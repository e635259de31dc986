"""``forge-policy replay``: a catalog (and another, to diff) over recorded Claude Code
sessions; the work is :func:`forge_policy.ops.replay.replay`."""

from __future__ import annotations

from forge_policy.cli._format import table
from forge_policy.cli.context import OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Callable, Iterator
    from contextlib import AbstractContextManager
    from typing import Any

    from forge_policy.catalog.catalog import Catalog
    from forge_policy.cli.context import Context
    from forge_policy.config.env import Config
    from forge_policy.ops.coverage import Coverage
    from forge_policy.ops.replay import Replay, Step, Verdict
    from forge_policy.ops.transcript import TranscriptRead

#: Inputs of at least this many events get a progress bar (on a terminal, with rich).
PROGRESS_MIN = 1000
#: Rows of the block and difference lists the terminal shows (``--json``/``--html``: all).
LIST_LIMIT = 200
#: The two sides of ``--against``, as a diff names them: the baseline, then the change.
OLD = "old (--against)"
NEW = "new (--catalog)"


def register(command: Callable[..., Any]) -> None:
    """Add ``replay`` to the parser."""
    p = command(
        "replay",
        cmd_replay,
        "Replay recorded Claude Code transcripts (the JSONL files under ~/.claude/projects/; a "
        "folder: every *.jsonl under it) through a catalog and report what it would have "
        "decided; with --against, every decision that differs between the two catalogs; and "
        "the hook coverage gaps: the tool calls that got no decision in the project's audit "
        "log (their hook did not run). Nothing is written to the project's state or audit log.",
    )
    p.add_argument("transcripts", metavar="TRANSCRIPT", nargs="+", help="a .jsonl file or folder")
    p.add_argument("--catalog", metavar="DIR", help="default: the configured catalog")
    p.add_argument("--against", metavar="DIR", help="a second catalog to compare with")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--html", metavar="REPORT.html", help="also write a self-contained HTML report")


def _load(ctx: Context, folder: str | None) -> Catalog:
    if folder is None:
        return ctx.config.load_catalog()
    from forge_policy.catalog.loader import load_catalog

    return load_catalog(folder)


def cmd_replay(args: Namespace, ctx: Context) -> int:
    """``forge-policy replay TRANSCRIPT… [--catalog DIR] [--against DIR] [--json] [--html F]``."""
    from forge_policy.ops.replay import replay
    from forge_policy.ops.transcript import read_transcripts

    catalog = _load(ctx, args.catalog)
    against = _load(ctx, args.against) if args.against else None
    read = read_transcripts(args.transcripts)
    for info in read.files:
        for problem in info.problems:
            ctx.note(f"skipped {problem}")
        if info.more_problems:
            ctx.note(f"skipped {info.more_problems} more bad lines of {info.path}")
    config = ctx.config
    with _progress(ctx, len(read.events)) as advance:
        result = replay(
            read.events,
            catalog,
            against=against,
            profile=config.profile,
            ttl=config.ttl,
            override_window=config.override_window,
            progress=advance,
        )
    covered = _coverage(ctx, read)
    if args.html:
        from forge_policy.render.replay_html import write_report

        write_report(args.html, result, read, covered)
    if args.json:
        ctx.print_json(
            {
                "inputs": [f.to_dict() for f in read.files],
                **result.to_dict(),
                "coverage": covered.to_dict(),
            }
        )
    else:
        ctx.print(_text(result, read))
        ctx.print("\n".join(_coverage_text(covered)))
    if args.html:
        ctx.note(f"wrote {args.html}")
    return OK


def _coverage(ctx: Context, read: TranscriptRead) -> Coverage:
    """The transcript's tool calls against the project's audit log (its ``seen`` records),
    read without creating anything: a log that does not exist holds none."""
    import os

    from forge_policy.errors import ForgePolicyError
    from forge_policy.ops.coverage import Coverage, coverage, hook_matchers

    config = ctx.config
    try:
        records = existing_records(config, lambda r: r.get("kind") == "seen")
    except (ForgePolicyError, OSError) as exc:
        ctx.note(f"hook coverage not checked: the audit log cannot be read: {exc}")
        return Coverage(0, (), note=f"the audit log cannot be read: {exc}")
    project = os.path.abspath(config.project_dir)
    return coverage(read, records, matchers=hook_matchers(project), project=project)


def existing_records(
    config: Config, keep: Callable[[dict[str, Any]], bool]
) -> list[dict[str, Any]]:
    """The records of the configured audit log that ``keep`` keeps, read without creating
    anything: a log that does not exist holds none. Raises what opening or reading it raises
    (a :class:`~forge_policy.errors.ForgePolicyError`, an ``OSError``)."""
    import os

    path = {"file": os.path.join(config.root, "audit", "overrides.log")}.get(config.audit)
    if config.audit.startswith("sqlite:"):
        path = config.audit[len("sqlite:") :] or os.path.join(config.root, "audit", "audit.db")
    if path is not None and not os.path.exists(path):
        return []
    sink = config.open_audit()
    try:
        return [r for r in sink.records() if keep(r)]
    finally:
        sink.close()


def _coverage_text(covered: Coverage) -> list[str]:
    from forge_policy._time import iso

    lines = ["", f"hook coverage: {covered.summary()}"]
    for gap in covered.gaps[:LIST_LIMIT]:
        who = f" (subagent {gap.sidechain})" if gap.sidechain else ""
        who = " (subagent)" if gap.sidechain == "" else who
        call = f" {gap.tool_use_id}" if gap.tool_use_id else ""
        lines.append(
            f"  {iso(gap.timestamp)[:19]}  {gap.session_id}{who}  {gap.tool}{call}: {gap.summary}"
            f"\n      {gap.reason}  ({gap.source})"
        )
    if len(covered.gaps) > LIST_LIMIT:
        lines.append(f"  … {len(covered.gaps) - LIST_LIMIT} more (--json or --html lists them all)")
    if covered.skipped:
        skipped = ", ".join(f"{why} {n}" for why, n in sorted(covered.skipped.items()))
        lines.append(f"not checked (no hook could see them): {skipped}")
    if not covered.note:
        matchers = covered.matchers
        lines.append(
            "PreToolUse matcher: not read (every tool counted)"
            if matchers is None
            else "PreToolUse matcher: " + ", ".join(m or "*" for m in matchers)
        )
    return lines


def _progress(ctx: Context, total: int) -> AbstractContextManager[Callable[[int], None] | None]:
    """A rich progress bar on stderr for long inputs on a terminal; else nothing."""
    from contextlib import contextmanager, nullcontext

    isatty = getattr(ctx.err, "isatty", None)
    if total < PROGRESS_MIN or not (isatty and isatty()):
        return nullcontext(None)
    try:
        from rich.console import Console
        from rich.progress import Progress
    except ImportError:  # the bar is a convenience: install the 'replay' extra for it
        return nullcontext(None)

    @contextmanager
    def bar() -> Iterator[Callable[[int], None]]:
        with Progress(console=Console(file=ctx.err), transient=True) as progress:
            task = progress.add_task("replaying", total=total)
            yield lambda n: progress.advance(task, n)

    return bar()


def _text(result: Replay, read: TranscriptRead) -> str:
    files = read.files
    skipped: dict[str, int] = {}
    unknown: dict[str, int] = {}
    for info in files:
        for kind, n in info.skipped.items():
            skipped[kind] = skipped.get(kind, 0) + n
        for kind, n in info.unknown.items():
            unknown[kind] = unknown.get(kind, 0) + n
    bad = sum(len(f.problems) + f.more_problems for f in files)
    lines = [
        f"read {len(files)} transcript{'s' if len(files) != 1 else ''}: "
        f"{sum(f.records for f in files)} records, {result.events} events, "
        f"{len(result.sessions)} session{'s' if len(result.sessions) != 1 else ''}",
    ]
    if skipped:
        lines.append("skipped: " + ", ".join(f"{k} {n}" for k, n in sorted(skipped.items())))
    if unknown:
        lines.append(
            "unknown record types: " + ", ".join(f"{k} {n}" for k, n in sorted(unknown.items()))
        )
    if bad:
        lines.append(f"bad lines: {bad} (listed on stderr)")
    if result.against is None:
        lines.append(f"catalog: {result.catalog}")
    else:  # a diff reads old -> new: the --against catalog is the baseline, --catalog the change
        lines.append(f"{OLD}: {result.against}")
        lines.append(f"{NEW}: {result.catalog}")
    lines.append("")
    lines.append(_sessions_table(result))
    if result.against is not None:
        lines.append(f"a cell that differs reads old → new ({OLD} → {NEW})")
    blocks = result.blocks()
    lines.append("")
    lines.append(f"would block: {len(blocks)}")
    lines.extend(_rows(blocks, result.against is not None))
    if result.against is not None:
        differences = result.differences()
        lines.append("")
        lines.append(f"differences: {len(differences)}")
        lines.extend(_rows(differences, True))
    return "\n".join(lines)


def _sessions_table(result: Replay) -> str:
    from forge_policy.ops.replay import OUTCOMES

    rows = []
    for session in result.sessions:
        mine = session.tally()
        theirs = session.tally(against=True) if result.against is not None else None
        cells: list[object] = [session.session_id, len(session.events)]
        for outcome in OUTCOMES:
            cell = str(mine[outcome])
            if theirs is not None and theirs[outcome] != mine[outcome]:
                cell = f"{theirs[outcome]} → {mine[outcome]}"  # old (--against) → new
            cells.append(cell)
        rows.append(cells)
    return table(["session", "events", *OUTCOMES], rows)


def _rows(steps: list[tuple[str, Step]], paired: bool) -> list[str]:
    from forge_policy._time import iso

    shown = []
    for sid, step in steps[:LIST_LIMIT]:
        verdict = _verdict(step.decision)
        if paired and step.against is not None:
            verdict = f"old: {_verdict(step.against)} → new: {verdict}"
        what = f"{step.event} {step.tool}".strip()
        shown.append(
            f"  {iso(step.timestamp)[:19]}  {sid}#{step.index}  {what}: {step.subject}\n"
            f"      {verdict}  ({step.source})"
        )
    if len(steps) > LIST_LIMIT:
        shown.append(f"  … {len(steps) - LIST_LIMIT} more (--json or --html lists them all)")
    return shown


def _verdict(verdict: Verdict) -> str:
    if verdict.blocking:
        return f"{verdict.outcome_shown or verdict.outcome} by {verdict.blocking}"
    fired = [f"{f.behavior_id} {f.level_shown or f.level}" for f in verdict.fired if not f.shadow]
    fired += [f"{o} override" for o in verdict.overrides]
    return f"{verdict.outcome} ({', '.join(fired)})" if fired else verdict.outcome
