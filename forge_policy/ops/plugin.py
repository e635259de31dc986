"""forge-policy as a Claude Code plugin: ``forge-policy init --plugin DIR`` writes the folder.

A Claude Code plugin is a folder a user installs (``claude --plugin-dir DIR``, ``/plugin
install``) or an organisation hosts in a marketplace (``.claude-plugin/marketplace.json``,
https://code.claude.com/docs/en/plugins/marketplace-reference). This one holds:

==================================  ============================================================
``.claude-plugin/plugin.json``      the manifest: ``name`` ``forge-policy``, ``version`` (this
                                    package's), ``description``, ``author``, ``license``,
                                    ``keywords`` (https://code.claude.com/docs/en/plugins/
                                    manifest-reference)
``hooks/hooks.json``                the hooks ``init`` registers in ``.claude/settings.json``,
                                    the same events, matchers, timeout and ``onFailure``
                                    (:func:`forge_policy.ops.init.command_handler`), each in
                                    exec form: ``command`` ``/bin/sh``, ``args``
                                    ``["${CLAUDE_PLUGIN_ROOT}/hooks/forge-policy-hook",
                                    "--event", EVENT]`` (:func:`argv`)
``hooks/forge-policy-hook``         the launcher (POSIX ``sh``, :func:`script`)
==================================  ============================================================

No file names a path of the machine that wrote it: Claude Code puts the plugin's folder in
``${CLAUDE_PLUGIN_ROOT}``, and the launcher finds forge-policy on the machine it runs on, first
found of:

1. the project's own launcher, ``$CLAUDE_PROJECT_DIR/.forge/bin/forge-policy-hook`` (``.forge``:
   ``$FORGE_ROOT`` when set), written by ``forge-policy init`` (:mod:`forge_policy.ops.launcher`):
   it runs ``$FORGE_POLICY``, this machine's recorded warm-worker client, else ``forge-policy``
   on ``PATH``, and refuses the call when none is there;
2. ``$FORGE_POLICY`` (a ``forge-policy`` executable);
3. ``forge-policy`` on ``PATH``.

With none it **fails closed** on ``PreToolUse`` (exit 2, which Claude Code reads as a refusal,
with a message on stderr naming how to install forge-policy; the entry's ``onFailure: "block"``
refuses too when Claude Code cannot start ``/bin/sh`` or ``/bin/sh`` cannot read the launcher);
``SessionStart`` lets the session start with a ``systemMessage`` telling the user that it is not
governed; the other events go ahead with the message on stderr (exit 1: a non-blocking error
Claude Code reports).

A project without ``.forge`` (never ``forge-policy init``-ed) is governed by the built-in catalog
at the default profile, as the hook governs any folder: its session state and audit log go to
``<project>/.forge/runtime`` and ``.forge/audit``, where every ``forge-policy`` command (``status``,
``audit``, ``explain``) finds them. So that they stay out of git, the launcher makes that
``.forge`` folder (not a ``$FORGE_ROOT`` of the user's) first, with a ``.gitignore`` naming the
per-machine files ``init`` would git-ignore (:func:`forge_policy.ops.init.per_machine`) and
itself: ``git status`` shows nothing.

The plugin and a project's own hook entries (``forge-policy init`` writes them into
``.claude/settings.json``) would both run: Claude Code merges plugin hooks with settings hooks,
and two different commands are not deduplicated, so every event would be decided, and counted,
twice. The launcher does not guess from the project's files which one should stand down (a
settings file Claude Code refuses to load would silence both): :func:`double_registration`
says so instead, in ``forge-policy doctor`` and ``init``.

>>> import tempfile, json
>>> folder = Path(tempfile.mkdtemp()) / "forge-policy"
>>> [a.verb for a in write(folder).actions]
['created', 'created', 'created', 'created']
>>> write(folder).changed
False
>>> json.loads((folder / MANIFEST).read_text())["name"]
'forge-policy'
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

from forge_policy.errors import SetupError
from forge_policy.ops import harness_config, launcher, settings_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from forge_policy.ops.init import Report

#: The plugin's name: its id is ``forge-policy@<marketplace>``, its hooks show as ``[Plugin]``.
NAME = "forge-policy"
#: The manifest, the hook file and the launcher, relative to the plugin folder.
MANIFEST = Path(".claude-plugin") / "plugin.json"
HOOKS = Path("hooks") / "hooks.json"
LAUNCHER = Path("hooks") / "forge-policy-hook"
README = Path("README.md")
#: The marketplace file ``--marketplace`` writes into the folder that holds the plugin's.
MARKETPLACE = Path(".claude-plugin") / "marketplace.json"
#: The marketplace's name when none is given.
DEFAULT_MARKETPLACE = "forge-policy-plugins"
#: What Claude Code puts in place of the plugin's folder in a plugin hook's command.
ROOT_REF = "${CLAUDE_PLUGIN_ROOT}"
DESCRIPTION = (
    "forge-policy governs what the agent does: every tool call, prompt and stop is decided by "
    "the project's behavior catalog (or the built-in one) before it runs; forge-policy must be "
    "installed on the machine (pipx install forge-policy)"
)
HOOKS_DESCRIPTION = "forge-policy decides each event (written by forge-policy init --plugin)"
#: The exit status of a launcher that finds no forge-policy on ``PreToolUse``: a refusal (the
#: project launcher's own).
NOT_FOUND = launcher.NOT_FOUND


#: The program that runs the plugin's launcher: the one its ``#!`` line names.
SHELL = "/bin/sh"


def argv(event: str) -> list[str]:
    """The hook of ``event`` in exec form, program then arguments (Claude Code substitutes
    ``${CLAUDE_PLUGIN_ROOT}`` in each and spawns them, no shell of the user's first): the
    launcher, run by :data:`SHELL` rather than by its executable bit, which a plugin install
    may lose (a zip or npm source, a copied folder): spawned directly, a launcher without it
    could not start, and ``onFailure: "block"`` would refuse every tool call.

    >>> argv("PreToolUse")
    ['/bin/sh', '${CLAUDE_PLUGIN_ROOT}/hooks/forge-policy-hook', '--event', 'PreToolUse']
    """
    return [SHELL, f"{ROOT_REF}/{LAUNCHER.as_posix()}", "--event", event]


def handlers() -> dict[str, dict[str, Any]]:
    """The plugin's handler per event: the ones ``init`` writes for Claude Code (its events,
    timeout, ``onFailure``, exec form: :func:`forge_policy.ops.init.command_handler`), run by
    the plugin's launcher (:func:`argv`)."""
    from forge_policy.ops import init

    return {
        event: init.command_handler(event=event, command=argv(event)[0], args=argv(event)[1:])
        for event in init.HOOK_EVENTS
    }


