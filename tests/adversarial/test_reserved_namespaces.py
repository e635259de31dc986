"""The agent cannot supply the engine's measurements: a ``facts`` or ``session`` key in the tool
input never stands in for the ``facts.*`` / ``session.*`` namespaces (SPEC §5 resolves
``tool_input`` keys first; for the reserved namespaces that would let the agent switch a rule
off by writing ``{"facts": {"shell_commands": ""}}`` into an MCP call or an extra input key)."""

from __future__ import annotations

import pytest

import forge_policy as fp

SHADOWS = [
    {"facts": {"shell_commands": ""}},
    {"facts": {"shell_commands": "ls", "commands": "ls"}},
    {"facts": "nothing to see"},
    {"session": {"counter": 0, "flags": {}, "totals": {}}},
]


@pytest.mark.parametrize("shadow", SHADOWS)
def test_a_shadowing_key_in_the_tool_input_changes_nothing(shadow: dict) -> None:
    catalog = fp.builtin_catalog()
    plain = fp.Evaluator(catalog).evaluate(
        fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "rm -rf /"})
    )
    shadowed = fp.Evaluator(catalog).evaluate(
        fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "rm -rf /", **shadow})
    )
    assert plain.blocked and shadowed.blocked
    assert shadowed.blocking is not None and plain.blocking is not None
    assert shadowed.blocking.behavior_id == plain.blocking.behavior_id == "dangerous-commands"
