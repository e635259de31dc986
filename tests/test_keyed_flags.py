"""The two trigger extensions issue 11 added: keyed flags (``keys:``) and preview totals
(``preview: true``), through behavior files loaded like any other."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import behavior_yaml, write_catalog

import forge_policy as fp
from forge_policy.engine.keyed_flags import set_keys, touch
from forge_policy.model import Event

KEYED = """\
    - event: PreToolUse
      matcher: Read
      action: set_flag
      flag: seen
      keys: facts.names
    - event: PreToolUse
      matcher: Write
      action: check_flag
      flag: seen
      keys: facts.wanted
      on_present: {on_present}
      on_absent: violate
"""


def names(event: Event) -> list[str]:
    return [str(v) for v in event.tool_input.get("names", [])]


def wanted(event: Event) -> list[str]:
    return [str(v) for v in event.tool_input.get("wanted", [])]


def evaluator(tmp_path: Path, on_present: str = "keep", level: str = "warning") -> fp.Evaluator:
    text = behavior_yaml("keyed", triggers=KEYED.format(on_present=on_present), default_level=level)
    catalog = fp.load_catalog(write_catalog(tmp_path / "c", {"keyed": text}))
    registry = fp.FactRegistry.with_builtins()
    registry.register("names", names)
    registry.register("wanted", wanted)
    return fp.Evaluator(catalog, facts=registry)


def event(tool: str, **tool_input: object) -> Event:
    return Event("PreToolUse", "s1", tool_name=tool, tool_input=tool_input)


@pytest.mark.parametrize(
    ("looked", "wanted_keys", "violates"),
    [
        (["a", "b"], ["b"], False),
        (["a"], ["x", "a"], False),  # any one key is enough
        (["a"], ["b"], True),
        ([], ["a"], True),
        (["a"], [], True),  # a write no key can credit
    ],
)
def test_a_check_passes_when_any_key_is_set(
    tmp_path: Path, looked: list[str], wanted_keys: list[str], violates: bool
) -> None:
    ev = evaluator(tmp_path)
    ev.evaluate(event("Read", names=looked))
    decision = ev.evaluate(event("Write", wanted=wanted_keys))
    assert bool(decision.violations) is violates


def test_keep_holds_the_credit_and_consume_spends_the_keys(tmp_path: Path) -> None:
    kept = evaluator(tmp_path / "k", on_present="keep")
    spent = evaluator(tmp_path / "s", on_present="consume")
    for ev in (kept, spent):
        ev.evaluate(event("Read", names=["a", "b"]))
        assert not ev.evaluate(event("Write", wanted=["a"])).violations
    assert not kept.evaluate(event("Write", wanted=["a"])).violations
    assert spent.evaluate(event("Write", wanted=["a"])).violations
    assert spent.status("s1").flags == ("seen:b",)


def test_an_undetermined_key_list_sets_nothing_and_fails_closed_only_when_blocking(
    tmp_path: Path,
) -> None:
    def broken(event: Event) -> list[str]:
        raise RuntimeError("disk gone")

    for level, blocked in (("warning", False), ("soft_block", True)):
        ev = evaluator(tmp_path / level, level=level)
        ev.facts.register("wanted", broken)
        ev.evaluate(event("Read", names=["a"]))
        decision = ev.evaluate(event("Write", wanted=["a"]))
        assert (decision.blocking is not None) is blocked
        assert bool(decision.violations) is blocked
        ev.facts.register("names", broken)
        ev.evaluate(event("Read", names=["z"]))
        assert "seen:z" not in ev.status("s1").flags


def test_keys_are_bounded_least_recently_used_first() -> None:
    flags: dict[str, bool] = {}
    set_keys(flags, "f", [f"k{i}" for i in range(10)], limit=4)
    assert list(flags) == ["f:k6", "f:k7", "f:k8", "f:k9"]
    assert touch(flags, "f", "f:k9", limit=4) == []  # recent: left where it is (no state write)
    assert touch(flags, "f", "f:k6", limit=4) == [("f:k6", False), ("f:k6", True)]
    set_keys(flags, "f", ["new"], limit=4)
    assert list(flags) == ["f:k8", "f:k9", "f:k6", "f:new"]
    many: dict[str, bool] = {}
    assert len(set_keys(many, "f", [str(i) for i in range(1000)], limit=3)) == 3  # no churn
    assert list(many) == ["f:997", "f:998", "f:999"]
    other = {"plain": True, "g:x": True}
    set_keys(other, "f", ["a"], limit=1)
    assert other == {"plain": True, "g:x": True, "f:a": True}  # other flags are never evicted


PREVIEW = """\
    - event: PreToolUse
      matcher: "*"
      action: accumulate
      total: spent
      value: cost
      preview: {preview}
    - event: PreToolUse
      matcher: "*"
      conditions:
        - {{field: session.totals.spent, operator: gt, value: 10}}
"""


@pytest.mark.parametrize("preview", ["true", "false"])
def test_a_preview_total_is_seen_by_the_event_and_never_saved(tmp_path: Path, preview: str) -> None:
    text = behavior_yaml("budget", triggers=PREVIEW.format(preview=preview))
    ev = fp.Evaluator(fp.load_catalog(write_catalog(tmp_path, {"budget": text})))
    assert ev.evaluate(event("Read", cost=11)).violations  # 0 + 11 > 10 either way
    saved = ev.status("s1").totals
    assert saved == ({} if preview == "true" else {"spent": 11})


@pytest.mark.parametrize(
    ("trigger", "message"),
    [
        ("    - event: Stop\n      keys: facts.x\n", "keys is for set_flag and check_flag"),
        (
            "    - event: Stop\n      action: set_flag\n      flag: f\n      preview: true\n",
            "preview is for accumulate triggers",
        ),
        (
            "    - event: Stop\n      action: set_flag\n      flag: f\n      key: facts.x\n",
            "did you mean 'keys'",
        ),
    ],
)
def test_misplaced_extension_keys_do_not_load(tmp_path: Path, trigger: str, message: str) -> None:
    folder = write_catalog(tmp_path, {"bad-rule": behavior_yaml("bad-rule", triggers=trigger)})
    with pytest.raises(fp.CatalogError, match=message) as caught:
        fp.load_catalog(folder)
    assert "bad-rule/behavior.yaml:" in str(caught.value)
