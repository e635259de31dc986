"""The JSON the ``--json`` options print, pinned key by key and in order.

Scripts parse these outputs, so their shape is a contract: the typed results of
:mod:`forge_policy.engine.reports` must unstructure to exactly these keys. The same results read
through the Python API unstructure to the same JSON (one corpus, both entry points).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from forge_policy._time import parse_iso
from forge_policy.config.env import Config
from forge_policy.engine.reports import catalog_entries, to_json
from forge_policy.model import Event
from forge_policy.ops.admin import governance, status
from tests.cli_support import Project, decision_of, soft_catalog, tool_event

SESSION_KEYS = [
    *("session_id", "exists", "flags", "totals", "behaviors"),
    *("disabled", "created_at", "last_accessed_at"),
]
BEHAVIOR_STATUS_KEYS = [
    *("enabled", "counter", "level", "next_threshold", "pending_block", "overrides", "blocks"),
    *("session_disabled", "override_granted", "inactive_under", "level_shown"),
]
DECISION_KEYS = [
    *("event", "session_id", "tool_name", "outcome", "blocked", "override_allowed"),
    *("blocking_behavior", "messages", "violations", "overrides", "diagnostics"),
]
TRIGGER_KEYS = ["behavior_id", "trigger_index", "trigger", "matched", "effect", "conditions"]
CONDITION_KEYS = ["field", "operator", "value", "actual", "matched"]
SUMMARY_KEYS = ["behaviors", "sessions", "totals", "records", "kinds", "installed", "enabled"]
INSIGHT_KEYS = [
    *("violations", "blocks", "overrides", "override_rate", "band", "mechanisms"),
    *("installed", "enabled", "category"),
]
TOTALS_KEYS = ["violations", "blocks", "overrides", "override_rate", "band"]
#: what audit --json adds to the counts (issue 25: "audit --json holds only counts")
ACTIVITY_KEYS = ["first_record", "last_record", "recent"]


@pytest.fixture
def soft(tmp_path: Path) -> Project:
    """A ``no-rm`` project with one block let through by retry and one pending block."""
    project = Project(tmp_path, FORGE_BEHAVIORS_DIR=str(soft_catalog(tmp_path / "catalog")))
    rm = tool_event("Bash", command="rm x")
    assert decision_of(project.hook(rm)) == "deny"
    assert decision_of(project.hook(rm)) is None  # the identical retry: override by retry
    assert decision_of(project.hook(tool_event("Bash", command="rm y"))) == "deny"
    return project


def _api(project: Project) -> Any:
    return Config.from_env(project.env).build_evaluator()


def test_status_json(soft: Project) -> None:
    report = soft.json("status")
    assert list(report) == ["sessions", "serve", "audit", "floor", "summary", "more", "exceptions"]
    assert report["summary"] == {"sessions": 1, "violations": 2, "blocks": 2, "overrides": 1}
    assert report["more"] == 0
    assert report["audit"] == {"checked": True, "ok": True, "problems": []}
    assert report["exceptions"] == []  # none configured
    [session] = report["sessions"]
    assert list(session) == SESSION_KEYS
    assert (session["session_id"], session["exists"], session["disabled"]) == ("s1", True, [])
    assert (session["flags"], session["totals"]) == ([], {})
    assert parse_iso(session["created_at"]) > 0 and parse_iso(session["last_accessed_at"]) > 0
    assert session["behaviors"] == {
        "no-rm": {
            "enabled": True,
            "counter": 2,
            "level": "soft_block",
            "next_threshold": None,
            "pending_block": True,
            "overrides": 1,
            "blocks": 2,
            "session_disabled": False,
            "override_granted": None,
            "inactive_under": None,
            "level_shown": "soft_block",
        }
    }
    assert to_json(status(_api(soft))) == report["sessions"]


def test_status_json_of_an_unknown_session(soft: Project) -> None:
    report = soft.json("status", "--session", "nobody")
    assert report["sessions"] == [
        {
            "session_id": "nobody",
            "exists": False,
            "flags": [],
            "totals": {},
            "behaviors": {},
            "disabled": [],
            "created_at": None,
            "last_accessed_at": None,
        }
    ]


def test_status_json_shows_session_switches_grants_flags_and_totals(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.hook(tool_event("Read", file_path="/p/a.py"))  # credits /p/a.py (search-first)
    project.hook(tool_event("Read", event="PostToolUse", file_path="/p/a.py"))  # read_tokens
    project.run("off", "verify-before-done", "--session", "s1")
    project.run("override", "search-first", "--session", "s1", "--reason", "ok")
    [session] = project.json("status", "--session", "s1")["sessions"]
    assert session["flags"] == ["searched:/p/a.py"] and session["disabled"] == [
        "verify-before-done"
    ]
    assert list(session["totals"]) == ["read_tokens"]
    rows = session["behaviors"]
    assert all(list(row) == BEHAVIOR_STATUS_KEYS for row in rows.values())
    off = rows["verify-before-done"]
    assert (off["enabled"], off["session_disabled"]) == (False, True)
    assert parse_iso(rows["search-first"]["override_granted"]) > 0
    assert [k for k, r in rows.items() if r["override_granted"]] == ["search-first"]


def test_explain_json(soft: Project) -> None:
    event = tool_event("Bash", command="rm z")
    result = soft.json("explain", input=json.dumps(event))
    assert list(result) == [*DECISION_KEYS, "trace", "behaviors"]
    assert (result["outcome"], result["blocking_behavior"]) == ("soft_block", "no-rm")
    [trigger] = result["trace"]
    assert list(trigger) == TRIGGER_KEYS
    assert [list(c) for c in trigger["conditions"]] == [CONDITION_KEYS]
    assert trigger["conditions"][0] == {
        "field": "command",
        "operator": "starts_with",
        "value": "rm ",
        "actual": "rm z",
        "matched": True,
    }
    assert result["behaviors"] == [
        {
            "behavior_id": "no-rm",
            "result": "violation 3: would reach soft_block",
            "triggers": [trigger],
        }
    ]
    assert to_json(_api(soft).explain(Event.from_claude_code(event))) == result


def test_explain_json_trace_of_skipped_and_released_behaviors(soft: Project) -> None:
    retry = soft.json("explain", input=json.dumps(tool_event("Bash", command="rm y")))
    assert retry["trace"][0] == {"behavior_id": "no-rm", "override": "retry"}
    assert retry["behaviors"][0]["result"] == "passes: pending block released (override by retry)"
    soft.run("off", "no-rm", "--session", "s1")
    off = soft.json("explain", input=json.dumps(tool_event("Bash", command="rm y")))
    assert off["trace"] == [{"behavior_id": "no-rm", "skipped": "off for this session"}]


def test_audit_json(soft: Project) -> None:
    summary = soft.json("audit")
    assert list(summary) == [*SUMMARY_KEYS, *ACTIVITY_KEYS]
    activity = {k: summary.pop(k) for k in ACTIVITY_KEYS}  # tests/test_cli_audit_log.py
    assert [r["kind"] for r in activity["recent"]] == ["block", "floor", "override", "block"]
    seen = summary["behaviors"]["no-rm"]
    assert (seen.pop("sessions_seen"), seen.pop("first_seen") <= seen.pop("last_seen")) == (1, True)
    assert summary["behaviors"] == {
        "no-rm": {
            "violations": 2,
            "blocks": 2,
            "overrides": 1,
            "override_rate": 0.5,
            "band": "review",
            "mechanisms": {"retry": 1},
            "installed": True,
            "enabled": True,
            "category": "core",
        }
    }
    assert list(summary["behaviors"]["no-rm"]) == INSIGHT_KEYS
    assert summary["sessions"] == {"s1": {"no-rm": {"violations": 2, "blocks": 2, "overrides": 1}}}
    assert summary["totals"] == {
        "violations": 2,
        "blocks": 2,
        "overrides": 1,
        "override_rate": 0.5,
        "band": "review",
    }
    assert list(summary["totals"]) == TOTALS_KEYS
    # the call let through by retry ran with the project's floor off: recorded (SPEC §13);
    # each of the three calls has its seen record (left out of ``recent``)
    kinds = {"block": 2, "seen": 3, "override": 1, "floor": 1}
    assert (summary["records"], summary["kinds"]) == (7, kinds)
    assert (summary["installed"], summary["enabled"]) == (1, ["no-rm"])
    assert to_json(governance(_api(soft))) == summary
    verified = soft.json("audit", "--verify")
    assert list(verified) == [*SUMMARY_KEYS, *ACTIVITY_KEYS, "verify"]


def test_override_json(soft: Project) -> None:
    grant = soft.json("override", "no-rm", "--session", "s1", "--reason", "user approved")
    assert list(grant) == [
        *("grant_id", "session_id", "behavior_id", "reason", "granted_at", "valid_until"),
        *("call_id", "input_summary"),  # issue 23: the call a --call grant is bound to
    ]
    assert (grant["call_id"], grant["input_summary"]) == ("", "")
    assert (grant["session_id"], grant["behavior_id"], grant["reason"]) == (
        "s1",
        "no-rm",
        "user approved",
    )
    # SPEC §4 (issue 23): FORGE_GRANT_SECONDS, independent of the 60 s retry window
    assert parse_iso(grant["valid_until"]) - parse_iso(grant["granted_at"]) == 600
    [session] = soft.json("status")["sessions"]
    assert session["behaviors"]["no-rm"]["override_granted"] == grant["granted_at"]


def test_list_json(soft: Project) -> None:
    listing = soft.json("list")
    assert list(listing) == ["catalog", "behaviors"]
    assert listing["behaviors"] == [
        {
            "id": "no-rm",
            "enabled": True,
            "disabled_by": None,
            "default_level": "soft_block",
            "category": "core",
            "tuning": None,
            "name": "No rm",
            "inactive_under": None,
            "default_shown": "soft_block",
        }
    ]
    assert to_json(catalog_entries(_api(soft).catalog)) == listing["behaviors"]
