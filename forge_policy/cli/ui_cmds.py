"""``forge-policy ui``: the read-only dashboard on loopback (:mod:`forge_policy.ui`)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Callable
    from typing import Any

    from forge_policy.cli.context import Context


def _port(text: str) -> int:
    import argparse

    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (0-65535; 0: a free one)")
    return int(text)


def register(command: Callable[..., Any]) -> None:
    """Add ``ui`` to the parser."""
    p = command(
        "ui",
        cmd_ui,
        "Serve a read-only dashboard on 127.0.0.1: live sessions with their counters and "
        "levels over time, recent blocks and overrides with their reasons, override rates per "
        "behavior, tuning suggestions, the candidate catalog's shadow verdicts, hook coverage "
        "gaps, the audit log's integrity. Prints its URL (with a random token); on Linux only "
        "your user may connect (elsewhere the token alone guards it). Ctrl-C stops it.",
    )
    p.add_argument(
        "--port", type=_port, default=0, metavar="N", help="listen on port N (default: a free one)"
    )
    p.add_argument(
        "--transcripts",
        action="append",
        default=[],
        metavar="PATH",
        help="Claude Code transcripts (a .jsonl file or folder; repeatable) whose tool calls the "
        "hook coverage section checks (default: Claude Code's folder for this project)",
    )
    p.add_argument("--open", action="store_true", help="open the URL in a web browser")


def cmd_ui(args: Namespace, ctx: Context) -> int:
    """``forge-policy ui [--port N] [--open]``."""
    from forge_policy.ui.server import run

    return run(
        ctx.evaluator,
        ctx.config,
        transcripts=args.transcripts,
        port=args.port,
        open_browser=args.open,
        out=ctx.out,
        err=ctx.err,
    )
