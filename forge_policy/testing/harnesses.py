"""Builders of valid hook payloads of the other coding-agent CLIs, in each one's real shape (see
the adapters in :mod:`forge_policy.harness`), and their events as the hook builds them.

Each ``<harness>_payload`` takes the harness's own tool name and argument names; each
``<harness>_event`` runs the payload through that harness's adapter, as ``forge-policy hook
--harness <harness>`` does. :func:`native_call` translates a call in the catalog's vocabulary
(``Bash`` with ``command``) into a harness's own (Gemini's ``run_shell_command``, Copilot's
``bash``, Antigravity's ``run_command`` with ``CommandLine``).

>>> ev = codex_event("Bash", command="git push -f")
>>> ev.harness, ev.event_name, ev.tool_name, ev.tool_input["command"]
('codex', 'PreToolUse', 'Bash', 'git push -f')
>>> gemini_event("write_file", file_path="/p/a.py", content="x").tool_name
'Write'
>>> cursor_payload("Shell", event="beforeShellExecution", command="ls")["command"]
'ls'
>>> copilot_payload("bash", command="ls")["toolArgs"]
'{"command": "ls"}'
>>> antigravity_event("view_file", AbsolutePath="/p/.env").tool_input["file_path"]
'/p/.env'
>>> native_call("copilot", "Edit", {"file_path": "/a", "old_string": "x", "new_string": "y"})
('edit', {'path': '/a', 'old_str': 'x', 'new_str': 'y'})
>>> opencode_event("write", filePath="/p/a.py", content="x").tool_name
'Write'
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from forge_policy.model import Event

DEFAULT_SESSION = "test-session"
DEFAULT_CWD = "/home/user/project"
_TIMESTAMP = "2026-12-01T12:00:00.000Z"
_ids = itertools.count(1)

#: Per harness, catalog tool → (the harness's tool, catalog argument → the harness's argument).
NATIVE: dict[str, dict[str, tuple[str, dict[str, str]]]] = {
    "codex": {"Bash": ("Bash", {"command": "command"})},
    "gemini": {
        "Bash": ("run_shell_command", {"command": "command"}),
        "Read": ("read_file", {"file_path": "absolute_path"}),
        "Write": ("write_file", {"file_path": "file_path", "content": "content"}),
        "Edit": (
            "replace",
            {"file_path": "file_path", "old_string": "old_string", "new_string": "new_string"},
        ),
        "Grep": ("search_file_content", {"pattern": "pattern"}),
        "Glob": ("glob", {"pattern": "pattern"}),
    },
    "cursor": {
        "Bash": ("Shell", {"command": "command"}),
        "Read": ("Read", {"file_path": "file_path"}),
        "Write": ("Write", {"file_path": "file_path", "content": "contents"}),
        "Grep": ("Grep", {"pattern": "pattern"}),
    },
    "copilot": {
        "Bash": ("bash", {"command": "command"}),
        "Read": ("view", {"file_path": "path"}),
        "Write": ("create", {"file_path": "path", "content": "file_text"}),
        "Edit": ("edit", {"file_path": "path", "old_string": "old_str", "new_string": "new_str"}),
        "Grep": ("grep", {"pattern": "pattern"}),
        "Glob": ("glob", {"pattern": "pattern"}),
    },
    "opencode": {
        "Bash": ("bash", {"command": "command"}),
        "Read": ("read", {"file_path": "filePath"}),
        "Write": ("write", {"file_path": "filePath", "content": "content"}),
        "Edit": (
            "edit",
            {"file_path": "filePath", "old_string": "oldString", "new_string": "newString"},
        ),
        "Grep": ("grep", {"pattern": "pattern"}),
        "Glob": ("glob", {"pattern": "pattern"}),
    },
    "antigravity": {
        "Bash": ("run_command", {"command": "CommandLine"}),
        "Read": ("view_file", {"file_path": "AbsolutePath"}),
        "Write": ("write_to_file", {"file_path": "TargetFile", "content": "CodeContent"}),
        "Grep": ("grep_search", {"pattern": "Query"}),
        "Glob": ("find_by_name", {"pattern": "Pattern"}),
    },
}


def native_call(harness: str, tool: str, tool_input: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(tool, arguments)`` as ``harness`` names them, for a call in the catalog's vocabulary
    (``KeyError`` for a tool the table above does not cover for that harness)."""
    name, keys = NATIVE[harness][tool]
    return name, {keys.get(key, key): value for key, value in tool_input.items()}


def _event(harness: str, payload: dict[str, Any], event: str = "") -> Event:
    from forge_policy.harness.registry import get

    return get(harness).adapter.to_event(payload, event)


