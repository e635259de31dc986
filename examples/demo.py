"""Replay a recorded Claude Code session through the real ``forge-policy hook`` executable.

Each line of ``demo_session.jsonl`` is one hook payload as Claude Code sends it (session_id,
transcript_path, cwd, permission_mode, hook_event_name, tool_name, tool_input, a fresh
tool_use_id per call, …). Every payload is piped to ``forge-policy hook`` in its own process,
exactly as Claude Code runs a command hook, against a throw-away project whose ``FORGE_ROOT`` is
a temporary folder and whose catalog is the built-in one. For each step the demo prints what
the agent (the model) and the user would see, then the session's counters and the audit log.

Run it in a virtual environment where forge_policy is installed (from the repository root)::

    python3 -m venv .venv-run && .venv-run/bin/pip install -q .
    .venv-run/bin/python examples/demo.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

SESSION_FILE = Path(__file__).with_name("demo_session.jsonl")
FILES = {
    "src/orders.py": "def create_order(payload):\n    return {'id': 1, **payload}\n",
    "tests/test_orders.py": "from src.orders import create_order\n",
    ".env": "DATABASE_URL=postgres://demo\n",
}


def hook_command() -> list[str]:
    """``forge-policy hook`` from the environment this demo runs in (beside sys.executable)."""
    script = Path(sys.executable).with_name("forge-policy")
    if script.exists():
        return [str(script), "hook"]
    print(f"(no {script}; using {sys.executable} -m forge_policy.hook)\n")
    return [sys.executable, "-m", "forge_policy.hook"]


def subject(payload: dict[str, object]) -> str:
    tool_input = payload.get("tool_input")
    if isinstance(tool_input, dict):
        for key in ("command", "file_path", "pattern", "subject"):
            if key in tool_input:
                text = str(tool_input[key]).replace(str(payload["cwd"]) + "/", "")
                return f"{payload['tool_name']}({text.splitlines()[0][:70]})"
    if payload.get("prompt"):
        return f"prompt: {str(payload['prompt'])[:70]!r}"
    return str(payload.get("source") or payload.get("last_assistant_message") or "")[:70]


def explain(answer: dict[str, object]) -> tuple[str, str, str]:
    """(verdict, what the agent sees, what the user sees) for one hook answer."""
    specific = answer.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    user = str(answer.get("systemMessage", ""))
    decision = specific.get("permissionDecision")
    if decision == "deny":
        verdict = "DENY (no override)" if answer.get("override_allowed") is False else "DENY"
        return verdict, str(specific["permissionDecisionReason"]), user
    if decision == "ask":
        return "ASK THE USER", "", f"{user}\n[prompt] {specific['permissionDecisionReason']}"
    if answer.get("decision") == "block":
        return "BLOCK", str(answer.get("reason", "")), user
    if "Let through by an override" in user:
        return "ALLOW (override, audited)", "", user
    return "ALLOW + ADVICE", str(specific.get("additionalContext", "")), user


def show(label: str, text: str) -> None:
    if text:
        print(textwrap.indent(text, f"      {label} | ", lambda line: True))


def replay(project: Path, env: dict[str, str]) -> str:
    command = hook_command()
    session = ""
    lines = SESSION_FILE.read_text(encoding="utf-8").splitlines()
    for step, line in enumerate(lines, start=1):
        payload = json.loads(line.replace("${CWD}", str(project)))
        session = payload["session_id"]
        result = subprocess.run(
            command, input=json.dumps(payload).encode(), capture_output=True, env=env, check=False
        )
        out = result.stdout.decode().strip()
        print(f"{step:2d}. {payload['hook_event_name']:<16} {subject(payload)}")
        if result.returncode != 0 or not out:
            note = f"exit {result.returncode}" if result.returncode else "silent"
            print(f"      -> ALLOW ({note}: Claude Code's normal permission flow)")
        else:
            verdict, agent, user = explain(json.loads(out))
            print(f"      -> {verdict}")
            show("agent", agent)
            show("user ", user)
        for diagnostic in result.stderr.decode().splitlines():
            print(f"      (stderr) {diagnostic}")
    return session


def summarize(env: dict[str, str], session: str, cwd: Path) -> None:
    """What a person runs next: ``forge-policy status`` and ``forge-policy audit``."""
    command = hook_command()[:-1]
    for args in (["status", "--session", session], ["audit"]):
        print(f"\n$ forge-policy {' '.join(args)}")
        done = subprocess.run(
            [*command, *args], env=env, cwd=cwd, capture_output=True, text=True, check=False
        )
        print((done.stdout + done.stderr).rstrip())


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="forge-demo-") as tmp:
        project = Path(tmp) / "shop-api"
        for name, text in FILES.items():
            (project / name).parent.mkdir(parents=True, exist_ok=True)
            (project / name).write_text(text, encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGE_", "DISABLE_"))}
        env.update(
            CLAUDE_PROJECT_DIR=str(project),
            FORGE_ROOT=str(project / ".forge"),
            XDG_CACHE_HOME=str(Path(tmp) / "cache"),
        )
        print(f"forge_policy demo: {SESSION_FILE.name} through `forge-policy hook`\n")
        session = replay(project, env)
        summarize(env, session, project)


if __name__ == "__main__":
    main()
