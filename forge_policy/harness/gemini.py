"""The Gemini CLI adapter (``forge-policy hook --harness gemini``).

Sources, read 2026-12-01: ``google-gemini/gemini-cli`` ``docs/hooks/reference.md`` (commit
06c0d810) and the vetted notes on ``packages/core/src/hooks/types.ts`` / ``hookRunner.ts`` /
``scheduler/hook-utils.ts`` at HEAD 5411f113 (2026-08-21). Gemini CLI is being replaced by
Antigravity CLI for individual users (2026); the hook protocol is unchanged here.

Input: ``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``, ``timestamp``;
``BeforeTool``/``AfterTool`` add ``tool_name`` (``run_shell_command``, ``write_file``,
``replace``, ``read_file``, …; MCP tools ``mcp_<server>_<tool>`` with ``mcp_context``, read
as ``mcp__<server>__<tool>``, Claude Code's spelling: :func:`_mcp_tool`),
``tool_input`` and (after) ``tool_response``; ``BeforeAgent`` ``prompt``; ``AfterAgent``
``prompt``, ``prompt_response``, ``stop_hook_active``. Events map ``BeforeTool`` →
``PreToolUse``, ``AfterTool`` → ``PostToolUse``, ``BeforeAgent`` → ``UserPromptSubmit``,
``AfterAgent`` → ``Stop``, ``PreCompress`` → ``PreCompact``.

Output, exit 0 with JSON: a block is ``{"decision": "deny", "reason": …}`` (at ``BeforeTool``
the reason goes to the agent as the tool's error; ``BeforeAgent`` discards the prompt;
``AfterAgent`` retries with the reason as the next prompt; ``AfterTool`` replaces the result),
plus ``systemMessage`` for the user. Advice is ``systemMessage``, and
``hookSpecificOutput.additionalContext`` where documented (``AfterTool``, ``BeforeAgent``,
``SessionStart``). ``decision: "ask"`` is honored by the source but not documented, so a block
the user would approve is a deny naming the override command. Exit 1 is only a warning in
Gemini CLI (fail-open); this hook never exits 1.

A shell call forge_policy's own floor holds (SPEC §13) is let through rewritten:
``hookSpecificOutput: {hookEventName: "BeforeTool", tool_input}`` "merges with and overrides"
the arguments (``docs/hooks/reference.md`` at 06c0d810, read 2026-12-01).

Subagents (issue 27): Gemini CLI's hook inputs (``HookInput``, harness-protocols.md §3.2) name
no subagent or agent type, and it has no subagent events: every call is the session's root
thread.

>>> from forge_policy.harness.registry import get
>>> to_event = get("gemini").adapter.to_event
>>> ev = to_event({"session_id": "s", "hook_event_name": "BeforeTool",
...     "tool_name": "read_file", "tool_input": {"absolute_path": "/p/.env"}})
>>> ev.event_name, ev.tool_name, ev.tool_input["file_path"]
('PreToolUse', 'Read', '/p/.env')
"""

from __future__ import annotations

from forge_policy.harness.common import CommandHookAdapter, mcp_name, text, with_aliases

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.render.outcome import Outcome

#: Events whose output takes ``hookSpecificOutput.additionalContext``.
CONTEXT_EVENTS = frozenset({"AfterTool", "BeforeAgent", "SessionStart"})
#: Events at which ``decision: "deny"`` blocks.
BLOCK_EVENTS = frozenset({"BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent"})


