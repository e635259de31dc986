"""The hook's depth check of its JSON input, side by side with the parse it guards.

Not collected by pytest. Run:

    .venv-test/bin/python tests/benchmarks/bench_input_limits.py [--json]

For a typical PreToolUse payload and PostToolUse payloads with a large nested ``tool_response``
it times :func:`forge_policy._limits.json_too_deep` (judged on the bytes, before parsing) and
``json.loads`` in the same loop, and prints the ratio: what the limit adds to every hook call.
The walk of the parsed value (:func:`~forge_policy._limits.too_deep`, what YAML files get) is
timed too, for comparison. Prints Markdown; paste it into RESULTS.md with the machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import timeit
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchjson import machine, ratio

from forge_policy._limits import MAX_JSON_DEPTH, json_too_deep, too_deep

BASE: dict[str, Any] = {
    "session_id": "s1",
    "transcript_path": "/home/u/.claude/projects/p/s1.jsonl",
    "cwd": "/home/u/p",
    "permission_mode": "default",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "npm test", "description": "Run the tests", "timeout": 120000},
    "tool_use_id": "toolu_01",
}


def payloads() -> dict[str, dict[str, Any]]:
    def response(items: int) -> dict[str, Any]:
        rows = [{"id": i, "tags": [i, {"name": f'x"[{i}\\'}]} for i in range(items)]
        return {**BASE, "hook_event_name": "PostToolUse", "tool_response": {"rows": rows}}

    return {
        "PreToolUse (typical)": BASE,
        "PostToolUse, 1,000-row response": response(1000),
        "PostToolUse, 10,000-row response": response(10000),
    }


def best(fn: Any, number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures: dict[str, float] = {}
    ratios: dict[str, Any] = {}
    rows = []
    for name, payload in payloads().items():
        raw = json.dumps(payload).encode()
        value = json.loads(raw)
        number = max(5, 2_000_000 // max(len(raw), 1))
        parse = best(lambda raw=raw: json.loads(raw), number)
        text = best(lambda raw=raw: json_too_deep(raw, MAX_JSON_DEPTH), number)
        walk = best(lambda value=value: too_deep(value, MAX_JSON_DEPTH), number)
        key = name.split(",")[0].split(" ")[0].lower() + (
            "" if "typical" in name else "_" + name.split(", ")[1].split("-")[0].replace(",", "")
        )
        figures[f"{key}_bytes"] = len(raw)
        figures[f"{key}_parse_us"] = round(parse * 1e6, 2)
        figures[f"{key}_check_us"] = round(text * 1e6, 2)
        ratios[f"{key}_check_over_parse"] = ratio(
            text / parse, "lower", f"depth check of {name} over its json.loads"
        )
        rows.append((name, len(raw), parse, text, walk))
    if args.json:
        print(json.dumps({"benchmark": "bench_input_limits", "machine": machine(),
                          "figures": figures, "ratios": ratios, "notes": []}))  # fmt: skip
        return
    print(f"Machine: {machine()}\n")
    print("| payload | bytes | json.loads µs | json_too_deep µs | ratio | walk of the value µs |")
    print("|---|---|---|---|---|---|")
    for name, size, parse, text, walk in rows:
        print(
            f"| {name} | {size:,} | {parse * 1e6:,.1f} | {text * 1e6:,.1f} | "
            f"{text / parse:.2f} | {walk * 1e6:,.1f} |"
        )


if __name__ == "__main__":
    main()
