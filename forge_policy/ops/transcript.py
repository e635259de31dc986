"""Reading Claude Code transcripts (the JSONL files under ``~/.claude/projects/``, the
``transcript_path`` a hook receives) back into the hook payloads the session produced.

Record shapes, learned from public transcripts and the parsers that read them (e.g.
daaain/claude-code-log ``models.py``, simonw/claude-code-transcripts), since Anthropic
documents none: one JSON object per line with ``type``; ``user`` and ``assistant`` records carry
``sessionId``, ``uuid``, ``timestamp`` (ISO 8601), ``cwd``, ``isSidechain`` and ``message``
(``role``, ``content``: a string or a list of blocks). An assistant's ``tool_use`` block
(``id``, ``name``, ``input``) is a PreToolUse; a user record's ``tool_result`` block
(``tool_use_id``, ``content``, ``is_error``; the record's ``toolUseResult`` holds the tool's own
output) is its PostToolUse (PostToolUseFailure when ``is_error``); a user record with text is a
UserPromptSubmit. ``summary``, ``system``, ``file-history-snapshot``, ``queue-operation``,
``attachment``, ``progress`` and ``ai-title`` records are skipped and counted; a type this
reader does not know is counted apart; a line that is not a JSON object, or a record of a known
type with an unusable shape, is reported as ``file:line: message`` and skipped (never a crash).

>>> import json, tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp(), "s.jsonl")
>>> rec = {"type": "assistant", "sessionId": "s1", "uuid": "u1",
...        "timestamp": "2025-06-01T12:00:00.000Z", "message": {"role": "assistant",
...        "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
...                     "input": {"command": "ls"}}]}}
>>> _ = path.write_text(json.dumps(rec) + "\\n{oops\\n")
>>> read = read_transcripts([str(path)])
>>> [(e.payload["hook_event_name"], e.payload["tool_name"]) for e in read.events]
[('PreToolUse', 'Bash')]
>>> read.files[0].problems[0].endswith("s.jsonl:2: not JSON: Expecting property name "
...     "enclosed in double quotes (column 2)")
True
"""

from __future__ import annotations

import json
import math
import os

import attrs

from forge_policy._time import parse_iso

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from typing import Any

#: Record types that carry no tool call nor prompt: skipped, counted by type.
SKIPPED_TYPES = frozenset(
    {
        "summary",
        "system",
        "file-history-snapshot",
        "queue-operation",
        "attachment",
        "progress",
        "ai-title",
    }
)
#: The tools that start a subagent: their ``subagent_type`` names the sidechain's agent.
SUBAGENT_TOOLS = frozenset({"Task", "Agent"})
#: How many problems one file reports in full (the rest are counted).
MAX_PROBLEMS = 100


@attrs.frozen
class TranscriptEvent:
    """One hook payload recovered from a transcript, with its time and where it came from.

    ``order`` is its position in the whole input (what a stable sort by time keeps).
    """

    payload: dict[str, Any]
    timestamp: float
    source: str
    order: int
    sidechain: str | None = None  # a subagent's call: its ``agentId`` ("" when unnamed)


@attrs.define
class FileRead:
    """What one transcript file held: records, events made, records skipped (by type or
    reason), unknown record types, problems (``file:line: message``) and lines without a
    usable timestamp (given the previous one's)."""

    path: str
    records: int = 0
    events: int = 0
    skipped: dict[str, int] = attrs.Factory(dict)
    unknown: dict[str, int] = attrs.Factory(dict)
    problems: list[str] = attrs.Factory(list)
    more_problems: int = 0
    untimed: int = 0

    def problem(self, line: int, message: str) -> None:
        """Record ``file:line: message`` (the first :data:`MAX_PROBLEMS`, then a count)."""
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(f"{self.path}:{line}: {message}")
        else:
            self.more_problems += 1

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        return {
            "path": self.path,
            "records": self.records,
            "events": self.events,
            "skipped": dict(sorted(self.skipped.items())),
            "unknown": dict(sorted(self.unknown.items())),
            "problems": list(self.problems),
            "more_problems": self.more_problems,
            "untimed": self.untimed,
        }


@attrs.define
class TranscriptRead:
    """Every event of the inputs, ordered per session by time, and what each file held."""

    events: list[TranscriptEvent] = attrs.Factory(list)
    files: list[FileRead] = attrs.Factory(list)

    def sessions(self) -> dict[str, list[TranscriptEvent]]:
        """The events grouped by session id, in order of first appearance."""
        grouped: dict[str, list[TranscriptEvent]] = {}
        for event in self.events:
            grouped.setdefault(event.payload["session_id"], []).append(event)
        return grouped


def transcript_files(paths: Iterable[str]) -> list[str]:
    """The files to read: each path as given, a folder as the ``*.jsonl`` files under it
    (sorted; ``~/.claude/projects/<project>/`` holds one per session, subagents' in
    subfolders). A missing path raises :class:`FileNotFoundError`."""
    found: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            for folder, dirs, names in os.walk(path):
                dirs.sort()
                found.extend(os.path.join(folder, n) for n in sorted(names) if n.endswith(".jsonl"))
        elif os.path.exists(path):
            found.append(path)
        else:
            raise FileNotFoundError(2, "no such file or folder", path)
    return found


