"""Engine benchmarks: RE2 against Python's re on a catastrophic pattern, and evaluator throughput.

Not collected by pytest. Run:

    .venv/bin/python tests/benchmarks/bench_engine.py

Prints a Markdown table; paste it into RESULTS.md with the machine it ran on.
"""

from __future__ import annotations

import platform
import re
import statistics
import time

import forge_policy as fp
from forge_policy.catalog.dsl import compile_regex


def timed(fn: object, repeat: int = 5) -> float:
    """Median seconds of ``repeat`` calls."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def regex_table() -> list[str]:
    rows = ["| input | RE2 `(a+)+$` | Python re `(a+)+$` | ratio re/RE2 |", "|---|---|---|---|"]
    rx2 = compile_regex(r"(a+)+$")
    rx = re.compile(r"(a+)+$")
    for n in (16, 20, 22, 24):
        text = "a" * n + "!"
        t2 = timed(lambda text=text: rx2.search(text))
        t1 = timed(lambda text=text: rx.search(text), repeat=1)
        rows.append(f"| {n} a's + '!' | {t2 * 1e6:.1f} µs | {t1 * 1e3:.1f} ms | {t1 / t2:,.0f}× |")  # noqa: RUF001
    big = "a" * 100_000 + "!"
    t2 = timed(lambda: rx2.search(big))
    rows.append(f"| 100,000 a's + '!' | {t2 * 1e6:.1f} µs | (not run: exponential) | |")
    rows += ["", "| input | RE2 `(x+x+)+y` (unanchored) |", "|---|---|"]
    rx3 = compile_regex(r"(x+x+)+y")
    for n in (1_000, 10_000, 100_000):
        text = "x" * n
        rows.append(f"| {n:,} x's | {timed(lambda text=text: rx3.search(text)) * 1e3:.2f} ms |")
    return rows


def throughput() -> list[str]:
    catalog = fp.builtin_catalog()
    clock_now = [1_800_000_000.0]
    ev = fp.Evaluator(catalog, clock=lambda: clock_now[0])
    allow = fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "ls -la"})
    violate = fp.Event(
        "PreToolUse", "s2", tool_name="Bash", tool_input={"command": "git push --force origin main"}
    )
    rows = ["| path | events/s (MemoryStore) | µs/event |", "|---|---|---|"]
    for name, event in (("allow", allow), ("hard_block", violate)):
        n = 20_000
        start = time.perf_counter()
        for _ in range(n):
            ev.evaluate(event)
        elapsed = time.perf_counter() - start
        rows.append(f"| {name} | {n / elapsed:,.0f} | {elapsed / n * 1e6:.1f} |")
    return rows


def main() -> None:
    print(
        f"Machine: {platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}, {platform.system()}\n"
    )
    print("\n".join(regex_table()))
    print()
    print("\n".join(throughput()))


if __name__ == "__main__":
    main()
