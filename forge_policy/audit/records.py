"""The shapes of the audit records (SPEC §4, §9): one frozen attrs class per kind, and one
converter, :func:`to_dict`, to the plain dict :func:`forge_policy.audit.base.write` redacts and
every sink chains.

The classes a hook decision builds (:class:`Violation`, :class:`Block`, :class:`FloorRun`,
:class:`Seen`) are defined here; the rarer ones live in :mod:`forge_policy.audit._more_records`,
imported on first use of their name here (``records.Override``), so a hook call does not build
attrs classes it never uses (issue 28's cold path).

Whoever writes a record builds one of these classes; nobody spells a record's keys by hand. A
field marked *omitted* is left out of the dict while it holds None (a store's recovery has a
``path``, the audit log's own has a ``head_seq``); every other field is always written, None
included. Tuples are written as lists. Key order does not matter: a stored line sorts its keys.

>>> from forge_policy.audit.records import Recovery
>>> to_dict(Recovery(timestamp="2026-01-01T00:00:00Z", reason="not valid JSON",
...                  path="/s/state.json", moved_to="/s/state.json.corrupt-1"))
... # doctest: +NORMALIZE_WHITESPACE
{'kind': 'recovery', 'timestamp': '2026-01-01T00:00:00Z', 'path': '/s/state.json',
 'moved_to': '/s/state.json.corrupt-1', 'reason': 'not valid JSON'}
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from forge_policy.audit._record_base import _omitted, _Record, to_dict

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeAlias

    from forge_policy.audit._more_records import (
        Bypass,
        BypassSwitch,
        Diagnostic,
        Grant,
        Integrity,
        Override,
        Recovery,
        Shadow,
        Tuning,
    )

__all__ = [
    "AuditRecord",
    "Block",
    "Bypass",
    "BypassSwitch",
    "Diagnostic",
    "FloorRun",
    "Grant",
    "Integrity",
    "Override",
    "Recovery",
    "Seen",
    "Shadow",
    "Tuning",
    "Violation",
    "to_dict",
]

#: The record classes of :mod:`forge_policy.audit._more_records`, built on first use.
_MORE = frozenset(
    {"Override", "Grant", "Bypass", "BypassSwitch", "Recovery", "Integrity", "Diagnostic"}
    | {"Tuning", "Shadow"}
)


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


@attrs.frozen(kw_only=True, repr=False)
class Seen(_Record):
    """A tool call the hook decided, whatever it decided (``outcome``, ``allow`` included): the
    trace that tells a call that got a decision from one whose hook never ran
    (:mod:`forge_policy.ops.coverage`). ``tool_use_id`` is the harness's id of the call
    (Claude Code ``tool_use_id``, Codex's ``call_id`` as its hook names it; ``""`` where the
    harness has none), ``digest`` the first 16 hex digits of the call's
    :func:`~forge_policy.model.call_hash` (never the input itself), for matching calls without
    an id; ``reading``, for an MCP tool, how :mod:`forge_policy.facts.mcp` read it (what
    ``doctor`` reports). One per PreToolUse (and the other harnesses' equivalents), unless the
    configuration says ``coverage: false``. ``audit log --kind seen`` shows them; the summaries
    leave them out (:data:`forge_policy.ops.audit_log.HIDDEN_KINDS`). ``agent_id`` and
    ``agent``: the subagent that made the call (as in :class:`Violation`)."""

    kind: ClassVar[str] = "seen"
    timestamp: str
    session_id: str
    harness: str
    tool_name: str
    tool_use_id: str
    digest: str
    outcome: str
    agent_id: str | None = _omitted()
    agent: str | None = _omitted()
    #: an MCP call's reading, as in :class:`Violation` (never its input); omitted otherwise
    reading: str | None = _omitted()


if TYPE_CHECKING:
    #: Any record of the audit log.
    AuditRecord: TypeAlias = (
        Violation
        | Block
        | Override
        | Grant
        | Bypass
        | BypassSwitch
        | Recovery
        | Integrity
        | FloorRun
        | Diagnostic
        | Tuning
        | Shadow
        | Seen
    )


def __getattr__(name: str) -> Any:
    """The rarer record classes (and :data:`AuditRecord`), imported on first use."""
    if name in _MORE:
        from forge_policy.audit import _more_records

        return getattr(_more_records, name)
    if name == "AuditRecord":
        from forge_policy.audit import _more_records as more

        return (
            Violation | Block | more.Override | more.Grant | more.Bypass | more.BypassSwitch
            | more.Recovery | more.Integrity | FloorRun | more.Diagnostic | more.Tuning
            | more.Shadow | Seen
        )  # fmt: skip
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
