"""``forge-policy``: the command line of forge_policy (the overview is
:data:`forge_policy.cli.context.OVERVIEW`, printed by ``forge-policy --help``)."""

from __future__ import annotations

import os
import sys

from forge_policy.cli.context import (
    INTEGRITY_FAILURE,
    OK,
    OVERVIEW,
    REFUSED,
    STDOUT_CLOSED,
    STORE_FAILURE,
    USAGE,
)

__doc__ = f"{__doc__}\n\n{OVERVIEW}"
__all__ = [
    "INTEGRITY_FAILURE",
    "OK",
    "REFUSED",
    "STDOUT_CLOSED",
    "STORE_FAILURE",
    "USAGE",
    "main",
]


def main(argv: list[str] | None = None) -> int:
    """Run ``forge-policy`` with ``argv`` (default: the process arguments); return the exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["hook"] and not {"-h", "--help"} & set(args):
        from forge_policy.hook import main as hook_main

        return hook_main(sys.stdin, sys.stdout, sys.stderr, os.environ, args[1:])
    from forge_policy.cli.app import run

    try:
        code = run(args)
        sys.stdout.flush()  # a reader gone (``| head``) shows here when the output was buffered
    except BrokenPipeError:
        return _stdout_closed()
    return code


def _stdout_closed() -> int:
    """Stdout's reader went away (``forge-policy status | head -1``): stop quietly, as a
    process killed by SIGPIPE would, and keep Python from complaining when it flushes stdout
    at exit (point it at ``/dev/null``)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return STDOUT_CLOSED
