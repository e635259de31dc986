"""No increment lost when many hook processes hit one session at once (issue 10 route 6).

64 real ``forge-policy hook`` processes are started and left waiting on stdin until all of them
have imported, then every one is handed a counted call of the same session at once — the worst
case Claude Code produces (parallel tool calls, several sessions' hooks, a busy machine). With
the default settings every increment must land: a lock wait past its timeout decided
statelessly and lost the count (27 of 96 with the file store, 17 of 96 with SQLite on main
before the timeout fitted the harness's hook timeout and the allow path left the lock).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hookrun import HOOK, Project

PROCESSES = 64


@pytest.mark.slow
@pytest.mark.parametrize("store", ["file", "sqlite"])
def test_sixty_four_parallel_hooks_lose_no_increment(tmp_path: Path, store: str) -> None:
    project = Project(tmp_path)
    # the hook's deadline (SPEC §9) cuts lock waits short and decides the rest statelessly,
    # failing closed: this test asks for every increment, so it gives the largest deadline
    project.env["FORGE_HOOK_DEADLINE"] = "20"
    if store == "sqlite":
        project.env["FORGE_STORE"] = f"sqlite:{project.root / 'runtime' / 'state.db'}"
    project.run(project.bash("ls"))  # the catalog cache, as a warm project has it
    procs = [
        subprocess.Popen(
            HOOK,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=project.env,
            cwd=project.dir,
        )
        for _ in range(PROCESSES)
    ]
    try:
        time.sleep(2.0)  # let them all import and block on stdin: then they race for real
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(project.bash("echo nudge-me")).encode())
            proc.stdin.close()
        answers = [(proc.stdout.read(), proc.stderr.read(), proc.wait()) for proc in procs]  # type: ignore[union-attr]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
    assert [code for _, _, code in answers] == [0] * PROCESSES
    assert [err for _, err, _ in answers if err.strip()] == []  # nothing decided statelessly
    assert all(b"nudger" in out for out, _, _ in answers)
    assert project.counter("nudger") == PROCESSES
