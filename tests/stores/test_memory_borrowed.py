"""MemoryStore.transact_borrowed: the evaluator's transaction without the copy in, and with the
stored document's untouched values reused on the way out. What it stores must be exactly what
``transact`` stores, redacted; a subclass's own ``transact`` is never skipped."""

from __future__ import annotations

from typing import Any

import pytest

import forge_policy as fp
from forge_policy.state import SessionState

T0 = 1_800_000_000.0
SECRET = "AKIA" + "Z7Q2X9W4V6T3R8P5"


class CopyingStore(fp.MemoryStore):
    """The same store, without the borrowed transaction: every write goes through
    ``transact`` (copy in, whole redaction out)."""

    transact_borrowed = None  # type: ignore[assignment]


def _traffic() -> list[fp.Event]:
    def bash(command: str) -> fp.Event:
        return fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": command})

    def edit(n: int) -> fp.Event:
        return fp.Event("PreToolUse", "s", tool_name="Edit", tool_input={"file_path": f"{n}.py"})

    events = [bash("git push --force"), bash(f"echo {SECRET} && git reset --hard")]
    events += [edit(n) for n in range(6)] + [edit(5)]  # escalation, soft block, its retry
    events += [bash("ls"), bash("git push --force origin main"), edit(9)]
    return events


def _same_log(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with its audit log positions' origins blanked: each evaluator's default log
    has a random origin of its own."""
    return {
        key: {**value, "origin": ""} if key in ("reconciled", "audit_checkpoint") else value
        for key, value in doc.items()
    }


def test_the_evaluator_stores_what_transact_stores() -> None:
    stores = (fp.MemoryStore(), CopyingStore())
    evaluators = []
    for store in stores:
        clock = [T0]
        evaluators.append(
            (fp.Evaluator(fp.builtin_catalog(), store=store, clock=lambda c=clock: c[0]), clock)
        )
    for event in _traffic():
        outcomes = []
        for evaluator, clock in evaluators:
            clock[0] += 1.0
            outcomes.append(evaluator.evaluate(event).outcome)
        assert outcomes[0] == outcomes[1]
        borrowed, copied = (store.load("s") for store in stores)
        assert borrowed is not None and copied is not None
        assert _same_log(borrowed.to_dict()) == _same_log(copied.to_dict())
    assert SECRET not in repr(stores[0].load("s").to_dict())  # type: ignore[union-attr]


def test_untouched_values_are_reused_and_written_ones_redacted() -> None:
    store = fp.MemoryStore()
    first = SessionState.new(T0)
    first.behavior("a").counter = 1
    first.behavior("b").counter = 2
    store.transact("s", lambda current: (None, first))
    before = store.peek("s")
    assert before is not None

    def bump(current: SessionState | None) -> tuple[None, SessionState]:
        assert current is not None and current.data is before.data  # lent, not copied
        state = current.derive()
        state.behavior("b").counter = 3
        state.data["note"] = f"key {SECRET}"
        return None, state

    store.transact_borrowed("s", bump)
    after = store.peek("s")
    assert after is not None and after.data is not before.data
    assert after.data["behaviors"]["a"] is before.data["behaviors"]["a"]
    assert after.find("b").counter == 3 and before.find("b").counter == 2  # type: ignore[union-attr]
    assert after.data["note"] == "key [REDACTED]"


def test_an_apply_that_raises_writes_nothing() -> None:
    store = fp.MemoryStore()
    store.transact("s", lambda current: (None, SessionState.new(T0)))
    before = store.peek("s")

    def explode(current: SessionState | None) -> Any:
        raise RuntimeError("apply failed")

    with pytest.raises(RuntimeError):
        store.transact_borrowed("s", explode)
    assert store.peek("s").data is before.data  # type: ignore[union-attr]


def test_a_subclass_transact_is_not_skipped() -> None:
    calls: list[str] = []

    class Wrapped(fp.MemoryStore):
        def transact(self, session_id: str, apply: Any) -> Any:
            calls.append(session_id)
            return super().transact(session_id, apply)

    ev = fp.Evaluator(fp.builtin_catalog(), store=Wrapped(), clock=lambda: T0)
    bash = fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "git push -f"})
    assert ev.evaluate(bash).outcome == "hard_block"
    assert calls == ["s"]