def _call_id(prefix: str) -> str:
    return f"{prefix}{next(_ids):06d}"


def codex_payload(
    tool: str = "Bash",
    *,
    event: str = "PreToolUse",
    session_id: str = DEFAULT_SESSION,
    cwd: str = DEFAULT_CWD,
    permission_mode: str = "default",
    prompt: str | None = None,
    tool_response: object = None,
    **tool_input: Any,
) -> dict[str, Any]:
    """A Codex CLI hook payload (``PreToolUse`` by default; ``UserPromptSubmit`` takes
    ``prompt``, ``Stop`` gets ``stop_hook_active``)."""
    payload: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": f"/home/user/.codex/sessions/{session_id}.jsonl",
        "cwd": cwd,
        "hook_event_name": event,
        "model": "gpt-5-codex",
        "permission_mode": permission_mode,
        "turn_id": "turn-1",
    }
    if event in ("PreToolUse", "PostToolUse", "PermissionRequest"):
        payload.update(tool_name=tool, tool_input=dict(tool_input))
        if event != "PermissionRequest":
            payload["tool_use_id"] = _call_id("call_")
        if event == "PostToolUse":
            payload["tool_response"] = "" if tool_response is None else tool_response
    elif event == "UserPromptSubmit":
        payload["prompt"] = prompt or ""
    elif event in ("Stop", "SubagentStop"):
        payload.update(stop_hook_active=False, last_assistant_message="done")
    elif event == "SessionStart":
        payload["source"] = "startup"
    return payload


def codex_event(tool: str = "Bash", **kwargs: Any) -> Event:
    """The event of :func:`codex_payload` as ``forge-policy hook --harness codex`` builds it."""
    return _event("codex", codex_payload(tool, **kwargs))


def gemini_payload(
    tool: str = "run_shell_command",
    *,
    event: str = "BeforeTool",
    session_id: str = DEFAULT_SESSION,
    cwd: str = DEFAULT_CWD,
    prompt: str | None = None,
    tool_response: object = None,
    **tool_input: Any,
) -> dict[str, Any]:
    """A Gemini CLI hook payload (``BeforeTool`` by default; ``BeforeAgent``/``AfterAgent``
    take ``prompt``)."""
    payload: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": f"/home/user/.gemini/tmp/{session_id}/chats/session.json",
        "cwd": cwd,
        "hook_event_name": event,
        "timestamp": _TIMESTAMP,
    }
    if event in ("BeforeTool", "AfterTool"):
        payload.update(tool_name=tool, tool_input=dict(tool_input))
        if event == "AfterTool":
            response = {"llmContent": "", "returnDisplay": ""}
            payload["tool_response"] = response if tool_response is None else tool_response
    elif event in ("BeforeAgent", "AfterAgent"):
        payload["prompt"] = prompt or ""
        if event == "AfterAgent":
            payload.update(prompt_response="done", stop_hook_active=False)
    elif event == "SessionStart":
        payload["source"] = "startup"
    return payload


def gemini_event(tool: str = "run_shell_command", **kwargs: Any) -> Event:
    """The event of :func:`gemini_payload` as ``forge-policy hook --harness gemini`` builds it."""
    return _event("gemini", gemini_payload(tool, **kwargs))


def cursor_payload(
    tool: str = "Shell",
    *,
    event: str = "preToolUse",
    session_id: str = DEFAULT_SESSION,
    cwd: str = DEFAULT_CWD,
    prompt: str | None = None,
    **tool_input: Any,
) -> dict[str, Any]:
    """A Cursor hook payload (``preToolUse`` by default); ``beforeShellExecution`` and
    ``beforeReadFile`` carry their ``command`` / ``file_path`` at the top level, as Cursor
    sends them; ``beforeSubmitPrompt`` takes ``prompt``."""
    payload: dict[str, Any] = {
        "conversation_id": session_id,
        "generation_id": _call_id("gen-"),
        "model": "claude-sonnet-4",
        "hook_event_name": event,
        "cursor_version": "2.4.0",
        "workspace_roots": [cwd],
        "user_email": None,
        "transcript_path": None,
    }
    if event in ("preToolUse", "postToolUse"):
        payload.update(tool_name=tool, tool_input=dict(tool_input), cwd=cwd)
        payload["tool_use_id"] = _call_id("tool_")
        if event == "postToolUse":
            payload.update(tool_output="{}", duration=12)
    elif event in ("beforeShellExecution", "afterShellExecution"):
        payload.update(command=tool_input.get("command", ""), cwd=cwd, sandbox=False)
        if event == "afterShellExecution":
            payload.update(output="", duration=12)
    elif event == "beforeReadFile":
        payload.update(file_path=tool_input.get("file_path", ""), content="", attachments=[])
    elif event == "beforeSubmitPrompt":
        payload.update(prompt=prompt or "", attachments=[])
    elif event == "stop":
        payload.update(status="completed", loop_count=0)
    elif event == "sessionStart":
        payload.update(session_id=session_id, is_background_agent=False)
    return payload


