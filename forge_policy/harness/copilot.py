"""The GitHub Copilot CLI adapter (``forge-policy hook --harness copilot``).

Why Copilot CLI: of the candidates besides Codex, Gemini and Cursor, it and Antigravity CLI are
the two with a documented command-hook protocol (stdin JSON, stdout decision) and the widest
use; OpenCode has plugin hooks in JavaScript only (``tool.execute.before``), no command hooks.

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

>>> ev = to_event({"sessionId": "s1", "timestamp": 1, "cwd": "/p", "toolName": "bash",
...     "toolArgs": '{"command": "rm -rf /", "description": "x"}'}, "preToolUse")
>>> ev.event_name, ev.tool_name, ev.tool_input["command"], ev.session_id
('PreToolUse', 'Bash', 'rm -rf /', 's1')
"""

from __future__ import annotations

from forge_policy.harness.common import (
    arguments,
    catalog_event,
    claude_payload,
    dumps,
    native_event,
    text,
    with_aliases,
)
from forge_policy.harness.registry import COPILOT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.model import Decision, Event

NAME = COPILOT.name
PRE_TOOL = frozenset({"preToolUse", "PreToolUse"})
STOP_EVENTS = frozenset({"agentStop", "Stop", "subagentStop", "SubagentStop"})


def normalize(payload: dict[str, Any], event: str = "") -> dict[str, Any]:
    """The Copilot CLI payload (either form) in the catalog's vocabulary."""
    native = event or text(payload, "hook_event_name")
    name = catalog_event(COPILOT, native)
    tool = text(payload, "toolName", "tool_name")
    args: dict[str, Any] | None = None
    if tool:
        raw = payload["toolArgs"] if "toolArgs" in payload else payload.get("tool_input")
        args = with_aliases(arguments(raw, "toolArgs" if "toolArgs" in payload else "tool_input"))
    fields: dict[str, Any] = {}
    if name in ("Stop", "SubagentStop"):
        fields["stop_hook_active"] = False  # Copilot does not say; its reason is "end_turn"
    agent = text(payload, "agentName", "agent_name")
    if agent:
        fields["agent_type"] = agent
    return claude_payload(
        payload,
        harness_event=native,
        event=name,
        session_id=text(payload, "sessionId", "session_id"),
        cwd=text(payload, "cwd"),
        transcript_path=text(payload, "transcriptPath", "transcript_path"),
        tool_name=COPILOT.tools.get(tool, tool),
        tool_input=args,
        **fields,
    )


def to_event(payload: dict[str, Any], event: str = "") -> Event:
    """The :class:`~forge_policy.Event` of a Copilot CLI hook payload (``event``: the event
    the hook entry is registered for, needed for camelCase payloads)."""
    from forge_policy.model import Event

    return Event.from_claude_code(normalize(payload, event), harness=NAME)


def render(decision: Decision, event: Event) -> tuple[str, int]:
    """``(stdout, exit code)`` for Copilot CLI (see the module docstring)."""
    from forge_policy.render.outcome import outcome

    name = native_event(event)
    said = outcome(decision, can_ask=name in COPILOT.ask_events, title=COPILOT.title)
    if said is None or not said.blocked:
        return "", 0  # no output field shows advice: counted and audited only
    if name in PRE_TOOL:
        decision_name = "ask" if said.ask else "deny"
        return dumps(
            {"permissionDecision": decision_name, "permissionDecisionReason": said.reason}
        ), 0
    if name in STOP_EVENTS:
        return dumps({"decision": "block", "reason": said.reason}), 0
    if name == "permissionRequest":
        return dumps({"behavior": "deny", "message": said.reason}), 0
    return "", 0  # this event's output is not processed: Copilot cannot be refused here


def failure(event_name: str, on_error: str, problem: str) -> tuple[str, int]:
    """``FORGE_ON_ERROR=deny`` refuses a tool call; elsewhere Copilot shows nothing."""
    from forge_policy.render.outcome import error_refusal

    if on_error == "deny" and event_name in PRE_TOOL:
        reason = error_refusal(problem)
        return dumps({"permissionDecision": "deny", "permissionDecisionReason": reason}), 0
    if on_error == "deny" and event_name == "permissionRequest":
        return dumps({"behavior": "deny", "message": error_refusal(problem)}), 0
    return "", 0
