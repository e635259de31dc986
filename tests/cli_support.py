"""Running the real ``forge-policy`` executable against a temporary project."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

#: The console script installed beside the interpreter running the tests.
FORGE = Path(sys.executable).parent / ("forge-policy.exe" if os.name == "nt" else "forge-policy")


def clean_env(root: Path, **extra: str) -> dict[str, str]:
    """The process environment without FORGE_*/CLAUDE_PROJECT_DIR, plus FORGE_ROOT=root."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("FORGE_", "DISABLE_")) and k != "CLAUDE_PROJECT_DIR"
    }
    env["FORGE_ROOT"] = str(root)
    env.update(extra)
    return env


def claude_code_argv(handler: dict[str, Any], project: Path) -> list[str]:
    """What Claude Code (2.1.332) spawns for the command hook ``handler`` of ``project``: in exec
    form (``args`` present) ``command`` then ``args``, with ``${CLAUDE_PROJECT_DIR}`` replaced in
    each as a plain string and no shell; in shell form ``command`` through a shell."""
    if "args" not in handler:
        return ["/bin/sh", "-c", str(handler["command"])]
    words = [str(handler["command"]), *map(str, handler["args"])]
    return [w.replace("${CLAUDE_PROJECT_DIR}", str(project)) for w in words]


class Project:
    """A temporary project folder with ``.forge`` as FORGE_ROOT; runs commands in it.

    ``floor``: the project's ``floor:`` setting (SPEC §13), ``off`` unless a test is about the
    floor, so that an allowed shell call is answered as decided, not rewritten (None: unset)."""

    def __init__(self, path: Path, *, floor: str | None = "off", **env: str) -> None:
        self.path = path
        self.root = path / ".forge"
        self.env = clean_env(self.root, **env)
        self.floor = floor

    def set_floor(self) -> None:
        """Write ``floor:`` before the first hook call (not before: ``init`` and others expect
        no ``.forge`` until they make it)."""
        config = self.root / "config.yaml"
        if self.floor is not None and not config.exists():
            self.root.mkdir(parents=True, exist_ok=True)
            config.write_text(f"floor: {self.floor}\n")

    def run(
        self, *args: str, input: str | bytes | None = None, check: int | None = 0
    ) -> subprocess.CompletedProcess[str]:
        """``forge-policy ARGS`` in the project; asserts the exit code unless ``check`` is None."""
        if args[:1] == ("hook",):
            self.set_floor()
        data = input.decode() if isinstance(input, bytes) else input
        result = subprocess.run(
            [str(FORGE), *args],
            input=data,
            capture_output=True,
            text=True,
            cwd=self.path,
            env=self.env,
            timeout=30,
        )
        if check is not None:
            assert result.returncode == check, (
                f"forge-policy {' '.join(args)} exited {result.returncode}, expected {check}\n"
                f"stdout: {result.stdout}\nstderr: {result.stderr}"
            )
        return result

    def json(self, *args: str, input: str | None = None) -> Any:
        """``forge-policy ARGS --json`` parsed."""
        return json.loads(self.run(*args, "--json", input=input).stdout)

    def hook(self, event: dict[str, Any], *args: str) -> dict[str, Any] | None:
        """One ``forge-policy hook`` call; its JSON answer or None for an empty one."""
        out = self.run("hook", *args, input=json.dumps(event)).stdout.strip()
        return json.loads(out) if out else None


def tool_event(
    tool: str, session: str = "s1", event: str = "PreToolUse", **tool_input: Any
) -> dict[str, Any]:
    """A Claude Code tool event payload."""
    return {
        "session_id": session,
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": f"toolu_{os.urandom(4).hex()}",
        "cwd": "/project",
    }


def decision_of(answer: dict[str, Any] | None) -> str | None:
    """``permissionDecision`` of a PreToolUse answer (None when it allows)."""
    if answer is None:
        return None
    specific = answer.get("hookSpecificOutput", {})
    decision: str | None = specific.get("permissionDecision")
    return decision


SOFT_RULE = """\
schema_version: "1"
id: no-rm
name: No rm
description: refuses rm, overridable
category: core
scope: session
policy:
  triggers:
    - event: PreToolUse
      matcher: Bash
      conditions:
        - field: command
          operator: starts_with
          value: "rm "
  enforcement:
    default_level: soft_block
  recovery:
    hint: move files to a trash folder instead
"""


def soft_catalog(folder: Path) -> Path:
    """A one-behavior catalog whose ``no-rm`` soft-blocks ``rm …`` (overridable)."""
    (folder / "no-rm").mkdir(parents=True)
    (folder / "no-rm" / "behavior.yaml").write_text(SOFT_RULE, encoding="utf-8")
    (folder / "index.yaml").write_text(
        'schema_version: "1"\nbehaviors:\n  - id: no-rm\n    enabled: true\n', encoding="utf-8"
    )
    return folder
