"""Run forge-policy's configured hook commands as each harness would (``forge-policy doctor``).

Reading a settings file says what a harness *would* run, not whether it can: a venv path from
another machine, a launcher that was never committed or a ``forge-policy`` missing from
``PATH`` all leave a hook entry that looks right and enforces nothing (most harnesses treat a
command that cannot start as a non-blocking error). So for each file a harness reads project
hooks from (:func:`forge_policy.ops.harness_config.files`, and Codex's ``config.toml``),
:func:`run_hooks` takes forge-policy's handler on the harness's pre-tool event and runs its
command the way the harness does (:func:`argv`): through ``sh -c``, or, for Claude Code's exec
form (``args``), the ``command`` spawned with them after substituting ``${CLAUDE_PROJECT_DIR}``,
no shell; in the project folder (Copilot CLI: the handler's ``cwd``), with the variables the
harness sets (``CLAUDE_PROJECT_DIR``, … :func:`forge_policy.ops.launcher.hook_env`), the user's
``PATH``, and a harmless payload in the harness's own shape: a shell call of ``true`` in session
``forge-policy-doctor``.

A run passes when the command exits 0 within the handler's timeout and prints nothing or a JSON
object (a catalog may refuse even ``true``: that is an answer). Anything else is a
:class:`HookRun` that is not ``ok``, with what happened and the command that fixes it.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from pathlib import Path

import attrs

from forge_policy.errors import SetupError
from forge_policy.harness import registry
from forge_policy.ops import harness_config, launcher

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

#: The session the payloads name (so the state they leave is recognisable).
SESSION = "forge-policy-doctor"
#: The harmless call: each harness's shell tool and argument (catalog ``Bash`` ``command``).
SHELL_TOOL = {
    "claude-code": ("Bash", "command"),
    "codex": ("Bash", "command"),
    "gemini": ("run_shell_command", "command"),
    "cursor": ("Shell", "command"),
    "copilot": ("bash", "command"),
    "antigravity": ("run_command", "CommandLine"),
    "opencode": ("bash", "command"),
}
_NOT_FOUND = (126, 127)
_OPEN = (
    "a harness treats that as a non-blocking error and lets the call through (Claude Code "
    "refuses a PreToolUse call only where the entry says onFailure: block, from 2.1.295 on)"
)


@attrs.frozen
class HookRun:
    """One configured command, run: ``ok``, else ``reason`` and ``fix`` (a command line)."""

    harness: str
    file: str
    event: str
    command: str
    ok: bool
    detail: str
    fix: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        return {
            "harness": self.harness,
            "file": self.file,
            "event": self.event,
            "command": self.command,
            "ok": self.ok,
            "detail": self.detail,
            "fix": self.fix,
            "seconds": round(self.seconds, 3),
        }

    def line(self) -> str:
        """``hook runs: …`` or ``NOT ENFORCED: …`` with the fix, for the text report."""
        if self.ok:
            return f"hook runs: {self.file} {self.event}: {self.detail}"
        return f"NOT ENFORCED: {self.file} {self.event}: {self.detail}; fix: {self.fix}"


def pre_tool_event(harness: str) -> str:
    """The harness event that carries the catalog's ``PreToolUse``.

    >>> pre_tool_event("gemini"), pre_tool_event("cursor")
    ('BeforeTool', 'preToolUse')
    """
    h = registry.get(harness)
    return next(e for e in harness_config.spec(harness).events if h.events[e] == "PreToolUse")


def payload(harness: str, project: str) -> dict[str, Any]:
    """The harmless pre-tool payload of ``harness``: a shell call of ``true`` in ``project``.

    >>> payload("antigravity", "/p")["toolCall"]
    {'name': 'run_command', 'args': {'CommandLine': 'true'}}
    """
    from forge_policy.testing import events, harnesses

    tool, field = SHELL_TOOL[harness]
    if harness == "claude-code":
        return events.claude_code_payload(
            tool, session_id=SESSION, cwd=project, tool_use_id="forge-policy-doctor", command="true"
        )
    make = getattr(harnesses, f"{harness.replace('-', '_')}_payload")
    result: dict[str, Any] = make(tool, session_id=SESSION, cwd=project, **{field: "true"})
    return result


def configured(project: Path, harness: str) -> list[tuple[str, str, dict[str, Any]]]:
    """``(file, event, handler)`` of forge-policy's handler on the pre-tool event, per file the
    harness reads project hooks from (an unreadable file gives none: ``init`` names it)."""
    from forge_policy.ops import settings_file

    hook_file = harness_config.spec(harness)
    event = pre_tool_event(harness)
    if harness == harness_config.PLUGIN_HARNESS:
        return _plugin_commands(project, hook_file, event)
    documents: list[tuple[str, dict[str, Any], tuple[str, ...]]] = []
    for relative in harness_config.files(hook_file):
        try:
            document, _ = settings_file.read(project / relative)
        except (SetupError, OSError):
            continue
        documents.append((relative.as_posix(), document, hook_file.container))
    if harness == "codex":
        with contextlib.suppress(SetupError, OSError):
            toml = harness_config.codex_toml(project)
            documents.append((harness_config.CODEX_TOML.as_posix(), toml, ("hooks",)))
    found = []
    for name, document, container in documents:
        value: Any = document
        for key in container:
            value = value.get(key) if isinstance(value, dict) else None
        entries = value.get(event) if isinstance(value, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            inner = entry.get("hooks") if isinstance(entry, dict) else None
            for handler in inner if isinstance(inner, list) else [entry]:
                if settings_file.is_ours(handler) and handler.get("type", "command") == "command":
                    found.append((name, event, handler))
    return found


def _plugin_commands(
    project: Path, hook_file: harness_config.HookFile, event: str
) -> list[tuple[str, str, dict[str, Any]]]:
    """OpenCode's: the command forge-policy's plugin runs, per plugin file of ours (its
    launcher, from the project folder, with ``--harness opencode``)."""
    import shlex

    from forge_policy.ops import opencode_plugin

    found = []
    for relative in harness_config.files(hook_file):
        target = opencode_plugin.launcher_of(project / relative)
        if target is not None and opencode_plugin.is_ours(project / relative):
            command = f"{shlex.quote(target)} --harness {hook_file.harness}"
            found.append((relative.as_posix(), event, {"command": command}))
    return found


def _timeout(harness: str, handler: dict[str, Any]) -> float:
    """The handler's timeout in seconds (Gemini CLI's is in ms), at most a minute."""
    hook_file = harness_config.spec(harness)
    value = handler.get(hook_file.timeout_key, hook_file.timeout)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        value = hook_file.timeout
    return min(float(value) / (1000 if harness == "gemini" else 1), 60.0)


def argv(harness: str, handler: dict[str, Any], project: Path) -> list[str]:
    """What ``harness`` spawns for ``handler`` of the project ``project``: an exec-form entry
    (``args``, :data:`forge_policy.ops.launcher.EXEC_REFS`) as ``[command, *args]`` with the
    placeholders substituted, no shell; any other as ``/bin/sh -c COMMAND``.

    >>> argv("claude-code", {"command": "${CLAUDE_PROJECT_DIR}/h", "args": ["-x"]}, Path("/p"))
    ['/p/h', '-x']
    >>> argv("cursor", {"command": ".forge/bin/forge-policy-hook --harness cursor"}, Path("/p"))
    ['/bin/sh', '-c', '.forge/bin/forge-policy-hook --harness cursor']
    """
    args = handler.get("args")
    if harness in launcher.EXEC_REFS and isinstance(args, list):
        where = project.absolute()
        words = [str(handler.get("command") or ""), *map(str, args)]
        return [launcher.substituted(harness, word, where) for word in words]
    key = harness_config.spec(harness).command_key
    return ["/bin/sh", "-c", str(handler.get(key) or handler.get("command") or "")]


def run_hooks(
    project: Path, harness: str, environ: Mapping[str, str] | None = None
) -> list[HookRun]:
    """Run each configured command of ``harness`` in ``project`` (see the module docstring)."""
    from forge_policy.ops import settings_file

    hook_file = harness_config.spec(harness)
    env = dict(os.environ if environ is None else environ)
    env.update(launcher.hook_env(harness, project.absolute()))
    body = json.dumps(payload(harness, str(project.absolute())))
    runs = []
    for name, event, handler in configured(project, harness):
        command = settings_file.command_line(handler, hook_file.command_key) or str(
            handler.get("command") or ""
        )
        cwd = project
        if isinstance(handler.get("cwd"), str):
            cwd = project / handler["cwd"]
        started = time.monotonic()
        timeout = _timeout(harness, handler)
        spawned = argv(harness, handler, project)
        try:
            done = subprocess.run(
                spawned,
                input=body,
                capture_output=True,
                text=True,
                cwd=cwd,
                env=env,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            detail = f"`{command}` did not answer within {timeout:g} s (the harness gives up)"
            runs.append(HookRun(harness, name, event, command, False, detail, _fix(harness)))
            continue
        except OSError as exc:  # exec form: the program is missing or not executable
            runs.append(_not_started(project, harness, name, event, command, spawned[0], exc))
            continue
        seconds = time.monotonic() - started
        runs.append(_judge(project, harness, name, event, command, done, seconds))
    return runs


def _not_started(
    project: Path, harness: str, name: str, event: str, command: str, program: str, exc: OSError
) -> HookRun:
    """The exec-form program ``program`` could not be spawned (``exc``): Claude Code cannot
    start the hook, which ``onFailure: "block"`` refuses on ``PreToolUse`` (2.1.295 on)."""
    why = f"{exc.strerror or exc}"
    closed = (
        "Claude Code cannot start it and refuses every tool call where the entry says "
        "onFailure: block (2.1.295 on), else lets the call through"
    )
    if program.endswith(launcher.LAUNCHER.as_posix()):
        where = os.path.relpath(program, project.absolute()).replace(os.sep, "/")
        if not os.path.isfile(program):
            return HookRun(
                harness, name, event, command, False,
                f"`{command}` cannot start: the launcher {where} is missing ({why}); {closed}",
                f"{_fix(harness)}, then commit {where}",
            )  # fmt: skip
        return HookRun(
            harness, name, event, command, False,
            f"`{command}` cannot start: the launcher {where} is not executable ({why}); {closed}",
            f"{_fix(harness)} (it makes the launcher executable: commit its mode, git add "
            f"--chmod=+x {where})",
        )  # fmt: skip
    detail = f"`{command}` cannot start on this machine ({why}); {closed}"
    return HookRun(harness, name, event, command, False, detail, _fix(harness))


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0][:300] if lines else "no message"


def _fix(harness: str) -> str:
    return "forge-policy init" + ("" if harness == "claude-code" else f" --harness {harness}")


def _judge(
    project: Path,
    harness: str,
    name: str,
    event: str,
    command: str,
    done: subprocess.CompletedProcess[str],
    seconds: float,
) -> HookRun:
    def failed(detail: str, fix: str) -> HookRun:
        return HookRun(harness, name, event, command, False, detail, fix, seconds)

    code, err = done.returncode, _first_line(done.stderr)
    if code in _NOT_FOUND:
        where = f".forge/{launcher.LAUNCHER.as_posix()}"
        if launcher.LAUNCHER.name in command and not (project / where).is_file():
            return failed(
                f"`{command}` cannot start: the launcher {where} is missing ({err}); {_OPEN}",
                f"{_fix(harness)}, then commit {where}",
            )
        return failed(
            f"`{command}` cannot start on this machine ({err}); {_OPEN}",
            _fix(harness),
        )
    if "forge-policy is not installed on this machine" in done.stderr:  # the launcher's
        return failed(
            f"`{command}` finds no forge-policy on this machine: it refuses every call",
            f"run {_fix(harness)} with this machine's forge-policy (it records it for the "
            "launcher and changes no committed file), or install forge-policy on PATH (pipx "
            "install forge-policy)",
        )
    if code != 0:
        return failed(f"`{command}` exits {code}: {err}", _fix(harness))
    out = done.stdout.strip()
    answer: object = {}
    if out:
        try:
            answer = json.loads(out)
        except ValueError:
            return failed(
                f"`{command}` answers with something that is not JSON: {_first_line(out)}",
                _fix(harness),
            )
    if not isinstance(answer, dict):
        return failed(f"`{command}` answers with JSON that is not an object", _fix(harness))
    if harness == harness_config.PLUGIN_HARNESS and answer.get("decision") not in (
        "allow",
        "deny",
    ):
        return failed(
            f"`{command}` answers without a decision: the plugin refuses every call",
            _fix(harness),
        )
    said = ", refuses `true` (as this project's catalog has it)" if _refuses(answer) else ""
    return HookRun(
        harness, name, event, command, True, f"answers ({seconds:.2f} s){said}", "", seconds
    )


def _refuses(answer: dict[str, Any]) -> bool:
    """Whether a harness answer refuses (any harness's spelling of a deny)."""
    specific = answer.get("hookSpecificOutput")
    decisions = [
        answer.get("decision"),
        answer.get("permission"),
        answer.get("permissionDecision"),
        specific.get("permissionDecision") if isinstance(specific, dict) else None,
    ]
    return any(d in ("deny", "block") for d in decisions) or answer.get("continue") is False
