"""The static analyser of shell and interpreter commands: what a command line would run.

A pure package: it reads text and returns values; it knows nothing of events, facts, the catalog
or the engine (it imports none of them: they import it). What it reads on the way, a file fed to
a shell (``sh < x``), is read bounded by size, and long work checks the running fact's budget
(:mod:`forge_policy._budget`), a no-op outside one.

- :mod:`~forge_policy.commands.shell`: a small, total shell lexer (words, redirections,
  here-documents, ``$(…)``), :func:`lex` and :func:`iter_commands` (``cd`` and ``sh -c`` followed);
- :mod:`~forge_policy.commands.lines`: :func:`simple_commands` (scripts fed to a shell and
  ``ssh`` commands followed) and :func:`command_lines`, one rendered line per simple command;
- :mod:`~forge_policy.commands.git_argv`: :func:`normalise_git`, a git command line as git
  reads it;
- :mod:`~forge_policy.commands.git_commit`: :func:`commits`, each ``git commit`` with its
  message (``-m``, ``-F``, here-documents…);
- :mod:`~forge_policy.commands.execution`: the command model, :func:`runs`, every program a
  command line runs (``xargs``, ``find -exec``, ``busybox``, interpreter code…), each argv
  normalised by :func:`normalise_argv`;
- :mod:`~forge_policy.commands.deletes`: :func:`recursive_deletes`, the targets of a recursive
  delete and their scope;
- :mod:`~forge_policy.commands.readers`: :func:`reader_operands`, the files a reading command
  (``cat``, ``grep``, ``tar``…) reads;
- :mod:`~forge_policy.commands.interpreters`: what interpreter code (``python -c``, ``node -e``…)
  amounts to, as shell lines.

Names load on first use (PEP 562), so a fact that only lexes never imports the command model.

>>> from forge_policy.commands import normalise_git, runs
>>> [run.line for run in runs("echo / | xargs rm -rf", "/p")]
['echo /', 'rm -r -f /', 'xargs rm -rf']
>>> normalise_git(["git", "-C", "repo", "reset", "--har"])
['git', 'reset', '--hard']
"""

from __future__ import annotations

from forge_policy._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.commands.deletes import Delete, recursive_deletes
    from forge_policy.commands.execution import UNKNOWN, Run, data, normalise_argv, runs
    from forge_policy.commands.git_argv import DISCARDING_SUBCOMMANDS, normalise_git
    from forge_policy.commands.git_commit import Commit, commit_messages, commits
    from forge_policy.commands.lines import command_lines, simple_commands
    from forge_policy.commands.paths import expand_path
    from forge_policy.commands.readers import reader_operands
    from forge_policy.commands.shell import (
        SHELLS,
        Command,
        Redirect,
        basename,
        iter_commands,
        lex,
        literal_subst,
        read_text,
        split_options,
        stdin_text,
        strip_wrappers,
    )

_MODULES = {
    "forge_policy.commands.shell": (
        *("SHELLS", "Command", "Redirect", "basename", "iter_commands", "lex"),
        *("literal_subst", "read_text", "split_options", "stdin_text", "strip_wrappers"),
    ),
    "forge_policy.commands.paths": ("expand_path",),
    "forge_policy.commands.lines": ("command_lines", "simple_commands"),
    "forge_policy.commands.git_argv": ("DISCARDING_SUBCOMMANDS", "normalise_git"),
    "forge_policy.commands.git_commit": ("Commit", "commit_messages", "commits"),
    "forge_policy.commands.execution": ("UNKNOWN", "Run", "data", "normalise_argv", "runs"),
    "forge_policy.commands.deletes": ("Delete", "recursive_deletes"),
    "forge_policy.commands.readers": ("reader_operands",),
}
_LAZY = {name: module for module, names in _MODULES.items() for name in names}

__all__ = [
    "DISCARDING_SUBCOMMANDS",
    "SHELLS",
    "UNKNOWN",
    "Command",
    "Commit",
    "Delete",
    "Redirect",
    "Run",
    "basename",
    "command_lines",
    "commit_messages",
    "commits",
    "data",
    "expand_path",
    "iter_commands",
    "lex",
    "literal_subst",
    "normalise_argv",
    "normalise_git",
    "read_text",
    "reader_operands",
    "recursive_deletes",
    "runs",
    "simple_commands",
    "split_options",
    "stdin_text",
    "strip_wrappers",
]

__getattr__, __dir__ = lazy_exports("forge_policy.commands", _LAZY, __all__, globals())
