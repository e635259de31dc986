"""The export of one long-lived process (worker, ``serve``) or hook call: the OpenTelemetry SDK's
providers, OTLP over HTTP/protobuf, and the :class:`~forge_policy.telemetry.recorder.Recorder`
that records into them.

Off the answer's path: spans go through a ``BatchSpanProcessor`` (a bounded queue, exported
every ``OTEL_BSP_SCHEDULE_DELAY`` ms by its own thread; a full queue drops spans, never waits)
and metrics through a ``PeriodicExportingMetricReader`` (every ``OTEL_METRIC_EXPORT_INTERVAL``
ms, its own thread). A request thread notes its decision, and records it in memory only once
its answer is written (:meth:`Exporting.answered`); a dead or slow collector costs
those threads their time, never a request's. The providers are not registered globally and not
shut down at exit by the SDK: :meth:`Exporting.close` shuts them down within a bound, in a
daemon thread, so a process stops on time whatever the collector does. (OpenTelemetry is
imported when an :class:`Exporting` is made, so the module is collected without the extra.)
"""

from __future__ import annotations

import os
import threading

from forge_policy.telemetry.recorder import Recorder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from opentelemetry.sdk.metrics.export import MetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace.export import SpanExporter

SERVICE_NAME = "forge-policy"


def resource(process: str, environ: Mapping[str, str]) -> Resource:
    """``service.name`` ``forge-policy`` unless ``OTEL_SERVICE_NAME`` or
    ``OTEL_RESOURCE_ATTRIBUTES`` names one; ``service.version``; ``forge_policy.process``
    (``worker``, ``serve``, ``hook``); and the rest of ``OTEL_RESOURCE_ATTRIBUTES``."""
    from opentelemetry.sdk.resources import Resource

    from forge_policy import __version__

    attributes: dict[str, str | int] = {
        "service.version": __version__,
        "forge_policy.process": process,
        "process.pid": os.getpid(),
    }
    named = environ.get("OTEL_SERVICE_NAME", "").strip() or "service.name=" in environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    )
    if not named:
        attributes["service.name"] = SERVICE_NAME
    return Resource.create(attributes)


class Exporting:
    """Providers exporting over OTLP/HTTP (or to ``span_exporter`` / ``metric_reader``: the
    tests' in-memory ones), and the recorder over them. ``timeout``: each export request's, in
    seconds (default ``OTEL_EXPORTER_OTLP_TIMEOUT``, 10 s)."""

    def __init__(
        self,
        process: str,
        environ: Mapping[str, str],
        *,
        span_exporter: SpanExporter | None = None,
        metric_reader: MetricReader | None = None,
        timeout: float | None = None,
    ) -> None:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        where = resource(process, environ)
        self.tracer_provider = TracerProvider(resource=where, shutdown_on_exit=False)
        exporter = span_exporter if span_exporter is not None else OTLPSpanExporter(timeout=timeout)
        self.tracer_provider.add_span_processor(BatchSpanProcessor(exporter))
        if metric_reader is None:
            metric_reader = PeriodicExportingMetricReader(OTLPMetricExporter(timeout=timeout))
        self.meter_provider = MeterProvider(
            resource=where, metric_readers=[metric_reader], shutdown_on_exit=False
        )
        self.recorder = Recorder(  # recorded once the answer is written (answered())
            tracer_provider=self.tracer_provider, meter_provider=self.meter_provider, deferred=True
        )

    def answered(self, seconds: float) -> None:
        """See :meth:`Recorder.answered`."""
        self.recorder.answered(seconds)

    def close(self, seconds: float) -> bool:
        """Export what is left and shut the providers down, waiting at most ``seconds``;
        whether it finished in time (if not, the daemon thread is abandoned at exit)."""

        def shutdown() -> None:
            self.tracer_provider.shutdown()
            self.meter_provider.shutdown(timeout_millis=seconds * 1000)

        thread = threading.Thread(target=shutdown, name="forge-policy-otel-close", daemon=True)
        thread.start()
        thread.join(seconds)
        return not thread.is_alive()
