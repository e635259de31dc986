"""OpenTelemetry through the other real processes: ``forge-policy serve`` exporting to a local
OTLP/HTTP receiver, the in-process hook only with ``FORGE_OTEL=hook``, and a dead or refusing
collector that changes no answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_support import Project, decision_of, soft_catalog, tool_event
from tests.serve_support import Server, free_port

pytest.importorskip(
    "opentelemetry.exporter.otlp.proto.http", reason="opentelemetry not installed (the otel extra)"
)
from otlp_receiver import Receiver

#: The exporter's batching, made short so the receiver hears within the test.
FAST = {"OTEL_BSP_SCHEDULE_DELAY": "50", "OTEL_METRIC_EXPORT_INTERVAL": "100"}


def test_serve_exports_each_decision_and_the_answer_latency(tmp_path: Path) -> None:
    with Receiver() as receiver:
        project = Project(tmp_path, FORGE_OTEL="on", OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint)
        project.env.update(FAST)
        project.run("init", "--serve", "--port", str(free_port()))
        project.set_floor()
        soft_catalog(project.root / "behaviors")
        server = Server(project, "--port", "0")
        try:
            event = tool_event("Bash", command="rm -rf build")
            status, body = server.request("POST", "/hook", json.dumps(event).encode())
            assert status == 200 and decision_of(json.loads(body)) == "deny"

            def arrived() -> bool:
                return bool(receiver.spans() and receiver.points("forge_policy.hook.duration"))

            assert receiver.wait(arrived), receiver.spans()
        finally:
            assert server.stop()[0] == 0
        ((_, attributes, resource),) = receiver.spans()
        assert resource["forge_policy.process"] == "serve"
        assert resource["service.name"] == "forge-policy"
        assert attributes["gen_ai.tool.call.id"] == event["tool_use_id"]
        assert attributes["forge_policy.outcome"] == "soft_block"
        assert attributes["forge_policy.input"] == "rm -rf build"
        ((latency, point),) = receiver.points("forge_policy.hook.duration")
        assert latency == {
            "forge_policy.outcome": "soft_block",
            "forge_policy.harness": "claude-code",
        }
        assert point.count == 1


def test_the_in_process_hook_exports_only_when_asked(tmp_path: Path) -> None:
    with Receiver() as receiver:
        project = Project(tmp_path, OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint)
        project.env.update(FAST)
        first = tool_event("Bash", command="git push --force")
        assert decision_of(project.hook(first)) == "deny"
        project.env["FORGE_OTEL"] = "on"  # the worker's and serve's switch: not this hook's
        assert decision_of(project.hook(tool_event("Bash", command="git push -f"))) == "deny"
        project.env["FORGE_OTEL"] = "hook"
        asked = tool_event("Bash", command="git push --force")
        assert decision_of(project.hook(asked)) == "deny"
        # the hook flushed before it exited: everything it exports has arrived
        spans = receiver.spans()
        assert [s[1]["gen_ai.tool.call.id"] for s in spans] == [asked["tool_use_id"]]
        assert spans[0][2]["forge_policy.process"] == "hook"
        assert spans[0][1]["forge_policy.behavior.counters"] == (3,)
        ((_, point),) = receiver.points("forge_policy.hook.duration")
        assert point.count == 1


@pytest.mark.parametrize("collector", ["dead", "refusing"])
def test_a_dead_or_refusing_collector_changes_no_answer(tmp_path: Path, collector: str) -> None:
    with Receiver(status=503) as refusing:
        endpoint = (
            refusing.endpoint if collector == "refusing" else f"http://127.0.0.1:{free_port()}"
        )
        quiet = Project(tmp_path / "quiet")
        loud = Project(tmp_path / "loud", FORGE_OTEL="hook", OTEL_EXPORTER_OTLP_ENDPOINT=endpoint)
        for project in (quiet, loud):
            soft_catalog(project.root / "behaviors")
        for command in ("rm -rf build", "ls"):  # a block and an allow
            event = tool_event("Bash", command=command)
            answers = [p.run("hook", input=json.dumps(event)) for p in (quiet, loud)]
            assert answers[0].stdout == answers[1].stdout
            assert "Traceback" not in answers[1].stderr
        assert refusing.spans() == []
