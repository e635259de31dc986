"""Through the real Claude Code client: the agent holds the state and audit locks, and a
hard-blocked call is still refused, not run (issue 23, SPEC §9).

Before ``FORGE_HOOK_DEADLINE`` two ``flock`` holders made the hook wait 30 to 40 s, past the 30 s
timeout ``init`` writes, and a hook Claude Code times out does not block. Here the locks are
held by real ``flock`` processes for the whole run, with the hook entry exactly as ``init`` wrote
it (the warm-worker client): the destructive call must be refused and its effect must not
happen (a canary: an uncommitted change ``git reset --hard`` would throw away), and the refusal
must be the hook's own answer (the behavior's id reaches the model), not ``onFailure: "block"``
after a timeout, which an older Claude Code does not honour.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from forge_policy.testing.models import Turn

FLOCK = shutil.which("flock")
pytestmark = pytest.mark.skipif(FLOCK is None, reason="flock(1) is not installed")


@contextlib.contextmanager
def agent_holds(*locks: Path) -> Iterator[None]:
    """Each lock held by ``flock LOCK sleep 600`` (its own process group, killed after)."""
    assert FLOCK is not None
    holders = []
    try:
        for lock in locks:
            lock.parent.mkdir(parents=True, exist_ok=True)
            lock.touch()
            holders.append(
                subprocess.Popen([FLOCK, str(lock), "sleep", "600"], start_new_session=True)
            )
        for lock in locks:
            while subprocess.run([FLOCK, "-n", str(lock), "true"], check=False).returncode == 0:
                time.sleep(0.05)
        yield
    finally:
        for holder in holders:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(holder.pid, signal.SIGKILL)
            holder.wait()


@pytest.mark.parametrize("command", ["git reset --hard", "git checkout -- .", "git stash drop"])
def test_a_hard_blocked_call_is_refused_while_the_agent_holds_both_locks(
    forge_real_client: Any, command: str
) -> None:
    claude = forge_real_client("claude-code")
    canary = claude.write("canary.txt", "committed\n")
    claude.git("add", "canary.txt")
    claude.git("commit", "-qm", "canary")
    canary.write_text("uncommitted work\n")
    claude.git("stash")  # a stash entry for ``git stash drop`` to lose
    canary.write_text("uncommitted work\n")
    root = claude.project / ".forge"
    with agent_holds(root / "runtime" / "state.json.lock", root / "audit" / "overrides.log.lock"):
        run = claude.run([Turn.call("Bash", command=command), Turn.say("done")])
    assert run.denied and not run.ran, run.describe()
    # refused by the hook's answer, within its deadline, not by a timeout's onFailure
    assert run.model_saw("no-destructive-git"), run.describe()
    assert canary.read_text() == "uncommitted work\n"
    assert claude.git("stash", "list").strip()
