"""Latency of ``forge-policy serve`` per request on loopback, keep-alive (http.client).

Starts the real ``forge-policy serve`` in a subprocess against a temporary project, then sends
``--requests`` hook payloads over one kept-alive connection per path and reports p50/p99/max:

- ``allow``: a ``Read`` that no behavior objects to (nothing is written);
- ``violation``: ``git push --force`` (a hard block: the session counter is written and a block
  record is appended to the hash-chained audit log).

Each path runs with the default durable file store (``FORGE_STORE=file``: state and audit are
fsynced) and with ``FORGE_STORE=memory`` (the evaluator and HTTP cost alone). Goals: p50 <= 1 ms,
p99 <= 5 ms. ``--command N`` also times N runs of the plain command hook for comparison.

Usage: ``.venv/bin/python tests/benchmarks/serve_latency.py [--requests 2000] [--command 30]``
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FORGE = Path(sys.executable).parent / "forge-policy"
EVENTS = {
    "allow": {"tool_name": "Read", "tool_input": {"file_path": "/project/src/app.py"}},
    "violation": {"tool_name": "Bash", "tool_input": {"command": "git push --force"}},
}


def _env(root: Path, store: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORGE_")}
    env.update(FORGE_ROOT=str(root), FORGE_STORE=store)
    return env


def _payload(path: str, session: str, n: int) -> bytes:
    event = {
        "session_id": session,
        "hook_event_name": "PreToolUse",
        "tool_use_id": f"toolu_{n}",
        "cwd": "/project",
        **EVENTS[path],
    }
    return json.dumps(event).encode()


def _percentile(sorted_values: list[float], q: float) -> float:
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index]


def measure(port: int, token: str, path: str, requests: int) -> dict[str, float]:
    """Latencies in ms of ``requests`` POSTs of one path over one kept-alive connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    session = f"bench-{path}-{os.getpid()}-{time.time_ns()}"
    for n in range(200):  # warm-up: connection, caches, first state write
        conn.request("POST", "/hook", _payload(path, session, n), headers)
        conn.getresponse().read()
    samples: list[float] = []
    for n in range(requests):
        body = _payload(path, session, n)
        start = time.perf_counter_ns()
        conn.request("POST", "/hook", body, headers)
        response = conn.getresponse()
        answer = response.read()
        samples.append((time.perf_counter_ns() - start) / 1e6)
        assert response.status == 200, response.status
        assert (answer == b"") == (path == "allow"), answer[:80]
    conn.close()
    samples.sort()
    return {
        "p50": _percentile(samples, 0.50),
        "p99": _percentile(samples, 0.99),
        "max": samples[-1],
        "mean": sum(samples) / len(samples),
    }


def run_server(root: Path, store: str, requests: int) -> dict[str, dict[str, float]]:
    """Start ``forge-policy serve`` for one store, measure both paths, stop it."""
    env = _env(root, store)
    subprocess.run(
        [str(FORGE), "init", "--serve", "--port", "0"],
        cwd=root.parent,
        env=env,
        check=True,
        capture_output=True,
    )
    server = subprocess.Popen(
        [str(FORGE), "serve", "--port", "0"],
        cwd=root.parent,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        found = re.search(r"127\.0\.0\.1:(\d+)/hook", server.stderr.readline())
        assert found, "serve did not start"
        token = (root / "runtime" / "serve.token").read_text().strip()
        return {path: measure(int(found.group(1)), token, path, requests) for path in EVENTS}
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=10)
        assert server.returncode == 0, server.returncode


def command_hook(root: Path, runs: int) -> dict[str, float]:
    """Wall time in ms of the plain command hook (one process per call), allow path."""
    env = _env(root, "file")
    samples = []
    for n in range(runs):
        start = time.perf_counter_ns()
        subprocess.run(
            [str(FORGE), "hook"],
            input=_payload("allow", "command", n),
            env=env,
            cwd=root.parent,
            capture_output=True,
            check=True,
        )
        samples.append((time.perf_counter_ns() - start) / 1e6)
    samples.sort()
    return {"p50": _percentile(samples, 0.5), "p99": _percentile(samples, 0.99)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=1, help="repeat everything N times")
    parser.add_argument("--command", type=int, default=0, metavar="N")
    args = parser.parse_args()
    print(
        f"machine: {os.cpu_count()} cores, {platform.machine()}, "
        f"{platform.python_implementation()} {platform.python_version()}, {platform.system()}, "
        f"load average {os.getloadavg()[0]:.1f} at the start"
    )
    print(f"{args.requests} requests per path, keep-alive, after 200 warm-up requests\n")
    print("| round | store | path | p50 | p99 | max | mean |")
    print("|---|---|---|---|---|---|---|")
    for round_ in range(1, args.rounds + 1):
        for store in ("file", "memory"):
            with tempfile.TemporaryDirectory() as folder:
                results = run_server(Path(folder) / ".forge", store, args.requests)
            for path, r in results.items():
                print(
                    f"| {round_} | {store} | {path} | {r['p50']:.3f} ms | {r['p99']:.3f} ms | "
                    f"{r['max']:.2f} ms | {r['mean']:.3f} ms |",
                    flush=True,
                )
    if args.command:
        with tempfile.TemporaryDirectory() as folder:
            r = command_hook(Path(folder) / ".forge", args.command)
        print(
            f"\ncommand hook (one process per call, allow, {args.command} runs): "
            f"p50 {r['p50']:.1f} ms, p99 {r['p99']:.1f} ms"
        )


if __name__ == "__main__":
    main()
