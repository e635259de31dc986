"""``forge-policy`` end to end: the real executable in subprocesses against temporary roots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import forge_policy as fp
from forge_policy.catalog.loader import BUILTIN_DIR
from forge_policy.cli import main
from tests.cli_support import SOFT_RULE, Project, decision_of, soft_catalog, tool_event

COMMANDS = [
    *("hook", "serve", "init", "status", "explain", "override", "list", "describe"),
    *("validate", "on", "off", "strict", "relaxed", "audit", "purge", "git"),
]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


@pytest.fixture
def soft(tmp_path: Path) -> Project:
    """A project whose catalog is the single soft-blocking ``no-rm`` behavior."""
    catalog = soft_catalog(tmp_path / "catalog")
    return Project(tmp_path, FORGE_BEHAVIORS_DIR=str(catalog))


def test_version(project: Project) -> None:
    assert project.run("--version").stdout == f"forge-policy {fp.__version__}\n"


def test_serve_refuses_a_port_out_of_range(project: Project) -> None:
    """Issue 15: ``serve --port 70000`` (or -1) ended in an OverflowError traceback."""
    for port, allowed in (("70000", "0-65535"), ("-1", "0-65535")):
        err = project.run("serve", "--port", port, check=2).stderr
        assert f"port {port} is out of range: expected {allowed}" in err
        assert "Traceback" not in err
    project.run("init", "--serve")
    serve_json = project.root / "runtime" / "serve.json"
    serve_json.write_text(json.dumps({"host": "127.0.0.1", "port": 70000, "mode": "via-serve"}))
    err = project.run("serve", check=1).stderr
    assert err == (
        "forge-policy: cannot listen on 127.0.0.1: port 70000 is out of range: expected 0-65535\n"
    )


def test_help_lists_every_command_and_exit_codes(project: Project) -> None:
    out = project.run("--help").stdout
    for command in COMMANDS:
        assert f"\n    {command} " in out
    assert "4  integrity failure" in out


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert f"forge-policy {command}" in capsys.readouterr().out


def test_usage_errors_exit_2(project: Project) -> None:
    assert "required: --session" in project.run("override", "x", "--reason", "r", check=2).stderr
    project.run("frobnicate", check=2)
    bad = Project(project.path, FORGE_LOCK_TIMEOUT="soon")
    assert "FORGE_LOCK_TIMEOUT" in bad.run("status", check=2).stderr


def test_store_failure_exits_3(project: Project, tmp_path: Path) -> None:
    (tmp_path / "not-a-dir").write_text("x")
    broken = Project(project.path, FORGE_STORE=f"sqlite:{tmp_path}/not-a-dir/state.db")
    result = broken.run("status", check=3)
    assert result.stderr.startswith("forge-policy: ") and "Traceback" not in result.stderr


def test_list(project: Project) -> None:
    out = project.run("list").stdout.splitlines()
    assert out[0].split() == ["id", "enabled", "default", "category", "tuning", "name"]
    table = {line.split()[0]: line.split()[1:5] for line in out[1:]}
    assert table["no-destructive-git"] == ["yes", "hard_block", "core", "-"]
    assert list(table) == fp.builtin_catalog().ids
    rows = {r["id"]: r for r in project.json("list")["behaviors"]}
    assert rows["plan-before-code"]["enabled"] is False
    assert rows["search-first"]["default_level"] == "silent"
    disabled = Project(project.path, FORGE_DISABLE="search-first")
    assert "no (FORGE_DISABLE)" in disabled.run("list").stdout


def test_describe(project: Project) -> None:
    out = project.run("describe", "search-first").stdout
    assert out.startswith("search-first: Look Before You Write\n")
    assert "level: silent (then 1: nudge, 3: warning, 5: soft_block)" in out
    assert "1. PreToolUse[Write|Edit] check_flag(searched per facts.write_credits)" in out
    assert project.json("describe", "search-first")["id"] == "search-first"
    err = project.run("describe", "search-frist", check=1).stderr
    assert err == "forge-policy: unknown behavior 'search-frist' (did you mean 'search-first'?)\n"


def test_validate_good(project: Project) -> None:
    builtin = fp.builtin_catalog()
    counts = f"{len(builtin)} behaviors, {len(builtin.enabled())} enabled"
    assert project.run("validate").stdout == f"ok: {BUILTIN_DIR}: {counts}\n"
    soft_catalog(project.path / "mine")
    assert project.run("validate", "mine").stdout == "ok: mine: 1 behaviors, 1 enabled\n"


BROKEN = {
    "rule-a": """\
