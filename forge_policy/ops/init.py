"""Project setup behind ``forge-policy init`` and the project-scoped ``on|off|strict|relaxed``.

``init`` makes ``<FORGE_ROOT>/runtime/`` and ``<FORGE_ROOT>/audit/``, git-ignores the runtime
folder, and merges the hook into ``.claude/settings.json``. Every step is idempotent: a second run
changes nothing. The settings file keeps every key, hook and key order it had; forge-policy's own
handlers are recognised by their command (``… forge-policy hook`` or the worker client's
``…/forge_policy/worker/launch.py``) or serve URL and are updated in place, never duplicated.
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

import json
import os
import re
import shlex
import shutil
import sys
from pathlib import Path

import attrs

from forge_policy.errors import SetupError
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

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The events ``init`` registers; the first three take a matcher (``"*"``: everything).
HOOK_EVENTS = ("PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit", "Stop")
MATCHER_EVENTS = frozenset({"PreToolUse", "PostToolUse", "SessionStart"})
#: Claude Code runs only command (and mcp_tool) hooks on these events, never http ones.
COMMAND_ONLY_EVENTS = frozenset({"SessionStart"})
HOOK_TIMEOUT = 30
SETTINGS = Path(".claude") / "settings.json"
_MANAGED = ("type", "command", "args", "url", "headers", "allowedEnvVars")
_OURS = re.compile(
    r"forge-policy(?:\.exe)?['\"]?\s+hook\b|forge_policy\.cli['\"]?\s+hook\b"
    r"|forge_policy[/\\]worker[/\\](?:launch|client)\.py\b"
)


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

    def add(self, verb: str, path: Path | str, detail: str = "") -> None:
        """Record one action; ``path`` is shown relative to the working directory when inside it."""
        self.actions.append(Action(verb, _shown(path), detail))

    @property
    def changed(self) -> bool:
        """Whether anything on disk changed."""
        return any(a.verb in ("created", "updated", "removed") for a in self.actions)


def _shown(path: Path | str) -> str:
    text = os.fspath(path)
    relative = os.path.relpath(text) if os.path.isabs(text) else text
    return text if relative.startswith("..") else relative


def executable() -> str:
    """The ``forge-policy`` command this process runs from, as a shell-quoted absolute path.

    It is looked up beside :data:`sys.executable` (the virtual environment's ``bin``), then on
    ``PATH``; failing both it is ``<python> -m forge_policy.cli``. Never a bare ``python3``.
    """
    bindir = Path(sys.executable).parent
    for name in ("forge-policy", "forge-policy.exe"):
        candidate = bindir / name
        if candidate.is_file():
            return shlex.quote(str(candidate.absolute()))
    found = shutil.which("forge-policy")
    if found:
        return shlex.quote(os.path.abspath(found))
    return f"{shlex.quote(os.path.abspath(sys.executable))} -m forge_policy.cli"


def client_command() -> str:
    """The warm-worker hook client: this interpreter (the venv's, unresolved, so its packages are
    found) with ``-I -S`` on :mod:`forge_policy.worker.launch`'s file, shell-quoted.

    >>> "-I -S" in client_command() and client_command().endswith("worker/launch.py")
    True
    """
    from forge_policy.worker import client

    launch = os.path.join(os.path.dirname(os.path.abspath(client.__file__)), "launch.py")
    return f"{shlex.quote(os.path.abspath(sys.executable))} -I -S {shlex.quote(launch)}"


def command_handler(*, via_serve: bool = False, worker: bool = False) -> dict[str, Any]:
    """The Claude Code command hook ``init`` writes: the worker client, ``forge-policy hook
    --via-serve`` or plain ``forge-policy hook``."""
    if worker and not via_serve:
        command = client_command()
    else:
        command = f"{executable()} hook" + (" --via-serve" if via_serve else "")
    return {"type": "command", "command": command, "timeout": HOOK_TIMEOUT}


def http_handler(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> dict[str, Any]:
    """The Claude Code http hook of ``init --serve --http-only`` (token from the environment)."""
    return {
        "type": "http",
        "url": f"http://{host}:{port}{HOOK_PATH}",
        "headers": {"Authorization": f"Bearer ${TOKEN_ENV}"},
        "allowedEnvVars": [TOKEN_ENV],
        "timeout": HOOK_TIMEOUT,
    }


def is_ours(handler: object) -> bool:
    """Whether a settings.json hook handler is one forge-policy wrote."""
    if not isinstance(handler, dict):
        return False
    if handler.get("type", "command") == "command":
        return bool(_OURS.search(str(handler.get("command", ""))))
    if handler.get("type") == "http":
        url = str(handler.get("url", ""))
        return url.endswith(HOOK_PATH) and TOKEN_ENV in json.dumps(handler.get("headers"))
    return False


def _place(groups: list[Any], event: str, handler: dict[str, Any]) -> bool:
    """Put ``handler`` in an event's matcher groups: update ours in place (keeping the keys a
    user added, such as a narrower matcher or another timeout), drop duplicates, or append a new
    group. Returns whether anything changed."""
    placed = changed = False
    emptied: list[int] = []
    for index, group in enumerate(groups):
        hooks = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(hooks, list):
            continue
        position = 0
        while position < len(hooks):
            current = hooks[position]
            if is_ours(current):
                if placed:  # a duplicate of ours
                    del hooks[position]
                    changed = True
                    if not hooks:
                        emptied.append(index)
                    continue
                kept = {k: v for k, v in current.items() if k not in _MANAGED}
                merged = {**{k: v for k, v in handler.items() if k in _MANAGED}, **kept}
                merged.setdefault("timeout", handler["timeout"])
                if merged != current:
                    hooks[position] = merged
                    changed = True
                placed = True
            position += 1
    for index in reversed(emptied):
        del groups[index]
    if not placed:
        added: dict[str, Any] = {"matcher": "*"} if event in MATCHER_EVENTS else {}
        added["hooks"] = [handler]
        groups.append(added)
        changed = True
    return changed


def _read_settings(path: Path) -> tuple[dict[str, Any], str]:
    """The settings document and its indentation; refuses anything it could not rewrite."""
    if not path.exists():
        return {}, "  "
    text = path.read_text(encoding="utf-8")
    from forge_policy._limits import MAX_DEPTH, too_deep

    deep = f"{_shown(path)}: nested deeper than {MAX_DEPTH} levels; nothing was changed"
    try:
        document = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise SetupError(
            f"{_shown(path)}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); "
            "fix it first, nothing was changed"
        ) from None
    except RecursionError:
        raise SetupError(deep) from None
    if too_deep(document):
        raise SetupError(deep)
    if not isinstance(document, dict):
        raise SetupError(f"{_shown(path)}: expected a JSON object; nothing was changed")
    hooks = document.get("hooks", {})
    if not isinstance(hooks, dict) or any(
        not isinstance(hooks.get(event, []), list) for event in HOOK_EVENTS
    ):
        raise SetupError(
            f"{_shown(path)}: hooks: expected an object of event lists; nothing was changed"
        )
    match = re.search(r"^([ \t]+)\S", text, re.MULTILINE)
    return document, match.group(1) if match else "  "


def merge_settings(path: Path, handlers: dict[str, dict[str, Any]]) -> bool:
    """Merge ``{event: handler}`` into a Claude Code settings file; returns whether it changed."""
    document, indent = _read_settings(path)
    hooks = document.setdefault("hooks", {})
    changed = False
    for event, handler in handlers.items():
        changed |= _place(hooks.setdefault(event, []), event, handler)
    if not changed:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(document, indent=indent, ensure_ascii=False) + "\n"
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return True


def ensure_gitignored(project: Path, target: Path) -> str | None:
    """Add ``target`` (a folder below ``project``) to ``project/.gitignore`` unless it (or a
    parent) is listed; returns the entry written, or None when nothing was needed."""
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
    if any(line.strip() in covered for line in text.splitlines()):
        return None
    entry = relative + "/"
    prefix = "" if not text or text.endswith("\n") else "\n"
    with path.open("a", encoding="utf-8") as file:
        file.write(f"{prefix}# forge-policy: per-machine session state\n{entry}\n")
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
    return target


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
) -> Report:
    """Set a project up for forge-policy (see the module docstring); returns what was done.

    With ``serve`` the hook asks a running ``forge-policy serve`` and evaluates in-process when
    it does not answer (``hook --via-serve``); ``http_only`` writes Claude Code http hooks
    instead, which let every call through while the server is down. Otherwise the hook is the
    warm-worker client (``worker``, on Linux: it authenticates the worker with ``SO_PEERCRED``),
    else plain ``forge-policy hook``.
    """
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
    entry = ensure_gitignored(project, root / "runtime")
    if entry is not None:
        report.add("updated", project / ".gitignore", f"ignores {entry}")
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
    handlers: dict[str, dict[str, Any]] = {}
    for event in HOOK_EVENTS:
        if serve and http_only and event not in COMMAND_ONLY_EVENTS:
            handlers[event] = http_handler(host, port)
        else:
            on_linux = worker and sys.platform.startswith("linux")  # SO_PEERCRED
            handlers[event] = command_handler(via_serve=serve, worker=on_linux)
    settings = project / SETTINGS
    existed = settings.exists()
    if merge_settings(settings, handlers):
        verb = "updated" if existed else "created"
        report.add(verb, settings, f"forge-policy hook on {', '.join(HOOK_EVENTS)}")
    else:
        report.add("unchanged", settings)
    return report
