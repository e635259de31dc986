"""Catalog and schema v1: loading, validation, path-addressed errors (SPEC §5)."""

from __future__ import annotations

from pathlib import Path

import pytest

import forge_policy as fp
from forge_policy.catalog.loader import set_enabled
from tests.helpers import behavior_yaml, write_catalog

DOTFORGE_IDS = [
    "no-destructive-git",
    "search-first",
    "verify-before-done",
    "respect-todo-state",
    "plan-before-code",
    "objection-format",
]


def load_errors(path: Path) -> list[str]:
    with pytest.raises(fp.CatalogError) as caught:
        fp.load_catalog(path)
    return [str(issue) for issue in caught.value.issues]


def test_dotforge_catalog_loads_unchanged(dotforge_dir: Path) -> None:
    catalog = fp.load_catalog(dotforge_dir)
    assert catalog.ids == DOTFORGE_IDS
    # index.yaml's enabled overrides the behavior file's own (search-first is on in its file)
    assert {b.id: b.enabled for b in catalog} == {
        "no-destructive-git": True,
        "search-first": False,
        "verify-before-done": True,
        "respect-todo-state": True,
        "plan-before-code": False,
        "objection-format": False,
    }
    escalations = {b.id: [(s.after, s.level.label) for s in b.escalation] for b in catalog}
    assert escalations["search-first"] == [(1, "nudge"), (3, "warning"), (5, "soft_block")]
    assert escalations["verify-before-done"] == [(1, "nudge"), (2, "warning"), (3, "soft_block")]
    assert catalog["no-destructive-git"].default_level is fp.Level.HARD_BLOCK


def test_builtin_catalog_has_the_six_dotforge_behaviors(dotforge_dir: Path) -> None:
    builtin = fp.builtin_catalog()
    dotforge = fp.load_catalog(dotforge_dir)
    # the six keep dotforge's relative order; the seed policies are interleaved by severity
    assert [i for i in builtin.ids if i in DOTFORGE_IDS] == DOTFORGE_IDS
    for theirs in dotforge:
        ours = builtin[theirs.id]
        assert ours.default_level == theirs.default_level
        assert ours.escalation == theirs.escalation
        if theirs.id == "search-first":
            # issue 11: credit per file looked at, not dotforge's one consumable flag
            assert [t.keys_field is not None for t in ours.triggers] == [True, True]
            continue
        assert [(t.event, t.matcher, t.action, t.flag) for t in ours.triggers] == [
            (t.event, t.matcher, t.action, t.flag) for t in theirs.triggers
        ]
        assert ours.name != theirs.name or ours.hint != theirs.hint  # our own words


