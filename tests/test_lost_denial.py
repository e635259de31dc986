"""A warm denial's audit records are fsynced after its answer
(:mod:`forge_policy._infra.answer_first`): what a power cut in between can lose is that call
whole. This proves the claim the design rests on: a session that lost a denied call decides every
later call exactly as the session in which the agent never made it, and its log verifies.

The crash is real where it can be: a forked writer answers the call inside an answer-first scope
and exits before the scope runs anything handed to it (no fsync, no state write, locks released
by the kernel). What only a power cut does, dropping the bytes written but not fsynced, is done
by truncating the log to its size before the call; the lock file's head anchor moves only after
the fsync, so the writer never moved it. Then both sessions go on with a new evaluator, as after
a reboot."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from helpers import Clock, bash, behavior_yaml, write_catalog
from hookrun import rule
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import forge_policy as fp
from forge_policy._infra.answer_first import answer_first
from forge_policy.engine.evaluator import _lets_nothing_run
from forge_policy.stores import FileStore

if sys.platform == "win32" or not hasattr(os, "fork"):  # pragma: no cover - POSIX runs it
    pytest.skip("the crashed writer is a forked process", allow_module_level=True)

CATALOG = {
    "nudger": rule("nudger", "nudge", "nudge-me"),
    "softy": rule("softy", "soft_block", "soft-me"),
    "asker": rule("asker", "soft_block", "ask-me", override="user"),
    "hardy": rule("hardy", "hard_block", "hard-me"),
    "climber": behavior_yaml(
        "climber",
        default_level="nudge",
        triggers="    - event: PreToolUse\n      matcher: Bash\n      conditions:\n"
        "        - {field: command, operator: contains, value: climb-me}\n",
        escalation="    escalation:\n      - {after: 2, level: soft_block}\n"
        "      - {after: 4, level: hard_block}\n",
    ),
}
COMMANDS = ["nudge-me", "soft-me", "ask-me", "hard-me", "climb-me", "ls"]


class Session:
    """One project's evaluator over the file store and the JSONL log, on its own clock."""

    def __init__(self, folder: Path, clock: Clock) -> None:
        self.folder = folder
        self.clock = clock
        self.log = folder / "audit" / "overrides.log"
        self.catalog = fp.load_catalog(write_catalog(folder / "behaviors", CATALOG))
        # the log's first append is durable before its answer (its folder entry with it): a
        # log that exists is the case where a denial's fsync follows the answer
        fp.JsonlAuditSink(self.log).append_many([{"kind": "note"}])
        self.evaluator = self.reboot()

    def reboot(self) -> fp.Evaluator:
        self.evaluator = fp.Evaluator(
            self.catalog,
            store=FileStore(self.folder / "state.json"),
            audit=fp.JsonlAuditSink(self.log),
            clock=self.clock,
        )
        return self.evaluator

    def answer(self, command: str) -> str:
        """A warm answer: in an answer-first scope, the work after it run."""
        with answer_first(on_error=pytest.fail):
            decision = self.evaluator.evaluate(bash(command))
        return f"{command}: {decision.outcome}"

    def crash_after_answering(self, command: str) -> bool:
        """Answer ``command`` in a forked writer that exits right after the answer, then drop
        what the log got since (the bytes a power cut loses); whether it was a denial."""
        size = self.log.stat().st_size
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the writer
            try:
                os.close(read)
                with answer_first(on_error=lambda _: None):
                    decision = self.evaluator.evaluate(bash(command))
                    os.write(write, b"D" if _lets_nothing_run(decision) else b"R")
                    os._exit(0)  # the power goes: nothing handed to the scope runs
            finally:
                os._exit(3)
        os.close(write)
        with os.fdopen(read, "rb") as answer:
            said = answer.read()
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, said
        with open(self.log, "r+b") as log:
            log.truncate(size)
        self.reboot()
        return said == b"D"


calls = st.lists(st.sampled_from(COMMANDS), min_size=1, max_size=8)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much],
)
@given(before=calls, lost=st.sampled_from(["soft-me", "hard-me", "climb-me"]), after=calls)
def test_a_session_that_lost_a_denied_call_decides_as_if_it_was_never_made(
    tmp_path_factory: pytest.TempPathFactory, before: list[str], lost: str, after: list[str]
) -> None:
    clock_a, clock_b = Clock(), Clock()
    never = Session(tmp_path_factory.mktemp("never"), clock_a)
    lost_it = Session(tmp_path_factory.mktemp("lost"), clock_b)
    for command in before:
        for session in (never, lost_it):
            session.clock.advance(5)
            session.answer(command)
    clock_a.advance(5)
    clock_b.advance(5)
    assume(lost_it.crash_after_answering(lost))  # only a denial's fsync follows its answer
    never.reboot()
    answers: dict[str, list[str]] = {"never": [], "lost": []}
    for command in after:
        for name, session in (("never", never), ("lost", lost_it)):
            session.clock.advance(5)
            answers[name].append(session.answer(command))
    assert answers["lost"] == answers["never"]
    assert fp.JsonlAuditSink(lost_it.log).verify().ok  # no record reported removed
