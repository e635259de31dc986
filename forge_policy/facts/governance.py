"""Governance facts: what a tool call would change in forge-policy's own governance.

``facts.governance_changes`` lists, one string each (``"rm .forge/runtime"``, ``"Write
/p/.claude/settings.json"``, ``"forge-policy off"``), the changes an agent's tool call would make
to what governs it:

- files under a ``.forge`` folder anywhere, under ``$FORGE_ROOT``, ``$FORGE_BEHAVIORS_DIR``,
  the forge-policy plugin's ``$CLAUDE_PLUGIN_ROOT`` and a ``sqlite:`` store of ``$FORGE_STORE``
  when set, and the user-level cache
  (``$XDG_CACHE_HOME/forge-policy``, else ``~/.cache/forge-policy``): written, edited, moved,
  deleted, truncated, re-permissioned or linked over; also through a symlink, a glob
  (``.f*``) or ``cd``, and a recursive ``rm`` or an ``mv`` of a folder that holds them;
- the harness settings that install the hook (``.claude/settings.json`` and
  ``.claude/settings.local.json``, and each other harness's hook file:
  :func:`forge_policy.harness.registry.hook_files`; the project's and the user's): any shell
  command that writes them, and a Write, Edit or MultiEdit whose result drops or changes a
  ``forge-policy`` hook entry, switches hooks off (``disableAllHooks``, Gemini CLI's
  ``hooksConfig.enabled: false`` or ``hooks.disabled``, a named hook's ``enabled: false``,
  Codex's ``[features] hooks = false``) or changes a ``FORGE_*``/``DISABLE_*`` variable of
  ``env``. An edit that keeps all of that (permissions, another hook) is not a change: the
  current file is at most 1 MiB and JSON (TOML for Codex's ``config.toml``), so the check is
  cheap and exact;
- what else controls the hook (:mod:`forge_policy.facts.controls`): the engine's installation,
  managed settings and forge-policy's configuration layers, git hooks and the git configuration
  keys that run code (``git config``, and a Write/Edit of a configuration file judged by those
  keys), git removing or rewriting ``.forge`` (``stash -u/-a``, ``clean -f``, checkouts,
  ``reset --hard``, ``worktree remove --force``: git is asked what it would remove), the
  engine's processes (``kill``, ``pkill``, ``fuser -k``) and locks (``flock``); links the call
  makes are followed in command order, and a hard link to a guarded file is that file;
- a shell call that asks to leave the harness's sandbox (Claude Code's ``dangerouslyDisableSandbox:
  true``): the floor (SPEC §13) is turned off by the project, never by the agent;
- ``forge-policy`` commands that change governance: ``off``, ``on``, ``strict``, ``relaxed``,
  ``override``, ``purge``, ``init``, ``hook`` and ``serve`` (they would record events the agent
  wrote), ``worker stop`` and ``git install``, by any spelling: also as ``python -m
  forge_policy``, through ``uvx``/``pipx run``/``uv run``, run by another program (``script
  -qc``, ``setsid``, ``watch``), from interpreter code that imports ``forge_policy`` and calls
  it, through a copy or link of the entry point, ``$(command -v forge-policy)``; and a command
  the command model could not read in full whose text names the engine. Reading commands
  (``status``, ``explain``, ``validate``, ``audit``, ``list``, ``describe``, ``--help``) are
  not changes.

Other tools whose name says they write (``write_file``, ``replace``, an MCP server's
``move_file`` …) are checked on their path arguments (``path``, ``source``, ``destination`` …).
Shell commands are read with :mod:`forge_policy.commands` (wrappers, ``sh -c``, ``$(…)``,
here-documents fed to a shell, ``xargs`` fed by ``echo``): redirections (``>``, ``>>``, ``&>``),
``rm``, ``rmdir``, ``unlink``, ``shred``, ``mv``, ``cp``/``install``/``rsync``/``ln``
destinations, ``tee``, ``truncate``, ``touch``, ``mkdir``, ``chmod``, ``chown``, ``chgrp``,
``chattr``, ``setfacl``, ``dd of=``, ``sed -i``, ``perl -i``, ``find … -delete``/``-exec``,
``git rm``/``mv``/``checkout``/``restore``, and interpreter one-liners (``python
-c``, ``node -e``, ``perl -e``, ``ruby -e``, a script on stdin) that name a governance path and
write, delete or run something. This is a reading of commands, not a sandbox: a program that
computes the path at run time is issue 11's command model, and beyond it the threat model's
container boundary.

>>> from forge_policy.model import Event
>>> def bash(command):
...     return Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": command},
...                  cwd="/p")
>>> provide_governance_changes(bash("cat .forge/audit/overrides.log; forge-policy status"))
[]
>>> provide_governance_changes(bash("echo x > .forge/behaviors/index.yaml && forge-policy off a"))
['> /p/.forge/behaviors/index.yaml', 'forge-policy off']
"""

from __future__ import annotations

import functools
import os
import re
from fnmatch import fnmatchcase
from itertools import pairwise

from forge_policy._budget import read_outside
from forge_policy._lazy import lazy_pattern
from forge_policy.facts import controls
from forge_policy.facts._io import event_commands, event_cwd, read_bounded
from forge_policy.facts._patches import event_patches
from forge_policy.facts._runtime import truncated
from forge_policy.facts.commands import command_runs, command_words, kept_value
from forge_policy.harness.registry import hook_files
from forge_policy.values import Unknown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from forge_policy.commands import Command
    from forge_policy.model import Event

#: The forge-policy commands that change governance (``worker`` and ``git`` by subcommand).
GOVERNANCE_COMMANDS = frozenset(
    {"off", "on", "strict", "relaxed", "override", "purge", "init", "uninstall", "hook", "serve"}
)
GOVERNANCE_SUBCOMMANDS = {
    "worker": frozenset({"stop"}),
    "git": frozenset({"install"}),
    "config": frozenset({"unfork"}),  # --apply moves the catalog: the dry run is refused too
}
SETTINGS_FILES = ("settings.json", "settings.local.json")
#: the tools that write the file one argument names, and that argument (the floor reads it too)
PATH_TOOLS = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
#: other tools that write on a path (other harnesses, MCP servers: ``write_file``, ``replace``,
#: ``mcp__filesystem__move_file``…), by name; their path-like arguments are checked
_WRITER_WORDS = ("write", "edit", "replace", "delete", "remove", "move", "rename", "patch",
                 "create", "copy")  # fmt: skip
