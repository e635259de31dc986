"""OpenTelemetry end to end: real ``forge-policy hook`` client processes answered by a real warm
worker with ``FORGE_OTEL=on``, which exports with the real OTLP/HTTP exporter to a receiver this
test starts on 127.0.0.1 and that decodes the protobuf (``opentelemetry-proto``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest
from hookrun import ClientProject, stop_workers, worker_pids

pytest.importorskip(
    "opentelemetry.exporter.otlp.proto.http", reason="opentelemetry not installed (the otel extra)"
)
from otlp_receiver import Receiver

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the worker needs Linux (SO_PEERCRED, /proc)"
)

#: A GitHub token in a warned-about command: it must reach no span, metric or byte on the wire.
SECRET = "ghp_" + "aZ09" * 9


class Exported:
    def __init__(self, project: ClientProject, receiver: Receiver, calls: dict[str, Any]) -> None:
        self.project = project
        self.receiver = receiver
        self.calls = calls  # name -> the payload sent

    def span_of(self, name: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
        call_id = self.calls[name]["tool_use_id"]
        found = [s for s in self.receiver.spans() if s[1].get("gen_ai.tool.call.id") == call_id]
        assert len(found) == 1, (name, self.receiver.spans())
        return found[0]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Exported]:
    with Receiver() as receiver:
        project = ClientProject(tmp_path_factory.mktemp("otel"))
        project.env.update(
            FORGE_OTEL="on",
            OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
            OTEL_SERVICE_NAME="forge-under-test",
            OTEL_BSP_SCHEDULE_DELAY="50",
            OTEL_METRIC_EXPORT_INTERVAL="100",
        )
        try:
            project.call(project.bash("ls"))  # starts the worker (this call may be in-process)
            project.wait_worker()
            calls = {
                "hard": project.bash("echo hard-me"),
                "warn": project.bash(f"echo warn-me {SECRET}"),
                "soft": project.bash("echo soft-me"),
                "allow": project.bash("ls -la"),
            }
            calls["retry"] = {**calls["soft"], "tool_use_id": "toolu_retry"}  # the same call
            answers = {name: project.call(payload) for name, payload in calls.items()}
            assert b'"permissionDecision":"deny"' in answers["hard"].stdout
            assert b"deny" not in answers["retry"].stdout  # overridden by retry
            ids = {payload["tool_use_id"] for payload in calls.values()}

            def arrived() -> bool:
                seen = {s[1].get("gen_ai.tool.call.id") for s in receiver.spans()}
                hook = receiver.points("forge_policy.hook.duration")
                return ids <= seen and sum(p[1].count for p in hook) >= len(calls)

            assert receiver.wait(arrived), (receiver.spans(), project.log())
            yield Exported(project, receiver, calls)
        finally:
            stop_workers(project.root)
            assert worker_pids(project.root) == []


def test_the_worker_exports_a_span_per_decision_with_its_attributes(exported: Exported) -> None:
    name, attributes, resource = exported.span_of("hard")
    assert name == "forge_policy.decide Bash"
    assert resource["service.name"] == "forge-under-test"
    assert resource["forge_policy.process"] == "worker"
    assert attributes["gen_ai.conversation.id"] == exported.project.session
    assert attributes["gen_ai.tool.name"] == "Bash"
    assert attributes["forge_policy.harness"] == "claude-code"
    assert attributes["forge_policy.outcome"] == "hard_block"
    assert attributes["forge_policy.blocked"] is True
    assert attributes["forge_policy.behavior.ids"] == ("hardy",)
    assert attributes["forge_policy.behavior.counters"] == (1,)
    assert attributes["forge_policy.blocking.behavior"] == "hardy"
    assert attributes["forge_policy.input"] == "echo hard-me"
    retry = exported.span_of("retry")[1]
    assert retry["forge_policy.outcome"] == "allow"
    assert retry["forge_policy.overridden.behaviors"] == ("softy",)
    assert retry["forge_policy.overridden.by"] == ("retry",)
    assert exported.span_of("allow")[1]["forge_policy.behavior.ids"] == ()


def test_the_input_summary_is_redacted_and_no_byte_on_the_wire_holds_the_secret(
    exported: Exported,
) -> None:
    attributes = exported.span_of("warn")[1]
    assert attributes["forge_policy.outcome"] == "warning"
    assert attributes["forge_policy.input"] == "echo warn-me [REDACTED]"
    assert not any(SECRET.encode() in body for body in exported.receiver.raw)
    assert not any(SECRET[:12].encode() in body for body in exported.receiver.raw)


def test_the_worker_exports_the_decision_metrics(exported: Exported) -> None:
    receiver = exported.receiver
    decisions = {
        (p[0]["forge_policy.outcome"], p[0].get("forge_policy.behavior.id")): p[1]
        for p in receiver.points("forge_policy.decisions")
    }
    assert decisions[("hard_block", "hardy")] == 1
    assert decisions[("warning", "warner")] == 1
    assert decisions[("soft_block", "softy")] == 1
    assert decisions[("allow", None)] >= 2  # ls -la and the retry (and perhaps the first ls)
    blocks = {
        p[0]["forge_policy.behavior.id"]: p[1] for p in receiver.points("forge_policy.blocks")
    }
    assert blocks == {"hardy": 1, "softy": 1}
    overrides = receiver.points("forge_policy.overrides")
    assert overrides == [
        ({"forge_policy.behavior.id": "softy", "forge_policy.override.by": "retry"}, 1)
    ]
    hook = receiver.points("forge_policy.hook.duration")
    assert {p[0]["forge_policy.harness"] for p in hook} == {"claude-code"}
    assert sum(p[1].count for p in hook) >= 5
    assert all(0 < p[1].sum < 5 * p[1].count for p in hook)  # seconds, not milliseconds
