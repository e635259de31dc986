"""Each harness's own sandbox, configured by ``forge-policy init`` from the floor (SPEC §13).

With ``init --floor harness`` (the default) the floor of :func:`forge_policy.floor.derive.floor_for`
is written into the sandbox settings of every harness that has one, merged like the hook entries:
lossless (every other key kept), idempotent (a second run changes nothing), a broken file refused
with its ``file:line:col`` and nothing changed, and never weaker than what the user had (a stricter
value is kept, list entries are only added).

**Claude Code** (``sandbox`` in ``.claude/settings.json``, or ``.claude/settings.local.json`` with
``init --sandbox-settings local``). Every key checked against the vendored SchemaStore schema
``forge_policy/harness/schemas/claude-code-settings.json`` (commit d2cbdcde, 2026-08-03:
``properties.sandbox``) and against Claude Code's docs as of 2026-08-22
(code.claude.com/docs/en/sandboxing and /docs/en/settings-reference "Sandbox settings", mirrored
by zhalice2011/claude-code-docs at 70886ea0):

=================================  ==============================================================
key                                what it holds
=================================  ==============================================================
``enabled: true``                  Bash (and PowerShell, Monitor) commands run in the sandbox
``failIfUnavailable: true``        Claude Code exits at startup when the sandbox cannot start
                                   (Linux and WSL2 need bubblewrap and socat), instead of running
                                   commands unsandboxed with a warning
``allowUnsandboxedCommands:        the ``dangerouslyDisableSandbox`` retry is ignored ("strict
false``                            sandbox mode")
``filesystem.denyWrite``           :attr:`Floor.never_written` (governance, git hooks and config)
``filesystem.denyRead``            :attr:`Floor.never_read` (agent-shield's credential folders)
``filesystem.allowWrite``          :attr:`Floor.writable` (the project, temp)
=================================  ==============================================================

Paths follow the docs' "Sandbox path prefixes": ``./`` is relative to the project root in project
(and local) settings, ``~/`` to the home folder, and an absolute path is written ``//path`` — the
docs of 2026-08 read a single ``/`` as absolute, but the schema's description (2026-08-03) and
older releases read it as relative to the settings file; ``//`` is absolute in both. No trailing
slash added (the Linux sandbox skips a write entry with ``*``, so a wildcard only holds in
``denyRead``). The lists merge across every settings file, so the committed file holds only
portable entries (below the project, below the home folder, ``/tmp``, ``/var/tmp``, ``/etc``,
``/proc``); a path of one machine (a ``TMPDIR`` elsewhere) goes to ``.claude/settings.local.json``
(SPEC §10: a committed file names no machine's path). A never-written path outside every writable
root is not written at all: the sandbox's default write boundary (the project and temp only)
already holds it. That is where the engine's installation usually is, and the hook guards it too;
an installation below a writable root (a project venv) is written to the local file, since its
path names one machine's interpreter.

**Codex** (``.codex/config.toml``, read for trusted projects only: developers.openai.com/codex/
config-basic). Keys from openai/codex ``codex-rs/core/config.schema.json`` (``sandbox_mode``:
``read-only`` | ``workspace-write`` | ``danger-full-access``; ``[sandbox_workspace_write]``:
``writable_roots`` (absolute paths), ``network_access``, ``exclude_tmpdir_env_var``,
``exclude_slash_tmp``), seen 2026-12-02. ``sandbox_mode = "workspace-write"`` lets commands write
the workspace, ``/tmp`` and ``$TMPDIR`` only (``.git`` and ``.codex`` stay read-only, network off);
``writable_roots`` adds the floor's other temp folders. ``read-only`` is stricter and kept. The
sandbox has no deny list: ``.forge``, ``.claude`` and secret files are not held by it. Sandboxes
do not nest (inside Codex's, bubblewrap cannot make its namespaces), so while Codex's sandbox is on
forge-policy rewrites nothing (:func:`forge_policy.floor.status.harness_sandbox_on`) and those
paths are the hook's alone; ``doctor`` says so. TOML is edited as text (comments and order
kept, except inside a ``writable_roots`` array that gains an entry: it is rewritten on one line)
and the result is checked by parsing it again: anything else changed refuses the run, and so
does a table spelled inline or with dotted keys.

>>> from forge_policy.floor.model import Floor, FloorPath
>>> floor = Floor("/p", (FloorPath("/p", "project"), FloorPath("/tmp", "temp")),
...               (FloorPath("/p/.forge", "protect-governance"),),
...               (FloorPath("/home/u/.ssh", "agent-shield"),))
>>> lists = claude_lists(floor, "/home/u")
>>> lists["project"]
{'denyWrite': ['./.forge'], 'denyRead': ['~/.ssh'], 'allowWrite': ['.', '//tmp']}
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from forge_policy.errors import SetupError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.floor.model import Floor, FloorPath

#: The Claude Code settings files ``init`` may write the sandbox into, by choice.
CLAUDE_FILES = {"project": ".claude/settings.json", "local": ".claude/settings.local.json"}
#: The booleans that make Claude Code's sandbox hold every shell call (docs above).
CLAUDE_FLAGS: dict[str, bool] = {
    "enabled": True,
    "failIfUnavailable": True,
    "allowUnsandboxedCommands": False,
}
#: ``sandbox.filesystem`` lists, and the floor field each comes from.
CLAUDE_LISTS = ("denyWrite", "denyRead", "allowWrite")
#: Absolute paths that are the same on every machine (may go to a committed file), and the
#: system folders whose paths are (``/proc/self/environ``, ``/etc/…``).
PORTABLE = frozenset({"/tmp", "/var/tmp"})
SYSTEM = ("/etc", "/proc")
CODEX_FILE = Path(".codex/config.toml")
CODEX_MODE = "workspace-write"
#: Codex sandbox modes at least as strict as ``workspace-write`` (kept when the user set them).
CODEX_STRICT = frozenset({"read-only", "workspace-write"})
#: Debian/Ubuntu packages Claude Code's Linux sandbox needs (sandboxing docs, "Set up Linux").
LINUX_PACKAGES = ("bubblewrap", "socat")


def _under(path: str, root: str) -> str | None:
    """``path`` relative to ``root`` (``""`` for ``root`` itself), None when outside it."""
    if not root or root == "/":
        return None
    if path == root:
        return ""
    return path[len(root) + 1 :] if path.startswith(root + "/") else None


def spelled(path: str, project: str, home: str) -> tuple[str, bool]:
    """``(entry, portable)``: ``path`` in Claude Code's sandbox path syntax, and whether it is the
    same on every machine (relative to the project or home, or a standard temp folder).

    >>> spelled("/p/.forge", "/p", "/h"), spelled("/h/.ssh", "/p", "/h")
    (('./.forge', True), ('~/.ssh', True))
    >>> spelled("/p", "/p", "/h"), spelled("/opt/tmp", "/p", "/h")
    (('.', True), ('//opt/tmp', False))
    >>> spelled("/p/home/.ssh", "/p", "/p/home")  # the nearer root names it
    ('~/.ssh', True)
    """
    inside, below_home = _under(path, project), _under(path, home)
    if below_home is not None and (inside is None or len(home) > len(project)):
        return "~/" + below_home, True  # the nearer root names it ("~/": home itself)
    if inside is not None:
        return ("./" + inside if inside else "."), True
    system = any(path.startswith(prefix + "/") for prefix in SYSTEM)
    return "/" + path, path in PORTABLE or system


def claude_lists(floor: Floor, home: str) -> dict[str, dict[str, list[str]]]:
    """``{"project"|"local": {list: entries}}``: the floor as ``sandbox.filesystem`` lists, the
    portable entries for the committed file and the others for the local one (module doc)."""
    out: dict[str, dict[str, list[str]]] = {"project": {}, "local": {}}
    roots = [p.path for p in floor.writable]
    sources: dict[str, tuple[FloorPath, ...]] = {
        "denyWrite": floor.never_written,
        "denyRead": floor.never_read,
        "allowWrite": floor.writable,
    }
    for key in CLAUDE_LISTS:
        for item in sources[key]:
            if key == "denyWrite" and not any(_under(item.path, r) is not None for r in roots):
                continue  # outside every writable root: the default write boundary holds it
            entry, portable = spelled(item.path, floor.project, home)
            if item.reason == "installation":
                portable = False  # one machine's interpreter and layout
            target = out["project" if portable else "local"].setdefault(key, [])
            if entry not in target:
                target.append(entry)
    return out


def _claude_sandbox(document: dict[str, Any], shown: str) -> dict[str, Any]:
    """The ``sandbox`` object of a settings document (refused when it is not an object)."""
    sandbox = document.get("sandbox", {})
    if not isinstance(sandbox, dict):
        raise SetupError(f"{shown}: sandbox: expected an object; nothing was changed")
    filesystem = sandbox.get("filesystem", {})
    if not isinstance(filesystem, dict):
        raise SetupError(f"{shown}: sandbox.filesystem: expected an object; nothing was changed")
    for key in CLAUDE_LISTS:
        value = filesystem.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SetupError(
                f"{shown}: sandbox.filesystem.{key}: expected a list of paths; nothing was changed"
            )
    return sandbox


def merge_claude(
    document: dict[str, Any], lists: dict[str, list[str]], *, flags: bool, shown: str
) -> bool:
    """Merge the floor into ``document``'s ``sandbox`` (flags when ``flags``, list entries added,
    nothing removed or loosened); returns whether it changed."""
    sandbox = _claude_sandbox(document, shown)
    changed = False
    if flags:
        for key, value in CLAUDE_FLAGS.items():
            if sandbox.get(key) is not value:
                sandbox[key] = value
                changed = True
    if any(lists.values()):
        filesystem = sandbox.setdefault("filesystem", {})
        for key in CLAUDE_LISTS:
            wanted = lists.get(key, [])
            if not wanted:
                continue
            entries = filesystem.setdefault(key, [])
            for entry in wanted:
                if entry not in entries:
                    entries.append(entry)
                    changed = True
    if changed and "sandbox" not in document:
        document["sandbox"] = sandbox
    return changed


def _schema_problems(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Claude Code schema violations ``after`` has that ``before`` did not (the vendored schema,
    as :mod:`forge_policy.harness.settings_check` reads it)."""
    from forge_policy.harness import settings_check

    validator = settings_check._validator("claude-code")
    if validator is None:  # pragma: no cover - the schema is vendored
        return []
    old = set(validator.errors(before))
    return [where for where in validator.errors(after) if where not in old]


