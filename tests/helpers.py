"""Small builders shared by the tests: behavior files on disk and events."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import forge_policy as fp
from forge_policy.errors import StoreError
from forge_policy.state import SessionState
from forge_policy.stores.memory import MemoryStore

MINIMAL = """\
schema_version: "1"
id: {id}
name: {name}
description: a behavior written by a test
category: core
scope: session
policy:
  triggers:
{triggers}
  enforcement:
    default_level: {default_level}
{escalation}
  recovery:
    hint: do the right thing
"""


def behavior_yaml(
    behavior_id: str = "test-rule",
    *,
    triggers: str = "    - event: PreToolUse\n      matcher: Bash\n",
    default_level: str = "warning",
    escalation: str = "",
    name: str = "Test Rule",
    extra: str = "",
) -> str:
    """A valid behavior file with the given parts (``triggers`` indented under ``triggers:``)."""
    text = MINIMAL.format(
        id=behavior_id,
        name=name,
        triggers=triggers.rstrip("\n"),
        default_level=default_level,
        escalation=escalation.rstrip("\n"),
    )
    return text + textwrap.dedent(extra)


def write_catalog(
    root: Path, behaviors: dict[str, str], enabled: dict[str, bool] | None = None
) -> Path:
    """Write ``index.yaml`` and ``<id>/behavior.yaml`` files; return the folder."""
    root.mkdir(parents=True, exist_ok=True)
    lines = ['schema_version: "1"', "behaviors:"]
    for behavior_id, text in behaviors.items():
        (root / behavior_id).mkdir(exist_ok=True)
        (root / behavior_id / "behavior.yaml").write_text(text, encoding="utf-8")
        state = (enabled or {}).get(behavior_id, True)
        lines.append(f"  - id: {behavior_id}\n    enabled: {'true' if state else 'false'}")
    (root / "index.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


class Clock:
    """A fake clock the tests move by hand."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def tool(
    name: str,
    session: str = "s1",
    *,
    event: str = "PreToolUse",
    tool_use_id: str = "",
    **tool_input: Any,
) -> fp.Event:
    """A tool event; keyword arguments form ``tool_input``."""
    return fp.Event(event, session, tool_name=name, tool_input=tool_input, tool_use_id=tool_use_id)


def bash(command: str, session: str = "s1", **kw: Any) -> fp.Event:
    """A ``Bash`` PreToolUse event."""
    return tool("Bash", session, command=command, **kw)


class CrashingStore(MemoryStore):
    """A store that, when armed, dies after ``apply`` ran (audit written) and before writing."""

    armed = False

    def transact(self, session_id: str, apply: Callable[..., Any]) -> Any:
        def crash_after(current: SessionState | None) -> Any:
            result = apply(current)
            if self.armed:
                self.armed = False
                raise StoreError("simulated crash before the state write")
            return result

        return super().transact(session_id, crash_after)
