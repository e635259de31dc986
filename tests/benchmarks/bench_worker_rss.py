"""Resident memory of the warm worker after 10,000 and after 100,000 hook events (target: the
second at most 1.2x the first).

Not collected by pytest. Run (a non-editable install is what users get):

    python3 -m venv /tmp/v && /tmp/v/bin/pip install -q . && \\
        /tmp/v/bin/python tests/benchmarks/bench_worker_rss.py [--events 100000] [--json]

A temporary project gets ``forge-policy init``; one call of the hook command it writes starts the
project's worker (built-in catalog, the default durable file store, the JSONL audit log). Then
this process feeds the worker events through the real socket protocol, as the hook client does
(:mod:`forge_policy.worker.client`: ``exchange`` of an ``encode_request`` with the client's
identity, deadline, working directory and variables): one connection per event, since the
protocol carries one request per connection. Spawning one client process per event would take
hours for 100,000 events and would measure the same worker. The worker's ``VmRSS`` (and
``VmHWM``, its peak) is read from ``/proc/<pid>/status`` after 1,000 events (warm), after
``--events``/10 and after ``--events``.

Traffic, in cycles of 10: 4 ``Read`` (allow; after a ``Write`` it sets search-first's flag
again), 2 ``Write`` (search-first consumes the flag), 2 Bash ``ls`` (allow), one ``npm install
left-pad`` (risky-commands: a soft block; the identical call 10 events later, within the override
window, is an override, audited) and one ``git push --force`` (a hard block: an audit record,
fsynced). Sessions take turns in blocks of 500 events over a pool of 20, so from 10,000 events
on the store holds the same 20 sessions and what grows from the first checkpoint to the second
is each session's history (5,000 events, 250 overrides each by 100,000), not their number.

``--in-process`` is the documented fallback where the socket cannot be used (not Linux): the
same events go to :class:`forge_policy.serve.warm.Warm` (the handler the worker wraps) in this
process, and this process's RSS is measured; the output says which was measured.
``--json`` prints the figures and the ratios run_all.py compares (see benchjson.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchjson import emit, ratio  # this folder's shared --json format
from worker_latency import stop_worker, written_command

SESSION_EVENTS = 500
SESSIONS = 20
WARM = 1_000


def payload(k: int, cwd: str) -> bytes:
    """Event number ``k`` of the traffic (see the module docstring)."""
    session = f"rss-session-{(k // SESSION_EVENTS) % SESSIONS:02d}"
    slot = k % 10
    if slot in (0, 2, 4, 6):
        tool, tool_input = "Read", {"file_path": f"{cwd}/src/app.py"}
    elif slot in (1, 5):
        tool, tool_input = "Write", {"file_path": f"{cwd}/src/m{k % 7}.py", "content": "X = 1\n"}
    elif slot in (3, 7):
        tool, tool_input = "Bash", {"command": "ls -la"}
    elif slot == 8:
        tool, tool_input = "Bash", {"command": "npm install left-pad"}
    else:
        tool, tool_input = "Bash", {"command": "git push --force origin main"}
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": f"/home/u/.claude/projects/p/{session}.jsonl",
            "cwd": cwd,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": f"toolu_{k:024d}",
        }
    ).encode()


def status_of(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` of ``pid`` in KiB."""
    out: dict[str, int] = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as file:
        for line in file:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                out[name] = int(value.split()[0])
    return out


def checkpoints(events: int) -> list[int]:
    return sorted({min(WARM, events), events // 10, events})


def over_socket(python: str, events: int, say: Any) -> dict[str, Any]:
    """Drive the project's real worker; return RSS at the checkpoints and timings."""
    from forge_policy.worker import client, protocol

    with tempfile.TemporaryDirectory(prefix="forge-rss-") as tmp:
        project = Path(tmp) / "project"
        (project / "src").mkdir(parents=True)
        (project / "src" / "app.py").write_text("print('hi')\n")
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("FORGE_", "DISABLE_")) and k != "PYTHONDONTWRITEBYTECODE"
        }
        env.update(CLAUDE_PROJECT_DIR=str(project), XDG_CACHE_HOME=str(Path(tmp) / "cache"))
        # what the committed launcher runs on this machine: python -I -S …/launch.py
        _line, _spawned, command = written_command(python, project, env)
        launch = Path(command[-1])
        import subprocess

        root = project / ".forge"
        folder = root / "runtime" / "worker"
        try:
            subprocess.run(
                command,
                input=payload(0, str(project)),
                env=env,
                cwd=project,
                check=True,
                capture_output=True,
            )  # no worker answers: this call starts one, and decides itself
            deadline = time.monotonic() + 30
            identity = protocol.own_identity(str(launch.with_name("client.py")).encode())
            variables = protocol.relevant({k.encode(): v.encode() for k, v in env.items()})
            cwd = os.path.realpath(project).encode()
            slot = folder / protocol.fingerprint(cwd, variables).decode()
            pid_file = slot / "worker.pid"
            while not (pid_file.exists() and (slot / "worker.sock").exists()):
                if time.monotonic() > deadline:
                    raise SystemExit("bench_worker_rss: the worker did not start")
                time.sleep(0.05)
            pid = int(pid_file.read_text())
            sock_folder = str(slot).encode()
            marks = checkpoints(events)
            rss: dict[int, dict[str, int]] = {0: status_of(pid)}
            started = time.perf_counter()
            refused = 0
            for k in range(1, events + 1):
                request = protocol.HookRequest(
                    identity, time.monotonic() + 10.0, cwd, [], payload(k, str(project)), variables
                )
                status, out, *_ = client.exchange(sock_folder, request.encode(), 10.0)
                if status != b"A":
                    refused += 1
                    if refused == 1:
                        say(f"worker refused: {out.decode(errors='replace')}")
                    if refused > 10:
                        raise SystemExit("bench_worker_rss: the worker refuses the requests")
                if k in marks:
                    rss[k] = status_of(pid)
                    say(
                        f"  {k:>7,} events: VmRSS {rss[k]['VmRSS'] / 1024:.1f} MiB "
                        f"({time.perf_counter() - started:.0f} s)",
                        flush=True,
                    )
            elapsed = time.perf_counter() - started
            state = root / "runtime" / "state.json"
            log = root / "audit" / "overrides.log"
            return {
                "measured": "worker process over its Unix socket",
                "pid": pid,
                "rss": rss,
                "seconds": elapsed,
                "refused": refused,
                "state_bytes": state.stat().st_size if state.exists() else 0,
                "audit_bytes": log.stat().st_size if log.exists() else 0,
                "command": " ".join(command),
            }
        finally:
            stop_worker(root)


