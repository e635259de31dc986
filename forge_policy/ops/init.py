"""Project setup behind ``forge-policy init`` and the project-scoped ``on|off|strict|relaxed``.

``init`` makes ``<FORGE_ROOT>/runtime/`` and ``<FORGE_ROOT>/audit/``, git-ignores the runtime
folder, and merges the hook into each harness's own config file (``.claude/settings.json``,
``.codex/hooks.json``, … — :mod:`forge_policy.ops.harness_config`): the harnesses asked for, else
the ones the project shows signs of, else Claude Code. Every step is idempotent: a second run
changes nothing. A config file keeps every key, hook and key order it had; forge-policy's own
handlers are updated in place, never duplicated (:mod:`forge_policy.ops.settings_file`).
The built-in catalog is used as is unless ``copy_catalog`` is asked for (or a project-scoped
command needs an editable copy).

>>> import tempfile, pathlib, json
>>> project = pathlib.Path(tempfile.mkdtemp())
>>> first = init(project, project / ".forge")
>>> [a.verb for a in first.actions][:2]
['created', 'created']
>>> init(project, project / ".forge").changed
False
>>> sorted(json.loads((project / ".claude/settings.json").read_text())["hooks"])
['PostToolUse', 'PreToolUse', 'SessionStart', 'Stop', 'UserPromptSubmit']
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

import attrs

from forge_policy.errors import SetupError
from forge_policy.harness import registry
from forge_policy.ops import floor_setup, harness_config, launcher, settings_file, statusline_config
from forge_policy.ops.launcher import executable
from forge_policy.serve import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    HOOK_PATH,
    SERVE_FILE,
    TOKEN_ENV,
    ensure_token,
    token_path,
    write_serve_config,
)
from forge_policy.worker.protocol import authenticates_peers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

#: The events ``init`` registers in Claude Code (see :data:`harness_config.SPECS`).
HOOK_EVENTS = harness_config.SPECS["claude-code"].events
#: Claude Code runs only command (and mcp_tool) hooks on these events, never http ones.
COMMAND_ONLY_EVENTS = frozenset({"SessionStart"})
HOOK_TIMEOUT = harness_config.HOOK_TIMEOUT
SETTINGS = harness_config.SPECS["claude-code"].path


@attrs.frozen(eq=False)
class Action:
    """One thing ``init`` did (or found already done): ``verb`` is ``created``, ``updated``,
    ``removed`` or ``unchanged``.

    >>> print(Action("created", ".forge/runtime"), Action("unchanged", "x", "already there"))
    created   .forge/runtime unchanged x: already there
    """

    verb: str
    path: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.verb:<9} {self.path}" + (f": {self.detail}" if self.detail else "")


@attrs.define(eq=False)
class Report:
    """The actions of one ``init`` run, in order.

    >>> report = Report()
    >>> report.add("unchanged", "a"); report.changed
    False
    >>> report.add("created", "b"); report.changed
    True
    """

    actions: list[Action] = attrs.Factory(list)
    #: What the user still has to do in a harness (trust a hook, …), one line each.
    notes: list[str] = attrs.Factory(list)
    #: ``(before, after)`` when the project's floor mode changed (the CLI audits it).
    floor_change: tuple[str, str] | None = None

    def add(self, verb: str, path: Path | str, detail: str = "") -> None:
        """Record one action; ``path`` is shown relative to the working directory when inside it."""
        self.actions.append(Action(verb, settings_file.shown(path), detail))

    @property
    def changed(self) -> bool:
        """Whether anything on disk changed."""
        return any(a.verb in ("created", "updated", "removed") for a in self.actions)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (``init --json``, ``uninstall --json``)."""
        return {
            "changed": self.changed,
            "actions": [{"verb": a.verb, "path": a.path, "detail": a.detail} for a in self.actions],
            "notes": list(self.notes),
        }


def client_command() -> str:
    """The warm-worker hook client (:func:`client_argv`), shell-quoted.

    >>> "-I -S" in client_command() and client_command().endswith("worker/launch.py")
    True
    """
    return shlex.join(client_argv())


