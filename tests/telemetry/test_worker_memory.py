"""Through the warm worker's request handler, with the SDK's in-memory span exporter and metric
reader: a hook request answered by :class:`~forge_policy.worker.server.Worker` gives the span and
metrics of its decision, recorded once the answer is written."""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

import pytest

from forge_policy.config.env import Config
from forge_policy.worker import protocol
from forge_policy.worker.server import Worker

pytest.importorskip("opentelemetry.sdk", reason="opentelemetry-sdk not installed (the otel extra)")
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from forge_policy.telemetry.export import Exporting

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the worker needs Linux (SO_PEERCRED, /proc)"
)


def test_a_worker_request_gives_its_span_and_metrics(tmp_path: Path) -> None:
    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    exporting = Exporting("worker", {}, span_exporter=spans, metric_reader=reader)
    config = Config.from_env({"FORGE_ROOT": str(tmp_path / ".forge"), "FORGE_STORE": "memory"})
    worker = Worker(config, str(tmp_path), b"client-id", 60.0, exporting)
    payload = {
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git push --force"},
        "tool_use_id": "toolu_w",
    }
    request = protocol.HookRequest(
        b"client-id",
        time.monotonic() + 30,
        os.getcwdb(),
        [],
        json.dumps(payload).encode(),
        protocol.relevant(os.environb),
    )
    client, served = socket.socketpair()
    try:
        client.sendall(request.encode())
        client.shutdown(socket.SHUT_WR)
        worker.busy = 1
        worker._handle(served)  # this thread: the decision, the answer, then the recording
        status, out, _, _ = protocol.decode_answer(protocol.receive(client, 1 << 20) or b"")
    finally:
        client.close()
        worker.sock.close()
    assert status == b"A" and b'"permissionDecision":"deny"' in out
    exporting.tracer_provider.force_flush()
    (span,) = spans.get_finished_spans()
    attributes = dict(span.attributes or {})
    assert attributes["gen_ai.tool.call.id"] == "toolu_w"
    assert attributes["forge_policy.outcome"] == "hard_block"
    assert span.resource.attributes["forge_policy.process"] == "worker"
    data = reader.get_metrics_data()
    assert data is not None
    names = {m.name: m for r in data.resource_metrics for s in r.scope_metrics for m in s.metrics}
    (decided,) = names["forge_policy.decisions"].data.data_points
    assert (
        decided.value == 1
        and decided.attributes["forge_policy.behavior.id"] == "no-destructive-git"
    )
    (latency,) = names["forge_policy.hook.duration"].data.data_points
    assert latency.count == 1 and latency.attributes["forge_policy.outcome"] == "hard_block"
    assert exporting.close(2.0)
