"""What every ``forge-policy`` command shares: the overview, the exit codes and the
:class:`Context` a handler gets. It imports nothing at module level, so the hook path pays
nothing for it."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import ArgumentParser
    from typing import TextIO

    from forge_policy.config.env import Config
    from forge_policy.engine.evaluator import Evaluator

#: The command summary and exit codes, shown by ``forge-policy --help``.
OVERVIEW = """\
::

    forge-policy hook [--harness NAME] [--event E]     stdin event -> stdout decision (hot path)
    forge-policy serve [--port N]                      warm evaluator for Claude Code http hooks
    forge-policy worker status|stop|settle             the warm worker the hook client asks
    forge-policy statusline                            Claude Code's status line (JSON on stdin)
    forge-policy status [--session SID] [--limit N]    sessions newest first: counters, levels
    forge-policy list [--json]                         id, enabled, default level, category
    forge-policy describe ID [--json]                  one behavior in full
    forge-policy validate [DIR] [--strict] [--json]    every catalog error as file:line:col; lints
    forge-policy test [DIR] [--json]                   behavior tests, with trigger coverage
    forge-policy schema                                JSON Schema of behavior files
    forge-policy explain [--file F|--record N]         dry run of one event (or an audit record's)
    forge-policy replay TRANSCRIPT... [--against DIR]  a catalog over recorded sessions; diff
    forge-policy override ID --session SID --reason T  one-shot pass for the next soft block
    forge-policy on|off ID [--session SID|--project]   switch a behavior on or off (config.yaml)
    forge-policy strict|relaxed ID [--reset]           project tuning of a behavior's levels
    forge-policy audit [--verify] [--json]             governance summary; hash-chain check
    forge-policy audit log [--session SID] [--since W] the audit records, newest first, paged
    forge-policy suggest [--apply N[:KEY]]             tuning proposals from the audit log
    forge-policy ui [--port N] [--open]                read-only dashboard on 127.0.0.1 (token URL)
    forge-policy config [show] [--origin] [--json]     effective layered settings, and from where
    forge-policy config unfork [--apply]               a forked catalog back to an overlay
    forge-policy purge [--json]                        delete expired sessions
    forge-policy init [--harness NAME]... [--serve]    set up .forge/ and each harness's hook file
    forge-policy uninstall [--purge]                   take the hooks out (--purge: .forge/ too)
    forge-policy doctor [--probe] [--json]             what each harness enforces; its floor
    forge-policy floor [--json]                        what the OS holds: never written, never read
    forge-policy git commit-msg|pre-commit|install     git-side checks and their git hooks
    forge-policy completion bash|zsh|fish              shell completion script

Exit codes (every command)::

    0  success
    1  validation failed or request refused: the catalog does not load, unknown behavior,
       no override for a hard block, a settings file init cannot merge into, a bad event
    2  usage: bad arguments or FORGE_* variables; a governance-changing command inside an
       agent's tool call, or an override that is the user's, without a terminal on stdin
    3  store, audit or file-system failure: state, audit log or a project file unreadable
       or unwritable, lock timeout
    4  integrity failure: the audit log was edited, truncated or reordered
  141  stdout closed before the output ended (``| head``): nothing more is printed, as for a
       process SIGPIPE stops

``hook`` is dispatched before :mod:`argparse` is imported: it runs on every agent tool call.
"""

OK, REFUSED, USAGE, STORE_FAILURE, INTEGRITY_FAILURE = 0, 1, 2, 3, 4
#: Stdout's reader went away (``| head``): 128 + SIGPIPE, as a shell reports a process that
#: signal stopped; nothing is printed about it.
STDOUT_CLOSED = 141


class OutputClosed(BrokenPipeError):
    """Stdout's reader is gone: raised by :meth:`Context.write` so that a broken pipe of
    stdout is told apart from one of a socket or a child process (a real failure)."""


class Context:
    """What a handler needs, built on first use: the configuration, the evaluator, streams."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = out
        self.err = err
        self._config: Config | None = None
        self._evaluator: Evaluator | None = None
        #: the working directory is the project, unsearched (``init --here``); set before the
        #: first use of :attr:`config`
        self.here = False
        #: the whole command line's parser (``completion`` reads it), set by ``run``
        self.parser: ArgumentParser | None = None

    @property
    def config(self) -> Config:
        """``Config.from_env()``: the project found as git finds a work tree
        (:func:`~forge_policy.config.env.project_folder`), whatever folder the command runs in."""
        if self._config is None:
            from forge_policy.config.env import Config

            self._config = Config.from_env(here=self.here)
        return self._config

    @property
    def evaluator(self) -> Evaluator:
        """The configured evaluator (catalog, store, audit log)."""
        if self._evaluator is None:
            self._evaluator = self.config.build_evaluator()
        return self._evaluator

    def write(self, text: str) -> None:
        """``text`` on stdout as it is; :class:`OutputClosed` when stdout's reader is gone."""
        try:
            self.out.write(text)
        except BrokenPipeError as exc:
            raise OutputClosed(*exc.args) from None

    def print(self, text: str = "") -> None:
        """One line (or block) on stdout, redacted (:func:`forge_policy.secrets.redact`)."""
        from forge_policy.secrets import redact

        self.write(redact(text) + "\n")

    def print_json(self, value: object) -> None:
        """``value`` as indented JSON on stdout (``--json``), every string in it redacted."""
        from forge_policy.cli._format import dumps

        self.write(dumps(value) + "\n")

    def note(self, text: str) -> None:
        """A message for the user on stderr, redacted."""
        from forge_policy.secrets import redact

        self.err.write(f"forge-policy: {redact(text)}\n")
