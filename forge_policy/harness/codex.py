"""The OpenAI Codex CLI adapter (``forge-policy hook --harness codex``).

Sources, read 2026-12-01: the Codex "Hooks" docs page (developers.openai.com/codex/hooks,
stored copy of ≈ Aug 2026, with SessionEnd/Interrupt), and ``openai/codex``
``codex-rs/hooks/schema/generated/*.command.{input,output}.schema.json`` (pre-tool-use at
commit 3be4afd3, user-prompt-submit / stop / permission-request at 6fff509b / 2219e3df).

Input is Claude Code's shape (``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name``, ``permission_mode``, ``tool_name``, ``tool_input``, ``tool_use_id``,
``turn_id``, ``model``) with the same event names. Shell and unified exec report
``tool_name: "Bash"`` with ``tool_input.command`` (the hook gets no ``workdir``: Codex's input
schema has ``command`` only; a ``workdir`` it ever sends is the call's working folder);
``apply_patch`` sends the patch text in ``tool_input.command``: it is read by Codex's own
parser (:mod:`forge_policy.commands.patches`, after ``codex-rs/apply-patch/src/parser.rs``
at 0ffd5a8d) and becomes ``Write`` (a patch that only adds one file: ``file_path`` and
``content``) or ``Edit`` (``file_path`` of the first file, ``old_string``/``new_string`` of a
one-file update), with ``paths`` naming every file the patch writes, deletes or moves to and
the text kept in ``patch`` (not in ``command``: it is no shell command). Every file is then
judged as a write by the facts (:func:`forge_policy.facts._patches.event_patches`), not only the
first.

Output, always exit 0 with JSON: the output schemas have ``additionalProperties: false``, and an
output that does not validate marks the hook failed and lets the call run (fail-open), so only
schema fields are written (no ``override_allowed``). ``permissionDecision: "ask"`` is
unsupported (the hook fails, the call runs): a block the user would approve is a deny whose
reason says how the user lets it through.

A shell call forge_policy's own floor holds (SPEC §13) is let through rewritten with
``permissionDecision: "allow"`` and ``updatedInput`` (the docs: "rewrite with
``permissionDecision: "allow"`` + ``updatedInput``", ``Bash`` needs a string ``command``; Codex
v0.153 refuses ``updatedInput`` without the allow, awslabs/aidlc-workflows#1024, 2026-09-04).

Subagents (issue 27; openai/codex#22882, merged 2026-05-21): inside a thread-spawned subagent
every hook input carries ``agent_id`` (the child thread's id) and ``agent_type`` (its role), as
``SubagentStart``/``SubagentStop`` always do; they pass through as Claude Code's fields. The
pull request does not say which ``session_id`` a child thread's inputs carry: when it is the
root's, its violations count toward the root session's ladder.

>>> from forge_policy.harness.registry import get
>>> to_event = get("codex").adapter.to_event
>>> ev = to_event({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "apply_patch",
...     "tool_input": {"command": "*** Begin Patch\\n*** Add File: a.py\\n+x = 1\\n*** End Patch"}})
>>> ev.tool_name, ev.tool_input["file_path"], ev.tool_input["content"]
('Write', 'a.py', 'x = 1')
>>> ev = to_event({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "apply_patch",
...     "tool_input": {"command": "*** Begin Patch\\n*** Add File: a.py\\n+x\\n"
...                               " *** Delete File: .forge/audit\\n*** End Patch"}})
>>> ev.tool_name, ev.tool_input["paths"]
('Edit', ['a.py', '.forge/audit'])
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

    def rewrite(self, name: str, said: Outcome | None, new_input: dict[str, Any]) -> dict[str, Any]:
        """``permissionDecision: "allow"`` with ``updatedInput``: the one form Codex takes a
        rewrite in (``updatedInput`` without the allow fails the hook, and a failed hook lets
        the original call run; ``"ask"`` is unsupported); a nudge or warning stays as
        ``systemMessage`` and ``additionalContext``."""
        specific: dict[str, Any] = {
            "hookEventName": name,
            "permissionDecision": "allow",
            "updatedInput": new_input,
        }
        out: dict[str, Any] = {}
        if said is not None and said.advice:
            out["systemMessage"] = said.advice
            if name in CONTEXT_EVENTS:
                specific["additionalContext"] = said.advice
        out["hookSpecificOutput"] = specific
        return out

    def failure(self, event_name: str, on_error: str, problem: str) -> tuple[str, int]:
        """The ``FORGE_ON_ERROR`` answer: the same as Claude Code's, whose shapes Codex shares."""
        from forge_policy.harness.claude_code import claude_failure

        return claude_failure(event_name, on_error, problem)


def _patch(args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``Write`` or ``Edit`` with the files and the text of an ``apply_patch`` call, read by
    Codex's own parser (:mod:`forge_policy.commands.patches`, which cites ``codex-rs``
    ``apply-patch/src/parser.rs``): ``file_path`` is the first file, ``paths`` every file the
    patch adds, updates, deletes or moves to (a header with leading spaces, a second file, a
    ``*** Move to:`` target), ``patch`` the text. The text leaves ``command``: it is a patch,
    not a shell command. Only a patch that adds one file is a ``Write`` (with its
    ``content``); a one-file update keeps its removed and added lines as ``old_string`` and
    ``new_string``. A text that does not parse is an ``Edit`` of what its header lines name;
    the facts that read it (:func:`forge_policy.facts._patches.event_patches`) fail closed."""
    from forge_policy.commands.patches import PatchError, mentioned, parse

    text = args.get("command")
    if not isinstance(text, str):
        text = args.get("patch") if isinstance(args.get("patch"), str) else None
    if text is None:
        return "Edit", args
    out = {k: v for k, v in args.items() if k != "command"}
    out["patch"] = text
    try:
        patch = parse(text)
    except PatchError:
        out["paths"] = mentioned(text)
        if out["paths"]:
            out.setdefault("file_path", out["paths"][0])
        return "Edit", out
    out["paths"] = patch.paths()
    changes = patch.changes
    if not changes:
        return "Edit", out
    out.setdefault("file_path", changes[0].path)
    if len(changes) == 1 and changes[0].kind == "add" and len(out["paths"]) == 1:
        return "Write", {**out, "content": changes[0].content.removesuffix("\n")}
    if len(changes) == 1 and changes[0].chunks:
        out.setdefault("old_string", "\n".join(old for old, _new in changes[0].chunks))
        out.setdefault("new_string", "\n".join(new for _old, new in changes[0].chunks))
    return "Edit", out


def _context(name: str, out: dict[str, Any]) -> dict[str, Any]:
    """Codex takes ``additionalContext`` at fewer events than Claude Code (an unknown field
    fails the hook): elsewhere only ``systemMessage`` stays."""
    if name not in CONTEXT_EVENTS and "additionalContext" in out.get("hookSpecificOutput", {}):
        out.pop("hookSpecificOutput")
    return out