class Change:
    """One file ``init`` rewrites for a sandbox: its new text (JSON document or TOML text)."""

    __slots__ = ("document", "indent", "path", "text")

    def __init__(
        self,
        path: Path,
        *,
        document: dict[str, Any] | None = None,
        indent: str = "  ",
        text: str | None = None,
    ) -> None:
        self.path = path
        self.document = document
        self.indent = indent
        self.text = text

    def apply(self) -> None:
        from forge_policy.ops import settings_file

        if self.document is not None:
            settings_file.write(self.path, self.document, self.indent)
        elif self.text is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f".{self.path.name}.tmp-{os.getpid()}")
            tmp.write_text(self.text, encoding="utf-8")
            os.replace(tmp, self.path)


def plan_claude(project: Path, floor: Floor, home: str, where: str) -> list[Change]:
    """The settings files to rewrite for Claude Code's sandbox (none when already in place);
    :class:`SetupError` naming the file (and line and column) when one cannot be merged."""
    import copy

    from forge_policy.ops import settings_file

    lists = claude_lists(floor, home)
    if where == "local":  # everything in the local file, the portable entries first
        shared, own = lists["project"], lists["local"]
        lists["local"] = {
            key: list(dict.fromkeys([*shared.get(key, []), *own.get(key, [])]))
            for key in CLAUDE_LISTS
            if shared.get(key) or own.get(key)
        }
        lists["project"] = {}
    changes = []
    for name in ("project", "local"):
        flags = name == where
        if not flags and not any(lists[name].values()):
            continue
        path = project / CLAUDE_FILES[name]
        shown = settings_file.shown(path)
        document, indent = settings_file.read(path)
        before = copy.deepcopy(document)
        if merge_claude(document, lists[name], flags=flags, shown=shown):
            problems = _schema_problems(before, document)
            if problems:  # fail closed: never write a file Claude Code would reject
                raise SetupError(
                    f"{shown}: the sandbox block would not match Claude Code's schema at "
                    f"{', '.join(problems)}; nothing was changed"
                )
            changes.append(Change(path, document=document, indent=indent))
    return changes


