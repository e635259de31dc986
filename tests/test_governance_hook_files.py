"""protect-governance guards every harness's hook file as it guards ``.claude/settings.json``:
an agent may not drop, weaken or switch off forge-policy's hook in the file ``init`` wrote."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from forge_policy.facts.governance import changes
from forge_policy.model import Event
from forge_policy.testing.harnesses import codex_payload
from tests.cli_support import FORGE, Project

FILES = {
    "codex": ".codex/hooks.json",
    "gemini": ".gemini/settings.json",
    "cursor": ".cursor/hooks.json",
    "copilot": ".github/hooks/forge-policy.json",
    "antigravity": ".agents/hooks.json",
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project = Project(tmp_path_factory.mktemp("governed"))
    # the hook files alone: the sandbox init also writes is test_governance_sandbox's
    project.run("init", "--floor", "own", *[a for h in FILES for a in ("--harness", h)])
    return project


def call(project: Project, name: str, **tool_input: object) -> list[str]:
    event = Event("PreToolUse", "s", tool_name=name, tool_input=tool_input, cwd=str(project.path))
    return changes(event, {"HOME": str(project.path / "home")})


def write(project: Project, relative: str, document: Any) -> list[str]:
    path = project.path / relative
    text = document if isinstance(document, str) else json.dumps(document, indent=2)
    return call(project, "Write", file_path=str(path), content=text)


def on(path: Any, found: list[str], tool: str = "Write") -> bool:
    """Whether ``found`` names changes to ``path`` by ``tool`` only (each entry says what
    changed after the path, since issue 23)."""
    return bool(found) and all(item.startswith(f"{tool} {path}: ") for item in found)


#: A harmless edit per file (issue 23: any key outside a harness's harmless ones is enforcement,
#: and each file is judged by its harness's schema: Codex's hooks.json takes no unknown key)
HARMLESS = {
    "codex": {"description": "mine"},
    "gemini": {"ui": {"hideTips": True}},
    "cursor": {"$schema": "https://example.com/cursor-hooks.json"},
    "copilot": {"$schema": "https://example.com/copilot-hooks.json"},
    "antigravity": {"$schema": "https://example.com/antigravity-hooks.json"},
}


def current(project: Project, relative: str) -> Any:
    return json.loads((project.path / relative).read_text())


@pytest.mark.parametrize("harness", FILES)
def test_keeping_the_hook_is_no_change_dropping_it_is(project: Project, harness: str) -> None:
    relative = FILES[harness]
    document = current(project, relative)
    container = "forge-policy" if harness == "antigravity" else "hooks"
    kept = {**document, **HARMLESS[harness]}
    assert write(project, relative, kept) == []
    assert on(
        project.path / relative, write(project, relative, {**document, "extra": {"note": "x"}})
    )
    events = dict(document[container])
    events.pop(next(iter(events)))  # the first event's hook removed
    assert on(project.path / relative, write(project, relative, {**document, container: events}))
    assert write(project, relative, "{ not json") != []
    assert call(project, "Bash", command=f"rm {relative}") == [f"rm {project.path / relative}"]
    assert call(project, "Bash", command=f"cat {relative}") == []


@pytest.mark.parametrize(
    ("harness", "switch_off"),
    [
        ("gemini", {"hooksConfig": {"enabled": False}}),
        ("gemini", {"hooks": "DISABLED"}),  # hooks.disabled naming forge-policy, below
        ("copilot", {"disableAllHooks": True}),
        ("antigravity", "ENABLED"),  # the named hook's enabled: false, below
    ],
)
def test_switching_the_hook_off_is_a_change(
    project: Project, harness: str, switch_off: Any
) -> None:
    relative = FILES[harness]
    document = current(project, relative)
    if switch_off == {"hooks": "DISABLED"}:
        document["hooks"]["disabled"] = ["forge-policy"]
    elif switch_off == "ENABLED":
        document["forge-policy"]["enabled"] = False
    else:
        document.update(switch_off)
    assert on(project.path / relative, write(project, relative, document))


def test_weakening_cursor_s_fail_closed_is_a_change(project: Project) -> None:
    path = project.path / FILES["cursor"]
    edited = call(
        project,
        "Edit",
        file_path=str(path),
        old_string='"failClosed": true',
        new_string='"failClosed": false',
    )
    assert edited == [f"Edit {path}: hooks.preToolUse"] or on(path, edited, "Edit")


def test_copilot_repository_settings_and_codex_config_toml_are_guarded(project: Project) -> None:
    assert write(project, ".github/copilot/settings.json", {"model": "x"}) == []
    assert write(project, ".github/copilot/settings.json", {"disableAllHooks": True}) != []
    assert write(project, ".codex/config.toml", 'model = "gpt-5"\n') == []
    assert write(project, ".codex/config.toml", "[features]\nhooks = false\n") != []
    assert call(project, "Bash", command="echo '[features]' >> .codex/config.toml") != []


def test_the_real_hook_refuses_an_agent_deleting_its_codex_hook(project: Project) -> None:
    payload = codex_payload("Bash", command="rm .codex/hooks.json", cwd=str(project.path))
    result = subprocess.run(
        [str(FORGE), "hook", "--harness", "codex"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=project.path,
        env=project.env,
        timeout=30,
    )
    answer = json.loads(result.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert "[protect-governance]" in answer["permissionDecisionReason"]


def test_the_guarded_files_come_from_the_harness_registry_not_the_installer() -> None:
    """The governance fact runs on every tool call: it reads the hook files from the harness
    table (every harness's ``config``) and never imports the installer (``forge_policy.ops``)."""
    script = (
        "import sys\n"
        "from forge_policy.facts.governance import changes\n"
        "from forge_policy.harness.registry import HARNESSES\n"
        "from forge_policy.model import Event\n"
        "for h in HARNESSES.values():\n"
        "    event = Event('PreToolUse', 's', tool_name='Bash', cwd='/p',\n"
        "                  tool_input={'command': 'rm ' + h.config})\n"
        "    assert changes(event, {'HOME': '/h'}) == ['rm /p/' + h.config], h.name\n"
        "print(sorted(m for m in sys.modules if m.startswith('forge_policy.ops')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