def test_every_error_is_reported_at_once_with_file_line_column_and_field(tmp_path: Path) -> None:
    text = behavior_yaml(
        "bad-rule",
        triggers=(
            "    - event: PreToolUse\n"
            "      matcher: Bash\n"
            "      conditions:\n"
            "        - field: command\n"
            "          operator: regex_matches\n"
            "          value: x\n"
            "    - event: PreToolUsee\n"
            "      matcher: Bash\n"
        ),
        default_level="warning",
        escalation="    escalation:\n      - after: 3\n        level: soft_block\n"
        "      - after: 3\n        level: soft_block\n",
    )
    root = write_catalog(tmp_path / "cat", {"bad-rule": text})
    file = str(root / "bad-rule" / "behavior.yaml")
    assert load_errors(root) == [
        f"{file}:13:21: policy.triggers[0].conditions[0].operator: unknown operator "
        "'regex_matches': expected one of regex_match, not_regex_match, contains, not_contains, "
        "equals, starts_with, ends_with, in, glob, exists, not_exists, gt, gte, lt, lte; "
        "did you mean 'regex_match'?",
        f"{file}:15:14: policy.triggers[1].event: unknown event 'PreToolUsee'; "
        "did you mean 'PreToolUse'?",
        f"{file}:22:16: policy.enforcement.escalation[1].after: must be greater than 3",
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            ('schema_version: "1"', 'schema_version: "2"'),
            "1:17: schema_version: unsupported schema_version '2': expected \"1\"",
        ),
        (
            ('schema_version: "1"', "schema_version: 1"),
            '1:17: schema_version: unsupported schema_version 1: expected "1"',
        ),
        (
            ("id: test-rule", "id: Test_Rule"),
            "2:5: id: invalid id 'Test_Rule': lowercase letters, digits and '-', starting with a "
            "letter and not ending with '-'",
        ),
        (
            ("scope: session", "scope: task"),
            "6:8: scope: scope 'task' is reserved: only 'session' and 'agent' are supported",
        ),
        (
            ("scope: session", "scope: project"),
            "6:8: scope: scope 'project' is reserved: only 'session' and 'agent' are supported",
        ),
        (
            ("scope: session", "scope: galaxy"),
            "6:8: scope: unknown scope 'galaxy': expected 'session' or 'agent'",
        ),
        (
            ("category: core", "category: cor"),
            "5:11: category: unknown category 'cor': expected one of core, opinionated, "
            "experimental; did you mean 'core'?",
        ),
        (
            ("default_level: warning", "default_level: block"),
            "12:20: policy.enforcement.default_level: unknown level 'block': expected one of "
            "silent, nudge, warning, soft_block, hard_block",
        ),
        (("name: Test Rule\n", ""), "1:1: name: required field missing"),
        (
            ("    hint: do the right thing\n", "    hint: ''\n"),
            "15:11: policy.recovery.hint: must not be empty",
        ),
        (
            ("      matcher: Bash\n", ""),
            "9:7: policy.triggers[0].matcher: required field missing (a tool event needs a "
            "matcher; '*' matches all)",
        ),
        (
            ("      matcher: Bash\n", "      matcher: 'Bash('\n"),
            "10:16: policy.triggers[0].matcher: invalid regex: missing ): Bash(",
        ),
        (
            ("      matcher: Bash\n", "      matcher: Bash\n      action: explode\n"),
            "11:15: policy.triggers[0].action: unknown action 'explode': expected one of "
            "evaluate, set_flag, check_flag, accumulate, reset_total",
        ),
    ],
)
def test_single_problems(tmp_path: Path, change: tuple[str, str], expected: str) -> None:
    text = behavior_yaml()
    assert change[0] in text
    file = tmp_path / "behavior.yaml"
    file.write_text(text.replace(change[0], change[1], 1), encoding="utf-8")
    assert load_errors(file) == [f"{file}:{expected}"]


@pytest.mark.parametrize(
    ("trigger", "expected"),
    [
        (
            "      action: check_flag\n      flag: f\n",
            [
                "9:7: policy.triggers[0].on_present: required field missing",
                "9:7: policy.triggers[0].on_absent: required field missing",
            ],
        ),
        ("      action: set_flag\n", ["9:7: policy.triggers[0].flag: required field missing"]),
        (
            "      action: check_flag\n      flag: f\n"
            "      on_present: eat\n      on_absent: skip\n",
            [
                "13:19: policy.triggers[0].on_present: unknown on_present value 'eat': "
                "expected one of consume, keep"
            ],
        ),
        (
            "      conditions:\n        - field: n\n"
            "          operator: gt\n          value: many\n",
            [
                "14:18: policy.triggers[0].conditions[0].value: operator 'gt' needs a number, "
                "got the string 'many'"
            ],
        ),
        (
            "      conditions:\n        - field: n\n          operator: in\n          value: x\n",
            [
                "14:18: policy.triggers[0].conditions[0].value: operator 'in' needs a list, "
                "got the string 'x'"
            ],
        ),
        (
            "      conditions:\n        - field: c\n          operator: regex_match\n"
            "          value: '(a)\\1'\n",
            [
                "14:18: policy.triggers[0].conditions[0].value: invalid regex: invalid escape "
                "sequence: \\1"
            ],
        ),
        (
            "      conditions:\n        - field: c\n          operator: equals\n",
            [
                "12:11: policy.triggers[0].conditions[0].value: required field missing (operator "
                "'equals' needs a value)"
            ],
        ),
        (
            "      logic: some\n",
            ["11:14: policy.triggers[0].logic: unknown logic 'some': expected one of all, any"],
        ),
    ],
)
def test_trigger_problems(tmp_path: Path, trigger: str, expected: list[str]) -> None:
    triggers = "    - event: PreToolUse\n      matcher: Bash\n" + trigger
    file = tmp_path / "behavior.yaml"
    file.write_text(behavior_yaml(triggers=triggers), encoding="utf-8")
    assert load_errors(file) == [f"{file}:{e}" for e in expected]


