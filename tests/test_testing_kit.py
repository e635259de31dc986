"""The testing kit as a harness author uses it: only ``forge_policy.testing``'s public names and
the plugin's fixtures (no project helpers), so this file is also the kit's contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import forge_policy as fp
from forge_policy.testing import (
    FakeClock,
    assert_allows,
    assert_blocks,
    assert_counter,
    assert_level,
    claude_code_event,
    claude_code_lifecycle,
    claude_code_payload,
    claude_code_prompt,
)

NO_RM = """\
schema_version: "1"
id: no-rm
name: No rm
description: refuses rm, and hard-blocks after repeated tries
category: core
scope: session
policy:
  triggers:
    - event: PreToolUse
      matcher: Bash
      conditions:
        - field: tool_input.command
          operator: regex_match
          value: '^rm '
  enforcement:
    default_level: soft_block
    escalation:
      - after: 3
        level: hard_block
  recovery:
    hint: move the file to the trash instead
"""


def test_a_builtin_hard_block_is_asserted_by_behavior_and_level(forge_evaluator) -> None:
    ev = forge_evaluator()
    decision = ev.evaluate(claude_code_event("Bash", command="git push --force", session_id="s1"))
    assert_blocks(decision, behavior="no-destructive-git", level="hard_block")
    assert_blocks(decision, level=fp.Level.HARD_BLOCK)
    assert_allows(ev.evaluate(claude_code_event("Read", file_path="/src/app.py")))


@pytest.mark.parametrize("store", ["memory", "file", "sqlite"])
def test_escalation_counts_and_levels_on_every_store(forge_evaluator, forge_catalog, store) -> None:
    ev = forge_evaluator(forge_catalog(NO_RM), store=store)
    rm = claude_code_event("Bash", command="rm notes.txt", session_id="s1")
    assert_counter(ev, "s1", "no-rm", 0)
    assert_level(ev, "s1", "no-rm", None)
    assert_blocks(ev.evaluate(rm), behavior="no-rm", level="soft_block")
    assert_counter(ev, "s1", "no-rm", 1)
    assert_level(ev, "s1", "no-rm", "soft_block")
    assert_allows(ev.evaluate(claude_code_event("Bash", command="ls", session_id="s1")))
    for name in ("a.txt", "b.txt"):  # distinct calls: an identical one would be a retry
        ev.evaluate(claude_code_event("Bash", command=f"rm {name}", session_id="s1"))
    assert_counter(ev, "s1", "no-rm", 3)
    assert_level(ev, "s1", "no-rm", fp.Level.HARD_BLOCK)
    assert_counter(ev, "s2", "no-rm", 0)  # sessions never share counters


def test_a_retry_within_the_window_passes_and_the_clock_decides_the_window(
    forge_evaluator, forge_catalog, forge_clock
) -> None:
    ev = forge_evaluator(forge_catalog(NO_RM), override_window=60)
    rm = claude_code_payload("Bash", command="rm a.txt", session_id="s1")
    assert_blocks(ev.evaluate(fp.Event.from_claude_code(rm)), behavior="no-rm")
    forge_clock.advance(30)
    retried = ev.evaluate(fp.Event.from_claude_code(rm))
    assert_allows(retried)
    assert [o["mechanism"] for o in retried.overrides] == ["retry"]
    assert_blocks(ev.evaluate(fp.Event.from_claude_code(rm)), behavior="no-rm")
    forge_clock.advance(61)  # past the window: the retry is a new violation
    assert_blocks(ev.evaluate(fp.Event.from_claude_code(rm)), behavior="no-rm")


def test_catalogs_come_from_text_a_dict_or_a_folder(forge_catalog, tmp_path: Path) -> None:
    from_text = forge_catalog(NO_RM)
    spec = {
        "schema_version": "1",
        "id": "no-curl",
        "name": "No curl",
        "description": "a dict",
        "category": "core",
        "scope": "session",
        "policy": {
            "triggers": [{"event": "PreToolUse", "matcher": "Bash"}],
            "enforcement": {"default_level": "nudge"},
            "recovery": {"hint": "use the fetch tool"},
        },
    }
    from_dict = forge_catalog(spec)
    folder = tmp_path / "catalog"
    (folder / "no-curl").mkdir(parents=True)
    (folder / "no-curl" / "behavior.yaml").write_text(json.dumps(spec), encoding="utf-8")
    (folder / "index.yaml").write_text(
        'schema_version: "1"\nbehaviors:\n  - id: no-curl\n', encoding="utf-8"
    )
    assert (from_text.ids, from_dict.ids, forge_catalog(folder).ids) == (
        ["no-rm"],
        ["no-curl"],
        ["no-curl"],
    )
    with pytest.raises(fp.CatalogError, match="default_level"):
        forge_catalog(NO_RM.replace("default_level: soft_block", "default_level: loud"))
    with pytest.raises(TypeError, match="forge_catalog"):
        forge_catalog(42)


def test_failure_messages_say_what_happened(forge_evaluator, forge_catalog) -> None:
    ev = forge_evaluator(forge_catalog(NO_RM))
    blocked = ev.evaluate(claude_code_event("Bash", command="rm x", session_id="s1"))
    with pytest.raises(
        AssertionError, match=r"expected the call to be allowed, got soft_block by no-rm"
    ):
        assert_allows(blocked)
    with pytest.raises(
        AssertionError, match=r"expected a hard_block block, got soft_block by no-rm"
    ):
        assert_blocks(blocked, level="hard_block")
    with pytest.raises(AssertionError, match=r"expected a block by other, got soft_block by no-rm"):
        assert_blocks(blocked, behavior="other")
    with pytest.raises(AssertionError, match=r"no-rm in session 's1': expected counter 2, got 1"):
        assert_counter(ev, "s1", "no-rm", 2)
    with pytest.raises(AssertionError, match=r"expected hard_block, got soft_block \(counter 1\)"):
        assert_level(ev, "s1", "no-rm", "hard_block")
    with pytest.raises(AssertionError, match=r"no behavior 'typo' in the catalog \(known: no-rm\)"):
        assert_counter(ev, "s1", "typo", 0)
    with pytest.raises(ValueError, match=r"assert_level: level must be one of silent, nudge"):
        assert_level(ev, "s1", "no-rm", "soft-block")


def test_the_fake_clock_is_what_the_evaluator_reads(forge_evaluator, forge_clock) -> None:
    ev = forge_evaluator()
    assert ev.clock is forge_clock
    start = forge_clock()
    forge_clock.advance(5)
    assert forge_clock() == start + 5
    with pytest.raises(ValueError, match="seconds must be >= 0"):
        forge_clock.advance(-1)
    assert FakeClock(10.0)() == 10.0


def test_builders_make_payloads_the_hook_accepts() -> None:
    payload = claude_code_payload("Bash", command="ls", session_id="s9")
    assert payload["hook_event_name"] == "PreToolUse"
    assert payload["tool_use_id"].startswith("toolu_")
    assert {"transcript_path", "cwd", "permission_mode"} <= set(payload)
    post = claude_code_event(
        "Bash", event="PostToolUse", tool_response={"stdout": "ok"}, command="ls"
    )
    assert post.payload["tool_response"] == {"stdout": "ok"}
    assert "tool_use_id" not in claude_code_payload("Bash", event="PermissionRequest", command="ls")
    assert claude_code_prompt("fix the bug", session_id="s9").prompt == "fix the bug"
    assert claude_code_lifecycle("SessionStart").payload["source"] == "startup"
    with pytest.raises(ValueError, match="claude_code_prompt or claude_code_lifecycle"):
        claude_code_payload("Bash", event="Stop")


def test_an_unknown_store_kind_is_named(forge_evaluator) -> None:
    with pytest.raises(ValueError, match="store must be one of memory, file, sqlite"):
        forge_evaluator(store="redis")


def _imported_after(code: str) -> set[str]:
    import subprocess
    import sys

    probe = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return {name.split(".")[0] for name in run.stdout.split()}


def test_the_kit_imports_pytest_and_hypothesis_only_where_used() -> None:
    kit = _imported_after(
        "import forge_policy.testing as t\n"
        "t.FakeClock, t.claude_code_event, t.assert_allows, t.assert_counter"
    )
    assert not kit & {"pytest", "_pytest", "hypothesis"}
    sinks = _imported_after("from forge_policy.testing.conformance import AuditSinkSuite")
    assert "pytest" in sinks and "hypothesis" not in sinks
    bare = _imported_after("import forge_policy, forge_policy.testing")
    assert not bare & {"pytest", "_pytest", "hypothesis"}


def test_the_readme_example_passes_under_the_plugin(tmp_path: Path) -> None:
    """The example test file of docs/how-to/testing-your-harness.md (the README's until issue
    21), run by pytest in a fresh process: the fixtures come from the installed plugin alone
    (no conftest)."""
    import re
    import subprocess
    import sys

    doc = Path(__file__).resolve().parent.parent / "docs" / "how-to" / "testing-your-harness.md"
    readme = doc.read_text(encoding="utf-8")
    match = re.search(r"<!-- testing-example -->\n```python\n(.*?)```", readme, re.S)
    assert match is not None, "docs/how-to/testing-your-harness.md: the testing example is missing"
    (tmp_path / "test_example.py").write_text(match.group(1), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 passed" in run.stdout
