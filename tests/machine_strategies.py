"""Hypothesis strategies of the stateful machine (``test_stateful_invariants.py``): catalogs
shaped so that overrides meet later blocks, and the calls it sends, over the vocabulary of
:mod:`tests.strategies`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hypothesis import strategies as st

from forge_policy.levels import Level
from forge_policy.model import Event
from tests.strategies import (
    BEHAVIOR_IDS,
    MATCHERS,
    PROMPT_EVENT,
    PROMPTS,
    TOOL_EVENT,
    TOOLS,
    X_VALUES,
    behavior_specs,
)


@st.composite
def plain_triggers(draw: st.DrawFn) -> dict[str, object]:
    """An ``evaluate`` trigger on tool calls with at most one condition on ``x``."""
    condition = st.builds(
        lambda op, v: {"field": "x", "operator": op, "value": v},
        st.sampled_from(["equals", "contains"]),
        st.sampled_from(X_VALUES),
    )
    return {
        "event": TOOL_EVENT,
        "matcher": draw(st.sampled_from(sorted(MATCHERS))),
        "conditions": draw(st.lists(condition, max_size=1)),
        "logic": "all",
        "action": "evaluate",
    }


@st.composite
def catalogs(draw: st.DrawFn, min_size: int = 1, max_size: int = 4) -> list[dict[str, object]]:
    """1-4 specs with unique ids, in a random (catalog) order that is not alphabetical. Two of
    them (one time in four, or when alone, one) are enabled, unfiltered, mostly enforced and
    blocking, and start with a plain ``evaluate`` trigger on tool calls (mostly the same one),
    so that no catalog is inert and one call often violates two behaviors: an override of the
    first is withdrawn when the second blocks."""
    size = draw(st.integers(min_size, max_size))
    ids = draw(st.permutations(BEHAVIOR_IDS))[:size]
    pair = 2 if size > 1 and draw(st.sampled_from([True, True, True, False])) else 1
    actives = draw(st.lists(st.integers(0, size - 1), min_size=pair, max_size=pair, unique=True))
    blocking = (Level.SOFT_BLOCK, Level.SOFT_BLOCK, Level.SOFT_BLOCK, *Level)
    modes = ("enforce",) * 7 + ("shadow",)
    specs = [
        draw(
            behavior_specs(behavior_id, defaults=blocking, modes=modes, max_after=12)
            if i in actives
            else behavior_specs(behavior_id)
        )
        for i, behavior_id in enumerate(ids)
    ]
    shared = draw(plain_triggers())
    for index in actives:
        active = specs[index]
        active["enabled"] = True
        active["applies_to"] = {"tools": [], "agents": [], "profiles": []}
        same = draw(st.sampled_from([True, True, True, False]))
        active["triggers"][0] = dict(shared) if same else draw(plain_triggers())
    return specs


# --- events ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One event to send; ``tool_input`` keeps its key order (canonical hashing must not care)."""

    event_name: str
    session_id: str
    tool_name: str = ""
    tool_input: tuple[tuple[str, object], ...] = ()
    prompt: str = ""
    agent: str = ""
    tool_use_id: str = ""
    #: the subagent the call comes from (issue 27; "" the root thread)
    agent_id: str = ""

    @property
    def is_tool(self) -> bool:
        return self.event_name == TOOL_EVENT

    @property
    def inputs(self) -> dict[str, object]:
        return dict(self.tool_input)

    def event(self) -> Event:
        return Event(
            self.event_name,
            self.session_id,
            tool_name=self.tool_name,
            tool_input=self.inputs if self.is_tool else None,
            prompt=self.prompt,
            agent=self.agent,
            agent_id=self.agent_id,
            tool_use_id=self.tool_use_id,
        )

    def again(self, tool_use_id: str, rotate: int) -> Call:
        """The identical call with a new per-call id and the input keys in another order."""
        items = self.tool_input
        shift = rotate % len(items) if items else 0
        return replace(self, tool_use_id=tool_use_id, tool_input=items[shift:] + items[:shift])


@st.composite
def calls(draw: st.DrawFn, event: str | None = None, tools: tuple[str, ...] = TOOLS) -> Call:
    """A PreToolUse on one of ``tools`` with optional ``x``/``y``/``n`` inputs, or a
    UserPromptSubmit; mostly in session s1."""
    session_id = draw(st.sampled_from(["s1", "s1", "s2"]))
    # the root thread (of an ``--agent sub`` session, sometimes), or one of two subagents of
    # type ``sub`` (issue 27: a subagent's id has one type)
    agent_id = draw(st.sampled_from(["", "", "a1", "a2"]))
    agent = "sub" if agent_id else draw(st.sampled_from(["", "", "sub"]))
    if event is None:
        # the simplest draw (Hypothesis likes repeating it) must be a tool call
        event = PROMPT_EVENT if draw(st.integers(0, 4)) == 4 else TOOL_EVENT
    if event == PROMPT_EVENT:
        prompt = draw(st.sampled_from(PROMPTS))
        return Call(PROMPT_EVENT, session_id, prompt=prompt, agent=agent, agent_id=agent_id)
    values = {"x": st.sampled_from(X_VALUES), "y": st.integers(0, 1), "n": st.integers(0, 2)}
    keys = draw(st.lists(st.sampled_from(sorted(values)), unique=True, max_size=3))
    items = tuple((key, draw(values[key])) for key in keys)
    return Call(
        TOOL_EVENT,
        session_id,
        tool_name=draw(st.sampled_from(tools)),
        tool_input=items,
        agent=agent,
        tool_use_id=f"toolu_{draw(st.integers(0, 9))}",
        agent_id=agent_id,
    )
