"""docs/behaviors.md works as written: every complete behavior in it loads, follows the JSON
Schema and passes its own tests; its explain session is what ``forge-policy explain`` prints;
and it names every field, operator, action, fact and template variable there is."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

import forge_policy as fp
from forge_policy.catalog.behavior import ACTIONS
from forge_policy.catalog.dsl import OPERATORS
from forge_policy.catalog.json_schema import schema
from forge_policy.catalog.loader import load_behavior
from forge_policy.facts import builtin_facts
from forge_policy.testing.behavior_tests import run_behavior_tests
from tests.cli_support import Project
from tests.helpers import write_catalog

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "behaviors.md"
TEXT = DOC.read_text(encoding="utf-8")
BLOCKS = re.findall(r"^```(\w*)\n(.*?)^```", TEXT, flags=re.M | re.S)
BEHAVIORS = {
    re.search(r"^id: (\S+)", body, flags=re.M).group(1): body  # type: ignore[union-attr]
    for lang, body in BLOCKS
    if lang == "yaml" and body.startswith('schema_version: "1"\nid:')
}


def test_the_doc_holds_its_examples() -> None:
    assert {"no-sudo", "no-sudo-first-try", "operator-tour", "test-before-commit"} <= set(BEHAVIORS)
    assert {"read-budget", "template-tour"} <= set(BEHAVIORS)


@pytest.mark.parametrize("behavior_id", sorted(BEHAVIORS))
def test_each_example_loads_and_passes_its_tests(tmp_path: Path, behavior_id: str) -> None:
    folder = write_catalog(tmp_path / "catalog", {behavior_id: BEHAVIORS[behavior_id]})
    run = run_behavior_tests(folder)
    assert run.results, f"{behavior_id} has no tests"
    assert run.failed == 0, json.dumps(run.to_dict()["tests"], indent=1)
    (cover,) = run.coverage
    # the first try at no-sudo is the doc's example of a rule that never fires
    fired = 0 if behavior_id == "no-sudo-first-try" else len(cover.triggers)
    assert cover.triggers_fired == fired, cover.gaps()


@pytest.mark.parametrize("behavior_id", sorted(BEHAVIORS))
def test_each_example_follows_the_json_schema(behavior_id: str) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from ruamel.yaml import YAML

    document = YAML(typ="safe").load(BEHAVIORS[behavior_id])
    errors = [e.message for e in jsonschema.Draft7Validator(schema()).iter_errors(document)]
    assert errors == []


def test_every_yaml_block_parses() -> None:
    from ruamel.yaml import YAML

    for lang, body in BLOCKS:
        if lang == "yaml":
            YAML(typ="safe").load(body)


def test_the_explain_session_is_what_explain_prints(tmp_path: Path) -> None:
    (session,) = [body for lang, body in BLOCKS if lang == "console"]
    commands = [line[2:] for line in session.splitlines() if line.startswith("$ ")]
    expected = [line for line in session.splitlines() if not line.startswith("$ ")]
    echo = shlex.split(commands[0])
    assert echo[0] == "echo" and echo[2] == ">"
    (tmp_path / echo[3]).write_text(echo[1] + "\n", encoding="utf-8")
    write_catalog(tmp_path / "catalog", {"no-sudo-first-try": BEHAVIORS["no-sudo-first-try"]})
    words = shlex.split(commands[1])
    assert words[0] == "FORGE_BEHAVIORS_DIR=catalog" and words[1] == "forge-policy"
    project = Project(tmp_path, FORGE_BEHAVIORS_DIR=str(tmp_path / "catalog"))
    out = project.run(*words[2:]).stdout
    assert out.splitlines() == expected


def test_the_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (code,) = [body for lang, body in BLOCKS if lang == "python"]
    write_catalog(tmp_path / ".forge" / "behaviors", {"no-sudo": BEHAVIORS["no-sudo"]})
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    exec(compile(code, str(DOC), "exec"), namespace)
    namespace["test_our_behaviors"]()


def test_the_template_example_renders_as_documented(tmp_path: Path) -> None:
    path = tmp_path / "behavior.yaml"
    path.write_text(BEHAVIORS["template-tour"], encoding="utf-8")
    evaluator = fp.Evaluator(fp.Catalog([load_behavior(path)]))
    decision = evaluator.evaluate(
        fp.Event("PreToolUse", "s1", tool_name="Write", tool_input={"file_path": "a.py"})
    )
    shown = re.search(r"Its first nudge reads `([^`]+)`", TEXT)
    assert shown is not None
    assert decision.message == shown.group(1)


def _documented(names: Any) -> list[str]:
    return [name for name in names if f"`{name}`" not in TEXT and f"{{{name}}}" not in TEXT]


def test_every_operator_action_and_fact_is_documented() -> None:
    assert _documented(OPERATORS) == []
    assert _documented(ACTIONS) == []
    assert _documented(builtin_facts()) == []


def test_every_template_variable_is_documented() -> None:
    variables = ["behavior_id", "behavior_name", "counter", "tool_name", "level", "threshold"]
    variables += ["hint", "facts.NAME", "session.totals.NAME"]
    assert [v for v in variables if f"`{{{v}}}`" not in TEXT] == []


def _keys(node: dict[str, Any], prefix: str = "") -> list[str]:
    found = []
    for name, sub in node.get("properties", {}).items():
        found.append(name)
        found += _keys(sub, f"{prefix}{name}.")
    return found


def test_every_schema_key_is_documented() -> None:
    s = schema()
    keys = _keys(s)
    for definition in s["definitions"].values():
        keys += _keys(definition)
    missing = {
        k for k in keys if f"`{k}" not in TEXT and f"{k}:" not in TEXT and f".{k}`" not in TEXT
    }
    assert missing == set()


def test_the_readme_links_the_reference() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/behaviors.md)" in readme
