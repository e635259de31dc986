"""Property tests of SPEC §3.3, §3.4 and §3.10: escalation arithmetic and escalation validation.

``resolve``/``escalate``/``next_threshold`` are checked against brute-force oracles; the loader
must reject every invalid escalation list and accept every valid one, naming the file, the line
and the field path of each problem.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import forge_policy as fp
from forge_policy.levels import Level, Step, escalate, escalation_problems, next_threshold, resolve
from tests.strategies import (
    any_escalations,
    behavior_specs,
    escalation_problems_oracle,
    spec_to_document,
    valid_escalations,
)

levels = st.sampled_from(list(Level))


def oracle_resolve(counter: int, default: Level, steps: list[tuple[int, Level]]) -> Level:
    reached = [(after, level) for after, level in steps if after <= counter]
    return max(reached)[1] if reached else default


def as_steps(steps: list[tuple[int, Level]]) -> list[Step]:
    return [Step(after, level) for after, level in steps]


@st.composite
def default_and_valid(draw: st.DrawFn) -> tuple[Level, list[tuple[int, Level]]]:
    default = draw(levels)
    return default, draw(valid_escalations(default, max_after=12))


@st.composite
def default_and_any(draw: st.DrawFn) -> tuple[Level, list[tuple[int, Level]]]:
    default = draw(levels)
    return default, draw(any_escalations(default))


# --- levels.py against oracles ------------------------------------------------------------------


@given(default_and_valid(), st.integers(0, 15))
def test_resolve_is_the_entry_with_the_largest_after_not_above_the_counter(case, counter):
    default, steps = case
    assert resolve(counter, default, as_steps(steps)) == oracle_resolve(counter, default, steps)


@given(default_and_valid(), st.one_of(st.none(), levels), st.integers(1, 15))
def test_escalate_is_the_max_of_previous_and_resolved(case, previous, counter):
    default, steps = case
    resolved = oracle_resolve(counter, default, steps)
    expected = resolved if previous is None else max(previous, resolved)
    assert escalate(previous, counter, default, as_steps(steps)) == expected


@given(default_and_valid(), st.integers(1, 15))
def test_a_session_of_violations_only_rises_and_starts_at_default(case, violations):
    default, steps = case
    effective: Level | None = None
    seen = []
    for counter in range(1, violations + 1):
        effective = escalate(effective, counter, default, as_steps(steps))
        seen.append(effective)
    assert seen[0] >= default
    assert seen == sorted(seen)
    assert seen[-1] == max(oracle_resolve(c, default, steps) for c in range(1, violations + 1))


@given(default_and_valid(), st.integers(0, 15))
def test_next_threshold_is_the_smallest_after_above_the_counter(case, counter):
    _, steps = case
    above = [after for after, _ in steps if after > counter]
    assert next_threshold(counter, as_steps(steps)) == (min(above) if above else None)


@given(default_and_any())
def test_escalation_problems_match_the_oracle(case):
    default, steps = case
    found = {(i, field) for i, field, _ in escalation_problems(default, as_steps(steps))}
    assert found == escalation_problems_oracle(default, steps)


# --- the loader ---------------------------------------------------------------------------------

HEADER = """\
schema_version: "1"
id: escalation-probe
name: Escalation probe
description: one behavior whose escalation list is under test
category: core
scope: session
policy:
  triggers:
    - event: PreToolUse
      matcher: "*"
  enforcement:
    default_level: {default}
"""
FOOTER = """\
  recovery:
    hint: Do the right thing.