def client_argv() -> list[str]:
    """The warm-worker hook client: this interpreter (the venv's, unresolved, so its packages are
    found) with ``-I -S`` on :mod:`forge_policy.worker.launch`'s file."""
    from forge_policy.worker import client

    launch = os.path.join(os.path.dirname(os.path.abspath(client.__file__)), "launch.py")
    return [os.path.abspath(sys.executable), "-I", "-S", launch]


def hook_argv(
    *, via_serve: bool = False, worker: bool = False, harness: str = "claude-code"
) -> list[str]:
    """The hook's program and arguments: the worker client, ``forge-policy hook --via-serve``
    or plain ``forge-policy hook``, with ``--harness NAME`` for any harness but Claude Code.

    >>> argv = hook_argv(worker=True, harness="codex")
    >>> argv[-3].endswith("worker/launch.py"), argv[-2:]
    (True, ['--harness', 'codex'])
    """
    if worker and not via_serve:
        argv = client_argv()
    else:
        argv = [*launcher.executable_argv(), "hook"] + (["--via-serve"] if via_serve else [])
    return argv + ([] if harness == "claude-code" else ["--harness", harness])


def hook_command(
    *, via_serve: bool = False, worker: bool = False, harness: str = "claude-code"
) -> str:
    """The hook's command line (:func:`hook_argv`, shell-quoted).

    >>> hook_command(worker=True, harness="codex").endswith("worker/launch.py --harness codex")
    True
    """
    return shlex.join(hook_argv(via_serve=via_serve, worker=worker, harness=harness))


def command_handler(
    *,
    via_serve: bool = False,
    worker: bool = False,
    event: str = "",
    command: str | None = None,
    args: Sequence[str] = (),
) -> dict[str, Any]:
    """The Claude Code command hook ``init`` writes on ``event``, in exec form: ``command``
    spawned with the list ``args``, no shell (``command`` None: :func:`hook_argv`). On
    ``PreToolUse`` with ``onFailure: "block"``, so a hook that cannot start (a ``command``
    that is missing or not executable), crashes or times out refuses the call instead of
    letting it run (:attr:`harness_config.HookFile.fail_closed`).

    >>> command_handler(event="PreToolUse")["onFailure"], "onFailure" in command_handler()
    ('block', False)
    >>> command_handler(command="/x/forge-policy-hook", args=["--via-serve"])["args"]
    ['--via-serve']
    """
    if command is None:
        command, *args = hook_argv(via_serve=via_serve, worker=worker)
    handler = {"type": "command", "command": command, "args": list(args), "timeout": HOOK_TIMEOUT}
    return handler | harness_config.SPECS["claude-code"].closing(event)


def http_handler(
    host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *, event: str = ""
) -> dict[str, Any]:
    """The Claude Code http hook of ``init --serve --http-only`` on ``event`` (token from the
    environment; ``onFailure: "block"`` on ``PreToolUse`` as for :func:`command_handler`)."""
    handler = {
        "type": "http",
        "url": f"http://{host}:{port}{HOOK_PATH}",
        "headers": {"Authorization": f"Bearer ${TOKEN_ENV}"},
        "allowedEnvVars": [TOKEN_ENV],
        "timeout": HOOK_TIMEOUT,
    }
    return handler | harness_config.SPECS["claude-code"].closing(event)


#: The comment above the lines ``init`` adds to ``.gitignore``.
GITIGNORE_HEADER = "# forge-policy: per-machine files (state, locks, audit log, local config)"
OLD_GITIGNORE_HEADER = "# forge-policy: per-machine session state"


def per_machine(project: Path, root: Path) -> list[Path]:
    """What ``init`` git-ignores below ``project``: the runtime folder (session state, locks,
    worker socket, the machine record of :mod:`forge_policy.ops.launcher`), the audit folder
    (``overrides.log`` and its lock: a hash-chained log of this machine's decisions, which two
    clones cannot merge; a team shares an audit store instead, ``FORGE_STORE=postgresql://…``)
    and ``config.local.yaml`` (this machine's configuration layer)."""
    return [root / "runtime", root / "audit", root / "config.local.yaml"]


