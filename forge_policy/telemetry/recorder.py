"""The decision observer that turns decisions into OpenTelemetry spans and metrics.

Imports ``opentelemetry-api`` only (the ``otel`` extra): it records through whatever providers it
is given, or the global ones, so an embedder with their own ``TracerProvider`` gets spans by
passing a :class:`Recorder` to their evaluator. It never exports anything itself: that is the
SDK's processors' and readers' work (:mod:`forge_policy.telemetry.export`), in their own threads.

Instruments (attributes: :mod:`forge_policy.telemetry.attributes`):

=================================  =============  ==================================================
``forge_policy.decisions``         counter        every decision: outcome, harness, event, behavior
``forge_policy.blocks``            counter        refused calls: outcome, harness, event, behavior
``forge_policy.violations``        counter        each violation: behavior, level, shadow
``forge_policy.overrides``         counter        each overridden violation: behavior, mechanism
``forge_policy.hook.duration``     histogram (s)  request read → answer written, in the worker and
                                                  ``serve`` (and the in-process hook, when asked)
=================================  =============  ==================================================

An embedder's own providers (this module imports OpenTelemetry when a :class:`Recorder` is
made, not when it is imported: it is collected and imported without the extra)::

    from opentelemetry.sdk.trace import TracerProvider
    import forge_policy as fp
    from forge_policy.telemetry import Recorder

    provider = TracerProvider()  # with the span processors of the application
    ev = fp.Evaluator(fp.builtin_catalog(), observers=[Recorder(tracer_provider=provider)])
"""

from __future__ import annotations

import threading
import time

from forge_policy.telemetry.attributes import (
    decision_point,
    override_points,
    span_attributes,
    span_name,
    violation_points,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from opentelemetry import metrics, trace

    from forge_policy.model import Decision

#: The hook latency histogram's buckets, in seconds: a warm answer takes about a millisecond, a
#: cold one tens, a deadline 10 s.
LATENCY_BUCKETS = (
    0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0
)  # fmt: skip
SCOPE = "forge_policy"


class Recorder:
    """A decision observer (``Evaluator(observers=[Recorder()])``): one span per decision,
    lasting the evaluation, and the decision's counts. ``tracer_provider`` and
    ``meter_provider`` default to the global ones (``opentelemetry.trace.set_tracer_provider``);
    thread-safe, as the evaluator it observes.

    ``deferred``: the decision is only noted (on its thread) and recorded by :meth:`answered`,
    which the worker, ``serve`` and the hook call once the answer is written: the SDK's work
    (attribute checks, the span, the metric aggregation; tens of microseconds) happens after the
    answer, not before it."""

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
        deferred: bool = False,
    ) -> None:
        from opentelemetry import metrics, trace

        from forge_policy import __version__

        self.kind = trace.SpanKind.INTERNAL
        self.tracer = trace.get_tracer(SCOPE, __version__, tracer_provider=tracer_provider)
        meter = metrics.get_meter(SCOPE, __version__, meter_provider=meter_provider)
        self.decisions = meter.create_counter(
            "forge_policy.decisions", "{decision}", "decisions made, by outcome and behavior"
        )
        self.blocks = meter.create_counter(
            "forge_policy.blocks", "{decision}", "calls refused, by behavior and level"
        )
        self.violations = meter.create_counter(
            "forge_policy.violations", "{violation}", "violations, by behavior and level"
        )
        self.overrides = meter.create_counter(
            "forge_policy.overrides", "{override}", "blocks let through, by behavior and mechanism"
        )
        self.hook_duration = meter.create_histogram(
            "forge_policy.hook.duration",
            "s",
            "hook answer latency: request read to answer written",
            explicit_bucket_boundaries_advisory=LATENCY_BUCKETS,
        )
        self.deferred = deferred
        # per thread: the decisions noted for answered() (deferred), and the last one recorded,
        # for the latency of its answer
        self._local = threading.local()

    def __call__(self, decision: Decision, seconds: float) -> None:
        """Record ``decision``, made in ``seconds`` (ending now); when deferred, note it for
        :meth:`answered`."""
        end = time.time_ns()
        if self.deferred:
            pending = getattr(self._local, "pending", None)
            if pending is None:
                pending = self._local.pending = []
            pending.append((decision, seconds, end))
            return
        self.record(decision, seconds, end)

    def record(self, decision: Decision, seconds: float, end: int) -> None:
        """Record ``decision``, made in ``seconds`` ending at ``end`` (:func:`time.time_ns`),
        now, whether deferred or not."""
        span = self.tracer.start_span(
            span_name(decision),
            kind=self.kind,
            attributes=span_attributes(decision),
            start_time=end - int(seconds * 1e9),
        )
        span.end(end_time=end)
        point = decision_point(decision)
        self.decisions.add(1, point)
        if decision.blocked:
            self.blocks.add(1, point)
        for attributes in violation_points(decision):
            self.violations.add(1, attributes)
        for attributes in override_points(decision):
            self.overrides.add(1, attributes)
        self._local.point = point

    def answered(self, seconds: float) -> None:
        """An answer was just written, ``seconds`` after its request was read: record the
        decisions this thread noted for it (deferred), then the latency, under the outcome and
        harness of the decision it carried; an answer without a decision (an error answer, an
        event nothing reads) has no latency recorded."""
        pending = getattr(self._local, "pending", None)
        if pending:
            self._local.pending = []
            for decision, took, end in pending:
                self.record(decision, took, end)
        point = getattr(self._local, "point", None)
        if point is None:
            return
        self._local.point = None
        self.hook_duration.record(
            seconds,
            {
                "forge_policy.outcome": point["forge_policy.outcome"],
                "forge_policy.harness": point["forge_policy.harness"],
            },
        )