class GeminiAdapter(CommandHookAdapter):
    """Gemini CLI: its own event and tool names; ``decision: "deny"`` blocks, ``systemMessage``
    (and ``additionalContext`` where documented) advises."""

    __slots__ = ()

    def fields(self, payload: dict[str, Any], native: str, event: str) -> dict[str, Any]:
        tool = text(payload, "tool_name")
        args = payload.get("tool_input")
        tool_input = with_aliases(args) if isinstance(args, dict) else None
        if tool_input is not None and "include" in tool_input:
            tool_input.setdefault("glob", tool_input["include"])
        fields: dict[str, Any] = {
            "session_id": text(payload, "session_id"),
            "tool_name": _mcp_tool(payload, tool) or self.harness.tools.get(tool, tool),
            "tool_input": tool_input,
        }
        if native == "AfterAgent":
            fields["last_assistant_message"] = payload.get("prompt_response")
        return fields

    def advice(self, name: str, said: Outcome) -> dict[str, Any]:
        return _advice(name, said.advice or said.reason)

    def refusal(self, name: str, said: Outcome) -> dict[str, Any]:
        if name not in BLOCK_EVENTS:
            return self.advice(name, said)
        reason = said.reason
        if name == "AfterTool":
            reason = f"The tool call already ran, but it broke a policy.\n{reason}"
        return {"decision": "deny", "reason": reason, "systemMessage": said.summary}

    def rewrite(self, name: str, said: Outcome | None, new_input: dict[str, Any]) -> dict[str, Any]:
        """``hookSpecificOutput.tool_input`` (merged over the call's arguments; no
        ``decision``, so Gemini CLI's own confirmation flow is unchanged), with the nudge or
        warning as ``systemMessage``."""
        out = _advice(name, said.advice) if said is not None and said.advice else {}
        out["hookSpecificOutput"] = {"hookEventName": name, "tool_input": new_input}
        return out

    def error_refusal(self, name: str, reason: str) -> dict[str, Any] | None:
        """``FORGE_ON_ERROR=deny`` refuses a ``BeforeTool`` call."""
        if name == "BeforeTool":
            return {"decision": "deny", "reason": reason, "systemMessage": reason}
        return None

    def error_notice(self, name: str, notice: str) -> dict[str, Any]:
        return {"systemMessage": notice}


def _mcp_tool(payload: dict[str, Any], tool: str) -> str:
    """The catalog name (``mcp__<server>__<tool>``) of an MCP tool call, ``""`` for any other.

    Gemini CLI names MCP tools ``mcp_<server>_<tool>`` (``mcp-tool.ts``:
    ``MCP_TOOL_PREFIX = 'mcp_'``, ``MCP_QUALIFIED_NAME_SEPARATOR = '_'``; older builds
    ``<server>__<tool>``), which cannot be split when the server's name holds a ``_``, so
    ``mcp_context`` (``server_name`` and the server's own ``tool_name``, sent with every MCP
    call's ``BeforeTool``/``AfterTool``) decides. Without it, ``mcp_<a>_<b…>`` is split at
    its first ``_`` (server ``a``), a guess documented in ``docs/how-to/mcp-tools.md``.

    >>> _mcp_tool({"mcp_context": {"server_name": "my_fs", "tool_name": "write_file"}},
    ...           "mcp_my_fs_write_file")
    'mcp__my_fs__write_file'
    >>> _mcp_tool({}, "mcp_github_create_issue"), _mcp_tool({}, "read_file")
    ('mcp__github__create_issue', '')
    """
    context = payload.get("mcp_context")
    if isinstance(context, dict):
        server, name = context.get("server_name"), context.get("tool_name")
        if isinstance(server, str) and server and isinstance(name, str) and name:
            return mcp_name(server, name)
    if tool.startswith("mcp__"):
        return tool  # already the catalog's spelling
    if tool.startswith("mcp_"):
        server, _, name = tool[len("mcp_") :].partition("_")
        if server and name:
            return mcp_name(server, name)
    return ""


def _advice(name: str, message: str) -> dict[str, Any]:
    """``systemMessage``, and ``additionalContext`` where the event takes it."""
    out: dict[str, Any] = {"systemMessage": message}
    if name in CONTEXT_EVENTS:
        out["hookSpecificOutput"] = {"hookEventName": name, "additionalContext": message}
    return out
