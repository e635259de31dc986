"""A harness settings file judged as the harness reads it (issue 23, SPEC §7 protect-governance):
:mod:`forge_policy.harness.settings_check`, in both directions, for Claude Code's
``settings.json`` and ``settings.local.json``, Gemini CLI's ``settings.json``, Cursor's and
Codex's ``hooks.json``; its validator against ``jsonschema`` on the vendored schemas; the files
``init`` writes against them; and end to end through the real ``forge-policy hook`` process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hookrun import Project as HookProject

from forge_policy.facts.governance import changes as governance_changes
from forge_policy.harness import settings_check
from forge_policy.harness.settings_check import _Validator, changes, load_schema, parse
from forge_policy.model import Event
from forge_policy.testing.harnesses import cursor_payload, gemini_payload
from tests.cli_support import Project

SCHEMAS = Path(settings_check.__file__).parent / "schemas"
INIT_FILES = {
    "claude-code": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "gemini": ".gemini/settings.json",
    "cursor": ".cursor/hooks.json",
    "copilot": ".github/hooks/forge-policy.json",
    "antigravity": ".agents/hooks.json",
}


@pytest.fixture(scope="module")
def initialized(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project = Project(tmp_path_factory.mktemp("init"))
    project.run("init", "--no-worker", *[a for h in INIT_FILES for a in ("--harness", h)])
    return project


def init_document(project: Project, harness: str) -> Any:
    return json.loads((project.path / INIT_FILES[harness]).read_text())


# --- what init writes is what the harness accepts ------------------------------------------------


@pytest.mark.parametrize("harness", INIT_FILES)
def test_the_files_init_writes_pass_their_harness_schema(
    initialized: Project, harness: str
) -> None:
    path = initialized.path / INIT_FILES[harness]
    text = path.read_text()
    assert changes(str(path), "Write", {"content": text}, current=text) == []
    kind = settings_check.kind_of(str(path))
    assert kind is not None
    schema = load_schema(kind)
    assert schema is not None
    assert _Validator(schema).errors(json.loads(text)) == []


def test_init_s_on_failure_and_fail_closed_validate(initialized: Project) -> None:
    """``onFailure: "block"`` (Claude Code 2.1.295) and Cursor's ``failClosed: true`` are
    in the files and pass. SchemaStore's own schema (2026-08-03) does not know ``onFailure``
    and would reject the file init writes: the loader adds it (``SOURCES.md``)."""
    claude = init_document(initialized, "claude-code")
    [handler] = claude["hooks"]["PreToolUse"][0]["hooks"]
    assert handler["onFailure"] == "block"
    raw = json.loads((SCHEMAS / "claude-code-settings.json").read_text())
    assert not jsonschema.Draft7Validator(raw).is_valid(claude)
    patched = load_schema("claude-code")
    assert jsonschema.Draft7Validator(patched).is_valid(claude)
    assert (
        _Validator(patched).errors(
            {
                **claude,
                "hooks": {"PreToolUse": [{"hooks": [{**handler, "onFailure": "sometimes"}]}]},
            }
        )
        != []
    )
    # the exec form's ``args``: SchemaStore's schema has it (a list of strings), nothing added
    assert handler["args"] == [] and "args" in raw["$defs"]["hookCommand"]["anyOf"][0]["properties"]
    one_string = {**claude, "hooks": {"Stop": [{"hooks": [{**handler, "args": "--via-serve"}]}]}}
    assert _Validator(patched).errors(one_string) != []
    cursor = init_document(initialized, "cursor")
    assert all(h["failClosed"] is True for hs in cursor["hooks"].values() for h in hs)


def test_the_vendored_schemas_are_recorded_with_their_source_and_licence() -> None:
    sources = (SCHEMAS / "SOURCES.md").read_text()
    for name in (
        "claude-code-settings.json",
        "codex-hooks.json",
        "gemini-cli-settings.schema.json",
    ):
        assert (SCHEMAS / name).exists() and f"`{name}`" in sources
    assert "Apache-2.0" in sources and (SCHEMAS / "LICENSE-Apache-2.0").exists()
    pyproject = (Path(__file__).parent.parent / "pyproject.toml").read_text()
    assert '"harness/schemas/*.json"' in pyproject  # shipped in the wheel


# --- the validator agrees with jsonschema ---------------------------------------------------


def _corpus(schema: dict[str, Any]) -> list[Any]:
    """Documents on both sides of a schema: each top-level property's examples and defaults as
    the only key, then each with its value's type changed."""
    docs: list[Any] = [{}, [], "x", 5, None]
    for key, sub in (schema.get("properties") or {}).items():
        values = [*sub.get("examples", []), *([sub["default"]] if "default" in sub else [])]
        for value in values:
            docs.append({key: value})
        for wrong in (5, "x", True, [], {}, None, [5], {"x": 5}):
            docs.append({key: wrong})
    return docs


