"""What a candidate catalog (issue 26, live shadow) costs the warm path: the same hook calls
without a candidate and with the built-in catalog as candidate (``FORGE_CANDIDATE_DIR``), side
by side in one run.

Two projects, each with the built-in catalog, the durable file store and ``floor: off``; the
second compares every event with the built-in catalog again as its candidate (the worst case
of a real candidate: every behavior evaluated twice, its own store written, one byte appended
to the tally per event, a ``shadow`` record never written since the two agree). A fresh session
per sample:

- ``allow``: a ``Read`` no behavior objects to;
- ``nudge``: a ``Write`` with no search first (a violation record appended, fsynced);
- ``hard_block``: ``git push --force`` (a block record appended, fsynced).

Two measures, each interleaved (none, candidate, none, ...) so that machine noise hits both:

- ``hook``: wall time of the hook command ``init`` writes (``python -I -S …/launch.py``), a fresh
  process per call answered by the project's warm worker;
- ``answer``: :meth:`forge_policy.serve.warm.Warm.answer` in this process (what the worker runs
  per request, without the process start and the socket), many calls: the candidate's own cost.

Usage: ``python tests/benchmarks/bench_candidate.py [--runs 30] [--answers 300]
[--python PY] [--json]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchjson import emit, ratio  # this folder's shared --json format

KINDS = ("allow", "nudge", "hard_block")
MODES = ("none", "candidate")
CLIENT = Path(__file__).resolve().parents[2] / "forge_policy" / "worker" / "launch.py"


def payload(kind: str, cwd: str) -> bytes:
    session = str(uuid.uuid4())
    tool, tool_input = {
        "allow": ("Read", {"file_path": f"{cwd}/src/app.py"}),
        "nudge": ("Write", {"file_path": f"{cwd}/src/new.py", "content": "X = 1\n"}),
        "hard_block": ("Bash", {"command": "git push --force origin main"}),
    }[kind]
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": f"/home/u/.claude/projects/p/{session}.jsonl",
            "cwd": cwd,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": f"toolu_{uuid.uuid4().hex[:24]}",
        }
    ).encode()


def project(base: Path, name: str, candidate: bool) -> dict[str, str]:
    """A project folder and the environment of its hook calls."""
    folder = base / name
    (folder / ".forge").mkdir(parents=True)
    (folder / ".forge" / "config.yaml").write_text("floor: off\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGE_", "CLAUDE_"))}
    env.update(
        FORGE_ROOT=str(folder / ".forge"),
        CLAUDE_PROJECT_DIR=str(folder),
        XDG_CACHE_HOME=str(base / "xdg"),
    )
    if candidate:
        from forge_policy.catalog.cache import BUILTIN_DIR

        env["FORGE_CANDIDATE_DIR"] = BUILTIN_DIR
    return env


def hook(python: str, env: dict[str, str], data: bytes) -> tuple[float, bytes]:
    start = time.perf_counter()
    result = subprocess.run(
        [python, "-I", "-S", str(CLIENT)],
        input=data,
        capture_output=True,
        env=env,
        cwd=env["CLAUDE_PROJECT_DIR"],
        check=True,
    )
    return time.perf_counter() - start, result.stdout


def stop_workers(env: dict[str, str]) -> None:
    for pid_file in Path(env["FORGE_ROOT"], "runtime", "worker").glob("*/worker.pid"):
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pid_file.read_text()), 15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30, help="hook calls per mode and kind")
    parser.add_argument("--answers", type=int, default=300, help="in-process answers per mode/kind")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from forge_policy.config.env import Config
    from forge_policy.serve.warm import Warm

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        envs = {mode: project(base, mode, mode == "candidate") for mode in MODES}
        hooks: dict[str, list[float]] = {f"{m} {k}": [] for m in MODES for k in KINDS}
        answers_seen: dict[str, set[bytes]] = {k: set() for k in KINDS}
        try:
            for mode in MODES:  # start each worker and let it warm up
                for kind in KINDS * 3:
                    hook(args.python, envs[mode], payload(kind, envs[mode]["CLAUDE_PROJECT_DIR"]))
            for _ in range(args.runs):
                for kind in KINDS:
                    for mode in MODES:
                        env = envs[mode]
                        seconds, out = hook(
                            args.python, env, payload(kind, env["CLAUDE_PROJECT_DIR"])
                        )
                        hooks[f"{mode} {kind}"].append(seconds)
                        answers_seen[kind].add(
                            out.replace(env["CLAUDE_PROJECT_DIR"].encode(), b"P")
                        )
            compared = _compared(envs["candidate"])
        finally:
            for env in envs.values():
                stop_workers(env)

        # the worker's own work, in this process
        warms = {}
        for mode in MODES:
            env = project(base / "inproc", mode, mode == "candidate")
            warms[mode] = (Warm(Config.from_env(env, cwd=env["CLAUDE_PROJECT_DIR"])), env)
        answer: dict[str, list[float]] = {f"{m} {k}": [] for m in MODES for k in KINDS}
        for mode in MODES:  # warm-up
            warm, env = warms[mode]
            for kind in KINDS * 5:
                warm.answer(payload(kind, env["CLAUDE_PROJECT_DIR"]))
        for _ in range(args.answers):
            for kind in KINDS:
                for mode in MODES:
                    warm, env = warms[mode]
                    data = payload(kind, env["CLAUDE_PROJECT_DIR"])
                    start = time.perf_counter()
                    warm.answer(data)
                    answer[f"{mode} {kind}"].append(time.perf_counter() - start)
        evaluator = warms["candidate"][0].evaluator
        assert evaluator is not None and evaluator.candidate is not None
        assert evaluator.candidate.evaluator is not None, evaluator.candidate.problem

    differing = sum(1 for seen in answers_seen.values() if len(seen) != 1)
    figures: dict[str, float] = {}
    ratios: dict[str, dict[str, object]] = {}
    rows = []
    for kind in KINDS:
        h_none = statistics.median(hooks[f"none {kind}"])
        h_cand = statistics.median(hooks[f"candidate {kind}"])
        a_none = statistics.median(answer[f"none {kind}"])
        a_cand = statistics.median(answer[f"candidate {kind}"])
        figures.update(
            {
                f"hook-none-{kind}-ms": h_none * 1000,
                f"hook-candidate-{kind}-ms": h_cand * 1000,
                f"answer-none-{kind}-ms": a_none * 1000,
                f"answer-candidate-{kind}-ms": a_cand * 1000,
            }
        )
        ratios[f"hook_candidate_over_none_{kind}"] = ratio(
            h_cand / h_none,
            "lower",
            f"wall median of the warm hook command, {kind}, with the built-in catalog as "
            "candidate over without a candidate",
        )
        ratios[f"answer_candidate_over_none_{kind}"] = ratio(
            a_cand / a_none,
            "lower",
            f"median Warm.answer (the worker's work per request), {kind}, with the built-in "
            "catalog as candidate over without",
        )
        rows.append((kind, h_none, h_cand, a_none, a_cand))
    ratios["answers_differing"] = ratio(
        differing, "zero", "kinds whose hook answer differed between the two projects or runs"
    )
    figures["events-compared"] = compared
    if args.json:
        emit("bench_candidate", figures, ratios, runs=args.runs, answers=args.answers)
        return
    print(f"python {args.python}; {args.runs} hook calls and {args.answers} answers per mode/kind")
    print(
        f"{'kind':<11} {'hook none':>10} {'hook cand':>10} {'ratio':>6}   "
        f"{'answer none':>11} {'answer cand':>11} {'ratio':>6}"
    )
    for kind, h_none, h_cand, a_none, a_cand in rows:
        hook_cells = f"{h_none * 1e3:>8.2f}ms {h_cand * 1e3:>8.2f}ms {h_cand / h_none:>5.2f}x"
        answer_cells = f"{a_none * 1e3:>9.3f}ms {a_cand * 1e3:>9.3f}ms {a_cand / a_none:>5.2f}x"
        print(f"{kind:<11} {hook_cells}   {answer_cells}")
    print(f"answers differing between the projects: {differing}; events compared: {compared}")


def _compared(env: dict[str, str]) -> int:
    folder = Path(env["FORGE_ROOT"], "runtime", "candidate", "compared")
    return sum(p.stat().st_size for p in folder.iterdir()) if folder.is_dir() else 0


if __name__ == "__main__":
    main()
