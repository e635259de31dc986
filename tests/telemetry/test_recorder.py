"""The decision observer with the SDK's in-memory span exporter and metric reader: the span's
attributes and the metrics of real decisions, redaction, an observer that fails, the switch, and
that telemetry that is off imports no OpenTelemetry module."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_secrets_e2e import ROUTES

import forge_policy as fp
from forge_policy import telemetry
from forge_policy.telemetry.attributes import INPUT_LIMIT, decision_point, span_attributes

pytest.importorskip("opentelemetry.sdk", reason="opentelemetry-sdk not installed (the otel extra)")
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


class Memory:
    """An evaluator of the built-in catalog observed by a :class:`Recorder` into memory."""

    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.reader = InMemoryMetricReader()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.meters = MeterProvider(metric_readers=[self.reader])
        self.recorder = telemetry.Recorder(
            tracer_provider=self.tracer_provider, meter_provider=self.meters
        )
        self.clock = 1000.0
        self.evaluator = fp.Evaluator(
            fp.builtin_catalog(), clock=lambda: self.clock, observers=[self.recorder]
        )

    def bash(self, command: str, call: str = "t1", session: str = "s1") -> fp.Decision:
        return self.evaluator.evaluate(
            fp.Event(
                "PreToolUse",
                session,
                tool_name="Bash",
                tool_use_id=call,
                tool_input={"command": command},
            )
        )

    def attributes(self) -> list[dict[str, Any]]:
        return [dict(span.attributes or {}) for span in self.spans.get_finished_spans()]

    def points(self, name: str) -> list[tuple[dict[str, Any], Any]]:
        data = self.reader.get_metrics_data()
        found = []
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        for point in metric.data.data_points:
                            value = getattr(point, "value", point)
                            found.append((dict(point.attributes or {}), value))
        return found


def test_a_span_per_decision_with_the_decision_and_the_call() -> None:
    memory = Memory()
    decision = memory.bash("git push --force origin main", call="toolu_1")
    assert decision.outcome == "hard_block"
    (span,) = memory.spans.get_finished_spans()
    assert span.name == "forge_policy.decide Bash"
    assert span.kind.name == "INTERNAL"
    assert span.end_time is not None and span.start_time is not None
    assert span.start_time < span.end_time  # it lasts the evaluation
    assert dict(span.attributes or {}) == {
        "gen_ai.conversation.id": "s1",
        "gen_ai.agent.name": "claude-code",
        "gen_ai.tool.name": "Bash",
        "gen_ai.tool.call.id": "toolu_1",
        "forge_policy.harness": "claude-code",
        "forge_policy.event": "PreToolUse",
        "forge_policy.outcome": "hard_block",
        "forge_policy.level": "hard_block",
        "forge_policy.blocked": True,
        "forge_policy.behavior.ids": ("no-destructive-git",),
        "forge_policy.behavior.levels": ("hard_block",),
        "forge_policy.behavior.counters": (1,),
        "forge_policy.blocking.behavior": "no-destructive-git",
        "forge_policy.blocking.counter": 1,
        "forge_policy.override_allowed": False,
        "forge_policy.input": "git push --force origin main",
    }
    assert memory.bash("git push --force", call="toolu_2").blocking is not None
    assert memory.attributes()[-1]["forge_policy.behavior.counters"] == (2,)


def test_a_prompt_span_carries_no_prompt_text() -> None:
    memory = Memory()
    memory.evaluator.evaluate(fp.Event("UserPromptSubmit", "s1", prompt="my private plans"))
    (attributes,) = memory.attributes()
    assert "forge_policy.input" not in attributes and "gen_ai.tool.name" not in attributes
    assert "my private plans" not in json.dumps(attributes)
    assert memory.spans.get_finished_spans()[0].name == "forge_policy.decide UserPromptSubmit"


def test_decisions_blocks_and_violations_are_counted_by_behavior_and_outcome() -> None:
    memory = Memory()
    memory.bash("git push --force")
    memory.bash("git push --force", call="t2")
    memory.bash("ls")
    decisions = {
        (a["forge_policy.outcome"], a.get("forge_policy.behavior.id")): v
        for a, v in memory.points("forge_policy.decisions")
    }
    assert decisions == {("hard_block", "no-destructive-git"): 2, ("allow", None): 1}
    blocks = memory.points("forge_policy.blocks")
    assert [(a["forge_policy.behavior.id"], v) for a, v in blocks] == [("no-destructive-git", 2)]
    violations = memory.points("forge_policy.violations")
    assert [(a["forge_policy.level"], v) for a, v in violations] == [("hard_block", 2)]
    assert memory.points("forge_policy.overrides") == []
    assert all(
        "gen_ai.conversation.id" not in a for a, _ in memory.points("forge_policy.decisions")
    )


def test_an_override_is_counted_with_its_mechanism() -> None:
    """A decision carrying an ``override`` record (the retry path itself runs end to end in
    test_otel_export)."""
    memory = Memory()
    event = fp.Event("PreToolUse", "s1", tool_name="Bash", tool_input={"command": "x"})
    records = [{"behavior_id": "b1", "mechanism": "retry"}]
    decision = fp.Decision(event, overrides=records)
    memory.recorder(decision, 0.001)
    assert memory.points("forge_policy.overrides") == [
        ({"forge_policy.behavior.id": "b1", "forge_policy.override.by": "retry"}, 1)
    ]
    assert memory.attributes()[0]["forge_policy.overridden.by"] == ("retry",)


def test_the_hook_latency_is_recorded_for_the_decision_of_this_thread_only() -> None:
    memory = Memory()
    memory.recorder.answered(0.5)  # no decision made on this thread: nothing recorded
    assert memory.points("forge_policy.hook.duration") == []
    memory.bash("git push --force")
    memory.recorder.answered(0.003)
    memory.recorder.answered(0.004)  # the same decision is not counted twice
    ((attributes, point),) = memory.points("forge_policy.hook.duration")
    assert attributes == {
        "forge_policy.outcome": "hard_block",
        "forge_policy.harness": "claude-code",
    }
    assert (point.count, point.sum) == (1, 0.003)
    assert 0.002 in point.explicit_bounds and 0.005 in point.explicit_bounds


@settings(max_examples=30)
@given(
    route=st.sampled_from(ROUTES),
    before=st.text(st.characters(codec="ascii", exclude_characters="\x00"), max_size=30),
    field=st.sampled_from(["command", "file_path", "content"]),
)
def test_no_span_or_metric_attribute_holds_a_secret_of_the_input(
    route: tuple[str, str], before: str, field: str
) -> None:
    """Whatever key the secret is under: ``command`` and ``file_path`` are summarized as text,
    ``content`` as JSON (where escaped quotes once hid ``password="…"`` from redaction)."""
    text, secret = route
    event = fp.Event("PreToolUse", "s1", tool_name="Bash", tool_input={field: f"{before} {text}"})
    decision = fp.Decision(event)
    attributes = span_attributes(decision)
    assert len(str(attributes["forge_policy.input"])) <= INPUT_LIMIT
    everything = json.dumps([attributes, decision_point(decision)])
    assert secret not in everything and secret[:10] not in everything


def test_an_observer_that_fails_leaves_the_decision_with_a_diagnostic() -> None:
    def broken(decision: fp.Decision, seconds: float) -> None:
        raise RuntimeError("collector on fire")

    memory = Memory()
    evaluator = fp.Evaluator(fp.builtin_catalog(), observers=[broken, memory.recorder])
    event = fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "git push -f"})
    decision = evaluator.evaluate(event)
    assert decision.outcome == "hard_block" and decision.blocked
    assert decision.diagnostics[-1] == "decision observer failed (RuntimeError: collector on fire)"
    assert len(memory.attributes()) == 1  # the next observer still saw it


@pytest.mark.parametrize(
    ("environ", "mode"),
    [
        ({}, "off"),
        ({"FORGE_OTEL": "off"}, "off"),
        ({"FORGE_OTEL": " On "}, "on"),
        ({"FORGE_OTEL": "1"}, "on"),
        ({"FORGE_OTEL": "hook"}, "hook"),
        ({"FORGE_OTEL": "hook", "OTEL_SDK_DISABLED": "TRUE"}, "off"),
        ({"FORGE_OTEL": "maybe"}, "off"),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, "off"),  # opt-in only
    ],
)
def test_the_switch(environ: dict[str, str], mode: str) -> None:
    assert telemetry.mode(environ) == mode
    assert bool(telemetry.problem(environ)) == (environ.get("FORGE_OTEL") == "maybe")
    worker = telemetry.start(environ, "worker")
    assert (worker is not None) == (mode != "off")
    hook = telemetry.start(environ, "hook")
    assert (hook is not None) == (mode == "hook")
    for started in (worker, hook):
        if started is not None:
            assert started.close(2.0)


def test_telemetry_off_imports_no_opentelemetry_module() -> None:
    """``import forge_policy`` and an in-process hook call with ``FORGE_OTEL`` unset import no
    OpenTelemetry module; with ``FORGE_OTEL=on`` (the worker's switch) the hook still does not."""
    code = (
        "import io, sys, tempfile\n"
        "import forge_policy, forge_policy.telemetry\n"
        "from forge_policy.hook import main\n"
        "env = {'FORGE_ROOT': tempfile.mkdtemp(), 'FORGE_STORE': 'memory',\n"
        "       'FORGE_OTEL': sys.argv[1]}\n"
        'payload = b\'{"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": '
        '"Bash", "tool_input": {"command": "git push --force"}}\'\n'
        "out = io.StringIO()\n"
        "main(io.BytesIO(payload), out, io.StringIO(), env, [])\n"
        "assert 'deny' in out.getvalue(), out.getvalue()\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    for value in ("", "on"):
        result = subprocess.run(
            [sys.executable, "-c", code, value], capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "[]", (value, result.stdout)


def test_a_deferred_recorder_records_only_once_the_answer_is_written() -> None:
    """The worker's, serve's and the hook's recorder: evaluating only notes the decision on its
    thread; :meth:`answered` (called after the answer is written) records it and the latency."""
    memory = Memory()
    deferred = telemetry.Recorder(
        tracer_provider=memory.tracer_provider,
        meter_provider=memory.meters,
        deferred=True,
    )
    evaluator = fp.Evaluator(fp.builtin_catalog(), observers=[deferred])
    event = fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "git push -f"})
    assert evaluator.evaluate(event).blocked
    assert not memory.spans.get_finished_spans()
    assert memory.points("forge_policy.decisions") == []
    deferred.answered(0.002)
    assert [s.name for s in memory.spans.get_finished_spans()] == ["forge_policy.decide Bash"]
    assert [v for _, v in memory.points("forge_policy.decisions")] == [1]
    ((_, point),) = memory.points("forge_policy.hook.duration")
    assert point.count == 1


def test_without_the_extra_the_hook_says_so_and_decides() -> None:
    """``FORGE_OTEL=hook`` in an environment without OpenTelemetry (its modules blocked): one
    stderr line naming the extra, and the decision as ever; the worker's ``start`` raises
    :class:`~forge_policy.telemetry.TelemetryUnavailable` (the worker logs it and answers)."""
    code = (
        "import io, sys, tempfile\n"
        "sys.modules['opentelemetry'] = None\n"
        "from forge_policy import telemetry\n"
        "from forge_policy.hook import main\n"
        "try:\n"
        "    telemetry.start({'FORGE_OTEL': 'on'}, 'worker')\n"
        "except telemetry.TelemetryUnavailable as exc:\n"
        "    print('worker:', exc)\n"
        "env = {'FORGE_ROOT': tempfile.mkdtemp(), 'FORGE_STORE': 'memory', 'FORGE_OTEL': 'hook'}\n"
        'payload = b\'{"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": '
        '"Bash", "tool_input": {"command": "git push --force"}}\'\n'
        "out, err = io.StringIO(), io.StringIO()\n"
        "main(io.BytesIO(payload), out, err, env, [])\n"
        "print('deny' in out.getvalue(), err.getvalue().strip())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    worker, hook = result.stdout.splitlines()
    assert worker == (
        "worker: FORGE_OTEL=on: opentelemetry.exporter: install the otel extra: "
        "pip install 'forge-policy[otel]'"
    )
    assert hook.startswith("True forge-policy: telemetry off: ")
    assert "pip install 'forge-policy[otel]'" in hook
