"""Interpreter code read for its effects: CPU time at 100 KB and 1 MB, and the ratio (10 is
linear).

Not collected by pytest. Run:

    .venv-test/bin/python tests/benchmarks/bench_interpreters.py [--sizes 100,1000]

For each language and shape of program (plain statements, sink calls with literal arguments,
one long string, escapes and backslashes, unclosed quotes, comments, deep nesting), it times
:func:`forge_policy.commands.interpreters.analyse` outside any fact budget (so the whole input
is read) and prints whether the effects came out complete. Prints Markdown.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

from forge_policy.commands.interpreters import analyse

KB = 1024

#: language -> (an ordinary statement, a sink call with literal arguments, a string opener,
#: a line comment)
LANGUAGES = {
    "python": ("print('x')\n", "os.system('ls -la')\n", "'", "# c\n"),
    "node": ("console.log('x');\n", "require('fs').unlinkSync('a');\n", "'", "// c\n"),
    "perl": ("print 'x';\n", "system('ls -la');\n", "'", "# c\n"),
    "ruby": ("puts 'x'\n", "system('ls -la')\n", "'", "# c\n"),
    "php": ("echo 'x';\n", "system('ls -la');\n", "'", "// c\n"),
}


def _fill(unit: str, size: int, head: str = "", tail: str = "") -> str:
    return head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


def shapes(language: str) -> dict[str, str | None]:
    """Shape name -> a template: ``{n}`` is the size in bytes."""
    plain, sink, quote, comment = LANGUAGES[language]
    head = "import os\n" if language == "python" else ""
    return {
        "plain statements": head + "\0" + plain,
        "sink calls": head + "\0" + sink,
        "one long string": f"{head}x = {quote}\0a{quote}\n",
        "escapes in a string": f"{head}x = {quote}\0\\\\a{quote}\n",
        "unclosed string of backslashes": f"{head}x = {quote}\0\\\\",
        "comments": head + "\0" + comment,
        "nesting (parentheses)": None,
    }


def build(template: str | None, size: int) -> str:
    if template is None:
        depth = min(size // 2, 90)
        return "(" * depth + _fill("1+", size - 2 * depth, "", "1") + ")" * depth
    head, _, rest = template.partition("\0")
    # rest is "<unit>" or "<unit><tail>" for the string shapes
    if rest.endswith("\n") and rest.count("\n") == 1 and not rest.startswith(("a", "\\")):
        return _fill(rest, size, head)
    unit = "a" if rest.startswith("a") else "\\\\"
    tail = rest[1:] if unit == "a" else rest[2:]
    return _fill(unit, size, head, tail)


def measure(language: str, code: str) -> tuple[float, bool]:
    start = time.thread_time()
    effects = analyse(language, code)
    return (time.thread_time() - start) * 1000.0, effects.complete


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000", help="comma-separated sizes in KB")
    args = parser.parse_args()
    sizes = [int(s) * KB for s in args.sizes.split(",")]
    for language in LANGUAGES:  # warm up: imports and compiled patterns
        analyse(language, "x")
    print(
        f"Machine: {os.cpu_count()} cores, {platform.machine()}, Python "
        f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f}. CPU ms of one "
        "`analyse` call (no fact budget); `inc`: the effects came out incomplete.\n"
    )
    print("| language | shape | " + " | ".join(f"{s // KB} KB" for s in sizes) + " | ratio |")
    print("|---|---|" + "---|" * (len(sizes) + 1))
    for language in LANGUAGES:
        for shape, template in shapes(language).items():
            cells: list[str] = []
            times: list[float] = []
            for size in sizes:
                ms, complete = measure(language, build(template, size))
                times.append(ms)
                cells.append(f"{ms:.0f}{'' if complete else ' inc'}")
            ratio = f"×{times[-1] / times[0]:.1f}" if times[0] > 0.05 else "-"  # noqa: RUF001
            print(f"| {language} | {shape} | " + " | ".join(cells) + f" | {ratio} |")


if __name__ == "__main__":
    main()
