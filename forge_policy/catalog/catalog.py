"""An ordered set of compiled behaviors (SPEC §1, §3.5), and the layout of a catalog folder.

The catalog indexes its behaviors by event name and matcher subject (the tool name for tool
events), so an event visits only the behaviors that can fire on it, still in declaration order.
"""

from __future__ import annotations

import attrs

from forge_policy.events import MATCHER_SUBJECT, READ_FROM

#: a catalog folder holds ``index.yaml`` and one ``<id>/behavior.yaml`` per listed behavior
INDEX_FILE = "index.yaml"
BEHAVIOR_FILE = "behavior.yaml"


def catalog_folder(root: str, behaviors_dir: str | None) -> str | None:
    """The catalog folder in use for the state folder ``root``: ``behaviors_dir`` when given
    (``FORGE_BEHAVIORS_DIR``), else ``<root>/behaviors`` when it exists, else None (the
    built-in catalog). The one rule the configuration and the floor both follow (SPEC §10).

    >>> catalog_folder("/nowhere/.forge", None), catalog_folder("/p/.forge", "/p/rules")
    (None, '/p/rules')
    """
    import os

    if behaviors_dir is not None:
        return behaviors_dir
    default = os.path.join(root, "behaviors")
    return default if os.path.isdir(default) else None


TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from forge_policy.catalog.behavior import Behavior
    from forge_policy.catalog.literal_index import LiteralPlan
    from forge_policy.model import Event

#: how many (event, subject) pairs a catalog remembers the candidates of; subjects such as a
#: StopFailure's error text are open-ended, and past this the candidates are merged each time
CANDIDATE_MEMO_LIMIT = 1024


class _EventIndex:
    """The behaviors (by position) that one event name can reach: ``named[subject]`` lists
    those whose every trigger for this event names its subjects, ``catch_all`` the others.
    A plain class: an attrs class would cost every hook process its generated methods, and
    an index is never compared, hashed or shown (issue 28's cold path)."""

    __slots__ = ("catch_all", "named")

    def __init__(self) -> None:
        self.named: dict[str, list[int]] = {}
        self.catch_all: list[int] = []


def _index_by_event(behaviors: tuple[Behavior, ...]) -> dict[str, _EventIndex]:
    by_event: dict[str, _EventIndex] = {}
    for position, behavior in enumerate(behaviors):
        if not behavior.enabled:
            continue
        for event_name in sorted(behavior.events):
            index = by_event.setdefault(event_name, _EventIndex())
            names: set[str] = set()
            for trigger in behavior.triggers:
                if trigger.event != event_name:
                    continue
                if trigger.subject_names is None:  # "*", a regex, or an event without subject
                    index.catch_all.append(position)
                    break
                names |= trigger.subject_names
            else:
                for name in names:
                    index.named.setdefault(name, []).append(position)
    return by_event


def _behavior_tuple(behaviors: Iterable[Behavior]) -> tuple[Behavior, ...]:
    return tuple(behaviors)


def _source_tuple(sources: Iterable[str]) -> tuple[str, ...]:
    return tuple(sources)