_PATH_KEYS = ("file_path", "filePath", "notebook_path", "path", "paths", "source",
              "destination", "target_file", "file", "filename")  # fmt: skip
_MAX_PATHS = 4096
_MAX_SETTINGS_BYTES = 1 << 20
_GLOB = frozenset("*?[")
_OUTPUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
#: Claude Code's Bash input that asks to run one command outside its sandbox (honoured unless
#: ``sandbox.allowUnsandboxedCommands`` is false; the Agent SDK's ``BashInput``, 2026-08): leaving
#: the floor is the project's choice (SPEC §13), never the agent's.
LEAVE_SANDBOX = "dangerouslyDisableSandbox"

# commands by what they do to their operands
_DELETERS = frozenset({"rm", "rmdir", "unlink", "shred", "srm", "trash", "trash-put"})
_MODIFIERS = frozenset(
    {"tee", "truncate", "touch", "mkdir", "chmod", "chown", "chgrp", "chattr", "setfacl"}
)
_COPIERS = frozenset({"cp", "install", "rsync", "ln"})
_IN_PLACE = frozenset({"sed", "gsed", "perl"})
#: every program :func:`_targets` reads the operands of (interpreters aside): keep in step
_TARGETING = _DELETERS | _MODIFIERS | _COPIERS | _IN_PLACE | {"mv", "dd", "find", "git", "flock",
                                                             "xargs"}  # fmt: skip
_INTERPRETERS = frozenset(
    {"python", "pypy", "node", "nodejs", "deno", "bun", "perl", "ruby", "php", "lua", "Rscript",
     "osascript"}
)  # fmt: skip
_SCRIPT_FLAGS = frozenset({"-c", "-e", "-E", "-r", "eval", "--eval", "-p", "--print"})
# what a script must do, besides naming a governance path, to count as a change (compiled on
# first use: most hooks never read a script)
_WRITES = (
    r"(?i)open\s*\([^)]*,\s*['\"][rwab+]*[wax+]|write|unlink|remove|rmtree|rmdir|rename"
    r"|os\.replace|truncate|chmod|chown|symlink|makedirs|mkdir|shutil|\brm(?:sync)?\b|system"
    r"|popen|subprocess|spawn|\bexec|child_process|>|flock|lockf|fcntl"
)
_MARKERS = (".forge", "settings.json", "settings.local.json", "forge-policy", "forge_policy")
# option prefixes of `find` that end its list of starting points
_FIND_ACTIONS = frozenset({"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint"})
_RUNNERS = {"uvx": 1, "pipx": 2, "uv": 2, "poetry": 2, "pdm": 2, "hatch": 2, "pipenv": 2}
#: places a recursive delete of a folder above them does not count for: removing /etc or a
#: home folder is dangerous-commands' refusal, in its own words
_NOT_HELD = frozenset({"managed", "git-config"})
_GIT_VALUE_OPTS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})


def governance_roots(project: str, home: str, environ: Mapping[str, str]) -> list[str]:
    """The folders (and files) that are governance whole, for ``project``: ``$FORGE_ROOT``
    (``.forge``), ``$FORGE_BEHAVIORS_DIR``, a ``sqlite:`` ``$FORGE_STORE``, the user cache and
    configuration folders of forge-policy and ``$FORGE_MANAGED_DIR`` (relative values against
    ``project``), and ``$CLAUDE_PLUGIN_ROOT``: Claude Code sets it for a plugin's hooks, so
    when the hook runs from the forge-policy plugin (:mod:`forge_policy.ops.plugin`) its folder,
    launcher and ``hooks.json`` are governance too. The governance fact and the enforcement
    floor both read this list.

    >>> governance_roots("/p", "/h", {"FORGE_STORE": "sqlite:s.db"})
    ['/p/.forge', '/p/s.db', '/h/.cache/forge-policy', '/h/.config/forge-policy']
    """

    def place(value: str) -> str:
        if value == "~" or value.startswith("~/"):
            value = home + value[1:]
        return os.path.normpath(os.path.join(project, os.path.expanduser(value)))

    roots = [place(environ.get("FORGE_ROOT", "").strip() or ".forge")]
    behaviors = environ.get("FORGE_BEHAVIORS_DIR", "").strip()
    if behaviors:
        roots.append(place(behaviors))
    store = environ.get("FORGE_STORE", "").strip()
    if store.startswith("sqlite:") and len(store) > 7:
        roots.append(place(store[7:]))
    xdg = environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(home, ".cache")
    roots.append(os.path.join(os.path.normpath(xdg), "forge-policy"))
    # forge-policy's own configuration layers (SPEC §10) and the harnesses' managed settings
    config_home = environ.get("XDG_CONFIG_HOME", "").strip() or os.path.join(home, ".config")
    roots.append(os.path.join(os.path.normpath(config_home), "forge-policy"))
    managed = environ.get("FORGE_MANAGED_DIR", "").strip()
    if managed:
        roots.append(place(managed))
    plugin = environ.get("CLAUDE_PLUGIN_ROOT", "").strip()
    if os.path.isabs(plugin):  # the forge-policy plugin's folder, when it runs the hook
        roots.append(os.path.normpath(plugin))
    return list(dict.fromkeys(roots))


