"""The harness table: every entry maps onto the catalog's vocabulary and names a real adapter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from forge_policy.events import EVENTS
from forge_policy.harness import HARNESSES
from forge_policy.harness.base import HookAdapter
from forge_policy.harness.registry import HARNESSES as TABLE
from forge_policy.harness.registry import get, names

#: The catalog's tool vocabulary (Claude Code's names), which every mapping must land in.
CLAUDE_TOOLS = set(get("claude-code").tools)


def test_names_are_the_hook_spellings() -> None:
    assert names() == HARNESSES
    assert names()[0] == "claude-code"
    assert {"codex", "gemini", "cursor", "copilot", "antigravity"} <= set(names())
    assert all(TABLE[name].name == name for name in names())


@pytest.mark.parametrize("name", names())
def test_events_and_tools_land_in_the_catalog_vocabulary(name: str) -> None:
    harness = get(name)
    assert harness.catalog_events() <= EVENTS
    assert "PreToolUse" in harness.catalog_events()
    assert harness.catalog_tools() <= CLAUDE_TOOLS
    assert harness.tools and "Bash" in harness.catalog_tools()
    assert harness.ask_events <= set(harness.events)
    assert harness.config and harness.markers


@pytest.mark.parametrize("name", names())
def test_adapter_module_has_the_adapter_functions(name: str) -> None:
    adapter = get(name).adapter
    for function in ("to_event", "render", "failure"):
        assert callable(getattr(adapter, function)), f"{name}: {function}"
    assert isinstance(adapter, HookAdapter) and adapter.harness is get(name)
    assert get(name).adapter is adapter  # built once, shared by every call


def test_codex_cannot_ask_and_antigravity_fails_closed() -> None:
    assert not get("codex").can_ask
    assert get("claude-code").can_ask and get("cursor").can_ask
    assert not get("antigravity").fails_open
    assert get("codex").fails_open and get("cursor").fails_open


def test_unknown_harness_names_the_supported_ones() -> None:
    with pytest.raises(KeyError, match="unknown harness 'vim' \\(supported: claude-code, codex"):
        get("vim")


def test_a_hook_imports_only_the_adapter_it_speaks_through(tmp_path: Path) -> None:
    # the registry holds the adapter classes, each module imported by its first use
    probe = (
        "import sys\n"
        "from forge_policy.hook import respond\n"
        f"env = {{'FORGE_ROOT': {str(tmp_path)!r}, 'FORGE_STORE': 'memory'}}\n"
        'text, code = respond(b\'{"session_id": "s", "hook_event_name": "BeforeTool",'
        ' "tool_name": "run_shell_command", "tool_input": {"command": "ls"}}\','
        " harness='gemini', environ=env)\n"
        "assert code == 0, text\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('forge_policy.harness.'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    adapters = {f"forge_policy.harness.{name.replace('-', '_')}" for name in names()}
    assert adapters & set(out.split()) == {"forge_policy.harness.gemini"}
