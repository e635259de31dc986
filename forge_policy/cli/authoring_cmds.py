"""Authoring commands: ``test`` (behavior tests with coverage) and ``schema`` (the JSON Schema
of behavior files, for editors)."""

from __future__ import annotations

from forge_policy.cli._format import table
from forge_policy.cli.context import OK, REFUSED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Callable
    from typing import Any

    from forge_policy.cli.context import Context
    from forge_policy.testing.behavior_tests import TestRun


def register(command: Callable[..., Any]) -> None:
    """Add this group's commands to the parser."""
    p = command(
        "test",
        cmd_test,
        "Run the tests of every behavior of a catalog folder or one behavior file (their "
        "'tests' key): a pass/fail table, then which triggers and conditions the tests fired "
        "and found true and false. A failed expectation shows the outcome it got and why. "
        "Exit 1 when a test fails or the catalog does not load.",
    )
    p.add_argument(
        "directory",
        metavar="DIR",
        nargs="?",
        help="default: the project's catalog, else the built-in one",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    command("schema", cmd_schema, "Print the JSON Schema of behavior files (schema v1).")


def cmd_test(args: Namespace, ctx: Context) -> int:
    """``forge-policy test [DIR] [--json]``."""
    from forge_policy.catalog.loader import BUILTIN_DIR
    from forge_policy.testing.behavior_tests import run_behavior_tests

    target = args.directory or ctx.config.catalog_dir or str(BUILTIN_DIR)
    run = run_behavior_tests(target)  # a CatalogError is mapped to exit 1 by the app
    if args.json:
        ctx.print_json(run.to_dict())
    else:
        _print_run(ctx, target, run)
    return OK if run.failed == 0 else REFUSED


def _print_run(ctx: Context, target: str, run: TestRun) -> None:
    rows = []
    for r in run.results:
        last = r.events[-1] if r.events else None
        if r.passed:
            result = "pass"
        elif r.error:
            result = "ERROR"
        else:
            result = f"FAIL at event {last.index + 1}" if last else "FAIL"
        rows.append([r.behavior_id, r.name, len(r.events), result])
    if rows:
        ctx.print(table(["behavior", "test", "events", "result"], rows))
    for r in run.results:
        if r.passed:
            continue
        ctx.print(f"\nFAIL {r.behavior_id}: {r.name} ({r.file}:{r.line})")
        if r.error:
            ctx.print(f"  {r.error}")
        for e in r.events:
            if e.passed:
                continue
            ctx.print(f"  event {e.index + 1} (line {e.line}): expected {e.expected}, got {e.got}")
            for line in e.why:
                ctx.print(f"    {line}")
    ctx.print("\ncoverage")
    cover_rows = []
    gaps: list[str] = []
    fired = triggers = seen = possible = 0
    for c in run.coverage:
        outcomes, total = c.outcomes
        cover_rows.append(
            [
                c.behavior_id if c.enabled else f"{c.behavior_id} (off)",
                c.tests,
                f"{c.triggers_fired}/{len(c.triggers)}",
                f"{outcomes}/{total}",
            ]
        )
        fired, triggers = fired + c.triggers_fired, triggers + len(c.triggers)
        seen, possible = seen + outcomes, possible + total
        gaps.extend(c.gaps())
    ctx.print(
        table(
            ["behavior", "tests", "triggers fired", "outcomes (conditions true/false, flags)"],
            cover_rows,
        )
    )
    ctx.print(
        f"total: triggers {fired}/{triggers} fired ({_percent(fired, triggers)}), "
        f"outcomes {seen}/{possible} ({_percent(seen, possible)})"
    )
    if gaps:
        ctx.print("not covered:")
        for gap in gaps:
            ctx.print(f"  {gap}")
    summary = f"{run.passed} passed, {run.failed} failed"
    untested = [c.behavior_id for c in run.coverage if not c.tests]
    if untested:
        summary += f"; no tests: {', '.join(untested)}"
    ctx.print(f"\n{target}: {summary}")


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} %" if whole else "-"


def cmd_schema(args: Namespace, ctx: Context) -> int:
    """``forge-policy schema``: the file shipped in the package, as is."""
    from forge_policy.catalog.json_schema import schema_text

    ctx.write(schema_text())
    return OK