def test_template_limits(tmp_path: Path) -> None:
    extra = f"""
    rendering:
      nudge_template: "{"n" * 121}"
      warning_template: "{"w" * 500}"
      block_reason: "{"b" * 201}"
    """
    file = tmp_path / "behavior.yaml"
    file.write_text(behavior_yaml(extra=extra), encoding="utf-8")
    assert load_errors(file) == [
        f"{file}:18:19: rendering.nudge_template: at most 120 characters, got 121",
        f"{file}:20:17: rendering.block_reason: at most 200 characters, got 201",
    ]


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    file = tmp_path / "behavior.yaml"
    file.write_text('schema_version: "1"\nid: [unclosed\n', encoding="utf-8")
    [error] = load_errors(file)
    assert error.startswith(f"{file}:3:1: invalid YAML:")


def test_index_problems_and_all_or_nothing(tmp_path: Path) -> None:
    root = write_catalog(
        tmp_path / "cat",
        {"good-one": behavior_yaml("good-one"), "other-one": behavior_yaml("wrong-id")},
    )
    index = root / "index.yaml"
    index.write_text(index.read_text() + "  - id: ghost\n  - id: good-one\n")
    errors = load_errors(root)
    assert errors == [
        f"{index}:7:9: behaviors[2].id: behavior 'ghost' has no file "
        f"{root / 'ghost' / 'behavior.yaml'}",
        f"{index}:8:9: behaviors[3].id: duplicate id 'good-one' (first listed at line 3)",
        f"{root / 'other-one' / 'behavior.yaml'}: id: id 'wrong-id' does not match its index "
        "entry 'other-one' (" + str(index) + ":5)",
    ]


def test_unknown_keys_are_ignored_by_the_engine(tmp_path: Path) -> None:
    extra = """
    future_field: {nested: [1, 2]}
    x-vendor: kept
    """
    file = tmp_path / "behavior.yaml"
    file.write_text(behavior_yaml(extra=extra), encoding="utf-8")
    assert fp.load_catalog(file).ids == ["test-rule"]


def test_set_enabled_round_trip_keeps_comments_order_and_unknown_keys(tmp_path: Path) -> None:
    root = write_catalog(
        tmp_path / "cat", {"aa-rule": behavior_yaml("aa-rule"), "bb-rule": behavior_yaml("bb-rule")}
    )
    index = root / "index.yaml"
    original = (
        '# governance for this repo\nschema_version: "1"\nowner: platform-team  # unknown key\n'
        "behaviors:\n  # the important one\n  - id: aa-rule\n    enabled: true\n"
        "    note: keep me\n  - id: bb-rule\n    enabled: true\n"
    )
    index.write_text(original)
    assert set_enabled(root, "aa-rule", False) is True
    assert index.read_text() == original.replace(
        "  - id: aa-rule\n    enabled: true", "  - id: aa-rule\n    enabled: false"
    )
    assert [b.enabled for b in fp.load_catalog(root)] == [False, True]
    assert set_enabled(root, "aa-rule", False) is False
    with pytest.raises(fp.CatalogError, match="no behavior 'zz-rule' is listed"):
        set_enabled(root, "zz-rule", True)