def ensure_gitignored(project: Path, target: Path, *, folder: bool = True) -> str | None:
    """Add ``target`` (a folder below ``project``, else a file with ``folder=False``) to
    ``project/.gitignore`` unless it (or a parent) is listed; returns the entry written, or None
    when nothing was needed."""
    relative = os.path.relpath(target.absolute(), project.absolute()).replace(os.sep, "/")
    if relative.startswith(".."):
        return None
    parts = relative.split("/")
    covered = {
        variant
        for depth in range(1, len(parts) + 1)
        for base in ["/".join(parts[:depth])]
        for variant in (base, base + "/", "/" + base, "/" + base + "/")
    }
    path = project / ".gitignore"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    lines = [line.strip() for line in text.splitlines()]
    if any(line in covered for line in lines):
        return None
    entry = relative + "/" if folder else relative
    prefix = "" if not text or text.endswith("\n") else "\n"
    header = (
        ""
        if GITIGNORE_HEADER in lines or OLD_GITIGNORE_HEADER in lines
        else GITIGNORE_HEADER + "\n"
    )
    with path.open("a", encoding="utf-8") as file:
        file.write(f"{prefix}{header}{entry}\n")
    return entry


def copy_builtin_catalog(root: Path) -> Path | None:
    """Copy the built-in catalog to ``<root>/behaviors`` unless it has an ``index.yaml``.

    Returns the folder when it was created, None when a catalog was already there.
    """
    from forge_policy.catalog.loader import BUILTIN_DIR, INDEX_FILE

    target = root / "behaviors"
    if (target / INDEX_FILE).exists():
        return None
    shutil.copytree(
        BUILTIN_DIR,
        target,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("__pycache__", "*.py", "*.pyc"),
    )
    _point_at_schema(target)
    return target


def _point_at_schema(catalog: Path) -> None:
    """Copy the behavior JSON Schema into ``catalog`` and make each behavior file name it, so
    an editor with yaml-language-server checks and completes them (the copy keeps working
    when forge-policy moves or is upgraded)."""
    from forge_policy.catalog.json_schema import SCHEMA_FILE, SCHEMA_NAME, add_modeline
    from forge_policy.catalog.loader import BEHAVIOR_FILE

    shutil.copyfile(SCHEMA_FILE, catalog / SCHEMA_NAME)
    for behavior in sorted(catalog.glob(f"*/{BEHAVIOR_FILE}")):
        add_modeline(behavior, f"../{SCHEMA_NAME}")


def chosen_harnesses(project: Path, harnesses: Sequence[str] | None = None) -> list[str]:
    """The harnesses ``init`` sets up: the ones named (each once, unknown names refused),
    else the ones the project shows signs of, else Claude Code."""
    if harnesses:
        for name in harnesses:
            try:
                registry.get(name)
            except KeyError as exc:
                raise SetupError(str(exc.args[0])) from None
        return list(dict.fromkeys(harnesses))
    return harness_config.detect(project) or ["claude-code"]


