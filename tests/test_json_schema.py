"""The behavior JSON Schema (issue 15): valid for draft-07, accepts every built-in behavior and
dotforge's files, rejects what the loader rejects, names the engine's vocabularies, and is
what ``forge-policy schema`` prints and ``init --copy-catalog`` points behavior files at."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from forge_policy.catalog import schema as doc_schema
from forge_policy.catalog.behavior import ACTIONS, CATEGORIES, PROFILES
from forge_policy.catalog.dsl import OPERATORS
from forge_policy.catalog.json_schema import SCHEMA_FILE, schema
from forge_policy.catalog.loader import BUILTIN_DIR
from forge_policy.catalog.structuring import validate_behavior
from forge_policy.catalog.yaml_io import read_yaml
from forge_policy.events import EVENTS
from forge_policy.levels import LEVEL_NAMES
from forge_policy.templates import TEMPLATE_LIMITS
from tests.cli_support import Project

jsonschema = pytest.importorskip("jsonschema")

BUILTIN_FILES = sorted(BUILTIN_DIR.glob("*/behavior.yaml"))


def _validator() -> Any:
    return jsonschema.Draft7Validator(schema())


def _load(path: Path) -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def test_the_schema_is_a_valid_draft_07_schema() -> None:
    jsonschema.Draft7Validator.check_schema(schema())


@pytest.mark.parametrize("path", BUILTIN_FILES, ids=lambda p: p.parent.name)
def test_every_builtin_behavior_validates(path: Path) -> None:
    errors = [e.message for e in _validator().iter_errors(_load(path))]
    assert errors == []


def test_dotforge_files_validate(dotforge_dir: Path) -> None:
    files = sorted(dotforge_dir.glob("*/behavior.yaml"))
    assert files
    for path in files:
        errors = [e.message for e in _validator().iter_errors(_load(path))]
        assert errors == [], path


def _document() -> dict[str, Any]:
    data: dict[str, Any] = _load(BUILTIN_DIR / "verify-before-done" / "behavior.yaml")
    return data


def _set(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(data)
    node = out
    for step in path[:-1]:
        node = node[step]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


_DELETE = object()
TRIGGER = ("policy", "triggers", 1)
CONDITION = (*TRIGGER, "conditions", 0)

#: documents the loader refuses, and so must the schema: (why, path, value)
INVALID = [
    ("no id", ("id",), _DELETE),
    ("an id with capitals", ("id",), "Verify"),
    ("schema_version 2", ("schema_version",), "2"),
    ("a reserved scope", ("scope",), "project"),
    ("an unknown category", ("category",), "misc"),
    ("no triggers", ("policy", "triggers"), []),
    ("an unknown event", (*TRIGGER, "event"), "PreToolUs"),
    ("a tool event without matcher", (*TRIGGER, "matcher"), _DELETE),
    ("an unknown action", (*TRIGGER, "action"), "deny"),
    ("check_flag without on_absent", (*TRIGGER, "on_absent"), _DELETE),
    ("an unknown operator", (*CONDITION, "operator"), "matches"),
    ("in with a string", (*CONDITION, "operator"), "in"),
    ("gt on a word", CONDITION, {"field": "x", "operator": "gt", "value": "many"}),
    ("a regex that is not a string", (*CONDITION, "value"), ["a"]),
    ("a near miss of conditions", (*TRIGGER, "condtions"), []),
    ("an unknown level", ("policy", "enforcement", "default_level"), "block"),
    ("escalation after 0", ("policy", "enforcement", "escalation", 0, "after"), 0),
    ("no hint", ("policy", "recovery", "hint"), _DELETE),
    ("a nudge over 120 characters", ("rendering", "nudge_template"), "x" * 121),
    ("an unknown profile", ("applies_to", "profiles"), ["everyone"]),
    ("a test without events", ("tests", 0, "events"), []),
    ("an unknown outcome", ("tests", 0, "events", 0, "expect"), "deny"),
    ("a test event with a session", ("tests", 0, "events", 0, "session_id"), "s1"),
    ("a test file above the project", ("tests", 0, "files"), {"../x": "y"}),
]


@pytest.mark.parametrize(("why", "path", "value"), INVALID, ids=[i[0] for i in INVALID])
def test_what_the_loader_refuses_the_schema_refuses(why: str, path: Any, value: Any) -> None:
    document = _set(_document(), path, value)
    spec, issues = validate_behavior(document, "x.yaml")
    assert spec is None and issues, f"the loader accepts {why}"
    assert list(_validator().iter_errors(document)), f"the schema accepts {why}"


def test_the_schema_is_not_a_schema_that_accepts_anything() -> None:
    validator = _validator()
    assert list(validator.iter_errors({}))
    assert list(validator.iter_errors([]))
    assert not list(validator.iter_errors(_document()))


def _enum(node: dict[str, Any]) -> list[str]:
    values: list[str] = node["enum"]
    return values


def test_the_vocabularies_are_the_engines() -> None:
    s = schema()
    trigger = s["definitions"]["trigger"]["properties"]
    assert _enum(trigger["action"]) == list(ACTIONS)
    assert set(_enum(trigger["event"])) == set(EVENTS)
    assert _enum(s["definitions"]["condition"]["properties"]["operator"]) == list(OPERATORS)
    assert _enum(s["definitions"]["step"]["properties"]["level"]) == list(LEVEL_NAMES)
    enforcement = s["properties"]["policy"]["properties"]["enforcement"]["properties"]
    assert _enum(enforcement["default_level"]) == list(LEVEL_NAMES)
    assert _enum(s["properties"]["category"]) == list(CATEGORIES)
    assert s["properties"]["applies_to"]["properties"]["profiles"]["items"]["enum"] == list(
        PROFILES
    )
    expect = s["definitions"]["test_event"]["properties"]["expect"]
    assert _enum(expect) == list(doc_schema.OUTCOMES)
    rendering = s["properties"]["rendering"]["properties"]
    assert {k: v["maxLength"] for k, v in rendering.items()} == TEMPLATE_LIMITS


def _names(cls: type) -> set[str]:
    return {a.name for a in attrs.fields(cls)}


def test_the_keys_are_the_documents_fields() -> None:
    """No drift: every key of the schema's objects is a field of the attrs class the loader
    structures it into, and every field is in the schema."""
    s = schema()
    policy = s["properties"]["policy"]["properties"]
    pairs = [
        (s, doc_schema.BehaviorDoc),
        (s["properties"]["policy"], doc_schema.PolicyDoc),
        (policy["enforcement"], doc_schema.EnforcementDoc),
        (policy["recovery"], doc_schema.RecoveryDoc),
        (s["properties"]["rendering"], doc_schema.RenderingDoc),
        (s["properties"]["applies_to"], doc_schema.AppliesToDoc),
        (s["definitions"]["trigger"], doc_schema.TriggerDoc),
        (s["definitions"]["condition"], doc_schema.ConditionDoc),
        (s["definitions"]["step"], doc_schema.StepDoc),
        (s["definitions"]["test"], doc_schema.BehaviorTestDoc),
    ]
    for node, cls in pairs:
        assert set(node["properties"]) == _names(cls), cls.__name__


def test_forge_policy_schema_prints_the_shipped_file(tmp_path: Path) -> None:
    out = Project(tmp_path).run("schema").stdout
    assert out == Path(SCHEMA_FILE).read_text(encoding="utf-8")
    assert json.loads(out)["title"].startswith("forge_policy behavior")


def test_copy_catalog_points_every_behavior_file_at_a_copy_of_the_schema(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.run("init", "--copy-catalog", "--no-worker")
    catalog = project.root / "behaviors"
    copied = catalog / "behavior.schema.json"
    assert json.loads(copied.read_text(encoding="utf-8")) == schema()
    files = sorted(catalog.glob("*/behavior.yaml"))
    assert len(files) == len(BUILTIN_FILES)
    for path in files:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first == "# yaml-language-server: $schema=../behavior.schema.json"
        target = (path.parent / first.split("=", 1)[1]).resolve()
        assert target == copied.resolve()
        _, issues = read_yaml(path, str(path))
        assert issues == []
        assert not list(_validator().iter_errors(_load(path)))
    project.run("validate", str(catalog))
