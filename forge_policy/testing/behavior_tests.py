"""Behavior tests: the ``tests`` a behavior file carries, run by ``forge-policy test``.

A test is a list of events, each a Claude Code payload without ``session_id`` plus the outcome
it must get (``expect``: ``allow``, ``nudge``, ``warning``, ``soft_block``, ``hard_block``,
:attr:`~forge_policy.Decision.outcome`) and, optionally, the seconds the clock moves before it
(``advance``). The events run in order through a real :class:`~forge_policy.Evaluator` over a
fresh session, on a memory store and audit sink, with a :class:`~forge_policy.testing.FakeClock`
(so an override window or a session TTL is crossed with ``advance``, never by waiting).

Each test runs its behavior alone, switched on (a behavior the catalog leaves off is tested
too), with the catalog's tuning, under the test's ``profile`` (``standard`` by default), in a
temporary project folder that is the events' ``cwd`` and holds the test's ``files``. Flags set
by other behaviors are not set: a test states everything its behavior reads.

Coverage is measured like ``opa test --coverage``: before each event is evaluated, a dry run
(:meth:`~forge_policy.Evaluator.explain`, which evaluates every condition) records which
triggers the event selected and fired and which conditions it found true or false.

>>> run = run_behavior_tests()  # the built-in catalog
>>> run.failed, run.passed > 0
(0, True)
>>> cover = next(c for c in run.coverage if c.behavior_id == "verify-before-done")
>>> cover.triggers_fired, len(cover.triggers)
(2, 2)
"""

from __future__ import annotations

import os
import tempfile

import attrs

from forge_policy.catalog.behavior import DEFAULT_PROFILE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

    from forge_policy.catalog.behavior import Behavior
    from forge_policy.catalog.catalog import Catalog
    from forge_policy.catalog.loader import LocatedTest
    from forge_policy.model import Decision, Event
    from forge_policy.reports.explain import ExplainReport

    FactProvider = Callable[[Event], object]

__all__ = [
    "BehaviorCoverage",
    "BehaviorTestResult",
    "ConditionCoverage",
    "EventResult",
    "TestRun",
    "TriggerCoverage",
    "run_behavior_tests",
    "run_catalog_tests",
]

#: filler lines of a ``{bytes: N}`` test file: 100 bytes each, like source code
_FILLER_LINE = "x" * 99 + "\n"


@attrs.frozen
class EventResult:
    """What one event of a test got: ``why`` explains a failed expectation (empty on a pass)."""

    index: int
    line: int
    expected: str
    got: str
    why: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        """Whether the event got the outcome it expected."""
        return self.got == self.expected


@attrs.frozen
class BehaviorTestResult:
    """One test of one behavior: its events in order (the first failure ends the test) or the
    ``error`` that kept it from running."""

    behavior_id: str
    name: str
    file: str
    line: int
    events: tuple[EventResult, ...] = ()
    error: str = ""

    @property
    def passed(self) -> bool:
        """Whether every event got its outcome."""
        return not self.error and all(e.passed for e in self.events)


@attrs.frozen
class ConditionCoverage:
    """How often one condition was found true and false."""

    index: int
    field: str
    operator: str
    value: object
    true: int = 0
    false: int = 0


@attrs.frozen
class TriggerCoverage:
    """One trigger: how often an event selected it (event and matcher) and fired it (its
    conditions held), and its conditions; for a ``check_flag``, how often it found its flag
    present and absent (``flag``: None for the other actions)."""

    index: int
    trigger: str
    selected: int
    fired: int
    conditions: tuple[ConditionCoverage, ...] = ()
    flag: tuple[int, int] | None = None


@attrs.frozen
class BehaviorCoverage:
    """Coverage of one behavior's triggers and conditions by its tests."""

    behavior_id: str
    tests: int
    triggers: tuple[TriggerCoverage, ...]
    #: whether the catalog switches it on (its tests run either way)
    enabled: bool = True

    @property
    def triggers_fired(self) -> int:
        """Triggers fired at least once."""
        return sum(1 for t in self.triggers if t.fired)

    @property
    def outcomes(self) -> tuple[int, int]:
        """(condition outcomes seen, outcomes possible): each condition can be true and false,
        a ``check_flag`` can find its flag present and absent."""
        seen = total = 0
        for trigger in self.triggers:
            pairs = [(c.true, c.false) for c in trigger.conditions]
            if trigger.flag is not None:
                pairs.append(trigger.flag)
            for yes, no in pairs:
                seen += (yes > 0) + (no > 0)
                total += 2
        return seen, total

    def gaps(self) -> list[str]:
        """What the tests never exercised, one line each (nothing for an untested behavior:
        the summary names those)."""
        found: list[str] = []
        if not self.tests:
            return found
        for t in self.triggers:
            where = f"{self.behavior_id} trigger {t.index} {t.trigger}"
            if not t.selected:
                found.append(f"{where}: no event selected it")
            elif not t.fired:
                found.append(f"{where}: never fired")
            for c in t.conditions:
                missing = [word for word, n in (("true", c.true), ("false", c.false)) if not n]
                if missing and t.selected:
                    found.append(
                        f"{where} condition {c.index} {c.field} {c.operator} {_short(c.value)}: "
                        f"never {' nor '.join(missing)}"
                    )
            if t.flag is not None and t.fired:
                present, absent = t.flag
                missing = [w for w, n in (("present", present), ("absent", absent)) if not n]
                if missing:
                    found.append(f"{where}: never found its flag {' nor '.join(missing)}")
        return found


