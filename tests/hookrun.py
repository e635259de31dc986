"""Drive the real ``forge-policy hook`` executable in subprocesses, as Claude Code does."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from helpers import behavior_yaml, write_catalog

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.engine.reports import Status

SCRIPT = Path(sys.executable).with_name("forge-policy")
HOOK = [str(SCRIPT), "hook"] if SCRIPT.exists() else [sys.executable, "-m", "forge_policy.hook"]
HINT = "do the right thing"


def contains(text: str, event: str = "PreToolUse", field: str = "command") -> str:
    matcher = "      matcher: Bash\n" if event.endswith("ToolUse") else ""
    return (
        f"    - event: {event}\n{matcher}      conditions:\n"
        f"        - {{field: {field}, operator: contains, value: {text}}}\n"
    )


def rule(behavior_id: str, level: str, word: str, *, override: str = "agent", **kw: str) -> str:
    text = behavior_yaml(
        behavior_id,
        default_level=level,
        triggers=contains(word, **kw),
        extra=(
            "rendering:\n"
            f'  nudge_template: "{behavior_id}: {{tool_name}} ({{counter}})"\n'
            f'  warning_template: "{behavior_id}: warning {{counter}}"\n'
            f'  block_reason: "{behavior_id}: refused"\n'
        ),
    )
    if override == "user":
        text = text.replace(
            f"    default_level: {level}", f"    default_level: {level}\n    override: user"
        )
    return text


#: Index order is evaluation order: the first block cuts the chain.
CATALOG = {
    "nudger": rule("nudger", "nudge", "nudge-me"),
    "warner": rule("warner", "warning", "warn-me"),
    "softy": rule("softy", "soft_block", "soft-me"),
    "asker": rule("asker", "soft_block", "ask-me", override="user"),
    "hardy": rule("hardy", "hard_block", "hard-me"),
    "prompt-guard": rule(
        "prompt-guard", "soft_block", "forbidden", event="UserPromptSubmit", field="prompt"
    ),
    "post-guard": rule("post-guard", "soft_block", "post-me", event="PostToolUse"),
}


class Project:
    """A temporary project: ``FORGE_ROOT`` with the test catalog, and one Claude Code session.

    ``floor``: the project's ``floor:`` setting (SPEC §13), ``off`` unless a test is about the
    floor, so that an allowed shell call is answered as decided, not rewritten (None: unset,
    the default floor)."""

    def __init__(
        self, base: Path, catalog: dict[str, str] | None = None, *, floor: str | None = "off"
    ) -> None:
        self.dir = base / "project"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.root = self.dir / ".forge"
        if catalog is None:
            catalog = CATALOG
        if catalog:
            write_catalog(self.root / "behaviors", catalog)
        if floor is not None:
            self.root.mkdir(parents=True, exist_ok=True)
            (self.root / "config.yaml").write_text(f"floor: {floor}\n")
        self.session = f"sess-{uuid.uuid4()}"
        #: The call ids the hook's soft blocks named, oldest first (see :data:`CALL`).
        self.call_ids: list[str] = []
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("FORGE_", "DISABLE_", "CLAUDE_", "PYTHONPROFILEIMPORTTIME"))
        }
        self.env.update(
            FORGE_ROOT=str(self.root),
            CLAUDE_PROJECT_DIR=str(self.dir),
            XDG_CACHE_HOME=str(base / "xdg"),
        )

    def payload(self, event: str = "PreToolUse", **fields: Any) -> dict[str, Any]:
        """A Claude Code payload with this session's ids; tool events get a fresh tool_use_id."""
        data: dict[str, Any] = {
            "session_id": self.session,
            "transcript_path": f"/home/u/.claude/projects/p/{self.session}.jsonl",
            "cwd": str(self.dir),
            "permission_mode": "default",
            "hook_event_name": event,
        }
        if event in ("PreToolUse", "PostToolUse"):
            data["tool_use_id"] = f"toolu_{uuid.uuid4().hex[:24]}"
        data.update(fields)
        return data

    def bash(self, command: str, event: str = "PreToolUse", **fields: Any) -> dict[str, Any]:
        tool_input = {"command": command, "description": "run it"}
        return self.payload(event, tool_name="Bash", tool_input=tool_input, **fields)

    def run(
        self, stdin: bytes | dict[str, Any], *args: str, **env: str
    ) -> tuple[dict[str, Any] | None, str]:
        """Run the hook; return (parsed stdout or None when empty, stderr). Exit code must be 0."""
        data = json.dumps(stdin).encode() if isinstance(stdin, dict) else stdin
        result = subprocess.run(
            [*HOOK, *args],
            input=data,
            capture_output=True,
            env={**self.env, **env},
            cwd=self.dir,
            timeout=60,
        )
        stderr = result.stderr.decode("utf-8", "replace")
        assert result.returncode == 0, stderr
        assert "Traceback" not in stderr, stderr
        out = result.stdout.decode("utf-8")
        if not out.strip():
            return None, stderr
        # a soft block names its call (SPEC §4 ``--call``): kept in ``call_ids``, written as
        # CALL so that the exact texts of the tests hold whatever the call's hash
        self.call_ids += CALL_ID.findall(out)
        out = CALL_ID.sub(CALL, out)
        assert out.endswith("\n") and out.count("\n") == 1, out
        parsed: dict[str, Any] = json.loads(out)
        return parsed, stderr

    def audit(self, *, floor: bool = False, seen: bool = False) -> list[dict[str, Any]]:
        """The audit log's records; those of kind ``floor`` (the floor each allowed shell call
        ran under, SPEC §13) only with ``floor=True``, and those of kind ``seen`` (one per
        decided tool call: :mod:`forge_policy.ops.coverage`) only with ``seen=True``."""
        log = self.root / "audit" / "overrides.log"
        if not log.exists():
            return []
        records = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
        hidden = {"floor"} - ({"floor"} if floor else set()) | ({"seen"} if not seen else set())
        return [r for r in records if r.get("kind") not in hidden]

    def status(self) -> Status:
        from forge_policy.config.env import Config

        evaluator = Config.from_env(self.env).build_evaluator()
        return evaluator.status(self.session)

    def counter(self, behavior_id: str) -> int:
        behaviors = self.status().behaviors
        return behaviors[behavior_id].counter if behaviors else 0


