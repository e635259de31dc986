"""The Gemini CLI adapter (``forge-policy hook --harness gemini``).

Sources, read 2026-12-01: ``google-gemini/gemini-cli`` ``docs/hooks/reference.md`` (commit
06c0d810) and the vetted notes on ``packages/core/src/hooks/types.ts`` / ``hookRunner.ts`` /
``scheduler/hook-utils.ts`` at HEAD 5411f113 (2026-08-21). Gemini CLI is being replaced by
Antigravity CLI for individual users (2026); the hook protocol is unchanged here.

Input: ``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``, ``timestamp``;
``BeforeTool``/``AfterTool`` add ``tool_name`` (``run_shell_command``, ``write_file``,
``replace``, ``read_file``, …; MCP tools ``mcp__<server>__<tool>``, Claude Code's spelling),
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

>>> ev = to_event({"session_id": "s", "hook_event_name": "BeforeTool",
...     "tool_name": "read_file", "tool_input": {"absolute_path": "/p/.env"}})
>>> ev.event_name, ev.tool_name, ev.tool_input["file_path"]
('PreToolUse', 'Read', '/p/.env')
"""

from __future__ import annotations

from forge_policy.harness.common import (
    catalog_event,
    claude_payload,
    dumps,
    native_event,
    text,
    with_aliases,
)
from forge_policy.harness.registry import GEMINI

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.model import Decision, Event

NAME = GEMINI.name
#: Events whose output takes ``hookSpecificOutput.additionalContext``.
CONTEXT_EVENTS = frozenset({"AfterTool", "BeforeAgent", "SessionStart"})
#: Events at which ``decision: "deny"`` blocks.
BLOCK_EVENTS = frozenset({"BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent"})


def normalize(payload: dict[str, Any], event: str = "") -> dict[str, Any]:
    """The Gemini payload in the catalog's vocabulary."""
    native = text(payload, "hook_event_name") or event
    name = catalog_event(GEMINI, native)
    tool = text(payload, "tool_name")
    args = payload.get("tool_input")
    tool_input = with_aliases(args) if isinstance(args, dict) else None
    if tool_input is not None and "include" in tool_input:
        tool_input.setdefault("glob", tool_input["include"])
    fields: dict[str, Any] = {}
    if native == "AfterAgent":
        fields["last_assistant_message"] = payload.get("prompt_response")
    return claude_payload(
        payload,
        harness_event=native,
        event=name,
        session_id=text(payload, "session_id"),
        tool_name=GEMINI.tools.get(tool, tool),
        tool_input=tool_input,
        **fields,
    )


def to_event(payload: dict[str, Any], event: str = "") -> Event:
    """The :class:`~forge_policy.Event` of a Gemini CLI hook payload."""
    from forge_policy.model import Event

    return Event.from_claude_code(normalize(payload, event), harness=NAME)


def render(decision: Decision, event: Event) -> tuple[str, int]:
    """``(stdout, exit code)`` for Gemini CLI (see the module docstring)."""
    from forge_policy.render.outcome import outcome

    said = outcome(decision, can_ask=False, title=GEMINI.title)
    if said is None:
        return "", 0
    name = native_event(event)
    if said.blocked and name in BLOCK_EVENTS:
        reason = said.reason
        if name == "AfterTool":
            reason = f"The tool call already ran, but it broke a policy.\n{reason}"
        return dumps({"decision": "deny", "reason": reason, "systemMessage": said.summary}), 0
    return dumps(advice(name, said.advice or said.reason)), 0


def advice(name: str, message: str) -> dict[str, Any]:
    """``systemMessage``, and ``additionalContext`` where the event takes it."""
    out: dict[str, Any] = {"systemMessage": message}
    if name in CONTEXT_EVENTS:
        out["hookSpecificOutput"] = {"hookEventName": name, "additionalContext": message}
    return out


def failure(event_name: str, on_error: str, problem: str) -> tuple[str, int]:
    """``FORGE_ON_ERROR=deny`` refuses a ``BeforeTool`` call; elsewhere a notice."""
    from forge_policy.render.outcome import error_notice, error_refusal

    if on_error == "deny" and event_name == "BeforeTool":
        reason = error_refusal(problem)
        return dumps({"decision": "deny", "reason": reason, "systemMessage": reason}), 0
    return dumps({"systemMessage": error_notice(on_error, problem)}), 0
