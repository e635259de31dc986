"""Embed forge_policy in an orchestrator loop.

A scripted agent session (a search, an edit, a force push, writes where nothing was looked at)
goes through the Evaluator; each decision is printed as the agent would see it. Run:

    python examples/embed.py
"""

from __future__ import annotations

import textwrap

import forge_policy as fp
from forge_policy.testing import FakeClock

SESSION = "demo-session"

# (seconds since the previous step, tool, tool_input)
SCRIPT: list[tuple[float, str, dict[str, object]]] = [
    (0, "Grep", {"pattern": "def parse_config", "path": "/repo/src/"}),
    (4, "Read", {"file_path": "/repo/src/config.py"}),
    (9, "Edit", {"file_path": "/repo/src/config.py", "old_string": "a", "new_string": "b"}),
    (7, "Bash", {"command": "git push --force origin main"}),
    (3, "Write", {"file_path": "/repo/lib/util.py", "content": "def helper(): ..."}),
    (5, "Write", {"file_path": "/repo/lib/extra.py", "content": "X = 1"}),
    (5, "Write", {"file_path": "/repo/lib/more.py", "content": "Y = 2"}),
    (5, "Write", {"file_path": "/repo/lib/again.py", "content": "Z = 3"}),
    (5, "Write", {"file_path": "/repo/lib/last.py", "content": "W = 4"}),
    (20, "Write", {"file_path": "/repo/lib/last.py", "content": "W = 4"}),  # identical retry
    (5, "Bash", {"command": "git push origin main"}),
    (5, "Bash", {"command": "pytest -q"}),
    (5, "Bash", {"command": "git push origin main"}),
]


def main() -> None:
    clock = FakeClock()  # seconds advance by hand, so the run reads the same every time
    audit = fp.MemoryAuditSink()
    evaluator = fp.Evaluator(fp.builtin_catalog(), clock=clock, audit=audit)
    print(f"forge_policy demo: {len(SCRIPT)} tool calls in session {SESSION!r}\n")
    for step, (delay, tool_name, tool_input) in enumerate(SCRIPT, start=1):
        clock.advance(delay)
        event = fp.Event(
            "PreToolUse",
            SESSION,
            tool_name=tool_name,
            tool_input=tool_input,
            tool_use_id=f"toolu_{step:02d}",
        )
        decision = evaluator.evaluate(event)
        subject = (
            tool_input.get("command") or tool_input.get("file_path") or tool_input.get("pattern")
        )
        print(f"{step:2d}. {tool_name}({subject}) -> {decision.outcome.upper()}")
        for override in decision.overrides:
            print(f"    override by {override['mechanism']} (counter {override['counter']})")
        if decision.messages:
            print(textwrap.indent(decision.message, "    | "))
    print("\nSession status:")
    for behavior_id, row in evaluator.status(SESSION).behaviors.items():
        if row.enabled:
            level = row.level.label if row.level is not None else None
            print(
                f"  {behavior_id:22s} counter={row.counter} level={level} "
                f"next={row.next_threshold} overrides={row.overrides}"
            )
    print(f"\nAudit records: {[r['kind'] for r in audit.records()]}")


if __name__ == "__main__":
    main()
