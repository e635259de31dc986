"""Moved: :mod:`forge_policy.integrations.openai_agents` is the canonical path.

This module re-exports its public names so that ``from forge_policy.harness.openai_agents
import guard`` keeps working.
"""

from __future__ import annotations

from forge_policy.integrations.openai_agents import (
    HARNESS,
    PENDING_LIMIT,
    Guard,
    guard,
    tool_input_guardrail,
    tool_output_guardrail,
)

__all__ = [
    "HARNESS",
    "PENDING_LIMIT",
    "Guard",
    "guard",
    "tool_input_guardrail",
    "tool_output_guardrail",
]
