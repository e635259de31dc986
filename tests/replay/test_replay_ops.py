"""forge_policy.ops.replay: each session on its own evaluator, on the transcript's clock."""

from __future__ import annotations

from pathlib import Path

import forge_policy as fp
from forge_policy.catalog.loader import load_catalog
from forge_policy.ops.replay import replay
from forge_policy.ops.transcript import TranscriptEvent, read_transcripts
from tests.cli_support import soft_catalog

from .support import RENAME, UPLOAD, strict_catalog

T0 = 1_800_000_000.0


def _bash(session: str, when: float, command: str) -> TranscriptEvent:
    payload = {
        "session_id": session,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
    }
    return TranscriptEvent(payload, when, f"t.jsonl:{int(when - T0)}", int(when - T0))


def test_against_decides_as_that_catalog_alone(tmp_path: Path) -> None:
    # the second catalog reuses the facts the first computed: it must not change a decision
    events = read_transcripts([str(UPLOAD), str(RENAME)]).events
    strict = load_catalog(strict_catalog(tmp_path / "strict"))
    paired = replay(events, fp.builtin_catalog(), against=strict)
    alone = replay(events, strict)
    assert [s.against for _, s in paired.steps()] == [s.decision for _, s in alone.steps()]
    assert len(paired.differences()) == 3


def test_the_recorded_times_drive_retries_and_the_session_ttl(tmp_path: Path) -> None:
    catalog = load_catalog(soft_catalog(tmp_path / "soft"))
    events = [
        _bash("s", T0, "rm a"),
        _bash("s", T0 + 10, "rm a"),  # the identical retry within the window: let through
        _bash("s", T0 + 20, "rm a"),
        _bash("s", T0 + 200, "rm b"),
        _bash("s", T0 + 200 + 90_000, "rm c"),  # a day and an hour idle: past the TTL
    ]
    steps = replay(events, catalog).sessions[0].events
    assert [(s.decision.outcome, s.decision.overrides) for s in steps] == [
        ("soft_block", ()),
        ("allow", ("no-rm retry",)),
        ("soft_block", ()),
        ("soft_block", ()),
        ("soft_block", ()),
    ]
    assert [s.decision.fired[0].counter for s in steps if s.decision.fired] == [1, 2, 3, 1]


def test_sessions_do_not_share_counters(tmp_path: Path) -> None:
    catalog = load_catalog(soft_catalog(tmp_path / "soft"))
    events = [_bash("a", T0, "rm a"), _bash("b", T0 + 1, "rm b"), _bash("a", T0 + 2, "rm c")]
    result = replay(events, catalog)
    counters = {
        s.session_id: [step.decision.fired[0].counter for step in s.events] for s in result.sessions
    }
    assert counters == {"a": [1, 2], "b": [1]}


def test_progress_is_told_every_event(tmp_path: Path) -> None:
    events = read_transcripts([str(UPLOAD)]).events
    told: list[int] = []
    replay(events, fp.builtin_catalog(), progress=told.append)
    assert sum(told) == len(events) == 16
