"""The audit record shapes (:mod:`forge_policy.audit.records`): every kind converts to exactly
the dict its writer used to spell by hand, so what a sink stores is unchanged; an omitted field
is left out only while it is None; every other field is always written."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest

import forge_policy as fp
from forge_policy.audit import records
from forge_policy.audit.verify import canonical
from forge_policy.engine.records import decision_record, override_id, override_record
from forge_policy.levels import Level
from forge_policy.stores._recovery import quarantine

KINDS = {
    records.Violation: "violation",
    records.Block: "block",
    records.Override: "override",
    records.Grant: "grant",
    records.Bypass: "bypass",
    records.BypassSwitch: "bypass",
    records.Recovery: "recovery",
    records.Integrity: "integrity",
    records.FloorRun: "floor",
    records.Diagnostic: "diagnostic",
    records.Tuning: "tuning",
}


@pytest.mark.parametrize("cls", list(KINDS), ids=lambda cls: cls.__name__)
def test_every_kind_is_a_frozen_attrs_class_with_its_kind(cls: type) -> None:
    assert attrs.has(cls) and KINDS[cls] == cls.kind  # type: ignore[attr-defined]
    assert "kind" not in attrs.fields_dict(cls)  # a class constant, never a field to set
    assert "__dict__" not in dir(cls)  # slotted
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        cls.__setattr__(object.__new__(cls), "timestamp", "t")


def test_a_record_reads_as_its_dict() -> None:
    record = records.Recovery(timestamp="t", reason="r")
    assert repr(record) == "Recovery({'kind': 'recovery', 'timestamp': 't', 'reason': 'r'})"


def event(**extra: Any) -> fp.Event:
    return fp.Event("PreToolUse", "s1", tool_name="Bash", tool_input={"command": "make"}, **extra)


def violation(level: Level, **extra: Any) -> fp.Violation:
    return fp.Violation("b", "B", level, 3, "m", **extra)


def test_a_block_record_has_the_fields_it_always_had() -> None:
    record = decision_record(event(), violation(Level.SOFT_BLOCK), 0.0, "h", "agent")
    assert record == {
        "kind": "block",
        "timestamp": "1970-01-01T00:00:00.000000+00:00",
        "session_id": "s1",
        "behavior_id": "b",
        "level": "soft_block",
        "counter": 3,
        "tool_name": "Bash",
        "event": "PreToolUse",
        "input_summary": "Bash: make",
        "shadow": False,
        "call_hash": "h",
        "override_mode": "agent",
        "tool_use_id": "",
        # what explain --record rebuilds the event from (redacted, bounded)
        "event_input": {"tool_input": {"command": "make"}, "harness": "claude-code"},
    }


def test_a_shown_violation_is_a_violation_record_with_its_optional_fields() -> None:
    shadow = violation(Level.SOFT_BLOCK, shadow=True, overridden="retry")
    record = decision_record(event(), shadow, 0.0, "h", "user", undetermined=("cut",))
    assert record["kind"] == "violation"
    assert record["overridden"] == "retry" and record["undetermined"] == ["cut"]
    warning = decision_record(event(), violation(Level.WARNING), 0.0, "h", "agent")
    assert warning["kind"] == "violation"
    assert "overridden" not in warning and "undetermined" not in warning


def test_an_override_record_keeps_its_fields_and_lists() -> None:
    record = override_record(event(), "b", 5, "retry", "", 0.0, basis="0.0", released=("pending",))
    assert record == {
        "kind": "override",
        "override_id": override_id("s1", "b", "retry", "0.0", 5),
        "timestamp": "1970-01-01T00:00:00.000000+00:00",
        "session_id": "s1",
        "behavior_id": "b",
        "tool_name": "Bash",
        "input_summary": "Bash: make",
        "counter": 5,
        "mechanism": "retry",
        "reason": "",
        "released": ["pending"],
    }
    assert type(record["released"]) is list  # JSON's array, as before


def test_a_session_switch_has_no_bypass_never_and_a_project_switch_no_session() -> None:
    session = records.BypassSwitch(
        timestamp="t",
        session_id="s1",
        behavior_id="b",
        scope="session",
        enabled=False,
        variable="forge-policy off",
    )
    assert records.to_dict(session) == {
        "kind": "bypass", "timestamp": "t", "session_id": "s1", "behavior_id": "b",
        "scope": "session", "enabled": False, "variable": "forge-policy off",
    }  # fmt: skip
    project = records.BypassSwitch(
        timestamp="t",
        behavior_id="b",
        scope="project",
        enabled=True,
        variable="forge-policy on",
        bypass_never=False,
    )
    assert records.to_dict(project) == {
        "kind": "bypass", "timestamp": "t", "behavior_id": "b", "scope": "project",
        "enabled": True, "variable": "forge-policy on", "bypass_never": False,
    }  # fmt: skip


def test_a_field_of_the_shape_is_kept_empty_and_an_omitted_one_dropped() -> None:
    record = records.to_dict(
        records.Bypass(
            timestamp="t", session_id="s1", behavior_id="b", variable="FORGE_DISABLE",
            event="Stop", tool_name="", input_summary="", level="warning", counter=1,
        )
    )  # fmt: skip
    assert record["tool_name"] == "" and next(iter(record)) == "kind"
    recovery = records.to_dict(records.Recovery(timestamp="t", reason="r", log_seq=0))
    assert recovery["log_seq"] == 0 and "head_seq" not in recovery  # 0 is a value, None is not


def test_the_recovery_shapes_of_the_stores_and_the_logs() -> None:
    moved = records.Recovery(timestamp="t", path="/s", moved_to="/s.corrupt", reason="r")
    assert records.to_dict(moved) == {
        "kind": "recovery", "timestamp": "t", "path": "/s", "moved_to": "/s.corrupt",
        "reason": "r",
    }  # fmt: skip
    tail = records.Recovery(timestamp="t", reason="gone", head_seq=9, head_hash="x", log_seq=7)
    assert records.to_dict(tail) == {
        "kind": "recovery", "timestamp": "t", "reason": "gone", "head_seq": 9, "head_hash": "x",
        "log_seq": 7,
    }  # fmt: skip


def test_quarantine_runs_the_store_statements_and_returns_its_recovery() -> None:
    ran: list[tuple[str, tuple[Any, ...]]] = []
    record = quarantine(
        lambda sql, params: ran.append((sql, params)), ("INSERT q", "DELETE s"), "s1", "[1]",
        "/db", "quarantine",
    )  # fmt: skip
    assert [sql for sql, _ in ran] == ["INSERT q", "DELETE s"]
    assert ran[0][1][:3] == ("s1", "[1]", "data is not a JSON object") and ran[1][1] == ("s1",)
    assert isinstance(ran[0][1][3], float)  # moved_at: when
    assert {k: v for k, v in record.items() if k != "timestamp"} == {
        "kind": "recovery", "path": "/db", "moved_to": "quarantine", "session_id": "s1",
        "reason": "data is not a JSON object",
    }  # fmt: skip


def test_every_kind_is_json_and_canonical() -> None:
    integrity = records.Integrity(
        timestamp="t", session_id="s", reason="r", checkpoint_seq=3, log_seq=1
    )
    diagnostic = records.Diagnostic(
        code="session_id_derived", timestamp="t", session_id="derived-x", derived_from="cwd",
        event="Stop", message="m",
    )  # fmt: skip
    grant = records.Grant(
        timestamp="t", session_id="s", behavior_id="b", grant_id="g", reason="r", valid_until="u"
    )
    tuning = records.Tuning(
        timestamp="t", behavior_id="b", suggestion="0a1b2c3d", number=2, action="exception",
        title="exception for b", change={"exceptions": [{"behavior": "b"}]}, file="f",
        evidence={"records": [3, 4], "overrides": 3},
    )  # fmt: skip
    for record in (integrity, diagnostic, grant, tuning):
        data = records.to_dict(record)
        assert json.loads(canonical(data)) == data


def test_the_record_classes_load_only_when_a_record_is_made(tmp_path: Any) -> None:
    # an allowed call through a JSONL sink writes nothing: the classes stay unimported
    import subprocess
    import sys

    log = str(tmp_path / "overrides.log")
    code = (
        "import sys, forge_policy as fp\n"
        "from forge_policy.audit.jsonl import JsonlAuditSink\n"
        f"ev = fp.Evaluator(fp.builtin_catalog(), audit=JsonlAuditSink({log!r}))\n"
        "ls = fp.Event('PreToolUse', 's', tool_name='Read', tool_input={'file_path': '/a.py'})\n"
        "assert ev.evaluate(ls).outcome == 'allow'\n"
        "before = 'forge_policy.audit.records' in sys.modules\n"
        "push = fp.Event('PreToolUse', 's', tool_name='Bash',"
        " tool_input={'command': 'git push --force'})\n"
        "assert ev.evaluate(push).outcome == 'hard_block'\n"
        "print(before, 'forge_policy.audit.records' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.split() == ["False", "True"], done.stderr