@attrs.frozen
class TestRun:
    """Every test of a catalog and the coverage they reached."""

    __test__ = False  # not a pytest test class, whatever imports it

    catalog: str
    results: tuple[BehaviorTestResult, ...]
    coverage: tuple[BehaviorCoverage, ...]

    @property
    def passed(self) -> int:
        """Tests that passed."""
        return sum(1 for r in self.results if r.passed)

    @property
    def failed(self) -> int:
        """Tests that failed or could not run."""
        return len(self.results) - self.passed

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of ``forge-policy test --json``."""
        return {
            "ok": self.failed == 0,
            "catalog": self.catalog,
            "passed": self.passed,
            "failed": self.failed,
            "tests": [
                {
                    "behavior_id": r.behavior_id,
                    "name": r.name,
                    "file": r.file,
                    "line": r.line,
                    "passed": r.passed,
                    "error": r.error or None,
                    "events": [
                        {
                            "index": e.index,
                            "line": e.line,
                            "expected": e.expected,
                            "got": e.got,
                            "passed": e.passed,
                            "why": list(e.why),
                        }
                        for e in r.events
                    ],
                }
                for r in self.results
            ],
            "coverage": [_coverage_dict(c) for c in self.coverage],
        }


def _coverage_dict(c: BehaviorCoverage) -> dict[str, Any]:
    seen, total = c.outcomes
    return {
        "behavior_id": c.behavior_id,
        "enabled": c.enabled,
        "tests": c.tests,
        "triggers_fired": c.triggers_fired,
        "triggers": len(c.triggers),
        "condition_outcomes": seen,
        "condition_outcomes_possible": total,
        "detail": [attrs.asdict(t) for t in c.triggers],
        "gaps": c.gaps(),
    }


def run_behavior_tests(
    path: str | os.PathLike[str] | None = None,
    *,
    facts: Mapping[str, FactProvider] | None = None,
) -> TestRun:
    """Load a catalog folder or one behavior file (``None``: the built-in catalog) and run the
    tests of every behavior. Raises :class:`~forge_policy.CatalogError` when it does not load.
    """
    from pathlib import Path

    from forge_policy.catalog.catalog import BEHAVIOR_FILE
    from forge_policy.catalog.loader import BUILTIN_DIR, load_catalog, read_behavior_tests
    from forge_policy.errors import CatalogError

    root = BUILTIN_DIR if path is None else Path(path)
    catalog = load_catalog(root)
    tests: dict[str, list[LocatedTest]] = {}
    for behavior in catalog.behaviors:
        file = root if root.is_file() else root / behavior.id / BEHAVIOR_FILE
        located, issues = read_behavior_tests(file)
        if issues:
            raise CatalogError(issues)
        tests[behavior.id] = located
    return run_catalog_tests(catalog, tests, facts=facts)


def run_catalog_tests(
    catalog: Catalog,
    tests: Mapping[str, Iterable[LocatedTest]],
    *,
    facts: Mapping[str, FactProvider] | None = None,
) -> TestRun:
    """Run ``tests`` (by behavior id) against the behaviors of ``catalog``, in catalog order."""
    results: list[BehaviorTestResult] = []
    coverage: list[BehaviorCoverage] = []
    for behavior in catalog.behaviors:
        mine = list(tests.get(behavior.id, ()))
        seen = _Seen(behavior)
        for located in mine:
            results.append(_run_test(behavior, located, seen, facts))
        coverage.append(seen.coverage(len(mine)))
    return TestRun(catalog.root, tuple(results), tuple(coverage))


class _Seen:
    """The trigger and condition outcomes the dry runs of one behavior's events found."""

    def __init__(self, behavior: Behavior) -> None:
        self.behavior = behavior
        self.selected = [0] * len(behavior.triggers)
        self.fired = [0] * len(behavior.triggers)
        self.conditions = [[[0, 0] for _ in t.conditions] for t in behavior.triggers]
        self.flags = [[0, 0] for _ in behavior.triggers]

    def record(self, report: ExplainReport) -> None:
        from forge_policy.reports.explain import TriggerTrace

        for entry in report.trace:
            if not isinstance(entry, TriggerTrace) or entry.behavior_id != self.behavior.id:
                continue
            i = entry.trigger_index
            self.selected[i] += 1
            self.fired[i] += entry.matched
            for j, condition in enumerate(entry.conditions[: len(self.conditions[i])]):
                self.conditions[i][j][0 if condition.matched else 1] += 1
            # a check_flag's effect in the trace says what it found (engine/decide.py _fire)
            if entry.matched and entry.effect.startswith("flag "):
                self.flags[i][0 if " present: " in entry.effect else 1] += 1

    def coverage(self, tests: int) -> BehaviorCoverage:
        triggers = []
        for i, trigger in enumerate(self.behavior.triggers):
            conditions = tuple(
                ConditionCoverage(j, c.field, c.operator, c.value, *self.conditions[i][j])
                for j, c in enumerate(trigger.conditions)
            )
            flag = (self.flags[i][0], self.flags[i][1]) if trigger.action == "check_flag" else None
            triggers.append(
                TriggerCoverage(
                    i, trigger.describe(), self.selected[i], self.fired[i], conditions, flag
                )
            )
        return BehaviorCoverage(
            self.behavior.id, tests, tuple(triggers), enabled=self.behavior.enabled
        )