def cursor_event(tool: str = "Shell", **kwargs: Any) -> Event:
    """The event of :func:`cursor_payload` as ``forge-policy hook --harness cursor`` builds it."""
    return _event("cursor", cursor_payload(tool, **kwargs))


def copilot_payload(
    tool: str = "bash",
    *,
    event: str = "preToolUse",
    session_id: str = DEFAULT_SESSION,
    cwd: str = DEFAULT_CWD,
    prompt: str | None = None,
    **tool_input: Any,
) -> dict[str, Any]:
    """A GitHub Copilot CLI hook payload in the camelCase form (``preToolUse`` by default,
    ``toolArgs`` as JSON text; ``userPromptSubmitted`` takes ``prompt``). The camelCase form
    does not name its event: pass ``event`` to :func:`copilot_event` / ``--event`` too."""
    payload: dict[str, Any] = {"sessionId": session_id, "timestamp": 1764590400000, "cwd": cwd}
    if event in ("preToolUse", "postToolUse", "permissionRequest"):
        payload.update(toolName=tool, toolArgs=json.dumps(dict(tool_input)))
        if event == "postToolUse":
            payload["toolResult"] = {"resultType": "success", "textResultForLlm": ""}
    elif event == "userPromptSubmitted":
        payload["prompt"] = prompt or ""
    elif event == "agentStop":
        payload.update(transcriptPath=f"/home/user/.copilot/{session_id}.jsonl")
        payload["stopReason"] = "end_turn"
    elif event == "sessionStart":
        payload["source"] = "new"
    return payload


def copilot_event(tool: str = "bash", *, event: str = "preToolUse", **kwargs: Any) -> Event:
    """The event of :func:`copilot_payload` as ``forge-policy hook --harness copilot --event
    EVENT`` builds it."""
    return _event("copilot", copilot_payload(tool, event=event, **kwargs), event)


def antigravity_payload(
    tool: str = "run_command",
    *,
    session_id: str = DEFAULT_SESSION,
    cwd: str = DEFAULT_CWD,
    step: int | None = None,
    **args: Any,
) -> dict[str, Any]:
    """An Antigravity CLI ``PreToolUse``/``PostToolUse`` payload (the same shape; it does not
    name its event: pass ``event`` to :func:`antigravity_event` / ``--event``)."""
    return {
        "conversationId": session_id,
        "stepIdx": next(_ids) if step is None else step,
        "toolCall": {"name": tool, "args": dict(args)},
        "transcriptPath": f"/home/user/.gemini/antigravity/brain/{session_id}/transcript.jsonl",
        "workspacePaths": [cwd],
        "artifactDirectoryPath": f"/home/user/.gemini/antigravity/brain/{session_id}",
    }


def antigravity_event(
    tool: str = "run_command", *, event: str = "PreToolUse", **kwargs: Any
) -> Event:
    """The event of :func:`antigravity_payload` as ``forge-policy hook --harness antigravity
    --event EVENT`` builds it."""
    return _event("antigravity", antigravity_payload(tool, **kwargs), event)


def opencode_payload(
    tool: str = "bash",
    *,
    event: str = "tool.execute.before",
    session_id: str = DEFAULT_SESSION,
    cwd: str = DEFAULT_CWD,
    output: str | None = None,
    **args: Any,
) -> dict[str, Any]:
    """What forge-policy's OpenCode plugin sends (:mod:`forge_policy.harness.opencode`):
    ``tool.execute.before`` by default; ``tool.execute.after`` gets ``output``."""
    payload: dict[str, Any] = {
        "hook_event_name": event,
        "tool": tool,
        "tool_input": dict(args),
        "sessionID": session_id,
        "callID": _call_id("toolu_"),
        "directory": cwd,
    }
    if event == "tool.execute.after":
        payload.update(output="" if output is None else output, title=tool)
    return payload


def opencode_event(tool: str = "bash", **kwargs: Any) -> Event:
    """The event of :func:`opencode_payload` as ``forge-policy hook --harness opencode``
    builds it."""
    return _event("opencode", opencode_payload(tool, **kwargs))
