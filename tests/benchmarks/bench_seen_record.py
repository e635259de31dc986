"""What the ``seen`` audit record (one per decided tool call, :mod:`forge_policy.ops.coverage`)
costs on the warm path: the hook command ``init`` writes, worker warm, in two projects side by
side — one with ``coverage: false`` in ``.forge/config.yaml`` (no record), one with the default
(the record appended, fsynced, to the hash-chained JSONL log) — interleaved sample by sample, a
fresh session per sample; then the evaluator alone in-process (JSONL sink, fsync on) with
``record_calls`` off and on, and the bytes one record adds to the log.

Usage: ``python tests/benchmarks/bench_seen_record.py [--runs 60] [--python PY]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from worker_latency import payload, stop_worker, timed, written_command

KINDS = ("allow", "hard_block")
PROBE = r"""
import statistics, sys, tempfile, time, uuid
import forge_policy as fp
from forge_policy.audit.jsonl import JsonlAuditSink
runs = int(sys.argv[1])
folder = tempfile.mkdtemp()
evaluators = {
    on: fp.Evaluator(fp.builtin_catalog(), audit=JsonlAuditSink(f"{folder}/{on}/overrides.log"),
                     record_calls=on)
    for on in (False, True)
}
samples = {False: [], True: []}
for i in range(runs):
    for on, ev in evaluators.items():
        event = fp.Event("PreToolUse", str(uuid.uuid4()), tool_name="Read",
                         tool_input={"file_path": "/p/src/app.py"}, tool_use_id=f"toolu_{i}")
        start = time.perf_counter()
        ev.evaluate(event)
        samples[on].append(time.perf_counter() - start)
log = open(f"{folder}/True/overrides.log", "rb").read().splitlines()
print(statistics.median(samples[False]) * 1e3, statistics.median(samples[True]) * 1e3,
      sum(map(len, log)) / len(log))
"""


def project_of(base: Path, name: str, python: str, off: bool) -> tuple[list[str], dict[str, str]]:
    project = base / name
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("print('hi')\n")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("FORGE_", "DISABLE_")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(CLAUDE_PROJECT_DIR=str(project), XDG_CACHE_HOME=str(base / f"cache-{name}"))
    # the committed entry names the project's launcher: run it as Claude Code does (the exec
    # form spawned with ${CLAUDE_PROJECT_DIR} substituted, no shell), CLAUDE_PROJECT_DIR set
    _line, client, _launched = written_command(python, project, env)
    if off:
        config = project / ".forge" / "config.yaml"
        text = config.read_text() if config.exists() else ""
        config.write_text(text + "coverage: false\n")
    return client, env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=60, help="samples per project and event")
    parser.add_argument("--python", default=sys.executable, help="interpreter of the venv to test")
    args = parser.parse_args()
    python = str(Path(args.python).absolute())
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    samples: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="forge-seen-bench-") as tmp:
        base = Path(tmp)
        projects = {
            "off": project_of(base, "off", python, True),
            "on": project_of(base, "on", python, False),
        }
        try:
            for _ in range(5):  # warm-up: bytecode, catalog cache, state file, the workers
                for client, env in projects.values():
                    for kind in KINDS:
                        timed(client, payload(kind, env["CLAUDE_PROJECT_DIR"]), env)
                time.sleep(0.2)
            for _ in range(args.runs):
                for kind in KINDS:
                    for name, (client, env) in projects.items():
                        data = payload(kind, env["CLAUDE_PROJECT_DIR"])
                        samples.setdefault(f"{name} {kind}", []).append(timed(client, data, env)[0])
            logs = {
                name: Path(env["CLAUDE_PROJECT_DIR"], ".forge", "audit", "overrides.log")
                for name, (_, env) in projects.items()
            }
            kinds = {
                name: [json.loads(line)["kind"] for line in log.read_text().splitlines()]
                for name, log in logs.items()
            }
        finally:
            for _, env in projects.values():
                stop_worker(Path(env["CLAUDE_PROJECT_DIR"]) / ".forge")
    probe = subprocess.run(
        [python, "-c", PROBE, str(args.runs * 4)], capture_output=True, text=True, check=True
    ).stdout.split()
    print(f"machine: {os.cpu_count()} cores, {platform.machine()}, {platform.system()}")
    print(f"python: {python} ({platform.python_implementation()} {platform.python_version()})")
    print(f"load average before the run: {load}")
    print(f"runs: {args.runs} per project and event, interleaved, a fresh session each\n")
    print("| event | coverage: false | coverage: true (seen record) | on / off |")
    print("|---|---|---|---|")
    for kind in KINDS:
        off = statistics.median(samples[f"off {kind}"])
        on = statistics.median(samples[f"on {kind}"])
        print(
            f"| {kind} (warm worker) | {off * 1e3:.1f} ms | {on * 1e3:.1f} ms | {on / off:.3f}x |"
        )
    off_ms, on_ms, line = (float(x) for x in probe)
    print(
        f"\nevaluator alone (Read, JSONL sink with fsync, median of {args.runs * 4}): "
        f"{off_ms:.3f} ms off, {on_ms:.3f} ms on (+{on_ms - off_ms:.3f} ms)"
    )
    print(f"one seen record: {line:.0f} bytes in the JSONL log (hash chain included)")
    for name, found in kinds.items():
        counts = {k: found.count(k) for k in sorted(set(found))}
        print(f"records in the '{name}' project's log: {counts}")


if __name__ == "__main__":
    main()
