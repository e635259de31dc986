"""Evaluator semantics beyond the dotforge scenarios (SPEC §3, §4)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

import forge_policy as fp
from forge_policy.state import SessionState
from tests.helpers import Clock, bash, behavior_yaml, tool, write_catalog

T = TypeVar("T")

ALWAYS_BASH = "    - event: PreToolUse\n      matcher: Bash\n"


def rule(
    behavior_id: str,
    default_level: str,
    escalation: str = "",
    *,
    triggers: str = ALWAYS_BASH,
    extra: str = "",
    enforcement_extra: str = "",
) -> str:
    esc = escalation + enforcement_extra
    return behavior_yaml(
        behavior_id,
        default_level=default_level,
        escalation=esc,
        triggers=triggers,
        name=behavior_id.title(),
        extra=extra,
    )


def catalog(tmp_path: Path, **behaviors: str) -> fp.Catalog:
    return fp.load_catalog(
        write_catalog(
            tmp_path / "cat", {key.replace("_", "-"): text for key, text in behaviors.items()}
        )
    )


def test_first_block_cuts_the_chain_and_messages_are_ordered(tmp_path: Path) -> None:
    cat = catalog(
        tmp_path,
        aa_nudge=rule("aa-nudge", "nudge"),
        bb_warn=rule("bb-warn", "warning"),
        cc_block=rule("cc-block", "soft_block"),
        dd_after=rule("dd-after", "hard_block"),
    )
    ev = fp.Evaluator(cat)
    d = ev.evaluate(bash("ls"))
    assert d.blocked and d.blocking is not None and d.blocking.behavior_id == "cc-block"
    assert [v.behavior_id for v in d.violations] == ["aa-nudge", "bb-warn", "cc-block"]
    assert d.messages[0].startswith("[cc-block] Cc-Block: this call is refused.")
    assert d.messages[1].startswith("[aa-nudge] Aa-Nudge (1): do the right thing")
    assert d.messages[2].startswith("[bb-warn] Bb-Warn: violation 1")
    status = ev.status("s1").behaviors
    assert status["dd-after"].counter == 0  # never evaluated
    assert status["cc-block"].pending_block is True


def test_silent_violations_are_counted_not_shown(tmp_path: Path) -> None:
    cat = catalog(tmp_path, quiet_one=rule("quiet-one", "silent"))
    ev = fp.Evaluator(cat)
    d = ev.evaluate(bash("ls"))
    assert d.outcome == "allow" and d.messages == ()
    assert [v.level for v in d.violations] == [fp.Level.SILENT]
    assert ev.status("s1").behaviors["quiet-one"].counter == 1


def test_default_level_applies_to_the_first_violation(tmp_path: Path) -> None:
    # a dotforge bug started from silent; SPEC §3.4 starts from default_level
    cat = catalog(tmp_path, strict_one=rule("strict-one", "hard_block"))
    assert fp.Evaluator(cat).evaluate(bash("ls")).outcome == "hard_block"


def test_level_never_falls_within_a_session(tmp_path: Path) -> None:
    # a behavior whose escalation climbs, then a later session starts afresh
    esc = "    escalation:\n      - after: 2\n        level: warning\n"
    cat = catalog(tmp_path, climb=rule("climb", "nudge", esc))
    ev = fp.Evaluator(cat)
    assert [ev.evaluate(bash("x")).outcome for _ in range(3)] == ["nudge", "warning", "warning"]
    assert ev.evaluate(bash("x", session="other")).outcome == "nudge"


def test_one_violation_per_behavior_even_when_triggers_overlap(tmp_path: Path) -> None:
    triggers = ALWAYS_BASH + "    - event: PreToolUse\n      matcher: '*'\n"
    cat = catalog(tmp_path, twice=rule("twice", "nudge", triggers=triggers))
    ev = fp.Evaluator(cat)
    d = ev.evaluate(bash("ls"))
    assert len(d.violations) == 1 and d.violations[0].counter == 1


def test_shadow_mode_counts_but_never_blocks(tmp_path: Path) -> None:
    cat = catalog(
        tmp_path,
        shadowed=rule("shadowed", "hard_block", enforcement_extra="    mode: shadow\n"),
        later=rule("later", "nudge"),
    )
    ev = fp.Evaluator(cat)
    d = ev.evaluate(bash("ls"))
    assert not d.blocked and d.outcome == "nudge"
    [shadow, later] = d.violations
    assert shadow.shadow and shadow.level is fp.Level.HARD_BLOCK and not shadow.blocks
    assert later.behavior_id == "later"  # the chain was not cut
    assert all("Shadowed" not in m for m in d.messages)
    assert ev.status("s1").behaviors["shadowed"].counter == 1


def test_applies_to_filters(tmp_path: Path) -> None:
    extra = "applies_to:\n  tools: [Bash]\n  agents: [reviewer]\n  profiles: [strict]\n"
    triggers = "    - event: PreToolUse\n      matcher: '*'\n"
    cat = catalog(tmp_path, picky=rule("picky", "nudge", triggers=triggers, extra=extra))
    strict = fp.Evaluator(cat, profile="strict")
    reviewer = fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={}, agent="reviewer")
    assert strict.evaluate(reviewer).outcome == "nudge"
    other_agent = fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={}, agent="coder")
    assert strict.evaluate(other_agent).violations == ()
    other_tool = fp.Event("PreToolUse", "s", tool_name="Write", tool_input={}, agent="reviewer")
    assert strict.evaluate(other_tool).violations == ()
    assert fp.Evaluator(cat, profile="standard").evaluate(reviewer).violations == ()


def test_explicit_override_passes_the_next_blocked_call_once(tmp_path: Path) -> None:
    clock = Clock()
    cat = catalog(tmp_path, gate=rule("gate", "soft_block"))
    audit = fp.MemoryAuditSink()
    ev = fp.Evaluator(cat, clock=clock, audit=audit)
    assert ev.evaluate(bash("a")).blocked
    clock.advance(61)  # past a's retry window
    ev.override("s1", "gate", reason="user approved the deploy")
    clock.advance(30)
    passed = ev.evaluate(bash("b"))
    assert not passed.blocked
    assert [(o["mechanism"], o["reason"], o["counter"]) for o in passed.overrides] == [
        ("explicit", "user approved the deploy", 1)
    ]
    assert ev.status("s1").behaviors["gate"].counter == 1  # unchanged by the override
    assert ev.evaluate(bash("c")).blocked  # one-shot
    kinds = [(r["kind"], r.get("overridden")) for r in audit.records()]
    # the overridden call is recorded as the block it would have been, so rates stay <= 1
    assert kinds == [
        ("block", None),
        ("grant", None),  # audited when given (SPEC §4)
        ("block", "explicit"),
        ("override", None),
        ("block", None),
    ]


def test_explicit_override_expires_after_grant_seconds(tmp_path: Path) -> None:
    """SPEC §4 (issue 23): a grant lives ``FORGE_GRANT_SECONDS``, independent of the retry
    window (it once expired with the window)."""
    clock = Clock()
    ev = fp.Evaluator(
        catalog(tmp_path, gate=rule("gate", "soft_block")), clock=clock, grant_seconds=300
    )
    ev.override("s1", "gate", reason="later")
    clock.advance(61)  # past the retry window: still live
    assert not ev.evaluate(bash("a")).blocked
    ev.override("s1", "gate", reason="later again")
    clock.advance(300)  # inclusive
    assert not ev.evaluate(bash("b")).blocked
    ev.override("s1", "gate", reason="too late")
    clock.advance(300.5)
    assert ev.evaluate(bash("c")).blocked


def test_override_record_fields(tmp_path: Path) -> None:
    clock = Clock(1_800_000_000.0)
    ev = fp.Evaluator(catalog(tmp_path, gate=rule("gate", "soft_block")), clock=clock)
    secret = "curl -H 'Authorization: sk-abcdefghijklmnopqrstuvwxyz123456' " + "x" * 200
    ev.evaluate(bash(secret))
    [record] = ev.evaluate(bash(secret)).overrides
    assert record["timestamp"] == "2027-01-15T08:00:00.000000+00:00"
    assert record["session_id"] == "s1" and record["behavior_id"] == "gate"
    assert record["tool_name"] == "Bash" and record["mechanism"] == "retry"
    assert record["counter"] == 1 and record["reason"] == ""
    assert len(record["input_summary"]) <= 100 and "sk-abc" not in record["input_summary"]
    assert len(record["override_id"]) == 32


def test_tool_use_id_and_permission_mode_do_not_change_the_call_identity(tmp_path: Path) -> None:
    ev = fp.Evaluator(catalog(tmp_path, gate=rule("gate", "soft_block")))
    first = fp.Event.from_claude_code(
        {
            "session_id": "s1",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "make deploy", "timeout": 5},
            "tool_use_id": "toolu_A",
            "permission_mode": "default",
        }
    )
    retry = fp.Event.from_claude_code(
        {
            "session_id": "s1",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"timeout": 5, "command": "make deploy"},
            "tool_use_id": "toolu_B",
            "permission_mode": "acceptEdits",
        }
    )
    assert ev.evaluate(first).blocked
    assert not ev.evaluate(retry).blocked


def test_pending_block_is_checked_before_flags_are_consumed(tmp_path: Path) -> None:
    triggers = (
        "    - event: PreToolUse\n      matcher: Grep\n      action: set_flag\n      flag: ready\n"
        "    - event: PreToolUse\n      matcher: Write\n      action: check_flag\n"
        "      flag: ready\n      on_present: consume\n      on_absent: violate\n"
    )
    ev = fp.Evaluator(catalog(tmp_path, look=rule("look", "soft_block", triggers=triggers)))
    write = tool("Write", file_path="/a", content="x")
    assert ev.evaluate(write).blocked
    ev.evaluate(tool("Grep", pattern="x"))
    retried = ev.evaluate(write)
    assert [o["mechanism"] for o in retried.overrides] == ["retry"]
    assert ev.status("s1").flags == ("ready",)  # the retry did not eat the flag


def test_user_override_recorded_when_post_tool_use_reports_the_call(tmp_path: Path) -> None:
    ev = fp.Evaluator(
        catalog(tmp_path, ask=rule("ask", "soft_block", enforcement_extra="    override: user\n"))
    )
    pre = bash("npm install left-pad", tool_use_id="toolu_1")
    blocked = ev.evaluate(pre)
    assert blocked.blocked and "user's approval" in blocked.message
    post = bash("npm install left-pad", event="PostToolUse", tool_use_id="toolu_1")
    ran = ev.evaluate(post)
    assert [(o["mechanism"], o["reason"]) for o in ran.overrides] == [("user", "approved by user")]
    assert ev.status("s1").behaviors["ask"].pending_block is False


def test_bypass_permissions_turns_ask_into_allow_on_the_record(tmp_path: Path) -> None:
    audit = fp.MemoryAuditSink()
    ev = fp.Evaluator(
        catalog(tmp_path, ask=rule("ask", "soft_block", enforcement_extra="    override: user\n")),
        audit=audit,
    )
    event = fp.Event(
        "PreToolUse",
        "s1",
        tool_name="Bash",
        tool_input={"command": "x"},
        permission_mode="bypassPermissions",
    )
    d = ev.evaluate(event)
    assert not d.blocked and "bypassPermissions" in d.message
    assert [r["mechanism"] for r in audit.records() if r["kind"] == "override"] == ["user"]
    # deny is never downgraded
    ev2 = fp.Evaluator(catalog(tmp_path / "two", deny=rule("deny", "soft_block")))
    assert ev2.evaluate(event).blocked


def test_session_expires_after_last_access(tmp_path: Path) -> None:
    clock = Clock()
    esc = "    escalation:\n      - after: 2\n        level: warning\n"
    ev = fp.Evaluator(catalog(tmp_path, climb=rule("climb", "nudge", esc)), clock=clock, ttl=100)
    ev.evaluate(bash("a"))
    clock.advance(90)
    assert ev.evaluate(bash("a")).outcome == "warning"  # still alive: last access 90 s ago
    # expiry allows the allow path's refresh interval (ttl/100 here) as slack: never early
    clock.advance(100 + ev.settings.touch_interval + 0.5)
    assert ev.evaluate(bash("a")).outcome == "nudge"  # expired: counters start again


def test_templates_substitute_literally(tmp_path: Path) -> None:
    extra = (
        'rendering:\n  nudge_template: "{behavior_id} {tool_name} {counter} {level} '
        '{threshold} {unknown}"\n'
    )
    esc = "    escalation:\n      - after: 3\n        level: warning\n"
    ev = fp.Evaluator(
        catalog(
            tmp_path,
            tpl=rule(
                "tpl",
                "nudge",
                esc,
                extra=extra,
                triggers="    - event: PreToolUse\n      matcher: '.*'\n",
            ),
        )
    )
    event = fp.Event("PreToolUse", "s", tool_name="a&b|c\\d{counter}", tool_input={})
    assert ev.evaluate(event).messages == ("[tpl] tpl a&b|c\\d{counter} 1 nudge 3 {unknown}",)
    ev.evaluate(event)
    ev.evaluate(event)
    assert "max" in ev.evaluate(event).messages[0]


class CountingStore:
    """Wraps a store, counting transactions and writes."""

    def __init__(self) -> None:
        self.inner = fp.MemoryStore()
        self.transactions = 0
        self.writes = 0

    def transact(
        self, session_id: str, apply: Callable[[SessionState | None], tuple[T, SessionState | None]]
    ) -> T:
        self.transactions += 1

        def counted(current: SessionState | None) -> tuple[T, SessionState | None]:
            result, new = apply(current)
            self.writes += new is not None
            return result, new

        return self.inner.transact(session_id, counted)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_allow_path_writes_nothing(tmp_path: Path) -> None:
    clock = Clock()
    store = CountingStore()
    ev = fp.Evaluator(fp.builtin_catalog(), store=store, clock=clock)
    ev.evaluate(tool("Read", file_path="/a.py"))  # sets a flag: one write
    assert store.writes == 1
    for _ in range(5):
        clock.advance(1)
        ev.evaluate(tool("Bash", command="git status"))
    # the allow path opens none (an `ls` would write once: search-first's credit for the folder)
    assert (store.transactions, store.writes) == (1, 1)
    clock.advance(301)  # last access is refreshed now and then, so TTL counts from it
    ev.evaluate(tool("Bash", command="git status"))
    assert store.writes == 2


class BrokenStore(fp.MemoryStore):
    def transact(self, session_id: str, apply: Any) -> Any:
        raise fp.LockTimeout("lock held by another process")


def test_store_failure_fails_closed_for_blocks(tmp_path: Path) -> None:
    cat = catalog(
        tmp_path,
        hard=rule("hard", "hard_block"),
        soft=rule("soft", "silent", "    escalation:\n      - after: 1\n        level: nudge\n"),
    )
    ev = fp.Evaluator(cat, store=BrokenStore())
    d = ev.evaluate(bash("rm -rf /"))
    assert d.blocked and d.outcome == "hard_block"
    assert any("decided statelessly" in line for line in d.diagnostics)


def test_explain_changes_nothing(tmp_path: Path) -> None:
    ev = fp.Evaluator(fp.builtin_catalog())
    report = ev.explain(bash("git push --force"))
    assert report.decision.outcome == "hard_block"
    fired = [t for t in report.trace if getattr(t, "matched", False)]
    assert fired[0].behavior_id == "no-destructive-git"
    assert fired[0].conditions[0].operator == "regex_match"
    assert ev.status("s1").exists is False


def test_fact_providers_are_lazy_and_failures_are_diagnostics(tmp_path: Path) -> None:
    calls: list[str] = []

    def size(event: fp.Event) -> object:
        calls.append(event.tool_name)
        return 2048

    def broken(event: fp.Event) -> object:
        raise RuntimeError("disk on fire")

    triggers = (
        "    - event: PreToolUse\n      matcher: Read\n      conditions:\n"
        "        - field: facts.size\n          operator: gt\n          value: 1024\n"
        "        - field: facts.size\n          operator: lt\n          value: 4096\n"
        "        - field: facts.broken\n          operator: not_exists\n"
    )
    ev = fp.Evaluator(
        catalog(tmp_path, big=rule("big", "warning", triggers=triggers)),
        facts={"size": size, "broken": broken},
    )
    assert ev.evaluate(bash("ls")).violations == () and calls == []  # not computed
    d = ev.evaluate(tool("Read", file_path="/x"))
    # a failed fact is undetermined, not empty: `not_exists` of it is unknown, and a warning
    # is never raised on an unknown (a blocking behavior would decide as matched)
    assert d.outcome == "allow" and calls == ["Read"]  # memoised within the event
    assert d.diagnostics == ("fact 'broken' failed: RuntimeError: disk on fire",)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ([], "event: expected a JSON object, got an array"),
        ({"hook_event_name": "PreToolUse"}, "event: session_id: required field missing"),
        (
            {"session_id": "s", "hook_event_name": "PreToolUse", "tool_input": {}},
            "event: tool_name: required field missing",
        ),
        (
            {"session_id": 3, "hook_event_name": "Stop"},
            "event: session_id: expected a string, got a number",
        ),
        (
            {
                "session_id": "s",
                "hook_event_name": "PreToolUse",
                "tool_name": "X",
                "tool_input": "rm",
            },
            "event: tool_input: expected an object, got a string",
        ),
    ],
)
def test_bad_claude_code_payloads(payload: object, message: str) -> None:
    with pytest.raises(fp.EventError) as caught:
        fp.Event.from_claude_code(payload)
    assert str(caught.value) == message


def test_override_is_withdrawn_when_a_later_behavior_refuses_the_call(tmp_path: Path) -> None:
    cat = catalog(tmp_path, first=rule("first", "soft_block"), second=rule("second", "soft_block"))
    audit = fp.MemoryAuditSink()
    ev = fp.Evaluator(cat, audit=audit)
    call = bash("make release")
    one = ev.evaluate(call)
    assert one.blocking is not None and one.blocking.behavior_id == "first"
    two = ev.evaluate(call)  # first's pending block matches, but second refuses the call
    assert two.blocking is not None and two.blocking.behavior_id == "second"
    assert two.overrides == ()
    status = ev.status("s1").behaviors
    assert (status["first"].pending_block, status["first"].overrides) == (True, 0)
    three = ev.evaluate(call)  # both blocks are overridden by this retry: the call passes
    assert not three.blocked
    assert sorted(o["behavior_id"] for o in three.overrides) == ["first", "second"]
    assert [s.counter for s in ev.status("s1").behaviors.values()] == [1, 1]
    assert sum(r["kind"] == "override" for r in audit.records()) == 2


def test_a_grant_and_a_retry_of_the_same_block_give_one_pass(tmp_path: Path) -> None:
    """A grant bound to the blocked call (``--call``, SPEC §4) is spent by its retry: one
    approval, one pass, and no other call uses it."""
    ev = fp.Evaluator(catalog(tmp_path, gate=rule("gate", "soft_block")))
    blocked = ev.evaluate(bash("deploy"))
    assert blocked.blocked and blocked.blocking is not None
    ev.override("s1", "gate", reason="approved in chat", call=blocked.blocking.call_id)
    retry = ev.evaluate(bash("deploy"))
    assert [(o["mechanism"], o["reason"]) for o in retry.overrides] == [
        ("explicit", "approved in chat")
    ]
    assert ev.evaluate(bash("other")).blocked  # the grant was spent on the retry


def test_an_unbound_grant_is_not_spent_on_a_retry_in_the_window(tmp_path: Path) -> None:
    """Without ``--call`` the grant is for the next *blocked* call (SPEC §4): the retry within
    the window passes by retry and leaves the grant for the next call that would block."""
    ev = fp.Evaluator(catalog(tmp_path, gate=rule("gate", "soft_block")))
    assert ev.evaluate(bash("deploy")).blocked
    ev.override("s1", "gate", reason="approved in chat")
    retry = ev.evaluate(bash("deploy"))
    assert [(o["mechanism"], o["reason"]) for o in retry.overrides] == [("retry", "")]
    other = ev.evaluate(bash("other"))
    assert [(o["mechanism"], o["reason"]) for o in other.overrides] == [
        ("explicit", "approved in chat")
    ]
    assert ev.evaluate(bash("third")).blocked


def test_override_is_refused_where_it_could_never_apply(tmp_path: Path) -> None:
    esc = "    escalation:\n      - after: 2\n        level: hard_block\n"
    ev = fp.Evaluator(
        catalog(tmp_path, up=rule("up", "soft_block", esc), mild=rule("mild", "warning"))
    )
    with pytest.raises(ValueError, match="never blocks"):
        ev.override("s1", "mild")
    ev.evaluate(bash("a"))
    ev.evaluate(bash("b"))  # the second violation reaches hard_block
    with pytest.raises(ValueError, match="has reached hard_block in session s1"):
        ev.override("s1", "up")
    with pytest.raises(KeyError):
        ev.override("s1", "ghost")


WRITES = "    - event: PreToolUse\n      matcher: Write\n"
ESCALATES = "    escalation:\n      - after: 4\n        level: soft_block\n"


class UnreadableAudit(fp.MemoryAuditSink):
    def records(self) -> Any:
        raise fp.AuditError("audit log unreadable")

    def records_since(self, since: float) -> Any:
        raise fp.AuditError("audit log unreadable")

    def records_for_session(self, session_id: str) -> Any:
        raise fp.AuditError("audit log unreadable")

    def session_records_since(self, session_id: str, since: float) -> Any:
        raise fp.AuditError("audit log unreadable")


def test_a_lost_state_is_rebuilt_from_the_audit_log_and_counts_nothing_twice(
    tmp_path: Path,
) -> None:
    """Issue 10 route 5, SPEC §9: a state the store cannot give (lock held past the timeout,
    unknown version, corrupt) is never a silent reset: the session is rebuilt from the audit
    log, and what is decided on it is audited (marked ``degraded``), so no count is lost."""
    cat = catalog(tmp_path, esc=rule("esc", "nudge", ESCALATES))
    audit = fp.MemoryAuditSink()
    clock = Clock()
    working = fp.Evaluator(cat, audit=audit, clock=clock, record_violations=True)
    for _ in range(3):
        clock.advance(1)
        assert not working.evaluate(bash("ls")).blocked  # nudges 1..3, audited
    broken = fp.Evaluator(cat, store=BrokenStore(), audit=audit, clock=clock)
    clock.advance(1)
    d = broken.evaluate(bash("ls"))
    # the fourth violation escalates as it would have with the state (a reset would nudge)
    assert d.blocked and d.blocking is not None and d.blocking.counter == 4
    assert "rebuilt from the audit log (3 records)" in d.diagnostics[0]
    last = list(audit.records())[-1]
    assert (last["kind"], last["counter"], last["degraded"]) == ("block", 4, "rebuilt")
    clock.advance(1)
    again = broken.evaluate(bash("pwd"))  # the degraded record counts: the fifth is the fifth
    assert again.blocking is not None and again.blocking.counter == 5


def test_with_neither_state_nor_log_every_behavior_fails_closed(tmp_path: Path) -> None:
    """SPEC §9: when the audit log cannot be read either, a behavior decides at the highest
    level its ladder reaches below hard_block; its records are marked ``fail_closed`` and a
    later reconcile does not take their made-up counters for the session's."""
    from forge_policy.engine.reconcile import reconcile_session
    from forge_policy.state import SessionState

    cat = catalog(
        tmp_path,
        esc=rule("esc", "nudge", ESCALATES),
        never=rule("never", "warning"),
    )
    ev = fp.Evaluator(cat, store=BrokenStore(), audit=UnreadableAudit(), clock=Clock())
    d = ev.evaluate(bash("ls"))
    assert d.blocked and d.blocking is not None and d.blocking.behavior_id == "esc"
    assert d.blocking.level is fp.Level.SOFT_BLOCK
    assert "fail closed" in d.diagnostics[0]
    recorded = [r for r in ev.audit._records if r.get("degraded") == "fail_closed"]
    assert [r["behavior_id"] for r in recorded] == ["esc"]
    state = SessionState.new(0.0)
    reconcile_session(state, recorded)
    assert state.behavior_ids() == [] or state.behavior("esc").counter == 0


