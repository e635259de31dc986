"""Reading Claude Code transcripts into hook payloads (forge_policy.ops.transcript)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_policy.model import Event
from forge_policy.ops.transcript import read_transcripts

from .support import RENAME, RENAME_SESSION, UPLOAD, UPLOAD_SESSION


def _shape(payload: dict[str, object]) -> tuple[object, ...]:
    return (payload["hook_event_name"], payload.get("tool_name"))


def test_the_upload_session_becomes_its_hook_events_in_order() -> None:
    read = read_transcripts([str(UPLOAD)])
    events = read.sessions()[UPLOAD_SESSION]
    assert [_shape(e.payload) for e in events] == [
        ("UserPromptSubmit", None),
        ("PreToolUse", "Write"),
        ("PostToolUse", "Write"),
        ("PreToolUse", "Edit"),
        ("PostToolUse", "Edit"),
        ("PreToolUse", "Bash"),
        ("PostToolUseFailure", "Bash"),
        ("PreToolUse", "Task"),
        ("PreToolUse", "Write"),  # the subagent's, in its sidechain
        ("PostToolUse", "Write"),
        ("PostToolUse", "Task"),
        ("PreToolUse", "Write"),
        ("PostToolUse", "Write"),
        ("PreToolUse", "Write"),
        ("PostToolUse", "Write"),
        ("PreToolUse", "Write"),
    ]
    times = [e.timestamp for e in events]
    assert times == sorted(times)
    assert times[0] == 1772445600.0  # 2026-03-02T10:00:00.000Z
    # every payload is one the hook accepts
    for event in events:
        Event.from_claude_code(event.payload)


def test_payloads_carry_what_a_hook_would_receive() -> None:
    events = read_transcripts([str(UPLOAD)]).sessions()[UPLOAD_SESSION]
    prompt, write, written = events[0].payload, events[1].payload, events[2].payload
    assert prompt["prompt"] == "Add retries to the upload client in src/upload.py"
    assert prompt["permission_mode"] == "default"
    assert write["tool_input"]["file_path"] == "/work/app/src/upload.py"
    assert write["tool_use_id"] == "toolu_010000000000000000000001"
    assert write["cwd"] == "/work/app"
    assert write["transcript_path"] == str(UPLOAD)
    assert events[1].source == f"{UPLOAD}:4"
    # PostToolUse: the record's toolUseResult is the tool's own output
    assert written["tool_response"]["type"] == "create"
    assert written["tool_input"] == write["tool_input"]
    failure = events[6].payload
    assert failure["error"].startswith("PreToolUse:Bash hook error")
    assert failure["tool_input"]["command"] == "git push --force origin main"


def test_a_sidechain_call_names_the_subagent_running() -> None:
    events = read_transcripts([str(UPLOAD)]).sessions()[UPLOAD_SESSION]
    subagent_write, later_write = events[8].payload, events[11].payload
    assert subagent_write["agent_type"] == "general-purpose"
    assert "agent_type" not in later_write  # the Task call returned before it
    assert Event.from_claude_code(subagent_write).agent == "general-purpose"


def test_other_records_are_skipped_and_counted_by_type() -> None:
    read = read_transcripts([str(UPLOAD), str(RENAME)])
    upload, rename = read.files
    assert upload.skipped == {
        "summary": 1,
        "file-history-snapshot": 1,
        "system": 1,
        "queue-operation": 1,
        "subagent prompt": 1,
        "meta user message": 1,
    }
    assert upload.unknown == {"worktree-state": 1}
    assert (upload.records, upload.events, upload.problems) == (24, 16, [])
    # the record repeated from the first file counts once
    assert rename.skipped == {"duplicate": 1}
    assert rename.events == 7
    assert list(read.sessions()) == [UPLOAD_SESSION, RENAME_SESSION]
    assert read.sessions()[RENAME_SESSION][1].payload["permission_mode"] == "acceptEdits"


def test_a_folder_reads_every_jsonl_under_it(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.jsonl").write_bytes(UPLOAD.read_bytes())
    (tmp_path / "notes.txt").write_text("not a transcript")
    read = read_transcripts([str(tmp_path)])
    assert [f.path for f in read.files] == [str(tmp_path / "sub" / "a.jsonl")]
    assert len(read.events) == 16


def test_a_missing_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_transcripts([str(tmp_path / "nope.jsonl")])


def test_malformed_lines_are_reported_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    good = UPLOAD.read_text().splitlines()[3]  # the first Write
    path.write_text(
        "\n".join(
            [
                '{"type": "user", "message": {"role": "user", "content": "hi"',  # cut short
                "[1, 2]",
                '{"message": {}}',
                '{"type": "assistant", "message": {"content": 7}}',
                '{"type": "assistant", "message": {"content": [{"type": "tool_use"}]}}',
                "",
                good,
                "\xff\xfe not utf-8",
            ]
        )
        + "\n",
        encoding="latin-1",
    )
    info = read_transcripts([str(path)]).files[0]
    assert info.problems == [
        f"{path}:1: not JSON: Expecting ',' delimiter (column 61)",
        f"{path}:2: not a JSON object",
        f"{path}:3: type: required field missing",
        f"{path}:4: assistant: message.content: expected a string or an array",
        f"{path}:5: assistant: tool_use: needs a name and an input object",
        f"{path}:8: not JSON: Expecting value (column 1)",
    ]
    assert info.events == 1  # the good line among them still counts


def test_untimed_records_take_the_previous_time(tmp_path: Path) -> None:
    lines = [json.loads(line) for line in UPLOAD.read_text().splitlines()[2:5]]
    lines[1]["timestamp"] = "yesterday"
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    read = read_transcripts([str(path)])
    assert read.files[0].untimed == 1
    assert [e.timestamp for e in read.events] == [1772445600.0, 1772445600.0, 1772445605.0]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
_record = st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "assistant", "summary", "x"])},
    optional={
        "message": st.fixed_dictionaries(
            {},
            optional={
                "content": _json
                | st.lists(
                    st.fixed_dictionaries(
                        {"type": st.sampled_from(["tool_use", "tool_result", "text"])},
                        optional={
                            "id": _json,
                            "tool_use_id": _json,
                            "name": _json,
                            "input": _json,
                            "text": _json,
                            "is_error": _json,
                        },
                    ),
                    max_size=3,
                )
            },
        ),
        "sessionId": _json,
        "timestamp": _json,
        "uuid": _json,
        "isSidechain": _json,
        "toolUseResult": _json,
        "cwd": _json,
    },
)


@given(st.lists(_record | _json, max_size=6))
def test_any_json_lines_never_crash_and_make_valid_events(records: list[object]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
        read = read_transcripts([str(path)])
    for event in read.events:
        Event.from_claude_code(event.payload)  # a payload the engine accepts, or EventError


def _rec(kind: str, when: str, content: object, **extra: object) -> str:
    record = {
        "type": kind,
        "sessionId": "s",
        "uuid": f"u-{when}-{kind}",
        "timestamp": f"2025-11-19T22:{when}.000Z",
        "isSidechain": False,
        "message": {"role": kind, "content": content},
        **extra,
    }
    return json.dumps(record)


def _task(when: str, tool_id: str, subagent: str) -> str:
    block = {
        "type": "tool_use",
        "id": tool_id,
        "name": "Task",
        "input": {"subagent_type": subagent},
    }
    return _rec("assistant", when, [block])


def _task_done(when: str, tool_id: str, agent_id: str) -> str:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": "done"}
    return _rec("user", when, [block], agentId=agent_id, toolUseResult={"agentId": agent_id})


def _side_call(when: str, tool_id: str, agent_id: str) -> str:
    block = {"type": "tool_use", "id": tool_id, "name": "Grep", "input": {"pattern": "x"}}
    return _rec("assistant", when, [block], isSidechain=True, agentId=agent_id)


def test_a_task_result_written_before_its_sidechain_still_names_the_agent(
    tmp_path: Path,
) -> None:
    # Claude Code 2.0 may write the Task's result first and the subagent's records after it
    # (seen in daaain/claude-code-log test/test_data/sidechain_integrated.jsonl); two Tasks run
    # at once here, so only the agentId their results name tells the subagents apart
    path = tmp_path / "t.jsonl"
    lines = [
        _task("53:00", "task-a", "code-reviewer"),
        _task("53:01", "task-b", "general-purpose"),
        _task_done("55:00", "task-a", "agent-a"),
        _task_done("55:01", "task-b", "agent-b"),
        _side_call("53:30", "grep-b", "agent-b"),
        _side_call("53:40", "grep-a", "agent-a"),
        _side_call("53:50", "grep-x", "unnamed"),  # an agent no result names: two run, unknown
    ]
    path.write_text("\n".join(lines) + "\n")
    events = read_transcripts([str(path)]).events
    grep = {e.payload["tool_use_id"]: e.payload for e in events if e.payload["tool_name"] == "Grep"}
    assert grep["grep-a"]["agent_type"] == "code-reviewer"
    assert grep["grep-b"]["agent_type"] == "general-purpose"
    assert "agent_type" not in grep["grep-x"]
    # in time order, the sidechain's calls come between the Task calls and their results
    assert [e.payload.get("tool_use_id") for e in events] == [
        *("task-a", "task-b", "grep-b", "grep-a", "grep-x", "task-a", "task-b")
    ]


def test_text_beside_a_tool_result_is_no_prompt(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}
    note = {"type": "text", "text": "[Image #1] attached by the harness"}
    path.write_text(
        _rec("assistant", "00:00", [call]) + "\n" + _rec("user", "00:01", [result, note]) + "\n"
    )
    events = read_transcripts([str(path)]).events
    assert [e.payload["hook_event_name"] for e in events] == ["PreToolUse", "PostToolUse"]