def claude_overrides(project: Path, where: str) -> list[str]:
    """Weaker sandbox booleans in the local settings file, which take precedence over the
    project file ``init`` wrote (the user's to change: init never loosens or removes them)."""
    from forge_policy.ops import settings_file

    if where == "local":
        return []
    try:
        document, _ = settings_file.read(project / CLAUDE_FILES["local"])
    except (SetupError, OSError):
        return []
    sandbox = document.get("sandbox")
    if not isinstance(sandbox, dict):
        return []
    return [
        f"sandbox.{key}: {str(sandbox[key]).lower()}"
        for key, value in CLAUDE_FLAGS.items()
        if key in sandbox and sandbox[key] is not value
    ]


# --- Codex: .codex/config.toml, edited as text -------------------------------------------------

_TOML_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)")
_HEADER = re.compile(r"^\s*\[")


def read_toml(text: str, shown: str) -> dict[str, Any]:
    """``text`` parsed as TOML; :class:`SetupError` naming ``shown:line:col`` when it is not."""
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = _TOML_POSITION.search(str(exc))
        where = f"{shown}:{match.group(1)}:{match.group(2)}" if match else shown
        why = _TOML_POSITION.sub("", str(exc)).strip()
        raise SetupError(
            f"{where}: not valid TOML ({why}); fix it first, nothing was changed"
        ) from None


