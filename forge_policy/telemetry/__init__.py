"""OpenTelemetry for forge_policy: a span per decision and the decision metrics (extra ``otel``).

- :class:`Recorder` (``opentelemetry-api`` only): a decision observer for any evaluator,
  ``Evaluator(observers=[Recorder()])``, recording through the global providers or the ones it
  is given: an embedder with their own ``TracerProvider`` gets forge_policy's spans in their
  traces (a decision made inside one of their spans is its child).
- :func:`start`: the export the warm worker and ``forge-policy serve`` run when ``FORGE_OTEL``
  says so (:mod:`forge_policy.telemetry.switch`), batched, off the answer's path
  (:mod:`forge_policy.telemetry.export`); the in-process hook only with ``FORGE_OTEL=hook``.
- What the spans and metrics say: :mod:`forge_policy.telemetry.attributes`.

Importing this package imports no OpenTelemetry module: ``import forge_policy`` and a hook with
telemetry off never do (:class:`Recorder` and :func:`start` import it on first use).
"""

from __future__ import annotations

from forge_policy._lazy import lazy_exports
from forge_policy.telemetry.switch import HOOK_FLUSH_SECONDS, STOP_FLUSH_SECONDS, mode, problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from forge_policy.telemetry.export import Exporting
    from forge_policy.telemetry.recorder import Recorder

__all__ = [
    "HOOK_FLUSH_SECONDS",
    "STOP_FLUSH_SECONDS",
    "Recorder",
    "TelemetryUnavailable",
    "mode",
    "problem",
    "start",
]

__getattr__, __dir__ = lazy_exports(
    __name__, {"Recorder": "forge_policy.telemetry.recorder"}, __all__, globals()
)

INSTALL = "install the otel extra: pip install 'forge-policy[otel]'"


class TelemetryUnavailable(RuntimeError):
    """``FORGE_OTEL`` asks for an export that cannot start (the extra is not installed)."""


def start(environ: Mapping[str, str], process: str) -> Exporting | None:
    """The export for ``process`` (``worker``, ``serve`` or ``hook``) when ``FORGE_OTEL`` asks
    for one there, else None. Raises :class:`TelemetryUnavailable` when it asks but the
    ``otel`` extra is missing: the caller says so and goes on without (a decision never waits
    for telemetry). The hook's export times out each request within
    :data:`HOOK_FLUSH_SECONDS`.

    >>> start({}, "worker") is None, start({"FORGE_OTEL": "on"}, "hook") is None
    (True, True)
    """
    wanted = mode(environ)
    if wanted == "off" or (process == "hook" and wanted != "hook"):
        return None
    from forge_policy.telemetry.export import Exporting

    timeout = HOOK_FLUSH_SECONDS if process == "hook" else None
    try:
        return Exporting(process, environ, timeout=timeout)
    except ImportError as exc:
        raise TelemetryUnavailable(f"FORGE_OTEL={wanted}: {exc.name or exc}: {INSTALL}") from None
