"""Which enforcement floor holds per harness, and what it covers (``doctor`` and ``status``,
SPEC §13).

For each harness the project has set up or shows signs of (the registry's ``config`` and
``markers``), :func:`floor_of` says which floor holds shell calls:

* ``harness``: the harness's own sandbox (Claude Code's, as ``init`` configures it);
* ``own``: forge_policy rewrites each shell call to run under a sandbox it starts
  (bubblewrap, Landlock or ``sandbox-exec``: :data:`METHOD_TITLES`);
* ``none``: neither can: the harness cannot rewrite a call (Copilot CLI, Antigravity), or the
  machine has no sandbox forge_policy can start, or the floor setting cannot be read;
* ``off``: the project turned it off (``floor: off`` in ``<FORGE_ROOT>/config.yaml``), which is
  reported as a warning naming the file and line.

Under ``none`` and ``off`` the four guarantees of :data:`GUARANTEES` are the hook's alone: the
hook still decides every call, but nothing beneath it stops a spelling its reading missed.
:func:`coverage_of` summarizes the floor itself (the three lists of
:func:`forge_policy.floor.derive.floor_for`, their sizes and reasons).

>>> [code for code, _ in GUARANTEES]
['governance-unwritten', 'secrets-unread', 'writes-confined', 'installation-untouched']
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path

import attrs

from forge_policy.floor.rewrite import method as rewrite_method
from forge_policy.floor.sandbox import unheld
from forge_policy.floor.status import FloorConfigError, active_floor, configured_mode
from forge_policy.harness import registry
from forge_policy.ops import harness_config

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from forge_policy.floor.model import Floor, FloorPath

#: What the floor holds however a command is spelled (SPEC §13), as ``(code, text)``.
GUARANTEES = (
    ("governance-unwritten", "governance files (.forge/, harness settings, git hooks) unwritten"),
    ("secrets-unread", "secret files (~/.ssh, ~/.aws, …) unread"),
    ("writes-confined", "no writes outside the project and temp"),
    ("installation-untouched", "the engine's installation untouched"),
)
#: How each own-floor method is named in reports.
METHOD_TITLES = {"bwrap": "bubblewrap", "landlock": "Landlock", "sandbox-exec": "sandbox-exec"}
STATES = ("harness", "own", "none", "off")


@attrs.frozen
class HarnessFloor:
    """The floor one harness runs its shell calls under."""

    harness: str
    title: str
    #: one of :data:`STATES`
    state: str
    #: the own floor's method (``bwrap``, ``landlock``, ``sandbox-exec``), else ``None``
    method: str | None
    #: one line: what holds, or why nothing does
    detail: str
    #: ``floor: off`` (file:line) or an unreadable floor setting
    warning: str | None = None
    #: codes of the :data:`GUARANTEES` the method leaves to the hook (Landlock: no read denial,
    #: no read-only folder inside a writable one)
    unheld: tuple[str, ...] = ()

    @property
    def hook_only(self) -> tuple[tuple[str, str], ...]:
        """The guarantees only the hook holds (all of :data:`GUARANTEES` without a floor)."""
        if self.state in ("none", "off"):
            return GUARANTEES
        return tuple(g for g in GUARANTEES if g[0] in self.unheld)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        return {
            "harness": self.harness,
            "title": self.title,
            "state": self.state,
            "method": self.method,
            "detail": self.detail,
            "warning": self.warning,
            "hook_only": [{"code": c, "text": t} for c, t in self.hook_only],
        }

    def headline(self) -> str:
        """``own sandbox (bubblewrap)``, ``Claude Code's sandbox``, ``none``, ``off``."""
        if self.state == "own" and self.method is not None:
            return f"own sandbox ({METHOD_TITLES.get(self.method, self.method)})"
        if self.state == "harness":
            return f"{self.title}'s sandbox"
        return self.state


def harnesses(project: Path) -> list[str]:
    """The harnesses set up or detected in ``project``, in table order (Claude Code when none
    is: what ``init`` would set up), as ``doctor`` lists them."""
    detected = harness_config.detect(project)
    chosen = [
        name
        for name in registry.names()
        if name in detected or harness_config.installed(project, name)
    ]
    return chosen or ["claude-code"]


def unheld_guarantees(floor: Floor, method: str) -> tuple[str, ...]:
    """Codes of the :data:`GUARANTEES` that ``method`` does not hold in full under ``floor``: a
    never-read path it cannot hide leaves ``secrets-unread`` to the hook; a never-written one
    it cannot keep, ``installation-untouched`` or ``governance-unwritten`` by its reason. A path
    bubblewrap leaves alone because it does not exist yet (the folder of a harness the project
    does not use) configures nothing yet and is not counted: the hook refuses its creation."""
    codes = set()
    for path in unheld(floor, method):
        if method == "bwrap" and not os.path.lexists(path.path):
            continue  # a folder not made yet (.cursor/ of an unused harness): see floor.sandbox
        if path in floor.never_read:
            codes.add("secrets-unread")
        elif path.reason == "installation":
            codes.add("installation-untouched")
        else:
            codes.add("governance-unwritten")
    return tuple(code for code, _ in GUARANTEES if code in codes)