def manifest() -> dict[str, Any]:
    """``plugin.json``: the keys of Claude Code's manifest schema this plugin fills."""
    return {
        "name": NAME,
        "version": _version(),
        "description": DESCRIPTION,
        "author": {"name": "forge_policy developers"},
        "license": "MIT",
        "keywords": ["policy", "governance", "hooks", "security", "forge-policy"],
    }


def script() -> str:
    """The launcher's text (POSIX ``sh``): see the module docstring. The ``.gitignore`` it
    writes into a project's new ``.forge`` lists :func:`forge_policy.ops.init.per_machine`.

    >>> text = script()
    >>> "exit 2" in text and "runtime/" in text and "CLAUDE_PROJECT_DIR" in text
    True
    """
    from forge_policy.ops import init

    root = Path(".forge")
    ignored = " ".join(
        shlex.quote(p.relative_to(root).as_posix() + ("" if p.suffix == ".yaml" else "/"))
        for p in init.per_machine(Path("."), root)
    )
    ignored += " .gitignore"  # itself: the plugin leaves nothing for git status to show
    project_launcher = launcher.LAUNCHER.as_posix()
    return f"""\
#!/bin/sh
# forge-policy's Claude Code plugin launcher, written by `forge-policy init --plugin`. It runs
# this machine's forge-policy, first found of: the project's own launcher
# ($CLAUDE_PROJECT_DIR/.forge/{project_launcher}, written by `forge-policy init`), $FORGE_POLICY,
# `forge-policy` on PATH. Without any it refuses the tool call (PreToolUse: exit {NOT_FOUND}) and
# says how to install forge-policy; other events go ahead with that message.
event=
if [ "${{1:-}}" = --event ]; then
  event=${{2:-}}
  shift; [ "$#" -gt 0 ] && shift
fi
root=${{FORGE_ROOT:-.forge}}
case $root in
  /*) ;;
  "~"|"~/"*) root=${{HOME:-}}${{root#"~"}} ;;
  *) if [ -n "${{CLAUDE_PROJECT_DIR:-}}" ]; then root=$CLAUDE_PROJECT_DIR/$root; else root=; fi ;;
esac
if [ -n "$root" ] && [ -f "$root/{project_launcher}" ]; then
  exec sh "$root/{project_launcher}" "$@"
fi
program=
if [ -n "${{FORGE_POLICY:-}}" ]; then
  program=$FORGE_POLICY
elif command -v forge-policy >/dev/null 2>&1; then
  program=forge-policy
fi
if [ -n "$program" ]; then
  if [ -z "${{FORGE_ROOT:-}}" ] && [ -n "$root" ] && [ ! -e "$root" ] \
    && mkdir -p "$root" 2>/dev/null; then
    # a project forge-policy was never set up in: its state and audit log stay out of git
    printf '%s\\n' '# forge-policy: per-machine files (written by the forge-policy plugin)' \\
      {ignored} > "$root/.gitignore" 2>/dev/null
  fi
  exec "$program" hook "$@"
fi
why="forge-policy is not installed on this machine (no forge-policy on PATH, no \\
\\$FORGE_POLICY), so the forge-policy plugin cannot decide this call. Install it \\
(pipx install forge-policy, or set FORGE_POLICY to its path), then run: forge-policy doctor"
case $event in
  SessionStart)
    printf '{{"systemMessage":"%s %s"}}\\n' "$why" \\
      "This session is NOT governed: every tool call is refused."
    exit 0 ;;
  PostToolUse|UserPromptSubmit|Stop)
    echo "$why" >&2
    exit 1 ;;
esac
echo "$why The call is blocked." >&2
exit {NOT_FOUND}
"""


