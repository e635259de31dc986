"""The Google Antigravity CLI (``agy``) adapter (``forge-policy hook --harness antigravity``).

Why Antigravity CLI: Google's successor to Gemini CLI for individual users (2026), with a
command-hook protocol of its own (``hooks.json``, Claude Code-like nesting, different payload).

Sources, read 2026-12-01 (no official reference page was found in the stores; these are
third-party records of behaviour measured against the CLI, so the adapter reads defensively):
the translated Antigravity "Hooks" docs page (gemini.meetcoding.cn/antigravity/hooks.html:
``.agents/hooks.json`` or ``~/.gemini/config/hooks.json``, named hooks of ``PreToolUse``,
``PostToolUse``, ``PreInvocation``, ``PostInvocation``, ``Stop``); skillsaw's
``docs/rules/antigravity-hooks-valid.md`` (agy 1.1.25: strict JSON, tool names ``run_command``,
``view_file``, ``write_to_file``, ``replace_file_content``, …); safe-chains
``src/targets/agy.rs`` (agy 1.1.2, 2026-07-13: decisions ``allow``/``deny``/``ask``/``force_ask``,
``deny`` shows the reason to the model, ``force_ask`` prompts past the always-allow cache, a
missing or malformed decision fails closed); websentry-ai/setup PR 104 (agy 1.0.5, 2026-06:
stdin ``{conversationId, stepIdx, toolCall: {name, args}, transcriptPath, workspacePaths,
artifactDirectoryPath}``, args with PascalCase keys such as ``CommandLine``; only
``PreToolUse``/``PostToolUse`` run).

The payload does not name its event: ``forge-policy init`` writes ``--event PreToolUse`` (or
``PostToolUse``) into each command; without it a payload with a ``toolCall`` and no ``error``
is taken for ``PreToolUse``. The session is ``conversationId``, the working directory the first
of ``workspacePaths``, the call id ``<conversationId>:<stepIdx>``.

Output, exit 0 with JSON, always a decision (Antigravity blocks on a missing one):
``{"decision": "deny", "reason": …}`` refuses, ``{"decision": "force_ask", "reason": …}`` asks
the user (a block the user would approve), ``{"decision": "ask"}`` is "no opinion": Antigravity's
own review flow applies, as after Claude Code's empty answer (``allow`` would skip the user's
review in builds that honor it, which forge-policy never grants). No field shows advice.

Subagents (issue 27): Antigravity's hook inputs name no subagent: every call is the session's
root thread.

>>> from forge_policy.harness.registry import get
>>> to_event = get("antigravity").adapter.to_event
>>> ev = to_event({"conversationId": "c1", "stepIdx": 4, "workspacePaths": ["/p"],
...     "toolCall": {"name": "run_command", "args": {"CommandLine": "ls", "Cwd": "/p"}}})
>>> ev.event_name, ev.tool_name, ev.tool_input["command"], ev.tool_use_id
('PreToolUse', 'Bash', 'ls', 'c1:4')
"""

from __future__ import annotations

from forge_policy.harness.common import CommandHookAdapter, arguments, text, with_aliases

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.render.outcome import Outcome

#: The answer that leaves the call to Antigravity's own permission flow.
NO_OPINION = {"decision": "ask"}
#: The event at which a call is decided (and the only one whose answer must hold a decision).
DECIDED = "PreToolUse"


class AntigravityAdapter(CommandHookAdapter):
    """Antigravity CLI: the event guessed when neither ``--event`` nor the payload names it;
    before a call the answer always holds a decision (no opinion: ``ask``)."""

    __slots__ = ()

    def guess_event(self, payload: dict[str, Any]) -> str:
        if "toolCall" in payload:
            return "PostToolUse" if "error" in payload or payload["toolCall"] is None else DECIDED
        return ""

    def fields(self, payload: dict[str, Any], native: str, event: str) -> dict[str, Any]:
        call = payload.get("toolCall")
        tool = ""
        args: dict[str, Any] | None = None
        if isinstance(call, dict):
            tool = text(call, "name")
            args = with_aliases(arguments(call.get("args"), "toolCall.args"))
        roots = payload.get("workspacePaths")
        root = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else ""
        session = text(payload, "conversationId")
        step = payload.get("stepIdx")
        return {
            "session_id": session,
            "cwd": root,
            "transcript_path": text(payload, "transcriptPath"),
            "tool_name": self.harness.tools.get(tool, tool),
            "tool_input": args,
            "tool_use_id": f"{session}:{step}" if session and isinstance(step, int) else "",
        }

    def silence(self, name: str) -> dict[str, Any] | None:
        """No opinion before a call (Antigravity blocks on a missing decision); nothing is read
        at other events."""
        return NO_OPINION if name == DECIDED else None

    def advice(self, name: str, said: Outcome) -> dict[str, Any] | None:
        """No field shows advice."""
        return self.silence(name)

    def refusal(self, name: str, said: Outcome) -> dict[str, Any] | None:
        if name == DECIDED:
            return {"decision": "force_ask" if said.ask else "deny", "reason": said.reason}
        if name == "PostToolUse":
            reason = f"The tool call already ran, but it broke a policy.\n{said.reason}"
            return {"decision": "deny", "reason": reason}
        return None  # nothing is read at this event

    def error_refusal(self, name: str, reason: str) -> dict[str, Any] | None:
        """``FORGE_ON_ERROR=deny`` refuses a call before it runs (so does an unknown event:
        this hook is only installed where a call is decided)."""
        return {"decision": "deny", "reason": reason} if name in ("", DECIDED) else None

    def error_notice(self, name: str, notice: str) -> dict[str, Any] | None:
        """``allow`` leaves the call to Antigravity."""
        return NO_OPINION if name in ("", DECIDED) else None
