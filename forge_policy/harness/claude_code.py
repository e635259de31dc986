"""The Claude Code adapter: the reference harness, whose payload already is the catalog's shape.

Its answer is :func:`forge_policy.render.claude_code.render` (always exit 0, the JSON decides);
:class:`ClaudeCodeAdapter` gives it the :class:`~forge_policy.harness.base.HookAdapter` interface
every harness in :mod:`~forge_policy.harness.registry` has. Wire format: the Claude Code hooks
reference (code.claude.com/docs/en/hooks, docs of 2026-08-22) and the CLI 2.1.332 schemas,
SPEC §8.

>>> from forge_policy.harness.registry import get
>>> ev = get("claude-code").adapter.to_event({"session_id": "s", "hook_event_name": "Stop"})
>>> ev.event_name, ev.harness
('Stop', 'claude-code')
>>> get("claude-code").adapter.failure("PreToolUse", "deny", "broken")[0][:60]
'{"hookSpecificOutput":{"hookEventName":"PreToolUse","permiss'
"""

from __future__ import annotations

import json

from forge_policy._lazy import kept
from forge_policy.events import BLOCKABLE_TOOL_EVENTS, EVENTS
from forge_policy.harness.common import CommandHookAdapter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.model import Decision, Event


@kept
def _render() -> Any:
    from forge_policy.render.claude_code import render

    return render


class ClaudeCodeAdapter(CommandHookAdapter):
    """Claude Code: the payload is read as it is, the answer is Claude Code's renderer's."""

    __slots__ = ()

    def normalize(self, payload: dict[str, Any], event: str = "") -> dict[str, Any]:
        """The payload itself (``event`` from the command line is not needed: Claude Code
        names it)."""
        return payload

    def render(self, decision: Decision, event: Event) -> tuple[str, int]:
        """``(stdout, exit code)``: the Claude Code answer, exit 0."""
        render_claude = _render()
        answer: tuple[str, int] = render_claude(decision, event)
        return answer

    def failure(self, event_name: str, on_error: str, problem: str) -> tuple[str, int]:
        """A refusal at a tool call that can still be refused (``deny``); a notice elsewhere."""
        return claude_failure(event_name, on_error, problem)


def claude_failure(event_name: str, on_error: str, problem: str) -> tuple[str, int]:
    """Claude Code's ``FORGE_ON_ERROR`` answer (Codex, whose shapes are Claude Code's, gives it
    too). A tool call under an event name the engine does not know (a misspelling; the hook
    passes a newer CLI's lifecycle event without a call silently) is answered with exit code 2
    under ``deny``: both CLIs treat it as a blocking error wherever the event can block (the
    call is not run; the problem, on stderr, is shown), and as a notice elsewhere, whatever JSON
    shape the event would have needed."""
    from forge_policy.render.outcome import error_notice, error_refusal

    if on_error == "deny" and event_name and event_name not in EVENTS:
        return "", 2
    if on_error == "deny" and event_name in BLOCKABLE_TOOL_EVENTS:
        from forge_policy.render.claude_code import dumps, refuse

        reason = error_refusal(problem)
        return dumps(refuse(event_name, reason, reason)), 0
    return json.dumps({"systemMessage": error_notice(on_error, problem)}, ensure_ascii=False), 0
