"""``forge_policy.testing.strategies`` as a catalog author uses it: what they generate is
valid (it loads through the file loader, it parses as a hook payload) and the engine decides
on it consistently."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import forge_policy as fp
from forge_policy.testing import FakeClock
from forge_policy.testing.strategies import (
    behavior_documents,
    catalogs,
    claude_code_events,
    compile_document,
)

FIXTURES = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


@FIXTURES
@given(document=behavior_documents())
def test_generated_documents_load_from_a_file(forge_catalog: Any, document: dict[str, Any]) -> None:
    loaded = forge_catalog(document).get(document["id"])
    compiled = compile_document(document)
    assert loaded is not None
    assert (loaded.id, loaded.default_level, loaded.escalation) == (
        compiled.id,
        compiled.default_level,
        compiled.escalation,
    )


@given(event=claude_code_events())
def test_generated_events_are_payloads_the_hook_parses(event: fp.Event) -> None:
    again = fp.Event.from_claude_code(dict(event.payload))
    assert (again.event_name, again.tool_name, dict(again.tool_input), again.session_id) == (
        event.event_name,
        event.tool_name,
        dict(event.tool_input),
        event.session_id,
    )


@given(catalog=catalogs(), events=st.lists(claude_code_events(), max_size=12))
def test_decisions_on_generated_catalogs_are_consistent(
    catalog: fp.Catalog, events: list[fp.Event]
) -> None:
    clock = FakeClock()
    ev = fp.Evaluator(catalog, clock=clock)
    seen: dict[tuple[str, str], int] = {}
    for event in events:
        clock.advance(1)
        decision = ev.evaluate(event)
        assert not decision.diagnostics, decision.diagnostics
        assert decision.blocked == (decision.blocking is not None)
        if decision.blocking is not None:
            assert decision.blocking.level.blocks and not decision.blocking.shadow
        for behavior_id, row in ev.status(event.session_id).behaviors.items():
            key = (event.session_id, behavior_id)
            assert row.counter >= seen.get(key, 0)  # counters never go down within the TTL
            seen[key] = row.counter