schema_version: "1"
id: rule-a
name: Rule A
description: a broken rule
category: core
scope: task
policy:
  triggers:
    - event: PreToolUse
      matcher: Bash
      action: set_flag
      flag: seen
  enforcement:
    default_level: warning
    escalation:
      - after: 3
        level: soft_block
      - after: 2
        level: hard_block
  recovery:
    hint: fix it
""",
    "rule-b": """\
schema_version: "1"
id: rule-b
name: Rule B
description: another broken rule
category: core
scope: session
policy:
  triggers:
    - event: PreToolUse
      matcher: "*"
      conditions:
        - field: command
          operator: regex_match
          value: "(unclosed"
  enforcement:
    default_level: loud
  recovery:
    hint: fix it
""",
}


def test_validate_bad_reports_every_error_with_position(project: Project) -> None:
    folder = project.path / "bad"
    for behavior_id, text in BROKEN.items():
        (folder / behavior_id).mkdir(parents=True)
        (folder / behavior_id / "behavior.yaml").write_text(text)
    (folder / "index.yaml").write_text(
        'schema_version: "1"\nbehaviors:\n  - id: rule-a\n  - id: rule-b\n  - id: rule-c\n'
    )
    result = project.run("validate", "bad", check=1)
    assert result.stdout.splitlines() == [
        "bad/index.yaml:5:9: behaviors[2].id: behavior 'rule-c' has no file "
        "bad/rule-c/behavior.yaml",
        "bad/rule-a/behavior.yaml:6:8: scope: scope 'task' is reserved: only 'session' and "
        "'agent' are supported",
        "bad/rule-a/behavior.yaml:18:16: policy.enforcement.escalation[1].after: "
        "must be greater than 3",
        "bad/rule-b/behavior.yaml:14:18: policy.triggers[0].conditions[0].value: "
        "invalid regex: missing ): (unclosed",
        "bad/rule-b/behavior.yaml:16:20: policy.enforcement.default_level: unknown level "
        "'loud': expected one of silent, nudge, warning, soft_block, hard_block",
    ]
    assert result.stderr == "forge-policy: bad: 5 problems\n"
    issues = json.loads(project.run("validate", "bad", "--json", check=1).stdout)["issues"]
    assert (issues[1]["line"], issues[1]["column"]) == (6, 8)


def _state_files(project: Project) -> dict[str, bytes]:
    files = [project.root / "runtime" / "state.json", project.root / "audit" / "overrides.log"]
    return {str(f): f.read_bytes() for f in files if f.exists()}


def test_explain_changes_nothing(project: Project) -> None:
    for _ in range(2):
        project.hook(tool_event("Write", file_path="/p/a.py", content="x"))
    project.hook(tool_event("Bash", command="git push --force"))
    before, files = project.json("status"), _state_files(project)
    write = json.dumps(tool_event("Write", file_path="/p/b.py", content="y"))
    out = project.run("explain", input=write).stdout
    assert out.startswith("PreToolUse Write in session s1: warning (dry run")
    assert "  search-first: violation 3: would reach warning\n" in out
    assert "flag searched absent for every key: violation" in out
    assert "  plan-before-code: disabled\n" in out
    (project.path / "event.json").write_text(
        json.dumps(tool_event("Bash", command="git reset --hard"))
    )
    result = project.json("explain", "--file", "event.json")
    assert result["outcome"] == "hard_block" and result["blocking_behavior"] == "no-destructive-git"
    conditions = [
        c
        for t in result["trace"]
        if t.get("behavior_id") == "no-destructive-git"
        for c in t.get("conditions", ())
    ]
    assert conditions and conditions[0]["matched"] is True
    assert project.json("status") == before
    assert _state_files(project) == files
    assert "not valid JSON" in project.run("explain", input="{", check=1).stderr
    for deep in ("[" * 100000, '{"x": ' + "[" * 200 + "]" * 200 + "}"):  # issue 15: no traceback
        err = project.run("explain", input=deep, check=1).stderr
        assert err == "forge-policy: event: nested deeper than 128 levels; refused\n"


def test_explain_of_a_pass_withdrawn_by_a_later_block(tmp_path: Path) -> None:
    # the trace entry of a withdrawn pass names no behavior: explain used to crash on it
    folder = tmp_path / "catalog"
    for behavior_id in ("first", "second"):
        rule = SOFT_RULE.replace("id: no-rm", f"id: {behavior_id}").replace('"rm "', '"make "')
        (folder / behavior_id).mkdir(parents=True)
        (folder / behavior_id / "behavior.yaml").write_text(rule)
    (folder / "index.yaml").write_text(
        'schema_version: "1"\nbehaviors:\n  - id: first\n  - id: second\n'
    )
    project = Project(tmp_path, FORGE_BEHAVIORS_DIR=str(folder))
    call = json.dumps(tool_event("Bash", command="make release"))
    assert decision_of(project.hook(json.loads(call))) == "deny"  # first blocks, second unseen
    out = project.run("explain", input=call).stdout
    assert out.startswith("PreToolUse Bash in session s1: soft_block by second (dry run")
    assert (
        "  first: pending block matched (override by retry), but the pass is withdrawn: "
        "second blocks the call\n" in out
    )
    assert "  second: violation 1: would reach soft_block\n" in out
    trace = project.json("explain", input=call)["trace"]
    assert trace[0] == {"behavior_id": "first", "override": "retry"}
    assert trace[-1] == {"withdrawn": 1, "by": "second"}


def test_override_lets_the_next_blocked_call_pass(soft: Project) -> None:
    assert decision_of(soft.hook(tool_event("Bash", command="rm a"))) == "deny"
    out = soft.run("override", "no-rm", "--session", "s1", "--reason", "user approved").stdout
    assert out.startswith("override granted: the next soft-blocked call of no-rm in session s1")
    assert soft.json("status", "--session", "s1")["sessions"][0]["behaviors"]["no-rm"][
        "override_granted"
    ]
    # SPEC §4 (issue 23): the retry of the waiting call passes by retry and leaves the grant;
    # the next call that would be blocked passes by it; the one after is blocked again
    assert decision_of(soft.hook(tool_event("Bash", command="rm a"))) is None
    assert decision_of(soft.hook(tool_event("Bash", command="rm c"))) is None
    assert decision_of(soft.hook(tool_event("Bash", command="rm d"))) == "deny"
    log = soft.root / "audit" / "overrides.log"
    overrides = [
        r for r in map(json.loads, log.read_text().splitlines()) if r["kind"] == "override"
    ]
    assert [(o["mechanism"], o["reason"]) for o in overrides] == [
        ("retry", ""),
        ("explicit", "user approved"),
    ]
    err = soft.run("override", "nope", "--session", "s1", "--reason", "r", check=1).stderr
    assert "unknown behavior 'nope'" in err
    for reason in ("", "   "):  # an override with no reason was recorded as granted for nothing
        err = soft.run("override", "no-rm", "--session", "s1", "--reason", reason, check=1).stderr
        assert err == "forge-policy: --reason is empty: say why the blocked call may go through\n"


def test_override_of_a_hard_block_is_refused(project: Project) -> None:
    err = project.run("override", "no-destructive-git", "--session", "s", "--reason", "r", check=1)
    assert "hard_block behavior: it has no override" in err.stderr


def test_override_of_an_unknown_session_is_refused_unless_new(project: Project) -> None:
    """Issue 10: a typo in ``--session`` used to grant into the void, silently."""
    project.hook(tool_event("Edit", file_path="/p/a.py", old_string="a", new_string="b"))
    err = project.run("override", "search-first", "--session", "s9", "--reason", "r", check=1)
    assert err.stderr == (
        "forge-policy: session 's9' has no live state (a typo? live sessions: s1); "
        "to grant ahead of its first event, add --new-session\n"
    )
    assert [s["session_id"] for s in project.json("status")["sessions"]] == ["s1"]  # unchanged
    ahead = ("override", "search-first", "--session", "s9", "--reason", "r", "--new-session")
    assert project.run(*ahead).stdout.startswith("override granted")
    assert project.run("override", "search-first", "--session", "s1", "--reason", "r").stdout


def test_status_reports_real_counters(project: Project) -> None:
    # no session yet; the floor line (SPEC §13) follows: tests/test_doctor_floor.py
    assert project.run("status").stdout.splitlines()[0] == "no live sessions"
    for _ in range(3):
        project.hook(tool_event("Edit", file_path="/p/a.py", old_string="a", new_string="b"))
    assert decision_of(project.hook(tool_event("Bash", "s2", command="git push -f"))) == "deny"
    report = project.json("status")
    assert [s["session_id"] for s in report["sessions"]] == ["s2", "s1"]  # newest first
    s1 = report["sessions"][1]["behaviors"]["search-first"]
    assert (s1["counter"], s1["level"], s1["next_threshold"], s1["blocks"]) == (3, "warning", 5, 0)
    s2 = report["sessions"][0]["behaviors"]["no-destructive-git"]
    assert (s2["counter"], s2["level"], s2["blocks"]) == (1, "hard_block", 1)
    assert s2["pending_block"] is False
    assert report["serve"]["configured"] is False
    text = project.run("status", "--session", "s1").stdout
    assert text.splitlines()[1].startswith("session s1 (last active ")
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines()[3:]}
    assert rows["search-first"] == ["on", "3", "warning", "5", "0", "0", "-"]
    assert rows["plan-before-code"] == ["off", "0", "-", "-", "0", "0", "-"]


def test_audit_numbers_band_and_verify(soft: Project) -> None:
    rm = tool_event("Bash", command="rm x")
    assert decision_of(soft.hook(rm)) == "deny"
    assert decision_of(soft.hook(rm)) is None  # identical retry: override by retry
    behavior = soft.json("audit")["behaviors"]["no-rm"]
    assert (behavior["blocks"], behavior["overrides"], behavior["override_rate"]) == (1, 1, 1.0)
    assert behavior["band"] == "ineffective"
    assert decision_of(soft.hook(tool_event("Bash", command="rm y"))) == "deny"
    summary = soft.json("audit", "--verify")
    behavior = summary["behaviors"]["no-rm"]
    assert (behavior["violations"], behavior["blocks"], behavior["overrides"]) == (2, 2, 1)
    assert (behavior["override_rate"], behavior["band"]) == (0.5, "review")
    assert (summary["installed"], summary["enabled"]) == (1, ["no-rm"])
    # 7: the two blocks, the override, the floor the call let through ran under (off), and the
    # seen record of each of the three calls
    assert summary["verify"] == {"ok": True, "records": 7, "problems": [], "torn_tail": False}
    text = soft.run("audit", "--verify").stdout
    assert "no-rm     yes  2           2       1          0.50  review" in text
    assert text.endswith("audit log intact: 7 records, hash chain verified\n")
    assert "; 7 audit records (3 of them seen: one per decided tool call)" in text

    log = soft.root / "audit" / "overrides.log"
    lines = log.read_text().splitlines(keepends=True)
    assert '"kind":"override"' in lines[2]
    lines[2] = lines[2].replace('"mechanism":"retry"', '"mechanism":"explicit"')
    log.write_text("".join(lines))
    result = soft.run("audit", "--verify", check=4)
    assert "line 4: prev does not match" in result.stderr
    assert result.stderr.endswith("integrity failure: the audit log (7 records) is broken\n")


def test_purge_removes_expired_sessions(project: Project) -> None:
    project.hook(tool_event("Write", "old", file_path="/p/a.py", content="x"))
    project.hook(tool_event("Write", "new", file_path="/p/a.py", content="x"))
    state_path = project.root / "runtime" / "state.json"
    state = json.loads(state_path.read_text())
    state["sessions"]["old"]["last_accessed_at"] = "2001-01-01T00:00:00+00:00"
    state_path.write_text(json.dumps(state))
    assert project.run("purge").stdout == "purged 1 expired session (TTL 86400 s)\n"
    assert [s["session_id"] for s in project.json("status")["sessions"]] == ["new"]
    assert project.run("purge").stdout == "purged 0 expired sessions (TTL 86400 s)\n"


def test_override_for_an_empty_session_is_refused(project: Project) -> None:
    """Issue 10: ``override --session ''`` was accepted (a grant no session can ever use)."""
    err = project.run("override", "search-first", "--session", " ", "--reason", "r", check=1)
    assert "--session is empty" in err.stderr
