"""Property: the structuring pass reports every problem of a behavior file at once, each one at
its own place (file, line, column of the broken value, and its field path), and invents none.

Any subset of independent mistakes is written into one otherwise valid file; the issues must be
exactly one per mistake, in document order.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import forge_policy as fp
from tests.helpers import behavior_yaml

#: (line of the valid file, its text, the broken text, the field path, column of the value)
MISTAKES = (
    (1, 'schema_version: "1"', 'schema_version: "2"', "schema_version", 17),
    (2, "id: test-rule", "id: Test_Rule", "id", 5),
    (3, "name: Test Rule", "name: [Test Rule]", "name", 7),
    (5, "category: core", "category: cor", "category", 11),
    (6, "scope: session", "scope: task", "scope", 8),
    (9, "    - event: PreToolUse", "    - event: PreToolUsee", "policy.triggers[0].event", 14),
    (10, "      matcher: Bash", "      matcher: 'Bash('", "policy.triggers[0].matcher", 16),
    (
        12,
        "    default_level: warning",
        "    default_level: loud",
        "policy.enforcement.default_level",
        20,
    ),
    (15, "    hint: do the right thing", "    hint: ''", "policy.recovery.hint", 11),
)
#: top-level keys appended after the valid file: (text, field path, column of the value)
APPENDED = (
    ("enabled: maybe", "enabled", 10),
    ("metadata: 3", "metadata", 11),
    ("applies_to: {profiles: [strikt]}", "applies_to.profiles[0]", 25),
    ("rendering: {block_reason: ''}", "rendering.block_reason", 27),
)


@given(
    broken=st.sets(st.sampled_from(range(len(MISTAKES)))),
    appended=st.lists(st.sampled_from(range(len(APPENDED))), unique=True),
)
def test_every_mistake_is_reported_once_at_its_own_mark(
    broken: set[int], appended: list[int]
) -> None:
    lines = behavior_yaml().splitlines()
    expected: list[tuple[int, int, str]] = []
    for index in sorted(broken):
        line, valid, wrong, field, column = MISTAKES[index]
        assert lines[line - 1] == valid
        lines[line - 1] = wrong
        expected.append((line, column, field))
    for index in appended:
        text, field, column = APPENDED[index]
        lines.append(text)
        expected.append((len(lines), column, field))
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "behavior.yaml"
        file.write_text("\n".join(lines) + "\n", encoding="utf-8")
        if not expected:
            assert fp.load_catalog(file).ids == ["test-rule"]
            return
        with pytest.raises(fp.CatalogError) as info:
            fp.load_catalog(file)
    issues = info.value.issues
    assert [(i.line, i.column, i.field) for i in issues] == sorted(expected)
    assert all(i.file == str(file) and i.message for i in issues)
