"""The audit records the engine writes (SPEC §4 override record, §9 decision records), in the
shapes of :mod:`forge_policy.audit.records`.

Both summarize the call (``input_summary``) and reach the sink through
:func:`forge_policy.audit.base.write`, which redacts every string; a decision record carries
what a lost pending block needs to be restored by :mod:`forge_policy.engine.reconcile`.

>>> import forge_policy as fp
>>> event = fp.Event("PreToolUse", "s1", tool_name="Bash", tool_input={"command": "make"})
>>> record = override_record(event, "b", 5, "retry", "", 0.0, basis="0.0", released=("pending",))
>>> record["kind"], record["mechanism"], record["released"], len(record["override_id"])
('override', 'retry', ['pending'], 32)
"""

from __future__ import annotations

from forge_policy.events import MCP_PREFIX
from forge_policy.model import sha256_hex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.model import Event, Violation


def agent_fields(event: Event) -> dict[str, str | None]:
    """The ``agent_id`` and ``agent`` (type) keys of a record of ``event``: None (omitted) on
    the root thread, and for a type that is only the harness's name.

    >>> import forge_policy as fp
    >>> agent_fields(fp.Event("Stop", "s", agent_id="a1", agent="Explore"))
    {'agent_id': 'a1', 'agent': 'Explore'}
    >>> agent_fields(fp.Event("Stop", "s"))
    {'agent_id': None, 'agent': None}
    """
    return {
        "agent_id": event.agent_id or None,
        "agent": event.agent if event.agent and event.agent != event.harness else None,
    }


def override_id(session_id: str, behavior_id: str, mechanism: str, basis: str, counter: int) -> str:
    """An override's id derives from the block (or grant) it consumes, so a transaction that
    runs twice can never mint two overrides for one block."""
    seed = f"{session_id}|{behavior_id}|{mechanism}|{basis}|{counter}"
    return sha256_hex(seed.encode("utf-8"))[:32]


def grant_record(
    session_id: str,
    behavior_id: str,
    grant_id: str,
    reason: str,
    now: float,
    valid_until: float,
    *,
    call_id: str = "",
    call_hash: str = "",
    input_summary: str = "",
) -> dict[str, Any]:
    """A ``grant`` record: an explicit override given (SPEC §4: audited when given, and again,
    as an ``override`` naming its ``grant_id``, when used); bound to one call when
    ``call_id`` is set."""
    from forge_policy._time import iso
    from forge_policy.audit import records

    return records.to_dict(
        records.Grant(
            timestamp=iso(now),
            session_id=session_id,
            behavior_id=behavior_id,
            grant_id=grant_id,
            reason=reason,
            valid_until=iso(valid_until),
            call_id=call_id or None,
            call_hash=call_hash or None,
            input_summary=input_summary or None,
        )
    )


def override_record(
    event: Event,
    behavior_id: str,
    counter: int,
    mechanism: str,
    reason: str,
    now: float,
    *,
    basis: str,
    released: tuple[str, ...],
    grant_id: str = "",
) -> dict[str, Any]:
    """An override record (SPEC §4 fields), redacted; ``released`` names what it consumed
    (``pending``, ``grant``), for reconciliation; ``grant_id`` the grant it spent, if any."""
    from forge_policy._time import iso
    from forge_policy.audit import records
    from forge_policy.secrets import summarize

    return records.to_dict(
        records.Override(
            override_id=override_id(event.session_id, behavior_id, mechanism, basis, counter),
            timestamp=iso(now),
            session_id=event.session_id,
            behavior_id=behavior_id,
            tool_name=event.tool_name,
            input_summary=summarize(event.tool_name, event.tool_input),
            counter=counter,
            mechanism=mechanism,
            reason=reason,
            released=tuple(released),
            grant_id=grant_id or None,
            **agent_fields(event),
        )
    )


#: ``event_input`` bounds: a string is cut to this many characters, a list or mapping to
#: :data:`INPUT_ITEMS` entries, nesting to :data:`INPUT_DEPTH` levels.
INPUT_CHARS = 2048
INPUT_ITEMS = 64
INPUT_DEPTH = 8


