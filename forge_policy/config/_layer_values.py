"""One behavior's settings and one exception rule, as the configuration layers leave them
(:mod:`forge_policy.config.layers`, SPEC §10). Reached as
``forge_policy.config.layers.<Name>``, which imports this module on first use: a hook call in a
project that sets neither builds neither attrs class (issue 28's cold path).
"""

from __future__ import annotations

import attrs

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime
    from typing import Any


@attrs.frozen
class BehaviorSettings:
    """One behavior's settings as the layers leave them (None: the catalog's own value).

    ``escalation`` is ``((after, level), ...)``; ``locked``: the managed layer locked it.

    >>> BehaviorSettings(enabled=False).tuning is None
    True
    """

    enabled: bool | None = None
    level: str | None = None
    escalation: tuple[tuple[int, str], ...] | None = None
    tuning: str | None = None
    locked: bool = False

    def is_empty(self) -> bool:
        return self == BehaviorSettings()


@attrs.frozen
class ExceptionRule:
    """An audited, expiring allowance of one behavior for the events ``kind``/``value`` match.

    >>> import datetime
    >>> rule = ExceptionRule("risky-commands", "command", "npm  install x",
    ...                      datetime.date(2030, 1, 1), "vendored", "/p/.forge/config.yaml:7")
    >>> rule.expired(datetime.date(2030, 1, 1)), rule.expired(datetime.date(2030, 1, 2))
    (False, True)
    >>> rule.match
    {'command': 'npm  install x'}
    """

    behavior: str
    kind: str
    value: str
    until: datetime.date
    reason: str
    origin: str

    @property
    def match(self) -> dict[str, str]:
        return {self.kind: self.value}

    def expired(self, today: datetime.date) -> bool:
        return today > self.until

    def to_dict(self) -> dict[str, Any]:
        return {
            "behavior": self.behavior,
            "match": self.match,
            "until": self.until.isoformat(),
            "reason": self.reason,
            "origin": self.origin,
        }