class _Places:
    """The governance locations for one event, and the questions asked about a path.

    What the environment decides (the variables, the governance roots, the installation, the
    git places) is read on first use, still within the one provider call: most calls ask
    about no path (``ls``, ``make``), and reading a dozen environment variables and resolving
    the roots was a third of this fact's cost on every one of them."""

    def __init__(self, event: Event, environ: Mapping[str, str]) -> None:
        self.cwd = event_cwd(event)
        self._environ = environ
        self._vars: dict[str, str] | None = None
        self._locations: list[tuple[str, str]] | None = None
        self._installation: controls.Installation | None = None
        self.paths = 0
        self._real_folders: dict[str, str] = {}
        #: links the call makes, in command order: link path → what it points at
        self.links: dict[str, str] = {}
        #: programs the call copies or links from a forge-policy entry point
        self.aliases: set[str] = set()
        self._guarded_inodes: set[tuple[int, int]] | None = None

    @property
    def vars(self) -> dict[str, str]:
        """The variables a command-line word may start with, as :meth:`absolute` expands them."""
        if self._vars is None:
            # every question about a path starts here: the environment and the file system
            # decide from now on, so the answer is not kept across calls (facts.commands)
            read_outside()
            environ, cwd = self._environ, self.cwd
            self._vars = {
                "FORGE_ROOT": environ.get("FORGE_ROOT", "").strip(),
                "CLAUDE_PROJECT_DIR": environ.get("CLAUDE_PROJECT_DIR", "").strip() or cwd,
                "CLAUDE_PLUGIN_ROOT": environ.get("CLAUDE_PLUGIN_ROOT", "").strip(),
                "PWD": cwd,
                "HOME": os.path.expanduser("~"),
            }
        return self._vars

    @property
    def project(self) -> str:
        return os.path.normpath(self.vars["CLAUDE_PROJECT_DIR"])

    @property
    def installation(self) -> controls.Installation:
        if self._installation is None:
            self._installation = controls.installation(self.vars["HOME"], self.project)
        return self._installation

    @property
    def locations(self) -> list[tuple[str, str]]:
        """(location, what it is), for "inside" and, for deletions, "holds"."""
        if self._locations is None:
            home, project = self.vars["HOME"], self.vars["CLAUDE_PROJECT_DIR"]
            roots = governance_roots(project, home, self._environ)
            locations = [(root, "governance") for root in roots]
            locations += _settings_files(self.project, home)
            # managed settings: the folders and what is inside them; `rm -rf /etc` is another
            # behavior's refusal, in its own words (as `rm -rf /` and `~` are)
            locations += [(folder, "managed") for folder in controls.MANAGED]
            hooks, configs = controls.git_places(self.project, home)
            locations += [(hook, "governance") for hook in hooks]
            locations += [(config, "git-config") for config in configs]
            self._locations = locations
        return self._locations

    def absolute(self, word: str, cwd: str) -> str:
        """A command-line word as a normalized absolute path (``~``, ``$HOME``, ``$FORGE_ROOT``,
        ``$CLAUDE_PROJECT_DIR``, ``$CLAUDE_PLUGIN_ROOT``, ``$PWD`` expanded)."""
        from forge_policy.commands import expand_path

        text = word[7:] if word.startswith("file://") else word
        for name, value in self.vars.items():
            if value:
                for prefix in (f"${{{name}}}", f"${name}"):
                    if text == prefix or text.startswith(prefix + "/"):
                        text = value + text[len(prefix) :]
                        break
        return os.path.normpath(os.path.join(cwd, expand_path(text)))

    def kind(
        self, path: str, *, holds: bool = False, real: bool = True, hard: bool = True
    ) -> str | None:
        """``governance`` or ``settings`` when ``path`` (absolute, maybe a glob) is, or is
        inside, a governance location (``holds``: or is a folder that contains one)."""
        home = self.vars["HOME"]
        if holds and path in ("/", "/*", home, f"{home}/*"):
            holds = False  # rm -rf / and ~ are dangerous-commands' refusal, with its own words
        if self.links:  # a link the call made earlier: what it points at (SPEC §6)
            linked = self.through_links(path)
            if linked != path:
                found = self.kind(linked, holds=holds, real=real)
                if found is not None:
                    return found
        if "$FORGE_" in path or "${FORGE_" in path:
            return "governance"  # a variable the hook could not expand: its name says enough
        parts = _parts(path)
        if _GLOB.isdisjoint(path):
            found = self._plain_kind(path, holds)
            if found is not None:
                return found
        elif (
            any(_matches(part, ".forge") for part in parts)
            or (len(parts) >= 3 and any(
                _matches(a, ".cache") and _matches(b, "forge-policy") for a, b in pairwise(parts)
            ))
        ):  # fmt: skip
            return "governance"
        elif (
            len(parts) >= 2
            and _matches(parts[-2], ".claude")
            and any(_matches(parts[-1], name) for name in SETTINGS_FILES)
        ):
            return "settings"
        elif "/.git/hooks/" in f"{path}/" or (
            _GLOB.isdisjoint(path.rpartition("/")[0]) and self.installation.guards(path, glob=True)
        ):
            return "installation" if "/.git/" not in path else "governance"
        else:
            for location, what in self.locations:
                where = _parts(location)
                if _covers(parts, where, inside=True) or (
                    holds and what not in _NOT_HELD and _covers(parts, where)
                ):
                    return what
        if real:
            # resolve the part before the first glob (a glob is matched by the shell later)
            glob_at = next((k for k, part in enumerate(parts) if _GLOB & set(part)), len(parts))
            head = "/".join(parts[:glob_at]) or "/"
            try:
                resolved = self._realpath(head)
            except (OSError, ValueError):
                return None
            if resolved is None:
                return None
            if resolved != head:
                rest = "/".join(parts[glob_at:])
                target = f"{resolved.rstrip('/')}/{rest}" if rest else resolved
                found = self.kind(target, holds=holds, real=False)
                if found is not None:
                    return found
            if hard and glob_at == len(parts) and self.hard_link(path):
                return "governance"
        return None

    def through_links(self, path: str) -> str:
        """``path`` with the links the call made before resolved (at most 16 hops)."""
        for _ in range(16):
            for link, target in self.links.items():
                if path == link or path.startswith(link + "/"):
                    path = os.path.normpath(target + path[len(link) :])
                    break
            else:
                return path
        return path

    def hard_link(self, path: str) -> bool:
        """Whether ``path`` is a hard link to a guarded file (same device and inode): a file
        with more than one name is looked up among the governance files (walked once)."""
        try:
            st = os.lstat(path)
        except (OSError, ValueError):
            return False
        if st.st_nlink < 2 or st.st_mode & 0o170000 != 0o100000:
            return False
        if self._guarded_inodes is None:
            self._guarded_inodes = _inodes(self)
        return (st.st_dev, st.st_ino) in self._guarded_inodes

    def _plain_kind(self, path: str, holds: bool) -> str | None:
        """:meth:`kind`'s questions for an absolute path without glob characters, asked of the
        text (the common case: no component-by-component pattern matching)."""
        probe = f"/{path}/"
        if "/.forge/" in probe or "/.cache/forge-policy/" in probe:
            return "governance"
        folder, _, name = path.rpartition("/")
        if name in SETTINGS_FILES and folder.rpartition("/")[2] == ".claude":
            return "settings"
        if "/.git/hooks/" in probe:
            return "governance"
        if name in ("config", "config.worktree") and folder.endswith("/.git"):
            return "git-config"
        inner = path.rstrip("/") + "/"
        for location, what in self.locations:
            if path == location or path.startswith(location.rstrip("/") + "/"):
                return what
            if holds and what not in _NOT_HELD and location.startswith(inner):
                return what
        if self.installation.guards(path) or (holds and self.installation.holds(inner)):
            return "installation"
        return None

    def _realpath(self, path: str) -> str | None:
        """``os.path.realpath``, with each folder resolved once per event: a path whose last
        part is no symlink resolves to its resolved folder joined with that part (one
        ``lstat``), which keeps many paths in one folder (``rm -rf build/1 … build/9999``)
        cheap. None past :data:`_MAX_PATHS` full resolutions (the fact is then incomplete)."""
        folder, name = os.path.split(path)
        link = not name or os.path.islink(path)
        real = None if link else self._real_folders.get(folder)
        if real is None:
            self.paths += 1
            if self.paths > _MAX_PATHS:
                truncated(f"more than {_MAX_PATHS} paths: symlinks were not resolved")
                return None
            if link:
                return os.path.realpath(path)
            real = self._real_folders[folder] = os.path.realpath(folder)
        return os.path.join(real, name)