def init(
    project: Path,
    root: Path,
    *,
    serve: bool = False,
    http_only: bool = False,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    copy_catalog: bool = False,
    worker: bool = True,
    harnesses: Sequence[str] | None = None,
    floor: str = "harness",
    sandbox_settings: str = "project",
    environ: Mapping[str, str] | None = None,
    where: str | None = None,
    statusline: str | None = None,
) -> Report:
    """Set a project up for forge-policy (see the module docstring); returns what was done.

    With ``serve`` the hook asks a running ``forge-policy serve`` and evaluates in-process when
    it does not answer (``hook --via-serve``); ``http_only`` writes Claude Code http hooks
    instead, which let every call through while the server is down (the other harnesses keep
    the command hook; the ``PreToolUse`` entry says ``onFailure: "block"`` too, which Claude
    Code honours from v2.1.295 on). Otherwise the hook is the warm-worker client (``worker``,
    where the system names a socket's peer:
    :func:`forge_policy.worker.protocol.authenticates_peers`), else plain ``forge-policy hook``.
    ``harnesses``: :func:`chosen_harnesses`. ``floor`` (``harness``, ``own`` or ``off``) and
    ``sandbox_settings`` (``project`` or ``local``): :mod:`forge_policy.ops.floor_setup`, with
    ``environ``'s ``HOME`` and ``TMPDIR`` (default: this process's). Every config file is
    checked before anything is written: a broken one stops the run with nothing changed.

    ``where``: ``shared`` writes a portable command into each harness's committed settings
    file (the project's launcher, :mod:`forge_policy.ops.launcher`), ``local`` writes this
    machine's command into the harness's per-machine file where it has one (Claude Code's
    ``.claude/settings.local.json``, git-ignored) and takes forge-policy's entries out of the
    shared one; ``None`` keeps the choice the project shows (local when only the local file
    holds forge-policy's hook), else ``shared``. Either way the other file loses forge-policy's
    entries: a harness merges both files and would run the hook twice.

    ``statusline`` (``add`` or ``replace``, :mod:`forge_policy.ops.statusline_config`): Claude
    Code's ``statusLine`` runs ``forge-policy statusline`` from the file the hook goes to;
    ``add`` keeps a status line of the user's (and says how to replace it). ``None`` refreshes
    forge-policy's where the project already has it, and adds none.
    """
    if where not in (None, "shared", "local"):
        raise SetupError(f"init: where must be shared or local, not {where!r}")
    if statusline not in (None, *statusline_config.MODES):
        raise SetupError(f"init: statusline must be add or replace, not {statusline!r}")
    chosen = chosen_harnesses(project, harnesses)
    for name in chosen:  # refuse a broken file before touching anything
        _check(project, name)
    for claude_file in harness_config.files(harness_config.spec("claude-code")):
        if statusline is not None:  # the status line's files too
            settings_file.read(project / claude_file)
    env = os.environ if environ is None else environ
    floor_setup.plan(project, root, chosen, floor, env, where=sandbox_settings)  # checks only
    report = Report()
    for folder in (root, root / "runtime", root / "audit"):
        if folder.is_dir():
            report.add("unchanged", folder)
        else:
            folder.mkdir(parents=True, exist_ok=True)
            report.add("created", folder)
    if copy_catalog:
        copied = copy_builtin_catalog(root)
        if copied is None:
            report.add("unchanged", root / "behaviors", "a project catalog is already there")
        else:
            report.add("created", copied, "a copy of the built-in catalog, yours to edit")
    ignored = [
        entry
        for target in per_machine(project, root)
        for entry in [ensure_gitignored(project, target, folder=target.suffix != ".yaml")]
        if entry is not None
    ]
    if ignored:
        report.add("updated", project / ".gitignore", f"ignores {', '.join(ignored)}")
    else:
        report.add("unchanged", project / ".gitignore")
    if serve:
        token = token_path(root)
        report.add("created" if ensure_token(root) else "unchanged", token, "mode 0600")
        mode = "http" if http_only else "via-serve"
        if write_serve_config(root, host=host, port=port, mode=mode):
            report.add("updated", root / "runtime" / SERVE_FILE, f"{host}:{port}, {mode}")
    elif (root / "runtime" / SERVE_FILE).exists():
        (root / "runtime" / SERVE_FILE).unlink()
        report.add("removed", root / "runtime" / SERVE_FILE, "serve mode is off")
    warm = worker and authenticates_peers()  # the client checks who the worker is
    place = _placement(project, where)
    relative = launcher.relative(project, root)
    if relative is not None:
        if launcher.write(root):
            report.add("created", launcher.path(root), "the hook launcher: commit it")
        else:
            report.add("unchanged", launcher.path(root))
        recorded = (root / launcher.RECORD).exists()
        if launcher.record(root, worker=warm):
            verb = "updated" if recorded else "created"
            report.add(verb, root / launcher.RECORD, "this machine's forge-policy (git-ignored)")
    for name in chosen:
        hook_file = harness_config.spec(name)
        if name == harness_config.PLUGIN_HARNESS:
            _install_plugin(project, root, relative, report)
            continue
        local = place == "local" and hook_file.local is not None
        mine = local or relative is None  # this machine's command, else the launcher
        serving = " --via-serve" if serve else ""
        if name in launcher.EXEC_REFS:  # exec form: program and arguments, no shell reads them
            if mine:
                argv = hook_argv(via_serve=serve, worker=warm, harness=name)
            else:
                program, rest = launcher.exec_form(name, relative or "")
                argv = [program, *rest, *serving.split()]
        elif mine:
            command = hook_command(via_serve=serve, worker=warm, harness=name)
        else:
            prefix = launcher.git_prefix(project) if name == "codex" else ""
            command = launcher.command(name, relative or "", prefix) + serving
        if relative is None and not local:
            report.notes.append(
                f"{hook_file.path}: the forge root {settings_file.shown(root)} is outside the "
                "project, so the committed hook names this machine's forge-policy; keep the "
                "root inside the project (the default .forge) for a portable one"
            )
        if name == "claude-code":
            handlers = {
                event: (
                    http_handler(host, port, event=event)
                    if serve and http_only and event not in COMMAND_ONLY_EVENTS
                    else command_handler(event=event, command=argv[0], args=argv[1:])
                )
                for event in HOOK_EVENTS
            }
        else:
            handlers = {e: hook_file.handler(command, e) for e in hook_file.events}
        _install(project, name, handlers, report, local=local)
        if place == "local" and hook_file.local is None:
            report.notes.append(
                f"{registry.get(name).title} has no per-machine settings file: its hook stays in "
                f"{hook_file.path} as the portable launcher, which runs this machine's "
                "forge-policy"
            )
    _statusline(project, root, statusline, local=place == "local", worker=warm, report=report)
    if place == "local" and "claude-code" in chosen:
        local_file = harness_config.spec("claude-code").local
        entry = None
        if local_file is not None:
            entry = ensure_gitignored(project, project / local_file, folder=False)
        if entry is not None:
            report.add("updated", project / ".gitignore", f"ignores {entry}")
    # planned again: the hook entries just written are in the documents it merges into
    _apply_floor(
        project, floor_setup.plan(project, root, chosen, floor, env, where=sandbox_settings), report
    )
    _warn_doubles(project, chosen, report)
    return report