def codex_roots(floor: Floor, environ_tmpdir: str) -> list[str]:
    """The floor's writable roots Codex's ``workspace-write`` does not already allow (the
    workspace, ``/tmp`` and ``$TMPDIR`` are writable by default), portable ones only."""
    defaults = {floor.project, "/tmp", environ_tmpdir.rstrip("/") or "/tmp"}
    return [p.path for p in floor.writable if p.path not in defaults and p.path in PORTABLE]


def _quoted(value: str) -> str:
    import json

    return json.dumps(value)


def merge_codex(text: str, roots: list[str], shown: str) -> str:
    """``text`` with ``sandbox_mode = "workspace-write"`` (unless it is stricter) and ``roots``
    in ``[sandbox_workspace_write] writable_roots``; the same text when nothing is missing.
    :class:`SetupError` when it is broken or cannot be edited without losing anything.

    >>> print(merge_codex('model = "o3"  # mine\\n[tui]\\nx = 1\\n', ["/var/tmp"], "c.toml"))
    model = "o3"  # mine
    sandbox_mode = "workspace-write"
    [tui]
    x = 1
    <BLANKLINE>
    [sandbox_workspace_write]
    writable_roots = ["/var/tmp"]
    <BLANKLINE>
    """
    document = read_toml(text, shown)
    expected = dict(document)
    lines = text.splitlines(keepends=True)
    mode = document.get("sandbox_mode")
    if mode not in CODEX_STRICT:
        expected["sandbox_mode"] = CODEX_MODE
        lines = _set_mode(lines, mode is not None, shown)
    table = document.get("sandbox_workspace_write", {})
    if not isinstance(table, dict):
        raise SetupError(f"{shown}: sandbox_workspace_write: expected a table; nothing was changed")
    current = table.get("writable_roots", [])
    if not isinstance(current, list):
        raise SetupError(
            f"{shown}: sandbox_workspace_write.writable_roots: expected a list; nothing was changed"
        )
    missing = [r for r in roots if r not in current]
    if missing:
        expected["sandbox_workspace_write"] = {**table, "writable_roots": [*current, *missing]}
        lines = _set_roots(
            lines, [*current, *missing], "sandbox_workspace_write" in document, shown
        )
    new = "".join(lines)
    if new != text and read_toml(new, shown) != expected:  # fail closed: nothing else may move
        raise SetupError(f"{shown}: cannot be merged without losing anything; nothing was changed")
    return new


