"""The audit records of a violation (SPEC §4, §9): :class:`Violation` (counted or shown) and
:class:`Block` (it blocked the call). Each is reached as ``forge_policy.audit.records.<Name>``,
which imports this module on first use, so an allow does not pay for building their attrs
classes (issue 28's cold path).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from forge_policy.audit._record_base import _omitted, _Record


@attrs.frozen(kw_only=True, repr=False)
class Violation(_Record):
    """A violation that was only counted or shown (``record_violations``, or a shadow block).

    ``call_hash`` identifies the call for an override by retry; ``override_mode`` is the
    behavior's ``override`` setting (``agent`` or ``user``); ``overridden`` names the mechanism
    that let it through, ``undetermined`` why a fact the decision assumed to match could
    not be computed, and ``call_id`` the short id a soft block names its call by (``override
    --call``; all three omitted when empty). ``event_input`` is what ``explain --record``
    rebuilds the event from: the call's ``tool_input`` (or ``prompt``), ``cwd``, ``agent``,
    ``permission_mode`` and ``harness``, redacted and bounded
    (:func:`forge_policy.engine.records.recorded_input`; ``cut`` true when a long value was
    shortened); records written before it have none.

    ``agent_id`` names the subagent the call came from (omitted on the root thread), ``agent``
    its type (omitted when it is the harness's name: a root thread of no named agent), and
    ``agent_counter`` that agent's own counter of the behavior after this violation (omitted
    when it equals ``counter``, as on a session with no subagent): what rebuilds the per-agent
    breakdown of a session from its log (:mod:`forge_policy.engine.reconcile`). Records
    written before them read as the root thread's.
    """

    kind: ClassVar[str] = "violation"
    timestamp: str
    session_id: str
    behavior_id: str
    level: str
    counter: int
    tool_name: str
    event: str
    input_summary: str
    shadow: bool
    call_hash: str
    override_mode: str
    tool_use_id: str
    overridden: str | None = _omitted()
    undetermined: tuple[str, ...] | None = _omitted()
    call_id: str | None = _omitted()
    event_input: dict[str, Any] | None = _omitted()  # noqa: RUF009 (an attrs field, not a value)
    agent_id: str | None = _omitted()
    agent: str | None = _omitted()
    agent_counter: int | None = _omitted()
    #: an MCP call's reading (:func:`forge_policy.facts.mcp.label`: ``shell``, ``write``,
    #: ``read``, ``fetch``, ``none``, ``unreadable``); omitted for every other tool
    reading: str | None = _omitted()


@attrs.frozen(kw_only=True, repr=False)
class Block(Violation):
    """A violation that blocked the call (soft or hard, not shadow): the same fields."""

    kind: ClassVar[str] = "block"
