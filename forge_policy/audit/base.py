"""The audit sink interface (SPEC §4, §9): append-only records, written before state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator


@runtime_checkable
class AuditSink(Protocol):
    """Where overrides, blocks and bypasses are recorded. Records are JSON objects with a
    ``kind`` (``override``, ``block``, ``violation``, ``bypass``, ``recovery``).

    ``append_many`` must make the records durable before it returns: the evaluator acknowledges an
    override only after it. Failures are raised as :class:`~forge_policy.AuditError`.
    """

    def append_many(self, records: Iterable[dict[str, Any]]) -> None:
        """Durably append records, in order."""
        ...

    def records(self) -> Iterator[dict[str, Any]]:
        """Every record, oldest first."""
        ...

    def close(self) -> None:
        """Release the backend's resources."""
        ...