def _statusline(
    project: Path, root: Path, mode: str | None, *, local: bool, worker: bool, report: Report
) -> None:
    """Claude Code's ``statusLine`` (see :func:`init`): in the file the hook goes to, out of
    the other one (Claude Code would show the local file's)."""
    hook_file = harness_config.spec("claude-code")
    files = harness_config.files(hook_file)
    if mode is None:  # refresh ours where the project has it, add none
        if not any(statusline_config.configured(project / f) for f in files):
            return
        mode = "add"
    relative = launcher.relative(project, root)
    local = local and hook_file.local is not None
    if local or relative is None:  # this machine's command
        command = (client_command() if worker else executable()) + " statusline"
    else:
        command = launcher.command("claude-code", relative) + " statusline"
    path = project / (hook_file.local if local and hook_file.local else hook_file.path)
    verb, detail = statusline_config.install(path, command, replace=mode == "replace")
    if verb == "kept":
        report.add("unchanged", path, f"a statusLine of your own is kept: {detail}")
        report.notes.append(
            f"{settings_file.shown(path)}: its statusLine ({detail}) is not forge-policy's and "
            "was kept; to show forge-policy's instead run: forge-policy init --statusline=replace"
        )
        return
    report.add(verb, path, detail)
    for other in files:
        if project / other != path and statusline_config.remove(project / other):
            report.add(
                "updated", project / other, f"forge-policy's statusLine moved to {path.name}"
            )


def _placement(project: Path, where: str | None) -> str:
    """``shared`` or ``local`` (see :func:`init`'s ``where``)."""
    if where is not None:
        return where
    hook_file = harness_config.spec("claude-code")
    if hook_file.local is None:
        return "shared"
    in_shared = harness_config.ours_in(project / hook_file.path, hook_file)
    in_local = harness_config.ours_in(project / hook_file.local, hook_file)
    return "local" if in_local and not in_shared else "shared"