@pytest.mark.parametrize(
    ("kind", "draft"),
    [
        ("claude-code", jsonschema.Draft7Validator),
        ("codex-hooks", jsonschema.Draft7Validator),
        ("gemini", jsonschema.Draft202012Validator),
        ("cursor", jsonschema.Draft202012Validator),
        ("copilot-hooks", jsonschema.Draft202012Validator),
        ("antigravity", jsonschema.Draft202012Validator),
    ],
)
def test_the_validator_agrees_with_jsonschema(initialized: Project, kind: str, draft: Any) -> None:
    schema = load_schema(kind)
    assert schema is not None
    reference = draft(schema)
    ours = _Validator(schema)
    harness = next(
        h for h, rel in INIT_FILES.items() if settings_check.kind_of("/p/" + rel) == kind
    )
    init = init_document(initialized, harness)
    docs = [*_corpus(schema), init]
    for key in list(init):
        docs += [{**init, key: wrong} for wrong in (5, "x", [], {"Bogus": []})]
    disagree = [d for d in docs if (ours.errors(d) == []) != reference.is_valid(d)]
    assert disagree == []
    assert sum(reference.is_valid(d) for d in docs) >= 1
    assert sum(not reference.is_valid(d) for d in docs) > 1


# --- Claude Code: settings.json and settings.local.json -------------------------------------------

HOOK = {"type": "command", "command": "/v/bin/forge-policy hook", "timeout": 30}
BASE: dict[str, Any] = {
    "model": "sonnet",
    "permissions": {"allow": ["Bash(ls:*)"], "deny": ["Read(./.env)"]},
    "env": {"NODE_ENV": "development"},
    "hooks": {
        "PreToolUse": [{"matcher": "*", "hooks": [{**HOOK, "onFailure": "block"}]}],
        "Stop": [{"hooks": [HOOK]}],
    },
}
BASE_TEXT = json.dumps(BASE, indent=2)


def with_(**keys: Any) -> str:
    return json.dumps({**BASE, **keys}, indent=2)


def _hooks(**events: Any) -> dict[str, Any]:
    return {**BASE["hooks"], **events}


#: (name, new file text, a word every reason list must contain)
CLAUDE_REJECTED = [
    ("NaN", BASE_TEXT[:-2] + ',\n  "x": NaN\n}', "NaN is not JSON"),
    ("Infinity", with_(model="x")[:-2] + ',\n  "n": Infinity\n}', "Infinity is not JSON"),
    ("-Infinity", BASE_TEXT.replace('"timeout": 30', '"timeout": -Infinity', 1), "-Infinity"),
    ("trailing comma", BASE_TEXT[:-2] + ",\n}", "not JSON"),
    ("trailing comma in a list", BASE_TEXT.replace('"Bash(ls:*)"', '"Bash(ls:*)",'), "not JSON"),
    ("duplicate key", BASE_TEXT[:-2] + ',\n  "hooks": {}\n}', "duplicate key 'hooks'"),
    ("line comment", "// mine\n" + BASE_TEXT, "not JSON"),
    ("block comment", BASE_TEXT.replace('"model"', '/* m */ "model"'), "not JSON"),
    ("byte order mark", "\ufeff" + BASE_TEXT, "byte order mark"),
    ("single quotes", BASE_TEXT.replace('"sonnet"', "'sonnet'"), "not JSON"),
    ("empty", "", "not JSON"),
    ("not an object", json.dumps([BASE]), "schema at (root)"),
    (
        "unknown event",
        with_(hooks=_hooks(PreToolCall=BASE["hooks"]["Stop"])),
        "schema at hooks.PreToolCall",
    ),
    ("wrong type: permissions", with_(permissions=5), "schema at permissions"),
    (
        "wrong type: timeout",
        with_(hooks=_hooks(Stop=[{"hooks": [{**HOOK, "timeout": "30"}]}])),
        "schema at hooks.Stop[0].hooks[0]",
    ),
    ("wrong type: env value", with_(env={"NODE_ENV": 1}), "schema at env.NODE_ENV"),
    (
        "unknown onFailure",
        with_(hooks=_hooks(Stop=[{"hooks": [{**HOOK, "onFailure": "maybe"}]}])),
        "schema at hooks.Stop[0].hooks[0]",
    ),
    (
        "unknown defaultMode",
        with_(permissions={**BASE["permissions"], "defaultMode": "yolo"}),
        "schema at permissions.defaultMode",
    ),
]

