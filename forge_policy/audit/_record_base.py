"""What every audit record class shares (:mod:`forge_policy.audit.records`): the base class,
the marker of a field left out while None, and the converter to a sink's dict. Its own module so
that the record classes a hook call builds (:mod:`~forge_policy.audit.records`) and the rarer
ones (:mod:`~forge_policy.audit._more_records`, built on first use) import it without a cycle.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

_OMIT = "omit"


class _Record:
    """What every record class shares: its ``kind`` and a repr of its dict (attrs' generated
    repr would double the cost of importing this module, which a blocking hook call pays)."""

    __slots__ = ()
    kind: ClassVar[str]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({to_dict(self)!r})"


def _omitted() -> Any:
    """A field left out of the dict while it is None."""
    return attrs.field(default=None, kw_only=True, metadata={_OMIT: True})


def to_dict(record: _Record) -> dict[str, Any]:
    """The dict a sink takes: ``kind`` first, then the fields (an omitted one only when set).

    >>> from forge_policy.audit.records import BypassSwitch
    >>> to_dict(BypassSwitch(timestamp="t", behavior_id="b", scope="project", enabled=False,
    ...                      variable="forge-policy off", bypass_never=False))
    ... # doctest: +NORMALIZE_WHITESPACE
    {'kind': 'bypass', 'timestamp': 't', 'behavior_id': 'b', 'scope': 'project',
     'enabled': False, 'variable': 'forge-policy off', 'bypass_never': False}
    """
    out: dict[str, Any] = {"kind": record.kind}
    for name, omit in _layout(type(record)):
        value = getattr(record, name)
        if value is None and omit:
            continue
        out[name] = list(value) if type(value) is tuple else value
    return out


_LAYOUTS: dict[type, tuple[tuple[str, bool], ...]] = {}


def _layout(cls: type) -> tuple[tuple[str, bool], ...]:
    """``(field name, omitted while None)`` of a record class, in order; computed once."""
    layout = _LAYOUTS.get(cls)
    if layout is None:
        fields = attrs.fields(cls)
        layout = _LAYOUTS[cls] = tuple((f.name, bool(f.metadata.get(_OMIT))) for f in fields)
    return layout
