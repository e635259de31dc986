"""What the command-hook adapters share: the skeleton :class:`CommandHookAdapter`, the Claude
Code-shaped payload they build, tool-argument aliases, and the harness's own event name kept
beside the catalog's.

An adapter's ``normalize`` returns the harness payload with the catalog's keys laid over it
(:func:`claude_payload`): ``hook_event_name`` and ``tool_name`` in the catalog's vocabulary,
``tool_input`` with Claude Code's argument names added next to the harness's own (so a
``tool_input.file_path`` condition reads Gemini's ``absolute_path`` and Copilot's ``path``),
and ``harness_event_name``, the event as the harness named it, which its renderer answers.

>>> p = claude_payload({"x": 1}, harness_event="BeforeTool", event="PreToolUse",
...                    session_id="s", tool_name="Bash", tool_input={"command": "ls"})
>>> p["hook_event_name"], p["harness_event_name"], p["x"], p["tool_input"]
('PreToolUse', 'BeforeTool', 1, {'command': 'ls'})
>>> with_aliases({"path": "/a", "old_str": "x"})
{'path': '/a', 'old_str': 'x', 'file_path': '/a', 'old_string': 'x'}
"""

from __future__ import annotations

import json
import os

from forge_policy.errors import HookInputError
from forge_policy.events import mcp_name as mcp_name  # the owner is the event vocabulary

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.harness.registry import Harness
    from forge_policy.model import Decision, Event
    from forge_policy.render.outcome import Outcome

#: Harness argument names → Claude Code's (added, never replacing a value already there).
ALIASES = {
    "path": "file_path",
    "filePath": "file_path",
    "absolute_path": "file_path",
    "target_file": "file_path",
    "TargetFile": "file_path",
    "AbsolutePath": "file_path",
    "File": "file_path",
    "file_text": "content",
    "contents": "content",
    "CodeContent": "content",
    "old_str": "old_string",
    "new_str": "new_string",
    "CommandLine": "command",
    "dir_path": "path",
    "SearchPath": "path",
    "SearchDirectory": "path",  # Antigravity's find_by_name
    "DirectoryPath": "path",
    "target_directory": "path",  # Cursor's Glob
    "glob_pattern": "pattern",
    "Query": "pattern",
    "Pattern": "pattern",
    "Url": "url",
}
#: The key the harness's own event name is kept under, for its renderer.
HARNESS_EVENT = "harness_event_name"
#: Arguments of a shell tool that name the folder its command runs in (the harness resolves a
#: relative one against the session's folder): Gemini CLI's ``dir_path`` (``directory`` in
#: older builds; ``packages/core/src/tools/shell.ts``: ``path.resolve(targetDir, dir_path)``),
#: Antigravity's ``Cwd``, and ``workdir`` / ``working_directory`` / ``cwd`` should Codex,
#: Cursor or Copilot CLI ever send one (their hook payloads do not today).
WORKDIR_KEYS = ("dir_path", "directory", "Cwd", "workdir", "working_directory", "cwd")


def with_aliases(args: dict[str, Any]) -> dict[str, Any]:
    """``args`` plus Claude Code's name for each aliased argument (see :data:`ALIASES`)."""
    out = dict(args)
    for name, value in args.items():
        target = ALIASES.get(name)
        if target is not None and target not in out:
            out[target] = value
    return out


def run_folder(cwd: str, tool: str, tool_input: object) -> str:
    """The folder a ``Bash`` call's command runs in: its working-folder argument
    (:data:`WORKDIR_KEYS`, ``~`` expanded) resolved against ``cwd``, else ``cwd``. A rule that
    resolves the command's relative paths must resolve them there, as the harness runs it.

    >>> run_folder("/p", "Bash", {"command": "rm -rf behaviors", "dir_path": ".forge"})
    '/p/.forge'
    >>> run_folder("/p", "Bash", {"CommandLine": "ls", "Cwd": "~"}) == os.path.expanduser("~")
    True
    >>> run_folder("/p", "Read", {"dir_path": "x"})
    '/p'
    """
    if tool != "Bash" or not isinstance(tool_input, dict):
        return cwd
    for key in WORKDIR_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip() and "\0" not in value:
            base = cwd or os.getcwd()
            return os.path.normpath(os.path.join(base, os.path.expanduser(value)))
    return cwd


