"""Moved: :mod:`forge_policy.integrations.claude_agent_sdk` is the canonical path.

This module re-exports its public names so that ``from forge_policy.harness.claude_agent_sdk
import hooks, can_use_tool`` keeps working.
"""

from __future__ import annotations

from forge_policy.integrations.claude_agent_sdk import (
    HARNESS,
    HOOK_EVENTS,
    SHELL_TOOLS,
    can_use_tool,
    hooks,
)

__all__ = ["HARNESS", "HOOK_EVENTS", "SHELL_TOOLS", "can_use_tool", "hooks"]
