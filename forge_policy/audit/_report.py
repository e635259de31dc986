"""The report of an audit log's verification (:func:`forge_policy.audit.verify`'s result).

Its own module (issue 28): a hook call appends and checks the chain's head but never verifies
a whole log, so it does not build this attrs class; ``forge_policy.audit.verify.VerifyReport``
stays its public path.
"""

from __future__ import annotations

import attrs

from forge_policy.errors import AuditIntegrityError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@attrs.frozen(eq=False, repr=False)
class VerifyReport:
    """What ``verify()`` found: ``ok`` is true when the log is intact and complete.

    ``problems`` name the line (or row) of each finding; ``torn_tail`` says the last line was
    left incomplete by a crash (the next append repairs it, keeping every earlier record).

    >>> VerifyReport(3, [], False)
    VerifyReport(ok=True, records=3, problems=[], torn_tail=False)
    >>> VerifyReport(2, ["line 3: torn tail"], True).ok
    False
    """

    records: int
    problems: list[str]
    torn_tail: bool
    #: records spooled while the writer lock was held, not yet folded into the chain (JSONL)
    spooled: int = 0

    @property
    def ok(self) -> bool:
        """No problem found (a torn tail is a problem until it is repaired)."""
        return not self.problems and not self.torn_tail

    def __repr__(self) -> str:
        return (
            f"VerifyReport(ok={self.ok}, records={self.records}, "
            f"problems={self.problems!r}, torn_tail={self.torn_tail})"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form, for ``forge-policy audit --verify --json``."""
        return {
            "ok": self.ok,
            "records": self.records,
            "problems": list(self.problems),
            "torn_tail": self.torn_tail,
            **({"spooled": self.spooled} if self.spooled else {}),
        }

    def raise_if_broken(self) -> None:
        """Raise :class:`~forge_policy.AuditIntegrityError` listing the problems, if any.

        >>> VerifyReport(1, ["line 2: seq 3, expected 2"], False).raise_if_broken()
        Traceback (most recent call last):
        ...
        forge_policy.errors.AuditIntegrityError: audit log is broken: line 2: seq 3, expected 2
        """
        if not self.ok:
            raise AuditIntegrityError("audit log is broken: " + "; ".join(self.problems))
