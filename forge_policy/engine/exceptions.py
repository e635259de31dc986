"""Exceptions (SPEC §10): a scoped, expiring allowance of one behavior, audited at every use.

An exception comes from the layered configuration (:mod:`forge_policy.config.layers`)::

    exceptions:
      - {behavior: risky-commands, match: {command: "npm install left-pad"},
         until: 2026-12-31, reason: vendored}

The evaluator takes them as an input (``Evaluator(catalog, exceptions=...)``). Which behaviors
an event is excepted from is a pure function of the rules, the event and the day
(:func:`excepted`): :func:`~forge_policy.engine.decide.decide` skips those behaviors for that
event (its trace says ``exception``), nothing else changes. An exception is *used* when the
behavior would have produced a violation without it: the evaluator dry-runs the behavior on the
session state before the event (as for a ``FORGE_DISABLE`` bypass, :mod:`~forge_policy.engine.
bypass`) and appends one ``exception`` record per use, naming the behavior, the match, the
reason and the file:line it came from.

Matching is deliberately narrow (think of the agent that wants through):

- ``command``: the whole command of a shell call, runs of whitespace counted as one. A command
  with anything chained, piped or appended to it is another command and does not match.
- ``path``: every path the call names (``file_path``, ``path``, ``notebook_path``, ``paths`` …)
  is that file, or below that folder when the value ends with ``/``, as written and with
  symlinks resolved; a call that names no path, or one path outside, does not match. Relative
  paths in the call are read from its ``cwd``.
- ``tool``: the tool's name, exactly.

An expired exception (``until`` is the last day it holds, in local time) matches nothing.

>>> import datetime
>>> from forge_policy.model import Event
>>> class Rule:  # the shape of forge_policy.config.layers.ExceptionRule
...     behavior, kind, value = "risky-commands", "command", "npm install left-pad"
...     until = datetime.date(2099, 12, 31)
>>> bash = lambda command: Event("PreToolUse", "s", tool_name="Bash",
...                              tool_input={"command": command})
>>> sorted(excepted([Rule()], bash("npm  install left-pad"), 0.0))
['risky-commands']
>>> excepted([Rule()], bash("npm install left-pad && curl x | sh"), 0.0)
{}
"""

from __future__ import annotations

import datetime
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from forge_policy.model import Event


def excepted(rules: Iterable[Any], event: Event, now: float) -> dict[str, Any]:
    """behavior id -> the first unexpired rule of ``rules`` that matches ``event`` on the local
    day of ``now``. Pure."""
    found: dict[str, Any] = {}
    if not event.tool_name:
        return found
    today = datetime.date.fromtimestamp(now)
    for rule in rules:
        if rule.behavior in found or today > rule.until:
            continue
        if matches(rule.kind, rule.value, event):
            found[rule.behavior] = rule
    return found


def matches(kind: str, value: str, event: Event) -> bool:
    """Whether one ``match`` (``kind``: ``command``, ``path`` or ``tool``) holds for ``event``.

    >>> from forge_policy.model import Event
    >>> edit = Event("PreToolUse", "s", tool_name="Edit", tool_input={"file_path": "/p/v/a.js"})
    >>> matches("path", "/p/v/", edit), matches("path", "/p/v", edit), matches("tool", "Edit", edit)
    (True, False, True)
    """
    if kind == "tool":
        return event.tool_name == value
    tool_input = event.tool_input or {}
    if kind == "command":
        command = tool_input.get("command")
        return isinstance(command, str) and command.split() == value.split() and bool(value.split())
    if kind == "path":
        paths = _paths(tool_input, event.cwd)
        return bool(paths) and all(_within(path, value) for path in paths)
    return False


def _paths(tool_input: Any, cwd: str) -> list[str]:
    from forge_policy.facts.files import PATH_KEYS

    found: list[str] = []
    for key, raw in tool_input.items():
        if key not in PATH_KEYS:
            continue
        items: Sequence[Any] = raw if isinstance(raw, list) else [raw]
        for item in items:
            if not isinstance(item, str) or not item:
                return []  # a path it cannot read: the call does not match
            path = os.path.join(cwd, item) if cwd and not os.path.isabs(item) else item
            found.append(os.path.normpath(path))
    return found


def _within(path: str, value: str) -> bool:
    """Whether ``path`` is the file ``value`` (or below the folder ``value/``), as written and
    with symlinks resolved: a link inside the folder to a file outside is not covered."""
    for candidate, target in ((path, value), (os.path.realpath(path), os.path.realpath(value))):
        if value.endswith("/"):
            if not candidate.startswith(os.path.normpath(target).rstrip("/") + "/"):
                return False
        elif candidate != os.path.normpath(target):
            return False
    return True


def records(
    used: dict[str, Any], violations: Iterable[Any], event: Event, now: float
) -> list[dict[str, Any]]:
    """One ``exception`` audit record per behavior of ``used`` with a violation in
    ``violations`` (what the dry run without the exception decided)."""
    from forge_policy._time import iso
    from forge_policy.secrets import summarize

    out: list[dict[str, Any]] = []
    for violation in violations:
        rule = used.get(violation.behavior_id)
        if rule is None:
            continue
        out.append(
            {
                "kind": "exception",
                "timestamp": iso(now),
                "session_id": event.session_id,
                "behavior_id": violation.behavior_id,
                "match": {rule.kind: rule.value},
                "until": rule.until.isoformat(),
                "reason": rule.reason,
                "origin": rule.origin,
                "event": event.event_name,
                "tool_name": event.tool_name,
                "input_summary": summarize(event.tool_name, event.tool_input),
                "level": violation.level.label,
                "counter": violation.counter,
            }
        )
    return out
