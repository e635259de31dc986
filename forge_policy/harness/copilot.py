"""The GitHub Copilot CLI adapter (``forge-policy hook --harness copilot``).

Why Copilot CLI: of the candidates besides Codex, Gemini and Cursor, it and Antigravity CLI are
the two with a documented command-hook protocol (stdin JSON, stdout decision) and the widest
use; OpenCode has plugin hooks in JavaScript only (``tool.execute.before``), no command hooks
(forge-policy ships a plugin for it: :mod:`forge_policy.harness.opencode`).

Sources, read 2026-12-01: ``github/docs``
``content/copilot/reference/copilot-cli-reference/cli-hooks-reference.md`` (commit 927566b0,
"GitHub Copilot CLI hooks reference"), and the Copilot SDK's ``docs/hooks/pre-tool-use.md``.

Config: ``.github/hooks/*.json``, ``{"version": 1, "hooks": {"preToolUse": [{"type":
"command", "bash": …, "timeoutSec": 30}]}}``. Two payload forms, chosen by how the entry names
the event: camelCase (``preToolUse``: ``sessionId``, ``timestamp``, ``cwd``, ``toolName``,
``toolArgs`` — the arguments, possibly as JSON text — and no event name, so ``forge-policy
init`` writes ``--event preToolUse`` into the command) or PascalCase (``PreToolUse``:
``hook_event_name``, ``session_id``, ``tool_name``, ``tool_input``: Claude Code's shape). Tools:
``bash`` → ``Bash``, ``view`` → ``Read``, ``create`` → ``Write``, ``edit`` → ``Edit``
(``path``/``old_str``/``new_str`` get Claude Code's names too), ``glob``, ``grep``, ``task``
→ ``Agent``, ``web_fetch``.

Output, exit 0 with JSON: ``preToolUse`` ``{"permissionDecision": "deny" | "ask",
"permissionDecisionReason": …}`` (the reason is shown to the agent); ``agentStop`` /
``subagentStop`` ``{"decision": "block", "reason": …}`` (another turn with the reason as its
prompt); ``permissionRequest`` ``{"behavior": "deny", "message": …}``. Copilot processes no
other output: ``userPromptSubmitted`` cannot be refused, and nudges and warnings have no field
that shows them (they are counted and audited). Copilot CLI fails open: "hook failures
(non-zero exit codes or timeouts) are logged and skipped".

Subagents (issue 27): Copilot CLI names the agent (``agentName``, read as the event's
``agent``, which ``applies_to.agents`` matches) but gives no subagent id: every call counts on
the root thread's share of the session.

>>> from forge_policy.harness.registry import get
>>> to_event = get("copilot").adapter.to_event
>>> ev = to_event({"sessionId": "s1", "timestamp": 1, "cwd": "/p", "toolName": "bash",
...     "toolArgs": '{"command": "rm -rf /", "description": "x"}'}, "preToolUse")
>>> ev.event_name, ev.tool_name, ev.tool_input["command"], ev.session_id
('PreToolUse', 'Bash', 'rm -rf /', 's1')
"""

from __future__ import annotations

from forge_policy.harness.common import CommandHookAdapter, arguments, text, with_aliases

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.render.outcome import Outcome

PRE_TOOL = frozenset({"preToolUse", "PreToolUse"})
STOP_EVENTS = frozenset({"agentStop", "Stop", "subagentStop", "SubagentStop"})


class CopilotAdapter(CommandHookAdapter):
    """GitHub Copilot CLI: camelCase or Claude-like payloads (``to_event``'s ``event`` names
    the event a camelCase payload leaves out); only blocks are answered."""

    __slots__ = ()

    def fields(self, payload: dict[str, Any], native: str, event: str) -> dict[str, Any]:
        tool = text(payload, "toolName", "tool_name")
        args: dict[str, Any] | None = None
        if tool:
            raw = payload["toolArgs"] if "toolArgs" in payload else payload.get("tool_input")
            field = "toolArgs" if "toolArgs" in payload else "tool_input"
            args = with_aliases(arguments(raw, field))
        fields: dict[str, Any] = {
            "session_id": text(payload, "sessionId", "session_id"),
            "cwd": text(payload, "cwd"),
            "transcript_path": text(payload, "transcriptPath", "transcript_path"),
            "tool_name": self.harness.tools.get(tool, tool),
            "tool_input": args,
        }
        if event in ("Stop", "SubagentStop"):
            fields["stop_hook_active"] = False  # Copilot does not say; its reason is "end_turn"
        agent = text(payload, "agentName", "agent_name")
        if agent:
            fields["agent_type"] = agent
        return fields

    def refusal(self, name: str, said: Outcome) -> dict[str, Any] | None:
        """Blocks only: no output field shows advice (it is counted and audited)."""
        if name in PRE_TOOL:
            decision = "ask" if said.ask else "deny"
            return {"permissionDecision": decision, "permissionDecisionReason": said.reason}
        if name in STOP_EVENTS:
            return {"decision": "block", "reason": said.reason}
        if name == "permissionRequest":
            return {"behavior": "deny", "message": said.reason}
        return None  # this event's output is not processed: Copilot cannot be refused here

    def error_refusal(self, name: str, reason: str) -> dict[str, Any] | None:
        """``FORGE_ON_ERROR=deny`` refuses a tool call; elsewhere Copilot shows nothing."""
        if name in PRE_TOOL:
            return {"permissionDecision": "deny", "permissionDecisionReason": reason}
        if name == "permissionRequest":
            return {"behavior": "deny", "message": reason}
        return None
