"""The event vocabulary has one owner (forge_policy.events): every other module's event sets are
drawn from it, so a name cannot be known to one module and unknown to another."""

from __future__ import annotations

from forge_policy import events
from forge_policy.render import claude_code


def test_every_event_set_is_part_of_the_vocabulary() -> None:
    for name in ("TOOL_EVENTS", "BLOCKABLE_TOOL_EVENTS", "AFTER_TOOL_EVENTS"):
        assert getattr(events, name) <= events.EVENTS, name
    assert set(events.MATCHER_SUBJECT) <= events.EVENTS
    assert events.BLOCKABLE_TOOL_EVENTS <= events.TOOL_EVENTS
    for name in ("PERMISSION_EVENTS", "DECISION_EVENTS", "CONTINUE_EVENTS", "CONTEXT_EVENTS"):
        assert getattr(claude_code, name) <= events.EVENTS, name


def test_the_catalog_validates_event_names_against_the_vocabulary() -> None:
    from forge_policy.catalog import structuring

    assert structuring.EVENTS is events.EVENTS
