"""Moved: :mod:`forge_policy.integrations.langchain` is the canonical path.

This module re-exports its public names so that ``from forge_policy.harness.langchain import
ForgePolicyMiddleware`` keeps working.
"""

from __future__ import annotations

from forge_policy.integrations.langchain import HARNESS, ForgePolicyMiddleware

__all__ = ["HARNESS", "ForgePolicyMiddleware"]
