"""The OpenCode adapter (``forge-policy hook --harness opencode``).

OpenCode has no command hooks: its hooks are JavaScript/TypeScript plugins, loaded from
``.opencode/plugins/`` (project) and ``~/.config/opencode/plugins/`` (global) at startup, or
named in ``opencode.json``'s ``plugin`` list (opencode.ai/docs/plugins, read 2026-12-02). A
plugin is an async function ``({project, client, $, directory, worktree}) => hooks``; forge-policy
ships one (:mod:`forge_policy.ops.opencode_plugin`, the file
``forge_policy/harness/assets/opencode-plugin.js``) that hands each tool call to this hook and
does what the answer says. The wire format below is therefore forge-policy's own, between that
plugin and this adapter.

Sources, read 2026-12-02: ``anomalyco/opencode`` (formerly ``sst/opencode``)
``packages/plugin/src/index.ts`` at 0d4d22f4 (the ``Hooks`` interface:
``"tool.execute.before"(input: {tool, sessionID, callID}, output: {args})``,
``"tool.execute.after"(input: {tool, sessionID, callID, args}, output: {title, output,
metadata})``, ``"chat.message"(input: {sessionID, agent?, …})``, ``event({event})``) and
``packages/opencode/src/session/tools.ts`` at 03eeb9f1 (where they fire: ``before`` ahead of
OpenCode's own permission check, with the very ``args`` object the tool then runs with; an
error thrown by a hook rejects the tool call and reaches the model as the tool's error;
``after`` only when the tool succeeded, anomalyco/opencode#27900). MCP tools are named
``<server>_<tool>`` with ``[^a-zA-Z0-9_-]`` replaced by ``_`` (``packages/opencode/src/mcp``).

Input, one JSON object on stdin: ``hook_event_name`` (``tool.execute.before`` or
``tool.execute.after``), ``tool`` (OpenCode's tool name), ``tool_input`` (its ``args``, in
OpenCode's names: the floor's rewrite hands them back with only the command replaced),
``sessionID``, ``callID``, ``directory`` (the project folder), and where the plugin knows them
``agent`` (the agent of the session, from ``chat.message``), ``rootSessionID`` (the session
that started this one through the ``task`` tool, from ``session.created`` events' ``parentID``)
and ``mcpServers`` (the MCP server names of OpenCode's config);
after the call also ``output`` (the tool's text, cut at 64 KiB: an MCP tool's text parts) and
``title``.

Tools map onto the catalog's: ``bash`` → ``Bash``, ``read`` → ``Read``, ``write`` → ``Write``,
``edit`` → ``Edit``, ``multiedit`` → ``MultiEdit``, ``glob``, ``grep``, ``list`` → ``LS``,
``webfetch`` → ``WebFetch``, ``websearch`` → ``WebSearch``, ``task`` → ``Agent`` (as Codex's,
Cursor's and Copilot's subagent tools), ``todowrite`` → ``TodoWrite``; ``patch`` and
``apply_patch`` (``patchText`` in Codex's patch format) become ``Write`` or ``Edit`` by what the
patch does, read as Codex's ``apply_patch`` is (:func:`forge_policy.harness.codex._patch`).
Arguments get Claude Code's names beside OpenCode's (``filePath`` → ``file_path``,
``oldString`` → ``old_string``, ``newString`` → ``new_string``, ``replaceAll`` →
``replace_all``, ``include`` → ``glob``); ``bash``'s ``workdir`` is the folder the command runs
in. A subagent's calls (a child session with a ``rootSessionID``) count in the root session,
with ``agent_id`` (the child session) and ``agent_type`` (its agent), as Claude Code reports a
subagent's. An MCP tool, ``<server>_<tool>``, is ``mcp__<server>__<tool>`` when ``mcpServers``
(the server names of OpenCode's merged config, which the plugin reads in its ``config`` hook)
names a server that starts it (:func:`mcp_tool`); without that list, or for a tool no
configured server starts, the name stays OpenCode's (both halves may hold ``_``, so it cannot
be split by itself).

Output, always exit 0 with one JSON object, which the plugin reads strictly (anything else, a
non-zero exit, a crash or a timeout refuses the call): ``{"decision": "allow"}``, optionally
with ``message`` (a nudge or a warning: the plugin appends it to the tool's output after the
call, the one text of a successful call the model reads; to an MCP tool's result, one more text
part of its ``content``) and ``args`` (the arguments to run the
call with: SPEC §13's floor; the plugin sets them on OpenCode's ``args`` object in place), or
``{"decision": "deny", "reason": …, "summary": …}`` (before the call: the plugin throws an
``Error`` with ``reason``, which the model reads as the tool's failure). After the call a broken
rule cannot be undone: it is an allow whose ``message`` says so. OpenCode's ``permission.ask``
hook only answers prompts OpenCode itself raises, so a plugin cannot ask the user about a call:
a block the user would approve is a deny naming the override command, as under Codex.

>>> from forge_policy.harness.registry import get
>>> to_event = get("opencode").adapter.to_event
>>> ev = to_event({"hook_event_name": "tool.execute.before", "tool": "edit",
...     "sessionID": "ses_1", "callID": "call_1", "directory": "/p",
...     "tool_input": {"filePath": "/p/a.py", "oldString": "x", "newString": "y"}})
>>> ev.event_name, ev.tool_name, ev.tool_input["file_path"], ev.tool_input["old_string"]
('PreToolUse', 'Edit', '/p/a.py', 'x')
>>> ev.session_id, ev.tool_use_id
('ses_1', 'call_1')
"""

from __future__ import annotations

import re

from forge_policy.harness.common import CommandHookAdapter, arguments, mcp_name, text, with_aliases

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.render.outcome import Outcome

