"""Undetermined values: what a fact is when it could not be fully computed (SPEC §6).

A fact provider that fails, runs out of budget or is cut by a size cap does not yield an empty
value but an :class:`Unknown` (equal to ``""``, with the reason) or, for a list that was cut, a
:class:`Partial` (the items found, with the reason). The condition language
(:mod:`forge_policy.catalog.dsl`) reads them with three-valued logic: a blocking behavior
decides as if its condition matched (fail closed), a nudge or a warning as if it did not.

Public value types: a custom provider may return them itself. :mod:`forge_policy.facts`
re-exports them. This module imports nothing.

>>> undetermined(Partial(["ls"], "more than 10000 commands"))
'more than 10000 commands'
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["Partial", "Unknown", "undetermined"]


class Unknown(str):
    """A fact that could not be computed: equal to ``""`` (SPEC §6: the empty value), with the
    reason. Conditions on it are undetermined (see :mod:`forge_policy.catalog.dsl`).

    >>> value = Unknown("fact 'x' timed out")
    >>> value == "", value.reason, isinstance(value, str)
    (True, "fact 'x' timed out", True)
    """

    __slots__ = ("reason",)
    reason: str

    def __new__(cls, reason: str) -> Unknown:
        self = super().__new__(cls, "")
        self.reason = reason
        return self


class Partial(list):  # type: ignore[type-arg]
    """A list fact that was cut (a size cap, a depth cap, its budget): the items found so far,
    with the reason. An item found is certain; what was not listed is unknown.

    >>> value = Partial(["ls"], "more than 10000 commands")
    >>> value == ["ls"], value.reason
    (True, 'more than 10000 commands')
    """

    __slots__ = ("reason",)
    reason: str

    def __init__(self, items: Iterable[object], reason: str) -> None:
        super().__init__(items)
        self.reason = reason


def undetermined(value: object) -> str | None:
    """Why ``value`` is not fully known (an :class:`Unknown` or a :class:`Partial`), else None.

    >>> undetermined(""), undetermined(Unknown("no")), undetermined(Partial([], "cut"))
    (None, 'no', 'cut')
    """
    if isinstance(value, Unknown | Partial):
        return value.reason
    return None
