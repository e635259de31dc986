"""End to end: the evaluator writes a verifiable JSONL log with complete override records."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

import forge_policy as fp
from forge_policy.audit.jsonl import JsonlAuditSink

from .conftest import FakeClock

if TYPE_CHECKING:
    from pathlib import Path

OVERRIDE_FIELDS = {
    "kind",
    "released",
    "override_id",
    "timestamp",
    "session_id",
    "behavior_id",
    "tool_name",
    "input_summary",
    "counter",
    "mechanism",
    "reason",
    "seq",
}


def test_five_writes_then_an_identical_retry(tmp_path: Path, clock: FakeClock) -> None:
    log = tmp_path / ".forge" / "audit" / "overrides.log"
    sink = JsonlAuditSink(log)
    ev = fp.Evaluator(fp.builtin_catalog(), audit=sink, clock=clock)
    secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
    content = f"API_KEY = '{secret}'\n" + "x" * 500

    def write(i: int) -> fp.Decision:
        return ev.evaluate(
            fp.Event(
                "PreToolUse",
                "sess-1",
                tool_name="Write",
                tool_input={"file_path": f"/repo/app{i}.py", "content": content},
            )
        )

    decisions = []
    for i in range(5):
        clock.advance(2)
        decisions.append(write(i))
    assert [d.blocked for d in decisions] == [False] * 4 + [True]
    clock.advance(30)
    assert not write(4).blocked  # identical call within 60 s: override by retry

    records = [r for r in sink.records() if r["kind"] != "violation"]
    assert [r["kind"] for r in records] == ["block", "override"]
    blocked, granted = records
    assert blocked["behavior_id"] == "search-first" and blocked["counter"] == 5
    assert set(granted) == OVERRIDE_FIELDS
    assert len(granted["override_id"]) == 32
    assert granted["session_id"] == "sess-1"
    assert granted["behavior_id"] == "search-first"
    assert granted["tool_name"] == "Write"
    assert granted["input_summary"] == "Write: /repo/app4.py"
    assert len(granted["input_summary"]) <= 100
    assert granted["counter"] == 5
    assert granted["mechanism"] == "retry"
    assert granted["reason"] == ""
    assert datetime.fromisoformat(granted["timestamp"]).timestamp() == clock.now
    assert granted["timestamp"].endswith("+00:00")
    report = sink.verify()
    assert report.ok and report.records == 6  # four violations, the block, the override
    assert secret not in log.read_text(encoding="utf-8")
    state = ev.store.load("sess-1")
    assert state is not None
    assert [o["override_id"] for o in state.behavior("search-first").overrides] == [
        granted["override_id"]
    ]