def floor_line(forge_root: str) -> str:
    """``<config>:<line>`` of the ``floor:`` key in ``<forge_root>/config.yaml`` (the file
    alone when the line cannot be told), for the warning ``floor: off`` earns."""
    from forge_policy.catalog.yaml_io import key_line, parse_yaml

    path = os.path.join(forge_root, "config.yaml")
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            document, _ = parse_yaml(handle.read(), path)
    except OSError:
        return path
    line = key_line(document, "floor") if isinstance(document, dict) else 0
    return f"{path}:{line}" if line else path


#: The settings files whose ``sandbox.filesystem`` lists Claude Code merges (docs: the lists
#: merge across every settings file): the user's, the project's, the local and managed ones.
_CLAUDE_FILES = (
    "~/.claude/settings.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
    "/etc/claude-code/managed-settings.json",
)


def _claude_lists(project: str, home: str) -> dict[str, list[str]]:
    """``sandbox.filesystem``'s ``denyWrite``, ``denyRead`` and ``allowWrite`` as Claude Code
    merges them (an unreadable file adds nothing)."""
    import json

    lists: dict[str, list[str]] = {"denyWrite": [], "denyRead": [], "allowWrite": []}
    for name in _CLAUDE_FILES:
        path = name.replace("~", home, 1) if name.startswith("~") else os.path.join(project, name)
        try:
            with open(path, "rb") as handle:
                settings = json.loads(handle.read(1 << 20))
        except (OSError, ValueError):
            continue
        box = settings.get("sandbox") if isinstance(settings, dict) else None
        found = box.get("filesystem") if isinstance(box, dict) else None
        for key, entries in lists.items():
            value = found.get(key) if isinstance(found, dict) else None
            if isinstance(value, list):
                entries.extend(v for v in value if isinstance(v, str))
    return lists


def _claude_path(entry: str, project: str, home: str) -> str | None:
    """The absolute path a sandbox path entry names (Claude Code's "Sandbox path prefixes":
    ``//`` absolute, ``~/`` home, ``./`` and ``.`` the project); None when it is ambiguous
    between releases (a single leading ``/``, a bare relative name) or a wildcard, which this
    report then counts as naming nothing (it claims less, never more).

    >>> [_claude_path(e, "/p", "/h") for e in ("//etc/x", "~/.ssh", "./.forge", ".", "/x", "*")]
    ['/etc/x', '/h/.ssh', '/p/.forge', '/p', None, None]
    """
    if "*" in entry:
        return None
    if entry.startswith("//"):
        return os.path.normpath("/" + entry.lstrip("/"))
    if entry == "~" or entry.startswith("~/"):
        return os.path.normpath(os.path.join(home, entry[2:]))
    if entry == "." or entry.startswith("./"):
        return os.path.normpath(os.path.join(project, entry[2:]))
    return None


