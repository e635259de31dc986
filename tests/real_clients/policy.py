"""The test catalog additions the real-client tests use: two trip-wire behaviors, a soft block
the agent may override by retrying (``override: agent``) and one that asks the user
(``override: user``), each firing on a marker in a shell command or a file path, so one test
per tool needs no built-in rule's escalation."""

from __future__ import annotations

SOFT_MARK = "soft-trip"
ASK_MARK = "ask-trip"


def tripwire(behavior_id: str, mark: str, override: str) -> str:
    return f"""schema_version: "1"
id: {behavior_id}
name: Trip wire ({override} override)
description: Refuses calls that name {mark}; the real-client tests' soft block.
category: opinionated
scope: session
policy:
  triggers:
    - event: PreToolUse
      matcher: "Bash|Write|Edit|Read"
      conditions:
        - {{field: command, operator: contains, value: {mark}}}
    - event: PreToolUse
      matcher: "Bash|Write|Edit|Read"
      conditions:
        - {{field: file_path, operator: contains, value: {mark}}}
  enforcement:
    default_level: soft_block
    override: {override}
  recovery:
    hint: Leave {mark} alone.
"""


SOFT = tripwire("tripwire-soft", SOFT_MARK, "agent")
ASK = tripwire("tripwire-ask", ASK_MARK, "user")
