"""The test catalog additions the real-client tests use: two trip-wire behaviors, a soft block
the agent may override by retrying (``override: agent``) and one that asks the user
(``override: user``), each firing on a marker in a shell command or a file path, so one test
per tool needs no built-in rule's escalation; and a catalog that lets the floor tests' calls
through, so that what stops them is the operating system (:func:`allowing_catalog`)."""

from __future__ import annotations

import shutil
from pathlib import Path

from forge_policy.catalog.loader import BUILTIN_DIR

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


def allowing_catalog(folder: Path) -> Path:
    """A catalog folder of ``no-destructive-git`` alone: the hook allows writes to ``.forge/``
    and reads of ``~/.ssh`` (protect-governance and agent-shield are not in it)."""
    catalog = folder / "allowing-catalog"
    (catalog / "no-destructive-git").mkdir(parents=True, exist_ok=True)
    shutil.copy(
        Path(BUILTIN_DIR) / "no-destructive-git" / "behavior.yaml",
        catalog / "no-destructive-git" / "behavior.yaml",
    )
    (catalog / "index.yaml").write_text(
        'schema_version: "1"\nbehaviors:\n  - id: no-destructive-git\n    enabled: true\n',
        encoding="utf-8",
    )
    return catalog
