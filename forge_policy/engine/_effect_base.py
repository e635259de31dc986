"""The base class of the effects (:mod:`forge_policy.engine.effects`), in a module of their
own so that the rarer effects (:mod:`forge_policy.engine._more_effects`, defined on first use)
share them without an import cycle."""

from __future__ import annotations

import attrs


class _Effect:
    """What every effect shares: attrs' repr, written once (generating one per class is most
    of the cost of defining it, which every hook call pays)."""

    __slots__ = ()

    def __repr__(self) -> str:
        values = ", ".join(
            f"{field.name}={getattr(self, field.name)!r}"
            for field in attrs.fields(type(self))  # type: ignore[arg-type]
            if field.repr
        )
        return f"{type(self).__name__}({values})"