def readme() -> str:
    """The plugin's ``README.md``: what a marketplace shows and a reviewer reads."""
    return f"""\
# forge-policy for Claude Code

This plugin hands every Claude Code hook event (PreToolUse, PostToolUse, SessionStart,
UserPromptSubmit, Stop) to forge-policy, which decides it with the project's behavior catalog,
or the built-in one in a project that has none, and refuses what the catalog blocks.

forge-policy itself must be installed on the machine: `pipx install forge-policy`, or set
`FORGE_POLICY` to its path. A project set up with `forge-policy init` is run through its own
launcher (`.forge/bin/forge-policy-hook`). Without forge-policy every tool call is refused and the
session start says why.

Written by `forge-policy init --plugin` (forge-policy {_version()}); write it again to update it.
Check a machine with `forge-policy doctor`.
"""


def _version() -> str:
    from forge_policy import __version__

    return __version__


def is_ours(folder: Path) -> bool:
    """Whether ``folder`` holds a forge-policy plugin (its manifest names it)."""
    try:
        document = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(document, dict) and document.get("name") == NAME


def write(
    folder: Path,
    *,
    force: bool = False,
    marketplace: str | None = None,
    report: Report | None = None,
) -> Report:
    """Write (or bring up to date) the plugin in ``folder`` and return what was done.

    Idempotent: a second run changes nothing. A folder that exists, is not empty and is not a
    forge-policy plugin is refused (:class:`~forge_policy.errors.SetupError`) unless ``force``;
    ``hooks.json`` keeps every hook and key someone added, forge-policy's handlers are updated in
    place (:func:`forge_policy.ops.harness_config.merge`); a ``hooks.json`` that is not valid
    JSON is refused with its line unless ``force`` (then it is rewritten). ``marketplace``: also
    write ``.claude-plugin/marketplace.json`` of that name (``""``: its own, else
    :data:`DEFAULT_MARKETPLACE`) into ``folder``'s parent, listing the plugin. Everything is
    checked before anything is written.
    """
    from forge_policy.ops.init import Report

    report = Report() if report is None else report
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise SetupError(f"{settings_file.shown(folder)}: not a folder; nothing was changed")
    if folder.is_dir() and any(folder.iterdir()) and not is_ours(folder) and not force:
        raise SetupError(
            f"{settings_file.shown(folder)}: not empty and not a forge-policy plugin (no "
            f"{MANIFEST.as_posix()} naming {NAME}); choose an empty folder, or pass --force to "
            "write the plugin's files into it; nothing was changed"
        )
    hook_file = harness_config.spec("claude-code")
    hooks_path = folder / HOOKS
    # everything is read and checked before anything is written
    manifest_document = _merged_manifest(folder / MANIFEST, force)
    try:
        document, indent = settings_file.read(hooks_path, [("hooks", e) for e in hook_file.events])
        changed = harness_config.merge(document, hook_file, handlers(), hooks_path)
    except SetupError:
        if not force:
            raise
        document, indent = {}, "  "
        changed = harness_config.merge(document, hook_file, handlers(), hooks_path)
    if "description" not in document:
        document = {"description": HOOKS_DESCRIPTION, **document}
        changed = True
    market = None if marketplace is None else _marketplace(folder, marketplace)
    # the manifest first: a run cut short leaves a folder the next run knows as ours
    _write_json(folder / MANIFEST, manifest_document, report)
    if not changed and hooks_path.is_file():
        report.add("unchanged", hooks_path)
    else:
        existed = hooks_path.exists()
        settings_file.write(hooks_path, document, indent)
        report.add(
            "updated" if existed else "created",
            hooks_path,
            "hooks on " + ", ".join(hook_file.events),
        )
    _write_text(folder / LAUNCHER, script(), 0o755, report, "the launcher")
    _write_text(folder / README, readme(), 0o644, report)
    if market is not None:
        _write_json(*market, report)
    return report


