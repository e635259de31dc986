"""Shared by the harness conformance tests: the recorded payloads, the catalog and the texts every
harness must carry word for word."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers import behavior_yaml
from hookrun import CALL, CATALOG, HINT, Project, to_override

FIXTURES = Path(__file__).resolve().parent / "fixtures"

STOP_RULE = behavior_yaml(
    "stop-guard",
    default_level="soft_block",
    triggers=(
        "    - event: Stop\n      conditions:\n"
        "        - {field: hook_event_name, operator: equals, value: Stop}\n"
    ),
    extra='rendering:\n  block_reason: "stop-guard: refused"\n',
)
#: The hook test catalog plus a rule that refuses to stop.
HARNESS_CATALOG = {**CATALOG, "stop-guard": STOP_RULE}

#: The command (or prompt) that reaches each outcome, and the behavior it fires.
COMMANDS = {
    "allow": "ls -la",
    "nudge": "echo nudge-me",
    "warning": "echo warn-me",
    "soft_agent": "echo soft-me",
    "soft_user": "echo ask-me",
    "hard": "echo hard-me",
}
PROMPT = "do the forbidden thing"


def fixture(harness: str, name: str, project: Project, command: str = "", prompt: str = "") -> Any:
    """The recorded payload ``<harness>/<name>.json`` with this project's session and folder."""
    data = json.loads((FIXTURES / harness / f"{name}.json").read_text())
    values = {
        "{{SESSION}}": project.session,
        "{{CWD}}": str(project.dir),
        "{{COMMAND}}": command,
        "{{PROMPT}}": prompt,
    }

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            for key, text in values.items():
                value = value.replace(key, text)
            return value
        if isinstance(value, list):
            return [fill(v) for v in value]
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        return value

    return fill(data)


class Texts:
    """The decision texts of the test catalog for one session (the Claude Code hook's, which
    every harness must show unchanged)."""

    def __init__(self, session: str) -> None:
        self.session = session
        self.nudge = "[nudger] nudger: Bash (1)"
        self.warning = f"[warner] warner: warning 1\nDo instead: {HINT}"
        self.soft = f"[softy] softy: refused\nDo instead: {HINT}\n{to_override('softy', session)}"
        self.ask = (
            f"[asker] asker: refused\nDo instead: {HINT}\n"
            "Overriding needs the user's approval: the user is asked to allow this call."
        )
        self.hard = f"[hardy] hardy: refused\nDo instead: {HINT}\nThis block cannot be overridden."
        self.prompt = self.refused("prompt-guard")
        self.stop = self.refused("stop-guard")
        self.post = (
            f"The tool call already ran, but it broke a policy.\n{self.refused('post-guard')}"
        )

    def refused(self, behavior_id: str) -> str:
        """The soft block of the test catalog's ``behavior_id`` (the agent may override)."""
        return (
            f"[{behavior_id}] {behavior_id}: refused\nDo instead: {HINT}\n"
            f"{to_override(behavior_id, self.session)}"
        )

    def no_ask(self, title: str) -> str:
        """The user-approval block where the harness cannot ask: a deny naming the command."""
        return (
            f"[asker] asker: refused\nDo instead: {HINT}\n"
            f"Overriding needs the user's approval, and {title} cannot ask: the user can run: "
            f"forge-policy override asker --session {self.session} --call {CALL} "
            '--reason "..."'
        )
