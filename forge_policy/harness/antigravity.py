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

>>> ev = to_event({"conversationId": "c1", "stepIdx": 4, "workspacePaths": ["/p"],
...     "toolCall": {"name": "run_command", "args": {"CommandLine": "ls", "Cwd": "/p"}}})
>>> ev.event_name, ev.tool_name, ev.tool_input["command"], ev.tool_use_id
('PreToolUse', 'Bash', 'ls', 'c1:4')
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
from forge_policy.harness.registry import ANTIGRAVITY

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.model import Decision, Event

NAME = ANTIGRAVITY.name
#: The answer that leaves the call to Antigravity's own permission flow.
NO_OPINION = {"decision": "ask"}


def _guess(payload: dict[str, Any]) -> str:
    if "toolCall" in payload:
        return "PostToolUse" if "error" in payload or payload["toolCall"] is None else "PreToolUse"
    return ""


def normalize(payload: dict[str, Any], event: str = "") -> dict[str, Any]:
    """The Antigravity payload in the catalog's vocabulary."""
    native = event or text(payload, "hook_event_name") or _guess(payload)
    name = catalog_event(ANTIGRAVITY, native)
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
    call_id = f"{session}:{step}" if session and isinstance(step, int) else ""
    return claude_payload(
        payload,
        harness_event=native,
        event=name,
        session_id=session,
        cwd=root,
        transcript_path=text(payload, "transcriptPath"),
        tool_name=ANTIGRAVITY.tools.get(tool, tool),
        tool_input=args,
        tool_use_id=call_id,
    )


def to_event(payload: dict[str, Any], event: str = "") -> Event:
    """The :class:`~forge_policy.Event` of an Antigravity hook payload."""
    from forge_policy.model import Event

    return Event.from_claude_code(normalize(payload, event), harness=NAME)


def render(decision: Decision, event: Event) -> tuple[str, int]:
    """``(stdout, exit code)`` for Antigravity (see the module docstring)."""
    from forge_policy.render.outcome import outcome

    name = native_event(event)
    said = outcome(decision, can_ask=name in ANTIGRAVITY.ask_events, title=ANTIGRAVITY.title)
    if name != "PreToolUse":
        if said is not None and said.blocked and name == "PostToolUse":
            reason = f"The tool call already ran, but it broke a policy.\n{said.reason}"
            return dumps({"decision": "deny", "reason": reason}), 0
        return "", 0  # nothing is read at this event
    if said is None or not said.blocked:
        return dumps(NO_OPINION), 0
    return dumps({"decision": "force_ask" if said.ask else "deny", "reason": said.reason}), 0


def failure(event_name: str, on_error: str, problem: str) -> tuple[str, int]:
    """``FORGE_ON_ERROR=deny`` refuses a call before it runs (so does an unknown event: this
    hook is only installed where a call is decided); ``allow`` leaves it to Antigravity."""
    from forge_policy.render.outcome import error_refusal

    if event_name not in ("", "PreToolUse"):
        return "", 0
    if on_error == "deny":
        return dumps({"decision": "deny", "reason": error_refusal(problem)}), 0
    return dumps(NO_OPINION), 0
