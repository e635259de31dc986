"""The ``forge-policy`` argument parser, the dispatch to one handler per command, and the
mapping of known exceptions to one clean message and a distinct exit code (see
:mod:`forge_policy.cli`)."""

from __future__ import annotations

import argparse
import sys

from forge_policy.cli import (
    audit_cmds,
    authoring_cmds,
    catalog_cmds,
    completion,
    config_cmds,
    floor_cmds,
    git_cmds,
    guard,
    replay_cmds,
    session_cmds,
    setup_cmds,
    shadow_cmds,
    statusline_cmds,
    suggest_cmds,
    ui_cmds,
    worker_cmds,
)
from forge_policy.cli.context import (
    INTEGRITY_FAILURE,
    OVERVIEW,
    REFUSED,
    STORE_FAILURE,
    USAGE,
    Context,
    OutputClosed,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TextIO

    Handler = Callable[[argparse.Namespace, Context], int]


class Parser(argparse.ArgumentParser):
    """An argument parser whose "invalid choice" error names the closest valid one (a
    mistyped command: ``did you mean 'status'?``), as git does."""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is None or value in choices or not isinstance(value, str):
            super()._check_value(action, value)
            return
        import difflib

        names = [str(c) for c in choices]
        close = difflib.get_close_matches(value, names, n=1, cutoff=0.6)
        if not close:  # a prefix of exactly one name ("stat" for status) is a clear intent
            close = [n for n in names if n.startswith(value)][:2]
            close = close if len(close) == 1 else []
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise argparse.ArgumentError(
            action, f"invalid choice: {value!r}{hint}; choose from {', '.join(names)}"
        )


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=32)


def _epilog(doc: str) -> str:
    """The command summary and exit codes of the package docstring, as plain text."""
    body = doc.split("::", 1)[-1].split("``hook`` is dispatched")[0]
    return body.replace("(every command)::", "(every command):").strip("\n")


def build_parser() -> argparse.ArgumentParser:
    """The whole command line (every command has ``--help``)."""
    parser = Parser(
        prog="forge-policy",
        description="Policy engine for AI coding agents.",
        epilog=_epilog(OVERVIEW),
        formatter_class=_formatter,
    )
    from forge_policy import __version__

    parser.add_argument("--version", action="version", version=f"forge-policy {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, handler: Handler, text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=text, description=text, formatter_class=_formatter)
        sub.set_defaults(handler=handler)
        return sub

    groups = (
        setup_cmds,
        audit_cmds,
        session_cmds,
        catalog_cmds,
        authoring_cmds,
        replay_cmds,
        git_cmds,
        suggest_cmds,
    )
    extra = (config_cmds, floor_cmds, worker_cmds, shadow_cmds, statusline_cmds, ui_cmds)
    for module in (*groups, *extra, completion):
        module.register(command)
    return parser


def run(argv: list[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Parse ``argv``, run its command, and map known failures to exit codes."""
    from forge_policy.errors import (
        AuditError,
        AuditIntegrityError,
        CatalogError,
        ConfigError,
        EventError,
        ProjectConfigError,
        Refused,
        SetupError,
        StoreError,
    )

    ctx = Context(out or sys.stdout, err or sys.stderr)
    ctx.parser = build_parser()
    args = ctx.parser.parse_args(argv)  # exits 2 on bad usage, 0 on --help
    refused = guard.check(args)
    if refused:
        ctx.note(refused)
        return USAGE
    try:
        code: int = args.handler(args, ctx)
        return code
    except AuditIntegrityError as exc:
        ctx.note(f"integrity failure: {exc}")
        return INTEGRITY_FAILURE
    except (ConfigError, ProjectConfigError) as exc:  # FORGE_* or a configuration layer
        ctx.note(str(exc))
        return USAGE
    except CatalogError as exc:
        ctx.note(str(exc))
        return REFUSED
    except (Refused, EventError, SetupError) as exc:
        ctx.note(str(exc))
        return REFUSED
    except (StoreError, AuditError) as exc:
        ctx.note(f"{type(exc).__name__}: {exc}")
        return STORE_FAILURE
    except OutputClosed:
        raise  # stdout's reader is gone: forge_policy.cli.main stops quietly
    except OSError as exc:
        where = f" {exc.filename!r}" if exc.filename else ""
        ctx.note(f"cannot access{where}: {exc.strerror or exc}")
        return STORE_FAILURE
    except KeyboardInterrupt:
        return 130