def _inodes(places: _Places) -> set[tuple[int, int]]:
    """(device, inode) of the guarded files that exist: the governance folders (at most 4,096
    files), the settings and git configuration files, the installation's own files."""
    files: list[str] = []
    for location, _what in places.locations:
        if os.path.isdir(location):
            for folder, _dirs, names in os.walk(location):
                files += [os.path.join(folder, n) for n in names]
                if len(files) > _MAX_PATHS:
                    break
        else:
            files.append(location)
    files += places.installation.samples()
    found: set[tuple[int, int]] = set()
    for file in files[: 2 * _MAX_PATHS]:
        try:
            st = os.stat(file)
        except (OSError, ValueError):
            continue
        found.add((st.st_dev, st.st_ino))
    return found


def _matches(name: str, wanted: str) -> bool:
    """Whether path component ``name`` (maybe a glob) names ``wanted`` (a glob's ``*`` does
    not match a leading dot, as in the shell)."""
    if not _GLOB & set(name):
        return name == wanted
    if wanted.startswith(".") and not name.startswith("."):
        return False
    return fnmatchcase(wanted, name)


def _parts(path: str) -> list[str]:
    return [""] if path == "/" else path.split("/")


def _covers(pattern: list[str], location: list[str], *, inside: bool = False) -> bool:
    """Whether the path ``pattern`` (components, maybe globs) names ``location`` or a path
    inside it (``inside``), else ``location`` or a folder that holds it."""
    if (len(pattern) < len(location)) if inside else (len(pattern) > len(location)):
        return False
    return all(_matches(p, name) for p, name in zip(pattern, location, strict=False))


# --- the provider -----------------------------------------------------------------------------


@functools.lru_cache(maxsize=16)
def _settings_files(project: str, home: str) -> tuple[tuple[str, str], ...]:
    """``(path, "settings")`` for the harness settings and hook files of the project and of the
    user (one tuple per project and home: every tool call asks)."""
    folders = dict.fromkeys((project, home))
    return tuple((os.path.join(f, path), "settings") for f in folders for path in hook_files())


def provide_governance_changes(event: Event) -> list[str]:
    """``facts.governance_changes``: the governance changes a tool call would make (module
    doc), as ``"WHAT TARGET"`` strings in first-seen order; empty when it makes none.

    A shell call that gives only its command (``ls -la``, ``make``) is answered from its text
    and directory: the answer is kept for the next such call (:func:`kept_value`) when it asked
    nothing of a path, the environment or the file system (each of those says so:
    :func:`~forge_policy._budget.read_outside`)."""
    if event.tool_name == "Bash" and _TEXT_ONLY.issuperset(event.tool_input):
        return kept_value("governance_changes", event, lambda: changes(event, os.environ))
    return changes(event, os.environ)


#: the Bash inputs that leave the answer to the command text (any other, such as
#: ``dangerouslyDisableSandbox`` or a ``patch``, is read afresh on every call)
_TEXT_ONLY = frozenset({"command", "description", "timeout", "run_in_background"})


def changes(event: Event, environ: Mapping[str, str]) -> list[str]:
    """:func:`provide_governance_changes` with an explicit environment."""
    places = _Places(event, environ)
    found: dict[str, None] = {}
    tool = event.tool_name
    key = PATH_TOOLS.get(tool)
    writer = key is None and _writer(tool)
    keys = (key,) if key is not None else _PATH_KEYS if writer else ()
    if event.tool_input.get(LEAVE_SANDBOX) is True:  # the floor is the project's to turn off
        found[f"{tool} {LEAVE_SANDBOX}: runs outside the harness's sandbox"] = None
    for name in keys:
        raw = event.tool_input.get(name)
        if type(raw) is Unknown:  # an MCP call's path that could not be read: fail closed
            truncated(f"the path could not be read: {raw.reason}")
            continue
        for value in raw if isinstance(raw, list) else [raw]:
            if not isinstance(value, str) or not value:
                continue
            path = places.absolute(value, places.cwd)
            what = places.kind(path, holds=key is None)
            if what == "settings" and key is not None:
                for why in _settings_changes(path, tool, event.tool_input):
                    found[f"{tool} {path}: {why}"] = None
            elif what is not None and not (
                what == "git-config" and _keeps_git_code(path, tool, event.tool_input)
            ):
                found[f"{tool} {path}"] = None
    # apply_patch (Codex's tool, or run by a shell command): every file it writes or deletes
    for verb, path, _written, edit in event_patches(event):
        what = places.kind(path, holds=verb == "apply_patch")
        if what == "settings":
            for why in _settings_changes(path, verb, {"file_path": path, **edit}):
                found.setdefault(f"{verb} {path}: {why}")
        elif what is not None:
            found.setdefault(f"{verb} {path}")
    for command in event_commands(event):
        # the command model is imported by a call that runs commands, not by a Read or a Write
        from forge_policy.commands import Command, simple_commands

        bare = [
            (argv, cmd, cwd)
            for argv, cmd, cwd in simple_commands(
                command, places.cwd, bare=True, read=command_words(event, command, places.cwd)[0]
            )
            if not argv  # only redirections: `> .forge/x`
        ]
        for argv, cmd, cwd in bare:
            for change in _command_changes(argv, cmd, cwd, places):
                found.setdefault(change)
        # every program, however reached (busybox, parallel, find -exec, D=.forge; rm -r $D)
        names_engine = "forge-policy" in command or "forge_policy" in command
        for run in command_runs(event, command, places.cwd):
            cmd = run.command or Command(list(run.words))
            for change in _command_changes(run.words, cmd, run.cwd or places.cwd, places):
                found.setdefault(change)
            for k in _lock_holders(cmd.words, run.words):  # `flock LOCK CMD` runs CMD: the
                # model reads CMD, and the lock it holds meanwhile is checked here
                for change in _command_changes(cmd.words[k:], cmd, run.cwd or places.cwd, places):
                    found.setdefault(change)
            if names_engine and (not run.complete or (run.words and _opaque(run.words[0]))):
                # a reading the command model could not complete, of a text naming the engine
                found.setdefault("forge-policy (in a command that could not be read in full)")
        if places.links:  # `ln -s .forge f; > f/x`: the redirections again, links known
            for argv, cmd, cwd in bare:
                for change in _command_changes(argv, cmd, cwd, places):
                    found.setdefault(change)
    return list(found)


