"""The shapes of the audit records (SPEC §4, §9): one frozen attrs class per kind, and one
converter, :func:`to_dict`, to the plain dict :func:`forge_policy.audit.base.write` redacts and
every sink chains.

The record every decided tool call leaves (:class:`Seen`) is defined here; a decision's
:class:`Violation` and :class:`Block` live in :mod:`forge_policy.audit._block_records`,
:class:`FloorRun` in :mod:`forge_policy.audit._floor_record`, the rarer ones in
:mod:`forge_policy.audit._more_records`, each imported on first use of its name here
(``records.Block``), so a hook call does not build attrs classes it never uses (issue 28's cold
path: an allow builds :class:`Seen` only).

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

    from forge_policy.audit._block_records import Block, Violation
    from forge_policy.audit._floor_record import FloorRun
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

#: The record classes defined elsewhere, built on first use: a decision's, and the rarer ones.
_BLOCKS = "forge_policy.audit._block_records"
_MORE = "forge_policy.audit._more_records"
_CLASSES = {
    "Violation": _BLOCKS,
    "Block": _BLOCKS,
    "Override": _MORE,
    "Grant": _MORE,
    "Bypass": _MORE,
    "BypassSwitch": _MORE,
    "Recovery": _MORE,
    "Integrity": _MORE,
    "Diagnostic": _MORE,
    "Tuning": _MORE,
    "Shadow": _MORE,
    "FloorRun": "forge_policy.audit._floor_record",
}


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
    """The record classes defined elsewhere (and :data:`AuditRecord`), imported on first use
    and then kept here."""
    module = _CLASSES.get(name)
    if module is not None:
        from importlib import import_module

        value = globals()[name] = getattr(import_module(module), name)
        return value
    if name == "AuditRecord":
        from forge_policy.audit import _block_records as blocks
        from forge_policy.audit import _floor_record as floor
        from forge_policy.audit import _more_records as more

        return (
            blocks.Violation | blocks.Block | more.Override | more.Grant | more.Bypass
            | more.BypassSwitch | more.Recovery | more.Integrity | floor.FloorRun
            | more.Diagnostic | more.Tuning | more.Shadow | Seen
        )  # fmt: skip
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
