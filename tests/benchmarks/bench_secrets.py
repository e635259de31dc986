"""The secret scan on files up to 1 MiB: time per size and shape, growth ratios, budget.

Not collected by pytest. Run:

    .venv-test/bin/python tests/benchmarks/bench_secrets.py [--max-kb 1023]

For each shape of file content (source code without secrets, prose, a dotenv file of
placeholders, one secret a line, and the near misses that make a pattern try hardest: an
unclosed quoted value, Slack ids without a token, URL users without a password, PEM armour
lines) and each size from 64 KB to just under 1 MiB (doubling; the scan's limit is 1 MiB), it
prints the CPU time of ``facts.secret_in_files`` for a Read of the file, as the hook runs it
(budgeted: :class:`~forge_policy.facts.BudgetedProvider`, file read included), the ratio to the
previous size (2.0 is linear), then of :func:`~forge_policy.secrets.redact` on the same text
(what the stores do to every string they write).

Prints Markdown; paste it into RESULTS.md with the machine it ran on.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from forge_policy.facts import FactRegistry, undetermined
from forge_policy.model import Event
from forge_policy.secrets import redact

KB = 1024
CODE = "def handler(event, context):\n    return {'status': 200, 'body': event.get('id')}\n"
PROSE = "The password policy asks for a token of twelve characters; see the key rules.\n"
DOTENV = "DB_PASSWORD=${DB_PASSWORD}\nAPI_KEY=<your key>\nURL=https://${U}:${P}@db/x\n"
SECRETS = 'password = "Vb8qT3xLw9"\nurl = "https://u:Vb8qT3xLw9@h/x"\nDB_PASSWORD=Vb8q3x!\n'


def _fill(unit: str, size: int, head: str = "") -> str:
    return head + unit * max(1, (size - len(head)) // len(unit))


SHAPES: dict[str, Callable[[int], str]] = {
    "source code, no secret": lambda size: _fill(CODE, size),
    "prose naming passwords": lambda size: _fill(PROSE, size),
    "dotenv of placeholders": lambda size: _fill(DOTENV, size),
    "three secrets a line": lambda size: _fill(SECRETS, size),
    'unclosed `password = "a…`': lambda size: _fill("a", size, 'password = "'),
    "`xoxb-123456-` repeated": lambda size: _fill("xoxb-123456-", size),
    "`https://u:` repeated": lambda size: _fill("https://u:", size),
    "PEM armour lines": lambda size: _fill("-----BEGIN PRIVATE KEY-----\n", size),
    "one base64 line after armour": lambda size: _fill("A", size, "-----BEGIN PRIVATE KEY-----\n"),
}


def scan_ms(path: Path, registry: FactRegistry) -> tuple[float, str, str]:
    """CPU milliseconds of one budgeted ``secret_in_files``, its status and its value."""
    tool_input = {"file_path": str(path)}
    event = Event(
        "PreToolUse", "bench", tool_name="Read", tool_input=tool_input, cwd=str(path.parent)
    )
    start = time.thread_time()
    value, _diagnostics = registry["secret_in_files"].evaluate(event)
    elapsed = (time.thread_time() - start) * 1000.0
    reason = undetermined(value)
    status = "ok" if reason is None else ("T/O" if "budget" in reason else "cut")
    return elapsed, status, str(value) if reason is None else ""


def redact_ms(text: str) -> float:
    start = time.thread_time()
    redact(text)
    return (time.thread_time() - start) * 1000.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-kb", type=int, default=1023)
    args = parser.parse_args()
    sizes = [64 * KB]
    while sizes[-1] * 2 <= args.max_kb * KB:
        sizes.append(sizes[-1] * 2)
    if sizes[-1] < args.max_kb * KB:
        sizes.append(args.max_kb * KB)
    registry = FactRegistry.with_builtins()
    budget = registry.budget_ms("secret_in_files")
    load = os.getloadavg()[0]
    print(f"Machine: {os.cpu_count()} cores, {platform.machine()}, Python "
          f"{platform.python_version()}, {platform.system()}, load average {load:.1f}. "
          "CPU ms, median of 3.")  # fmt: skip
    labels = " | ".join(f"{s // KB} KB" for s in sizes)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "sample.txt"
        path.write_text(SECRETS)
        scan_ms(path, registry)  # warm up: RE2 import and compiled patterns are not measured
        for title, measure in (
            (f"`facts.secret_in_files` on a Read (budget {budget:g} ms of CPU)", "scan"),
            ("`redact` of the same text", "redact"),
        ):
            print(
                f"\n### {title}\n\n| shape | {labels} | found |\n|---|"
                + "---|" * len(sizes)
                + "---|"
            )
            for shape, build in SHAPES.items():
                cells: list[str] = []
                previous = 0.0
                found = ""
                for size in sizes:
                    text = build(size)
                    path.write_text(text)
                    if measure == "scan":
                        runs = [scan_ms(path, registry) for _ in range(3)]
                        ms = statistics.median(r[0] for r in runs)
                        status, found = runs[-1][1], runs[-1][2]
                    else:
                        ms, status = statistics.median(redact_ms(text) for _ in range(3)), "ok"
                    ratio = f" ×{ms / previous:.1f}" if previous > 0.05 else ""  # noqa: RUF001
                    cells.append(f"{ms:.1f}{ratio}{'' if status == 'ok' else ' ' + status}")
                    previous = ms
                shown = (found or "—") if measure == "scan" else ""
                print(f"| {shape} | " + " | ".join(cells) + f" | {shown} |")


if __name__ == "__main__":
    main()