@functools.lru_cache(maxsize=256)
def _writer(tool: str) -> bool:
    """Whether a tool's name says it writes (asked once per tool name)."""
    return any(word in tool.lower() for word in _WRITER_WORDS)


def _opaque(word: str) -> bool:
    return "$" in word or "`" in word


def _command_changes(argv: list[str], cmd: Command, cwd: str, places: _Places) -> list[str]:
    from forge_policy.commands import basename, runs

    out: list[str] = []
    for redirect in cmd.redirects:
        if redirect.op in _OUTPUT_OPS and redirect.target:
            path = places.absolute(redirect.target, cwd)
            if places.kind(path):
                out.append(f"> {path}")
    if not argv:
        return out
    name = basename(argv[0])
    forge = _forge_policy_command(argv, places)
    if forge:
        out.append(forge)
        return out
    if name not in _DATA_PROGRAMS and (
        places.aliases or places.links or any("forge" in word for word in argv[1:])
    ):
        # a program that runs another one given as its arguments (watch, setsid, flock FILE,
        # timeout…), or a command line in one word (script -qc '…', su -c '…')
        for k in range(1, len(argv)):
            forge = _forge_policy_command(argv[k:], places, read=False)
            if not forge and (" " in argv[k] or ";" in argv[k]) and _ENGINE_WORD().search(argv[k]):
                forge = next(
                    (
                        f
                        for r in runs(argv[k], cwd)
                        if (f := _forge_policy_command(r.words, places))
                    ),
                    "",
                )
            if forge:
                out.append(f"{forge} (run by {name})")
                return out
    if controls.kills_engine(name, argv[1:]):
        out.append(f"{name} forge-policy's processes")
    if _reinstalls_engine(name, argv):
        out.append(f"{name} (re)installing forge-policy")
    for verb, path in _targets(name, argv, cmd, cwd, places):
        out.append(f"{verb} {path}")
    _record_links(name, argv, cwd, places)
    return out


_PACKAGE_VERBS = frozenset({"install", "uninstall", "remove", "reinstall", "upgrade", "sync"})
_ENGINE_REQUIREMENT = lazy_pattern(r"(?i)^forge[-_.]policy(?:$|[\[=<>!~;@ ])")


def _reinstalls_engine(name: str, argv: list[str]) -> bool:
    """``pip uninstall forge-policy``, ``pip install -U forge_policy==…``, ``uv pip install
    forge-policy``, ``pipx reinstall forge-policy``, ``python -m pip …``: replacing the
    engine's own installation."""
    if not (name.startswith(("pip", "uv")) or _interpreter(name)):
        return False
    words = [w for w in argv[1:] if not w.startswith("-")]
    if _interpreter(name) and argv[1:3] != ["-m", "pip"]:
        return False
    verb = next((i for i, w in enumerate(words) if w in _PACKAGE_VERBS), None)
    return verb is not None and any(_ENGINE_REQUIREMENT().match(w) for w in words[verb + 1 :])


#: programs whose arguments are data, never a command they run
_DATA_PROGRAMS = frozenset({"echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "ack", "git",
                            "gh", "cat", "less", "more", "head", "tail", "jq", "sed", "awk",
                            "sort", "uniq", "wc", "diff", "ls", "find", "tee", "man", "which",
                            "type", "command", "pip", "npm", "curl", "wget"})  # fmt: skip
_ENGINE_WORD = lazy_pattern(r"forge[-_]policy")


def _record_links(name: str, argv: list[str], cwd: str, places: _Places) -> None:
    """Remember the links (``ln``, ``cp -s``/``-l``) and the copies of a forge-policy entry
    point this command makes, for the commands after it (SPEC §6: links in command order)."""
    if name not in ("ln", "cp"):
        return
    read_outside()  # a folder on disk decides where a link goes
    from forge_policy.commands import basename, expand_path, split_options

    options, operands = split_options(argv[1:])
    letters = "".join(o[1:] for o in options if not o.startswith("--"))
    linking = (
        name == "ln"
        or "s" in letters
        or "l" in letters
        or any(o in ("--symbolic-link", "--link") for o in options)
    )
    symbolic = "s" in letters or "--symbolic" in options or "--symbolic-link" in options
    target_dir = _target_directory(argv)
    if target_dir:
        pairs = [(src, os.path.join(target_dir[0], basename(src.rstrip("/")))) for src in operands]
    elif len(operands) == 1:
        pairs = [(operands[0], basename(operands[0].rstrip("/")) or operands[0])]
    elif len(operands) >= 2:
        last = operands[-1]
        no_deref = "n" in letters or "T" in letters or "--no-target-directory" in options
        into = last.endswith("/") or (
            (not no_deref and len(operands) > 2) or (not no_deref and os.path.isdir(
                places.absolute(last, cwd)))
        )  # fmt: skip
        pairs = [(src, os.path.join(last, basename(src.rstrip("/"))) if into else last)
                 for src in operands[:-1]]  # fmt: skip
    else:
        return
    for src, dest in pairs:
        link = places.absolute(dest, cwd)
        if _ENGINE_WORD().search(src):
            places.aliases.add(link)
        if not linking:
            continue
        if symbolic and name == "ln":  # a relative target is read from the link's folder
            target = os.path.normpath(os.path.join(os.path.dirname(link), expand_path(src)))
            if src.startswith(("~", "$")):
                target = places.absolute(src, cwd)
        else:
            target = places.absolute(src, cwd)
        places.links[link] = places.through_links(target)