#: The event before a call (the one that can refuse it or change its arguments), and after it.
BEFORE = "tool.execute.before"
AFTER = "tool.execute.after"
#: OpenCode's argument names → Claude Code's (beside :data:`common.ALIASES`, which has
#: ``filePath``).
ALIASES = {
    "oldString": "old_string",
    "newString": "new_string",
    "replaceAll": "replace_all",
    "include": "glob",
}
#: OpenCode's patch tools: their ``patchText`` is Codex's patch format.
PATCH_TOOLS = frozenset({"patch", "apply_patch"})
#: The most of a tool's output the plugin sends after a call (it cuts it there).
OUTPUT_LIMIT = 64 * 1024
_AFTER_NOTE = "The tool call already ran, but it broke a policy.\n"


def opencode_args(args: dict[str, Any]) -> dict[str, Any]:
    """``args`` with Claude Code's names added beside OpenCode's (``multiedit``'s ``edits``
    too).

    >>> opencode_args({"filePath": "a", "edits": [{"oldString": "x", "newString": "y"}]})
    ... # doctest: +NORMALIZE_WHITESPACE
    {'filePath': 'a', 'edits': [{'oldString': 'x', 'newString': 'y', 'old_string': 'x',
     'new_string': 'y'}], 'file_path': 'a'}
    """
    out = with_aliases(args)
    for name, value in args.items():
        target = ALIASES.get(name)
        if target is not None and target not in out:
            out[target] = value
    edits = out.get("edits")
    if isinstance(edits, list):
        out["edits"] = [opencode_args(e) if isinstance(e, dict) else e for e in edits]
    return out


def mcp_tool(tool: str, servers: object) -> str | None:
    """Claude Code's name (``mcp__<server>__<tool>``) of OpenCode's MCP tool ``tool``, read
    against the configured server names ``servers`` (OpenCode names the tool
    ``<server>_<tool>``, each half with ``[^a-zA-Z0-9_-]`` replaced by ``_``); the longest
    server whose name starts the tool wins. None when no server's does.

    >>> mcp_tool("github_create_issue", ["git", "github"])
    'mcp__github__create_issue'
    >>> mcp_tool("my.fs_write_file", ["my.fs"]), mcp_tool("bash", ["github"])
    (None, None)
    >>> mcp_tool("my_fs_write_file", ["my.fs"])
    'mcp__my.fs__write_file'
    """
    best: tuple[str, str] | None = None
    for server in servers if isinstance(servers, list) else []:
        if not isinstance(server, str) or not server:
            continue
        prefix = re.sub(r"[^a-zA-Z0-9_-]", "_", server) + "_"
        longer = best is None or len(prefix) > len(best[0])
        if longer and len(tool) > len(prefix) and tool.startswith(prefix):
            best = (prefix, server)
    return None if best is None else mcp_name(best[1], tool[len(best[0]) :])


class OpenCodeAdapter(CommandHookAdapter):
    """OpenCode, through forge-policy's plugin: its tool names, a child session's calls counted
    in the root session; every answer is an explicit ``decision`` the plugin acts on."""

    __slots__ = ()

    def fields(self, payload: dict[str, Any], native: str, event: str) -> dict[str, Any]:
        tool = text(payload, "tool")
        args = opencode_args(arguments(payload.get("tool_input"), "tool_input"))
        if tool in PATCH_TOOLS:
            from forge_policy.harness.codex import _patch

            patch = args.get("patchText")
            name, args = _patch({**args, "patch": patch} if isinstance(patch, str) else args)
        elif tool in self.harness.tools:
            name = self.harness.tools[tool]
        else:
            name = mcp_tool(tool, payload.get("mcpServers")) or tool
        own = text(payload, "sessionID")
        root = text(payload, "rootSessionID") or own
        fields: dict[str, Any] = {
            "session_id": root,
            "cwd": text(payload, "directory"),
            "tool_name": name,
            "tool_input": args,
            "tool_use_id": text(payload, "callID"),
        }
        if own and root != own:  # a subagent's call: Claude Code's fields for it
            fields["agent_id"] = own
            fields["agent_type"] = text(payload, "agent") or None
        if native != BEFORE:
            fields["tool_response"] = payload.get("output")
        return fields

    def silence(self, name: str) -> dict[str, Any]:
        """An explicit allow: the plugin refuses a call whose answer says nothing."""
        return {"decision": "allow"}

    def advice(self, name: str, said: Outcome) -> dict[str, Any]:
        return {"decision": "allow", "message": said.advice or said.reason}

    def refusal(self, name: str, said: Outcome) -> dict[str, Any]:
        if name != BEFORE:
            return {"decision": "allow", "message": _AFTER_NOTE + said.reason}
        return {"decision": "deny", "reason": said.reason, "summary": said.summary}

    def rewrite(self, name: str, said: Outcome | None, new_input: dict[str, Any]) -> dict[str, Any]:
        """An allow with ``args``: the plugin sets each of them that the call has on OpenCode's
        own ``args`` object (the one the tool runs with), the nudge or warning kept."""
        out = self.advice(name, said) if said is not None and said.advice else self.silence(name)
        out["args"] = new_input
        return out

    def error_refusal(self, name: str, reason: str) -> dict[str, Any] | None:
        """``FORGE_ON_ERROR=deny`` refuses the call at any event but ``tool.execute.after``
        (one the plugin does not send, or none, is read as before the call: fail closed)."""
        if name == AFTER:
            return None
        return {"decision": "deny", "reason": reason, "summary": reason}

    def error_notice(self, name: str, notice: str) -> dict[str, Any]:
        return {"decision": "allow", "message": notice}
