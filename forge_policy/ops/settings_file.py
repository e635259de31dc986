"""A harness's JSON hook file, read and rewritten without losing anything (for ``init``).

Every supported harness keeps its hooks in a JSON object; the lists of hook entries come in two
shapes: ``nested`` (Claude Code, Codex, Gemini CLI, Antigravity: matcher groups, each with a
``hooks`` list of handlers) and ``flat`` (Cursor, Copilot CLI: the handlers themselves).
forge-policy's own handlers are recognised by their command, with its ``args`` in exec form
(:func:`command_line`: ``… forge-policy hook``, the worker client's
``…/forge_policy/worker/launch.py`` or the project's launcher ``…/.forge/bin/forge-policy-hook``:
:mod:`forge_policy.ops.launcher`) or serve URL, and are updated in place, never duplicated (an
entry of the shell form becomes the exec form, and back); every other key, hook and key order
is kept, and so is the file's indent. A file that is not valid JSON, or not of the expected
shape, is refused with its line and column: it is never overwritten.

>>> groups = [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]
>>> mine = {"type": "command", "command": "forge-policy hook", "timeout": 30}
>>> place(groups, mine, matcher="*"), len(groups), place(groups, mine, matcher="*")
(True, 2, False)
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from forge_policy.errors import SetupError
from forge_policy.serve import HOOK_PATH, TOKEN_ENV

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

#: The handler keys forge-policy writes and keeps current; any other key a user adds stays.
MANAGED = ("type", "command", "bash", "args", "url", "headers", "allowedEnvVars")
#: The keys that hold a handler's command line, by harness shape (``bash``: Copilot CLI).
COMMAND_KEYS = ("command", "bash")
_OURS = re.compile(
    r"forge-policy(?:\.exe)?['\"]?\s+hook\b|forge_policy\.cli['\"]?\s+hook\b"
    r"|forge_policy[/\\]worker[/\\](?:launch|client)\.py\b"
    r"|(?:^|[/\\])forge-policy-hook['\"]?(?:\s|$)"
)


def shown(path: Path | str) -> str:
    """``path`` relative to the working directory when inside it (as messages show it)."""
    text = os.fspath(path)
    relative = os.path.relpath(text) if os.path.isabs(text) else text
    return text if relative.startswith("..") else relative


def is_ours(handler: object) -> bool:
    """Whether a hook handler is one forge-policy wrote.

    >>> is_ours({"command": "/v/bin/forge-policy hook --harness codex"}), is_ours({"bash": "x"})
    (True, False)
    >>> is_ours({"command": '"$CLAUDE_PROJECT_DIR"/.forge/bin/forge-policy-hook'})
    True
    >>> is_ours({"command": "/v/python", "args": ["-I", "-S", "/v/forge_policy/worker/launch.py"]})
    True
    """
    if not isinstance(handler, dict):
        return False
    if handler.get("type", "command") == "command":
        return any(_OURS.search(command_line(handler, key)) for key in COMMAND_KEYS)
    if handler.get("type") == "http":
        url = str(handler.get("url", ""))
        return url.endswith(HOOK_PATH) and TOKEN_ENV in json.dumps(handler.get("headers"))
    return False


def command_line(handler: dict[str, Any], key: str = "command") -> str:
    """The handler's command under ``key``, with an exec-form entry's ``args`` (Claude Code:
    ``command`` spawned with them, no shell) after it, space-separated: what
    forge-policy's handlers are recognised by, and how messages show them.

    >>> command_line({"command": "${CLAUDE_PROJECT_DIR}/h", "args": ["--via-serve"]})
    '${CLAUDE_PROJECT_DIR}/h --via-serve'
    """
    text = str(handler.get(key, ""))
    args = handler.get("args")
    if key == "command" and isinstance(args, list):
        text = " ".join([text, *map(str, args)])
    return text


def _update(current: dict[str, Any], handler: dict[str, Any]) -> dict[str, Any]:
    """Ours, brought up to date: the managed keys from ``handler``, every other key the user
    set (a narrower matcher, another timeout) kept; unmanaged keys ``handler`` has that the user
    never set are added (``timeout``, ``failClosed``, ``name``)."""
    kept = {k: v for k, v in current.items() if k not in MANAGED}
    merged = {**{k: v for k, v in handler.items() if k in MANAGED}, **kept}
    for key, value in handler.items():
        merged.setdefault(key, value)
    return merged


def _place_in(hooks: list[Any], handler: dict[str, Any], placed: bool) -> tuple[bool, bool]:
    """Update ours in one handler list and drop duplicates; ``(placed, changed)``."""
    changed = False
    position = 0
    while position < len(hooks):
        current = hooks[position]
        if is_ours(current):
            if placed:  # a duplicate of ours
                del hooks[position]
                changed = True
                continue
            merged = _update(current, handler)
            if merged != current:
                hooks[position] = merged
                changed = True
            placed = True
        position += 1
    return placed, changed


def place(groups: list[Any], handler: dict[str, Any], *, matcher: str | None) -> bool:
    """Put ``handler`` in a nested event list (matcher groups): update ours in place, drop
    duplicates (and the groups they leave empty), or append a group (``matcher`` set when the
    event takes one). Returns whether anything changed."""
    placed = changed = False
    emptied: list[int] = []
    for index, group in enumerate(groups):
        hooks = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(hooks, list):
            continue
        before = len(hooks)
        placed, changed_here = _place_in(hooks, handler, placed)
        changed |= changed_here
        if before and not hooks:
            emptied.append(index)
    for index in reversed(emptied):
        del groups[index]
    if not placed:
        added: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        added["hooks"] = [handler]
        groups.append(added)
        changed = True
    return changed


def place_flat(handlers: list[Any], handler: dict[str, Any]) -> bool:
    """Put ``handler`` in a flat event list (Cursor, Copilot CLI); returns whether it changed.

    >>> entries = [{"command": "./audit.sh"}]
    >>> place_flat(entries, {"command": "forge-policy hook --harness cursor"}), len(entries)
    (True, 2)
    """
    placed, changed = _place_in(handlers, handler, False)
    if not placed:
        handlers.append(handler)
        changed = True
    return changed


def read(path: Path, lists: Iterable[tuple[str, ...]] = ()) -> tuple[dict[str, Any], str]:
    """The JSON object in ``path`` (``{}`` when absent or empty) and its indentation.

    ``lists`` are key paths that must hold a list where present (``("hooks", "PreToolUse")``):
    the hook lists a merge will write into. Refuses anything it could not rewrite losslessly.
    """
    if not path.exists():
        return {}, "  "
    text = path.read_text(encoding="utf-8")
    from forge_policy._limits import MAX_DEPTH, too_deep

    deep = f"{shown(path)}: nested deeper than {MAX_DEPTH} levels; nothing was changed"
    try:
        document = json.loads(text) if text.strip() else {}
    except RecursionError:
        raise SetupError(deep) from None
    except json.JSONDecodeError as exc:
        comment = text[exc.pos : exc.pos + 2] in ("//", "/*")
        why = "comments cannot be kept by a rewrite" if comment else exc.msg
        raise SetupError(
            f"{shown(path)}:{exc.lineno}:{exc.colno}: not valid JSON ({why}); "
            "fix it first, nothing was changed"
        ) from None
    if too_deep(document):
        raise SetupError(deep)
    if not isinstance(document, dict):
        raise SetupError(f"{shown(path)}: expected a JSON object; nothing was changed")
    for keys in lists:
        value: Any = document
        for depth, key in enumerate(keys):
            if not isinstance(value, dict):
                where = ".".join(keys[:depth])
                raise SetupError(f"{shown(path)}: {where}: expected an object; nothing was changed")
            value = value.get(key, [] if depth == len(keys) - 1 else {})
        if not isinstance(value, list):
            raise SetupError(
                f"{shown(path)}: {'.'.join(keys)}: expected a list of hook entries; "
                "nothing was changed"
            )
    match = re.search(r"^([ \t]+)\S", text, re.MULTILINE)
    return document, match.group(1) if match else "  "


def write(path: Path, document: dict[str, Any], indent: str) -> None:
    """Write ``document`` to ``path`` atomically (a temporary file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(document, indent=indent, ensure_ascii=False) + "\n"
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