def _merged_manifest(path: Path, force: bool) -> dict[str, Any]:
    """Ours over the manifest in ``path``: keys someone added (``homepage``, ``repository``)
    are kept."""
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except OSError:
        old = {}
    except ValueError as exc:
        if not force:
            raise SetupError(
                f"{settings_file.shown(path)}: not valid JSON ({exc}); fix it or pass --force; "
                "nothing was changed"
            ) from None
        old = {}
    return {**(old if isinstance(old, dict) else {}), **manifest()}


def marketplace_document(name: str, plugin: str) -> dict[str, Any]:
    """``marketplace.json`` listing the plugin at ``./plugin`` (a folder beside the file's
    ``.claude-plugin``).

    >>> marketplace_document("acme-tools", "forge-policy")["plugins"][0]["source"]
    './forge-policy'
    """
    return {
        "name": name,
        "owner": {"name": name},
        "metadata": {"description": "The forge-policy plugin for Claude Code"},
        "plugins": [
            {
                "name": NAME,
                "source": f"./{plugin}",
                "description": DESCRIPTION,
                "version": _version(),
            }
        ],
    }


def _marketplace(folder: Path, name: str) -> tuple[Path, dict[str, Any]]:
    """``marketplace.json`` in ``folder``'s parent and what it should hold: our entry replaced,
    every other plugin entry and key kept. ``name`` ``""``: the file's own name, else
    :data:`DEFAULT_MARKETPLACE`; a name that is not a marketplace's, another name than the
    file's, or a file that is not a marketplace is refused
    (:class:`~forge_policy.errors.SetupError`)."""
    if any(c in name for c in " /\\") or name in (".", ".."):
        raise SetupError(
            f"--marketplace: {name!r} is not a marketplace name (kebab-case, no spaces or "
            "slashes); nothing was changed"
        )
    path = Path(folder).absolute().parent / MARKETPLACE
    try:
        old: Any = json.loads(path.read_text(encoding="utf-8"))
    except OSError:
        old = None
    except ValueError as exc:
        raise SetupError(
            f"{settings_file.shown(path)}: not valid JSON ({exc}); nothing was changed"
        ) from None
    if old is not None and (not isinstance(old, dict) or not isinstance(old.get("plugins"), list)):
        raise SetupError(
            f"{settings_file.shown(path)}: plugins: expected a list of plugin entries; nothing "
            "was changed"
        )
    current = old.get("name") if isinstance(old, dict) else None
    if not name:
        name = current if isinstance(current, str) and current else DEFAULT_MARKETPLACE
    elif current is not None and current != name:
        raise SetupError(
            f"{settings_file.shown(path)}: the marketplace there is {current!r}, not {name!r}; "
            "nothing was changed"
        )
    ours = marketplace_document(name, Path(folder).absolute().name)
    if old is None:
        return path, ours
    entries = [p for p in old["plugins"] if not (isinstance(p, dict) and p.get("name") == NAME)]
    document = {**ours, **{k: v for k, v in old.items() if k != "plugins"}}
    document["plugins"] = [*entries, *ours["plugins"]]
    return path, document


