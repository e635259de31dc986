"""The testing kit for harness and catalog authors: a fake clock, event builders, assertions
with readable messages, pytest fixtures (the ``forge_policy`` pytest plugin) and reusable
conformance suites for custom stores and audit sinks.

>>> from forge_policy.testing import FakeClock, claude_code_event
>>> claude_code_event("Read", file_path="/a.py").tool_name
'Read'

Names are loaded on first use; neither pytest nor Hypothesis is imported by this package
itself (only ``plugin``, ``conformance`` and ``strategies`` need them).
"""

from __future__ import annotations

from forge_policy._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.testing.assertions import (
        assert_allows,
        assert_blocks,
        assert_counter,
        assert_level,
    )
    from forge_policy.testing.clock import FakeClock
    from forge_policy.testing.events import (
        claude_code_event,
        claude_code_lifecycle,
        claude_code_payload,
        claude_code_prompt,
    )
    from forge_policy.testing.harnesses import (
        antigravity_event,
        antigravity_payload,
        codex_event,
        codex_payload,
        copilot_event,
        copilot_payload,
        cursor_event,
        cursor_payload,
        gemini_event,
        gemini_payload,
    )

_EXPORTS: dict[str, str] = {
    "FakeClock": "forge_policy.testing.clock",
    "assert_allows": "forge_policy.testing.assertions",
    "assert_blocks": "forge_policy.testing.assertions",
    "assert_counter": "forge_policy.testing.assertions",
    "assert_level": "forge_policy.testing.assertions",
    "claude_code_event": "forge_policy.testing.events",
    "claude_code_lifecycle": "forge_policy.testing.events",
    "claude_code_payload": "forge_policy.testing.events",
    "claude_code_prompt": "forge_policy.testing.events",
    "antigravity_event": "forge_policy.testing.harnesses",
    "antigravity_payload": "forge_policy.testing.harnesses",
    "codex_event": "forge_policy.testing.harnesses",
    "codex_payload": "forge_policy.testing.harnesses",
    "copilot_event": "forge_policy.testing.harnesses",
    "copilot_payload": "forge_policy.testing.harnesses",
    "cursor_event": "forge_policy.testing.harnesses",
    "cursor_payload": "forge_policy.testing.harnesses",
    "gemini_event": "forge_policy.testing.harnesses",
    "gemini_payload": "forge_policy.testing.harnesses",
}

__all__ = [
    "FakeClock",
    "antigravity_event",
    "antigravity_payload",
    "assert_allows",
    "assert_blocks",
    "assert_counter",
    "assert_level",
    "claude_code_event",
    "claude_code_lifecycle",
    "claude_code_payload",
    "claude_code_prompt",
    "codex_event",
    "codex_payload",
    "copilot_event",
    "copilot_payload",
    "cursor_event",
    "cursor_payload",
    "gemini_event",
    "gemini_payload",
]

__getattr__, __dir__ = lazy_exports("forge_policy.testing", _EXPORTS, __all__, globals())