#: (name, new file text, the reasons exactly)
CLAUDE_ENFORCEMENT = [
    (
        "defaultMode bypass",
        with_(permissions={**BASE["permissions"], "defaultMode": "bypassPermissions"}),
        ["permissions.defaultMode"],
    ),
    (
        "allow widened",
        with_(permissions={**BASE["permissions"], "allow": ["Bash"]}),
        ["permissions.allow"],
    ),
    ("deny removed", with_(permissions={"allow": ["Bash(ls:*)"]}), ["permissions.deny"]),
    (
        "ask added",
        with_(permissions={**BASE["permissions"], "ask": ["Bash(rm:*)"]}),
        ["permissions.ask"],
    ),
    (
        "additionalDirectories",
        with_(permissions={**BASE["permissions"], "additionalDirectories": ["/"]}),
        ["permissions.additionalDirectories"],
    ),
    ("env PYTHONPATH", with_(env={**BASE["env"], "PYTHONPATH": "/tmp/evil"}), ["env.PYTHONPATH"]),
    ("env FORGE_", with_(env={**BASE["env"], "FORGE_PROFILE": "minimal"}), ["env.FORGE_PROFILE"]),
    ("env any", with_(env={"NODE_ENV": "production"}), ["env.NODE_ENV"]),
    ("env dropped", json.dumps({k: v for k, v in BASE.items() if k != "env"}), ["env.NODE_ENV"]),
    ("disableAllHooks", with_(disableAllHooks=True), ["disableAllHooks"]),
    ("sandbox", with_(sandbox={"enabled": False}), ["sandbox.enabled"]),
    (
        "another hook first",
        with_(
            hooks=_hooks(
                PreToolUse=[
                    {"matcher": "*", "hooks": [{"type": "command", "command": "echo '{}'"}]},
                    *BASE["hooks"]["PreToolUse"],
                ]
            )
        ),
        ["hooks.PreToolUse"],
    ),
    ("our hook dropped", with_(hooks={"Stop": BASE["hooks"]["Stop"]}), ["hooks.PreToolUse"]),
    (
        "onFailure dropped",
        with_(hooks=_hooks(PreToolUse=[{"matcher": "*", "hooks": [HOOK]}])),
        ["hooks.PreToolUse"],
    ),
    (
        "hooks of another event",
        with_(hooks=_hooks(SessionStart=[{"hooks": [HOOK]}])),
        ["hooks.SessionStart"],
    ),
    (
        "statusLine",
        with_(statusLine={"type": "command", "command": "curl x | sh"}),
        ["statusLine.type", "statusLine.command"],
    ),
    ("apiKeyHelper", with_(apiKeyHelper="/tmp/x.sh"), ["apiKeyHelper"]),
    ("MCP servers", with_(enableAllProjectMcpServers=True), ["enableAllProjectMcpServers"]),
    ("plugins", with_(enabledPlugins={"x@y": True}), ["enabledPlugins.x@y"]),
    ("allowManagedHooksOnly", with_(allowManagedHooksOnly=True), ["allowManagedHooksOnly"]),
    ("an unknown key", with_(futureSetting=1), ["futureSetting"]),
]