#: What :meth:`Project.run` writes for the call id a soft block names (the real ids are kept
#: in :attr:`Project.call_ids`).
CALL = "<call>"
CALL_ID = re.compile(r"(?<=--call )([0-9a-f]{8})\b")


def to_override(behavior_id: str, session: str) -> str:
    """The evaluator's override instructions for an ``agent`` soft block (its call id as
    :meth:`Project.run` writes it)."""
    return (
        "To override: repeat the identical call within 60 s (once), or ask the user to run: "
        f'forge-policy override {behavior_id} --session {session} --call {CALL} --reason "..."'
    )


# -- the warm-worker client -------------------------------------------------------------------

CLIENT_PY = Path(__file__).resolve().parent.parent / "forge_policy" / "worker" / "launch.py"


def worker_pids(root: Path) -> list[int]:
    """The live worker processes serving ``root`` (read from ``/proc``: no ps needed)."""
    wanted = b"\0--worker\0" + str(root).encode() + b"\0"
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path("/proc", entry, "cmdline").read_bytes()
            state = Path("/proc", entry, "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if wanted in cmdline + b"\0" and state != "Z":
            found.append(int(entry))
    return found


def settle_workers(root: Path, timeout: float = 10.0) -> None:
    """Wait until every worker of ``root`` has written what follows its answers (the state,
    the ``seen`` record: :func:`forge_policy.cli.worker_cmds.settle`)."""
    from forge_policy.cli.worker_cmds import settle

    assert settle(str(root), timeout), f"the workers of {root} still busy after {timeout} s"


def stop_workers(root: Path) -> None:
    """SIGTERM every worker of ``root``, then SIGKILL what is left after 5 s."""
    import signal
    import time

    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in worker_pids(root):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + 5
        while worker_pids(root) and time.monotonic() < deadline:
            time.sleep(0.02)
        if not worker_pids(root):
            return


class ClientProject(Project):
    """A :class:`Project` whose hook is the warm-worker client (``python -I -S client.py``)."""

    def __init__(
        self,
        base: Path,
        catalog: dict[str, str] | None = None,
        client: Path = CLIENT_PY,
        *,
        floor: str | None = "off",
    ) -> None:
        super().__init__(base, catalog, floor=floor)
        self.client = client
        self.folder = self.root / "runtime" / "worker"

    def slot(self, cwd: Path | None = None, **env: str) -> Path:
        """The folder of the worker that serves :meth:`call` with ``cwd`` and ``env``."""
        from forge_policy.worker import protocol

        environ = {os.fsencode(k): os.fsencode(v) for k, v in {**self.env, **env}.items()}
        here = os.fsencode(os.path.realpath(cwd or self.dir))
        print_ = protocol.fingerprint(here, protocol.relevant(environ))
        return self.folder / os.fsdecode(print_)

    def call(self, stdin: bytes | dict[str, Any], cwd: Path | None = None, **env: str) -> Answer:
        """Run the client once; exit code 0 and no traceback are asserted."""
        data = json.dumps(stdin).encode() if isinstance(stdin, dict) else stdin
        result = subprocess.run(
            [sys.executable, "-I", "-S", str(self.client)],
            input=data,
            capture_output=True,
            env={**self.env, **env},
            cwd=cwd or self.dir,
            timeout=30,
        )
        stderr = result.stderr.decode("utf-8", "replace")
        assert result.returncode == 0, stderr
        assert "Traceback" not in stderr, stderr
        settle_workers(self.root)
        return Answer(result.stdout, stderr)

    def run_cli(self, *args: str, check: int | None = 0) -> subprocess.CompletedProcess[str]:
        """``forge-policy ARGS`` in the project, exit code ``check`` asserted (None: any)."""
        result = subprocess.run(
            [str(SCRIPT), *args], capture_output=True, text=True, env=self.env, cwd=self.dir
        )
        assert check is None or result.returncode == check, result
        return result

    def wait_worker(self, timeout: float = 10.0, slot: Path | None = None) -> int:
        """The pid of the worker once it answers ``status`` (the one in ``slot``, else the most
        recently used)."""
        import time

        from forge_policy.cli.worker_cmds import ask, ask_slot

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if slot is None:
                found = ask(str(self.root), b"status")
            else:
                found = ask_slot(os.fsencode(slot), b"status")
            if isinstance(found, dict):
                return int(found["pid"])
            time.sleep(0.02)
        raise AssertionError(f"no worker answered: {found}; log: {self.log()}")

    def requests(self, slot: Path | None = None) -> int:
        from forge_policy.cli.worker_cmds import ask, ask_slot

        if slot is None:
            found = ask(str(self.root), b"status")
        else:
            found = ask_slot(os.fsencode(slot), b"status")
        assert isinstance(found, dict), found
        return int(found["requests"])

    def log(self) -> str:
        path = self.folder / "worker.log"
        return path.read_text() if path.exists() else ""


class Answer:
    """What one client process printed."""

    def __init__(self, stdout: bytes, stderr: str) -> None:
        self.stdout = stdout
        self.stderr = stderr

    def __repr__(self) -> str:
        return f"Answer({self.stdout!r}, {self.stderr!r})"
