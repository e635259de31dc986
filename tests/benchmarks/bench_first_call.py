"""A session's first call through the warm worker's evaluator, next to a later call of an
ongoing session, with ``--lines`` records of other sessions in the audit log (stamped within the
TTL): what only a first call pays, in-process (no client, no socket).

A new session's first ``Read`` allow sets a flag (``search-first``'s ``searched:<path>``), so
its state is written (the file store: temp + fsync + rename + folder fsync), and, having no
state, it first looks the log up for records of the session (SPEC §9's rebuild, which the worker
answers from its session index, :mod:`forge_policy.audit._index`; before it, a read back over the
last TTL). Printed per line count, medians over ``--reps`` samples in ``--rounds`` child
processes per tree, trees interleaved:

- ``first``: ``Warm.answer`` of a new session's Read (wall; its CPU beside it: the fsyncs wait);
- ``later``: the same Read in an ongoing session (no write, no lookup);
- ``lookup``: the lookup alone (:func:`~forge_policy.engine.session.rebuilt_if_logged` through the
  evaluator's audit sink, a session the log holds nothing of);
- ``answered``: a new session's first Read as the worker answers it, in an
  :func:`~forge_policy._infra.answer_first.answer_first` scope: timed until the answer, the state
  write following it. The CPU caches are emptied first (16 MB walked), as a client's start empties
  them between real hook calls: back to back, the previous call's write (bigger with more
  sessions in the file) would empty them instead, and the answer would look as if it grew.

``--sessions``: other sessions in the state file (one JSON document, SPEC §9), written before
the samples (each sample adds two more). The answer does not read them; the write re-encodes the
whole document, so ``first`` (answer and write) grows with them and ``answered`` must not.

Usage: ``python tests/benchmarks/bench_first_call.py [--lines 0,1000,10000] [--sessions 0]
[--reps 40] [--rounds 3] [--tree DIR ...] [--json]`` (``--tree``: a source tree measured instead
of the installed package, e.g. ``--tree /tmp/before --tree .``; ``--json``: the first tree's
figures and ratios for run_all.py, see benchjson.py).
"""

from __future__ import annotations

import argparse
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


def other_sessions(state: Path, count: int, now: float) -> None:
    """Write a state file holding ``count`` sessions of other agents, as a new session's first
    Read leaves them (created and touched ``now``: within the TTL)."""
    from forge_policy._time import iso

    stamp = iso(now)
    session = {"created_at": stamp, "last_accessed_at": stamp, "totals": {}, "behaviors": {}}
    sessions = {
        f"other-{n}": {**session, "flags": {f"searched:/home/u/p/src/m{n}.py": True}}
        for n in range(count)
    }
    state.parent.mkdir(parents=True, exist_ok=True)
    document = {"schema_version": 1, "sessions": sessions, "purged_at": now}
    state.write_text(json.dumps(document, separators=(",", ":")))