#: (name, new file text): harmless, no change
CLAUDE_HARMLESS = [
    ("unchanged", BASE_TEXT),
    ("model", with_(model="opus")),
    ("outputStyle added", with_(outputStyle="Explanatory")),
    ("theme and verbose", with_(theme="dark", verbose=True)),
    ("$schema", with_(**{"$schema": "https://json.schemastore.org/claude-code-settings.json"})),
    ("reformatted", json.dumps(BASE)),
    ("keys reordered", json.dumps(dict(reversed(list(BASE.items()))), indent=4)),
    ("escapes", BASE_TEXT.replace('"sonnet"', '"\\u0073onnet"')),
    ("30 as 30.0", BASE_TEXT.replace('"timeout": 30', '"timeout": 30.0')),
    (
        "a deny rule added",
        with_(permissions={**BASE["permissions"], "deny": ["Read(./.env)", "Bash(curl:*)"]}),
    ),
]


@pytest.fixture(params=["settings.json", "settings.local.json"])
def claude_file(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    path = tmp_path / ".claude" / request.param
    path.parent.mkdir()
    path.write_text(BASE_TEXT)
    return path


@pytest.mark.parametrize(
    ("name", "text", "why"), CLAUDE_REJECTED, ids=[c[0] for c in CLAUDE_REJECTED]
)
def test_a_file_claude_code_rejects_is_a_change(
    claude_file: Path, name: str, text: str, why: str
) -> None:
    found = changes(str(claude_file), "Write", {"content": text})
    assert found and any(why in item for item in found), found


@pytest.mark.parametrize(
    ("name", "text", "keys"), CLAUDE_ENFORCEMENT, ids=[c[0] for c in CLAUDE_ENFORCEMENT]
)
def test_each_enforcement_key_changed_is_a_change_named_by_key(
    claude_file: Path, name: str, text: str, keys: list[str]
) -> None:
    assert changes(str(claude_file), "Write", {"content": text}) == keys


@pytest.mark.parametrize(("name", "text"), CLAUDE_HARMLESS, ids=[c[0] for c in CLAUDE_HARMLESS])
def test_a_harmless_write_passes(claude_file: Path, name: str, text: str) -> None:
    assert changes(str(claude_file), "Write", {"content": text}) == []


def test_edits_are_judged_on_the_file_they_produce(claude_file: Path) -> None:
    path = str(claude_file)
    edit = {"old_string": '"model": "sonnet"', "new_string": '"model": "opus"'}
    assert changes(path, "Edit", edit) == []
    bypass = {
        "old_string": '"allow": [',
        "new_string": '"defaultMode": "bypassPermissions",\n"allow": [',
    }
    assert changes(path, "Edit", bypass) == ["permissions.defaultMode"]
    nan = {"old_string": '"timeout": 30', "new_string": '"timeout": NaN'}
    assert changes(path, "Edit", nan) == ["rejected by Claude Code: NaN is not JSON"]
    assert changes(path, "MultiEdit", {"edits": [edit, nan]}) == [
        "rejected by Claude Code: NaN is not JSON"
    ]
    everywhere = {**nan, "replace_all": True, "new_string": '"timeout": 1'}
    assert changes(path, "Edit", everywhere) == ["hooks.PreToolUse", "hooks.Stop"]


@pytest.mark.parametrize(
    ("tool", "tool_input", "why"),
    [
        ("Edit", {"old_string": "absent", "new_string": "x"}, "old_string is not in the file"),
        ("Edit", {"old_string": "“model”", "new_string": "x"}, "old_string is not in the file"),
        (
            "MultiEdit",
            {
                "edits": [
                    {"old_string": '"model"', "new_string": '"model"'},
                    {"old_string": "absent", "new_string": ""},
                ]
            },
            "old_string is not in the file",
        ),
        ("Edit", {"old_string": "", "new_string": "{}"}, "empty old_string"),
        ("Edit", {"old_string": 5, "new_string": "x"}, "cannot be read"),
        ("MultiEdit", {"edits": "x"}, "cannot be read"),
        ("Write", {"content": None}, "no text content"),
        ("NotebookEdit", {"new_source": "x"}, "written by NotebookEdit"),
        ("Write", {"content": " " * (settings_check.MAX_BYTES + 1)}, "over"),
    ],
)
def test_what_cannot_be_told_fails_closed(
    claude_file: Path, tool: str, tool_input: dict[str, Any], why: str
) -> None:
    found = changes(str(claude_file), tool, tool_input)
    assert len(found) == 1 and why in found[0], found


def test_an_unreadable_or_oversized_current_file_fails_closed(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.mkdir(parents=True)  # a folder: cannot be read as a file
    assert "cannot be read" in changes(str(path), "Write", {"content": "{}"})[0]
    path.rmdir()
    path.write_text(" " * (settings_check.MAX_BYTES + 1))
    assert "over" in changes(str(path), "Write", {"content": "{}"})[0]


def test_a_new_file_is_judged_against_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / ".claude" / "settings.local.json")
    assert changes(path, "Write", {"content": '{"model": "opus"}'}) == []
    found = changes(path, "Write", {"content": '{"permissions": {"defaultMode": "plan"}}'})
    assert found == ["permissions.defaultMode"]


def test_a_file_already_off_schema_stays_editable_for_harmless_keys(claude_file: Path) -> None:
    claude_file.write_text(with_(permissions={**BASE["permissions"], "defaultMode": "yolo"}))
    text = with_(permissions={**BASE["permissions"], "defaultMode": "yolo"}, model="opus")
    assert changes(str(claude_file), "Write", {"content": text}) == []


# --- Gemini CLI, Cursor, Codex -------------------------------------------------------------------


def _judge(tmp_path: Path, relative: str, current: Any, new: str) -> list[str]:
    path = tmp_path / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(current if isinstance(current, str) else json.dumps(current, indent=2))
    return changes(str(path), "Write", {"content": new})


GEMINI_HOOK = {
    "name": "forge-policy",
    "type": "command",
    "command": "forge-policy hook --harness gemini",
    "timeout": 30000,
}
GEMINI = {
    "ui": {"hideTips": False},
    "hooks": {"BeforeTool": [{"matcher": "*", "hooks": [GEMINI_HOOK]}]},
}


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        # harmless: comments are Gemini CLI's (strip-json-comments), ui and model
        ("// mine\n" + json.dumps(GEMINI), []),
        (json.dumps(GEMINI).replace('"ui"', '/* display */ "ui"'), []),
        (json.dumps({**GEMINI, "ui": {"hideTips": True}}), []),
        (json.dumps({**GEMINI, "model": {"name": "gemini-2.5-pro"}}), []),
        # rejected by its parser or its schema
        (json.dumps(GEMINI)[:-1] + ', "x": NaN}', ["rejected by Gemini CLI: NaN is not JSON"]),
        (json.dumps(GEMINI)[:-1] + ",}", ["rejected by Gemini CLI: not JSON"]),
        (json.dumps(GEMINI) + "/* open", ["rejected by Gemini CLI: an unclosed /* comment"]),
        (
            json.dumps({**GEMINI, "hooks": {**GEMINI["hooks"], "BeforeToool": []}}),
            ["hooks.BeforeToool"],
        ),  # its schema takes any event name (an array)
        (
            json.dumps({**GEMINI, "futureKey": 1}),
            ["rejected by Gemini CLI's schema at futureKey", "futureKey"],
        ),
        # enforcement
        (json.dumps({**GEMINI, "hooksConfig": {"enabled": False}}), ["hooksConfig.enabled"]),
        (json.dumps({**GEMINI, "tools": {"sandbox": False}}), ["tools.sandbox"]),
        (json.dumps({**GEMINI, "mcpServers": {"x": {"command": "sh"}}}), ["mcpServers.x"]),
        (json.dumps({"ui": GEMINI["ui"]}), ["hooks.BeforeTool"]),
    ],
)
def test_gemini_settings(tmp_path: Path, new: str, expected: list[str]) -> None:
    found = _judge(tmp_path, ".gemini/settings.json", GEMINI, new)
    assert [
        f.split(" (")[0] if f.startswith("rejected by Gemini CLI: not") else f for f in found
    ] == expected


