"""A local OTLP/HTTP receiver for the tests and the OTel benchmark: ``POST /v1/traces`` and
``POST /v1/metrics`` on 127.0.0.1, each body decoded with ``opentelemetry-proto`` (the protobuf
the real exporter sends) and kept, raw bytes too, so a test can look for a secret in exactly
what went over the wire."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _value(any_value: Any) -> Any:
    """A protobuf ``AnyValue`` as a Python value (arrays as tuples)."""
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(v) for v in any_value.array_value.values)
    return getattr(any_value, kind) if kind else None


def attributes(key_values: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in key_values}


class Receiver:
    """The receiver; a context manager that stops it. ``status``: what it answers (a test of a
    collector that refuses sets 503)."""

    def __init__(self, status: int = 200) -> None:
        from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
            ExportMetricsServiceRequest,
        )
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        self.status = status
        self.raw: list[bytes] = []
        self.traces: list[Any] = []
        self.metric_requests: list[Any] = []
        self.changed = threading.Condition()
        decoders = {
            "/v1/traces": (ExportTraceServiceRequest, self.traces),
            "/v1/metrics": (ExportMetricsServiceRequest, self.metric_requests),
        }
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                decoder = decoders.get(self.path)
                if decoder is not None and receiver.status == 200:
                    message = decoder[0].FromString(body)
                    with receiver.changed:
                        receiver.raw.append(body)
                        decoder[1].append(message)
                        receiver.changed.notify_all()
                status = receiver.status if decoder is not None else 404
                self.send_response(status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def spans(self) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        """Every span received: ``(name, attributes, resource attributes)``."""
        found = []
        with self.changed:
            requests = list(self.traces)
        for request in requests:
            for resource_spans in request.resource_spans:
                resource = attributes(resource_spans.resource.attributes)
                for scope in resource_spans.scope_spans:
                    for span in scope.spans:
                        found.append((span.name, attributes(span.attributes), resource))
        return found

    def points(self, name: str) -> list[tuple[dict[str, Any], Any]]:
        """The data points of metric ``name`` in the latest export that has it (cumulative):
        ``(attributes, value)``, the value a sum's number or a histogram's point."""
        with self.changed:
            requests = list(self.metric_requests)
        for request in reversed(requests):
            found = []
            for resource_metrics in request.resource_metrics:
                for scope in resource_metrics.scope_metrics:
                    for metric in scope.metrics:
                        if metric.name != name:
                            continue
                        kind = metric.WhichOneof("data")
                        for point in getattr(metric, kind).data_points:
                            value = point if kind == "histogram" else point.as_int
                            found.append((attributes(point.attributes), value))
            if found:
                return found
        return []

    def wait(self, ready: Callable[[], bool], timeout: float = 15.0) -> bool:
        """Wait until ``ready()`` holds after a request arrives (or already holds)."""
        with self.changed:
            return self.changed.wait_for(ready, timeout)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> Receiver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
