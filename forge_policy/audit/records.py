"""The shapes of the audit records (SPEC §4, §9): one frozen attrs class per kind, and one
converter, :func:`to_dict`, to the plain dict :func:`forge_policy.audit.base.write` redacts and
every sink chains.

Whoever writes a record builds one of these classes; nobody spells a record's keys by hand. A
field marked *omitted* is left out of the dict while it holds None (a store's recovery has a
``path``, the audit log's own has a ``head_seq``); every other field is always written, None
included. Tuples are written as lists. Key order does not matter: a stored line sorts its keys.

>>> to_dict(Recovery(timestamp="2026-01-01T00:00:00Z", reason="not valid JSON",
...                  path="/s/state.json", moved_to="/s/state.json.corrupt-1"))
... # doctest: +NORMALIZE_WHITESPACE
{'kind': 'recovery', 'timestamp': '2026-01-01T00:00:00Z', 'path': '/s/state.json',
 'moved_to': '/s/state.json.corrupt-1', 'reason': 'not valid JSON'}
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

_OMIT = "omit"


class _Record:
    """What every record class shares: its ``kind`` and a repr of its dict (attrs' generated
    repr would double the cost of importing this module, which a blocking hook call pays)."""

    __slots__ = ()
    kind: ClassVar[str]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({to_dict(self)!r})"


def _omitted() -> Any:
    """A field left out of the dict while it is None."""
    return attrs.field(default=None, kw_only=True, metadata={_OMIT: True})


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
class Override(_Record):
    """An override (SPEC §4): the block (or grant) it consumed, how (``mechanism``: ``retry``,
    ``explicit``, ``user``) and why. ``released`` names what it consumed (``pending``,
    ``grant``), for reconciliation; ``override_id`` derives from it, so it is minted once.
    ``grant_id`` names the grant an explicit override spent (omitted otherwise); ``agent_id``
    and ``agent`` the subagent whose call it let through (as in :class:`Violation`)."""

    kind: ClassVar[str] = "override"
    override_id: str
    timestamp: str
    session_id: str
    behavior_id: str
    tool_name: str
    input_summary: str
    counter: int
    mechanism: str
    reason: str
    released: tuple[str, ...]
    grant_id: str | None = _omitted()
    agent_id: str | None = _omitted()
    agent: str | None = _omitted()


@attrs.frozen(kw_only=True, repr=False)
class Grant(_Record):
    """An explicit override granted (``forge-policy override``), before any call uses it;
    bound to one call (``--call``: its ``call_id``, ``call_hash`` and ``input_summary``) or
    to the next soft-blocked call of the behavior (those omitted)."""

    kind: ClassVar[str] = "grant"
    timestamp: str
    session_id: str
    behavior_id: str
    grant_id: str
    reason: str
    valid_until: str
    call_id: str | None = _omitted()
    call_hash: str | None = _omitted()
    input_summary: str | None = _omitted()


@attrs.frozen(kw_only=True, repr=False)
class Bypass(_Record):
    """A call that a behavior switched off by ``FORGE_DISABLE`` (or a seed's variable,
    ``variable``) would have flagged: what it would have done."""

    kind: ClassVar[str] = "bypass"
    timestamp: str
    session_id: str
    behavior_id: str
    variable: str
    event: str
    tool_name: str
    input_summary: str
    level: str
    counter: int


@attrs.frozen(kw_only=True, repr=False)
class BypassSwitch(_Record):
    """A behavior switched off or on (``forge-policy off|on``) for one session or the whole
    project (``scope``); a project switch has no ``session_id`` and says whether the behavior
    is marked ``bypass: never``."""

    kind: ClassVar[str] = "bypass"
    timestamp: str
    session_id: str | None = _omitted()
    behavior_id: str
    scope: str
    enabled: bool
    variable: str
    bypass_never: bool | None = _omitted()


@attrs.frozen(kw_only=True, repr=False)
class Recovery(_Record):
    """Something corrupt set aside and told, never silently dropped (SPEC §9).

    A store's: what was moved (``path``, ``session_id`` for one row) and where (``moved_to``).
    The audit log's own: records missing from its end (``head_seq``, ``head_hash``,
    ``log_seq``) or a torn last line dropped (``offset``, ``dropped_bytes``,
    ``dropped_sha256``).
    """

    kind: ClassVar[str] = "recovery"
    timestamp: str
    path: str | None = _omitted()
    moved_to: str | None = _omitted()
    session_id: str | None = _omitted()
    reason: str
    offset: int | None = _omitted()
    dropped_bytes: int | None = _omitted()
    dropped_sha256: str | None = _omitted()
    head_seq: int | None = _omitted()
    head_hash: str | None = _omitted()
    log_seq: int | None = _omitted()


@attrs.frozen(kw_only=True, repr=False)
class Integrity(_Record):
    """A log that holds fewer records than a session last saw (truncated, or replaced):
    ``audit --verify`` keeps failing on it, it is never repaired into a recovery."""

    kind: ClassVar[str] = "integrity"
    timestamp: str
    session_id: str
    reason: str
    checkpoint_seq: int
    log_seq: int


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
class Diagnostic(_Record):
    """Something the operator should know that decided nothing (``code`` names it), such as
    a session id derived from the payload (``derived_from``)."""

    kind: ClassVar[str] = "diagnostic"
    code: str
    timestamp: str
    session_id: str
    derived_from: str | None = _omitted()
    event: str | None = _omitted()
    message: str


@attrs.frozen(kw_only=True, repr=False)
class Tuning(_Record):
    """A suggestion of ``forge-policy suggest`` applied (``suggest --apply``): which one
    (``suggestion``: its key; ``number``, ``action``: its kind, ``title``), the change written
    to the project layer (``change``, shaped as the layer file; ``file``), and the evidence it
    rests on (counts, sessions, record numbers, dates)."""

    kind: ClassVar[str] = "tuning"
    timestamp: str
    behavior_id: str
    suggestion: str
    number: int
    action: str
    title: str
    change: dict[str, Any]
    file: str
    evidence: dict[str, Any]


@attrs.frozen(kw_only=True, repr=False)
class Shadow(_Record):
    """An event the candidate catalog (:mod:`forge_policy.engine.candidate`) would have decided
    differently: the active verdict (``active``, what was answered) and the candidate's
    (``candidate``), each as :meth:`forge_policy.engine.verdict.Verdict.to_dict` gives it
    (outcome, blocking behavior, each fired behavior's level and counter), the event's
    ``direction`` (``would_block``, ``would_unblock``, ``level``) and the behaviors that moved
    (``changes``: :meth:`forge_policy.engine.verdict.Change.to_dict`). ``catalog`` is the
    candidate's folder. Decided nothing: never read back by a session's state."""

    kind: ClassVar[str] = "shadow"
    timestamp: str
    session_id: str
    harness: str
    event: str
    tool_name: str
    input_summary: str
    catalog: str
    direction: str
    changes: tuple[dict[str, Any], ...]
    active: dict[str, Any]
    candidate: dict[str, Any]


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


#: Any record of the audit log.
AuditRecord = (
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


def to_dict(record: _Record) -> dict[str, Any]:
    """The dict a sink takes: ``kind`` first, then the fields (an omitted one only when set).

    >>> to_dict(BypassSwitch(timestamp="t", behavior_id="b", scope="project", enabled=False,
    ...                      variable="forge-policy off", bypass_never=False))
    ... # doctest: +NORMALIZE_WHITESPACE
    {'kind': 'bypass', 'timestamp': 't', 'behavior_id': 'b', 'scope': 'project',
     'enabled': False, 'variable': 'forge-policy off', 'bypass_never': False}
    """
    out: dict[str, Any] = {"kind": record.kind}
    for name, omit in _layout(type(record)):
        value = getattr(record, name)
        if value is None and omit:
            continue
        out[name] = list(value) if type(value) is tuple else value
    return out


_LAYOUTS: dict[type, tuple[tuple[str, bool], ...]] = {}


def _layout(cls: type) -> tuple[tuple[str, bool], ...]:
    """``(field name, omitted while None)`` of a record class, in order; computed once."""
    layout = _LAYOUTS.get(cls)
    if layout is None:
        fields = attrs.fields(cls)
        layout = _LAYOUTS[cls] = tuple((f.name, bool(f.metadata.get(_OMIT))) for f in fields)
    return layout
