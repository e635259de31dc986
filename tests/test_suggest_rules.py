"""What :func:`forge_policy.ops.suggest.suggestions` leaves out, by example (pure: no process)."""

from __future__ import annotations

from typing import Any

from forge_policy.catalog.behavior import Behavior
from forge_policy.catalog.catalog import Catalog
from forge_policy.config.layers import BehaviorSettings, Settings
from forge_policy.ops.suggest import command_of, suggestions
from forge_policy.secrets import REDACTED

NOW = 1_900_000_000.0


def behavior(behavior_id: str, **spec: Any) -> Behavior:
    return Behavior(
        {"id": behavior_id, "name": behavior_id, "triggers": [{"event": "PreToolUse"}],
         "default_level": "soft_block", **spec}
    )  # fmt: skip


def sessions(count: int) -> list[dict[str, Any]]:
    return [{"kind": "block", "session_id": f"s{n}", "behavior_id": "loud", "counter": 1}
            for n in range(count)]  # fmt: skip


def kinds(found: list[Any]) -> list[tuple[str, str]]:
    return [(s.kind, s.behavior) for s in found]


def test_never_fired_needs_enough_sessions_and_skips_what_is_switched_off() -> None:
    catalog = Catalog([behavior("loud"), behavior("quiet"), behavior("off")])
    assert ("disable", "quiet") not in kinds(suggestions(sessions(2), catalog, None, now=NOW))
    settings = Settings(disable={"off": "FORGE_DISABLE"})
    found = suggestions(sessions(3), catalog, settings, now=NOW)
    assert [k for k in kinds(found) if k[0] == "disable"] == [("disable", "quiet")]
    assert found[-1].evidence["sessions"] == 3


def test_a_locked_behavior_is_listed_with_why_and_never_applicable() -> None:
    catalog = Catalog([behavior("loud"), behavior("quiet")])
    settings = Settings(
        managed={"quiet": BehaviorSettings(locked=True)},
        origins={"behaviors.quiet.locked": "/etc/forge-policy/config.yaml:4"},
    )
    (found,) = [s for s in suggestions(sessions(3), catalog, settings, now=NOW)
                if s.behavior == "quiet"]  # fmt: skip
    assert found.refused == (
        "quiet is locked by /etc/forge-policy/config.yaml:4: a project may tighten it, never "
        "loosen it"
    )
    assert not found.applicable and found.to_dict()["apply"] is None


def test_a_cut_or_redacted_command_is_no_match() -> None:
    def record(command: str, **extra: Any) -> dict[str, Any]:
        return {"event_input": {"tool_input": {"command": command}, **extra}}

    assert command_of(record("git  push\t-f ")) == "git push -f"
    assert command_of(record("x" * 10, cut=True)) is None
    assert command_of(record(f"curl -H 'Authorization: {REDACTED}' x")) is None
    assert command_of({"event_input": {"tool_input": {"file_path": "/a"}}}) is None
    assert command_of({"input_summary": "Bash: ls"}) is None
