"""Hook coverage gaps: the tool calls of a transcript that got no decision at all.

A call the hook decided leaves a ``seen`` audit record (:class:`forge_policy.audit.records.Seen`,
one per PreToolUse whatever the outcome, unless a configuration layer says ``coverage:
false``); a call whose hook never ran — a subagent's call, a timeout, a broken settings file, a
matcher that leaves the tool out — leaves none. :func:`coverage` pairs a transcript's tool calls
(:class:`~forge_policy.ops.transcript.TranscriptRead`, PreToolUse events, a subagent's
included) with the ``seen`` records and lists the calls left over (:class:`Gap`).

**Matching.** By the harness's tool-call id when both sides have one (ids are unique: any
session); else by session, tool name and input digest (the first 16 hex digits of
:func:`~forge_policy.model.call_hash`) within :data:`WINDOW` seconds, the nearest first. Each
record answers for one call.

**What is never a gap.** A call no hook could have seen: one made before forge-policy recorded
anything for its session (before it was installed, or before ``seen`` records existed: the
session's earliest record, and for a session with none the log's earliest ``seen``), one of a
tool the PreToolUse matcher of the settings leaves out (when the settings can be read:
:func:`hook_matchers`), one of a session that ran in another project. Those are counted apart
(:attr:`Coverage.skipped`). A log with no ``seen`` record at all says nothing (``coverage:
false``, or a log older than the record): :attr:`Coverage.note` says so and no call is a gap.

>>> from forge_policy.ops.transcript import TranscriptEvent, TranscriptRead
>>> def call(tool_id, when, command):
...     payload = {"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash",
...                "tool_input": {"command": command}, "tool_use_id": tool_id}
...     return TranscriptEvent(payload, when, f"t.jsonl:{int(when)}", int(when))
>>> read = TranscriptRead([call("t1", 1.0, "ls"), call("t2", 2.0, "make")])
>>> seen = [{"kind": "seen", "session_id": "s1", "tool_name": "Bash", "tool_use_id": "t1",
...          "digest": "", "outcome": "allow", "timestamp": "1970-01-01T00:00:01Z"}]
>>> [(g.tool_use_id, g.source) for g in coverage_gaps(read, seen)]
[('t2', 't.jsonl:2')]
"""

from __future__ import annotations

import json
import os
import re

import attrs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    from forge_policy.ops.transcript import TranscriptEvent, TranscriptRead

#: How far apart (seconds) a call's transcript time and its ``seen`` record may be when they
#: are paired without ids: the hook runs as the call starts, but a transcript stamps the
#: assistant message, which may have streamed for a while before.
WINDOW = 300.0
#: Slack (seconds) before a session's earliest record within which a call still counts as
#: made after install (clocks of the transcript and of the hook differ by milliseconds).
SLACK = 2.0
#: The reasons a call is a gap, by whether its session has any ``seen`` record.
NO_RECORD = "no seen record: the hook did not decide this call"
NO_SESSION = "no seen record in this session at all: its hooks did not run"


