"""Reusable conformance suites for third-party runtime stores and audit sinks: subclass one in
a ``Test…`` class and provide a factory fixture (``make_store`` / ``make_sink``); see
:class:`RuntimeStoreSuite` and :class:`AuditSinkSuite` for every requirement they check.

The project's own stores and sinks run through exactly these suites.
"""

from __future__ import annotations

from forge_policy._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.testing.conformance.sinks import AuditSinkSuite
    from forge_policy.testing.conformance.stores import RuntimeStoreSuite

_EXPORTS: dict[str, str] = {
    "AuditSinkSuite": "forge_policy.testing.conformance.sinks",
    "RuntimeStoreSuite": "forge_policy.testing.conformance.stores",
}

__all__ = ["AuditSinkSuite", "RuntimeStoreSuite"]

__getattr__, __dir__ = lazy_exports(
    "forge_policy.testing.conformance", _EXPORTS, __all__, globals()
)