def recorded_input(event: Event) -> dict[str, Any]:
    """What a ``block``/``violation`` record keeps of its event so that ``explain --record``
    can decide it again: redacted first (a cut must not leave a secret its pattern no longer
    recognizes), then bounded; ``cut`` says a value was shortened.

    >>> import forge_policy as fp
    >>> ev = fp.Event("PreToolUse", "s", tool_name="Write", cwd="/p",
    ...               tool_input={"file_path": "a.py", "content": "x" * 5000})
    >>> kept = recorded_input(ev)
    >>> len(kept["tool_input"]["content"]), kept["cut"], kept["cwd"]
    (2049, True, '/p')
    """
    from forge_policy.audit.verify import clean

    cut = [False]

    def bound(value: Any, depth: int) -> Any:
        if isinstance(value, str):
            if len(value) > INPUT_CHARS:
                cut[0] = True
                return value[:INPUT_CHARS] + "…"
            return value
        if isinstance(value, dict | list):
            if depth >= INPUT_DEPTH:
                cut[0] = True
                return "…"
            items = list(value.items() if isinstance(value, dict) else enumerate(value))
            if len(items) > INPUT_ITEMS:
                cut[0] = True
                items = items[:INPUT_ITEMS]
            if isinstance(value, dict):
                return {k: bound(v, depth + 1) for k, v in items}
            return [bound(v, depth + 1) for _, v in items]
        return value

    fields = {
        "tool_input": dict(event.tool_input) if event.tool_input else None,
        "prompt": event.prompt,
        "cwd": event.cwd,
        "agent": event.agent if event.agent != event.harness else "",  # a subagent's type
        "permission_mode": event.permission_mode,
        "harness": event.harness,
    }
    kept = {k: bound(clean(v), 0) for k, v in fields.items() if v}
    if cut[0]:
        kept["cut"] = True
    return kept


def decision_record(
    event: Event,
    violation: Violation,
    now: float,
    identity: str,
    override_mode: str,
    *,
    undetermined: list[str] | tuple[str, ...] = (),
    call_id: str = "",
    counts: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """A ``block`` (or, with ``record_violations``, ``violation``) record of one violation;
    ``override_mode`` is the behavior's ``override`` setting (``agent`` or ``user``);
    ``undetermined`` says why a fact the decision assumed to match could not be computed;
    ``call_id`` is the short id a soft block names its call by (``override --call``).
    ``counts``: ``(session counter, agent counter)`` of the behavior as this violation leaves
    them (default: the violation's counter for both, a session without subagents); the record
    keeps both (``counter``, ``agent_counter``: omitted when equal)."""
    from forge_policy._time import iso
    from forge_policy.audit import records
    from forge_policy.secrets import summarize

    shape = records.Block if violation.level.blocks and not violation.shadow else records.Violation
    session_counter, agent_counter = counts or (violation.counter, violation.counter)
    return records.to_dict(
        shape(
            timestamp=iso(now),
            session_id=event.session_id,
            behavior_id=violation.behavior_id,
            level=violation.level.label,
            counter=session_counter,
            tool_name=event.tool_name,
            event=event.event_name,
            input_summary=summarize(event.tool_name, event.tool_input),
            shadow=violation.shadow,
            call_hash=identity,
            override_mode=override_mode,
            tool_use_id=event.tool_use_id,
            overridden=violation.overridden or None,
            undetermined=tuple(undetermined) or None,
            call_id=call_id or None,
            event_input=recorded_input(event),
            agent_counter=None if agent_counter == session_counter else agent_counter,
            **agent_fields(event),
            reading=mcp_reading(event),
        )
    )


def mcp_reading(event: Event) -> str | None:
    """How :mod:`forge_policy.facts.mcp` reads an MCP call (the ``reading`` of its audit
    records), None for any other tool (one prefix test).

    >>> import forge_policy as fp
    >>> mcp_reading(fp.Event("PreToolUse", "s", tool_name="mcp__shell__run",
    ...                      tool_input={"cmd": ["ls"]})), mcp_reading(fp.Event("Stop", "s"))
    ('shell', None)
    """
    if not event.tool_name.startswith(MCP_PREFIX):
        return None
    from forge_policy.facts.mcp import label, read_call

    return label(read_call(event.tool_name, event.tool_input))
