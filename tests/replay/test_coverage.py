"""Hook coverage gaps through the real process: tool calls sent through ``forge-policy hook``, a
transcript that holds them and two more that never went through it (one a subagent's), and
``forge-policy replay`` listing exactly those two; with ids missing, before install, with a
matcher that leaves tools out, and with ``coverage: false`` in a configuration layer."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import attrs
import pytest
from hookrun import SCRIPT, Project

from forge_policy._time import iso
from forge_policy.ops.coverage import NO_RECORD, NO_SESSION, coverage
from forge_policy.ops.transcript import read_transcripts

#: The calls of the one session, in order: (tool, input, through the hook, subagent, hook id).
#: The fifth reaches the hook without its tool_use_id (paired by digest and time).
CALLS = [
    ("Bash", {"command": "ls -la"}, True, False, True),
    ("Read", {"file_path": "/p/src/app.py"}, True, False, True),
    ("Bash", {"command": "curl -s https://example.com/install.sh"}, False, False, True),
    ("Bash", {"command": "echo hard-me"}, True, False, True),
    ("Grep", {"pattern": "TODO", "path": "/p/src"}, True, True, True),
    ("Bash", {"command": "rm -rf build"}, False, True, True),
    ("Bash", {"command": "make test"}, True, False, False),
]
GAP_IDS = ["toolu_gap_2", "toolu_gap_5"]


@attrs.frozen
class Hooked:
    project: Project
    stamps: list[float]  # each call's time (the hooked ones: just before the hook ran)


@pytest.fixture(scope="module")
def hooked(tmp_path_factory: pytest.TempPathFactory) -> Hooked:
    project = Project(tmp_path_factory.mktemp("coverage"))
    stamps = []
    for index, (tool, tool_input, through, _, with_id) in enumerate(CALLS):
        stamps.append(time.time())
        if not through:
            continue
        payload = project.payload(tool_name=tool, tool_input=tool_input)
        payload["tool_use_id"] = _id(index)
        if not with_id:
            del payload["tool_use_id"]
        project.run(payload)
    return Hooked(project, stamps)


def _id(index: int) -> str:
    return f"toolu_gap_{index}" if not CALLS[index][2] else f"toolu_hooked_{index}"


def transcript(
    hooked: Hooked,
    path: Path,
    *,
    only_hooked: bool = False,
    ids: bool = True,
    shift: float = 0.0,
    session: str | None = None,
    cwd: str | None = None,
) -> Path:
    """A Claude Code transcript of :data:`CALLS` (one assistant record per call, a subagent's
    marked ``isSidechain``), stamped ``shift`` seconds from when they ran."""
    lines = []
    for index, (tool, tool_input, through, sidechain, _) in enumerate(CALLS):
        if only_hooked and not through:
            continue
        record: dict[str, Any] = {
            "type": "assistant",
            "sessionId": session or hooked.project.session,
            "uuid": f"{path.stem}-{index}",
            "timestamp": iso(hooked.stamps[index] + shift),
            "cwd": cwd or str(hooked.project.dir),
            "isSidechain": sidechain,
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": _id(index) if ids else None, "name": tool}
                    | {"input": tool_input}
                ],
            },
        }
        if sidechain:
            record["agentId"] = "agent-1"
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")
    return path


def replay(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(SCRIPT), "replay", *args],
        capture_output=True,
        text=True,
        env=project.env,
        cwd=project.dir,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result


def gaps_of(project: Project, path: Path) -> dict[str, Any]:
    data = json.loads(replay(project, str(path), "--json").stdout)
    covered: dict[str, Any] = data["coverage"]
    return covered


def test_the_two_calls_that_never_went_through_the_hook_are_the_gaps(
    hooked: Hooked, tmp_path: Path
) -> None:
    path = transcript(hooked, tmp_path / "s.jsonl")
    covered = gaps_of(hooked.project, path)
    assert [g["tool_use_id"] for g in covered["gaps"]] == GAP_IDS
    first, second = covered["gaps"]
    assert (first["source"], first["tool"], first["summary"]) == (
        f"{path}:3",
        "Bash",
        "curl -s https://example.com/install.sh",
    )
    assert (first["subagent"], second["subagent"], second["agent_id"]) == (False, True, "agent-1")
    assert {g["reason"] for g in covered["gaps"]} == {NO_RECORD}
    assert first["session_id"] == hooked.project.session
    assert covered["calls"] == 7 and covered["skipped"] == {}
    assert covered["summary"] == "2 of 7 tool calls got no decision: Bash 2"
    text = replay(hooked.project, str(path)).stdout
    assert "hook coverage: 2 of 7 tool calls got no decision: Bash 2" in text
    assert f"Bash toolu_gap_5: rm -rf build\n      {NO_RECORD}  ({path}:6)" in text
    assert "(subagent agent-1)" in text
    assert "PreToolUse matcher: not read (every tool counted)" in text


def test_the_html_report_has_the_coverage_section(hooked: Hooked, tmp_path: Path) -> None:
    from .test_replay_html import _chromium, _dom

    path = transcript(hooked, tmp_path / "s.jsonl")
    page = tmp_path / "report.html"
    replay(hooked.project, str(path), "--html", str(page))
    dom = _dom(_chromium(tmp_path, page, "--dump-dom"))
    [summary] = dom.find("p", "coverage-summary")
    assert summary.text == "2 of 7 tool calls got no decision: Bash 2"
    rows = dom.find("tr", "gap-row")
    assert [[cell.text for cell in row.children][2:4] for row in rows] == [
        ["Bash", "toolu_gap_2"],
        ["Bash", "toolu_gap_5"],
    ]
    assert rows[1].children[1].text.endswith("(subagent)")
    assert rows[1].children[6].text == f"{path}:6"


def test_no_gap_when_every_call_went_through_the_hook(hooked: Hooked, tmp_path: Path) -> None:
    covered = gaps_of(hooked.project, transcript(hooked, tmp_path / "s.jsonl", only_hooked=True))
    assert covered["gaps"] == []
    assert covered["summary"] == "every one of 5 tool calls got a decision"


def test_without_ids_calls_are_paired_by_session_tool_digest_and_time(
    hooked: Hooked, tmp_path: Path
) -> None:
    path = transcript(hooked, tmp_path / "s.jsonl", ids=False)
    covered = gaps_of(hooked.project, path)
    assert [g["source"] for g in covered["gaps"]] == [f"{path}:3", f"{path}:6"]
    assert [g["tool_use_id"] for g in covered["gaps"]] == [None, None]
    # the same calls far from the hook's time are not the hooked ones: every one is a gap
    late = gaps_of(
        hooked.project, transcript(hooked, tmp_path / "late.jsonl", ids=False, shift=3600)
    )
    assert len(late["gaps"]) == 7


def test_a_transcript_from_before_install_has_no_false_gaps(hooked: Hooked, tmp_path: Path) -> None:
    path = transcript(hooked, tmp_path / "old.jsonl", shift=-86_400)
    covered = gaps_of(hooked.project, path)
    assert covered["gaps"] == [] and covered["calls"] == 0
    assert covered["skipped"] == {"before forge-policy recorded this session": 7}
    other = transcript(hooked, tmp_path / "other.jsonl", shift=-86_400, session="older-session")
    assert gaps_of(hooked.project, other)["skipped"] == {
        "before forge-policy recorded this session": 7
    }


def test_a_session_the_hook_never_saw_is_all_gaps_unless_it_ran_elsewhere(
    hooked: Hooked, tmp_path: Path
) -> None:
    # (no ids: tool-call ids are unique, these would be the hooked calls')
    unseen = transcript(hooked, tmp_path / "u.jsonl", shift=60, session="never-hooked", ids=False)
    covered = gaps_of(hooked.project, unseen)
    assert len(covered["gaps"]) == 7 and {g["reason"] for g in covered["gaps"]} == {NO_SESSION}
    away = transcript(
        hooked, tmp_path / "a.jsonl", shift=60, session="elsewhere", cwd=str(tmp_path / "other")
    )
    assert gaps_of(hooked.project, away)["skipped"] == {"session ran in another project": 7}


def test_tools_the_matcher_leaves_out_are_not_gaps(hooked: Hooked, tmp_path: Path) -> None:
    read = read_transcripts([str(transcript(hooked, tmp_path / "s.jsonl"))])
    found = coverage(read, hooked.project.audit(seen=True), matchers=("Read|Grep",))
    assert found.gaps == () and found.calls == 2
    assert dict(found.skipped) == {"tool not in the PreToolUse matcher": 5}


def test_audit_listings_leave_the_seen_records_out_unless_asked(hooked: Hooked) -> None:
    seen = [r for r in hooked.project.audit(seen=True) if r["kind"] == "seen"]
    assert [(r["tool_name"], r["outcome"]) for r in seen] == [
        ("Bash", "allow"),
        ("Read", "allow"),
        ("Bash", "hard_block"),
        ("Grep", "allow"),
        ("Bash", "allow"),
    ]
    assert [r["tool_use_id"] for r in seen][-1] == ""  # the call that reached the hook without one
    assert all(set(r) == SEEN_KEYS for r in seen)

    def cli(*args: str) -> Any:
        out = subprocess.run(
            [str(SCRIPT), *args], capture_output=True, text=True, env=hooked.project.env
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout) if "--json" in args else out.stdout

    # the block, and the floor's note on shell calls (this project runs with floor: off)
    assert {r["kind"] for r in cli("audit", "log", "--json")["records"]} == {"block", "floor"}
    assert len(cli("audit", "log", "--kind", "seen", "--json")["records"]) == 5
    assert {r["kind"] for r in cli("audit", "--json")["recent"]} == {"block", "floor"}
    assert "(5 of them seen: one per decided tool call)" in cli("audit")


SEEN_KEYS = {
    *("kind", "timestamp", "session_id", "harness", "tool_name", "tool_use_id", "digest"),
    *("outcome", "seq", "prev"),
}


def test_coverage_false_in_a_layer_turns_the_record_off_and_a_managed_lock_keeps_it_on(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path / "off")
    (project.root / "config.yaml").write_text("floor: off\ncoverage: false\n")
    project.run(project.bash("ls"))
    assert project.audit(seen=True) == []
    call = {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls"}}
    record = {"type": "assistant", "sessionId": project.session, "timestamp": iso(time.time())}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({**record, "message": {"content": [call]}}) + "\n")
    assert (
        "hook coverage not checked: the audit log holds no seen record"
        in replay(project, str(path)).stdout
    )
    managed = tmp_path / "managed"
    managed.mkdir()
    (managed / "config.yaml").write_text("coverage: true\nlocked: [coverage]\n")
    project.run(project.bash("ls"), FORGE_MANAGED_DIR=str(managed))
    assert [r["kind"] for r in project.audit(seen=True)] == ["seen"]


def test_a_seen_record_pays_no_fsync_unless_it_folds_the_spool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from forge_policy.audit.base import write
    from forge_policy.audit.jsonl import JsonlAuditSink

    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    sink = JsonlAuditSink(tmp_path / "audit" / "overrides.log")
    write(sink, [{"kind": "block", "session_id": "s"}])
    assert synced
    synced.clear()
    write(sink, [{"kind": "seen", "session_id": "s"}], durable=False)
    assert synced == []
    sink._spool([{"kind": "block", "session_id": "s"}])  # a batch spooled while the lock was held
    synced.clear()
    write(sink, [{"kind": "seen", "session_id": "s"}], durable=False)
    assert synced  # the folded block is fsynced before its spool file goes
    assert [r["kind"] for r in sink.records()] == ["block", "seen", "block", "seen"]
    assert sink.verify().ok


def test_an_allowed_call_writes_its_seen_record_without_importing_portalocker(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    project.run(project.bash("ls"))  # the catalog cache is built
    read = project.payload(tool_name="Read", tool_input={"file_path": "README.md"})
    _, err = project.run(read, PYTHONPROFILEIMPORTTIME="1")
    imported = {line.rsplit("|", 1)[-1].strip() for line in err.splitlines() if "|" in line}
    assert "forge_policy.audit.jsonl" in imported  # the record was written by this process
    assert not {m for m in imported if m.split(".")[0] in ("portalocker", "email", "redis")}
    assert [r["tool_use_id"] for r in project.audit(seen=True) if r["kind"] == "seen"][-1] == (
        read["tool_use_id"]
    )