def _apply_floor(project: Path, plan: floor_setup.Plan, report: Report) -> None:
    """Write the floor's files (checked before anything was written) and say what changed."""
    for change in plan.changes:
        existed = change.path.exists()
        change.apply()
        what = "floor" if change.path.name == floor_setup.CONFIG else "sandbox from the floor"
        report.add("updated" if existed else "created", change.path, what)
    report.notes.extend(plan.notes)
    report.floor_change = plan.mode_change


def _check(project: Path, harness: str) -> None:
    if harness == harness_config.PLUGIN_HARNESS:
        from forge_policy.ops import opencode_plugin

        opencode_plugin.check(project)
        return
    hook_file = harness_config.spec(harness)
    lists = [(*hook_file.container, event) for event in hook_file.events]
    settings_file.read(project / hook_file.path, lists)
    if harness == "codex":
        harness_config.codex_toml(project)


def _install(
    project: Path,
    harness: str,
    handlers: dict[str, dict[str, Any]],
    report: Report,
    *,
    local: bool = False,
) -> None:
    hook_file = harness_config.spec(harness)
    path = project / (hook_file.local if local and hook_file.local else hook_file.path)
    if harness == "codex" and harness_config.codex_toml_hooks(project):  # no second copy
        where = harness_config.CODEX_TOML
        report.add("unchanged", project / where, "forge-policy's hook is in its [hooks]")
        return
    existed = path.exists()
    if harness_config.install(project, hook_file, handlers, local=local):
        verb = "updated" if existed else "created"
        report.add(verb, path, f"forge-policy hook on {', '.join(handlers)}")
        if hook_file.note:
            report.notes.append(f"{registry.get(harness).title}: {hook_file.note}")
    else:
        report.add("unchanged", path)
    for other in harness_config.files(hook_file):  # the harness would run both
        if project / other != path and harness_config.remove(project, hook_file, other):
            gone = "" if (project / other).exists() else " (the file held nothing else)"
            kind = "local" if local else "shared"
            report.add(
                "removed" if gone else "updated",
                project / other,
                f"forge-policy's hook moved to the {kind} file {settings_file.shown(path)}{gone}",
            )
    if harness == "codex" and "hooks" in harness_config.codex_toml(project):
        report.notes.append(
            f"Codex: {harness_config.CODEX_TOML} has [hooks] too; Codex runs both and warns "
            "at startup"
        )


def _install_plugin(project: Path, root: Path, relative: str | None, report: Report) -> None:
    """OpenCode's hook is forge-policy's plugin (:mod:`forge_policy.ops.opencode_plugin`),
    which runs the project's launcher (an absolute path when the forge root is outside the
    project); an older build's copy at ``.opencode/plugin/`` goes (OpenCode would load both)."""
    from forge_policy.ops import opencode_plugin

    hook_file = harness_config.spec(harness_config.PLUGIN_HARNESS)
    if relative is None:
        target = str(launcher.path(root).absolute())
        report.notes.append(
            f"{opencode_plugin.PLUGIN}: the forge root {settings_file.shown(root)} is outside the "
            "project, so the plugin names this machine's launcher; keep the root inside the "
            "project (the default .forge) for a portable one"
        )
        launcher.write(root)
        launcher.record(root, worker=sys.platform.startswith("linux"))
    else:
        target = relative
    verb = opencode_plugin.install(project, target)
    detail = "forge-policy's plugin on tool.execute.before, tool.execute.after: commit it"
    report.add(verb, project / opencode_plugin.PLUGIN, "" if verb == "unchanged" else detail)
    if verb != "unchanged":
        report.notes.append(f"{registry.get(hook_file.harness).title}: {hook_file.note}")
    if opencode_plugin.remove(project, opencode_plugin.OLD_PLUGIN):
        report.add("removed", project / opencode_plugin.OLD_PLUGIN, "moved to .opencode/plugins/")


def _warn_doubles(project: Path, chosen: Sequence[str], report: Report) -> None:
    """Harnesses that also run Claude Code's hooks would evaluate each call twice."""
    report.notes.extend(harness_config.double_hooks(project, chosen))
