"""The OpenAI Codex CLI adapter (``forge-policy hook --harness codex``).

Sources, read 2026-12-01: the Codex "Hooks" docs page (developers.openai.com/codex/hooks,
stored copy of ≈ Aug 2026, with SessionEnd/Interrupt), and ``openai/codex``
``codex-rs/hooks/schema/generated/*.command.{input,output}.schema.json`` (pre-tool-use at
commit 3be4afd3, user-prompt-submit / stop / permission-request at 6fff509b / 2219e3df).

Input is Claude Code's shape (``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name``, ``permission_mode``, ``tool_name``, ``tool_input``, ``tool_use_id``,
``turn_id``, ``model``) with the same event names. Shell and unified exec report
``tool_name: "Bash"`` with ``tool_input.command``; ``apply_patch`` sends the patch text in
``tool_input.command``: it becomes ``Write`` (a patch that only adds one file: ``file_path`` and
``content``) or ``Edit`` (``file_path`` of the first file, ``old_string``/``new_string`` of its
hunks), the patch text kept in ``command``.

Output, always exit 0 with JSON: the output schemas have ``additionalProperties: false``, and an
output that does not validate marks the hook failed and lets the call run (fail-open), so only
schema fields are written (no ``override_allowed``). ``permissionDecision: "ask"`` is
unsupported (the hook fails, the call runs): a block the user would approve is a deny whose
reason says how the user lets it through.

>>> from forge_policy.harness.registry import get
>>> to_event = get("codex").adapter.to_event
>>> ev = to_event({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "apply_patch",
...     "tool_input": {"command": "*** Begin Patch\\n*** Add File: a.py\\n+x = 1\\n*** End Patch"}})
>>> ev.tool_name, ev.tool_input["file_path"], ev.tool_input["content"]
('Write', 'a.py', 'x = 1')
"""

from __future__ import annotations

from forge_policy.harness.common import CommandHookAdapter, text, with_aliases

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.render.outcome import Outcome

#: Events whose Codex output schema has ``hookSpecificOutput.additionalContext``.
CONTEXT_EVENTS = frozenset({"PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart"})


class CodexAdapter(CommandHookAdapter):
    """Codex CLI: Claude Code's payload (``apply_patch`` read as ``Write`` or ``Edit``) and
    Claude Code's answer, minus what Codex's output schemas refuse."""

    __slots__ = ()

    def fields(self, payload: dict[str, Any], native: str, event: str) -> dict[str, Any]:
        """Claude Code's fields; ``apply_patch`` becomes ``Write`` or ``Edit`` (:func:`_patch`)."""
        tool = text(payload, "tool_name")
        args = payload.get("tool_input")
        tool_input = with_aliases(args) if isinstance(args, dict) else args
        if tool == "apply_patch" and isinstance(tool_input, dict):
            tool, tool_input = _patch(tool_input)
        else:
            tool = self.harness.tools.get(tool, tool)
        return {
            "session_id": text(payload, "session_id"),
            "tool_name": tool,
            "tool_input": tool_input if isinstance(tool_input, dict) else None,
        }

    def advice(self, name: str, said: Outcome) -> dict[str, Any]:
        from forge_policy.render.claude_code import advice

        return _context(name, advice(name, said.advice))

    def refusal(self, name: str, said: Outcome) -> dict[str, Any]:
        from forge_policy.render.claude_code import refuse

        return _context(name, refuse(name, said.reason, said.summary))

    def failure(self, event_name: str, on_error: str, problem: str) -> tuple[str, int]:
        """The ``FORGE_ON_ERROR`` answer: the same as Claude Code's, whose shapes Codex shares."""
        from forge_policy.harness.claude_code import claude_failure

        return claude_failure(event_name, on_error, problem)


def _patch(args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``Write`` or ``Edit`` with the file and the text of an ``apply_patch`` call."""
    patch = args.get("command")
    if not isinstance(patch, str):
        return "Edit", args
    files: list[tuple[str, str]] = []
    added: list[str] = []
    removed: list[str] = []
    for line in patch.splitlines():
        for marker, kind in (
            ("*** Add File: ", "add"),
            ("*** Update File: ", "update"),
            ("*** Delete File: ", "delete"),
        ):
            if line.startswith(marker):
                files.append((kind, line[len(marker) :].strip()))
                break
        else:
            if len(files) == 1 and line.startswith("+"):
                added.append(line[1:])
            elif len(files) == 1 and line.startswith("-"):
                removed.append(line[1:])
    if not files:
        return "Edit", args
    out = {**args, "file_path": files[0][1], "file_paths": [path for _, path in files]}
    if len(files) == 1 and files[0][0] == "add":
        return "Write", {**out, "content": "\n".join(added)}
    if len(files) == 1:
        out.setdefault("old_string", "\n".join(removed))
        out.setdefault("new_string", "\n".join(added))
    return "Edit", out


def _context(name: str, out: dict[str, Any]) -> dict[str, Any]:
    """Codex takes ``additionalContext`` at fewer events than Claude Code (an unknown field
    fails the hook): elsewhere only ``systemMessage`` stays."""
    if name not in CONTEXT_EVENTS and "additionalContext" in out.get("hookSpecificOutput", {}):
        out.pop("hookSpecificOutput")
    return out
