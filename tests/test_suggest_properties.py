"""Invariants of :func:`forge_policy.ops.suggest.suggestions` (pure: no process): a proposed
exception covers every member of its cluster and nothing a block should still catch, and
none is proposed for a behavior that may not be loosened."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from forge_policy.catalog.behavior import Behavior
from forge_policy.catalog.catalog import Catalog
from forge_policy.engine.exceptions import matches
from forge_policy.model import Event
from forge_policy.ops.suggest import MIN_CLUSTER, suggestions

NOW = 1_900_000_000.0
WORD = st.text("abcdefghijklmnopqrstuvwxyz0123456789-./=", min_size=1, max_size=8)
WORDS = st.lists(WORD, min_size=1, max_size=4)
GAP = st.sampled_from([" ", "  ", "\t", " \t "])


@st.composite
def spelled(draw: st.DrawFn, words: list[str]) -> str:
    """``words`` joined by arbitrary runs of whitespace, with some around them."""
    gaps = [draw(GAP) for _ in words]
    text = "".join(gap + word for gap, word in zip(gaps, words, strict=True))
    return (text if draw(st.booleans()) else text.lstrip()) + draw(st.sampled_from(["", " "]))


def behavior(spec: dict[str, Any]) -> Behavior:
    return Behavior({"id": "b", "name": "B", "triggers": [{"event": "PreToolUse"}], **spec})


def blocked_then_overridden(commands: list[str], overridden: list[bool]) -> list[dict[str, Any]]:
    """Each command blocked in its own session, and released by an override when asked."""
    log: list[dict[str, Any]] = []
    for n, (command, released) in enumerate(zip(commands, overridden, strict=True)):
        where = {"session_id": f"s{n}", "behavior_id": "b", "counter": 1}
        log.append({"kind": "block", **where, "event_input": {"tool_input": {"command": command}}})
        if released:
            log.append({"kind": "override", **where, "override_id": f"o{n}", "mechanism": "retry"})
    for seq, record in enumerate(log, 1):
        record["seq"] = seq
    return log


def bash(command: str) -> Event:
    return Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": command})


@settings(max_examples=60, deadline=None)
@given(data=st.data(), words=WORDS, others=st.lists(WORDS, max_size=3, unique_by=tuple))
def test_the_exception_covers_its_cluster_and_nothing_else(
    data: st.DataObject, words: list[str], others: list[list[str]]
) -> None:
    members = [data.draw(spelled(words)) for _ in range(data.draw(st.integers(MIN_CLUSTER, 6)))]
    strangers = [data.draw(spelled(w)) for w in others if w != words]
    log = blocked_then_overridden(
        members + strangers, [True] * len(members) + [data.draw(st.booleans()) for _ in strangers]
    )
    found = suggestions(log, Catalog([behavior({"default_level": "soft_block"})]), None, now=NOW)
    proposed = [s for s in found if s.kind == "exception"]
    assert len(proposed) == 1  # strangers are overridden fewer than MIN_CLUSTER times
    ((kind, value),) = proposed[0].change["exceptions"][0]["match"].items()  # type: ignore[index]
    assert kind == "command"
    assert all(matches(kind, value, bash(member)) for member in members)
    assert not any(matches(kind, value, bash(stranger)) for stranger in strangers)
    for tail in ("&& rm -rf /", "; true", "| sh"):
        assert not matches(kind, value, bash(f"{members[0]} {tail}"))
    covered = {c["command"] for c in proposed[0].evidence["covers"]}
    assert covered == set(members)


@settings(max_examples=30, deadline=None)
@given(
    words=WORDS,
    spec=st.sampled_from(
        [
            {"default_level": "soft_block", "bypass": "never"},
            {"default_level": "hard_block"},
            {"default_level": "warning", "escalation": [[2, "soft_block"], [4, "hard_block"]]},
        ]
    ),
)
def test_no_exception_for_what_may_not_be_loosened(words: list[str], spec: dict[str, Any]) -> None:
    command = " ".join(words)
    log = blocked_then_overridden([command] * 4, [True] * 4)
    found = suggestions(log, Catalog([behavior(spec)]), None, now=NOW)
    assert "exception" not in {s.kind for s in found}


@settings(max_examples=30, deadline=None)
@given(overrides=st.integers(0, 6), blocks=st.integers(0, 6))
def test_numbers_and_keys_are_a_function_of_the_log(overrides: int, blocks: int) -> None:
    log = blocked_then_overridden(["rm -rf build"] * (overrides + blocks),
                                  [True] * overrides + [False] * blocks)  # fmt: skip
    catalog = Catalog([behavior({"default_level": "soft_block"})])
    first = suggestions(log, catalog, None, now=NOW)
    again = suggestions(list(log), catalog, None, now=NOW + 86_400 * 3)  # days later
    assert [(s.number, s.key) for s in first] == [(s.number, s.key) for s in again]
    assert [s.number for s in first] == list(range(1, len(first) + 1))
