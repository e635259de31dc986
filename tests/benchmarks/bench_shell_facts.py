"""Shell facts on large and padded commands: time per size, growth ratios, the largest size read
within budget.

Not collected by pytest. Run:

    .venv-test/bin/python tests/benchmarks/bench_shell_facts.py [--max-mb 4] [--facts all]

For each shape of command (padding such as ``a;`` repeated, a here-document, long quoted
strings, distinct commands, pipelines, substitutions, deep nesting) and each size from 1 KB to
4 MB (doubling), it runs the fact providers that read every Bash command, as the hook does
(within their budget: :class:`~forge_policy.facts.BudgetedProvider`), and prints the CPU time
of each run (what the budget counts), the ratio to the previous size (2.0 is linear), and
whether the fact was complete (``ok``), cut (``cut``: a size cap) or out of budget (``T/O``).
A fact that is not complete is undetermined: blocking rules refuse the call (fail closed).
The last table gives, per shape and fact, the largest size read completely within budget.

Prints Markdown; paste it into RESULTS.md with the machine it ran on.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

from forge_policy.facts import FactRegistry, undetermined
from forge_policy.model import Event

KB = 1024
#: fact -> what it reads; all of them read every Bash command of the built-in catalog
FACTS = ("shell_commands", "executed_commands", "recursive_deletes", "governance_changes",
         "sensitive_file", "commit_message")  # fmt: skip


def _fill(unit: str, size: int, head: str = "", tail: str = "") -> str:
    return head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


def _distinct(size: int) -> str:
    parts: list[str] = []
    total = 0
    n = 0
    while total < size:
        part = f"echo {n}; "
        parts.append(part)
        total += len(part)
        n += 1
    return "".join(parts)


def _heredoc(size: int) -> str:
    line = "x" * 79 + "\n"
    return _fill(line, size, "cat > notes.txt <<'EOF'\n", "EOF\nrm -rf /")


def _nesting(size: int) -> str:
    depth = 24  # below MAX_DEPTH: read completely
    inner = _fill("a ", size - depth * 6)
    return "echo " + "$( " * depth + inner + " )" * depth


def _chain(count: int) -> str:
    """``count`` distinct simple commands joined by ``&&``, the last two a delete of ``/``."""
    return " && ".join(f"rm -rf build/{n}" for n in range(count - 2)) + " && echo / | xargs rm -rf"


def _expansions(size: int) -> str:
    """Words the command model expands (issue 23): braces, parameter operations, ``$IFS``."""
    unit = "echo {a,b}{1..3} ${X:-d} ${X%.py} ${#X} a${IFS}b; "
    return _fill(unit, size, "X=main.py; ", "rm${IFS}-rf${IFS}/")


def _defined_chain(count: int) -> str:
    """``count`` commands that read what earlier ones define: variables, a loop, a function."""
    head = 'f(){ rm -rf "build/$1"; }; for d in a b c; do ruff $d; done; '
    body = " && ".join(f"v{n}=build/{n}; f $v{n}" for n in range(count // 2 - 2))
    return head + body + " && f /"


#: the commands the issues name: their times are printed for every fact
FIXED = {
    "1 MB command (a here-document, then rm -rf /)": lambda: _heredoc(KB * KB),
    "10,000-command chain": lambda: _chain(10_000),
    "1 MB of expansions (braces, ${X…}, $IFS), then rm -rf /": lambda: _expansions(KB * KB),
    "10,000 commands using variables and a function, then f /": lambda: _defined_chain(10_000),
}

SHAPES = {
    "`a;` padding": lambda size: _fill("a;", size, "rm -rf / ; "),
    "`a` + newline": lambda size: _fill("a\n", size, "rm -rf /\n"),
    "distinct `echo N;`": _distinct,
    "heredoc (80-char lines)": _heredoc,
    "single-quoted string": lambda size: _fill("a", size, "echo '", "'; rm -rf /"),
    "double-quoted with `$x`": lambda size: _fill("a b $x ", size, 'echo "', '"; rm -rf /'),
    "one command, many words": lambda size: _fill("a ", size, "echo "),
    "pipeline `a |`": lambda size: _fill("a | ", size, "", "sh"),
    "substitutions `$(a)`": lambda size: _fill("$(a)", size, "echo "),
    "nesting 24 deep": _nesting,
    "expansions `{a,b}` `${X%.py}`": _expansions,
}


def run(fact: str, command: str, registry: FactRegistry) -> tuple[float, str]:
    """CPU milliseconds of one budgeted run, and its status."""
    event = Event("PreToolUse", "bench", tool_name="Bash", tool_input={"command": command},
                  cwd=os.getcwd())  # fmt: skip
    provider = registry[fact]
    start = time.thread_time()
    value, _diagnostics = provider.evaluate(event)
    elapsed = (time.thread_time() - start) * 1000.0
    reason = undetermined(value)
    if reason is None:
        return elapsed, "ok"
    return elapsed, "T/O" if "budget" in reason or "timed out" in reason else "cut"


def measure(fact: str, command: str, registry: FactRegistry, repeat: int) -> tuple[float, str]:
    samples = [run(fact, command, registry) for _ in range(repeat)]
    return statistics.median(ms for ms, _ in samples), samples[-1][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-mb", type=float, default=4.0)
    parser.add_argument("--facts", default="shell_commands", help="comma-separated, or 'all'")
    parser.add_argument("--fixed", action="store_true", help="only the fixed commands")
    args = parser.parse_args()
    facts = FACTS if args.facts == "all" else tuple(args.facts.split(","))
    sizes: list[int] = []
    size = KB
    while size <= args.max_mb * KB * KB:
        sizes.append(size)
        size *= 2
    registry = FactRegistry.with_builtins()
    for fact in facts:  # warm up: imports and compiled patterns are not what is measured
        run(fact, "ls", registry)
    load = os.getloadavg()[0]
    print(f"Machine: {os.cpu_count()} cores, {platform.machine()}, Python "
          f"{platform.python_version()}, {platform.system()}, load average {load:.1f}. "
          "CPU time of one budgeted run (median of 3 below 256 KB).")  # fmt: skip
    largest: dict[tuple[str, str], int] = {}
    for fact in () if args.fixed else facts:
        budget = registry.budget_ms(fact)
        print(f"\n### `facts.{fact}` (budget {budget:g} ms of CPU)\n")
        header = "| shape | " + " | ".join(_label(s) for s in sizes) + " |"
        print(header)
        print("|---|" + "---|" * len(sizes))
        for shape, build in SHAPES.items():
            cells: list[str] = []
            previous: float | None = None
            for size in sizes:
                ms, status = measure(fact, build(size), registry, 3 if size < 256 * KB else 1)
                ratio = f" ×{ms / previous:.1f}" if previous and previous > 0.05 else ""  # noqa: RUF001
                cells.append(f"{ms:.1f}{ratio}{'' if status == 'ok' else ' ' + status}")
                if status == "ok" and ms <= budget:
                    largest[(shape, fact)] = size
                previous = ms
                if status == "T/O":
                    cells += ["T/O"] * (len(sizes) - len(cells))
                    break
            print(f"| {shape} | " + " | ".join(cells) + " |")
    print("\n### Fixed commands\n")
    print("| command | " + " | ".join(f"`{f}`" for f in facts) + " |")
    print("|---|" + "---|" * len(facts))
    for name, build in FIXED.items():
        command = build()
        cells = []
        for fact in facts:
            ms, status = measure(fact, command, registry, 3)
            cells.append(f"{ms:.1f} ms{'' if status == 'ok' else ' ' + status}")
        print(f"| {name} ({len(command):,} chars) | " + " | ".join(cells) + " |")
    if args.fixed:
        return
    print("\n### Largest command read completely within budget\n")
    print("| shape | " + " | ".join(f"`{f}`" for f in facts) + " |")
    print("|---|" + "---|" * len(facts))
    for shape in SHAPES:
        row = [_label(largest[(shape, f)]) if (shape, f) in largest else "< 1 KB" for f in facts]
        print(f"| {shape} | " + " | ".join(row) + " |")


def _label(size: int) -> str:
    return f"{size // (KB * KB)} MB" if size >= KB * KB else f"{size // KB} KB"


if __name__ == "__main__":
    main()
