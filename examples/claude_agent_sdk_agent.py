"""Govern a Claude Agent SDK agent with forge_policy (extra: ``forge-policy[claude-agent-sdk]``).

A real agent passes ``options`` to ``ClaudeSDKClient(options)`` (or ``query(…, options=options)``)
and the CLI calls the hooks. Here a scripted model stands in for Claude: each tool call it makes
goes through the same hook callbacks, called exactly as the SDK calls them
(``callback(input_data, tool_use_id, {"signal": None})``), and the answers are printed. Run:

    python examples/claude_agent_sdk_agent.py
"""

from __future__ import annotations

import asyncio
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions

import forge_policy as fp
from forge_policy.integrations.claude_agent_sdk import hooks
from forge_policy.testing import FakeClock

SESSION = "sdk-demo-session"

# what the scripted model asks for: (seconds since the previous call, tool, tool_input)
SCRIPT: list[tuple[float, str, dict[str, Any]]] = [
    (0, "Grep", {"pattern": "def parse_config", "path": "/repo/src/"}),
    (4, "Read", {"file_path": "/repo/src/config.py"}),
    (7, "Bash", {"command": "git push --force origin main"}),
    (3, "Write", {"file_path": "/repo/lib/util.py", "content": "def helper(): ..."}),
    (5, "Write", {"file_path": "/repo/lib/extra.py", "content": "X = 1"}),
    (5, "Write", {"file_path": "/repo/lib/more.py", "content": "Y = 2"}),
    (5, "Write", {"file_path": "/repo/lib/again.py", "content": "Z = 3"}),
    (5, "Write", {"file_path": "/repo/lib/last.py", "content": "W = 4"}),
    (20, "Write", {"file_path": "/repo/lib/last.py", "content": "W = 4"}),  # identical retry
]


def hook_input(event: str, tool_name: str, tool_input: dict[str, Any], step: int) -> dict[str, Any]:
    """The input the CLI hands an SDK hook callback."""
    return {
        "session_id": SESSION,
        "transcript_path": f"/home/me/.claude/projects/repo/{SESSION}.jsonl",
        "cwd": "/repo",
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": tool_name,
        "tool_input": tool_input,
        "tool_use_id": f"toolu_{step:02d}",
        **({"tool_response": {"ok": True}} if event == "PostToolUse" else {}),
    }


async def main() -> None:
    clock = FakeClock()  # seconds advance by hand, so the run reads the same every time
    audit = fp.MemoryAuditSink()
    evaluator = fp.Evaluator(fp.builtin_catalog(), clock=clock, audit=audit)
    options = ClaudeAgentOptions(hooks=hooks(evaluator))  # as a real agent would configure it
    assert options.hooks is not None
    pre = options.hooks["PreToolUse"][0].hooks[0]
    post = options.hooks["PostToolUse"][0].hooks[0]
    print(f"claude-agent-sdk demo: {len(SCRIPT)} tool calls in session {SESSION!r}\n")
    for step, (delay, tool_name, tool_input) in enumerate(SCRIPT, start=1):
        clock.advance(delay)
        data = hook_input("PreToolUse", tool_name, tool_input, step)
        answer: dict[str, Any] = dict(await pre(data, data["tool_use_id"], {"signal": None}))
        specific = answer.get("hookSpecificOutput", {})
        verdict = specific.get("permissionDecision", "allow")
        subject = tool_input.get("command") or tool_input.get("file_path") or tool_input["pattern"]
        print(f"{step:2d}. {tool_name}({subject}) -> {verdict.upper()}")
        if "permissionDecisionReason" in specific:
            print(f"    | {specific['permissionDecisionReason'].splitlines()[0]}")
        elif "systemMessage" in answer:
            print(f"    | {answer['systemMessage'].splitlines()[0]}")
        if verdict == "allow":  # the tool runs; PostToolUse keeps the counters honest
            data = hook_input("PostToolUse", tool_name, tool_input, step)
            await post(data, data["tool_use_id"], {"signal": None})
    overrides = [r["mechanism"] for r in audit.records() if r["kind"] == "override"]
    print(f"\nAudited overrides: {overrides}")


if __name__ == "__main__":
    asyncio.run(main())
