"""``forge-policy``: the command line of forge_policy.

::

    forge-policy hook [--harness NAME] [--via-serve]   stdin event -> stdout decision (hot path)
    forge-policy serve [--port N]                      warm evaluator for Claude Code http hooks
    forge-policy status [--session SID] [--json]       counters, levels, thresholds, overrides
    forge-policy list [--json]                         id, enabled, default level, category
    forge-policy describe ID [--json]                  one behavior in full
    forge-policy validate [DIR] [--json]               every catalog error as file:line:col
    forge-policy explain [--file F] [--json]           dry run of one event; changes nothing
    forge-policy override ID --session SID --reason T  one-shot pass for the next soft block
    forge-policy on|off ID [--session SID|--project]   switch a behavior on or off
    forge-policy strict|relaxed ID [--reset]           project tuning of a behavior's levels
    forge-policy audit [--verify] [--json]             governance summary; hash-chain check
    forge-policy purge                                 delete expired sessions
    forge-policy init [--serve [--http-only]]          set up .forge/ and .claude/settings.json
    forge-policy git commit-msg|pre-commit|install     git-side checks and their git hooks

Exit codes (every command)::

    0  success
    1  validation failed or request refused: the catalog does not load, unknown behavior,
       no override for a hard block, a settings file init cannot merge into, a bad event
    2  usage: bad arguments or FORGE_* variables
    3  store, audit or file-system failure: state, audit log or a project file unreadable
       or unwritable, lock timeout
    4  integrity failure: the audit log was edited, truncated or reordered

``hook`` is dispatched before :mod:`argparse` is imported: it runs on every agent tool call.
"""

from __future__ import annotations

import os
import sys

OK, REFUSED, USAGE, STORE_FAILURE, INTEGRITY_FAILURE = 0, 1, 2, 3, 4


def main(argv: list[str] | None = None) -> int:
    """Run ``forge-policy`` with ``argv`` (default: the process arguments); return the exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["hook"] and not {"-h", "--help"} & set(args):
        from forge_policy.hook import main as hook_main

        return hook_main(sys.stdin, sys.stdout, sys.stderr, os.environ, args[1:])
    from forge_policy.cli.app import run

    return run(args)