def _targets(
    name: str, argv: list[str], cmd: Command, cwd: str, places: _Places
) -> list[tuple[str, str]]:
    """(verb, absolute path) for each governance path a command changes."""
    if name not in _TARGETING and not _interpreter(name):
        return []  # a program none of the branches below reads (ls, make, pytest…)
    read_outside()  # the branches ask the file system, git, the environment
    from forge_policy.commands import basename, split_options

    hits: list[tuple[str, str]] = []

    def check(
        words: list[str], *, holds: bool = False, verb: str = name, hard: bool = True
    ) -> None:
        for word in words:
            if word:
                path = places.absolute(word, cwd)
                if places.kind(path, holds=holds, hard=hard):
                    hits.append((verb, path))

    options, operands = split_options(argv[1:])
    if name in _DELETERS:
        recursive = name != "rm" or any(
            o in ("--recursive", "-d", "--dir") or (not o.startswith("--") and "r" in o.lower())
            for o in options
        )
        # removing one name of a hard-linked file leaves the file: `hard=False`
        check(operands, holds=recursive and name != "rmdir", hard=name in ("shred", "srm"))
    elif name == "mv":
        check(operands[:-1], holds=True, hard=False)
        check(operands[-1:], holds=True)
        if len(operands) > 1:  # into a folder: the names it gets there
            check([os.path.join(operands[-1], basename(o.rstrip("/"))) for o in operands[:-1]])
    elif name in _COPIERS:
        targets = _target_directory(argv)
        if targets:
            check(targets)
            check([os.path.join(targets[0], basename(o.rstrip("/"))) for o in operands])
        elif name == "ln" and len(operands) == 1:
            check([basename(operands[0].rstrip("/")) or operands[0]])
        elif operands:
            check(operands[-1:])
            if len(operands) > 1:  # into a folder: the names the copies get there (a copy
                into = operands[-1]  # of the governance itself, `cp -r .forge /tmp/b`, reads it)
                check([os.path.join(into, basename(o.rstrip("/"))) for o in operands[:-1]
                       if not places.kind(places.absolute(o, cwd), hard=False)])  # fmt: skip
        if name == "rsync" and "--remove-source-files" in options:
            check(operands[:-1], verb="rsync --remove-source-files")
    elif name in _MODIFIERS:
        check(operands)
    elif name == "dd":
        check([a[3:] for a in argv[1:] if a.startswith("of=")])
    elif name in _IN_PLACE and any(
        o.startswith("--in-place") or (not o.startswith("--") and "i" in o) for o in options
    ):
        check(_in_place_files(name, argv))
    elif name == "find":
        check(_find_roots(argv))
    elif name == "git":
        hits += _git_targets(argv, cwd, places)
    elif name == "flock":  # holding a lock of the engine makes the hook wait
        lock = next((w for w in operands if not w.isdigit()), "")
        check([lock], verb="flock")
    elif name == "xargs":
        hits += _xargs_targets(argv, cmd, cwd, places)
    elif _interpreter(name):
        script = _script(argv, cmd)
        if script is not None and _writes_governance(script, places):
            hits.append((f"{name} script writing", "governance files"))
    return hits


def _target_directory(argv: list[str]) -> list[str]:
    """The ``-t DIR`` / ``--target-directory=DIR`` of a copier."""
    for i, arg in enumerate(argv[1:], start=1):
        if arg in ("-t", "--target-directory") and i + 1 < len(argv):
            return [argv[i + 1]]
        if arg.startswith("--target-directory="):
            return [arg.partition("=")[2]]
        if arg.startswith("-t") and len(arg) > 2 and not arg.startswith("--"):
            return [arg[2:]]
    return []


def _in_place_files(name: str, argv: list[str]) -> list[str]:
    """The files ``sed -i`` / ``perl -i`` edit: the operands after the script."""
    files: list[str] = []
    script_given = False
    i = 1
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            files.extend(argv[i:])
            break
        short = arg.startswith("-") and not arg.startswith("--")
        if arg in ("-e", "-f", "--expression", "--file") or (
            name == "perl" and short and arg.endswith(("e", "E"))
        ):
            script_given = True
            i += 1  # the script, or the file that holds it
        elif arg.startswith(("--expression=", "--file=")):
            script_given = True
        elif not (arg.startswith("-") and arg != "-"):
            files.append(arg)
    return files if script_given else files[1:]


def _find_roots(argv: list[str]) -> list[str]:
    """The starting points of a ``find`` that deletes or runs something on what it finds."""
    if not any(a in _FIND_ACTIONS for a in argv):
        return []
    roots: list[str] = []
    for arg in argv[1:]:
        if arg.startswith(("-", "(", "!")) and arg not in ("-H", "-L", "-P"):
            break
        if arg not in ("-H", "-L", "-P"):
            roots.append(arg)
    return roots or ["."]


def _git_targets(argv: list[str], cwd: str, places: _Places) -> list[tuple[str, str]]:
    from forge_policy.commands import split_options

    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        if argv[i] == "-C" and i + 1 < len(argv):
            cwd = places.absolute(argv[i + 1], cwd)
        i += 2 if argv[i] in _GIT_VALUE_OPTS else 1
    if i >= len(argv):
        return []
    sub, rest = argv[i], argv[i + 1 :]
    options, operands = split_options(rest)
    hits: list[tuple[str, str]] = []
    if sub == "rm" and "--cached" in options:
        return []
    if sub in ("rm", "mv", "checkout", "restore"):
        recursive = sub == "mv" or any(o == "-r" or o.startswith("-r") for o in options)
        for word in operands:
            path = places.absolute(word, cwd)
            if places.kind(path, holds=recursive):
                hits.append((f"git {sub}", path))
    if sub == "config":
        hits += _git_config(rest)
    elif sub in ("stash", "clean", "checkout", "switch", "reset", "restore", "worktree"):
        hits += _git_removes(sub, rest, cwd, places)
    # git clean -x deletes .forge/runtime (git-ignored): a cache of the audit log, rebuilt
    # from it; no-destructive-git refuses git clean -f already
    return hits


#: ``git config`` options that take a value
_CONFIG_VALUED = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment",
                            "--value", "-t"})  # fmt: skip
_CONFIG_READS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color",
                           "--get-colorbool", "-l", "--list", "get", "list"})  # fmt: skip


