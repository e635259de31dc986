"""End to end: Claude Code payloads through the real ``forge-policy hook`` executable (SPEC §8)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import cache_support
import pytest
from hookrun import HINT, HOOK, Project, rule, to_override


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def test_an_allowed_call_prints_nothing(project: Project) -> None:
    out, err = project.run(project.payload(tool_name="Read", tool_input={"file_path": "/a.py"}))
    assert (out, err) == (None, "")


def test_nudge(project: Project) -> None:
    out, _ = project.run(project.bash("echo nudge-me"))
    assert out == {
        "systemMessage": "[nudger] nudger: Bash (1)",
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "additionalContext": "[nudger] nudger: Bash (1)",
        },
    }


def test_warning(project: Project) -> None:
    text = f"[warner] warner: warning 1\nDo instead: {HINT}"
    out, _ = project.run(project.bash("echo warn-me"))
    assert out == {
        "systemMessage": text,
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": text},
    }


def test_soft_block_with_agent_override(project: Project) -> None:
    out, _ = project.run(project.bash("echo soft-me"))
    reason = f"[softy] softy: refused\nDo instead: {HINT}\n{to_override('softy', project.session)}"
    assert out == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        },
        "systemMessage": "[softy] softy: refused",
    }


def test_soft_block_with_user_override_asks(project: Project) -> None:
    out, _ = project.run(project.bash("echo ask-me"))
    reason = (
        f"[asker] asker: refused\nDo instead: {HINT}\n"
        "Overriding needs the user's approval: the user is asked to allow this call."
    )
    assert out == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": reason,
        },
        "systemMessage": "[asker] asker: refused",
    }


def test_hard_block(project: Project) -> None:
    out, _ = project.run(project.bash("echo hard-me"))
    assert out == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": (
                f"[hardy] hardy: refused\nDo instead: {HINT}\nThis block cannot be overridden."
            ),
        },
        "systemMessage": "[hardy] hardy: refused",
        "override_allowed": False,
    }


def test_a_blocked_prompt(project: Project) -> None:
    out, _ = project.run(project.payload("UserPromptSubmit", prompt="do the forbidden thing"))
    assert out is not None
    assert (out["decision"], out["systemMessage"]) == (
        "block",
        "[prompt-guard] prompt-guard: refused",
    )
    assert out["reason"].startswith("[prompt-guard] prompt-guard: refused\n")


def test_a_block_after_the_tool_ran_tells_the_model(project: Project) -> None:
    response = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}
    out, _ = project.run(project.bash("echo post-me", event="PostToolUse", tool_response=response))
    assert out is not None and out["decision"] == "block"
    assert out["reason"].startswith("The tool call already ran, but it broke a policy.\n")


def test_override_by_retry_ignores_the_per_call_tool_use_id(project: Project) -> None:
    first = project.bash("echo soft-me")
    retry = project.bash("echo soft-me")
    assert first["tool_use_id"] != retry["tool_use_id"]
    out, _ = project.run(first)
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"
    out, _ = project.run(retry)
    note = "[softy] Let through by an override (retry); recorded in the audit log."
    assert out == {
        "systemMessage": note,
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": note},
    }
    [record] = [r for r in project.audit() if r["kind"] == "override"]
    assert (record["behavior_id"], record["mechanism"], record["counter"]) == ("softy", "retry", 1)
    out, _ = project.run(project.bash("echo soft-me"))  # one override per block
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert project.counter("softy") == 2


def test_user_override_is_recorded_when_the_approved_call_runs(project: Project) -> None:
    call = project.bash("echo ask-me")
    out, _ = project.run(call)
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "ask"
    done = project.bash("echo ask-me", event="PostToolUse", tool_use_id=call["tool_use_id"])
    assert project.run(done)[0] is None
    [record] = [r for r in project.audit() if r["kind"] == "override"]
    assert (record["behavior_id"], record["mechanism"]) == ("asker", "user")


def test_bypass_permissions_allows_an_ask_but_not_a_deny(project: Project) -> None:
    out, _ = project.run(project.bash("echo ask-me", permission_mode="bypassPermissions"))
    assert out is not None and "permissionDecision" not in out["hookSpecificOutput"]
    assert "Allowed without asking" in out["systemMessage"]
    out, _ = project.run(project.bash("echo hard-me", permission_mode="bypassPermissions"))
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_the_first_block_cuts_the_chain(project: Project) -> None:
    out, _ = project.run(project.bash("echo soft-me hard-me"))
    assert out is not None and out["systemMessage"] == "[softy] softy: refused"
    assert (project.counter("softy"), project.counter("hardy")) == (1, 0)


def test_messages_are_merged_in_index_order_and_a_block_comes_first(project: Project) -> None:
    out, _ = project.run(project.bash("echo warn-me nudge-me"))
    merged = f"[nudger] nudger: Bash (1)\n\n[warner] warner: warning 1\nDo instead: {HINT}"
    assert out is not None and out["systemMessage"] == merged
    assert out["hookSpecificOutput"]["additionalContext"] == merged
    out, _ = project.run(project.bash("echo nudge-me soft-me"))
    assert out is not None
    reason = out["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("[softy] softy: refused\n") and reason.endswith(
        "\n\n[nudger] nudger: Bash (2)"
    )


def test_parallel_hooks_of_one_session_lose_no_increment(project: Project) -> None:
    # the hook's deadline (SPEC §9) cuts lock waits short and decides the rest statelessly: on
    # two cores shared with dozens of processes 8 hooks can queue past it, so the largest one
    project.env["FORGE_HOOK_DEADLINE"] = "20"
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(project.run, [project.bash("echo nudge-me")] * 8))
    assert len(results) == 8
    assert project.counter("nudger") == 8


def test_forge_disable_bypasses_and_records_it(project: Project) -> None:
    out, err = project.run(project.bash("echo soft-me"), FORGE_DISABLE="softy")
    assert out is None and err == ""
    assert project.run(project.bash("ls"), FORGE_DISABLE="softy")[0] is None
    [record] = project.audit()
    assert {k: record[k] for k in ("kind", "behavior_id", "variable", "level")} == {
        "kind": "bypass",
        "behavior_id": "softy",
        "variable": "FORGE_DISABLE",
        "level": "soft_block",
    }


def test_a_missing_session_id_is_derived_and_recorded(project: Project) -> None:
    payload = project.bash("echo nudge-me")
    del payload["session_id"]
    out, err = project.run(payload)
    assert out is not None and out["systemMessage"] == "[nudger] nudger: Bash (1)"
    assert err.startswith("forge-policy: session_id missing; using derived-")
    assert "from transcript_path" in err
    [note] = [r for r in project.audit() if r["kind"] == "diagnostic"]
    assert note["code"] == "session_id_derived" and note["session_id"].startswith("derived-")
    out, _ = project.run(payload)  # the same transcript: the same session, counting on
    assert out is not None and out["systemMessage"] == "[nudger] nudger: Bash (2)"


def test_harness_flag(project: Project) -> None:
    assert project.run(project.bash("ls"), "--harness", "claude-code")[0] is None
    result = subprocess.run(
        [*HOOK, "--harness", "vim"], input=b"{}", capture_output=True, env=project.env
    )
    assert result.returncode == 2
    assert b"--harness 'vim' is not supported (supported: claude-code, codex," in result.stderr


def test_output_is_utf8_whatever_the_console_encoding(tmp_path: Path) -> None:
    text = rule("unicode", "nudge", "nudge-me").replace('"unicode: {tool_name}', '"naïve → 🤖')
    project = Project(tmp_path, {"unicode": text})
    out, _ = project.run(project.bash("echo nudge-me"), PYTHONIOENCODING="cp1252")
    assert out is not None and out["systemMessage"] == "[unicode] naïve → 🤖 (1)"


def test_via_serve_without_a_server_evaluates_in_process(project: Project) -> None:
    out, err = project.run(project.bash("echo hard-me"), "--via-serve")
    assert out is not None and out["override_allowed"] is False
    assert err.startswith("forge-policy: serve: serve is not configured")
    assert err.rstrip().endswith("evaluating in-process")


def test_warm_cache_keeps_ruamel_and_argparse_off_the_hook(project: Project) -> None:
    _, cold = project.run(project.bash("ls"), PYTHONPROFILEIMPORTTIME="1")
    assert "ruamel" in cold  # the first run parses the YAML and writes the cache
    _, warm = project.run(project.bash("ls"), PYTHONPROFILEIMPORTTIME="1")
    imported = {line.rsplit("|", 1)[-1].strip() for line in warm.splitlines() if "|" in line}
    # accepted on the in-process hook path: portalocker (the file store's lock), attrs (the model
    # and catalog classes) with typing, cattrs (the compiled cache) with dataclasses; the warm
    # worker takes them off the path a tool call pays (tests/test_worker.py)
    heavy = ("ruamel", "argparse")
    assert not {m for m in imported if m.split(".")[0] in heavy}
    assert "forge_policy.catalog.loader" not in imported
    assert "forge_policy.engine.evaluator" in imported  # the measurement did see the hot path


#: What the cold path (the in-process hook, where no worker runs) must not import to decide an
#: allow or a hard block (issue 28): cattrs (the compiled cache is read by hand), portalocker's
#: package (its __init__ reads its metadata: importlib.metadata, email; the lock loads its
#: locking modules only), and what only other paths use (YAML, argparse, rich, JSON Schema;
#: tempfile for a delete's check, base64 for a line naming a decoder), nor the attrs classes
#: no allow or block builds (the rarer audit records and effects), nor hashlib.
COLD_PATH_NEVER = (
    "forge_policy.audit._more_records",
    "forge_policy.engine._more_effects",
    "hashlib",  # it loads OpenSSL (_hashlib): the audit chain hashes with the builtin sha256
    "tempfile",
    "base64",
    "cattrs",
    "portalocker",
    "importlib.metadata",
    "email",
    "redis",
    "ruamel",
    "argparse",
    "rich",
    "jsonschema",
    "forge_policy.catalog.loader",
    # the last-good reader and writer: a call whose copy is current only stats it (saved_copies)
    "forge_policy.config.last_good",
    "forge_policy.audit._report",  # VerifyReport: a hook call never verifies a whole log
    # what attrs imports for questions the hook's stand-ins answer (forge_policy._infra.lean_attrs)
    *("inspect", "platform", "attr.validators", "attrs.validators"),
)


@pytest.mark.parametrize("command", ["ls", "echo hard-me"])
def test_the_cold_path_decides_without_cattrs_or_portalocker_s_metadata(
    project: Project, command: str
) -> None:
    """Every harness call on a machine without the warm worker (macOS, ``FORGE_WORKER=off``)
    pays these imports: an allow (which records itself under the audit lock) and a hard block."""
    project.run(project.bash("ls"))  # the first run compiles the catalog cache
    out, err = project.run(project.bash(command), FORGE_WORKER="off", PYTHONPROFILEIMPORTTIME="1")
    imported = {line.rsplit("|", 1)[-1].strip() for line in err.splitlines() if "|" in line}
    assert "forge_policy.engine.evaluator" in imported  # the measurement did see the hot path
    assert "forge_policy._infra._portalocker.portalocker" in imported  # the lock was taken
    assert not {m for m in imported if m.startswith(COLD_PATH_NEVER)}
    if command == "ls":
        assert out is None
        assert [r["kind"] for r in project.audit(seen=True)][-1] == "seen"
    else:
        assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"


#: The command model (issue 28): a call that runs no command (a Read, a Write) never loads it,
#: nor the lexer and its tables: a path's ``~`` and ``$HOME`` come from ``commands.paths``.
COMMAND_MODEL = (
    "forge_policy.commands.shell",
    "forge_policy.commands.expansion",
    "forge_policy.commands.launchers",
    "forge_policy.commands.git_argv",
    "forge_policy.commands.execution",
    "forge_policy.commands.lines",
    "forge_policy.commands.deletes",
    "forge_policy.commands.readers",
    "forge_policy.commands.git_commit",
    "forge_policy.commands.safety_net",
    "forge_policy.commands.shell_state",
    "forge_policy.commands.interpreters",
)
#: What an allow that changes nothing never loads (issue 28): the effect classes, defined on first
#: use (``engine.effects``' names), and what only a block writes.
ALLOW_NEVER = (
    "forge_policy.engine._step",
    "forge_policy.engine._flag_effects",
    "forge_policy.engine._block_effects",
    "forge_policy.audit._block_records",
    "forge_policy.audit._floor_record",
    # a project that sets no behavior and no exception: their classes, and datetime
    "forge_policy.config._layer_values",
    "datetime",
)
#: The hook in-process, then every module it loaded: ``sys.modules`` also sees what ``-X
#: importtime`` does not (``importlib.import_module``, the fact registry's lazy providers).
LOADED = """import sys
from forge_policy.hook import main
code = main(argv=[])
print(" ".join(sorted(sys.modules)), file=sys.stderr)
sys.exit(code)
"""


def test_a_read_is_decided_without_the_command_model(tmp_path: Path) -> None:
    project = Project(tmp_path, catalog={})  # the built-in catalog, whose facts a Read asks
    (project.dir / "app.py").write_text("X = 1\n")
    payload = project.payload(
        tool_name="Read", tool_input={"file_path": str(project.dir / "app.py")}
    )
    project.run(payload)  # the first run compiles the catalog cache
    result = subprocess.run(
        [sys.executable, "-c", LOADED],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env={**project.env, "FORGE_WORKER": "off"},
        cwd=project.dir,
        timeout=60,
    )
    assert (result.returncode, result.stdout) == (0, b"")  # allowed
    loaded = set(result.stderr.decode().split())
    assert "forge_policy.facts.governance" in loaded  # the built-in catalog's facts did run
    assert "forge_policy.facts.files" in loaded
    assert not {m for m in loaded if m.startswith(COLD_PATH_NEVER + COMMAND_MODEL + ALLOW_NEVER)}


#: The hook in-process, then whether the secret screen's RE2 regex was compiled (issue 28).
SCREENED = LOADED.replace(
    "sys.exit(code)",
    "from forge_policy import secrets\nprint(sorted(secrets._compiled), file=sys.stderr)\n"
    "sys.exit(code)",
)


def test_a_git_push_block_skips_the_regex_screen_and_the_commit_model() -> None:
    """A hard block redacts its command, message and records, but texts that hold none of the
    literals a secret needs skip the RE2 screen (``secrets.may_hold``), and a push is no commit:
    no ``commands.git_commit``. A secret in the command is still redacted from the record."""
    # not tmp_path: the test's name in it would hold literals of a secret (``k_``, ``test``)
    with tempfile.TemporaryDirectory(prefix="forge-push-") as folder:
        _push_block_skips_the_screen(Project(Path(folder), catalog={}))  # the built-in catalog


def _push_block_skips_the_screen(project: Project) -> None:
    payload = project.bash("git push --force origin main")
    project.run(payload)  # the first run compiles the catalog cache
    result = subprocess.run(
        [sys.executable, "-c", SCREENED],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env={**project.env, "FORGE_WORKER": "off"},
        cwd=project.dir,
        timeout=60,
    )
    answer = json.loads(result.stdout)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    modules, compiled = result.stderr.decode().splitlines()[-2:]
    assert "forge_policy.commands.git_commit" not in modules.split()
    assert compiled == "[]"  # the screen was never compiled
    secret = "ghp_" + "aZ09" * 9
    out, _ = project.run(project.bash(f"git push --force https://x:{secret}@github.com/o/r main"))
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert secret not in json.dumps(out)
    assert "[REDACTED]" in json.dumps(project.audit()[-1])
    assert secret not in (project.root / "audit" / "overrides.log").read_text()


def test_cache_follows_edits_even_same_size_ones(project: Project) -> None:
    out, _ = project.run(project.bash("echo nudge-me"))
    assert out is not None and out["systemMessage"] == "[nudger] nudger: Bash (1)"
    path = project.root / "behaviors" / "nudger" / "behavior.yaml"
    text = path.read_text()
    stat = path.stat()
    path.write_text(text.replace('"nudger: {tool_name}', '"NUDGER: {tool_name}'))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size, same mtime
    out, _ = project.run(project.bash("echo nudge-me"))
    assert out is not None and out["systemMessage"].startswith("[nudger] NUDGER: Bash")
    path.write_text(text.replace("default_level: nudge", "default_level: hard_block"))
    out, _ = project.run(project.bash("echo nudge-me"))
    assert out is not None and out["override_allowed"] is False
    [cache_file] = (project.root / "runtime").glob("catalog-cache-*.json")
    cache = cache_support.body(cache_file)
    assert cache["specs"][0]["default_level"] == "hard_block"


#: A process that ends through ``forge_policy.cli._end`` (the hook command's last step).
ENDS = """import atexit, sys, threading
from forge_policy.cli import _end
print("answer", end="")  # buffered: _end flushes it
if sys.argv[1] == "atexit":
    atexit.register(lambda: print(" atexit ran", end=""))
elif sys.argv[1] == "thread":
    done = threading.Event()
    threading.Thread(target=lambda: (done.wait(0.2), print(" thread ran", end=""))).start()
_end(3)
sys.exit(5)  # _end returned: the process ends as usual
"""


@pytest.mark.parametrize(
    ("case", "code", "out"),
    [
        ("plain", 3, "answer"),  # nothing left to do: it ends at once, its output flushed
        ("atexit", 5, "answer atexit ran"),  # a callback: the usual exit runs it
        ("thread", 5, "answer thread ran"),  # a non-daemon thread: the usual exit waits for it
    ],
)
def test_the_hook_process_ends_at_once_only_when_nothing_is_left_to_run(
    case: str, code: int, out: str
) -> None:
    result = subprocess.run(
        [sys.executable, "-c", ENDS, case], capture_output=True, text=True, timeout=60
    )
    assert (result.returncode, result.stdout, result.stderr) == (code, out, "")