@attrs.frozen(eq=False, repr=False)
class Catalog:
    """Behaviors in ``index.yaml`` declaration order, which is their evaluation order.

    A frozen attrs class: ``Catalog(behaviors, root=..., sources=...)``; the by-id index is
    built once, and two behaviors with one id are refused.

    >>> from forge_policy import builtin_catalog
    >>> "search-first" in builtin_catalog()
    True
    >>> Catalog([]).ids, Catalog([], root="/c", sources=["/c/index.yaml"]).sources
    ([], ('/c/index.yaml',))
    """

    behaviors: tuple[Behavior, ...] = attrs.field(converter=_behavior_tuple)
    root: str = attrs.field(default="", kw_only=True)
    sources: tuple[str, ...] = attrs.field(default=(), converter=_source_tuple, kw_only=True)
    _by_id: dict[str, Behavior] = attrs.field(init=False)
    _positions: dict[str, int] = attrs.field(init=False)
    _by_event: dict[str, _EventIndex] = attrs.field(init=False)
    _memo: dict[tuple[str, str], LiteralPlan] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        by_id = {b.id: b for b in self.behaviors}
        if len(by_id) != len(self.behaviors):
            from forge_policy.errors import InvalidArgument

            twice = sorted(
                {b.id for b in self.behaviors if sum(c.id == b.id for c in self.behaviors) > 1}
            )
            raise InvalidArgument(f"duplicate behavior ids in catalog: {', '.join(twice)}")
        object.__setattr__(self, "_by_id", by_id)
        object.__setattr__(self, "_positions", {b.id: i for i, b in enumerate(self.behaviors)})
        object.__setattr__(self, "_by_event", _index_by_event(self.behaviors))
        object.__setattr__(self, "_memo", {})

    def candidates(self, event: Event, also: Iterable[str] = ()) -> tuple[Behavior, ...]:
        """The enabled behaviors with a trigger that may fire on ``event`` (by its event name
        and matcher subject, then by the literals their first condition needs; see
        :mod:`forge_policy.catalog.literal_index`), plus the behaviors named in ``also``, in
        declaration order.

        A superset of what fires: ``applies_to`` and the conditions are still checked by the
        caller.

        >>> from forge_policy import Event, builtin_catalog
        >>> catalog = builtin_catalog()
        >>> edit = [b.id for b in catalog.candidates(Event("PreToolUse", "s", tool_name="Edit"))]
        >>> "search-first" in edit, "respect-todo-state" in edit
        (True, False)
        >>> catalog.candidates(Event("Stop", "s"))
        ()
        >>> [b.id for b in catalog.candidates(Event("Stop", "s"), also=["search-first"])]
        ['search-first']
        """
        name = event.event_name
        subject_key = MATCHER_SUBJECT.get(name)
        subject = event.top_level(subject_key) if subject_key is not None else ""
        subject = subject if isinstance(subject, str) else ""
        visit = self._plan(name, subject, event).visit(event)
        # an MCP call read as a built-in tool (facts.mcp.read_as): the behaviors that name
        # the tool the harness sent are candidates too
        sent = event.payload.get(READ_FROM) if subject_key == "tool_name" else None
        if isinstance(sent, str) and sent != subject:
            visit = sorted({*visit, *self._plan(name, sent, event).visit(event)})
        if also:
            extra = [self._positions[i] for i in also if i in self._positions]
            if extra:
                visit = sorted({*extra, *visit})
        if not visit:  # most events of a deny catalog: no behavior to visit
            return ()
        behaviors = self.behaviors
        return tuple([behaviors[i] for i in visit])

    def _plan(self, name: str, subject: str, event: Event) -> LiteralPlan:
        """The candidates of event ``name`` with matcher subject ``subject`` (memoised)."""
        key = (name, subject)
        plan = self._memo.get(key)
        if plan is None:
            from forge_policy.catalog.literal_index import LiteralPlan

            index = self._by_event.get(name)
            positions = sorted({*index.named.get(subject, []), *index.catch_all}) if index else []
            plan = LiteralPlan(self.behaviors, positions, event, subject)
            if len(self._memo) < CANDIDATE_MEMO_LIMIT:
                self._memo[key] = plan
        return plan

    @property
    def ids(self) -> list[str]:
        """Every behavior id, in evaluation order."""
        return [b.id for b in self.behaviors]

    def get(self, behavior_id: str) -> Behavior | None:
        """The behavior with this id, or None."""
        return self._by_id.get(behavior_id)

    def __getitem__(self, behavior_id: str) -> Behavior:
        return self._by_id[behavior_id]

    def __contains__(self, behavior_id: object) -> bool:
        return behavior_id in self._by_id

    def __iter__(self) -> Iterator[Behavior]:
        return iter(self.behaviors)

    def __len__(self) -> int:
        return len(self.behaviors)

    def enabled(self) -> list[Behavior]:
        """The behaviors that take part in evaluation."""
        return [b for b in self.behaviors if b.enabled]

    def with_enabled(self, changes: dict[str, bool]) -> Catalog:
        """A copy with some behaviors switched on or off (e.g. ``FORGE_DISABLE``)."""
        return Catalog(
            (b.with_enabled(changes[b.id]) if b.id in changes else b for b in self.behaviors),
            root=self.root,
            sources=self.sources,
        )

    def __repr__(self) -> str:
        return f"<Catalog {len(self.behaviors)} behaviors from {self.root or 'memory'}>"