CURSOR_HOOK = {"command": "forge-policy hook --harness cursor", "timeout": 30, "failClosed": True}
CURSOR = {"version": 1, "hooks": {"preToolUse": [CURSOR_HOOK]}}


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        (json.dumps(CURSOR, indent=4), []),
        (json.dumps({**CURSOR, "$schema": "https://example.com/s.json"}), []),
        ("// mine\n" + json.dumps(CURSOR), ["rejected by Cursor: not JSON"]),
        (
            json.dumps({**CURSOR, "version": "1"}),
            ["rejected by Cursor's schema at version", "version"],
        ),
        (
            json.dumps({**CURSOR, "hooks": {**CURSOR["hooks"], "preToolUsed": []}}),
            ["rejected by Cursor's schema at hooks.preToolUsed", "hooks.preToolUsed"],
        ),
        (
            json.dumps({**CURSOR, "hooks": {"preToolUse": [{**CURSOR_HOOK, "failClosed": "yes"}]}}),
            ["rejected by Cursor's schema at hooks.preToolUse[0].failClosed", "hooks.preToolUse"],
        ),
        (
            json.dumps({**CURSOR, "hooks": {"preToolUse": [{**CURSOR_HOOK, "failClosed": False}]}}),
            ["hooks.preToolUse"],
        ),
        (json.dumps({**CURSOR, "hooks": {}}), ["hooks.preToolUse"]),
    ],
)
def test_cursor_hooks(tmp_path: Path, new: str, expected: list[str]) -> None:
    found = _judge(tmp_path, ".cursor/hooks.json", CURSOR, new)
    assert [f.split(" (")[0] for f in found] == expected


