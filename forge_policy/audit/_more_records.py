"""The audit record classes no hook decision builds (overrides, grants, bypasses, recoveries,
integrity findings, diagnostics, tunings, shadow verdicts): each is reached as
``forge_policy.audit.records.<Name>``, which imports this module on first use, so an allow or a
block does not pay for building their attrs classes (issue 28's cold path).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from forge_policy.audit._record_base import _omitted, _Record


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
