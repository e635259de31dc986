"""Governance commands are the user's: they refuse inside an agent's tool call (SPEC §7).

The one rule of who may run what, for every way in (``forge-policy``, ``python -m
forge_policy.cli``, ``python -m forge_policy.cli.git_cmds``):

- A **governance-changing** command (:data:`GOVERNANCE`: it switches behaviors, tunes them,
  grants an override, deletes sessions, rewrites the hook set-up, stops the worker or writes git
  hooks) that finds an agent harness's marker in its environment (:data:`AGENT_MARKERS`) and no
  terminal on stdin is refused: exit 2 (usage) and one line on stderr saying why and that the
  user runs it from their own terminal. An agent's shell tool runs commands with stdin from a
  pipe or ``/dev/null``; a user who types the command in a terminal has a TTY, inside the
  harness's own shell escape too.
- ``override`` of a behavior whose override is the user's (``override: user``: the harness asks
  the user, :data:`forge_policy.model.OVERRIDE_BY_USER`) needs a terminal on stdin always, in an
  agent's tool call or not: a script cannot stand in for the user's answer.
- Everything else reads, or is what the harness and git run on the agent's behalf (``hook``,
  ``status``, ``explain``, ``validate``, ``list``, ``describe``, ``audit``, ``worker status``,
  ``serve``, ``git commit-msg``, ``git pre-commit``) and stays allowed.

This is the command line's half of ``protect-governance``: the hook refuses an agent's call that
runs these commands, and a call that gets past it (an unusual spelling, a wrapper script) still
meets this check. Neither is a sandbox: a process that unsets the marker or allocates itself a
pseudo-terminal is deliberate code execution, which SPEC §9 leaves to a container boundary.

The markers, each documented by its harness for the shell its agent runs commands in:

==================================  ==========================================================
``CLAUDECODE``                      Claude Code's Bash tool (``1``; anthropics/claude-code#531)
``GEMINI_CLI``                      Gemini CLI's ``run_shell_command`` (``1``; its shell tool
                                    docs)
``CODEX_SANDBOX``,                  OpenAI Codex CLI's sandboxed ``shell`` tool (``seatbelt``
``CODEX_SANDBOX_NETWORK_DISABLED``  on macOS; ``1``; openai/codex ``AGENTS.md``)
``CURSOR_AGENT``                    Cursor's agent terminal (``1``; cursor.com docs, agent
                                    terminal)
==================================  ==========================================================

A marker counts when it is set and not empty.

>>> refusal("off", {"CLAUDECODE": "1"}, tty=False)  # doctest: +ELLIPSIS
"off changes governance: refused inside an agent's tool call (CLAUDECODE is set, ...
>>> refusal("off", {"CLAUDECODE": "1"}, tty=True) is None  # the user, in their terminal
True
>>> refusal("status", {"CLAUDECODE": "1"}, tty=False) is None  # read-only
True
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import IO, Any

#: The commands that change governance, as ``command`` or ``command subcommand``.
GOVERNANCE = frozenset(
    {
        *("on", "off", "strict", "relaxed", "override", "purge", "init", "uninstall"),
        *("worker stop", "git install", "config unfork", "suggest --apply"),
    }
)
#: Environment variables an agent harness sets in its shell tool's environment.
AGENT_MARKERS = (
    "CLAUDECODE",
    "GEMINI_CLI",
    "CODEX_SANDBOX",
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "CURSOR_AGENT",
)
YOUR_TERMINAL = "run it yourself from your own terminal"


def command_name(args: Any) -> str:
    """``command`` or ``command subcommand`` of parsed ``forge-policy`` arguments.

    >>> import argparse
    >>> command_name(argparse.Namespace(command="worker", worker_command="stop"))
    'worker stop'
    """
    name = str(getattr(args, "command", "") or "")
    sub = getattr(args, f"{name}_command", None)
    return f"{name} {sub}" if sub else name


def agent_marker(environ: Mapping[str, str]) -> str:
    """The first agent marker set in ``environ``, or ``""``."""
    return next((name for name in AGENT_MARKERS if environ.get(name, "")), "")


def has_terminal(stream: IO[Any] | None) -> bool:
    """Whether ``stream`` (stdin) is a terminal; a closed or missing one is not."""
    try:
        return stream is not None and stream.isatty()
    except (ValueError, OSError):
        return False


def refusal(command: str, environ: Mapping[str, str], *, tty: bool) -> str | None:
    """Why ``command`` may not run here, or None when it may."""
    if command not in GOVERNANCE or tty:
        return None
    marker = agent_marker(environ)
    if not marker:
        return None
    return (
        f"{command} changes governance: refused inside an agent's tool call "
        f"({marker} is set, stdin is not a terminal); {YOUR_TERMINAL}"
    )


def check(args: Any) -> str | None:
    """Why this process may not run the parsed command: :func:`refusal` with the process's
    environment and stdin."""
    import os
    import sys

    return refusal(command_name(args), os.environ, tty=has_terminal(sys.stdin))


def user_override_refusal(behavior_id: str, *, tty: bool) -> str | None:
    """Why an override of a behavior whose override is the user's may not be granted here."""
    if tty:
        return None
    return (
        f"override: {behavior_id} is overridden by the user only, and stdin is not a terminal; "
        f"{YOUR_TERMINAL}"
    )
