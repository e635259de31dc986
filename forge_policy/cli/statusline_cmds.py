"""``forge-policy statusline``: Claude Code's ``statusLine`` command, computed in this process
(the launcher's ``… statusline`` asks the warm worker first: :mod:`forge_policy.worker.client`).

Read-only and never failing: one line on stdout, exit 0, whatever the input
(:mod:`forge_policy.ops.statusline`).
"""

from __future__ import annotations

from forge_policy.cli.context import OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Callable
    from typing import Any

    from forge_policy.cli.context import Context


def register(command: Callable[..., Any]) -> None:
    """Add ``statusline`` to the parser."""
    command(
        "statusline",
        cmd_statusline,
        "Claude Code's status line: reads the session JSON Claude Code sends on stdin and "
        "prints one line: the highest level reached, blocks waiting for an override, counters "
        "one violation short of their next escalation, the floor (on, degraded, off, none). "
        "Colour unless NO_COLOR; always exit 0; creates nothing. init --statusline sets it up.",
    )


def cmd_statusline(args: Namespace, ctx: Context) -> int:
    """``forge-policy statusline`` (status JSON on stdin)."""
    import os
    import sys

    from forge_policy.ops.statusline import MAX_INPUT, in_process

    try:
        raw = b"" if sys.stdin.isatty() else sys.stdin.buffer.read(MAX_INPUT + 1)
    except (OSError, ValueError, AttributeError):
        raw = b""
    ctx.write(in_process(raw, os.environ) + "\n")
    return OK