class _Session:
    """What reading needs to remember of one session across records and files."""

    __slots__ = ("agents", "last_time", "mode", "pending", "subagents")

    def __init__(self) -> None:
        self.last_time: float | None = None
        self.mode = ""  # the last permissionMode seen (newer transcripts record it)
        self.pending: dict[str, tuple[str, dict[str, Any]]] = {}  # tool_use id -> name, input
        self.subagents: dict[str, str] = {}  # Task/Agent tool_use id -> subagent_type
        self.agents: dict[str, str] = {}  # agentId -> subagent_type (from the Task's result)


class _Reader:
    def __init__(self) -> None:
        self.read = TranscriptRead()
        self.seen_uuids: set[str] = set()
        self.sessions: dict[str, _Session] = {}
        self.sidechain: str | None = None  # of the record being read

    def file(self, path: str) -> None:
        info = FileRead(path)
        self.read.files.append(info)
        fallback = os.path.splitext(os.path.basename(path))[0]
        for number, line in _lines(path):
            if not line.strip():
                continue
            info.records += 1
            try:
                record = json.loads(line.rstrip("\r\n"))
            except json.JSONDecodeError as exc:
                info.problem(number, f"not JSON: {exc.msg} (column {exc.colno})")
                continue
            except RecursionError:
                info.problem(number, "not usable JSON: nested too deeply")
                continue
            if not isinstance(record, dict):
                info.problem(number, "not a JSON object")
                continue
            self.record(record, info, number, path, fallback)

    def record(
        self, record: dict[str, Any], info: FileRead, number: int, path: str, fallback: str
    ) -> None:
        kind = record.get("type")
        if not isinstance(kind, str):
            info.problem(number, "type: required field missing")
            return
        if kind not in ("user", "assistant"):
            counts = info.skipped if kind in SKIPPED_TYPES else info.unknown
            counts[kind] = counts.get(kind, 0) + 1
            return
        uuid = record.get("uuid")
        if isinstance(uuid, str) and uuid:
            if uuid in self.seen_uuids:  # a resumed session's file repeats earlier records
                info.skipped["duplicate"] = info.skipped.get("duplicate", 0) + 1
                return
            self.seen_uuids.add(uuid)
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, (str, list)):
            info.problem(number, f"{kind}: message.content: expected a string or an array")
            return
        session_id = record.get("sessionId")
        if not isinstance(session_id, str) or not session_id:
            session_id = fallback
        session = self.sessions.setdefault(session_id, _Session())
        when = _timestamp(record.get("timestamp"))
        if when is None:
            info.untimed += 1
            when = session.last_time if session.last_time is not None else 0.0
        session.last_time = when
        mode = record.get("permissionMode")
        if isinstance(mode, str) and mode:
            session.mode = mode
        base: dict[str, Any] = {"session_id": session_id, "transcript_path": path}
        cwd = record.get("cwd")
        if isinstance(cwd, str) and cwd:
            base["cwd"] = cwd
        if session.mode:
            base["permission_mode"] = session.mode
        self.sidechain = None
        if record.get("isSidechain") is True:
            agent_id = record.get("agentId")
            self.sidechain = agent_id if isinstance(agent_id, str) else ""
        where = f"{path}:{number}"
        blocks = [content] if isinstance(content, str) else content
        if kind == "assistant":
            self.tool_uses(blocks, base, when, where, session, info, number)
        else:
            self.user(record, blocks, base, when, where, session, info, number)

    def emit(self, payload: dict[str, Any], when: float, where: str, info: FileRead) -> None:
        info.events += 1
        event = TranscriptEvent(payload, when, where, len(self.read.events), self.sidechain)
        self.read.events.append(event)

    def name_subagents(self) -> None:
        """Give each subagent's call the ``agent_type`` a hook inside it receives: the
        ``subagent_type`` of the Task call whose result names its ``agentId``, else of the one
        Task call running at its time (several at once: left unnamed). A second pass over the
        events in time order, since Claude Code may write a Task's result before its sidechain."""
        running: dict[str, dict[str, str]] = {}  # session -> Task tool_use id -> subagent_type
        for event in self.read.events:
            payload = event.payload
            sid = payload["session_id"]
            session = self.sessions[sid]
            if event.sidechain is None:
                tool_id = payload.get("tool_use_id")
                if tool_id in session.subagents:
                    calls = running.setdefault(sid, {})
                    if payload["hook_event_name"] == "PreToolUse":
                        calls[tool_id] = session.subagents[tool_id]
                    else:
                        calls.pop(tool_id, None)
                continue
            agent = session.agents.get(event.sidechain)
            if agent is None:
                kinds = set(running.get(sid, {}).values())
                agent = kinds.pop() if len(kinds) == 1 else None
            if agent:
                payload["agent_type"] = agent

    def tool_uses(
        self,
        blocks: list[Any],
        base: dict[str, Any],
        when: float,
        where: str,
        session: _Session,
        info: FileRead,
        number: int,
    ) -> None:
        for block in blocks:
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue  # text, thinking: nothing a hook sees
            name, tool_id, tool_input = block.get("name"), block.get("id"), block.get("input")
            if not isinstance(name, str) or not name or not isinstance(tool_input, dict):
                info.problem(number, "assistant: tool_use: needs a name and an input object")
                continue
            tool_id = tool_id if isinstance(tool_id, str) else ""
            if tool_id and tool_id in session.pending:
                continue  # the same block streamed twice
            if tool_id:
                session.pending[tool_id] = (name, tool_input)
                subagent = tool_input.get("subagent_type")
                if name in SUBAGENT_TOOLS and isinstance(subagent, str) and subagent:
                    session.subagents[tool_id] = subagent
            payload = {
                **base,
                "hook_event_name": "PreToolUse",
                "tool_name": name,
                "tool_input": tool_input,
                "tool_use_id": tool_id,
            }
            self.emit(payload, when, where, info)

    def user(
        self,
        record: dict[str, Any],
        blocks: list[Any],
        base: dict[str, Any],
        when: float,
        where: str,
        session: _Session,
        info: FileRead,
        number: int,
    ) -> None:
        texts: list[str] = []
        results = 0
        for block in blocks:
            if isinstance(block, str):
                texts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text":
                text = block.get("text")
                if isinstance(text, str):
                    texts.append(text)
            elif isinstance(block, dict) and block.get("type") == "tool_result":
                results += 1
                self.tool_result(record, block, base, when, where, session, info, number)
        prompt = "\n".join(texts)
        if not prompt or results:  # text beside tool results is Claude Code's, not typed
            return
        if record.get("isSidechain") is True:
            # a subagent's task, written by the Task call: no UserPromptSubmit fires for it
            info.skipped["subagent prompt"] = info.skipped.get("subagent prompt", 0) + 1
            return
        if record.get("isMeta") is True or prompt.startswith("[Request interrupted by user"):
            # caveats, skill bodies and interruptions are written by Claude Code, not typed
            info.skipped["meta user message"] = info.skipped.get("meta user message", 0) + 1
            return
        payload = {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt}
        self.emit(payload, when, where, info)

    def tool_result(
        self,
        record: dict[str, Any],
        block: dict[str, Any],
        base: dict[str, Any],
        when: float,
        where: str,
        session: _Session,
        info: FileRead,
        number: int,
    ) -> None:
        tool_id = block.get("tool_use_id")
        call = session.pending.pop(tool_id, None) if isinstance(tool_id, str) else None
        if call is None:
            info.skipped["tool_result without its tool_use"] = (
                info.skipped.get("tool_result without its tool_use", 0) + 1
            )
            return
        name, tool_input = call
        subagent = session.subagents.get(str(tool_id))
        result = record.get("toolUseResult")
        if subagent is not None:  # the Task's result names the agent that ran it
            agent_id = record.get("agentId")
            if not isinstance(agent_id, str) and isinstance(result, dict):
                agent_id = result.get("agentId")
            if isinstance(agent_id, str) and agent_id:
                session.agents[agent_id] = subagent
        payload: dict[str, Any] = {
            **base,
            "tool_name": name,
            "tool_input": tool_input,
            "tool_use_id": tool_id,
        }
        if block.get("is_error") is True:
            payload["hook_event_name"] = "PostToolUseFailure"
            payload["error"] = _text_of(block.get("content"))
        else:
            payload["hook_event_name"] = "PostToolUse"
            payload["tool_response"] = result if result is not None else block.get("content")
        self.emit(payload, when, where, info)


def read_transcripts(paths: Sequence[str]) -> TranscriptRead:
    """Read transcript files (folders: every ``*.jsonl`` under them) into hook payloads, each
    session's events ordered by time (ties keep the files' order). Records seen twice (by
    ``uuid``: a resumed session's file repeats its predecessor's) count once."""
    reader = _Reader()
    for path in transcript_files(paths):
        reader.file(path)
    events = reader.read.events
    events.sort(key=lambda e: (e.timestamp, e.order))
    reader.name_subagents()
    return reader.read


def _lines(path: str) -> Iterator[tuple[int, str]]:
    # undecodable bytes become U+FFFD: one bad line must not lose the file
    with open(path, encoding="utf-8", errors="replace") as handle:
        yield from enumerate(handle, start=1)


def _timestamp(value: object) -> float | None:
    """ISO 8601 text (``Z`` or an offset; a naive time is UTC) to epoch seconds, else None."""
    if not isinstance(value, str) or not value:
        return None
    stamp = parse_iso(value, default=math.nan)
    return None if math.isnan(stamp) else stamp


def _text_of(content: object) -> str:
    """A tool_result's content as text (a string, or the text blocks of a list)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text") for b in content if isinstance(b, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""
