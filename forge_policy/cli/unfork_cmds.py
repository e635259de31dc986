"""``forge-policy config unfork [--apply [--force]] [--json]``: a forked catalog back to an
overlay (:mod:`forge_policy.ops.unfork`). A subcommand of the ``config`` group
(:mod:`forge_policy.cli.config_cmds` calls :func:`add_unfork`)."""

from __future__ import annotations

import os

from forge_policy.cli.context import OK, REFUSED

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from argparse import Namespace

    from forge_policy.cli.context import Context
    from forge_policy.ops.unfork import Plan

TEXT = (
    "Compare the project's forked catalog (<FORGE_ROOT>/behaviors, copied by an earlier "
    "on/off/strict/relaxed) with the built-in catalog and propose the equivalent overlay for "
    "<FORGE_ROOT>/config.yaml (enabled, level, escalation, tuning), so that upgrades of the "
    "built-in catalog reach the project again. Behaviors whose rules differ, or that are not in "
    "the built-in catalog, are named: no overlay can express them. A dry run unless --apply, "
    "which writes the overlay and moves the fork aside to <FORGE_ROOT>/behaviors.forked-<date>."
)


def add_unfork(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``unfork`` to the ``config`` group's subparsers."""
    q = sub.add_parser("unfork", help="turn a forked catalog into an overlay", description=TEXT)
    q.add_argument("--apply", action="store_true", help="write the overlay and move the fork aside")
    q.add_argument(
        "--force",
        action="store_true",
        help="with --apply: unfork even when the fork holds rules of its own (they stop "
        "applying; the fork moved aside keeps them)",
    )
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(handler=cmd_config_unfork)


def _shown(ctx: Context, path: str) -> str:
    project = os.path.abspath(ctx.config.project_dir)
    if path.startswith(project + os.sep):
        return os.path.relpath(path, project)
    return path


def cmd_config_unfork(args: Namespace, ctx: Context) -> int:
    """``forge-policy config unfork``."""
    from forge_policy.ops import unfork

    if args.force and not args.apply:
        ctx.note("--force only means something with --apply; nothing was changed")
        return REFUSED
    proposal = unfork.plan(ctx.config)
    if not args.apply:
        if args.json:
            ctx.print_json({**proposal.to_dict(), "applied": False})
        else:
            _print_plan(ctx, proposal)
            if proposal.own:
                ctx.print(
                    "the fork cannot go while it holds rules of its own: keep it, or unfork "
                    "anyway with: forge-policy config unfork --apply --force"
                )
            else:
                ctx.print(
                    "dry run: nothing was changed; apply with: forge-policy config unfork --apply"
                )
        return OK
    applied = unfork.apply(ctx.config, proposal, force=args.force)
    _audit(ctx, proposal, applied)
    fork, moved = _shown(ctx, proposal.fork), _shown(ctx, applied.moved_to)
    layer = _shown(ctx, applied.layer)
    commit = f"git add {layer} && git rm -r -q --cached {fork}"
    if args.json:
        ctx.print_json(
            {
                **proposal.to_dict(),
                "applied": True,
                "moved_to": applied.moved_to,
                "written": list(applied.written),
                "commit": commit,
            }
        )
        return OK
    _print_plan(ctx, proposal)
    count = len(applied.written)
    ctx.print(f"wrote {count} behavior setting{'s' if count != 1 else ''} to {layer}")
    ctx.print(
        f"moved {fork} to {moved}: the project now uses the built-in catalog under its overlay "
        "(the moved folder is not for committing: delete it when you no longer need it)"
    )
    ctx.print(f"to commit: {commit}")
    return OK


def _print_plan(ctx: Context, proposal: Plan) -> None:
    sections = (
        ("overlay", f"expressible as an overlay (for {_shown(ctx, proposal.layer)}):"),
        ("own", "kept as your own behavior (no overlay can express it; not unforkable):"),
        ("text", "wording only (the built-in's current text will apply):"),
        ("missing", "not in your fork:"),
    )
    ctx.print(f"fork: {_shown(ctx, proposal.fork)} compared with the built-in catalog")
    for kind, title in sections:
        found = [f for f in proposal.findings if f.kind == kind]
        if not found:
            continue
        ctx.print(title)
        for finding in found:
            ctx.print(f"  {finding.behavior}: {finding.detail}")
    block = proposal.yaml()
    if block:
        ctx.print(f"proposed {_shown(ctx, proposal.layer)}:")
        ctx.print("  " + block.rstrip("\n").replace("\n", "\n  "))
    else:
        ctx.print("no setting differs from the built-in catalog: the overlay is empty")


def _audit(ctx: Context, proposal: Plan, applied: object) -> None:
    """``config unfork --apply`` changes which catalog governs: the audit log says so."""
    import time

    from forge_policy._time import iso
    from forge_policy.audit import records
    from forge_policy.audit.base import write

    moved = getattr(applied, "moved_to", "")
    entry = records.Diagnostic(
        code="catalog_unforked",
        timestamp=iso(time.time()),
        session_id="",
        message=f"config unfork --apply: {proposal.fork} moved to {moved}; the built-in catalog "
        f"applies under the overlay of {proposal.layer} "
        f"({', '.join(sorted(proposal.overlay)) or 'no settings'})",
    )
    write(ctx.config.open_audit(), [records.to_dict(entry)])