def _first_header(lines: list[str]) -> int:
    return next((i for i, line in enumerate(lines) if _HEADER.match(line)), len(lines))


def _set_mode(lines: list[str], present: bool, shown: str) -> list[str]:
    line = f"sandbox_mode = {_quoted(CODEX_MODE)}\n"
    top = _first_header(lines)
    if not present:
        if top and not lines[top - 1].endswith("\n"):
            lines[top - 1] += "\n"
        return [*lines[:top], line, *lines[top:]]
    pattern = re.compile(r"^(\s*sandbox_mode\s*=\s*)(\"[^\"\n]*\"|'[^'\n]*')(.*)$", re.DOTALL)
    for i in range(top):
        match = pattern.match(lines[i])
        if match:
            lines[i] = match.group(1) + _quoted(CODEX_MODE) + match.group(3)
            return lines
    raise SetupError(f"{shown}: sandbox_mode: cannot be rewritten in place; nothing was changed")


def _set_roots(lines: list[str], roots: list[str], table: bool, shown: str) -> list[str]:
    value = "writable_roots = [" + ", ".join(_quoted(r) for r in roots) + "]\n"
    if not table:
        if lines and not lines[-1].endswith("\n"):
            lines = [*lines[:-1], lines[-1] + "\n"]
        gap = ["\n"] if lines else []
        return [*lines, *gap, "[sandbox_workspace_write]\n", value]
    header = re.compile(r"^\s*\[\s*sandbox_workspace_write\s*\]\s*(#.*)?$")
    start = next((i for i, line in enumerate(lines) if header.match(line.rstrip("\n"))), None)
    if start is None:
        raise SetupError(
            f"{shown}: [sandbox_workspace_write] is not a plain table; nothing was changed"
        )
    end = next((i for i in range(start + 1, len(lines)) if _HEADER.match(lines[i])), len(lines))
    key = re.compile(r"^\s*writable_roots\s*=")
    for i in range(start + 1, end):
        if key.match(lines[i]):
            last = _value_end(lines, i, end, shown)
            return [*lines[:i], value, *lines[last + 1 :]]
    return [*lines[: start + 1], value, *lines[start + 1 :]]


def _value_end(lines: list[str], first: int, end: int, shown: str) -> int:
    """The last line of the key/value pair that starts on ``first`` (a multi-line array)."""
    import tomllib

    for last in range(first, end):
        try:
            tomllib.loads("".join(lines[first : last + 1]))
        except tomllib.TOMLDecodeError:
            continue
        return last
    raise SetupError(f"{shown}: writable_roots: cannot be rewritten in place; nothing was changed")


def plan_codex(project: Path, floor: Floor, tmpdir: str) -> list[Change]:
    """``.codex/config.toml`` to rewrite for Codex's sandbox (none when already in place)."""
    from forge_policy.ops import settings_file

    path = project / CODEX_FILE
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    new = merge_codex(text, codex_roots(floor, tmpdir), settings_file.shown(path))
    return [] if new == text else [Change(path, text=new)]