def _write_json(path: Path, document: dict[str, Any], report: Report) -> None:
    _write_text(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n", 0o644, report)


def _write_text(path: Path, text: str, mode: int, report: Report, detail: str = "") -> None:
    try:
        same = path.read_text(encoding="utf-8") == text and (path.stat().st_mode & 0o777) == mode
    except OSError:
        same = False
    if same:
        report.add("unchanged", path)
        return
    existed = path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    tmp.chmod(mode)
    os.replace(tmp, path)
    report.add("updated" if existed else "created", path, detail)


# -- the plugin beside a project's own hook ---------------------------------------------------


def settings_files(project: Path, environ: Mapping[str, str]) -> list[Path]:
    """The Claude Code settings files whose ``enabledPlugins`` turn a plugin on for
    ``project``: the user's (``$CLAUDE_CONFIG_DIR/settings.json``, else
    ``~/.claude/settings.json``), the project's, the local one and the managed ones
    (https://code.claude.com/docs/en/settings, "Settings files")."""
    home = environ.get("HOME") or os.path.expanduser("~")
    config = environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    return [
        Path(config) / "settings.json",
        *(project / f for f in harness_config.files(harness_config.spec("claude-code"))),
        Path("/etc/claude-code/managed-settings.json"),
        Path("/Library/Application Support/ClaudeCode/managed-settings.json"),
    ]


def enabled_in(project: Path, environ: Mapping[str, str] | None = None) -> list[str]:
    """Where the forge-policy plugin is enabled for ``project``: ``file: id`` per
    ``enabledPlugins`` entry ``forge-policy@…`` set to ``true`` (an unreadable file counts as
    none; a session's ``--plugin-dir`` leaves no trace to read)."""
    env = os.environ if environ is None else environ
    found = []
    for path in settings_files(project, env):
        try:
            document, _ = settings_file.read(path)
        except (SetupError, OSError):
            continue
        enabled = document.get("enabledPlugins")
        if not isinstance(enabled, dict):
            continue
        found += [
            f"{settings_file.shown(path)}: {key}"
            for key, value in enabled.items()
            if isinstance(key, str) and key.split("@", 1)[0] == NAME and value is True
        ]
    return found


def double_registration(project: Path, environ: Mapping[str, str] | None = None) -> list[str]:
    """A warning when the forge-policy plugin is enabled for ``project`` and the project's
    Claude Code settings register forge-policy's hook too: both run, so each event is decided
    and counted twice.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> double_registration(folder, {"HOME": str(folder)})
    []
    """
    hooked = harness_config.installed(project, "claude-code")
    if not hooked:
        return []
    enabled = enabled_in(project, environ)
    if not enabled:
        return []
    return [
        f"the forge-policy plugin is enabled ({'; '.join(enabled)}) and the project's Claude Code "
        f"settings register forge-policy's hook too (on {', '.join(hooked)}): Claude Code runs "
        "both, so each event is decided and counted twice; keep one: disable the plugin for this "
        'project ("enabledPlugins": {"forge-policy@…": false} in .claude/settings.json) or '
        "take the project's entries out (forge-policy uninstall)"
    ]