def test_with_no_state_and_an_unreadable_log_a_count_fails_closed(tmp_path: Path) -> None:
    """SPEC §9: a state that is missing is rebuilt from the log. With the log unreadable, a
    session whose state was deleted looks like a new one, so a counted call is not decided on
    a new state (a silent reset) but fails closed, written nowhere; an allow that counts
    nothing still passes without reading the log."""
    cat = catalog(tmp_path, esc=rule("esc", "nudge", ESCALATES))
    store = fp.FileStore(tmp_path / "state")
    ev = fp.Evaluator(cat, store=store, audit=UnreadableAudit(), clock=Clock())
    d = ev.evaluate(bash("ls"))
    assert d.blocked and d.blocking is not None and d.blocking.behavior_id == "esc"
    assert d.blocking.level is fp.Level.SOFT_BLOCK  # the ladder's highest below hard_block
    assert any("fail closed" in line for line in d.diagnostics)
    assert store.load("s1") is None  # the made-up levels are never stored
    recorded = [r for r in ev.audit._records if r.get("degraded") == "fail_closed"]
    assert [r["behavior_id"] for r in recorded] == ["esc"]
    quiet = catalog(tmp_path / "quiet", nothing=rule("nothing", "nudge", triggers=WRITES))
    calm = fp.Evaluator(quiet, store=store, audit=UnreadableAudit(), clock=Clock())
    assert calm.evaluate(bash("ls")).outcome == "allow"