def in_process(events: int, say: Any) -> dict[str, Any]:
    """The fallback: the worker's handler in this process."""
    from forge_policy.config.env import Config
    from forge_policy.serve.warm import Warm

    with tempfile.TemporaryDirectory(prefix="forge-rss-") as tmp:
        project = Path(tmp) / "project"
        (project / "src").mkdir(parents=True)
        (project / "src" / "app.py").write_text("print('hi')\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGE_", "DISABLE_"))}
        env.update(CLAUDE_PROJECT_DIR=str(project), XDG_CACHE_HOME=str(Path(tmp) / "cache"))
        warm = Warm(Config.from_env(env, cwd=str(project)))
        marks = checkpoints(events)
        pid = os.getpid()
        rss: dict[int, dict[str, int]] = {0: status_of(pid)}
        started = time.perf_counter()
        for k in range(1, events + 1):
            warm.answer(payload(k, str(project)))
            if k in marks:
                rss[k] = status_of(pid)
                say(f"  {k:>7,} events: VmRSS {rss[k]['VmRSS'] / 1024:.1f} MiB", flush=True)
        return {
            "measured": "Warm handler in the benchmark process (fallback)",
            "pid": pid,
            "rss": rss,
            "seconds": time.perf_counter() - started,
            "refused": 0,
            "state_bytes": 0,
            "audit_bytes": 0,
            "command": "",
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=100_000, help="events in all (100000)")
    parser.add_argument("--python", default=sys.executable, help="interpreter of the install")
    parser.add_argument("--in-process", action="store_true", help="the fallback (see above)")
    parser.add_argument("--json", action="store_true", help="print figures and ratios as JSON")
    args = parser.parse_args()
    say = (lambda *a, **k: print(*a, file=sys.stderr, **k)) if args.json else print
    load = os.getloadavg()[0]
    import _socket

    fallback = args.in_process or not hasattr(_socket, "SO_PEERCRED")
    say(f"feeding {args.events:,} events ({'in-process fallback' if fallback else 'socket'})")
    result = (
        in_process(args.events, say)
        if fallback
        else over_socket(str(Path(args.python).absolute()), args.events, say)
    )
    marks = checkpoints(args.events)
    low, high = marks[-2], marks[-1]
    rss = result["rss"]
    growth = rss[high]["VmRSS"] / rss[low]["VmRSS"]
    figures: dict[str, float] = {f"rss-{k}-kib": v["VmRSS"] for k, v in rss.items()}
    figures.update({f"hwm-{k}-kib": v["VmHWM"] for k, v in rss.items()})
    figures["events-per-s"] = args.events / result["seconds"]
    figures["refused"] = result["refused"]
    figures["state-bytes"] = result["state_bytes"]
    figures["audit-bytes"] = result["audit_bytes"]
    compared = {
        f"rss_{high}_over_{low}": ratio(
            growth,
            "lower",
            f"{result['measured']}: VmRSS after {high:,} events over after {low:,} "
            "(issue 9: <= 1.2x)",
        ),
        "refused_requests": ratio(result["refused"], "zero", "requests the worker refused"),
    }
    if args.json:
        emit(
            "bench_worker_rss",
            figures,
            compared,
            measured=result["measured"],
            events=args.events,
            hook_command=result["command"],
            load_before=load,
        )
        return
    print(
        f"\nMachine: {os.cpu_count()} cores, {platform.machine()}, "
        f"{platform.python_implementation()} {platform.python_version()}, {platform.system()}, "
        f"load average {load:.2f} at the start"
    )
    print(f"measured: {result['measured']} (pid {result['pid']})")
    if result["command"]:
        print(f"hook command (written by init): {result['command']}")
    print(
        f"{args.events:,} events in {result['seconds']:.0f} s "
        f"({args.events / result['seconds']:,.0f} events/s)\n"
    )
    print("| events | VmRSS | VmHWM |")
    print("|---|---|---|")
    for k, v in rss.items():
        print(f"| {k:,} | {v['VmRSS'] / 1024:.1f} MiB | {v['VmHWM'] / 1024:.1f} MiB |")
    print(f"\nVmRSS after {high:,} over after {low:,}: {growth:.3f}x (target <= 1.2x)")
    print(f"state.json {result['state_bytes']:,} B, audit log {result['audit_bytes']:,} B")


if __name__ == "__main__":
    main()
