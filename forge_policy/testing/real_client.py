"""Run a real coding-agent client against a scripted model, in a project set up by
``forge-policy init``: what the client does with the hook's answers, end to end.

>>> from forge_policy.testing.real_client import DRIVERS
>>> sorted(DRIVERS)
['claude-code', 'codex', 'copilot', 'gemini']

How each client is run and pointed at the model: :mod:`forge_policy.testing.clients`.

A :class:`RealClientProject` is a temporary git repository with its own ``HOME`` (nothing of the
user's configuration is read), set up by the real ``forge-policy init --harness NAME`` of this
environment, and a scripted model (:mod:`forge_policy.testing.models`) on ``127.0.0.1``. Each
:meth:`RealClientProject.run` scripts the model, runs the client once non-interactively and
returns a :class:`ClientRun`: the tool calls the model asked for and which of them ran, their
results as the model saw them, the client's own denials, the files written and the transcript.

The client process gets only ``PATH``, the temporary ``HOME`` and the variables that point it at
the scripted model (a dummy key): nothing leaves the machine. The pytest fixture is
``forge_real_client`` (:mod:`forge_policy.testing.plugin`); a client that is not installed raises
:class:`ClientMissing`, which the fixture turns into a skip.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from forge_policy.testing.clients import DRIVERS, ClientMissing
from forge_policy.testing.models import Request, ToolCall, ToolResult, Turn

#: What the scripted model is told by the client's first prompt.
PROMPT = "Do the task."
#: Seconds one client run may take before it is killed.
RUN_TIMEOUT = 120.0
#: Folders of the project that are not "files written" (the repository's own bookkeeping).
UNWATCHED = (".git",)


@attrs.frozen
class ClientRun:
    """What one run of a client showed.

    ``requested``: the tool calls the model asked for, in order; ``results``: each call's result
    as the model saw it (``None`` when the client never sent one back); ``denials``: the client's
    own record of refused calls (Claude Code's ``permission_denials``); ``files_written``: project
    paths (POSIX, relative) created, changed or removed; ``transcript``: the session's transcript
    file, if the client wrote one.
    """

    requested: tuple[ToolCall, ...]
    results: Mapping[str, ToolResult | None]
    denials: tuple[Mapping[str, Any], ...]
    files_written: frozenset[str]
    transcript: Path | None
    output: Any
    stdout: str
    stderr: str
    returncode: int
    session_id: str | None
    wire_ids: Mapping[str, str] = attrs.field(factory=dict)
    #: the requests the client sent the model during this run
    requests: tuple[Request, ...] = ()

    def model_saw(self, text: str) -> bool:
        """Whether ``text`` appears in anything the client sent the model in this run (tool
        results, reminders, context a hook added)."""
        return any(text in json.dumps(r.body, ensure_ascii=False) for r in self.requests)

    def result(self, index: int = 0) -> ToolResult:
        """The result of the ``index``-th requested call (``AssertionError`` if none came back)."""
        found = self.results.get(self.requested[index].id)
        if found is None:
            raise AssertionError(
                f"no tool result came back for {self.requested[index]!r}\n{self.describe()}"
            )
        return found

    @property
    def denied(self) -> tuple[ToolCall, ...]:
        """The requested calls the client refused (by its own record, else an error result that
        names a hook)."""
        ids = {str(d.get("tool_use_id", "")) for d in self.denials}
        return tuple(c for c in self.requested if c.id in ids or self.wire_ids.get(c.id) in ids)

    @property
    def ran(self) -> tuple[ToolCall, ...]:
        """The requested calls that ran: a result came back and the client did not refuse it."""
        denied = {c.id for c in self.denied}
        return tuple(
            c
            for c in self.requested
            if c.id not in denied
            and (r := self.results.get(c.id)) is not None
            and not _hook_error(r)
        )

    def describe(self) -> str:
        """A readable summary for assertion messages."""
        lines = [f"exit {self.returncode}; session {self.session_id}"]
        for call in self.requested:
            res = self.results.get(call.id)
            lines.append(f"  {call.name} {json.dumps(dict(call.input))[:120]} -> {res!r}"[:400])
        lines.append(f"  denials: {list(self.denials)}")
        lines.append(f"  files written: {sorted(self.files_written)}")
        if self.stderr.strip():
            lines.append(f"  stderr: {self.stderr.strip()[-800:]}")
        return "\n".join(lines)


def _hook_error(result: ToolResult) -> bool:
    return result.is_error and "hook" in result.text.lower()


def forge_policy_program() -> str:
    """The ``forge-policy`` of this environment (beside this interpreter), else the one on PATH."""
    beside = Path(sys.executable).parent / "forge-policy"
    if beside.is_file():
        return str(beside)
    found = shutil.which("forge-policy")
    if found is None:
        raise ClientMissing("forge-policy not found on PATH")
    return found


class RealClientProject:
    """A temporary project set up for one client, its scripted model and its runs.

    ``folder``: an empty folder to use (the project is ``folder/project``, the client's home
    ``folder/home``); ``init_args``: more arguments for ``forge-policy init`` (``--no-worker``);
    ``environ``: variables for the hook and the client (``FORGE_*``); ``search``: folders where
    the client's program may be besides ``PATH``; ``init``: run ``forge-policy init`` (else the
    project is left as cloned or empty); ``clone``: a repository to ``git clone`` as the project
    (a teammate's checkout); ``forge_program``: the ``forge-policy`` to run (default: this
    environment's, :func:`forge_policy_program`).
    """

    def __init__(
        self,
        client: str,
        folder: Path,
        *,
        init_args: Sequence[str] = (),
        environ: Mapping[str, str] | None = None,
        search: Sequence[Path] = (),
        init: bool = True,
        clone: Path | None = None,
        forge_program: str | None = None,
    ) -> None:
        if client not in DRIVERS:
            raise ValueError(f"unknown client {client!r}: one of {', '.join(sorted(DRIVERS))}")
        self.driver = DRIVERS[client]()
        self.program = self.driver.find(search)
        self.folder = Path(folder)
        self.project = self.folder / "project"
        self.home = self.folder / "home"
        self.forge_program = forge_program or forge_policy_program()
        self.home.mkdir(parents=True, exist_ok=True)
        self.environ = dict(environ or {})
        self.init_args = tuple(init_args)
        self.runs: list[ClientRun] = []
        self.model = self.driver.model_class()
        self.model.__enter__()
        try:
            if clone is None:
                self.project.mkdir(parents=True, exist_ok=True)
                self.git("init", "-q", "-b", "main")
            else:
                subprocess.run(
                    ["git", "clone", "-q", str(clone), str(self.project)],
                    env=self.base_environ(),
                    capture_output=True,
                    check=True,
                    timeout=60,
                )
            self.git("config", "user.email", "dev@example.invalid")
            self.git("config", "user.name", "dev")
            self.driver.prepare(self)
            if init:
                self.forge("init", "--harness", self.driver.harness, *init_args)
        except BaseException:
            self.close()
            raise

    # --- the project ---------------------------------------------------------------------
    def base_environ(self) -> dict[str, str]:
        """``PATH``, ``HOME`` and the caller's ``environ``: all a child process gets."""
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            **self.environ,
        }

    def git(self, *args: str) -> str:
        """Run git in the project; its output."""
        done = subprocess.run(
            ["git", *args],
            cwd=self.project,
            env=self.base_environ(),
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        return done.stdout

    def forge(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run this environment's ``forge-policy`` in the project."""
        done = subprocess.run(
            [self.forge_program, *args],
            cwd=self.project,
            env=self.base_environ(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"forge-policy {' '.join(args)} exited {done.returncode}:\n"
                f"{done.stdout}{done.stderr}"
            )
        return done

    def write(self, relative: str, text: str) -> Path:
        """Write a project file (folders made as needed)."""
        path = self.project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def add_behavior(self, text: str) -> Path:
        """Add a behavior (YAML text with its ``id``) to the project's catalog, copying the
        built-in one into ``.forge/behaviors`` first if the project still uses it."""
        index = self.project / ".forge" / "behaviors" / "index.yaml"
        if not index.is_file():
            self.forge("init", "--harness", self.driver.harness, "--copy-catalog", *self.init_args)
        found = re.search(r"^id:\s*['\"]?([\w.-]+)", text, re.MULTILINE)
        if found is None:
            raise ValueError("add_behavior: the behavior has no top-level id")
        behavior_id = found.group(1)
        path = self.write(f".forge/behaviors/{behavior_id}/behavior.yaml", text)
        with index.open("a", encoding="utf-8") as out:
            out.write(f"  - id: {behavior_id}\n    enabled: true\n")
        return path

    def settings(self) -> dict[str, Any]:
        """The client's project settings file as ``init`` wrote it (Claude Code's)."""
        path = self.project / ".claude" / "settings.json"
        loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return loaded

    def write_settings(self, settings: Mapping[str, Any], *, suffix: str = "") -> Path:
        """Replace the project's Claude Code settings with ``settings`` (JSON) and ``suffix``
        (raw text spliced in before the closing brace, for what JSON cannot say: ``NaN``)."""
        text = json.dumps(settings, indent=2)
        if suffix:
            text = text.rstrip().removesuffix("}").rstrip() + ",\n" + suffix + "\n}"
        return self.write(".claude/settings.json", text + "\n")

    def audit_records(self) -> list[dict[str, Any]]:
        """The project's audit log (``.forge/audit/overrides.log``), one dict per record."""
        path = self.project / ".forge" / "audit" / "overrides.log"
        if not path.is_file():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]

    # --- a run ---------------------------------------------------------------------------
    def run(
        self,
        turns: Iterable[Turn],
        *,
        prompt: str = PROMPT,
        environ: Mapping[str, str] | None = None,
        args: Sequence[str] = (),
        timeout: float = RUN_TIMEOUT,
    ) -> ClientRun:
        """Script the model with ``turns``, run the client once (``args`` appended to its command
        line, e.g. Claude Code's ``--resume SESSION``), and say what happened."""
        script = list(turns)
        self.model.script(script)
        first_request = len(self.model.requests)
        before = _snapshot(self.project)
        env = self.base_environ() | self.driver.environ(self) | dict(environ or {})
        done = subprocess.run(
            [*self.driver.command(self.program, prompt), *args],
            cwd=self.project,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        # the last answers' state and seen records follow them: written before this returns
        self.settle()
        output, denials, session = self.driver.parse(done.stdout)
        calls = tuple(c for turn in script[: self.model.served] for c in turn.tool_calls)
        results = self.driver.results(self.model, calls)
        denials += tuple(
            {"tool_name": c.name, "tool_use_id": c.id, "tool_input": dict(c.input)}
            for c in calls
            if (r := results.get(c.id)) is not None and self.driver.refused(r)
        )
        after = _snapshot(self.project)
        changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
        result = ClientRun(
            requested=calls,
            results=results,
            denials=denials,
            files_written=frozenset(changed),
            transcript=self.driver.transcript(self, session),
            output=output,
            stdout=done.stdout,
            stderr=done.stderr,
            returncode=done.returncode,
            session_id=session,
            wire_ids={c.id: self.model.wire_id(c) for c in calls},
            requests=tuple(self.model.requests[first_request:]),
        )
        self.runs.append(result)
        return result

    def settle(self, timeout: float = 10.0) -> None:
        """Wait until the project's warm workers have written what follows their answers (the
        session state, the ``seen`` records): :meth:`run` does, before it returns."""
        if (self.project / ".forge" / "runtime" / "worker").is_dir():
            # (a process, as `worker stop` below: the kit sits below the command line)
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                subprocess.run(
                    [forge_policy_program(), "worker", "settle", "--timeout", str(timeout)],
                    cwd=self.project,
                    env=self.base_environ(),
                    capture_output=True,
                    timeout=timeout + 30,
                    check=False,
                )

    def close(self) -> None:
        """Stop the model and the project's warm worker, if one started."""
        self.model.close()
        if (self.project / ".forge" / "runtime" / "worker").is_dir():
            # nothing to stop, or it stops when idle
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                subprocess.run(
                    [forge_policy_program(), "worker", "stop"],
                    cwd=self.project,
                    env=self.base_environ(),
                    capture_output=True,
                    timeout=30,
                    check=False,
                )

    def __enter__(self) -> RealClientProject:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _snapshot(root: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if relative.parts[0] in UNWATCHED or not path.is_file() or path.is_symlink():
            continue
        try:
            found[relative.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            continue
    return found
