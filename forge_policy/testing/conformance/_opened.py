"""The one piece the two suites share: a factory fixture's backends, closed when a test ends."""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


class _Closable(Protocol):
    def close(self) -> None: ...


T = TypeVar("T", bound=_Closable)


def closing_each(make: Callable[[], T]) -> Iterator[Callable[[], Any]]:
    """Yield ``make`` wrapped to remember what it opened (each object once, however often a
    factory hands the same one back); close all of it afterwards. For ``yield from`` in a
    fixture."""
    opened: list[T] = []

    def open_() -> Any:
        made = make()
        if not any(made is seen for seen in opened):
            opened.append(made)
        return made

    yield open_
    for made in opened:
        made.close()
