"""The governance summary of ``forge-policy audit`` (SPEC §4 triple write, §11 ``audit``): the
types :func:`forge_policy.audit.insights.summarize` fills from the audit log.
"""

from __future__ import annotations

import attrs

# -- governance summary (forge-policy audit) ---------------------------------------------------


@attrs.frozen
class SessionTally:
    """One behavior's counts in one session, from the audit log.

    >>> SessionTally(3, 1, 0).violations
    3
    """

    violations: int
    blocks: int
    overrides: int


@attrs.frozen
class BehaviorInsight:
    """One behavior's aggregated insights (SPEC §4 triple write, §11 ``audit``).

    ``override_rate`` is overrides / blocks (None without blocks) and ``band`` its health band;
    ``mechanisms`` counts overrides per mechanism. ``installed``, ``enabled`` and ``category``
    come from the catalog and are None in a summary made without one.

    >>> BehaviorInsight().band is None
    True
    """

    violations: int = 0
    blocks: int = 0
    overrides: int = 0
    override_rate: float | None = None
    band: str | None = None
    mechanisms: dict[str, int] = attrs.field(factory=dict)
    installed: bool | None = None
    enabled: bool | None = None
    category: str | None = None


@attrs.frozen
class GovernanceTotals:
    """The totals over every behavior of a :class:`GovernanceSummary`.

    >>> GovernanceTotals(0, 0, 0).override_rate is None
    True
    """

    violations: int
    blocks: int
    overrides: int
    override_rate: float | None = None
    band: str | None = None


@attrs.frozen
class GovernanceSummary:
    """The governance summary of ``forge-policy audit`` (SPEC §11).

    ``behaviors`` per behavior id, ``sessions`` per session and behavior, ``records`` the number
    of audit records read and ``kinds`` their count per kind. ``installed`` (how many behaviors
    the catalog has) and ``enabled`` (their ids) are None in a summary made without a catalog.

    >>> s = GovernanceSummary({}, {}, GovernanceTotals(0, 0, 0), records=0)
    >>> s.kinds, s.installed
    ({}, None)
    """

    behaviors: dict[str, BehaviorInsight]
    sessions: dict[str, dict[str, SessionTally]]
    totals: GovernanceTotals
    records: int
    kinds: dict[str, int] = attrs.field(factory=dict)
    installed: int | None = None
    enabled: tuple[str, ...] | None = None