def _covered(path: str, roots: Sequence[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def sandbox_unheld(floor: Floor, project: str, home: str) -> tuple[str, ...]:
    """Codes of the :data:`GUARANTEES` that Claude Code's sandbox, as its settings configure
    it, does not hold for ``floor``: a never-read path no ``denyRead`` entry covers; a
    never-written one that is writable under the sandbox (the project, temp, ``allowWrite``)
    and that no ``denyWrite`` or ``denyRead`` entry covers; an ``allowWrite`` entry outside the
    project and temp (or one this report cannot read) breaks ``writes-confined``."""
    lists = {
        key: [_claude_path(e, project, home) for e in entries]
        for key, entries in _claude_lists(project, home).items()
    }
    deny_read = [p for p in lists["denyRead"] if p is not None]
    deny_write = [p for p in lists["denyWrite"] if p is not None] + deny_read
    roots = [p.path for p in floor.writable]
    allowed = [p for p in lists["allowWrite"] if p is not None]
    codes = set()
    if len(allowed) < len(lists["allowWrite"]) or not all(_covered(p, roots) for p in allowed):
        codes.add("writes-confined")
    writable = [*roots, *allowed]
    for kept in floor.never_read:
        if not _covered(kept.path, deny_read):
            codes.add("secrets-unread")
    for kept in floor.never_written:
        if _covered(kept.path, deny_write) or not _covered(kept.path, writable):
            continue
        codes.add(
            "installation-untouched" if kept.reason == "installation" else "governance-unwritten"
        )
    return tuple(code for code, _ in GUARANTEES if code in codes)


def floor_of(
    harness: str,
    project: str,
    forge_root: str,
    environ: Mapping[str, str],
    floor: Floor | None = None,
) -> HarnessFloor:
    """The floor ``harness``'s shell calls run under in ``project`` (see the module doc);
    ``floor``: the project's (derived when needed and not given)."""
    return floors(project, forge_root, environ, [harness], floor)[0]


def _floor_of(
    harness: str,
    project: str,
    forge_root: str,
    environ: Mapping[str, str],
    floor: Callable[[], Floor],
) -> HarnessFloor:
    title = registry.get(harness).title
    try:
        active = active_floor(harness, project, forge_root, environ)
    except FloorConfigError as exc:
        return HarnessFloor(
            harness, title, "none", None, "the floor setting cannot be read", warning=str(exc)
        )
    if active == "off":
        where = _shown(floor_line(forge_root), project)
        warning = f"floor: off in {where}: no sandbox under {title}'s shell calls"
        return HarnessFloor(harness, title, "off", None, "turned off by the project", warning)
    if active == "harness" and harness == "codex":
        detail = (
            "Codex's sandbox is on (sandbox_mode is not danger-full-access): writes only to the "
            "workspace and temp, .git and .codex read-only; it has no deny list and sandboxes do "
            "not nest, so nothing is rewritten"
        )
        codes = ("governance-unwritten", "secrets-unread")
        return HarnessFloor(harness, title, "harness", None, detail, unheld=codes)
    if active == "harness":
        detail = f"{title}'s sandbox is on (enabled, failIfUnavailable, no unsandboxed commands)"
        home = environ.get("HOME", "") or os.path.expanduser("~")
        unheld = sandbox_unheld(floor(), project, home)
        if unheld:
            detail += "; its filesystem lists leave some of the floor out"
        return HarnessFloor(harness, title, "harness", None, detail, unheld=unheld)
    if not registry.get(harness).can_rewrite:
        detail = f"{title} cannot rewrite a call, so no sandbox can be put under its shell calls"
        return HarnessFloor(harness, title, "none", None, detail)
    method = rewrite_method(environ)  # the method the hook's rewrite uses
    if not method:
        lacks = (
            "no sandbox-exec"
            if sys.platform == "darwin"
            else "no working bubblewrap on PATH, no Landlock in the kernel"
        )
        detail = f"this machine has no sandbox forge_policy can start ({lacks})"
        return HarnessFloor(harness, title, "none", None, detail)
    detail = f"each shell call rewritten to run under {METHOD_TITLES.get(method, method)}"
    if configured_mode(forge_root) == "own":
        detail += " (the project asks for its own floor: floor: own)"
    elif harness == "claude-code":
        detail += f" ({title}'s sandbox is not on as init configures it)"
    unheld = unheld_guarantees(floor(), method)
    return HarnessFloor(harness, title, "own", method, detail, unheld=unheld)


def floors(
    project: str,
    forge_root: str,
    environ: Mapping[str, str],
    names: Sequence[str] | None = None,
    floor: Floor | None = None,
) -> list[HarnessFloor]:
    """:func:`floor_of` for each of ``names`` (default: :func:`harnesses`); the project's
    ``floor`` is derived once, and only if a harness runs under the own floor."""
    derived = [floor] if floor is not None else []

    def once() -> Floor:
        if not derived:
            from forge_policy.floor.derive import floor_for

            derived.append(floor_for(project, environ))
        return derived[0]

    chosen = names or harnesses(Path(project))
    return [_floor_of(name, project, forge_root, environ, once) for name in chosen]


def _shown(path: str, project: str) -> str:
    """``path`` relative to ``project`` when it lies inside it."""
    prefix = project.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else path


def coverage_of(floor: Floor) -> dict[str, object]:
    """The floor's three lists as sizes and reasons (``{"count": n, "reasons": {why: n}}``),
    the project it is for, and its paths."""

    def summary(paths: tuple[FloorPath, ...]) -> dict[str, object]:
        reasons = Counter(p.reason for p in paths)
        return {
            "count": len(paths),
            "reasons": dict(sorted(reasons.items())),
            "paths": [{"path": p.path, "reason": p.reason} for p in paths],
        }

    return {
        "project": floor.project,
        "writable": summary(floor.writable),
        "never_written": summary(floor.never_written),
        "never_read": summary(floor.never_read),
    }


def coverage_line(coverage: dict[str, object]) -> str:
    """One line of :func:`coverage_of`: ``writes only under 3 (project 1, temp 2); …``."""
    parts = []
    for key, words in (
        ("writable", "writes only under"),
        ("never_written", "never written"),
        ("never_read", "never read"),
    ):
        entry = coverage[key]
        assert isinstance(entry, dict)
        reasons = ", ".join(f"{why} {n}" for why, n in entry["reasons"].items())
        parts.append(f"{words} {entry['count']}" + (f" ({reasons})" if reasons else ""))
    return "; ".join(parts)
