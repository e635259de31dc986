"""Issue 15: ``validate`` warns about what loads but cannot do what its author meant, and
``--strict`` makes those warnings errors. Each case is a one-line change of a working rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

import forge_policy as fp
from forge_policy.catalog.lints import lint_behavior_file, lint_catalog
from forge_policy.catalog.loader import BUILTIN_DIR
from forge_policy.testing.strategies import behavior_documents
from tests.cli_support import SOFT_RULE, Project, soft_catalog, tool_event


def lints(root: Path, profile: str = "standard") -> list[str]:
    return [str(issue) for issue in lint_catalog(root, profile=profile)]


def changed(tmp_path: Path, old: str, new: str) -> Path:
    """The one-behavior ``no-rm`` catalog with ``old`` replaced by ``new`` in its file."""
    root = soft_catalog(tmp_path / "catalog")
    assert old in SOFT_RULE
    (root / "no-rm" / "behavior.yaml").write_text(SOFT_RULE.replace(old, new, 1))
    fp.load_catalog(root)  # it still loads: these are warnings, not errors
    return root


def test_the_builtin_catalog_is_lint_clean(tmp_path: Path) -> None:
    for profile in ("standard", "strict"):
        assert lints(BUILTIN_DIR, profile) == []
    assert lints(soft_catalog(tmp_path / "c")) == []
    result = Project(tmp_path).run("validate", "--strict", str(BUILTIN_DIR))
    assert result.stdout.startswith(f"ok: {BUILTIN_DIR}: 15 behaviors")


WHERE = "catalog/no-rm/behavior.yaml"


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "scope: session\n",
            "scope: session\ncolour: red\n",
            "7:9: colour: unknown key 'colour' is ignored",
        ),
        (
            "field: command",
            "field: comand",
            "12:18: policy.triggers[0].conditions[0].field: always empty: no Bash at PreToolUse "
            "event has field 'comand'; did you mean 'command'?",
        ),
        (
            "field: command",
            "field: tool_input.comand",
            "always empty: no Bash at PreToolUse event has tool_input.comand; did you mean "
            "'command'?",
        ),
        (
            "field: command",
            "field: facts.shel_commands",
            "12:18: policy.triggers[0].conditions[0].field: always empty: no built-in fact "
            "provider 'shel_commands' (unless your embedding registers one); "
            "did you mean 'shell_commands'?",
        ),
        (
            "field: command",
            "field: session.flags.searched",
            "always empty: no set_flag trigger sets flag 'searched'",
        ),
        (
            "matcher: Bash",
            "matcher: bash",
            "10:16: policy.triggers[0].matcher: matcher 'bash' names no tool (matchers are "
            "case-sensitive); did you mean 'Bash'?",
        ),
        (
            "policy:\n",
            "applies_to:\n  tools: [Write]\npolicy:\n",
            "policy.triggers[0]: it can never fire: its matcher names none of applies_to.tools "
            "(Write)",
        ),
        (
            "      conditions:\n",
            "      action: check_flag\n      flag: seen\n      on_present: consume\n"
            "      on_absent: skip\n      conditions:\n",
            "policy.triggers[0]: it can never fire: no set_flag trigger sets flag 'seen'",
        ),
        (
            "    default_level: soft_block\n",
            "    default_level: warning\n",
            "",  # a warning-only rule without block texts is fine
        ),
        (
            "    hint: move files to a trash folder instead\n",
            "    hint: move files to a trash folder instead\n"
            'rendering:\n  block_reason: "{behavior_name}: {countr} times"\n',
            "rendering.block_reason: template variable {countr} does not exist: it is printed "
            "as written; did you mean 'counter'?",
        ),
        (
            "policy:\n",
            "applies_to:\n  profiles: [strict]\npolicy:\n",
            "applies_to.profiles: enabled but inactive under profile 'standard': it applies to "
            "strict only (set FORGE_PROFILE=strict to run it)",
        ),
    ],
)
def test_each_lint(tmp_path: Path, old: str, new: str, expected: str) -> None:
    found = lints(changed(tmp_path, old, new))
    if not expected:
        assert found == []
    else:
        assert any(expected in issue for issue in found), found
        assert all(issue.startswith(f"{tmp_path / WHERE}:") for issue in found), found


def test_a_warning_only_rule_with_block_texts_says_they_never_show(tmp_path: Path) -> None:
    root = changed(tmp_path, "    default_level: soft_block\n", "    default_level: warning\n")
    text = (root / "no-rm" / "behavior.yaml").read_text()
    (root / "no-rm" / "behavior.yaml").write_text(text + 'rendering:\n  block_reason: "never"\n')
    assert lints(root) == [
        f"{root}/no-rm/behavior.yaml:20:17: rendering.block_reason: never shown: the behavior "
        "never blocks (warning at most)"
    ]


def test_unlisted_behavior_folders_and_loose_files(tmp_path: Path) -> None:
    root = soft_catalog(tmp_path / "catalog")
    (root / "other").mkdir()
    (root / "other" / "behavior.yaml").write_text(SOFT_RULE.replace("id: no-rm", "id: other"))
    (root / "stray.yaml").write_text("x: 1\n")
    assert lints(root) == [
        f"{root}/other/behavior.yaml: behavior folder 'other' has no index.yaml entry: "
        "it never runs",
        f"{root}/stray.yaml: a behavior file beside index.yaml never runs: move it to "
        "stray/behavior.yaml and list it in index.yaml",
    ]


def test_strict_makes_lints_errors_and_unknown_keys_survive_edits(tmp_path: Path) -> None:
    root = changed(tmp_path, "scope: session\n", "scope: session\ncolour: red\n")
    index = root / "index.yaml"
    index.write_text(index.read_text() + "    owner: me\n")
    project = Project(tmp_path, FORGE_BEHAVIORS_DIR=str(root))
    result = project.run("validate", "catalog")
    assert result.stdout.splitlines() == [  # paths below the working directory: relative
        "warning: catalog/index.yaml:5:12: behaviors[0].owner: unknown key 'owner' is ignored",
        "warning: catalog/no-rm/behavior.yaml:7:9: colour: unknown key 'colour' is ignored",
        "ok: catalog: 1 behaviors, 1 enabled, 2 warnings",
    ]
    strict = project.run("validate", "--strict", "catalog", check=1)
    assert strict.stdout.startswith("error: catalog/index.yaml:5:12:")
    assert strict.stderr == "forge-policy: catalog: 2 lints (--strict)\n"
    report = json.loads(project.run("validate", "--strict", "--json", "catalog", check=1).stdout)
    assert report["ok"] is False and [w["field"] for w in report["warnings"]] == [
        "behaviors[0].owner",
        "colour",
    ]
    project.run("off", "no-rm")  # a round-trip edit keeps the unknown keys
    assert "    owner: me\n" in index.read_text()
    assert "colour: red" in (root / "no-rm" / "behavior.yaml").read_text()


def test_a_near_miss_of_on_absent_fails_to_load(tmp_path: Path) -> None:
    root = soft_catalog(tmp_path / "catalog")
    rule = SOFT_RULE.replace(
        "      conditions:\n",
        "      action: check_flag\n      flag: f\n      on_present: keep\n"
        "      on_abesnt: skip\n      conditions:\n",
    )
    (root / "no-rm" / "behavior.yaml").write_text(rule)
    with pytest.raises(fp.CatalogError) as info:
        fp.load_catalog(root)
    assert [str(i).split(": ", 1)[1] for i in info.value.issues] == [
        "policy.triggers[0].on_absent: required field missing",
        "policy.triggers[0].on_abesnt: unknown key 'on_abesnt'; did you mean 'on_absent'?",
    ]


def test_on_list_and_status_say_when_the_profile_leaves_a_behavior_out(tmp_path: Path) -> None:
    """Issue 15: ``on objection-format`` reported success while it stayed inactive."""
    project = Project(tmp_path)
    result = project.run("on", "objection-format")
    assert result.stderr == (
        "forge-policy: warning: objection-format is enabled but inactive under profile "
        "'standard': it applies to strict only (set FORGE_PROFILE=strict to run it)\n"
    )
    listing = {e["id"]: e for e in project.json("list")["behaviors"]}
    assert listing["objection-format"]["inactive_under"] == "standard"
    assert listing["search-first"]["inactive_under"] is None
    row = next(
        line for line in project.run("list").stdout.splitlines() if "objection-format" in line
    )
    assert "inactive (profile standard)" in row
    described = project.run("describe", "objection-format").stdout
    assert "enabled yes, but inactive under profile standard" in described
    project.hook(tool_event("Edit", file_path="/p/a.py", old_string="a", new_string="b"))
    session = project.json("status")["sessions"][0]["behaviors"]
    assert session["objection-format"]["inactive_under"] == "standard"
    assert "inactive (profile standard)" in project.run("status", "--session", "s1").stdout
    strict = Project(tmp_path, FORGE_PROFILE="strict")
    assert strict.run("on", "objection-format").stderr == ""
    assert strict.json("list")["behaviors"][10]["inactive_under"] is None


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=behavior_documents())
def test_lints_of_any_valid_behavior_are_issues_never_a_crash(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    file = tmp_path / "behavior.yaml"
    file.write_text(json.dumps(document))  # JSON is YAML
    for profile in ("minimal", "standard"):
        found = lint_behavior_file(file, profile=profile)
        assert all(issue.file == str(file) and issue.message for issue in found)


def test_every_template_variable_the_lint_accepts_is_rendered(tmp_path: Path) -> None:
    """The lint's list of variables is the renderer's: each one is replaced in a real message."""
    from forge_policy.levels import Level
    from forge_policy.render.messages import message
    from forge_policy.templates import TEMPLATE_VARIABLES

    template = " ".join(f"{{{name}}}" for name in TEMPLATE_VARIABLES)
    root = changed(
        tmp_path,
        "    hint: move files to a trash folder instead\n",
        "    hint: move files to a trash folder instead\n"
        f'rendering:\n  warning_template: "{template}"\n',
    )
    assert lints(root) == []
    behavior = fp.load_catalog(root)["no-rm"]
    text = message(behavior, Level.WARNING, 2, fp.Event("PreToolUse", "s", tool_name="Bash"), 60)
    assert "{" not in text.splitlines()[0] and "no-rm" in text
