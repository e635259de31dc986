"""forge-policy's OpenCode plugin: the file ``init --harness opencode`` writes, ``uninstall``
removes and ``doctor`` checks.

OpenCode runs no hook commands; it loads JavaScript plugins from ``.opencode/plugins/`` at
startup (opencode.ai/docs/plugins, read 2026-12-02; builds before the rename read
``.opencode/plugin/``, which is looked at too). The plugin is one ES module with no
dependencies (``forge_policy/harness/assets/opencode-plugin.js``): for each tool call it runs
the project's launcher (:mod:`forge_policy.ops.launcher`) with ``--harness opencode``, found
from the plugin's own place (two folders up), so the committed file names no path of one
machine. Its wire format is :mod:`forge_policy.harness.opencode`'s.

The file carries a version line (:data:`MARKER`); a file at the plugin's path without it is
the user's and is never overwritten or removed.

>>> text(".forge/bin/forge-policy-hook").count('".forge/bin/forge-policy-hook"')
1
>>> MARKER in text(".forge/bin/forge-policy-hook")
True
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from forge_policy.errors import SetupError

#: Where OpenCode loads project plugins from, and where older builds did.
PLUGIN = Path(".opencode/plugins/forge-policy.js")
OLD_PLUGIN = Path(".opencode/plugin/forge-policy.js")
#: The line that marks the file as forge-policy's (the version follows it).
MARKER = "// forge-policy-plugin-version: "
#: Bumped when the plugin's behaviour changes: ``doctor`` reports an older file as stale.
VERSION = 1
_ASSET = Path(__file__).resolve().parent.parent / "harness" / "assets" / "opencode-plugin.js"


def text(launcher: str) -> str:
    """The plugin's text for the launcher at ``launcher`` (relative to the project, or an
    absolute path when the forge root lies outside it)."""
    template = _ASSET.read_text(encoding="utf-8")
    shown = launcher.replace("\n", " ").replace("\r", " ")
    return (
        template.replace('"__LAUNCHER__"', json.dumps(launcher))
        .replace("__LAUNCHER__", shown)
        .replace("__VERSION__", str(VERSION))
    )


def is_ours(path: Path) -> bool:
    """Whether ``path`` is a plugin file forge-policy wrote (any version)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return MARKER in head


def check(project: Path) -> None:
    """Refuse (:class:`SetupError`) when the plugin's path holds a file that is not ours."""
    path = project / PLUGIN
    if path.exists() and not is_ours(path):
        raise SetupError(
            f"{PLUGIN}: a plugin that is not forge-policy's is at that path; rename it, then "
            "run init again (nothing was changed)"
        )


def install(project: Path, launcher: str) -> str:
    """Write the plugin below ``project`` for ``launcher``; returns ``created``, ``updated``
    or ``unchanged``."""
    path = project / PLUGIN
    check(project)
    wanted = text(launcher)
    try:
        if path.read_text(encoding="utf-8") == wanted:
            return "unchanged"
        verb = "updated"
    except OSError:
        verb = "created"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(wanted, encoding="utf-8")
    os.replace(tmp, path)
    return verb


def remove(project: Path, relative: Path) -> bool:
    """Delete the plugin file ``relative`` below ``project`` when it is ours (and its folder
    when that held nothing else); returns whether it was deleted."""
    path = project / relative
    if not is_ours(path):
        return False
    path.unlink()
    for folder in (path.parent, path.parent.parent):
        try:
            folder.rmdir()  # only an empty one
        except OSError:
            break
    return True


def version(path: Path) -> int | None:
    """The version line of our plugin at ``path`` (None: absent, not ours or unreadable)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            head = handle.read(4096)
    except OSError:
        return None
    at = head.find(MARKER)
    if at < 0:
        return None
    number = head[at + len(MARKER) :].split("\n", 1)[0].strip()
    return int(number) if number.isdigit() else None


def launcher_of(path: Path) -> str | None:
    """The launcher our plugin at ``path`` runs (its ``LAUNCHER`` constant), or None."""
    try:
        source = path.read_text(encoding="utf-8")
    except OSError:
        return None
    for line in source.splitlines():
        if line.startswith("const LAUNCHER = "):
            try:
                value = json.loads(line.removeprefix("const LAUNCHER = "))
            except ValueError:
                return None
            return value if isinstance(value, str) else None
    return None
