#!/usr/bin/env python3
"""A Claude Code hook that embeds forge_policy directly: no CLI, one file, your own wiring.

Register it for PreToolUse, PostToolUse, UserPromptSubmit, SessionStart and Stop (see
``examples/claude-settings.json``). Claude Code runs it once per event with the event as JSON on
stdin and reads the decision as JSON on stdout. It always exits 0: exit 1 would not block, and
exit 2 would make Claude Code ignore the JSON.

``forge-policy hook`` does the same with every ``FORGE_*`` variable and the compiled catalog cache
(:mod:`forge_policy.hook`); start from this file when you want a different catalog, store or
profile wired in code.
"""

from __future__ import annotations

import json
import os
import sys

import forge_policy as fp
from forge_policy.render.claude_code import dumps, refuse, render
from forge_policy.stores import FileStore

# Claude Code sets CLAUDE_PROJECT_DIR for hooks; keep state beside the project, git-ignored.
ROOT = os.path.join(os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd(), ".forge")


def build() -> fp.Evaluator:
    """The evaluator: catalog + per-session state + the append-only audit log."""
    behaviors = os.path.join(ROOT, "behaviors")
    catalog = fp.load_catalog(behaviors) if os.path.isdir(behaviors) else fp.builtin_catalog()
    return fp.Evaluator(
        catalog,
        # one JSON file, locked per event, so parallel hooks of one session lose no increment
        store=FileStore(os.path.join(ROOT, "runtime", "state.json")),
        # overrides, blocks and bypasses are recorded here first (hash-chained JSONL)
        audit=fp.JsonlAuditSink(os.path.join(ROOT, "audit", "overrides.log")),
        profile="standard",
    )


def main() -> int:
    event_name = ""
    try:
        payload = json.load(sys.stdin)
        event_name = payload.get("hook_event_name", "") if isinstance(payload, dict) else ""
        event = fp.Event.from_claude_code(payload)  # raises EventError on a bad payload
        evaluator = build()
        decision = evaluator.evaluate(event)
        # nothing to say -> "" ; nudge/warning -> advice ; blocks -> deny / ask / block
        text, _ = render(decision)
    except Exception as exc:  # never a traceback: fail closed where a call can be refused
        print(f"claude_code_hook: {type(exc).__name__}: {exc}", file=sys.stderr)
        if event_name == "PreToolUse":
            reason = f"policy check failed, so the call is refused: {exc}"
            text = dumps(refuse(event_name, reason, reason))
        else:  # never hold a prompt or a stop hostage to a broken hook
            text = dumps({"systemMessage": f"policy check failed: {exc}"})
    if text:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
