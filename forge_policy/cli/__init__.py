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
    STORE_FAILURE,
    USAGE,
)

__doc__ = f"{__doc__}\n\n{OVERVIEW}"
__all__ = ["INTEGRITY_FAILURE", "OK", "REFUSED", "STORE_FAILURE", "USAGE", "main"]


def main(argv: list[str] | None = None) -> int:
    """Run ``forge-policy`` with ``argv`` (default: the process arguments); return the exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["hook"] and not {"-h", "--help"} & set(args):
        from forge_policy.hook import main as hook_main

        return hook_main(sys.stdin, sys.stdout, sys.stderr, os.environ, args[1:])
    from forge_policy.cli.app import run

    return run(args)