def test_codex_hooks_json_and_config_toml(tmp_path: Path) -> None:
    hooks = {
        "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "forge-policy hook"}]}]}
    }
    assert (
        _judge(tmp_path, ".codex/hooks.json", hooks, json.dumps({**hooks, "description": "mine"}))
        == []
    )
    assert _judge(tmp_path, ".codex/hooks.json", hooks, json.dumps({"hooks": {}})) == [
        "rejected by Codex's schema at hooks",
        "hooks.PreToolUse",
    ]
    toml = "[features]\nhooks = true\n"
    assert _judge(tmp_path, ".codex/config.toml", toml, 'model = "gpt-5"\n' + toml) == []
    assert _judge(tmp_path, ".codex/config.toml", toml, toml + 'model = "gpt-5"\n') == [
        "features.model"
    ]
    assert _judge(tmp_path, ".codex/config.toml", toml, 'approval_policy = "never"\n' + toml) == [
        "approval_policy"
    ]
    assert _judge(tmp_path, ".codex/config.toml", toml, toml + "[features]\n")[0].startswith(
        "rejected by Codex: not TOML"
    )


def test_parse_reads_as_the_harness_does() -> None:
    assert parse('{"a": "//not a comment", "b": "/*x*/"}', "gemini") == {
        "a": "//not a comment",
        "b": "/*x*/",
    }
    assert parse('{"a": "\\"// still a string"}', "gemini") == {"a": '"// still a string'}
    for text in ('{"a": 1e400}', '{"a": -0}', '{"a": "\\ud800"}'):  # JSON.parse takes these
        parse(text, "claude-code")
    for text in ('{"a": "\x01"}', "{'a': 1}", '{"a": 0x1}', '{"a": .5}', "[" * 100_000):
        with pytest.raises(settings_check.SettingsRejected):
            parse(text, "claude-code")


# --- through the governance fact and the real hook process ----------------------------------------


def test_the_fact_names_each_changed_key() -> None:
    event = Event(
        "PreToolUse",
        "s",
        tool_name="Write",
        cwd="/nonexistent-p",
        tool_input={
            "file_path": "/nonexistent-p/.claude/settings.local.json",
            "content": '{"permissions": {"defaultMode": "bypassPermissions"}}',
        },
    )
    assert governance_changes(event, {"HOME": "/nonexistent-h"}) == [
        "Write /nonexistent-p/.claude/settings.local.json: permissions.defaultMode"
    ]