def _git_config(rest: list[str]) -> list[tuple[str, str]]:
    """A ``git config`` that sets, unsets, edits or removes a key that makes git run a program
    (:func:`~forge_policy.facts.controls.code_key`): a hook that runs later, outside the hook."""
    words: list[str] = []
    flags: set[str] = set()
    i = 0
    while i < len(rest):
        word = rest[i]
        i += 1
        if word.startswith("-") and word != "-":
            flags.add(word.partition("=")[0])
            if word in _CONFIG_VALUED:
                i += 1
        else:
            words.append(word)
    action = ""
    if words and words[0] in ("get", "list", "set", "unset", "edit", "rename-section",
                              "remove-section"):  # fmt: skip
        action, words = words[0], words[1:]
    if flags & _CONFIG_READS or action in ("get", "list"):
        return []
    if action == "edit" or flags & {"-e", "--edit"}:
        return [("git config --edit", "the git configuration")]
    if action in ("rename-section", "remove-section") or flags & {
        "--rename-section",
        "--remove-section",
    }:
        section = words[0] if words else ""
        return [("git config", section)] if controls.code_section(section) else []
    if not words:
        return []
    key = words[0]
    unset = action == "unset" or any(f.startswith("--unset") for f in flags)
    if unset:
        return [("git config --unset", key)] if controls.code_key(key, None) else []
    if len(words) < 2:
        return []  # `git config KEY`: a read
    return [("git config", key)] if controls.code_key(key, words[1]) else []


def _git_removes(sub: str, rest: list[str], cwd: str, places: _Places) -> list[tuple[str, str]]:
    """Git commands that delete or rewrite governance files git does not track, or rewrite the
    tracked ones: ``stash -u/-a``, ``clean -f`` (``-x``/``-X``: ignored files too), a checkout,
    ``switch`` or ``reset --hard`` that changes them, ``worktree remove --force`` of a tree that
    holds them. Asks git where the answer depends on what it tracks (failing: yes)."""
    from forge_policy.commands import split_options

    if not cwd.startswith("/"):
        return []  # run on another machine (`ssh host 'git clean -fdx'`)
    options, operands = split_options(rest)
    letters = "".join(o[1:] for o in options if not o.startswith("--"))
    top = controls.git_top(cwd)
    if top is None:
        return []
    guarded = [
        location
        for location, what in places.locations
        if what in ("governance", "settings")
        and location.startswith(top + "/")
        and not location.startswith(top + "/.git/")
        and os.path.exists(location)
    ]
    if not guarded:
        return []

    def scope(default: list[str]) -> list[str]:
        spec = [places.absolute(w, cwd) for w in (operands or default)]
        return [g for g in guarded
                if any(g == p or g.startswith(p.rstrip("/") + "/") or p.startswith(g + "/")
                       for p in spec)]  # fmt: skip

    hits: list[tuple[str, str]] = []
    if sub == "stash":
        if operands and operands[0] in ("push", "save"):
            operands = operands[1:]
        elif operands:
            return []  # list, show, pop, apply, drop…
        every = "a" in letters or "--all" in options
        untracked_too = every or "u" in letters or "--include-untracked" in options
        for g in scope([top]):
            rel = os.path.relpath(g, top)
            if (untracked_too and controls.untracked(top, rel, ignored=every)) or controls.differs(
                top, rel
            ):
                hits.append((f"git stash {' '.join(options)}".rstrip(), g))
    elif sub == "clean":
        if "n" in letters or "--dry-run" in options or not ("f" in letters or "--force" in options):
            return []
        ignored = "x" in letters or "X" in letters
        for g in scope(["."]):
            rel = os.path.relpath(g, top)
            if controls.untracked(top, rel, ignored=ignored):
                hits.append((f"git clean {' '.join(options)}".rstrip(), g))
    elif sub == "reset":
        if "--hard" in options or "--keep" in options or "--merge" in options:
            commit = next((w for w in operands if not w.startswith("-")), "HEAD")
            for g in guarded:
                if controls.differs(top, os.path.relpath(g, top), commit):
                    hits.append(("git reset --hard", g))
    elif sub in ("checkout", "switch", "restore"):
        if sub == "restore" and "--staged" in options and "--worktree" not in options:
            return []  # the index only
        if (
            sub == "restore"
            or "--" in rest
            or any(w in (".", "./", "*", ":/") or w.startswith(":") for w in operands)
        ):  # `git checkout -- .`, `git restore .`: files, not a branch
            pathspec = rest[rest.index("--") + 1 :] if "--" in rest else operands
            for g in guarded:
                spec = [places.absolute(w, cwd) for w in pathspec]
                if any(g.startswith(p.rstrip("/") + "/") or g == p for p in spec) and (
                    controls.differs(top, os.path.relpath(g, top))
                ):
                    hits.append((f"git {sub}", g))
        elif operands and not (set(letters) & set("bBcC") or "--orphan" in options):
            # another branch: the files that differ between the two commits are rewritten
            # (with --force, local changes too)
            target = operands[0]
            force = "f" in letters or "--force" in options or "--discard-changes" in options
            for g in guarded:
                rel = os.path.relpath(g, top)
                if controls.differs(top, rel, "HEAD", target) or (
                    force and controls.differs(top, rel)
                ):
                    hits.append((f"git {sub} {target}", g))
    elif (
        sub == "worktree"
        and operands[:1] == ["remove"]
        and ("f" in letters or "--force" in options)
    ):
        for tree in operands[1:]:
            path = places.absolute(tree, cwd)
            if os.path.isdir(os.path.join(path, ".forge")) or places.kind(path, holds=True):
                hits.append(("git worktree remove --force", path))
    return hits


def _xargs_targets(
    argv: list[str], cmd: Command, cwd: str, places: _Places
) -> list[tuple[str, str]]:
    """``echo .forge | xargs rm -rf``: the command xargs runs, with the words it is fed."""
    from forge_policy.commands import Command, basename, stdin_text

    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] in ("-I", "-n", "-P", "-L", "-s", "-d", "-E", "-a") else 1
    inner = argv[i:]
    text = stdin_text(cmd, "")
    if not inner or text is None:
        return []
    fed = [*inner, *text.split()]
    return _targets(basename(inner[0]), fed, Command(fed), cwd, places)


