"""The event vocabulary has one owner (forge_policy.events): every other module's event sets are
drawn from it, so a name cannot be known to one module and unknown to another."""

from __future__ import annotations

from pathlib import Path

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


def test_an_event_built_by_hand_matches_conditions_on_its_tool_input(tmp_path: Path) -> None:
    """``tool_input.<field>`` conditions read the event's own ``tool_input`` when it was built
    directly (embedders, ``examples/embed.py``), not only the payload ``from_claude_code`` keeps:
    such an event used to pass a behavior the same call from the hook was blocked by."""
    import forge_policy as fp
    from forge_policy.catalog.loader import load_catalog
    from tests.helpers import behavior_yaml, write_catalog

    text = behavior_yaml(
        "no-deploy",
        default_level="hard_block",
        triggers=(
            "    - event: PreToolUse\n      matcher: Bash\n      conditions:\n"
            "        - {field: tool_input.command, operator: starts_with, value: deploy}\n"
        ),
    )
    catalog = load_catalog(write_catalog(tmp_path / "behaviors", {"no-deploy": text}))
    by_hand = fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "deploy x"})
    from_hook = fp.Event.from_claude_code(
        {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
         "tool_input": {"command": "deploy x"}, "tool_use_id": "t"}
    )  # fmt: skip
    for event in (by_hand, from_hook):
        assert fp.Evaluator(catalog).evaluate(event).blocked
    assert (
        not fp.Evaluator(catalog)
        .evaluate(fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "ls"}))
        .blocked
    )
