"""In-process cost of the four kinds of event the hook latency benchmarks send, with the store
and audit log the hook uses (a ``FileStore`` and a fsynced JSONL log in a temporary folder).

Not collected by pytest. Run it with the interpreter of the install to measure, e.g. two trees
side by side:

    PYTHONPATH=TREE_A .venv/bin/python tests/benchmarks/bench_event_kinds.py [--runs 60]
    PYTHONPATH=TREE_B .venv/bin/python tests/benchmarks/bench_event_kinds.py [--runs 60]

Each event is a new session (as ``worker_latency.py`` sends them): an allowed ``Read``, a
``Write`` that search-first nudges, a Bash call risky-commands asks about (soft_block), a force
push (hard_block). Prints the median wall time per kind, in ms.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import forge_policy as fp
from forge_policy.audit.lazy import LazyJsonlSink
from forge_policy.stores import FileStore


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=60)
    runs = parser.parse_args().runs
    root = Path(tempfile.mkdtemp(prefix="forge-kinds-"))
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("x = 1\n" * 50)
    evaluator = fp.Evaluator(
        fp.builtin_catalog(),
        store=FileStore(str(root / ".forge" / "runtime" / "state.json")),
        audit=LazyJsonlSink(str(root / ".forge" / "audit" / "overrides.log")),
    )
    kinds = {
        "allow": ("Read", {"file_path": f"{root}/src/app.py"}),
        "nudge": ("Write", {"file_path": f"{root}/src/new.py", "content": "X = 1\n"}),
        "soft_block": ("Bash", {"command": "npm install left-pad"}),
        "hard_block": ("Bash", {"command": "git push --force origin main"}),
    }

    def event(kind: str) -> fp.Event:
        tool, tool_input = kinds[kind]
        return fp.Event.from_claude_code(
            {
                "session_id": str(uuid.uuid4()),
                "cwd": str(root),
                "hook_event_name": "PreToolUse",
                "tool_name": tool,
                "tool_input": tool_input,
                "tool_use_id": f"toolu_{uuid.uuid4().hex[:24]}",
                "transcript_path": "/x",
                "permission_mode": "default",
            }
        )

    figures = []
    for kind in kinds:
        for _ in range(5):  # warm the catalog, the facts and the files
            evaluator.evaluate(event(kind))
        times = []
        for _ in range(runs):
            one = event(kind)
            start = time.perf_counter()
            evaluator.evaluate(one)
            times.append(time.perf_counter() - start)
        figures.append(f"{kind} {statistics.median(times) * 1000:.2f} ms")
    print(f"forge_policy from {Path(fp.__file__).parent}: " + "; ".join(figures))


if __name__ == "__main__":
    main()