def _write_files(project: str, files: Mapping[str, Any]) -> None:
    for relative, content in files.items():
        path = os.path.join(project, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if isinstance(content, str):
            text = content
        else:  # {bytes: N}: filler lines
            size = int(content["bytes"])
            text = (_FILLER_LINE * (size // len(_FILLER_LINE) + 1))[:size]
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)


def _run_test(
    behavior: Behavior,
    located: LocatedTest,
    seen: _Seen,
    facts: Mapping[str, FactProvider] | None,
) -> BehaviorTestResult:
    from forge_policy.audit.memory import MemoryAuditSink
    from forge_policy.catalog.catalog import Catalog
    from forge_policy.engine.evaluator import Evaluator
    from forge_policy.errors import EventError
    from forge_policy.events import GIT_HOOK_EVENTS
    from forge_policy.model import Event
    from forge_policy.stores.memory import MemoryStore
    from forge_policy.testing.clock import FakeClock
    from forge_policy.testing.events import claude_code_payload_from

    test = located.test
    result = BehaviorTestResult(behavior.id, test.name, located.file, located.line)
    session = f"test-{behavior.id}"
    events: list[EventResult] = []
    with tempfile.TemporaryDirectory(prefix="forge-policy-test-") as folder:
        project = os.path.realpath(folder)
        try:
            _write_files(project, test.files)
        except OSError as exc:
            return attrs.evolve(result, error=f"cannot write the test's files: {exc}")
        clock = FakeClock()
        ids = iter(range(1, 1 << 30))
        evaluator = Evaluator(
            Catalog([behavior.with_enabled(True)], root=os.path.dirname(located.file)),
            store=MemoryStore(),
            audit=MemoryAuditSink(),
            clock=clock,
            profile=test.profile or DEFAULT_PROFILE,
            facts=facts,
            random_id=lambda: f"grant-{next(ids)}",
        )
        for index, step in enumerate(test.events):
            line = located.event_lines[index] if index < len(located.event_lines) else 0
            clock.advance(step.advance)
            fields = dict(step.payload)
            cwd = fields.get("cwd")
            fields["cwd"] = os.path.join(project, cwd) if isinstance(cwd, str) else project
            payload = claude_code_payload_from(fields, session_id=session, cwd=project)
            name = payload["hook_event_name"]
            harness = "git" if name in GIT_HOOK_EVENTS else "claude-code"
            try:
                event = Event.from_claude_code(payload, harness=harness)
            except EventError as exc:
                events.append(EventResult(index, line, step.expect, "error", (str(exc),)))
                break
            report = evaluator.explain(event)
            seen.record(report)
            decision = evaluator.evaluate(event)
            got = decision.outcome
            why = () if got == step.expect else _why(decision, report, behavior.id)
            events.append(EventResult(index, line, step.expect, got, why))
            if got != step.expect:
                break  # what follows was written for the state this event should have left
    return attrs.evolve(result, events=tuple(events))


def _why(decision: Decision, report: ExplainReport, behavior_id: str) -> tuple[str, ...]:
    """An explain of the event that got the wrong outcome: the behavior's result, each
    trigger with its effect and each condition with its actual value, then the message."""
    lines = []
    for entry in report.behaviors:
        if entry.behavior_id != behavior_id:
            continue
        lines.append(f"{behavior_id}: {entry.result}")
        for trigger in entry.triggers:
            lines.append(f"  trigger {trigger.trigger_index} {trigger.trigger}: {trigger.effect}")
            for c in trigger.conditions:
                mark = "true" if c.matched else "false"
                lines.append(
                    f"    {mark}: {c.field} {c.operator} {_short(c.value)} "
                    f"(actual {_short(c.actual)})"
                )
    for violation in decision.violations:
        lines.append(
            f"violation {violation.counter} at {violation.level.label}"
            + (f", overridden by {violation.overridden}" if violation.overridden else "")
            + (" (shadow)" if violation.shadow else "")
        )
    if decision.message:
        lines.append("message: " + decision.message.splitlines()[0])
    lines.extend(f"diagnostic: {d}" for d in decision.diagnostics)
    return tuple(lines)


def _short(value: object, limit: int = 70) -> str:
    """A value as JSON, redacted, cut to ``limit`` characters."""
    import json

    from forge_policy.secrets import redact

    text = redact(json.dumps(value, ensure_ascii=False, default=str))
    return text if len(text) <= limit else text[: limit - 1] + "…"