def test_missing_catalog_folder(tmp_path: Path) -> None:
    assert load_errors(tmp_path / "nope") == [
        f"{tmp_path / 'nope'}: no such catalog folder or file"
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            ("      matcher: Bash\n", "      matcher: Bash\n      condtions: []\n"),
            "11:18: policy.triggers[0].condtions: unknown key 'condtions'; "
            "did you mean 'conditions'?",
        ),
        (
            ("    default_level: warning\n", "    default_level: warning\n    escalaton: []\n"),
            "13:16: policy.enforcement.escalaton: unknown key 'escalaton'; "
            "did you mean 'escalation'?",
        ),
    ],
)
def test_a_near_miss_of_a_known_key_fails_to_load(
    tmp_path: Path, change: tuple[str, str], expected: str
) -> None:
    # SPEC §5: a typo must never silently change what a rule does
    text = behavior_yaml()
    assert change[0] in text
    file = tmp_path / "behavior.yaml"
    file.write_text(text.replace(change[0], change[1], 1), encoding="utf-8")
    assert load_errors(file) == [f"{file}:{expected}"]


def test_cross_field_rules_are_reported_with_every_other_problem(tmp_path: Path) -> None:
    triggers = (
        "    - event: PreToolUse\n"
        "      matcher: Bash\n"
        "      action: check_flag\n"
        "      on_present: eat\n"
        "    - event: Stop\n"
        "      conditions:\n"
        "        - field: n\n"
        "          operator: gt\n"
        "          value: many\n"
    )
    text = behavior_yaml(
        triggers=triggers,
        escalation="    escalation:\n      - after: 2\n        level: nudge\n",
    ).replace("category: core", "category: cor")
    file = tmp_path / "behavior.yaml"
    file.write_text(text, encoding="utf-8")
    assert load_errors(file) == [
        f"{file}:5:11: category: unknown category 'cor': expected one of core, opinionated, "
        "experimental; did you mean 'core'?",
        f"{file}:9:7: policy.triggers[0].flag: required field missing",
        f"{file}:9:7: policy.triggers[0].on_absent: required field missing",
        f"{file}:12:19: policy.triggers[0].on_present: unknown on_present value 'eat': "
        "expected one of consume, keep",
        f"{file}:17:18: policy.triggers[1].conditions[0].value: operator 'gt' needs a number, "
        "got the string 'many'",
        f"{file}:22:16: policy.enforcement.escalation[0].level: level 'nudge' is below "
        "default_level 'warning'",
    ]


def test_wrong_shapes_name_what_was_expected(tmp_path: Path) -> None:
    extra = """
    applies_to:
      tools: Bash
      profiles: [strict, strikt, 3]
    rendering: [nudge_template]
    """
    file = tmp_path / "behavior.yaml"
    file.write_text(behavior_yaml(extra=extra), encoding="utf-8")
    assert load_errors(file) == [
        f"{file}:18:10: applies_to.tools: expected a list, got the string 'Bash'",
        f"{file}:19:22: applies_to.profiles[1]: unknown profile 'strikt': expected one of "
        "minimal, standard, strict; did you mean 'strict'?",
        f"{file}:19:30: applies_to.profiles[2]: expected a non-empty string, got the number 3",
        f"{file}:20:12: rendering: expected a mapping, got a list",
    ]


def test_index_entry_problems_are_all_reported(tmp_path: Path) -> None:
    root = write_catalog(tmp_path / "cat", {"good-one": behavior_yaml("good-one")})
    index = root / "index.yaml"
    index.write_text(
        index.read_text() + "  - 42\n  - id: good-one\n    tuning: strictest\n  - enabled: true\n"
    )
    assert load_errors(root) == [
        f"{index}:5:5: behaviors[1]: expected an id or a mapping with id and enabled",
        f"{index}:7:13: behaviors[2].tuning: unknown tuning 'strictest': expected one of "
        "strict, relaxed; did you mean 'strict'?",
        f"{index}:8:5: behaviors[3].id: required field missing",
    ]


