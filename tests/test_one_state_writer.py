"""A session document's content has one writer, :func:`forge_policy.engine.effects.apply_effects`
(each effect's ``apply``): the decision, the explicit grant, the catch-up from the audit log,
per-session on/off and the fail-closed state all hand it effects (issue 21: reconcile counted
and levelled on its own, the evaluator and ``ops/admin`` wrote the state directly).

Two checks: an AST scan of the package for writes of the document's fields, and a profiler
watching the document's mutators while every writer runs, each call of which must come from
``engine/effects.py``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import forge_policy as fp
from forge_policy.errors import StoreError
from forge_policy.ops.admin import set_session_enabled
from forge_policy.state import BehaviorState, SessionState

PACKAGE = Path(__file__).resolve().parents[1] / "forge_policy"
#: The document itself (its typed accessors), the one writer, and the store conformance suite
#: (which changes states it loaded to test the stores' isolation).
#: The effect classes live in engine/_flag_effects.py, _block_effects.py and _more_effects.py
#: (issue 28: each loaded on first use through engine.effects, so a hook call builds only the
#: classes it uses); they are applied by apply_effects like the others.
EFFECTS = (
    "engine/effects.py",
    "engine/_flag_effects.py",
    "engine/_block_effects.py",
    "engine/_more_effects.py",
)
ALLOWED = ("state.py", *EFFECTS, "testing/conformance/")
#: Fields of a behavior's state, and the session's mappings, that only an effect may set.
FIELDS = {"counter", "effective_level", "pending_block", "grant"}
MAPPINGS = {"flags", "totals", "data"}
MUTATORS = {"record_violation", "record_block", "add_override", "note_blocked_call"}


def _on_self(node: ast.expr) -> bool:
    """``self.x``: an object's own attribute (a scratch copy, a scope), not a document's."""
    return isinstance(node, ast.Name) and node.id == "self"


def _writes(tree: ast.AST) -> list[int]:
    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for target in targets:
            field = isinstance(target, ast.Attribute) and target.attr in FIELDS
            if field and isinstance(target, ast.Attribute) and not _on_self(target.value):
                found.append(target.lineno)
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute):
                holder = target.value
                if holder.attr in MAPPINGS and not _on_self(holder.value):
                    found.append(target.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            func = node.func
            if func.attr in MUTATORS:
                found.append(node.lineno)
            holder = func.value
            if (
                func.attr in ("pop", "clear", "update", "setdefault")
                and isinstance(holder, ast.Attribute)
                and holder.attr in MAPPINGS
                and not _on_self(holder.value)
            ):
                found.append(node.lineno)
    return found


def test_no_module_but_the_effects_writes_a_session_document() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith(ALLOWED):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{relative}:{line}" for line in _writes(tree)]
    assert not found, f"write a session document through engine.effects.apply_effects: {found}"


def test_the_scan_sees_a_direct_write() -> None:
    code = "state.behavior('b').counter = 3\nstate.data['disabled'] = []\nb.record_block()\n"
    assert _writes(ast.parse(code)) == [1, 2, 3]
    assert _writes(ast.parse("self.counter = 1\nself.flags['x'] = True\n")) == []


def _mutators() -> dict[CodeType, str]:
    codes = {
        getattr(BehaviorState, name).fset.__code__: name
        for name in ("counter", "effective_level", "pending_block", "grant")
    }
    for name in MUTATORS:
        codes[getattr(BehaviorState, name).__code__] = name
    return codes


class Broken(fp.MemoryStore):
    """A store that cannot be read: the evaluator decides on the fail-closed state."""

    def load(self, session_id: str) -> SessionState | None:
        raise StoreError("unreadable")

    def transact(self, session_id: str, fn: Any) -> Any:
        raise StoreError("unreadable")


def _every_writer(tmp_path: Path) -> None:
    ev = fp.Evaluator(fp.builtin_catalog(), clock=lambda: 1_800_000_000.0)

    def edit(n: int) -> fp.Event:
        return fp.Event("PreToolUse", "s", tool_name="Edit", tool_input={"file_path": f"{n}.py"})

    for n in range(6):  # nudge, warning, soft block (and its pending block)
        ev.evaluate(edit(n))
    ev.evaluate(edit(5))  # the retry: an override
    ev.override("s", "search-first", reason="ok")  # a grant
    set_session_enabled(ev, "s", "search-first", False)  # per-session off
    stale = ev.store.load("s")
    set_session_enabled(ev, "s", "search-first", True)
    for n in range(6, 9):
        ev.evaluate(edit(n))
    assert stale is not None
    ev.store.transact("s", lambda current: (None, stale))  # the state lost its last writes
    assert ev.reconcile("s")  # caught up from the log
    fp.Evaluator(fp.builtin_catalog(), store=Broken(), audit=fp.MemoryAuditSink()).evaluate(
        edit(0)
    )  # unreadable store, empty log: decided on a rebuilt state


def test_every_write_of_a_document_comes_from_the_effects(tmp_path: Path) -> None:
    codes = _mutators()
    effects = {str(PACKAGE / path) for path in EFFECTS}
    seen: list[tuple[str, str]] = []

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code in codes and frame.f_back is not None:
            seen.append((codes[frame.f_code], frame.f_back.f_code.co_filename))

    sys.setprofile(profile)
    try:
        _every_writer(tmp_path)
    finally:
        sys.setprofile(None)
    assert {name for name, _ in seen} == set(codes.values())  # every mutator ran
    assert [(name, where) for name, where in seen if where not in effects] == []