def arguments(value: object, field: str) -> dict[str, Any]:
    """A tool's arguments as an object: JSON text is parsed (Cursor's MCP events, Copilot's
    ``toolArgs``), null is empty; anything else is a :class:`HookInputError` naming ``field``."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise HookInputError(f"{field}: expected a JSON object, got unparseable text") from None
    if not isinstance(value, dict):
        raise HookInputError(f"{field}: expected an object, got {type(value).__name__}")
    return value


def text(payload: dict[str, Any], *keys: str) -> str:
    """The first of ``keys`` whose value is a non-empty string, else ``""``."""
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def catalog_event(harness: Harness, native: str) -> str:
    """The catalog event for the harness's event ``native``; a :class:`HookInputError` naming
    the known ones otherwise."""
    if not native:
        raise HookInputError(
            f"no event name: {harness.title} does not name it in this payload; "
            f"pass --event (one of: {', '.join(harness.events)})"
        )
    try:
        return harness.events[native]
    except KeyError:
        raise HookInputError(
            f"event {native!r} is not a {harness.title} hook event forge-policy handles "
            f"(known: {', '.join(harness.events)})"
        ) from None


def claude_payload(
    original: dict[str, Any],
    *,
    harness_event: str,
    event: str,
    session_id: str,
    cwd: str = "",
    transcript_path: str = "",
    tool_name: str = "",
    tool_input: dict[str, Any] | None = None,
    tool_use_id: str = "",
    **fields: Any,
) -> dict[str, Any]:
    """The harness payload with the catalog's keys laid over it (empty values left out, so a
    missing session id is derived as for Claude Code)."""
    out = dict(original)
    out.update(
        {
            "hook_event_name": event,
            HARNESS_EVENT: harness_event,
            "session_id": session_id,
        }
    )
    for key, value in (
        ("cwd", cwd),
        ("transcript_path", transcript_path),
        ("tool_name", tool_name),
        ("tool_use_id", tool_use_id),
    ):
        if value:
            out[key] = value
    if tool_input is not None:
        out["tool_input"] = tool_input
    out.update({k: v for k, v in fields.items() if v is not None})
    return out


def native_event(event: Event) -> str:
    """The event name as the harness sent it (the catalog's name when it is the same)."""
    value = event.payload.get(HARNESS_EVENT)
    return value if isinstance(value, str) and value else event.event_name


def dumps(value: dict[str, Any]) -> str:
    """Compact JSON with non-ASCII kept, one line, as written to stdout."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class CommandHookAdapter:
    """The shared skeleton of a :class:`~forge_policy.harness.base.HookAdapter`: the steps every
    command-hook CLI takes, with the places where one CLI differs from another left as small
    methods for its class to fill in.

    Reading (:meth:`to_event`): the event name (``--event``, else the payload's
    ``hook_event_name``, else :meth:`guess_event`) is looked up in the harness's table, then
    :meth:`fields` picks the session, working directory, tool and arguments out of the payload,
    and :func:`claude_payload` lays them over it. Answering (:meth:`render`): the decision is
    worded once by :func:`~forge_policy.render.outcome.outcome`, then :meth:`silence` (nothing
    to say), :meth:`advice` (a nudge or a warning) or :meth:`refusal` (a block) shape the JSON
    for the event, and :meth:`rewrite` a call let through with new arguments (the decision's
    ``updated_input``, at the harness's ``rewrite_events``); ``None`` writes nothing.
    :meth:`failure` asks :meth:`error_refusal` (under ``FORGE_ON_ERROR=deny``) and then
    :meth:`error_notice`. Every answer exits 0: each harness so far reads its decision from
    JSON on exit 0.
    """

    __slots__ = ("_harness",)

    def __init__(self, harness: Harness) -> None:
        self._harness = harness

    @property
    def harness(self) -> Harness:
        """The registry entry this adapter speaks for."""
        return self._harness

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._harness.name}>"

    def to_event(
        self,
        payload: dict[str, Any],
        event: str = "",
        *,
        notes: list[dict[str, Any]] | None = None,
    ) -> Event:
        """See :meth:`forge_policy.harness.base.HookAdapter.to_event`."""
        from forge_policy.model import Event

        payload = self.normalize(payload, event)
        if notes is not None and payload.get("session_id") in (None, ""):
            from forge_policy.harness.payload import derive_session

            payload, note = derive_session(payload)
            notes.append(note)
        return Event.from_claude_code(payload, harness=self._harness.name)

    def normalize(self, payload: dict[str, Any], event: str = "") -> dict[str, Any]:
        """The payload in the catalog's vocabulary (:func:`claude_payload`)."""
        native = event or text(payload, "hook_event_name") or self.guess_event(payload)
        name = catalog_event(self._harness, native)
        fields = self.fields(payload, native, name)
        base = fields.get("cwd") or text(payload, "cwd")
        folder = run_folder(base, fields.get("tool_name") or "", fields.get("tool_input"))
        if folder != base:
            fields["cwd"] = folder  # the command runs there: its relative paths resolve there
        return claude_payload(payload, harness_event=native, event=name, **fields)

    def guess_event(self, payload: dict[str, Any]) -> str:
        """The event of a payload that does not name it (``""``: none)."""
        return ""

    def fields(self, payload: dict[str, Any], native: str, event: str) -> dict[str, Any]:
        """The keyword arguments of :func:`claude_payload` (``session_id`` at least) for a
        payload of the harness's event ``native`` (the catalog's ``event``)."""
        raise NotImplementedError

    def render(self, decision: Decision, event: Event) -> tuple[str, int]:
        """See :meth:`forge_policy.harness.base.HookAdapter.render`."""
        from forge_policy.render.outcome import outcome

        name = native_event(event)
        harness = self._harness
        said = outcome(decision, can_ask=name in harness.ask_events, title=harness.title)
        if said is not None and said.blocked:
            return _written(self.refusal(name, said)), 0
        new_input = decision.updated_input
        if new_input is not None and name in harness.rewrite_events:
            return _written(self.rewrite(name, said, dict(new_input))), 0
        if said is None:
            return _written(self.silence(name)), 0
        return _written(self.advice(name, said)), 0

    def silence(self, name: str) -> dict[str, Any] | None:
        """The answer at event ``name`` when there is nothing to say."""
        return None

    def advice(self, name: str, said: Outcome) -> dict[str, Any] | None:
        """The answer that shows a nudge or a warning at event ``name``."""
        return None

    def refusal(self, name: str, said: Outcome) -> dict[str, Any] | None:
        """The answer that blocks at event ``name``."""
        return None

    def rewrite(
        self, name: str, said: Outcome | None, new_input: dict[str, Any]
    ) -> dict[str, Any] | None:
        """The answer that lets the call run with ``new_input`` (SPEC §13: the shell command
        under forge_policy's floor) at one of the harness's ``rewrite_events``, keeping the
        nudge or warning ``said`` (None: nothing to say) as :meth:`advice` words it."""
        return self.advice(name, said) if said is not None else self.silence(name)

    def failure(self, event_name: str, on_error: str, problem: str) -> tuple[str, int]:
        """See :meth:`forge_policy.harness.base.HookAdapter.failure`."""
        from forge_policy.render.outcome import error_notice, error_refusal

        out = self.error_refusal(event_name, error_refusal(problem)) if on_error == "deny" else None
        if out is None:
            out = self.error_notice(event_name, error_notice(on_error, problem))
        return _written(out), 0

    def error_refusal(self, name: str, reason: str) -> dict[str, Any] | None:
        """The refusal of a call at event ``name`` that could not be decided (``None``: the
        event cannot be refused, :meth:`error_notice` answers)."""
        return None

    def error_notice(self, name: str, notice: str) -> dict[str, Any] | None:
        """The notice that forge-policy could not decide, where event ``name`` shows one."""
        return None


def _written(out: dict[str, Any] | None) -> str:
    return "" if out is None else dumps(out)