def test_yaml_io_is_the_only_module_that_imports_ruamel() -> None:
    package = Path(fp.__file__).parent
    importers = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if any(
            line.lstrip().startswith(("import ruamel", "from ruamel"))
            for line in path.read_text(encoding="utf-8").splitlines()
        )
    )
    assert importers == ["catalog/yaml_io.py"]


@pytest.mark.parametrize("depth", [64, 300, 3000])
def test_deeply_nested_yaml_is_an_issue_not_a_crash(tmp_path: Path, depth: int) -> None:
    file = tmp_path / "behavior.yaml"
    file.write_text(behavior_yaml() + "metadata: " + "[" * depth + "]" * depth + "\n")
    assert load_errors(file) == [f"{file}: nested deeper than 64 levels: refused"]


def test_a_catalog_nested_1000_levels_deep_is_one_line_from_validate_and_list(
    tmp_path: Path,
) -> None:
    """Issue 15: a 2 KB index.yaml nested 1,000 levels deep gave a 3,000-line traceback."""
    from tests.cli_support import Project

    root = tmp_path / "catalog"
    root.mkdir()
    (root / "index.yaml").write_text('schema_version: "1"\nbehaviors: ' + "[" * 1000 + "]" * 1000)
    project = Project(tmp_path, FORGE_BEHAVIORS_DIR=str(root))
    for args in (("validate", "catalog"), ("list",)):
        result = project.run(*args, check=1)
        assert "catalog/index.yaml: nested deeper than 64 levels: refused" in result.stdout + (
            result.stderr
        )
        assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) <= 2


def test_compiled_catalogs_behaviors_and_triggers_are_frozen_attrs_classes() -> None:
    import attrs

    from forge_policy.catalog.behavior import Behavior, Trigger

    catalog = fp.builtin_catalog()
    behavior = catalog.behaviors[0]
    trigger = behavior.triggers[0]
    for instance, name in ((catalog, "root"), (behavior, "enabled"), (trigger, "action")):
        assert attrs.has(type(instance))
        assert not hasattr(instance, "__dict__")  # slots
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            setattr(instance, name, getattr(instance, name))
    again = Behavior(behavior.spec)  # the normalised spec is still the one constructor argument
    assert (again.id, again.events, again.escalation) == (
        behavior.id,
        behavior.events,
        behavior.escalation,
    )
    assert [t.describe() for t in again.triggers] == [t.describe() for t in behavior.triggers]
    assert Trigger(trigger.index, trigger.spec).describe() == trigger.describe()
    # compiled values hold closures: compared by identity and hashable, as before attrs
    assert again != behavior and {behavior: 1, again: 2}[behavior] == 1
    disabled = behavior.with_enabled(False)
    assert (disabled.enabled, behavior.enabled, disabled.id) == (False, True, behavior.id)
    assert repr(disabled) == f"<Behavior {behavior.id} {behavior.default_level.label} disabled>"


def test_a_catalog_takes_any_iterables_and_refuses_duplicate_ids() -> None:
    from forge_policy.catalog.catalog import Catalog

    builtin = fp.builtin_catalog()
    copy = Catalog(iter(builtin.behaviors), root="/c", sources=["/c/index.yaml"])
    assert (copy.behaviors, copy.sources, copy.root) == (
        builtin.behaviors,
        ("/c/index.yaml",),
        "/c",
    )
    assert copy.ids == builtin.ids and copy.get(builtin.ids[0]) is builtin.behaviors[0]
    assert (Catalog([]).ids, Catalog([]).root, Catalog([]).sources) == ([], "", ())
    with pytest.raises(ValueError, match="duplicate behavior ids"):
        Catalog([builtin.behaviors[0], builtin.behaviors[0]])
    switched = builtin.with_enabled({builtin.ids[0]: False})
    assert switched.behaviors[0].enabled is False and builtin.behaviors[0].enabled is True
    assert switched.sources == builtin.sources and switched.root == builtin.root