def child(lines: int, sessions: int, reps: int) -> dict[str, float]:
    """Measure in this process (the tree on ``sys.path``); return medians in ms."""
    tmp = Path(tempfile.mkdtemp(prefix="forge-first-call-"))
    project = tmp / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("print('hi')\n")
    (project / ".forge" / "audit").mkdir(parents=True)
    (project / ".forge" / "config.yaml").write_text("{}\n")
    os.chdir(project)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("FORGE_")}
    environ["CLAUDE_PROJECT_DIR"] = str(project)
    from forge_policy._time import iso
    from forge_policy.audit.jsonl import JsonlAuditSink

    filler = JsonlAuditSink(project / ".forge" / "audit" / "overrides.log", fsync=False)
    now = time.time()
    for start in range(0, lines, 1000):
        filler.append_many(
            {
                "kind": "seen",
                "session_id": f"other-{i % 50}",
                "tool_name": "Read",
                "outcome": "allow",
                "harness": "claude-code",
                "tool_use_id": f"toolu_{i}",
                "timestamp": iso(now - 3600 + i * 3000 / max(lines, 1)),
            }
            for i in range(start, min(start + 1000, lines))
        )
    other_sessions(project / ".forge" / "runtime" / "state.json", sessions, now)
    from forge_policy._infra.answer_first import answer_first
    from forge_policy.config.env import Config
    from forge_policy.engine.session import rebuilt_if_logged
    from forge_policy.serve.warm import Warm

    warm = Warm(Config.from_env(environ))
    evaluator = warm.evaluator
    assert evaluator is not None

    def payload(session: str) -> bytes:
        return json.dumps(
            {
                "session_id": session,
                "transcript_path": f"/home/u/.claude/projects/p/{session}.jsonl",
                "cwd": str(project),
                "permission_mode": "default",
                "hook_event_name": "PreToolUse",
                "tool_name": "Read",
                "tool_input": {"file_path": f"{project}/src/app.py"},
                "tool_use_id": "toolu_1",
            }
        ).encode()

    ongoing = str(uuid.uuid4())
    for _ in range(5):
        warm.answer(payload(ongoing))
        warm.answer(payload(str(uuid.uuid4())))
    first: list[float] = []
    first_cpu: list[float] = []
    later: list[float] = []
    later_cpu: list[float] = []
    lookup: list[float] = []
    answered: list[float] = []
    caches = bytearray(16 << 20)
    for _ in range(reps):
        cpu, start = time.thread_time(), time.perf_counter()
        text, _, _ = warm.answer(payload(str(uuid.uuid4())))
        first.append(time.perf_counter() - start)
        first_cpu.append(time.thread_time() - cpu)
        assert '"deny"' not in text
        cpu, start = time.thread_time(), time.perf_counter()
        warm.answer(payload(ongoing))
        later.append(time.perf_counter() - start)
        later_cpu.append(time.thread_time() - cpu)
        start = time.perf_counter()
        rebuilt = rebuilt_if_logged(evaluator.audit, str(uuid.uuid4()), time.time() - 86400)
        lookup.append(time.perf_counter() - start)
        assert rebuilt is None
        raw = payload(str(uuid.uuid4()))
        bytes(caches)  # a copy walks 16 MB: the CPU caches hold none of the worker's data
        with answer_first(on_error=print):
            start = time.perf_counter()
            text, _, _ = warm.answer(raw)
            answered.append(time.perf_counter() - start)
        assert '"deny"' not in text
    return {
        name: statistics.median(values) * 1000
        for name, values in {
            "first": first,
            "first_cpu": first_cpu,
            "later": later,
            "later_cpu": later_cpu,
            "lookup": lookup,
            "answered": answered,
        }.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", default="0,1000,10000")
    parser.add_argument("--sessions", default="0", help="other sessions in the state file")
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tree", action="append", default=[])
    parser.add_argument("--json", action="store_true", help="print figures and ratios as JSON")
    parser.add_argument("--child", nargs=3, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    counts = [int(n) for n in args.lines.split(",")]
    sessions = [int(n) for n in args.sessions.split(",")]
    # every line count at the first session count, every session count at the first line count
    points = [(lines, sessions[0]) for lines in counts]
    points += [(counts[0], n) for n in sessions[1:]]
    trees = [str(Path(t).resolve()) for t in args.tree] or [""]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    found: dict[tuple[str, int, int], list[dict[str, float]]] = {}
    for _ in range(args.rounds):
        for lines, others in points:
            for tree in trees:  # interleaved: noise hits every tree alike
                env = {k: v for k, v in os.environ.items() if not k.startswith("FORGE_")}
                if tree:
                    env["PYTHONPATH"] = tree
                out = subprocess.run(
                    [sys.executable, __file__, "--child", str(lines), str(others), str(args.reps)],
                    capture_output=True,
                    text=True,
                    env=env,
                    check=True,
                ).stdout
                found.setdefault((tree, lines, others), []).append(json.loads(out))

    def med(tree: str, lines: int, name: str, others: int = sessions[0]) -> float:
        return statistics.median(run[name] for run in found[(tree, lines, others)])

    if args.json:
        tree, low, high = trees[0], counts[0], counts[-1]
        names = ("first", "first_cpu", "later", "later_cpu", "lookup", "answered")
        figures = {
            f"{name}-{lines}-ms": med(tree, lines, name) for lines in counts for name in names
        }
        figures.update(
            {
                f"{name}-sessions{others}-ms": med(tree, low, name, others)
                for others in sessions[1:]
                for name in ("first", "answered")
            }
        )
        ratios = {
            "first_cpu_over_later_cpu": ratio(
                med(tree, high, "first_cpu") / med(tree, high, "later_cpu"),
                "lower",
                f"CPU of a new session's first Read allow in the worker's evaluator over a "
                f"later call's, {high:,} lines of other sessions in the log (the lookup, the "
                "state write)",
            ),
            "lookup_flat": ratio(
                med(tree, high, "lookup") / med(tree, low, "lookup"),
                "lower",
                f"the worker's audit lookup of a new session at {high:,} lines of other sessions "
                f"over at {low:,} (its session index: flat)",
            ),
        }
        if len(sessions) > 1:
            fewest, most = sessions[0], sessions[-1]
            ratios["answered_flat_sessions"] = ratio(
                med(tree, low, "answered", most) / med(tree, low, "answered", fewest),
                "lower",
                f"a new session's first Read as the worker answers it (the state write after the "
                f"answer) with {most:,} other sessions in the state file over with {fewest:,}",
                tolerance=0.5,  # 1.08-1.39 in runs a minute apart: the profile flat, the wall not
                target=1.5,
            )
        emit("bench_first_call", figures, ratios, load_before=load, trees=trees, reps=args.reps)
        return
    print(f"load average before: {load}, after: {os.getloadavg()[0]:.2f}")
    print(f"{args.rounds} rounds x {args.reps} samples, medians (ms)\n")
    print(
        "| tree | other sessions' lines | other sessions | first | first CPU | later | later CPU "
        "| first - later | lookup | answered |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for lines, others in points:
        for tree in trees:
            got = {name: med(tree, lines, name, others) for name in found[(tree, lines, others)][0]}
            print(
                f"| {tree or 'installed'} | {lines:,} | {others:,} | {got['first']:.3f} | "
                f"{got['first_cpu']:.3f} | {got['later']:.3f} | {got['later_cpu']:.3f} | "
                f"{got['first'] - got['later']:.3f} | {got['lookup']:.3f} | "
                f"{got['answered']:.3f} |"
            )


if __name__ == "__main__":
    main()
