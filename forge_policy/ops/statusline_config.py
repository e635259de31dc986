"""Claude Code's ``statusLine`` setting for ``init --statusline`` and ``uninstall``.

``init --statusline`` merges ``{"statusLine": {"type": "command", "command": …}}`` into the
Claude Code settings file the hook went to: in the shared ``.claude/settings.json`` the
project's launcher with ``statusline`` (:func:`forge_policy.ops.launcher.command`: no path of
one machine, like the hook), in ``.claude/settings.local.json`` (``init --local``) this
machine's command. Idempotent; forge-policy's own status line is recognised by its command
(:func:`is_ours`) and updated in place, keeping any key a user added (``padding``).

A status line that is not ours is the user's and is never overwritten: ``init --statusline``
keeps it and says how to replace it (``init --statusline=replace``). Claude Code shows one
status line; the local file's wins over the shared one.

>>> is_ours(entry('"$CLAUDE_PROJECT_DIR"/.forge/bin/forge-policy-hook statusline'))
True
>>> is_ours({"type": "command", "command": "~/.claude/statusline.sh"})
False
"""

from __future__ import annotations

import re

from forge_policy.ops import settings_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

KEY = "statusLine"
#: ``init --statusline``'s choices: ``add`` keeps a user's own status line, ``replace`` puts
#: forge-policy's in its place.
MODES = ("add", "replace")
_OURS = re.compile(
    r"(?:forge-policy(?:\.exe)?['\"]?|forge_policy\.cli['\"]?|forge_policy[/\\]worker[/\\]"
    r"launch\.py['\"]?|(?:^|[/\\])forge-policy-hook['\"]?)\s+statusline\s*$"
)


def is_ours(entry: object) -> bool:
    """Whether a ``statusLine`` value is the one forge-policy writes."""
    return isinstance(entry, dict) and bool(_OURS.search(str(entry.get("command", ""))))


def entry(command: str) -> dict[str, Any]:
    """The ``statusLine`` value for ``command``.

    >>> entry("forge-policy statusline")
    {'type': 'command', 'command': 'forge-policy statusline'}
    """
    return {"type": "command", "command": command}


def install(path: Path, command: str, *, replace: bool = False) -> tuple[str, str]:
    """Merge forge-policy's status line into the settings file ``path``; returns ``(verb,
    detail)`` for the report: ``created``/``updated``/``unchanged`` and, when a status line of
    the user's is kept (not ``replace``), ``kept`` with what it runs. Refuses
    (:class:`~forge_policy.errors.SetupError`) a file it cannot rewrite losslessly."""
    document, indent = settings_file.read(path)
    current = document.get(KEY)
    wanted = entry(command)
    if current is not None and not is_ours(current) and not replace:
        shown = current.get("command") if isinstance(current, dict) else current
        return "kept", f"{shown!r}"
    if isinstance(current, dict) and is_ours(current):
        merged = {**current, **wanted}
        if merged == current:
            return "unchanged", ""
        wanted = merged
    existed = path.exists()
    document[KEY] = wanted
    settings_file.write(path, document, indent)
    return ("updated" if existed else "created"), "forge-policy's statusLine"


def remove(path: Path) -> bool:
    """Take forge-policy's status line out of ``path`` (a user's stays); a file left empty is
    deleted. Returns whether anything changed."""
    if not path.exists():
        return False
    document, indent = settings_file.read(path)
    if not is_ours(document.get(KEY)):
        return False
    del document[KEY]
    if document:
        settings_file.write(path, document, indent)
    else:
        path.unlink()
    return True


def configured(path: Path) -> dict[str, Any] | None:
    """forge-policy's ``statusLine`` value in ``path``, None when the file has none of ours
    (or cannot be read)."""
    from forge_policy.errors import SetupError

    try:
        document, _ = settings_file.read(path)
    except (SetupError, OSError):
        return None
    value = document.get(KEY)
    return value if is_ours(value) else None


def check(project: Path, environ: Mapping[str, str]) -> dict[str, Any] | None:
    """Run forge-policy's ``statusLine`` (the local file's, else the shared one's) as Claude
    Code runs it (``sh -c``, a status JSON for an unknown session on stdin,
    ``$CLAUDE_PROJECT_DIR`` set, no colour) for ``doctor``: ``{"file", "command", "ok",
    "line"}`` (``line``: its first line, or why it gave none); None when it has none of ours."""
    import json
    import subprocess

    from forge_policy.ops import harness_config
    from forge_policy.reports.statusline import UNKNOWN

    hook_file = harness_config.spec("claude-code")
    for relative in reversed(harness_config.files(hook_file)):  # the local file's wins
        value = configured(project / relative)
        if value is None:
            continue
        command = str(value["command"])
        status = {"hook_event_name": "Status", "session_id": "forge-policy-doctor",
                  "cwd": str(project), "workspace": {"current_dir": str(project),
                  "project_dir": str(project)}}  # fmt: skip
        env = {**environ, "CLAUDE_PROJECT_DIR": str(project), "NO_COLOR": "1"}
        try:
            done = subprocess.run(
                ["sh", "-c", command], input=json.dumps(status).encode(), capture_output=True,
                cwd=project, env=env, timeout=CHECK_TIMEOUT, check=False,
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            return {"file": str(relative), "command": command, "ok": False, "line": str(exc)}
        line = done.stdout.decode("utf-8", "replace").partition("\n")[0]
        ok = done.returncode == 0 and line.startswith("forge-policy") and line != UNKNOWN
        if not ok and not line:
            line = f"exit {done.returncode}, nothing on stdout"
        return {"file": str(relative), "command": command, "ok": ok, "line": line}
    return None


#: Seconds ``doctor`` waits for the status line.
CHECK_TIMEOUT = 10.0
