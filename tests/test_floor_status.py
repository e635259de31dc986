"""Which floor holds (:mod:`forge_policy.floor.status`): the project's ``floor:`` read with and
without the YAML parser alike, a plain setting read without loading ruamel, and Claude Code's
sandbox counted only when it cannot be left."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from forge_policy.catalog.yaml_io import parse_yaml
from forge_policy.config.layers import plain_document
from forge_policy.floor.status import (
    FloorConfigError,
    active_floor,
    configured_mode,
)


def _plain_floor(raw: bytes) -> str | None:
    """The floor a layer file read without the YAML parser gives (None: the parser decides)."""
    document = plain_document(raw.decode("utf-8"))
    if document is None:
        return None
    value = document.get("floor", "harness")
    return {"on": "harness", True: "harness", False: "off"}.get(value, value)


DOCUMENTS = [
    "floor: off\n",
    "floor: own\n",
    "floor: harness\n",
    "profile: minimal\nfloor: own  # the launcher\n",
    "floor: 'own'\n",
    'floor: "off"\n',
    "testing:\n  tdd_mode: strict\nfloor: off\n",
    "floor: own\r\nprofile: x\r\n",
    # not plain: the YAML parser decides
    "floor: &a own\n",
    "a: {floor: off}\n",
    "nested:\n  floor: own\n",
    "# floor: own\n",
    "floor: own\nfloor: off\n",
    "floor:own\n",
    "floor: false\n",
]
#: Rejected by the YAML parser (a tab cannot start a token): never read as plain either.
NOT_YAML = "floor:\town\n"


def yaml_mode(text: str) -> str:
    document, issues = parse_yaml(text, "config.yaml")
    assert not issues
    if not isinstance(document, dict) or "floor" not in document:
        return "harness"
    return "off" if document["floor"] is False else str(document["floor"])


@pytest.mark.parametrize("text", DOCUMENTS)
def test_the_plain_reading_agrees_with_the_yaml_parser(text: str) -> None:
    plain = _plain_floor(text.encode())
    if plain is not None:
        assert plain == yaml_mode(text)


def test_plain_settings_are_read_without_the_parser() -> None:
    assert [_plain_floor(t.encode()) for t in DOCUMENTS] == [
        "off",
        "own",
        "harness",
        "own",
        "own",
        "off",
        None,  # indented lines: the parser reads them
        "own",
        None,
        None,
        None,
        "harness",  # a comment only
        None,  # a key twice: the parser reports it
        None,
        "off",
    ]
    assert _plain_floor(NOT_YAML.encode()) is None


def test_a_plain_setting_loads_no_yaml_parser(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("profile: minimal\nfloor: own\n")
    code = (
        "import sys; from forge_policy.floor.status import configured_mode;"
        f"print(configured_mode({str(tmp_path)!r}), 'ruamel' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["own", "False"]


@pytest.mark.parametrize("text", ["floor: maybe\n", "x: 1\nfloor: [own]\n"])
def test_a_bad_setting_names_its_line(tmp_path: Path, text: str) -> None:
    (tmp_path / "config.yaml").write_text(text)
    with pytest.raises(FloorConfigError, match=r"config\.yaml:\d+: floor: expected one of"):
        configured_mode(str(tmp_path))


def test_the_active_floor(tmp_path: Path) -> None:
    project, root, home = tmp_path / "p", tmp_path / "p" / ".forge", tmp_path / "home"
    root.mkdir(parents=True)
    env = {"HOME": str(home)}
    assert active_floor("claude-code", str(project), str(root), env) == "own"
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    block = {"enabled": True, "failIfUnavailable": True}
    settings.write_text(json.dumps({"sandbox": block}))
    assert active_floor("claude-code", str(project), str(root), env) == "own"  # can be left
    local = project / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"sandbox": {"allowUnsandboxedCommands": False}}))
    assert active_floor("claude-code", str(project), str(root), env) == "harness"
    assert active_floor("gemini", str(project), str(root), env) == "own"
    (root / "config.yaml").write_text("floor: own\n")
    assert active_floor("claude-code", str(project), str(root), env) == "own"
    (root / "config.yaml").write_text("floor: off\n")
    assert active_floor("gemini", str(project), str(root), env) == "off"