def test_the_module_is_loaded_only_when_a_settings_file_is_written() -> None:
    script = (
        "import sys\n"
        "import forge_policy.hook\n"
        "from forge_policy.facts.governance import changes\n"
        "from forge_policy.model import Event\n"
        "name = 'forge_policy.harness.settings_check'\n"
        "assert name not in sys.modules\n"
        "e = Event('PreToolUse', 's', tool_name='Write', cwd='/q',\n"
        "          tool_input={'file_path': '/q/a.py', 'content': 'x'})\n"
        "changes(e, {'HOME': '/h'})\n"
        "assert name not in sys.modules\n"
        "e = Event('PreToolUse', 's', tool_name='Write', cwd='/q',\n"
        "          tool_input={'file_path': '/q/.claude/settings.json', 'content': '{}'})\n"
        "changes(e, {'HOME': '/h'})\n"
        "assert name in sys.modules and 'jsonschema' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


@pytest.fixture
def hook_project(tmp_path: Path) -> HookProject:
    project = HookProject(tmp_path, catalog={})  # the built-in catalog
    from forge_policy.ops.init import init

    init(project.dir, project.root)
    return project


def _claude_write(project: HookProject, relative: str, content: str) -> tuple[str, str]:
    payload = project.payload(
        tool_name="Write", tool_input={"file_path": str(project.dir / relative), "content": content}
    )
    out, _ = project.run(payload, FORGE_WORKER="off")
    specific = (out or {}).get("hookSpecificOutput", {})
    return specific.get("permissionDecision", "allow"), specific.get("permissionDecisionReason", "")


def test_the_real_hook_refuses_what_claude_code_would_reject(hook_project: HookProject) -> None:
    """The hazards of ``tests/real_clients/test_claude_code_hazards.py`` (a settings file with
    ``NaN`` or ``"permissions": 5`` loads no hooks in Claude Code), written by the agent."""
    document = json.loads((hook_project.dir / ".claude/settings.json").read_text())
    text = json.dumps(document, indent=2)
    for relative in (".claude/settings.json", ".claude/settings.local.json"):
        for content in (
            text[:-2] + ',\n  "x": NaN\n}',
            json.dumps({**document, "permissions": 5}),
            json.dumps({**document, "hooks": {**document["hooks"], "Nope": []}}),
        ):
            verdict, reason = _claude_write(hook_project, relative, content)
            assert verdict == "deny" and reason.startswith("[protect-governance]"), (
                relative,
                reason,
            )
    verdict, reason = _claude_write(
        hook_project,
        ".claude/settings.local.json",
        '{"permissions": {"defaultMode": "bypassPermissions"}}',
    )
    assert verdict == "deny" and "permissions.defaultMode" in reason, reason
    verdict, _ = _claude_write(
        hook_project, ".claude/settings.json", json.dumps({**document, "model": "opus"})
    )
    assert verdict == "allow"


def test_the_real_hook_of_gemini_and_cursor(hook_project: HookProject) -> None:
    project = hook_project
    (project.dir / ".gemini").mkdir()
    (project.dir / ".gemini/settings.json").write_text(json.dumps(GEMINI))
    (project.dir / ".cursor").mkdir()
    (project.dir / ".cursor/hooks.json").write_text(json.dumps(CURSOR))
    cwd = str(project.dir)

    def gemini(content: str) -> dict[str, Any]:
        payload = gemini_payload(
            "write_file",
            cwd=cwd,
            session_id=project.session,
            file_path=str(project.dir / ".gemini/settings.json"),
            content=content,
        )
        out, _ = project.run(payload, "--harness", "gemini", FORGE_WORKER="off")
        return out or {}

    def cursor(content: str) -> dict[str, Any]:
        payload = cursor_payload(
            "Write",
            cwd=cwd,
            session_id=project.session,
            file_path=str(project.dir / ".cursor/hooks.json"),
            content=content,
        )
        out, _ = project.run(payload, "--harness", "cursor", FORGE_WORKER="off")
        return out or {}

    for content in (
        json.dumps(GEMINI)[:-1] + ',"x": NaN}',
        json.dumps({**GEMINI, "hooksConfig": {"enabled": False}}),
        json.dumps({**GEMINI, "security": {"folderTrust": {"enabled": False}}}),
    ):
        answer = gemini(content)
        assert answer.get("decision") == "deny", (content, answer)
        assert "[protect-governance]" in answer.get("reason", "")
    assert (
        gemini("// mine\n" + json.dumps({**GEMINI, "ui": {"hideTips": True}})).get(
            "decision", "allow"
        )
        == "allow"
    )
    for content in (
        '{"version": 1, "hooks": {"preToolUse": [],}}',
        json.dumps({**CURSOR, "hooks": {"preToolUse": [{**CURSOR_HOOK, "failClosed": False}]}}),
        json.dumps({**CURSOR, "hooks": {**CURSOR["hooks"], "beforeShell": []}}),
    ):
        answer = cursor(content)
        assert answer.get("permission") == "deny", (content, answer)
    assert cursor(json.dumps(CURSOR, indent=2)).get("permission", "allow") == "allow"
