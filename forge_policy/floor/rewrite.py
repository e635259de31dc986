"""The rewrite seam (SPEC §13): a shell call the hook lets through runs under forge_policy's own
floor when the harness's sandbox does not hold it.

The decision stays pure; the rewrite is an effect computed after it, as Cedar returns effects
beside a decision. :func:`apply` takes the evaluator's :class:`~forge_policy.Decision` on a
``PreToolUse`` call of the shell tool (catalog name ``Bash``) that is not refused, asks
:func:`~forge_policy.floor.status.active_floor` which floor holds, and returns the decision with
:attr:`~forge_policy.Decision.updated_input` set (the harness's own arguments, its shell
command replaced by :func:`~forge_policy.floor.sandbox.command_for`) plus the audit records to
write (:class:`~forge_policy.audit.records.FloorRun`, ``input_summary`` the original command):

=========================  ========================================================  ===========
active floor               answer                                                    audited as
=========================  ========================================================  ===========
``harness``                as decided (the harness's sandbox holds the call)         —
``own``, a method works    rewritten to run in the sandbox                           ``own/M`` (*)
``own``, none works        as decided, and once per session a notice that the        ``none``
                           floor is not held (the hook keeps deciding)
``off``                    as decided                                                ``off`` (†)
=========================  ========================================================  ===========

(*) beside the violation records of a call the evaluator recorded (a nudge, a warning); a plain
pass under the own floor adds no record: the rewrite is visible in the answer, the floor in
``doctor`` and ``status``, and a record per allowed shell call would turn the log into a command
history and cost the warm path an fsync per call (``tests/benchmarks/floor_rewrite.py``
measured it at about twice the answer's time). (†) The weaker states, ``off`` and ``none``,
are recorded on the first shell call of each session they apply to (a state change starts
again: ``<FORGE_ROOT>/runtime/floor-recorded`` keeps the last ``state session`` recorded) and
beside every violation record; ``init`` records turning the floor off or back on.

"None works" covers a machine without a sandbox method and a harness (or an event) that cannot
take new arguments (:attr:`~forge_policy.harness.registry.Harness.rewrite_events`: Copilot CLI,
Antigravity CLI, Cursor's ``beforeShellExecution``). That case does not block the call: a
floor the machine cannot hold would otherwise stop every shell call, and the hook's decisions
(which read the original command either way) still stand; the audit log and the notice say
plainly which guarantees are then only the hook's. Rules always read the original command.

>>> import tempfile
>>> from forge_policy.model import Decision, Event
>>> project = tempfile.mkdtemp()
>>> ev = Event("PreToolUse", "s", tool_name="Read", tool_input={"file_path": "a"})
>>> apply(Decision(ev), harness="claude-code", project=project, forge_root=project + "/.forge",
...       environ={}, tool_input={"file_path": "a"})[1]
[]
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from forge_policy.model import Decision

#: The catalog's name of the shell tool (each harness's own is mapped onto it by its registry).
SHELL_TOOL = "Bash"
#: The floor recorded for a call the own floor should hold but cannot.
UNHELD = "none"
#: Where the last session told that the floor is not held is kept (below ``FORGE_ROOT``).
NOTICE_FILE = os.path.join("runtime", "floor-notice")
#: The last ``state session`` whose weak floor (``off``, ``none``) was recorded.
RECORDED_FILE = os.path.join("runtime", "floor-recorded")


def applies(decision: Decision) -> bool:
    """Whether the floor concerns this decision: a shell call before it runs, not refused."""
    event = decision.event
    return (
        event.event_name == "PreToolUse"
        and event.tool_name == SHELL_TOOL
        and decision.blocking is None
    )


def method(environ: Mapping[str, str]) -> str:
    """The first sandbox method that works here, best first (``""``: none), as the launcher's
    probe (:func:`forge_policy.floor.sandbox.methods_available`) finds them."""
    from forge_policy.floor.sandbox import methods_available

    methods = methods_available(environ)
    return methods[0] if methods else ""


def apply(
    decision: Decision,
    *,
    harness: str,
    project: str,
    forge_root: str,
    environ: Mapping[str, str],
    tool_input: object,
    native_event: str = "",
) -> tuple[Decision, list[dict[str, Any]]]:
    """``(decision, audit records)``: the decision rewritten where the own floor holds the call
    (see the module's table). ``tool_input`` is the tool's arguments as the harness sent them
    (its own names: the rewrite hands them back with only the command replaced); a payload's
    JSON text (Cursor) is read as an object. ``native_event``: the event as the harness named
    it (default: the catalog's name), which says whether the harness takes new arguments
    there. :class:`~forge_policy.floor.status.FloorConfigError`
    when ``floor:`` in the project config is broken (the hook then fails closed)."""
    if not applies(decision):
        return decision, []
    from forge_policy.floor.status import active_floor

    mode = active_floor(harness, project, forge_root, environ)
    if mode == "harness":
        return decision, []
    if mode == "off":
        return decision, _weak_records(decision, harness, forge_root, "off")
    native = native_event or decision.event.event_name
    rewritten = _rewritten(native, harness, project, environ, tool_input)
    if rewritten is None:
        notice = _notice(decision, harness, forge_root, native)
        if notice:
            import attrs

            decision = attrs.evolve(decision, messages=(*decision.messages, notice))
        return decision, _weak_records(decision, harness, forge_root, UNHELD)
    import attrs

    new_input, used = rewritten
    records = [_record(decision, harness, f"own/{used}")] if decision.violations else []
    return attrs.evolve(decision, updated_input=new_input), records


def _rewritten(
    native: str,
    harness: str,
    project: str,
    environ: Mapping[str, str],
    tool_input: object,
) -> tuple[dict[str, Any], str] | None:
    """``(the harness's arguments with the command run in the sandbox, the method)``, or None
    when this call cannot be rewritten."""
    from forge_policy.harness.registry import get

    entry = get(harness)
    if native not in entry.rewrite_events:
        return None
    if isinstance(tool_input, str):
        import json

        try:
            tool_input = json.loads(tool_input)
        except ValueError:
            return None
    if not isinstance(tool_input, dict):
        return None
    command = tool_input.get(entry.command_key)
    if not isinstance(command, str) or not command.strip():
        return None
    used = method(environ)
    if not used:
        return None
    from forge_policy.floor.derive import floor_for
    from forge_policy.floor.sandbox import command_for

    new_input = dict(tool_input)
    new_input[entry.command_key] = command_for(floor_for(project, environ), command, used)
    return new_input, used


def _record(decision: Decision, harness: str, floor: str) -> dict[str, Any]:
    import time

    from forge_policy._time import iso
    from forge_policy.audit import records
    from forge_policy.secrets import summarize

    event = decision.event
    return records.to_dict(
        records.FloorRun(
            timestamp=iso(time.time()),
            session_id=event.session_id,
            harness=harness,
            floor=floor,
            tool_name=event.tool_name,
            event=event.event_name,
            input_summary=summarize(event.tool_name, event.tool_input),
            tool_use_id=event.tool_use_id,
        )
    )


def _weak_records(
    decision: Decision, harness: str, forge_root: str, state: str
) -> list[dict[str, Any]]:
    """The ``floor`` record of an ``off`` or ``none`` call: beside a violation always, else on
    the first shell call of the session in that state (a plain pass then writes nothing: no
    lock, no fsync on the warm path)."""
    if decision.violations:
        return [_record(decision, harness, state)]
    mark = f"{state} {decision.event.session_id}"
    path = os.path.join(forge_root, RECORDED_FILE)
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read(4096) == mark:
                return []
    except OSError:
        pass
    try:
        folder = os.path.dirname(path)
        if os.path.realpath(folder) == os.path.abspath(folder):  # nothing through a link
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(mark)
    except OSError:
        pass  # recorded again next time: better than never
    return [_record(decision, harness, state)]


def _notice(decision: Decision, harness: str, forge_root: str, native: str) -> str:
    """The notice that the floor is not held, the first time a session meets it (``""``
    afterwards: the file below ``forge_root`` keeps the last session told)."""
    from forge_policy.harness.registry import get

    session = decision.event.session_id
    path = os.path.join(forge_root, NOTICE_FILE)
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read(4096) == session:
                return ""
    except OSError:
        pass
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(session)
    except OSError:
        pass  # told again next time: better than never
    entry = get(harness)
    why = (
        f"{entry.title} cannot run a hook's rewritten command"
        if not entry.can_rewrite
        else "no sandbox (bubblewrap, Landlock) works on this machine"
    )
    if entry.can_rewrite and native not in entry.rewrite_events:
        why = f"{entry.title} cannot rewrite a command at {native}"
    return (
        f"forge-policy: the enforcement floor is not held for shell commands ({why}): "
        "forge-policy still decides every call, but nothing at the operating-system level "
        "stops a command it lets through from writing governance files or reading secrets. "
        "Run `forge-policy doctor` for what is covered."
    )
