"""Hook wall time while the agent holds the state and audit locks (issue 23, SPEC §9).

An agent can hold ``.forge/runtime/state.json.lock`` and ``.forge/audit/overrides.log.lock``
with two ``flock … sleep`` processes started from its own Bash tool. Each sample here does the
same, then runs the real hook process, as Claude Code does, once per case:

- ``hard_block``: ``rm -rf ~`` (refused: a hard block waits at most 2 s for the state lock,
  none for the audit lock; its record goes to the audit spool);
- ``soft_block``: ``npm install left-pad`` (decided statelessly at the deadline on the session
  rebuilt from the log, audited ``degraded``);
- ``allow``: ``ls`` (it waits for the state lock until the deadline, then passes);

through both hook commands: ``forge-policy hook`` and the command ``init`` writes
(``python -I -S …/worker/launch.py``, the warm-worker client). The figure that matters is each
case's largest wall time against ``FORGE_HOOK_DEADLINE`` (10 s by default) and Claude Code's
30 s timeout that ``init`` writes; the answer of each sample is checked, not only timed.

Usage: ``python tests/benchmarks/bench_hook_deadline.py [--runs 3] [--deadline 10]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

CASES = {
    "hard_block": ("rm -rf ~", "deny"),
    "soft_block": ("npm install left-pad", "ask"),
    "allow": ("ls", "allow"),
}


@contextlib.contextmanager
def held(*locks: Path) -> Iterator[None]:
    """Hold each lock with ``flock LOCK sleep 600`` in its own process group."""
    flock = shutil.which("flock")
    if flock is None:
        raise SystemExit("flock(1) is not installed")
    holders = []
    try:
        for lock in locks:
            lock.parent.mkdir(parents=True, exist_ok=True)
            lock.touch()
            holders.append(
                subprocess.Popen([flock, str(lock), "sleep", "600"], start_new_session=True)
            )
        for lock in locks:
            while subprocess.run([flock, "-n", str(lock), "true"], check=False).returncode == 0:
                time.sleep(0.05)
        yield
    finally:
        for holder in holders:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(holder.pid, signal.SIGKILL)
            holder.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--deadline", type=float, default=10.0)
    args = parser.parse_args()
    import forge_policy

    launch = str(Path(forge_policy.__file__).parent / "worker" / "launch.py")
    script = Path(sys.executable).with_name("forge-policy")
    hooks = {
        "forge-policy hook": [str(script), "hook"],
        "init command": [sys.executable, "-I", "-S", launch],
    }
    print(
        f"machine: {platform.machine()} {platform.processor() or ''} {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}"
    )
    print(f"FORGE_HOOK_DEADLINE={args.deadline:g}; two agent-held flocks (state + audit)")
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGE_", "CLAUDE_"))}
        env.update(
            CLAUDE_PROJECT_DIR=str(project),
            FORGE_HOOK_DEADLINE=f"{args.deadline:g}",
            XDG_CACHE_HOME=str(Path(tmp) / "xdg"),
        )
        root = project / ".forge"
        locks = (root / "runtime" / "state.json.lock", root / "audit" / "overrides.log.lock")

        def run(hook: list[str], command: str, session: str) -> tuple[float, str]:
            payload = {
                "session_id": session,
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": command},
                "cwd": str(project),
            }
            start = time.perf_counter()
            result = subprocess.run(
                hook,
                input=json.dumps(payload).encode(),
                capture_output=True,
                env=env,
                cwd=project,
                timeout=120,
            )
            wall = time.perf_counter() - start
            out = result.stdout.decode().strip()
            answer = json.loads(out) if out else {}
            decided = answer.get("hookSpecificOutput", {}).get("permissionDecision", "allow")
            return wall, decided

        run(hooks["forge-policy hook"], "ls", "warm-up")  # the catalog cache, as a project has it
        print(f"{'hook':<18} {'case':<11} {'answer':<7} {'median s':>9} {'max s':>7}  runs")
        worst = 0.0
        wrong = 0
        for name, hook in hooks.items():
            for case, (command, expected) in CASES.items():
                walls = []
                for i in range(args.runs):
                    with held(*locks):
                        wall, decided = run(hook, command, f"{case}-{name}-{i}")
                    walls.append(wall)
                    wrong += decided != expected
                walls.sort()
                worst = max(worst, walls[-1])
                print(
                    f"{name:<18} {case:<11} {expected:<7} {walls[len(walls) // 2]:>9.2f} "
                    f"{walls[-1]:>7.2f}  {args.runs}"
                )
        print(
            f"largest wall time {worst:.2f} s (deadline {args.deadline:g} s, harness timeout 30 s)"
            "; "
            f"wrong answers: {wrong}"
        )
    return 1 if wrong or worst > args.deadline else 0


if __name__ == "__main__":
    sys.exit(main())