def _script(argv: list[str], cmd: Command) -> str | None:
    """The program an interpreter runs from the command line (``-c``/``-e``) or stdin."""
    from forge_policy.commands import stdin_text

    for i, arg in enumerate(argv[1:-1], start=1):
        if arg in _SCRIPT_FLAGS or (
            arg.startswith("-") and not arg.startswith("--") and arg[-1] in "ce" and len(arg) <= 4
        ):
            return argv[i + 1]
    operands = [a for a in argv[1:] if not a.startswith("-")]
    if not operands or operands == ["-"]:
        return stdin_text(cmd, "")
    return None


def _interpreter(name: str) -> bool:
    """``python3.12``, ``node``, ``perl``…: a program that runs a script given inline."""
    return name in _INTERPRETERS or name.rstrip("0123456789.") in ("python", "pypy")


def _writes_governance(script: str, places: _Places) -> bool:
    named = any(marker in script for marker in _MARKERS) or any(
        location in script for location, _what in places.locations
    )
    return named and re.search(_WRITES, script) is not None


#: interpreter code that drives the engine rather than reading it
_ENGINE_CALL = lazy_pattern(
    r"""["'](?:off|on|strict|relaxed|override|purge|init|hook|serve|stop|install|unfork)["']"""
    r"|\bmain\s*\(|\brespond\s*\(|\bevaluate\s*\(|\boverride\s*\(|subprocess|system\s*\("
)


def _engine_program(word: str, places: _Places, *, read: bool = True) -> bool:
    """Whether program ``word`` is a copy or link of forge-policy's entry point: one this call
    made, or an existing small file (a script, a link to one) that runs ``forge_policy``."""
    if "/" not in word:
        return False
    path = places.absolute(word, places.cwd)
    if path in places.aliases or (
        path in places.links and _ENGINE_WORD().search(places.links[path])
    ):
        return True
    data = read_bounded(path, 16384) if read else None
    return data is not None and any(
        mark in data for mark in (b"forge_policy.cli", b"forge_policy.hook", b"-m forge_policy")
    )


def _forge_policy_command(
    argv: list[str], places: _Places | None = None, *, read: bool = True
) -> str:
    """``"forge-policy SUB"`` when ``argv`` runs a governance-changing forge-policy command:
    by its name or path, through a runner (``uvx``, ``python -m``), through a copy or link of
    its entry point (made in this call, or a small file that runs ``forge_policy``), or as
    interpreter code that imports ``forge_policy`` and names a governance command."""
    from forge_policy.commands import Command, basename

    args = argv
    if not args:
        return ""
    name = basename(args[0])
    if places is not None and _engine_program(args[0], places, read=read):
        name = "forge-policy"
    elif _opaque(args[0]) and _ENGINE_WORD().search(args[0]):
        name = "forge-policy"  # `$(command -v forge-policy) off`
    elif _interpreter(name) and "-m" not in args[1:]:
        script = _script(args, Command(list(args)))
        if script and _ENGINE_WORD().search(script) and _ENGINE_CALL().search(script):
            return "forge-policy (from interpreter code)"
    skip = _RUNNERS.get(name)
    if skip is not None and len(args) > skip and (skip == 1 or args[1] in ("run", "exec")):
        args = args[skip:]
        while args and args[0].startswith("-"):
            args = args[1:]
        if not args:
            return ""
        name = basename(args[0])
    if _interpreter(name) and "-m" in args[1:]:
        at = args.index("-m", 1)
        module = args[at + 1] if at + 1 < len(args) else ""
        if module.split(".")[0] != "forge_policy":
            return ""
        rest = args[at + 2 :]
    elif name in ("forge-policy", "forge_policy") or name.startswith("forge-policy@"):
        rest = args[1:]
    else:
        return ""
    if any(a in ("-h", "--help", "--version") for a in rest):
        return ""
    words = [a for a in rest if not a.startswith("-")]
    if not words:
        return ""
    sub = words[0]
    if sub in GOVERNANCE_COMMANDS:
        return f"forge-policy {sub}"
    if sub in GOVERNANCE_SUBCOMMANDS and len(words) > 1 and words[1] in GOVERNANCE_SUBCOMMANDS[sub]:
        return f"forge-policy {sub} {words[1]}"
    if sub == "suggest" and any(a.split("=", 1)[0] == "--apply" for a in rest):
        return "forge-policy suggest --apply"  # writes the project layer; listing only reads
    return ""


def _lock_holders(words: list[str], run: list[str]) -> list[int]:
    """Where ``flock`` stands among a command's words when the command model read past it to
    the program it launches (so ``run``, what runs, is not the ``flock`` itself)."""
    if "flock" not in " ".join(words):
        return []
    from forge_policy.commands import basename

    if run and basename(run[0]) == "flock":
        return []
    return [k for k, word in enumerate(words) if basename(word) == "flock"]


# --- the harness settings ---------------------------------------------------------------------


def _settings_changes(path: str, tool: str, tool_input: Mapping[str, object]) -> list[str]:
    """What a write of a harness settings file changes, judged as the harness reads the file
    (:mod:`forge_policy.harness.settings_check`, loaded only when a settings file is written)."""
    from forge_policy.harness import settings_check

    return settings_check.changes(path, tool, tool_input)


def _keeps_git_code(path: str, tool: str, tool_input: Mapping[str, object]) -> bool:
    """Whether a Write/Edit/MultiEdit of a git configuration file leaves the keys that make git
    run a program as they are (``user.name`` may change, ``core.hooksPath`` may not)."""
    if tool not in ("Write", "Edit", "MultiEdit"):
        return False
    data = read_bounded(path, _MAX_SETTINGS_BYTES)
    if data is None and os.path.exists(path):
        return False
    current = "" if data is None else data.decode("utf-8", "replace")
    new = _new_content(current, tool, tool_input)
    return new is not None and controls.config_code(current) == controls.config_code(new)


def _new_content(current: str, tool: str, tool_input: Mapping[str, object]) -> str | None:
    if tool == "Write":
        content = tool_input.get("content")
        return content if isinstance(content, str) else None
    edits = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
    if not isinstance(edits, list):
        return None
    text = current
    for edit in edits:
        if not isinstance(edit, dict):
            return None
        old, new = edit.get("old_string"), edit.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        if old == "":
            if text:
                return None
            text = new
        elif old in text:
            text = text.replace(old, new) if edit.get("replace_all") else text.replace(old, new, 1)
        # an old_string that is not there: the tool fails and the file stays as it is
    return text
