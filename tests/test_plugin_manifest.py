"""The plugin folder ``init --plugin`` writes has the documented shape of a Claude Code plugin.

The shape is encoded here from two sources, read on 2026-12-02:

* the plugin manifest reference, https://code.claude.com/docs/en/plugins/manifest-reference
  ("Fields": ``name`` required, kebab-case; ``version``, ``description``, ``author`` {``name``,
  ``email``, ``url``}, ``homepage``, ``repository``, ``license``, ``keywords``), and the hooks
  reference (https://code.claude.com/docs/en/hooks, "Configuration": a plugin's
  ``hooks/hooks.json`` has the settings file's ``hooks`` shape plus an optional
  ``description``);
* the manifest schema the Claude Code CLI validates with (the zod schema bundled in Claude Code
  2.1.332, ``claude_agent_sdk/_bundled/claude``): the manifest object ``$schema?``, ``name``
  (``min(1)``, "cannot contain spaces", no control characters), ``displayName?``, ``version?``,
  ``description?``, ``author?`` (``name`` ``min(1)``, ``email?``, ``url?``), ``homepage?``
  (``.url()``), ``repository?``, ``license?``, ``keywords?`` (string array), ``defaultEnabled?``,
  ``dependencies?``, ``optionalDependencies?``, ``metadata?``, ``engines?``, ``network?``; the
  hooks file object ``$schema?``, ``description?``, ``hooks?`` (the settings hooks schema),
  ``modules?``, refined to "must have ``hooks`` … or ``modules``"; a command handler ``type:
  "command"``, ``command`` (required), ``timeout?`` (positive seconds), ``onFailure?``
  (``continue`` | ``block``).

``tests/real_clients/test_claude_code_plugin.py`` runs the real ``claude plugin validate`` on the
same folder.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from forge_policy.ops import plugin

MANIFEST_KEYS = {
    "$schema": str,
    "name": str,
    "displayName": str,
    "version": str,
    "description": str,
    "author": dict,
    "homepage": str,
    "repository": str,
    "license": str,
    "keywords": list,
    "defaultEnabled": bool,
    "dependencies": list,
    "optionalDependencies": list,
    "metadata": dict,
    "engines": dict,
    "network": dict,
}
AUTHOR_KEYS = {"name", "email", "url"}
HOOKS_FILE_KEYS = {"$schema", "description", "hooks", "modules"}
#: Claude Code's hook events (the hooks reference's lifecycle table); forge-policy uses five.
EVENTS = {
    "PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied",
    "UserPromptSubmit", "Stop", "StopFailure", "SubagentStart", "SubagentStop", "SessionStart",
    "SessionEnd", "Notification", "PreCompact", "PostCompact", "Setup",
}  # fmt: skip
COMMAND_KEYS = {
    "type", "command", "args", "if", "shell", "timeout", "onFailure", "statusMessage", "once",
    "async", "asyncRewake",
}  # fmt: skip
SEMVER = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
CONTROL = re.compile(r"[\x00-\x1f\x7f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def manifest_problems(document: Any) -> list[str]:
    """What in ``document`` the manifest schema above refuses."""
    if not isinstance(document, dict):
        return ["manifest must be an object"]
    problems = [f"{k}: unknown key" for k in document if k not in MANIFEST_KEYS]
    problems += [
        f"{k}: expected {t.__name__}"
        for k, t in MANIFEST_KEYS.items()
        if k in document and not isinstance(document[k], t)
    ]
    name = document.get("name")
    if not isinstance(name, str) or not name or " " in name or CONTROL.search(name):
        problems.append(f"name: {name!r} is not a plugin name")
    elif not re.fullmatch(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*", name):
        problems.append(f"name: {name!r} is not kebab-case")
    if "version" in document and not SEMVER.match(str(document["version"])):
        problems.append(f"version: {document['version']!r} is not a semantic version")
    author = document.get("author")
    if isinstance(author, dict):
        problems += [f"author.{k}: unknown key" for k in author if k not in AUTHOR_KEYS]
        if not isinstance(author.get("name"), str) or not author["name"]:
            problems.append("author.name: required, not empty")
    homepage = document.get("homepage")
    if homepage is not None and not urlparse(str(homepage)).scheme:
        problems.append("homepage: not a URL")
    if not all(isinstance(k, str) for k in document.get("keywords", [])):
        problems.append("keywords: expected strings")
    return problems


def hooks_problems(document: Any) -> list[str]:
    """What in ``document`` the hooks file schema above refuses."""
    if not isinstance(document, dict):
        return ["hooks.json must be an object"]
    problems = [f"{k}: unknown key" for k in document if k not in HOOKS_FILE_KEYS]
    if "description" in document and not isinstance(document["description"], str):
        problems.append("description: expected a string")
    hooks = document.get("hooks")
    if not isinstance(hooks, dict):
        return [*problems, "hooks: must be an object mapping event names to matcher arrays"]
    for event, groups in hooks.items():
        if event not in EVENTS:
            problems.append(f"hooks.{event}: unknown hook event")
        if not isinstance(groups, list):
            problems.append(f"hooks.{event}: must be an array of matchers")
            continue
        for i, group in enumerate(groups):
            where = f"hooks.{event}[{i}]"
            if not isinstance(group, dict) or set(group) - {"matcher", "hooks"}:
                problems.append(f"{where}: a matcher group has matcher? and hooks only")
                continue
            if "matcher" in group and not isinstance(group["matcher"], str):
                problems.append(f"{where}.matcher: expected a string")
            for j, handler in enumerate(group.get("hooks") or [None]):
                problems += [f"{where}.hooks[{j}]: {p}" for p in _handler_problems(handler)]
    return problems


def _handler_problems(handler: Any) -> list[str]:
    if not isinstance(handler, dict) or handler.get("type") != "command":
        return ["expected a command hook"]
    problems = [f"{k}: unknown key" for k in handler if k not in COMMAND_KEYS]
    if not isinstance(handler.get("command"), str) or not handler["command"]:
        problems.append("command: required")
    timeout = handler.get("timeout", 1)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        problems.append("timeout: expected positive seconds")
    if handler.get("onFailure", "continue") not in ("continue", "block"):
        problems.append("onFailure: continue or block")
    return problems


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("plugin") / "forge-policy"
    plugin.write(target)
    return target


def test_the_manifest_has_the_documented_shape(folder: Path) -> None:
    document = json.loads((folder / ".claude-plugin" / "plugin.json").read_text("utf-8"))
    assert manifest_problems(document) == []
    assert document["name"] == "forge-policy"
    from forge_policy import __version__

    assert document["version"] == __version__
    assert document["description"] and document["author"]["name"]


def test_the_hooks_file_has_the_documented_shape(folder: Path) -> None:
    document = json.loads((folder / "hooks" / "hooks.json").read_text("utf-8"))
    assert hooks_problems(document) == []
    assert isinstance(document["description"], str)


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"name": "forge policy"}, "is not a plugin name"),
        ({"name": ""}, "is not a plugin name"),
        ({"name": "Forge_Policy"}, "not kebab-case"),
        ({"name": "x", "author": "someone"}, "author: expected dict"),
        ({"name": "x", "author": {"name": ""}}, "author.name"),
        ({"name": "x", "homepage": "example.org"}, "homepage: not a URL"),
        ({"name": "x", "version": "one"}, "not a semantic version"),
        ({"name": "x", "hooks-file": "./h.json"}, "unknown key"),
    ],
)
def test_the_manifest_check_refuses_what_the_schema_refuses(
    document: dict[str, Any], problem: str
) -> None:
    assert any(problem in p for p in manifest_problems(document)), manifest_problems(document)


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"hooks": []}, "must be an object"),
        ({"hooks": {"BeforeTool": []}}, "unknown hook event"),
        ({"hooks": {"Stop": {"hooks": []}}}, "must be an array of matchers"),
        ({"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}, "command: required"),
        (
            {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": 0}]}]}},
            "timeout",
        ),
        (
            {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "onFailure": 1}]}]}},
            "onFailure",
        ),
        ({"hooks": {}, "version": 1}, "version: unknown key"),
    ],
)
def test_the_hooks_check_refuses_what_the_schema_refuses(
    document: dict[str, Any], problem: str
) -> None:
    assert any(problem in p for p in hooks_problems(document)), hooks_problems(document)
