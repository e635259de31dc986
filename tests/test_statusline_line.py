"""The status line as a pure function (:mod:`forge_policy.reports.statusline`): what it says of
a session an evaluator decided on, and invariants of its rendering."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

import forge_policy as fp
from forge_policy.reports.statusline import FLOOR_WORDS, StatusLine, status_line
from forge_policy.stores import MemoryStore
from forge_policy.stores.base import read_only

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _decide(evaluator: fp.Evaluator, command: str, session: str = "s1") -> None:
    evaluator.evaluate(
        fp.Event("PreToolUse", session, tool_name="Bash", tool_input={"command": command})
    )


def test_highest_level_open_block_and_near_threshold() -> None:
    clock = [1_800_000_000.0]
    store = MemoryStore()
    evaluator = fp.Evaluator(fp.builtin_catalog(), store=store, clock=lambda: clock[0])
    catalog = evaluator.catalog
    assert (
        status_line(read_only(store, "s1"), catalog, "s1", floor="on")
        == "forge-policy · no events yet · floor on"
    )
    _decide(evaluator, "git push --force")
    line = status_line(
        read_only(store, "s1"), catalog, "s1", floor="degraded", now=clock[0], ttl=60.0
    )
    assert line == "forge-policy · hard_block · floor degraded"
    clock[0] += 61.0  # past the TTL: as status, no live session
    assert status_line(
        read_only(store, "s1"), catalog, "s1", floor=None, now=clock[0], ttl=60.0
    ) == ("forge-policy · no events yet")


def test_the_line_never_writes() -> None:
    store = MemoryStore()
    status_line(read_only(store, "unknown"), fp.builtin_catalog(), "unknown", floor=None)
    assert store.session_ids() == []


names = st.text("abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(
    live=st.booleans(),
    level=st.none() | st.sampled_from(["nudge", "warning", "soft_block", "ask", "hard_block"]),
    blocks=st.lists(names, max_size=4).map(tuple),
    near=st.lists(st.tuples(names, st.integers(1, 99), st.integers(2, 100)), max_size=4).map(tuple),
    floor=st.none() | st.sampled_from(FLOOR_WORDS),
)
def test_rendering_is_one_line_and_colour_only_adds_codes(
    live: bool,
    level: str | None,
    blocks: tuple[str, ...],
    near: tuple[tuple[str, int, int], ...],
    floor: str | None,
) -> None:
    line = StatusLine(live, level, blocks, near, floor)
    plain = line.render()
    assert "\n" not in plain and plain.startswith("forge-policy")
    assert ANSI.sub("", line.render(color=True)) == plain
    assert "\x1b" not in plain
    for behavior in blocks[:2]:  # at most two named per part, the rest counted
        assert behavior in plain
    if len(blocks) > 2:
        assert f"+{len(blocks) - 2}" in plain
    assert (f"floor {floor}" in plain) is (floor is not None)
