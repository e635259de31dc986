"""Read what ``forge-policy hook`` printed for a pre-tool call, whatever the harness, as one of
``allow``, ``ask`` or ``deny`` with the reason the agent is shown.

Each harness has its own answer shape (see the adapters in :mod:`forge_policy.harness`): Claude
Code and Codex put the decision in ``hookSpecificOutput.permissionDecision``, Gemini CLI and
Antigravity in ``decision``, Cursor in ``permission``, Copilot CLI in ``permissionDecision``.
Silence allows everywhere but in Antigravity, whose silence blocks: there ``{"decision": "ask"}``
means "no opinion" (the call goes to Antigravity's own review, as an allowed call does) and
``force_ask`` is the user-approval question. OpenCode's plugin reads its answer strictly: only
``{"decision": "allow"}`` allows, anything else (silence included) refuses. Advice (a nudge, a
warning) allows.

>>> verdict("claude-code", "")
('allow', '')
>>> verdict("codex", '{"hookSpecificOutput": {"permissionDecision": "deny",'
...         ' "permissionDecisionReason": "no"}}')
('deny', 'no')
>>> verdict("gemini", {"systemMessage": "nudged"})
('allow', '')
>>> verdict("cursor", {"permission": "ask", "agent_message": "sure?"})
('ask', 'sure?')
>>> verdict("antigravity", {"decision": "ask"}), verdict("antigravity", {"decision": "force_ask"})
(('allow', ''), ('ask', ''))
>>> verdict("opencode", ""), verdict("opencode", {"decision": "allow", "message": "nudged"})
(('deny', 'no decision: the plugin refuses the call'), ('allow', ''))
"""

from __future__ import annotations

import json
from typing import Any

#: Per harness: the decision field's path, the reason field's path.
_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "claude-code": (
        ("hookSpecificOutput", "permissionDecision"),
        ("hookSpecificOutput", "permissionDecisionReason"),
    ),
    "codex": (
        ("hookSpecificOutput", "permissionDecision"),
        ("hookSpecificOutput", "permissionDecisionReason"),
    ),
    "gemini": (("decision",), ("reason",)),
    "cursor": (("permission",), ("agent_message",)),
    "copilot": (("permissionDecision",), ("permissionDecisionReason",)),
    "antigravity": (("decision",), ("reason",)),
    "opencode": (("decision",), ("reason",)),
}

#: Each harness's words for a refusal and for a question to the user.
_MEANING = {"deny": "deny", "block": "deny", "ask": "ask", "force_ask": "ask"}


def _get(answer: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = answer
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def verdict(harness: str, answer: str | bytes | dict[str, Any] | None) -> tuple[str, str]:
    """``(allow | ask | deny, reason)`` of the hook's pre-tool ``answer`` (its stdout text or
    parsed JSON) for ``harness``; ``KeyError`` for a harness without a pre-tool answer here."""
    decision_path, reason_path = _FIELDS[harness]
    if isinstance(answer, (str, bytes)):
        answer = json.loads(answer) if answer.strip() else None
    if harness == "opencode" and not (isinstance(answer, dict) and answer.get("decision")):
        return "deny", "no decision: the plugin refuses the call"
    if not answer:
        return "allow", ""
    word = _get(answer, decision_path)
    if harness == "antigravity" and word == "ask":  # "no opinion": Antigravity's own review
        return "allow", ""
    meaning = _MEANING.get(word, "allow") if isinstance(word, str) else "allow"
    reason = _get(answer, reason_path) if meaning != "allow" else ""
    return meaning, reason if isinstance(reason, str) else ""