@attrs.frozen
class Gap:
    """A transcript tool call that got no decision: where it is, what it was, and why it counts
    (``reason``). ``sidechain``: a subagent's call (its ``agentId``, ``""`` when unnamed)."""

    session_id: str
    source: str
    tool: str
    tool_use_id: str
    timestamp: float
    summary: str
    reason: str
    sidechain: str | None = None

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form (``source`` is ``file:line``; ``timestamp`` ISO 8601)."""
        from forge_policy._time import iso

        return {
            "session_id": self.session_id,
            "source": self.source,
            "tool": self.tool,
            "tool_use_id": self.tool_use_id or None,
            "timestamp": iso(self.timestamp),
            "summary": self.summary,
            "reason": self.reason,
            "subagent": self.sidechain is not None,
            "agent_id": self.sidechain or None,
        }


@attrs.frozen
class Coverage:
    """What :func:`coverage` found: the tool calls checked, the gaps among them, the calls no
    hook could have seen (``skipped``: why -> how many), the PreToolUse matchers used (None:
    not read, every tool counted) and a ``note`` when nothing can be said."""

    calls: int
    gaps: tuple[Gap, ...]
    skipped: Mapping[str, int] = attrs.field(factory=dict)
    matchers: tuple[str, ...] | None = None
    note: str = ""

    def summary(self) -> str:
        """The one line a report starts with.

        >>> Coverage(41, ()).summary()
        'every one of 41 tool calls got a decision'
        """
        if self.note:
            return f"hook coverage not checked: {self.note}"
        if not self.gaps:
            calls = f"{self.calls} tool call{'s' if self.calls != 1 else ''}"
            return f"every one of {calls} got a decision"
        tools: dict[str, int] = {}
        for gap in self.gaps:
            tools[gap.tool] = tools.get(gap.tool, 0) + 1
        which = ", ".join(f"{tool} {n}" for tool, n in sorted(tools.items(), key=_most))
        return f"{len(self.gaps)} of {self.calls} tool calls got no decision: {which}"

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        return {
            "calls": self.calls,
            "gaps": [gap.to_dict() for gap in self.gaps],
            "skipped": dict(sorted(self.skipped.items())),
            "matchers": list(self.matchers) if self.matchers is not None else None,
            "note": self.note or None,
            "summary": self.summary(),
        }


def _most(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]


def coverage_gaps(read: TranscriptRead, records: Iterable[Mapping[str, Any]]) -> list[Gap]:
    """The tool calls of ``read`` that got no decision in ``records`` (the audit log), in the
    transcript's order: :func:`coverage`'s gaps, every tool counted."""
    return list(coverage(read, records).gaps)


def coverage(
    read: TranscriptRead,
    records: Iterable[Mapping[str, Any]],
    *,
    matchers: Sequence[str] | None = None,
    project: str | None = None,
    window: float = WINDOW,
) -> Coverage:
    """Pair the tool calls of ``read`` with the ``seen`` records among ``records`` (see the
    module docstring). ``matchers``: the PreToolUse matchers forge-policy's hook is registered
    under (:func:`hook_matchers`; None: every tool counts). ``project``: the project folder the
    audit log belongs to; a session whose calls all ran elsewhere (their ``cwd``) is not
    checked."""
    from forge_policy._time import parse_iso

    seen: list[_Seen] = []
    for record in records:
        if record.get("kind") != "seen":
            continue
        stamp = parse_iso(record.get("timestamp"), default=-1.0)
        if stamp < 0:
            continue
        seen.append(
            _Seen(
                str(record.get("session_id") or ""),
                str(record.get("tool_name") or ""),
                str(record.get("tool_use_id") or ""),
                str(record.get("digest") or ""),
                stamp,
            )
        )
    calls = [e for e in read.events if e.payload.get("hook_event_name") == "PreToolUse"]
    shown = tuple(matchers) if matchers is not None else None
    if not seen:
        note = (
            "the audit log holds no seen record (coverage: false in a configuration layer, "
            "or a log written before forge-policy recorded every call)"
        )
        return Coverage(0, (), matchers=shown, note=note)
    first_ever = min(s.timestamp for s in seen)
    first_of: dict[str, float] = {}
    by_id: dict[str, _Seen] = {}
    for s in seen:
        first_of[s.session] = min(first_of.get(s.session, s.timestamp), s.timestamp)
        if s.tool_use_id:
            by_id.setdefault(s.tool_use_id, s)
    skipped: dict[str, int] = {}
    checked: list[TranscriptEvent] = []
    elsewhere = _elsewhere(calls, project) if project is not None else set()
    for event in calls:
        payload = event.payload
        session = str(payload.get("session_id") or "")
        why = ""
        if session in elsewhere:
            why = "session ran in another project"
        elif event.timestamp < first_of.get(session, first_ever) - SLACK:
            why = "before forge-policy recorded this session"
        elif matchers is not None and not _matched(str(payload.get("tool_name")), matchers):
            why = "tool not in the PreToolUse matcher"
        if why:
            skipped[why] = skipped.get(why, 0) + 1
        else:
            checked.append(event)
    unmatched = []
    for event in checked:  # by id: both sides have one
        tool_id = str(event.payload.get("tool_use_id") or "")
        paired = by_id.get(tool_id) if tool_id else None
        if paired is not None and not paired.used:
            paired.used = True
        else:
            unmatched.append(event)
    gaps = []
    for event in unmatched:  # no id on one side: session, tool, digest and time
        if _fallback(event, seen, window) is None:
            session = str(event.payload.get("session_id") or "")
            gaps.append(_gap(event, NO_RECORD if session in first_of else NO_SESSION))
    return Coverage(len(checked), tuple(gaps), skipped, shown)


@attrs.define
class _Seen:
    session: str
    tool: str
    tool_use_id: str
    digest: str
    timestamp: float
    used: bool = False


def _fallback(event: TranscriptEvent, seen: list[_Seen], window: float) -> _Seen | None:
    """The nearest unused ``seen`` record of the same session, tool and digest within
    ``window`` whose id does not contradict the call's (one side without an id); marked
    used."""
    from forge_policy.model import call_hash

    payload = event.payload
    session = str(payload.get("session_id") or "")
    tool = str(payload.get("tool_name") or "")
    tool_id = str(payload.get("tool_use_id") or "")
    digest = call_hash(tool, payload.get("tool_input"))[:16]
    best: _Seen | None = None
    for s in seen:
        if s.used or s.session != session or s.tool != tool or s.digest != digest:
            continue
        if tool_id and s.tool_use_id:
            continue  # both have ids and they differ (equal ones were paired by id)
        distance = abs(s.timestamp - event.timestamp)
        if distance <= window and (
            best is None or distance < abs(best.timestamp - event.timestamp)
        ):
            best = s
    if best is not None:
        best.used = True
    return best


def _gap(event: TranscriptEvent, reason: str) -> Gap:
    from forge_policy.ops.replay import subject_of

    payload = event.payload
    return Gap(
        session_id=str(payload.get("session_id") or ""),
        source=event.source,
        tool=str(payload.get("tool_name") or ""),
        tool_use_id=str(payload.get("tool_use_id") or ""),
        timestamp=event.timestamp,
        summary=subject_of(payload),
        reason=reason,
        sidechain=event.sidechain,
    )


def _elsewhere(calls: list[TranscriptEvent], project: str) -> set[str]:
    """The sessions every call of which ran outside ``project`` (by the ``cwd`` recorded)."""
    root = os.path.realpath(project)
    inside: dict[str, bool] = {}
    for event in calls:
        session = str(event.payload.get("session_id") or "")
        cwd = event.payload.get("cwd")
        if not isinstance(cwd, str) or not cwd:
            inside[session] = True  # unknown: checked
            continue
        here = os.path.realpath(cwd)
        ours = here == root or here.startswith(root.rstrip(os.sep) + os.sep)
        inside[session] = inside.get(session, False) or ours
    return {session for session, ours in inside.items() if not ours}


def _matched(tool: str, matchers: Sequence[str]) -> bool:
    """Whether Claude Code runs a PreToolUse group of one of ``matchers`` for ``tool``: ``""``
    and ``*`` match every tool, a name itself, anything else as a regular expression
    (``Edit|Write``, ``mcp__.*``), matched whole.

    >>> _matched("Bash", ["Edit|Write"]), _matched("Write", ["Edit|Write"]), _matched("x", ["*"])
    (False, True, True)
    """
    for matcher in matchers:
        if matcher in ("", "*") or matcher == tool:
            return True
        try:
            if re.fullmatch(matcher, tool):
                return True
        except re.error:
            continue
    return False


def hook_matchers(project: str, home: str | None = None) -> tuple[str, ...] | None:
    """The matchers of the PreToolUse groups that run forge-policy in Claude Code's settings
    (the project's ``.claude/settings.json`` and ``settings.local.json``, the user's
    ``~/.claude/settings.json``); None when none of them can be read or names forge-policy's
    hook (then every tool counts, and the report says so).

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> (folder / ".claude").mkdir()
    >>> _ = (folder / ".claude" / "settings.json").write_text(json.dumps({"hooks": {
    ...     "PreToolUse": [{"matcher": "Bash|Write", "hooks": [
    ...         {"type": "command", "command": "forge-policy hook"}]}]}}))
    >>> hook_matchers(str(folder), home=str(folder / "nobody"))
    ('Bash|Write',)
    """
    home = home if home is not None else os.path.expanduser("~")
    files = [
        os.path.join(project, ".claude", "settings.json"),
        os.path.join(project, ".claude", "settings.local.json"),
        os.path.join(home, ".claude", "settings.json"),
    ]
    found: list[str] = []
    for path in files:
        try:
            with open(path, encoding="utf-8") as handle:
                document = json.load(handle)
        except (OSError, ValueError):
            continue
        hooks = document.get("hooks") if isinstance(document, dict) else None
        groups = hooks.get("PreToolUse") if isinstance(hooks, dict) else None
        for group in groups if isinstance(groups, list) else ():
            if not isinstance(group, dict) or not _runs_forge(group.get("hooks")):
                continue
            matcher = group.get("matcher")
            found.append(matcher if isinstance(matcher, str) else "")
    return tuple(found) if found else None


def _runs_forge(handlers: object) -> bool:
    """Whether a matcher group's handlers run forge-policy's hook (the command, or the warm
    worker's launcher ``init`` writes; in exec form with its ``args``: the client's
    ``…/forge_policy/worker/launch.py`` is an argument of the interpreter).

    >>> _runs_forge([{"command": "/v/bin/python", "args": ["-I", "-S", "/v/forge_policy/w.py"]}])
    True
    """
    if not isinstance(handlers, list):
        return False
    for handler in handlers:
        command = handler.get("command") if isinstance(handler, dict) else None
        args = handler.get("args") if isinstance(handler, dict) else None
        if isinstance(command, str) and isinstance(args, list):
            command = " ".join([command, *(a for a in args if isinstance(a, str))])
        if isinstance(command, str) and ("forge-policy" in command or "forge_policy" in command):
            return True
    return False
