"""An ordered set of compiled behaviors (SPEC §1, §3.5), and the layout of a catalog folder."""

from __future__ import annotations

import attrs

#: a catalog folder holds ``index.yaml`` and one ``<id>/behavior.yaml`` per listed behavior
INDEX_FILE = "index.yaml"
BEHAVIOR_FILE = "behavior.yaml"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from forge_policy.catalog.behavior import Behavior


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

    def __attrs_post_init__(self) -> None:
        by_id = {b.id: b for b in self.behaviors}
        if len(by_id) != len(self.behaviors):
            raise ValueError("duplicate behavior ids in catalog")
        object.__setattr__(self, "_by_id", by_id)

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
