"""The audit record of the floor a shell call ran under (SPEC §13, :class:`FloorRun`), written
beside a recorded decision or on a session's first shell call in a weak floor
(:mod:`forge_policy.floor.rewrite`). Reached as ``forge_policy.audit.records.FloorRun``, which
imports this module on first use (issue 28's cold path: an allow or a block builds it only
when it writes one).
"""

from __future__ import annotations

from typing import ClassVar

import attrs

from forge_policy.audit._record_base import _Record


@attrs.frozen(kw_only=True, repr=False)
class FloorRun(_Record):
    """A shell call let through to run under the floor it ran under (SPEC §13): ``floor`` is
    ``own/<method>`` (rewritten to run in forge_policy's sandbox; ``input_summary`` is the
    original command, as the rules read it), ``none`` (the own floor is wanted but cannot be
    held: no sandbox method works here, or the harness cannot rewrite the call; the hook's
    decision is the only guard) or ``off`` (the project turned the floor off). ``own/<method>``
    is recorded beside the records of a call the evaluator recorded (a nudge, a warning), not
    for a plain pass; calls the harness's own sandbox holds are not recorded one by one
    (:mod:`forge_policy.floor.rewrite`)."""

    kind: ClassVar[str] = "floor"
    timestamp: str
    session_id: str
    harness: str
    floor: str
    tool_name: str
    event: str
    input_summary: str
    tool_use_id: str
