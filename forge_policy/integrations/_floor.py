"""The enforcement floor an SDK adapter gives the shell tools it wraps (SPEC §13): an allowed
shell call's command, rewritten to run under forge_policy's own OS sandbox.

One rule for the three adapters, the same as the hook's: ``floor:`` in ``<FORGE_ROOT>/config.yaml``
chooses (:func:`forge_policy.floor.status.active_floor`): ``off`` leaves commands as they are,
``own`` rewrites them, ``harness`` (the default) leaves them to the harness's sandbox when it
holds and rewrites them otherwise. An SDK agent has no harness sandbox of its own except the
Claude Agent SDK's (it runs the Claude Code CLI); the adapter's ``floor=`` keyword (``"own"`` or
``"off"``) overrides the project's choice for that adapter.

The rewrite is :func:`forge_policy.floor.sandbox.command_for` over
:func:`forge_policy.floor.derive.floor_for` of the project. When the machine has no sandbox
(bubblewrap is not installed), a floor the project or the adapter asked for by name (``own``)
refuses the shell call (:class:`FloorUnavailable`: fail closed); the default (``harness``) lets
it run as it is, and the engine keeps deciding it.

>>> shell = ShellFloor("off", project="/p")
>>> shell.command("make test") is None
True
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    #: A command in, the command to run out (the same one when nothing is rewritten).
    Rewrite = Callable[[str], str]

#: What an adapter's ``floor=`` keyword takes (``None``: what the project config says).
CHOICES = ("own", "off")


class FloorUnavailable(RuntimeError):
    """The floor is asked for by name but this machine cannot hold it (no sandbox program)."""


class ShellFloor:
    """Which floor holds for one adapter's shell calls, and the rewritten command.

    ``floor``: ``"own"``, ``"off"`` or None (the project config's ``floor:``); ``project``: the
    project root the commands run in (None: given per call, else the working directory);
    ``forge_root``: the project's ``.forge`` (``FORGE_ROOT`` resolved as the hook does);
    ``harness``: the harness whose sandbox may hold (``claude-code`` for the Claude Agent SDK);
    ``sandbox_holds``: whether the harness sandbox holds, when the adapter knows (the SDK's
    ``sandbox`` option; None: its settings files say); ``environ``: ``HOME``, ``TMPDIR``,
    ``FORGE_ROOT`` (default :data:`os.environ`).
    """

    def __init__(
        self,
        floor: str | None = None,
        *,
        project: str | None = None,
        forge_root: str | None = None,
        harness: str = "",
        sandbox_holds: bool | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        if floor is not None and floor not in CHOICES:
            raise ValueError(f"floor: expected one of {', '.join(CHOICES)} or None, got {floor!r}")
        self.floor = floor
        self.project = project
        self.forge_root = forge_root
        self.harness = harness
        self.sandbox_holds = sandbox_holds
        self.environ = environ

    def _environ(self) -> Mapping[str, str]:
        return os.environ if self.environ is None else self.environ

    def _places(self, project: str | None) -> tuple[str, str]:
        """The project and its forge root (``FORGE_ROOT`` resolved against the project, as
        :meth:`forge_policy.Config.from_env` does)."""
        project = os.path.abspath(self.project or project or os.getcwd())
        if self.forge_root is not None:
            return project, os.path.abspath(self.forge_root)
        from forge_policy.config.env import Config

        env = dict(self._environ())
        env.pop("CLAUDE_PROJECT_DIR", None)  # the project is the adapter's, not the variable's
        return project, Config.from_env(env, cwd=project).root

    def mode(self, project: str | None = None) -> str:
        """``own`` (commands are rewritten), ``harness`` (the harness's sandbox holds) or
        ``off``; :class:`~forge_policy.floor.status.FloorConfigError` for a bad ``floor:``.
        Under ``floor: harness`` the adapter's ``sandbox_holds`` decides when it is known (the
        SDK's ``sandbox`` option is the CLI's highest settings layer), else the harness's
        settings files do (:func:`~forge_policy.floor.status.active_floor`)."""
        if self.floor is not None:
            return self.floor
        from forge_policy.floor.status import active_floor, configured_mode

        project, forge_root = self._places(project)
        if self.sandbox_holds is not None and configured_mode(forge_root) == "harness":
            return "harness" if self.sandbox_holds else "own"
        return active_floor(self.harness or "sdk", project, forge_root, self._environ())

    def command(self, command: str, project: str | None = None) -> str | None:
        """``command`` rewritten to run under the floor, or None to run it as it is (the floor
        is off, the harness's sandbox holds, or the machine has none and nobody asked for it
        by name); :class:`FloorUnavailable` when ``own`` was asked for and cannot hold."""
        from forge_policy.floor.derive import floor_for
        from forge_policy.floor.rewrite import method as best_method
        from forge_policy.floor.sandbox import command_for

        if self.mode(project) != "own":
            return None
        method = best_method(self._environ())
        if not method:
            if self.floor == "own" or self._configured(project) == "own":
                raise FloorUnavailable(
                    "the floor is 'own' but no sandbox (bubblewrap, Landlock) works on this "
                    "machine, so this shell call cannot be sandboxed and is refused"
                )
            return None
        project, _ = self._places(project)
        return command_for(floor_for(project, self._environ()), command, method)

    def _configured(self, project: str | None) -> str:
        from forge_policy.floor.status import configured_mode

        return configured_mode(self._places(project)[1])


def rewrite_argument(value: object, rewrite: Rewrite) -> object:
    """A shell tool's command argument with every command rewritten: a string, or a list of
    strings (LangChain's ``ShellTool`` takes either); anything else is returned as it is."""
    if isinstance(value, str):
        return rewrite(value)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [rewrite(item) for item in value]
    return value
