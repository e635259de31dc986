"""``forge-policy replay`` run as the real executable: text, JSON, the diff of two catalogs,
bad input, and the progress bar on a terminal."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.cli_support import FORGE, Project

from .support import RENAME, RENAME_SESSION, UPLOAD, UPLOAD_SESSION, strict_catalog


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def test_text_output_tallies_sessions_and_lists_what_would_block(project: Project) -> None:
    out = project.run("replay", str(UPLOAD), str(RENAME)).stdout
    lines = out.splitlines()
    assert lines[0] == "read 2 transcripts: 32 records, 23 events, 2 sessions"
    assert "unknown record types: worktree-state 1" in lines
    assert any(line.startswith("skipped: duplicate 1, file-history-snapshot 1") for line in lines)
    header = next(i for i, line in enumerate(lines) if line.startswith("session "))
    assert lines[header].split() == [
        *("session", "events", "allow", "nudge", "warning", "soft_block", "hard_block")
    ]
    # the upload session: search-first nudges twice, warns twice, blocks its 5th and 6th
    # uncredited writes; the forced push is a hard block
    assert lines[header + 1].split() == [UPLOAD_SESSION, "16", "9", "2", "2", "2", "1"]
    assert lines[header + 2].split() == [RENAME_SESSION, "7", "7", "0", "0", "0", "0"]
    assert "would block: 3" in lines
    blocked = [line.strip() for line in lines if " by " in line]
    assert blocked == [
        f"hard_block by no-destructive-git  ({UPLOAD}:9)",
        f"soft_block by search-first  ({UPLOAD}:22)",
        f"soft_block by search-first  ({UPLOAD}:24)",
    ]
    assert f"{UPLOAD_SESSION}#5  PreToolUse Bash: git push --force origin main" in out
    assert "differences" not in out


def test_nothing_but_the_catalog_cache_is_written_to_the_project(project: Project) -> None:
    before = sorted(p.name for p in project.root.rglob("*") if p.is_file())
    assert project.run("replay", str(UPLOAD)).returncode == 0
    written = sorted(p.name for p in project.root.rglob("*") if p.is_file())
    # a project that has no .forge yet gets none from a read-only command (issue 25)
    assert all(n.startswith("catalog-cache") or n in before for n in written)


def test_json_output(project: Project) -> None:
    data = project.json("replay", str(UPLOAD), str(RENAME))
    assert [f["path"] for f in data["inputs"]] == [str(UPLOAD), str(RENAME)]
    assert data["inputs"][0]["unknown"] == {"worktree-state": 1}
    assert data["inputs"][0]["problems"] == []
    assert data["events"] == 23 and data["blocks"] == 3 and data["against"] is None
    assert data["sessions"][0] == {
        "session_id": UPLOAD_SESSION,
        "events": 16,
        "outcomes": {"allow": 9, "nudge": 2, "warning": 2, "soft_block": 2, "hard_block": 1},
    }
    fired = {(d["index"], d["tool"], d["subject"]): d["decision"] for d in data["decisions"]}
    first = fired[(1, "Write", "/work/app/src/upload.py")]
    assert first["outcome"] == "nudge"
    assert first["fired"] == [
        {
            "behavior_id": "search-first",
            "level": "nudge",
            "counter": 1,
            "blocks": False,
            "shadow": False,
            "overridden": "",
            "level_shown": "nudge",
        }
    ]
    push = next(d for d in data["decisions"] if d["tool"] == "Bash")
    assert push["timestamp"] == "2026-03-02T10:00:20.000000+00:00"
    assert push["decision"]["blocking"] == "no-destructive-git"
    assert "differences" not in data


def test_against_lists_every_decision_that_differs(project: Project, tmp_path: Path) -> None:
    strict = strict_catalog(tmp_path / "strict")
    args = ("replay", str(UPLOAD), str(RENAME), "--against", str(strict))
    data = project.json(*args)
    assert data["against"] == str(strict)
    assert data["sessions"][0]["against_outcomes"] == {
        "allow": 9,
        "nudge": 1,
        "warning": 0,
        "soft_block": 5,
        "hard_block": 1,
    }
    # the strict ladder blocks from the 2nd uncredited write; the 5th and 6th block either way
    diff = [
        (d["index"], d["subject"], d["decision"]["outcome"], d["against"]["outcome"])
        for d in data["differences"]
    ]
    assert diff == [
        (3, "/work/app/src/client.py", "nudge", "soft_block"),
        (8, "/work/app/src/retry.py", "warning", "soft_block"),
        (11, "/work/app/src/limits.py", "warning", "soft_block"),
    ]
    assert data["against_blocks"] == 6 and data["blocks"] == 3
    out = project.run(*args).stdout
    assert "differences: 3" in out
    # issue 25: both sides labelled, and a diff reads old (--against) → new (--catalog)
    assert f"old (--against): {strict}\nnew (--catalog): " in out
    assert "old: soft_block by search-first → new: warning (search-first warning)" in out
    session_row = next(line for line in out.splitlines() if line.startswith(UPLOAD_SESSION))
    assert session_row.split() == [
        *(UPLOAD_SESSION, "16", "9", "1", "→", "2", "0", "→", "2", "5", "→", "2", "1")
    ]
    assert "a cell that differs reads old → new (old (--against) → new (--catalog))" in out


def test_the_same_catalog_twice_differs_nowhere(project: Project) -> None:
    from forge_policy.catalog.loader import BUILTIN_DIR

    data = project.json("replay", str(UPLOAD), "--against", str(BUILTIN_DIR))
    assert data["differences"] == []
    assert data["against_blocks"] == data["blocks"] == 3


def test_catalog_option_replaces_the_configured_catalog(project: Project, tmp_path: Path) -> None:
    strict = strict_catalog(tmp_path / "strict")
    data = project.json("replay", str(UPLOAD), "--catalog", str(strict))
    assert data["catalog"] == str(strict) and data["blocks"] == 6


def test_bad_lines_are_reported_on_stderr_and_the_rest_replayed(
    project: Project, tmp_path: Path
) -> None:
    path = tmp_path / "cut.jsonl"
    text = UPLOAD.read_text()
    cut = text.splitlines()[8][:40]  # a last line cut short, as a live session's can be
    path.write_text("this is not json\n" + text + cut + "\n")
    with pytest.raises(json.JSONDecodeError) as why:
        json.loads(cut)
    result = project.run("replay", str(path))
    assert result.stderr.splitlines() == [
        f"forge-policy: skipped {path}:1: not JSON: Expecting value (column 1)",
        f"forge-policy: skipped {path}:26: not JSON: {why.value.msg} (column {why.value.colno})",
    ]
    assert "bad lines: 2 (listed on stderr)" in result.stdout
    assert "would block: 3" in result.stdout


def test_a_missing_transcript_exits_3_with_its_name(project: Project, tmp_path: Path) -> None:
    missing = tmp_path / "gone.jsonl"
    result = project.run("replay", str(missing), check=3)
    assert result.stderr == f"forge-policy: cannot access '{missing}': no such file or folder\n"
    assert "Traceback" not in result.stderr


def test_a_broken_catalog_exits_1_naming_the_file(project: Project, tmp_path: Path) -> None:
    strict = strict_catalog(tmp_path / "strict")
    (strict / "search-first" / "behavior.yaml").write_text("schema_version: [\n")
    result = project.run("replay", str(UPLOAD), "--against", str(strict), check=1)
    assert "search-first/behavior.yaml" in result.stderr
    assert "Traceback" not in result.stderr


def _long_transcript(path: Path, events: int) -> None:
    lines = []
    for i in range(events):
        record = {
            "type": "assistant",
            "sessionId": "long",
            "uuid": f"u{i}",
            "timestamp": f"2026-03-02T10:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {}}],
            },
        }
        record["message"]["content"][0]["input"] = {"command": f"ls dir{i}"}
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")


def test_a_progress_bar_only_on_a_terminal(project: Project, tmp_path: Path) -> None:
    pytest.importorskip("rich")
    import pty

    path = tmp_path / "long.jsonl"
    _long_transcript(path, 1500)
    piped = project.run("replay", str(path))
    assert "replaying" not in piped.stderr
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [str(FORGE), "replay", str(path)],
            stdout=subprocess.PIPE,
            stderr=follower,
            cwd=project.path,
            env={**project.env, "TERM": "xterm-256color"},  # as a terminal sets it
        )
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the process is done with it
                break
            if not chunk:
                break
            seen += chunk
        stdout, _ = proc.communicate(timeout=60)
    finally:
        os.close(leader)
    assert proc.returncode == 0
    assert b"replaying" in seen  # rich drew the bar on the terminal
    assert stdout.decode().startswith("read 1 transcript: 1500 records, 1500 events")


def test_secrets_in_a_transcript_never_reach_any_output(project: Project, tmp_path: Path) -> None:
    secret = "AKIAABCDEFGHIJKLMNOP"
    record = json.loads(UPLOAD.read_text().splitlines()[8])  # the forced push
    record["message"]["content"][0]["input"]["command"] = (
        f"export AWS_KEY={secret} && git push --force origin main"
    )
    path = tmp_path / "secret.jsonl"
    path.write_text(json.dumps(record) + "\n")
    page = tmp_path / "secret.html"
    text = project.run("replay", str(path), "--html", str(page)).stdout
    data = project.run("replay", str(path), "--json").stdout
    assert "git push --force origin main" in text and "[REDACTED]" in text
    for output in (text, data, page.read_text(encoding="utf-8")):
        assert secret not in output


def test_help_names_every_option(project: Project) -> None:
    out = project.run("replay", "--help").stdout
    for option in ("TRANSCRIPT", "--catalog DIR", "--against DIR", "--json", "--html"):
        assert option in out
    assert "replay TRANSCRIPT" in project.run("--help").stdout