"""


Lines = dict[tuple[int, str], tuple[int, ...]]


def write_behavior(
    directory: Path, default: str, entries: list[tuple[str, str]]
) -> tuple[Path, Lines]:
    """Write a behavior file with these raw YAML ``(after, level)`` scalars; return the path
    and, per entry field, the lines an issue about it may name: its own line, or for an
    explicit null (reported as "required field missing") also the line where the entry starts.
    """
    lines = HEADER.format(default=default).splitlines()
    where: Lines = {}
    if not entries:
        lines.append("    escalation: []")
    else:
        lines.append("    escalation:")
        for i, (after, level) in enumerate(entries):
            lines.append(f"      - after: {after}")
            where[i, "after"] = start = (len(lines),)
            lines.append(f"        level: {level}")
            where[i, "level"] = (len(lines), *start) if level == "~" else (len(lines),)
    path = directory / "behavior.yaml"
    path.write_text("\n".join([*lines, *FOOTER.splitlines()]) + "\n", encoding="utf-8")
    return path, where


def check_issues(
    error: fp.CatalogError, path: Path, where: Lines, expected: set[tuple[int, str]]
) -> None:
    reported = set()
    for issue in error.issues:
        index, field = issue.field.removeprefix("policy.enforcement.escalation[").split("].")
        key = (int(index), field)
        reported.add(key)
        assert issue.field == f"policy.enforcement.escalation[{key[0]}].{key[1]}"
        assert Path(issue.file).resolve() == path.resolve()
        assert issue.line in where[key], issue
        assert issue.column >= 1
        assert f"{issue.file}:{issue.line}:{issue.column}: {issue.field}: " in str(error)
    assert reported == expected


@given(default_and_any())
def test_loader_accepts_exactly_the_valid_escalations(tmp_path_factory, case):
    default, steps = case
    path, where = write_behavior(
        tmp_path_factory.mktemp("esc"),
        default.label,
        [(str(after), level.label) for after, level in steps],
    )
    problems = escalation_problems_oracle(default, steps)
    if not problems:
        behavior = fp.load_catalog(path).behaviors[0]
        assert [(s.after, s.level) for s in behavior.escalation] == steps
        return
    with pytest.raises(fp.CatalogError) as caught:
        fp.load_catalog(path)
    check_issues(caught.value, path, where, problems)


ILL_TYPED_AFTER = ('"2"', "1.5", "true", "~", "[1]")
ILL_TYPED_LEVEL = ("blocker", "Soft_Block", "3", "~")


@st.composite
def ill_typed_entries(draw: st.DrawFn) -> tuple[list[tuple[str, str]], set[tuple[int, str]]]:
    size = draw(st.integers(1, 3))
    entries, bad = [], set()
    for i in range(size):
        after = str(draw(st.integers(-1, 6)))
        level = draw(levels).label
        if draw(st.booleans()):
            after = draw(st.sampled_from(ILL_TYPED_AFTER))
            bad.add((i, "after"))
        if draw(st.booleans()):
            level = draw(st.sampled_from(ILL_TYPED_LEVEL))
            bad.add((i, "level"))
        entries.append((after, level))
    if not bad:
        entries[0] = (ILL_TYPED_AFTER[0], entries[0][1])
        bad.add((0, "after"))
    return entries, bad


@given(levels, ill_typed_entries())
def test_loader_names_each_ill_typed_entry(tmp_path_factory, default, case):
    entries, bad = case
    path, where = write_behavior(tmp_path_factory.mktemp("esc"), default.label, entries)
    with pytest.raises(fp.CatalogError) as caught:
        fp.load_catalog(path)
    check_issues(caught.value, path, where, bad)


@given(behavior_specs(overrides=("agent", "user")))
def test_generated_behaviors_load_and_normalise_to_themselves(tmp_path_factory, spec):
    """The strategies produce valid behaviors in exactly the loader's normalised form."""
    path = tmp_path_factory.mktemp("spec") / "behavior.yaml"
    path.write_text(json.dumps(spec_to_document(spec), indent=1), encoding="utf-8")
    loaded = fp.load_catalog(path).behaviors[0].spec
    assert {**loaded, "source": ""} == {**spec, "source": ""}


@given(after=st.integers(-3, 50), level=levels, other=st.integers(-3, 50))
def test_a_step_is_a_frozen_value(after: int, level: Level, other: int) -> None:
    import attrs

    step = Step(after, level)
    assert step == Step(after=after, level=level) and hash(step) == hash(Step(after, level))
    assert (step == Step(other, level)) is (after == other)
    assert repr(step) == f"Step(after={after}, level={level.label})"
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        step.after = other  # type: ignore[misc]
    assert not hasattr(step, "__dict__")
