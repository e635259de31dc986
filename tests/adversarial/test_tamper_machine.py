"""Random interleavings of agent tampering and normal events (issue 10).

:class:`TamperMachine` sends the same random events to two evaluators over one catalog: the
*twin* keeps its state and audit in memory, untouched; the *target* uses the file store and the
JSONL log the hook uses, in a temporary ``.forge``, and between events an agent tampers with
them the ways issue 10 lists: garbage, an unknown schema version or a symlink over
``state.json``, the state deleted, its lock held past the timeout, the last audit records
dropped, the log deleted with its anchor. The twin is the engine the reference model of
``test_stateful_invariants.py`` checks; this machine checks that tampering changes nothing an
agent could gain from:

- while the log is intact, every decision of the target is the twin's (same level, same
  behavior) — no count lost, no reset, no fallback to a gentler level;
- every violation is in the target's log;
- ``verify()`` passes until the agent drops or deletes log records, and fails from then on while
  any evidence of it is left: the anchor in the lock file (records dropped from the end), a
  session's checkpoint in the state (the log deleted with its anchor), or the ``recovery`` or
  ``integrity`` record the next append wrote — that last one for good. (Deleting the log, its
  anchor and every checkpoint leaves no evidence: a local chain cannot prove more; the README
  says so and names the remote audit store.)
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import threading
from pathlib import Path

from hypothesis import note, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import forge_policy as fp
from forge_policy._infra.filelock import FileLock
from forge_policy.audit.jsonl import JsonlAuditSink
from forge_policy.audit.memory import MemoryAuditSink
from forge_policy.catalog.loader import load_catalog
from forge_policy.ops.admin import audit_checkpoints, verify_audit
from forge_policy.stores import FileStore, MemoryStore
from tests.helpers import behavior_yaml, write_catalog

T0 = 1_800_000_000.0
SESSIONS = ("s1", "s2")


def _rule(behavior_id: str, word: str, default: str, escalation: str = "") -> str:
    return behavior_yaml(
        behavior_id,
        default_level=default,
        triggers=(
            "    - event: PreToolUse\n      matcher: Bash\n      conditions:\n"
            f"        - {{field: command, operator: contains, value: {word}}}\n"
        ),
        escalation=escalation,
    )


CATALOG = {
    # nudge, then warning, then soft_block, then hard_block: every level a reset would lower
    "climber": _rule(
        "climber",
        "climb",
        "nudge",
        "    escalation:\n      - after: 1\n        level: warning\n"
        "      - after: 2\n        level: soft_block\n"
        "      - after: 4\n        level: hard_block\n",
    ),
    "wall": _rule("wall", "wall", "hard_block"),
}
STATE_TAMPERING = ("garbage", "version", "delete", "symlink")
LOG_TAMPERING = ("drop_last", "delete_with_anchor")


class TamperMachine(RuleBasedStateMachine):
    @initialize()
    def build(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="forge-tamper-"))
        catalog = load_catalog(write_catalog(self.dir / "behaviors", CATALOG))
        self.now = T0
        self.twin = fp.Evaluator(
            catalog, store=MemoryStore(), audit=MemoryAuditSink(), clock=lambda: self.now
        )
        self.store = FileStore(self.dir / "runtime" / "state.json", lock_timeout=0.05)
        self.log = JsonlAuditSink(self.dir / "audit" / "overrides.log", fsync=False)
        self.target = fp.Evaluator(catalog, store=self.store, audit=self.log, clock=self.clock)
        self.sent = 0
        self.log_tampered = False
        self.anchor_evidence = False  # the lock file's head is past the log's end
        self.checkpoint_evidence = False  # a stored session saw records the log lost
        self.violations: dict[str, int] = {}
        self.holder: tuple[threading.Event, threading.Thread] | None = None

    def clock(self) -> float:
        return self.now

    def teardown(self) -> None:
        self.release_lock()
        shutil.rmtree(self.dir, ignore_errors=True)

    # normal events

    @rule(sid=st.sampled_from(SESSIONS), word=st.sampled_from(["climb", "wall", "ls"]))
    def send(self, sid: str, word: str) -> None:
        self.now += 1
        self.sent += 1
        # every command differs, so no identical retry is an override by retry
        event = fp.Event(
            "PreToolUse",
            sid,
            tool_name="Bash",
            tool_input={"command": f"{word} {self.sent}"},
            tool_use_id=f"toolu_{self.sent}",
        )
        expected = self.twin.evaluate(event)
        got = self.target.evaluate(event)
        note(f"{sid} {word}: twin {expected.level.label}, target {got.level.label}")
        if word != "ls":
            self.violations[sid] = self.violations.get(sid, 0) + 1
        if not self.log_tampered:
            assert got.level is expected.level, got.diagnostics
            assert (got.blocking and got.blocking.behavior_id) == (
                expected.blocking and expected.blocking.behavior_id
            )
        self.release_lock()

    # the agent's tampering

    @rule(how=st.sampled_from(STATE_TAMPERING))
    def tamper_with_the_state(self, how: str) -> None:
        state = self.dir / "runtime" / "state.json"
        if not state.exists():
            return
        with contextlib.suppress(FileNotFoundError):
            state.unlink()
        self.checkpoint_evidence = False  # the checkpoints went with the state
        if how == "garbage":
            state.write_text("{ not json")
        elif how == "version":
            state.write_text(json.dumps({"schema_version": 99, "sessions": {}}))
        elif how == "symlink":
            decoy = self.dir / "decoy.json"
            decoy.write_text(json.dumps({"sessions": {}}))
            state.symlink_to(decoy)

    @rule()
    def hold_the_state_lock(self) -> None:
        """A process of the agent holds ``state.json.lock`` over the next event."""
        if self.holder is not None:
            return
        (self.dir / "runtime").mkdir(parents=True, exist_ok=True)
        taken, done = threading.Event(), threading.Event()

        def hold() -> None:
            with FileLock(str(self.dir / "runtime" / "state.json.lock"), timeout=5):
                taken.set()
                done.wait(10)

        thread = threading.Thread(target=hold, daemon=True)
        thread.start()
        assert taken.wait(5)
        self.holder = (done, thread)

    def release_lock(self) -> None:
        if self.holder is not None:
            done, thread = self.holder
            done.set()
            thread.join(5)
            self.holder = None

    @precondition(lambda self: (self.dir / "audit" / "overrides.log").exists())
    @rule(how=st.sampled_from(LOG_TAMPERING))
    def tamper_with_the_log(self, how: str) -> None:
        log = self.dir / "audit" / "overrides.log"
        lines = log.read_bytes().splitlines(keepends=True)
        if not lines:
            return
        if how == "drop_last":
            log.write_bytes(b"".join(lines[:-1]))
            self.anchor_evidence = True
        else:
            log.unlink()
            (self.dir / "audit" / "overrides.log.lock").unlink(missing_ok=True)
            self.anchor_evidence = False
        self.checkpoint_evidence = bool(audit_checkpoints(self.target))
        self.log_tampered = True

    # checks

    @invariant()
    def the_log_holds_every_violation_until_tampered_and_verify_says_so(self) -> None:
        if not hasattr(self, "target"):
            return
        report = verify_audit(self.target)
        if not self.log_tampered:
            assert report.ok, report.problems
        noted = any(
            r.get("kind") == "integrity" or (r.get("kind") == "recovery" and "head_seq" in r)
            for r in self.log.records()
        )
        if noted or self.anchor_evidence or self.checkpoint_evidence:
            assert not report.ok
        if not self.log_tampered:
            logged: dict[str, int] = {}
            for record in self.log.records():
                if record.get("kind") in ("block", "violation"):
                    sid = record["session_id"]
                    logged[sid] = logged.get(sid, 0) + 1
            assert logged == {s: n for s, n in self.violations.items() if n}


TestTampering = TamperMachine.TestCase
TestTampering.settings = settings(stateful_step_count=40, deadline=None)
