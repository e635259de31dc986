"""Git commands: ``git commit-msg FILE``, ``git pre-commit``, ``git install``.

The first two are what git hooks (and the ``pre-commit`` framework, through
``.pre-commit-hooks.yaml``) run: they evaluate the catalog on git's ``commit-msg`` and
``pre-commit`` events and exit 1 to refuse the commit. See :mod:`forge_policy.ops.git_hooks`.
"""

from __future__ import annotations

import os

from forge_policy.cli.context import OK, REFUSED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Callable
    from typing import Any

    from forge_policy.cli.context import Context


def register(command: Callable[..., Any]) -> None:
    """Add ``git`` and its subcommands to the parser."""
    p = command(
        "git",
        cmd_git_help,
        "Git-side checks: commit-msg and pre-commit hooks evaluate the catalog on your commits; "
        "install writes those hooks.",
    )
    sub = p.add_subparsers(dest="git_command", metavar="SUBCOMMAND", required=True)
    q = sub.add_parser(
        "commit-msg",
        help="check a commit message file (git passes it as $1); exit 1 refuses the commit",
        description="Evaluate the catalog on a commit-msg event: comment lines (#) and the "
        "diff under the scissors line are ignored. Exit 1 refuses the commit.",
    )
    q.add_argument("message_file", metavar="FILE")
    q.set_defaults(handler=cmd_commit_msg)
    q = sub.add_parser(
        "pre-commit",
        help="check the staged files (strict TDD); exit 1 refuses the commit",
        description="Evaluate the catalog on a pre-commit event with the files staged in the "
        "current repository. File names given as arguments (the pre-commit framework's) are "
        "ignored: the index is what gets committed.",
    )
    q.add_argument("files", nargs="*", metavar="FILE", help=argparse_suppress())
    q.set_defaults(handler=cmd_pre_commit)
    q = sub.add_parser(
        "install",
        help="write .git/hooks/commit-msg and pre-commit (idempotent, keeps existing hooks)",
        description="Install the commit-msg and pre-commit hooks in a repository's hooks folder "
        "(core.hooksPath is honoured). Existing shell hooks keep their content: forge-policy's "
        "lines go in a marked block. Exit 1 when a hook could not be set up.",
    )
    q.add_argument("--repo", metavar="DIR", default=None, help="default: the current directory")
    q.set_defaults(handler=cmd_install)


def argparse_suppress() -> str:
    """Hide an argument from ``--help``."""
    import argparse

    return argparse.SUPPRESS


def cmd_git_help(args: Namespace, ctx: Context) -> int:  # pragma: no cover - argparse requires
    """Never reached: a subcommand is required."""
    return REFUSED


def cmd_commit_msg(args: Namespace, ctx: Context) -> int:
    """``forge-policy git commit-msg FILE``."""
    from forge_policy.ops.git_hooks import run_commit_msg

    return run_commit_msg(args.message_file, cwd=os.getcwd(), err=ctx.err)


def cmd_pre_commit(args: Namespace, ctx: Context) -> int:
    """``forge-policy git pre-commit``."""
    from forge_policy.ops.git_hooks import run_pre_commit

    return run_pre_commit(cwd=os.getcwd(), err=ctx.err)


def cmd_install(args: Namespace, ctx: Context) -> int:
    """``forge-policy git install [--repo DIR]``."""
    from forge_policy.errors import GitHookError
    from forge_policy.ops.git_hooks import install_git_hooks

    repo = os.path.abspath(args.repo or os.getcwd())
    try:
        changes = install_git_hooks(repo)
    except GitHookError as exc:
        ctx.note(str(exc))
        return REFUSED
    for change in changes:
        detail = f" ({change.detail})" if change.detail else ""
        ctx.print(f"{change.action:9} {change.path}{detail}")
    return REFUSED if any(c.action == "skipped" for c in changes) else OK


def main(argv: list[str] | None = None) -> int:
    """``python -m forge_policy.cli.git_cmds [git] SUBCOMMAND …``: the ``git`` commands alone.

    The same parser and handlers as ``forge-policy git``, for hooks that must run without the
    console script.
    """
    import argparse
    import sys

    from forge_policy.cli.context import Context

    parser = argparse.ArgumentParser(prog="forge-policy git")
    holder = argparse.ArgumentParser(add_help=False)
    commands = holder.add_subparsers()

    def command(name: str, handler: Any, text: str) -> argparse.ArgumentParser:
        return parser if name == "git" else commands.add_parser(name, help=text)

    register(command)
    words = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(words[1:] if words[:1] == ["git"] else words)
    from forge_policy.cli import guard
    from forge_policy.cli.context import USAGE

    ctx = Context(sys.stdout, sys.stderr)
    refused = guard.check(argparse.Namespace(command="git", git_command=args.git_command))
    if refused:
        ctx.note(refused)
        return USAGE
    code: int = args.handler(args, ctx)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
