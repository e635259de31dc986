"""Issue 25, item 8 and item 9's command-line items: seeing what happened without reading raw
JSONL. Every test runs the real ``forge-policy`` executable (a pseudo-terminal where a terminal
is the point) against a temporary project, and each failed before the change it covers:

- ``audit log``: the records newest first, filtered, numbered, paged on a terminal only;
  ``audit --json`` beyond counts;
- ``explain --record N``: a recorded decision beside today's dry run of the same call;
- ``status``: newest first, ``--limit``, local times without microseconds, a summary first;
- ``forge-policy status | head -1``: no "cannot access: Broken pipe";
- a mistyped command: "did you mean";
- colour on a terminal only, and never with ``NO_COLOR``;
- shell completion generated from the parser, run by real bash (zsh, fish when installed).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli_support import FORGE, Project, decision_of, tool_event

#: Records and sessions the ``busy`` project holds.
PUSH = "git push -f origin main"


def _busy(tmp_path: Path, **extra: str) -> Project:
    project = Project(tmp_path, **extra)
    for session in ("s1", "s2", "s3"):
        answer = project.hook(tool_event("Bash", session, command=PUSH, cwd=str(tmp_path)))
        assert decision_of(answer) == "deny"
        time.sleep(0.01)  # distinct stamps: newest first is s3, s2, s1
    return project


@pytest.fixture
def busy(tmp_path: Path) -> Project:
    """Three sessions, each with one hard block of ``git push -f``, s1 the oldest."""
    return _busy(tmp_path)


@pytest.fixture(params=["file", "sqlite"])
def each_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Project:
    """``busy`` with the audit log as JSONL (the default) or SQLite (PostgreSQL: the audit
    conformance suite holds its ``records_newest_first``, tests/postgres)."""
    extra = {} if request.param == "file" else {"FORGE_AUDIT": "sqlite:audit.db"}
    return _busy(tmp_path, **extra)


def _ansi(text: str) -> bool:
    return "\x1b[" in text


def _in_terminal(project: Project, *args: str, **env: str) -> str:
    """``forge-policy ARGS`` with stdout on a pseudo-terminal; what it wrote there."""
    import pty

    primary, secondary = pty.openpty()
    try:
        result = subprocess.run(
            [str(FORGE), *args],
            stdout=secondary,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            cwd=project.path,
            env={**project.env, "TERM": "xterm", **env},
            timeout=60,
        )
        os.close(secondary)
        secondary = -1
        chunks = []
        while True:
            try:
                data = os.read(primary, 65536)
            except OSError:  # EIO: the terminal's other side is closed and drained
                break
            if not data:
                break
            chunks.append(data)
    finally:
        if secondary >= 0:
            os.close(secondary)
        os.close(primary)
    assert result.returncode == 0, result.stderr
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


# -- item 9: a closed pipe, a mistyped command -------------------------------------------------


@pytest.mark.parametrize("command", [("status",), ("list",), ("audit", "log"), ("schema",)])
def test_a_reader_that_went_away_ends_the_command_quietly(
    busy: Project, command: tuple[str, ...]
) -> None:
    """``forge-policy status | head -1`` printed "cannot access: Broken pipe" (exit 3): stdout
    here is a pipe whose reader is already gone, so the first write fails."""
    read, write = os.pipe()
    os.close(read)
    try:
        result = subprocess.run(
            [str(FORGE), *command],
            stdout=write,
            stderr=subprocess.PIPE,
            cwd=busy.path,
            env=busy.env,
            timeout=60,
        )
    finally:
        os.close(write)
    assert result.stderr == b""
    assert result.returncode == 141  # 128 + SIGPIPE, as a shell reports it


def test_head_of_status_in_a_real_shell_pipeline(busy: Project) -> None:
    result = subprocess.run(
        ["bash", "-c", f"set -o pipefail; '{FORGE}' status | head -1"],
        capture_output=True,
        text=True,
        cwd=busy.path,
        env=busy.env,
        timeout=60,
    )
    assert result.stdout.startswith("3 live sessions")
    assert "Broken pipe" not in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("stauts", "status"), ("audti", "audit"), ("explian", "explain"), ("stat", "status")],
)
def test_a_mistyped_command_gets_a_suggestion(project: Project, typed: str, meant: str) -> None:
    result = project.run(typed, check=2)
    assert f"invalid choice: '{typed}' (did you mean '{meant}'?)" in result.stderr


def test_a_mistyped_subcommand_or_choice_gets_one_too(project: Project) -> None:
    assert "(did you mean 'status'?)" in project.run("worker", "stauts", check=2).stderr
    kind = project.run("audit", "log", "--kind", "blok", check=2).stderr
    assert "(did you mean 'block'?)" in kind
    nothing_close = project.run("qqqq", check=2).stderr
    assert "did you mean" not in nothing_close and "choose from" in nothing_close


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


# -- status ------------------------------------------------------------------------------------


def test_status_is_newest_first_with_a_summary_and_local_times(busy: Project) -> None:
    env = {**busy.env, "TZ": "Asia/Kolkata"}  # +05:30: a UTC stamp would show otherwise
    result = subprocess.run(
        [str(FORGE), "status", "--limit", "2"],
        capture_output=True,
        text=True,
        cwd=busy.path,
        env=env,
        timeout=60,
    )
    lines = result.stdout.splitlines()
    assert lines[0] == "3 live sessions: 3 violations, 3 blocks, 0 overrides"
    headers = [line for line in lines if line.startswith("session ")]
    assert [h.split()[1] for h in headers] == ["s3", "s2"]  # newest first, --limit 2
    assert "… 1 more (older) session: --limit 0 shows all" in result.stdout
    stamp = re.search(r"last active (\S+ \S+),", headers[0])
    assert stamp is not None
    os.environ["TZ"] = "Asia/Kolkata"
    try:
        time.tzset()
        local = time.strftime("%Y-%m-%d %H:%M", time.localtime())
    finally:
        del os.environ["TZ"]
        time.tzset()
    assert stamp.group(1).startswith(local[:13])  # the local hour, to the second, no micros
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", stamp.group(1))
    assert "+00:00" not in result.stdout and not re.search(r"\d\.\d{6}", result.stdout)
    # a session shows the behaviors that fired, not all fifteen
    assert "no-destructive-git" in result.stdout and "plan-before-code" not in result.stdout
    assert len(lines) < 20
    every = busy.run("status", "--limit", "0").stdout
    assert [line.split()[1] for line in every.splitlines() if line.startswith("session ")] == [
        "s3",
        "s2",
        "s1",
    ]


def test_status_json_keeps_every_session_newest_first(busy: Project) -> None:
    report = busy.json("status")
    assert [s["session_id"] for s in report["sessions"]] == ["s3", "s2", "s1"]
    assert report["summary"] == {"sessions": 3, "violations": 3, "blocks": 3, "overrides": 0}
    limited = json.loads(busy.run("status", "--limit", "1", "--json").stdout)
    assert ([s["session_id"] for s in limited["sessions"]], limited["more"]) == (["s3"], 2)
    assert "negative" in busy.run("status", "--limit", "-1", check=2).stderr


# -- audit log ---------------------------------------------------------------------------------


def test_audit_log_lists_records_newest_first_and_filters(each_backend: Project) -> None:
    busy = each_backend
    out = busy.run("audit", "log").stdout
    rows = [line.split() for line in out.splitlines() if re.match(r"\d+ +\d{4}-", line)]
    # each call's seen record (2, 4, 6) follows its block: listed only when asked for
    assert [(r[0], r[3], r[4], r[5], r[6]) for r in rows] == [
        ("5", "block", "s3", "no-destructive-git", "hard_block"),
        ("3", "block", "s2", "no-destructive-git", "hard_block"),
        ("1", "block", "s1", "no-destructive-git", "hard_block"),
    ]
    assert f"Bash: {PUSH}" in out
    assert "forge-policy explain --record 5" in out
    seen = busy.json("audit", "log", "--kind", "seen")["records"]
    assert [(r["number"], r["session_id"], r["record"]["outcome"]) for r in seen] == [
        (6, "s3", "hard_block"),
        (4, "s2", "hard_block"),
        (2, "s1", "hard_block"),
    ]
    one = busy.json("audit", "log", "--session", "s2")
    assert [(r["number"], r["session_id"]) for r in one["records"]] == [(3, "s2")]
    assert one["records"][0]["record"]["input_summary"] == f"Bash: {PUSH}"
    assert busy.json("audit", "log", "--behavior", "search-first")["records"] == []
    assert busy.json("audit", "log", "--kind", "override")["records"] == []
    page = busy.json("audit", "log", "--limit", "2")
    assert ([r["number"] for r in page["records"]], page["more"]) == ([5, 3], True)
    assert "… more records: --limit 0 shows all" in busy.run("audit", "log", "--limit", "1").stdout


def test_audit_log_since_takes_durations_and_iso_dates(busy: Project) -> None:
    assert len(busy.json("audit", "log", "--since", "2h")["records"]) == 3
    tomorrow = time.strftime("%Y-%m-%d", time.localtime(time.time() + 86_400))
    assert busy.json("audit", "log", "--since", tomorrow)["records"] == []
    assert "no audit records (since " in busy.run("audit", "log", "--since", tomorrow).stdout
    bad = busy.run("audit", "log", "--since", "yesterday", check=2)
    assert "give a duration (30m, 2h, 3d, 1w) or an ISO date" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_audit_log_pages_on_a_terminal_and_not_when_piped(busy: Project, tmp_path: Path) -> None:
    paged = tmp_path / "paged.txt"
    pager = tmp_path / "pager.sh"
    pager.write_text(f"#!/bin/sh\ncat > '{paged}'\n")
    pager.chmod(0o755)
    _in_terminal(busy, "audit", "log", PAGER=str(pager))
    text = paged.read_text()
    assert "3 audit records, newest first" in text and f"Bash: {PUSH}" in text
    paged.unlink()
    piped = subprocess.run(
        [str(FORGE), "audit", "log"],
        capture_output=True,
        text=True,
        cwd=busy.path,
        env={**busy.env, "PAGER": str(pager)},
        timeout=60,
    )
    assert "3 audit records" in piped.stdout and not paged.exists()
    out = _in_terminal(busy, "audit", "log", "--no-pager", PAGER=str(pager))
    assert "3 audit records" in out and not paged.exists()


def test_audit_json_holds_more_than_counts(busy: Project) -> None:
    summary = busy.json("audit")
    row = summary["behaviors"]["no-destructive-git"]
    assert (row["blocks"], row["sessions_seen"]) == (3, 3)
    assert row["first_seen"] <= row["last_seen"] == summary["last_record"]
    assert [(r["number"], r["session_id"]) for r in summary["recent"]] == [
        (5, "s3"),
        (3, "s2"),
        (1, "s1"),
    ]  # the seen records between them are left out
    assert summary["recent"][0]["what"] == f"Bash: {PUSH}"
    assert summary["behaviors"]["search-first"]["last_seen"] is None


# -- explain --record --------------------------------------------------------------------------


def test_explain_record_decides_the_recorded_call_again(busy: Project) -> None:
    out = busy.run("explain", "--record", "3").stdout
    assert out.splitlines()[0].endswith(f"session s2): PreToolUse Bash: {PUSH}")
    assert "  recorded: no-destructive-git hard_block" in out
    today = "  today:    no-destructive-git hard_block; outcome hard_block by no-destructive-git"
    assert today in out
    assert "nothing was recorded" in out
    assert "match: facts.shell_commands regex_match" in out  # the usual trace follows
    report = busy.json("explain", "--record", "3")
    assert (report["today"]["same"], report["today"]["behavior_level"]) == (True, "hard_block")
    assert report["today"]["explain"]["outcome"] == "hard_block"
    assert len(busy.json("audit", "log")["records"]) == 3  # a dry run: nothing appended


def test_explain_record_shows_a_change_of_catalog(busy: Project) -> None:
    busy.run("off", "no-destructive-git")  # audited: record 7, a bypass switch
    out = busy.run("explain", "--record", "1").stdout
    assert "  recorded: no-destructive-git hard_block" in out
    assert "  today:    no-destructive-git does not fire; outcome " in out
    assert "  differs: " in out
    switch = busy.run("explain", "--record", "7", check=1)
    assert "audit record 7 is a bypass record: only block and violation records" in switch.stderr
    missing = busy.run("explain", "--record", "99", check=1)
    assert "no audit record 99: forge-policy audit log shows" in missing.stderr


def test_explain_record_of_a_record_written_before_inputs_were_kept(tmp_path: Path) -> None:
    project = Project(tmp_path)
    log = project.root / "audit" / "overrides.log"
    log.parent.mkdir(parents=True)
    from forge_policy.audit.jsonl import JsonlAuditSink

    sink = JsonlAuditSink(log)
    old = {"kind": "block", "session_id": "s", "behavior_id": "b", "level": "hard_block"}
    sink.append_many([{**old, "tool_name": "Bash", "input_summary": "Bash: make"}])
    result = project.run("explain", "--record", "1", check=1)
    assert "written before records kept the call's input" in result.stderr
    assert "'Bash: make'" in result.stderr and "JSON on stdin or with --file" in result.stderr


# -- colour ------------------------------------------------------------------------------------


def test_colour_on_a_terminal_only_and_never_with_no_color(busy: Project) -> None:
    coloured = _in_terminal(busy, "audit", "log", "--no-pager")
    assert "\x1b[31mblock\x1b[0m" in coloured  # a block is red
    assert _ansi(_in_terminal(busy, "status"))
    assert not _ansi(_in_terminal(busy, "audit", "log", "--no-pager", NO_COLOR="1"))
    assert not _ansi(_in_terminal(busy, "status", NO_COLOR="1"))
    assert not _ansi(busy.run("audit", "log").stdout)  # a pipe
    assert not _ansi(busy.run("status").stdout)


def test_the_hook_never_imports_rich_nor_the_colour_module(tmp_path: Path) -> None:
    code = (
        "import sys, io, os\n"
        "from forge_policy.hook import main\n"
        "main(io.StringIO('{}'), io.StringIO(), io.StringIO(), os.environ, [])\n"
        "print(sorted(m for m in sys.modules if m.startswith(('rich', 'forge_policy.cli'))))\n"
    )
    env = {**Project(tmp_path).env}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.stdout.strip() == "[]", result.stderr


# -- completion --------------------------------------------------------------------------------

BASH_DRIVER = """\
eval "$("$FORGE" completion bash)"
c() {
    COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
    _forge_policy
    echo "${COMPREPLY[*]}"
}
"""

#: (words typed, the last one being completed) -> what completes
CASES = [
    (("forge-policy", "sta"), "status statusline"),
    (("forge-policy", "sh"), "shadow"),
    (("forge-policy", "shadow", "r"), "report"),
    (("forge-policy", "su"), "suggest"),
    (("forge-policy", "audit", "l"), "log"),
    (("forge-policy", "audit", "log", "--k"), "--kind"),
    (("forge-policy", "audit", "log", "--kind", "b"), "block bypass"),
    (("forge-policy", "audit", "log", "--session", "s1", "--kind", "o"), "override"),
    (("forge-policy", "worker", "s"), "settle status stop"),
    (("forge-policy", "init", "--harness", "co"), "codex copilot"),
    (("forge-policy", "init", "--pl"), "--plugin"),
    (("forge-policy", "completion", "z"), "zsh"),
    (("forge-policy", "status", "--l"), "--limit"),
    (("forge-policy", "explain", "--rec"), "--record"),
]


def _quoted(words: tuple[str, ...]) -> str:
    return " ".join(f"'{w}'" for w in words)


def test_bash_completion_from_the_parser(project: Project) -> None:
    lines = [_quoted(words) for words, _ in CASES]
    script = BASH_DRIVER + "".join(f"c {line}\n" for line in lines)
    result = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", script],
        capture_output=True,
        text=True,
        env={**project.env, "FORGE": str(FORGE)},
        timeout=60,
    )
    assert result.stderr == ""
    assert result.stdout.splitlines() == [expected for _, expected in CASES]


def test_every_command_and_option_is_in_the_scripts(project: Project) -> None:
    from forge_policy.cli.app import build_parser
    from forge_policy.cli.completion import command_tree

    bash = project.run("completion", "bash").stdout
    fish = project.run("completion", "fish").stdout
    for command in command_tree(build_parser()):
        for name, _ in command.subcommands:
            assert name in bash and f"-a {name} " in fish
        for option in command.options:
            for flag in option.flags:
                assert flag in bash
                assert (f"-l {flag[2:]}" if flag.startswith("--") else f"-s {flag[1]}") in fish


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed here")
def test_zsh_completion_through_bashcompinit(project: Project) -> None:
    """zsh's own completion system filters candidates by the typed prefix (compadd), so the
    driver does the same; what is tested is that the script loads in zsh and finds the
    command path with zsh's arrays (numbered from 1) and special variables (``path``)."""
    script = (
        "autoload -U compinit && compinit -u\n"
        'eval "$("$FORGE" completion zsh)"\n'
        "c() {\n"
        '    COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=()\n'
        "    _forge_policy\n"
        '    local cur="${@[-1]}"\n'
        '    print -r -- "${(j: :)${(M)COMPREPLY[@]:#${cur}*}}"\n'
        "}\n"
    )
    script += "".join(f"c {_quoted(words)}\n" for words, _ in CASES)
    script += 'print -r -- "PATH kept: ${PATH:+yes}"\n'
    result = subprocess.run(
        ["zsh", "-f", "-c", script],
        capture_output=True,
        text=True,
        env={**project.env, "FORGE": str(FORGE)},
        timeout=60,
    )
    assert result.stdout.splitlines() == [*(e for _, e in CASES), "PATH kept: yes"], result.stderr


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed here")
def test_fish_completion(project: Project, tmp_path: Path) -> None:
    script = tmp_path / "forge-policy.fish"
    script.write_text(project.run("completion", "fish").stdout)
    commands = [f"source '{script}'"]
    commands += [f"complete -C {json.dumps(' '.join(words))}; echo ---" for words, _ in CASES]
    result = subprocess.run(
        ["fish", "--no-config", "-c", "; ".join(commands)],
        capture_output=True,
        text=True,
        env={**project.env, "HOME": str(tmp_path)},
        timeout=60,
    )
    assert result.stderr == ""
    found: list[Any] = [[]]
    for line in result.stdout.splitlines():
        if line == "---":
            found.append([])
        else:
            found[-1].append(line.split("\t")[0])
    assert [" ".join(words) for words in found[:-1]] == [e for _, e in CASES]
