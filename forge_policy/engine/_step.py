""":class:`Step`, what one behavior contributed to a decision. Reached as
``forge_policy.engine.effects.Step``, which imports this module on first use (issue 28: an allow
that changes nothing builds no step).
"""

from __future__ import annotations

import attrs

from forge_policy.engine.effects import _Effect

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.engine.effects import Effect
    from forge_policy.model import Violation


@attrs.frozen(repr=False)
class Step(_Effect):
    """What one behavior contributed to a decision: its effects, its violation (if any), the
    message shown for it (non-blocking levels), and whether it is ``tentative``: an override
    that takes effect only if the call goes through (SPEC §4), dropped when the chain blocks."""

    behavior_id: str
    effects: tuple[Effect, ...] = ()
    violation: Violation | None = None
    shown: str = ""
    tentative: bool = False
    trace: dict[str, Any] | None = attrs.field(default=None, eq=False)
