"""The route matrix of issue 23 through the real ``forge-policy hook`` process of every harness.

Each route of :mod:`tests.adversarial.routes` is sent, in each harness's own payload shape, to
the hook as the harness runs it (``init``'s warm-worker client, ``--harness X`` and ``--event``
where the harness needs them), in one project set up as a user's would be: a git repository,
``init`` run for every harness, a home with keys and credentials. Every call is a new session,
so no counter or retry of one case leaks into another. A harmful call must be refused (``hard``:
denied as a block that cannot be overridden; ``block``: denied or asked about) in every harness;
its harmless twin must be allowed. The answers are read by
:func:`forge_policy.testing.answers.verdict`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import uuid
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hookrun import ClientProject, settle_workers, stop_workers

import forge_policy
from forge_policy.testing.answers import verdict
from forge_policy.testing.harnesses import (
    antigravity_payload,
    codex_payload,
    copilot_payload,
    cursor_payload,
    gemini_payload,
    native_call,
    opencode_payload,
)
from tests.adversarial.routes import (
    AUDIT_SECRETS,
    EXPLAIN_FILES,
    ROUTES,
    RUNTIME_LINKS,
    Edited,
    Route,
)

#: The refusal of a call whose facts ran out of time (SPEC §9: a blocking behavior decides as
#: matched), as :mod:`forge_policy.catalog.behavior` words it.
OUT_OF_BUDGET = "could not inspect this call within its budget"
#: ``--event`` for the harnesses whose payload does not name its event.
EVENT_ARGS = {"copilot": ["--event", "preToolUse"], "antigravity": ["--event", "PreToolUse"]}


class World:
    """One project as a user's: git, ``init`` for every harness, a home with secrets."""

    def __init__(self, base: Path) -> None:
        self.project = ClientProject(base, catalog={})  # the built-in catalog
        self.home = base / "home"
        self.project.env["HOME"] = str(self.home)
        self.dir = self.project.dir
        self.fill = {
            "@P@": str(self.dir),
            "@HOME@": str(self.home),
            "@SITE@": sysconfig.get_paths()["purelib"],
            "@PKG@": str(Path(forge_policy.__file__).parent),
        }
        self._setup()

    def _setup(self) -> None:
        from forge_policy.ops.init import init

        files = {
            "README.md": "# p\n",
            "src/main.py": "print(1)\n",
            "src/b.py": "y = 1\n",
            "notes.md": "hello\n",
            ".env": "TOKEN=1\n",
            ".env.example": "TOKEN=\n",
            "certs/server.pem": "x\n",
            "infra/terraform.tfstate": "{}\n",
            "config/secrets.sample.yaml": "k: v\n",
        }
        for name, text in files.items():
            path = self.dir / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        for name in (
            ".ssh/id_ed25519",
            ".ssh/id_rsa",
            ".aws/credentials",
            ".pgpass",
            ".kube/config",
        ):
            path = self.home / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("secret\n")
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
        for argv in (["init", "-q"], ["add", "README.md", "src"], ["commit", "-qm", "init"]):
            subprocess.run([*git, *argv], cwd=self.dir, check=True, env=self.project.env)
        init(
            self.dir,
            self.project.root,
            harnesses=list(("claude-code", "codex", "gemini", "cursor", "copilot")),
        )
        os.link(self.dir / ".claude" / "settings.json", self.dir / "notes-link.json")

    def fill_in(self, value: Any) -> Any:
        if isinstance(value, Edited):
            return value.render((self.dir / value.path).read_text())
        if isinstance(value, str):
            for key, text in self.fill.items():
                value = value.replace(key, text)
            return value
        if isinstance(value, list):
            return [self.fill_in(v) for v in value]
        if isinstance(value, dict):
            return {k: self.fill_in(v) for k, v in value.items()}
        return value

    def payload(self, route: Route, harness: str) -> dict[str, Any]:
        """The route's call as ``harness`` sends it, in a new session."""
        session = f"sess-{uuid.uuid4()}"
        tool_input: dict[str, Any] = self.fill_in(dict(route.input))
        return build(harness, route.tool, tool_input, session, str(self.dir), route.native)

    def ask(self, harness: str, payload: dict[str, Any]) -> tuple[str, str]:
        """``(allow | ask | deny, reason)`` of the hook, as ``init`` runs it for ``harness``.

        A refusal because a fact ran out of its time budget (a loaded machine: the budget is
        partly wall-clock) says nothing about how the call is read: it is asked again, a few
        times, before it counts."""
        argv = [] if harness == "claude-code" else ["--harness", harness]
        argv += EVENT_ARGS.get(harness, [])
        for _attempt in range(5):
            result = subprocess.run(
                [sys.executable, "-I", "-S", str(self.project.client), *argv],
                input=json.dumps(payload).encode(),
                capture_output=True,
                env=self.project.env,
                cwd=self.dir,
                timeout=60,
            )
            stderr = result.stderr.decode("utf-8", "replace")
            assert result.returncode == 0 and "Traceback" not in stderr, stderr
            decided, reason = verdict(harness, result.stdout)
            if OUT_OF_BUDGET not in reason:
                break
        settle_workers(self.project.root)  # its state and seen record follow the answer
        return decided, reason


def patch(tool: str, tool_input: dict[str, Any]) -> str:
    """A Codex ``apply_patch`` text for a catalog ``Write`` or ``Edit``."""
    path = tool_input["file_path"]
    if tool == "Write":
        body = "".join(f"+{line}\n" for line in str(tool_input["content"]).splitlines())
        return f"*** Begin Patch\n*** Add File: {path}\n{body}*** End Patch\n"
    old, new = tool_input["old_string"], tool_input["new_string"]
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n"


def build(
    harness: str,
    tool: str,
    tool_input: dict[str, Any],
    session: str,
    cwd: str,
    native: bool = False,
) -> dict[str, Any]:
    """A pre-tool payload of ``harness`` for a call in the catalog's vocabulary (or, when
    ``native``, already in that harness's)."""
    if harness == "claude-code":
        return {
            "session_id": session,
            "transcript_path": f"/home/u/.claude/projects/p/{session}.jsonl",
            "cwd": cwd,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_use_id": f"toolu_{uuid.uuid4().hex[:24]}",
            "tool_name": tool,
            "tool_input": tool_input,
        }
    if harness == "codex":
        if tool in ("Write", "Edit"):
            tool, tool_input = "apply_patch", {"command": patch(tool, tool_input)}
        return codex_payload(tool, session_id=session, cwd=cwd, **tool_input)
    name, args = (tool, tool_input) if native else native_call(harness, tool, tool_input)
    if harness == "gemini":
        return gemini_payload(name, session_id=session, cwd=cwd, **args)
    if harness == "cursor":
        event = "beforeShellExecution" if name == "Shell" else "preToolUse"
        return cursor_payload(name, event=event, session_id=session, cwd=cwd, **args)
    if harness == "copilot":
        return copilot_payload(name, session_id=session, cwd=cwd, **args)
    if harness == "opencode":
        return opencode_payload(name, session_id=session, cwd=cwd, **args)
    return antigravity_payload(name, session_id=session, cwd=cwd, **args)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    built = World(tmp_path_factory.mktemp("routes"))
    try:
        yield built
    finally:
        stop_workers(built.project.root)


def cases() -> Iterator[Any]:
    for route in ROUTES:
        for harness in route.reach():
            branch = route.open_in(harness)
            marks = (
                [
                    pytest.mark.xfail(
                        strict=True,
                        reason=f"route: {route.family} — closed by issue 23 branch {branch}",
                    )
                ]
                if branch
                else []
            )
            yield pytest.param(route, harness, marks=marks, id=f"{route.id}@{harness}")


@pytest.fixture(scope="module")
def ahead(world: World, request: pytest.FixtureRequest) -> Iterator[dict[str, Future[Any]]]:
    """Every selected case's hook call, started ahead by two threads (each call is still its
    own hook process; the warm worker answers them concurrently, as for parallel tool calls)."""
    selected = [
        item.callspec.params
        for item in request.session.items
        if item.nodeid.split("[")[0].endswith("::test_route")
    ]
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            f"{p['route'].id}@{p['harness']}": pool.submit(
                world.ask, p["harness"], world.payload(p["route"], p["harness"])
            )
            for p in selected
        }
        yield futures
        for future in futures.values():
            future.cancel()


@pytest.mark.parametrize(("route", "harness"), list(cases()))
def test_route(ahead: dict[str, Future[tuple[str, str]]], route: Route, harness: str) -> None:
    decided, reason = ahead[f"{route.id}@{harness}"].result()
    if route.must == "allow":
        assert decided == "allow", f"{decided}: {reason}"
    elif route.must == "block":
        assert decided in ("deny", "ask"), f"allowed; expected: {route.expect}"
    else:
        assert (decided, "cannot be overridden" in reason) == ("deny", True), (
            f"{decided} (expected: {route.expect}): {reason!r}"
        )


# --- the data ------------------------------------------------------------------------------


def test_every_family_has_three_spellings_and_a_twin() -> None:
    from tests.adversarial.routes import FAMILIES, OPEN

    elsewhere = {"audit-secrets": len(AUDIT_SECRETS), "runtime-symlink": len(RUNTIME_LINKS)}
    for family in FAMILIES:
        harmful = [r for r in ROUTES if r.family == family and r.must != "allow"]
        twins = [r for r in ROUTES if r.family == family and r.must == "allow"]
        assert len(harmful) + elsewhere.get(family, 0) >= 3, family
        assert twins or family == "audit-secrets", family
    ids = [r.id for r in ROUTES]
    assert len(ids) == len(set(ids))
    assert set(OPEN) <= set(ids) | {"explain-file:cli-" + e[0] for e in EXPLAIN_FILES} | {
        "runtime-symlink:" + e[0] for e in RUNTIME_LINKS
    }
    assert not {OPEN[r.id] for r in ROUTES if r.must == "allow" and r.id in OPEN}


# --- secrets in the audit log ----------------------------------------------------------------


@pytest.mark.parametrize("harness", ["claude-code", "codex", "gemini", "copilot"])
@pytest.mark.parametrize(
    ("spelling", "command", "secret"), AUDIT_SECRETS, ids=[a[0] for a in AUDIT_SECRETS]
)
def test_a_refused_call_is_audited_without_its_secret(
    world: World, harness: str, spelling: str, command: str, secret: str
) -> None:
    route = Route("audit-secrets", spelling, "Bash", {"command": command})
    payload = world.payload(route, harness)
    decided, reason = world.ask(harness, payload)
    assert decided == "deny" and secret not in reason, reason
    log = world.project.root / "audit" / "overrides.log"
    records = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    mine = [r for r in records if payload_session(payload) in json.dumps(r)]
    # the block, and the call's seen record (a digest of the input, never the input)
    assert sorted(r.get("kind") for r in mine) == ["block", "seen"], mine
    assert secret not in log.read_text()


def payload_session(payload: dict[str, Any]) -> str:
    for key in ("session_id", "conversation_id", "sessionId", "conversationId", "sessionID"):
        if key in payload:
            return str(payload[key])
    raise KeyError(payload)


# --- explain prints no file ------------------------------------------------------------------


def explain_cases() -> Iterator[Any]:
    from tests.adversarial.routes import OPEN

    for case in EXPLAIN_FILES:
        branch = OPEN.get(f"explain-file:cli-{case[0]}", "")
        marks = (
            [
                pytest.mark.xfail(
                    strict=True, reason=f"route: explain-file — closed by issue 23 branch {branch}"
                )
            ]
            if branch
            else []
        )
        yield pytest.param(*case, marks=marks, id=case[0])


@pytest.mark.parametrize(("spelling", "name", "text", "secret"), list(explain_cases()))
def test_explain_prints_no_secret_of_the_file_it_reads(
    world: World, spelling: str, name: str, text: str, secret: str
) -> None:
    folder = world.dir / "explain" / spelling
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    for argv in (["-f", name], ["--json", "--file", name]):
        result = subprocess.run(
            [str(Path(sys.executable).with_name("forge-policy")), "explain", *argv],
            capture_output=True,
            text=True,
            env=world.project.env,
            cwd=folder,
            timeout=60,
        )
        assert secret not in result.stdout + result.stderr, (argv, result)


# --- a symlinked .forge/runtime --------------------------------------------------------------


def link_cases() -> Iterator[Any]:
    from tests.adversarial.routes import OPEN

    for case in RUNTIME_LINKS:
        branch = OPEN.get(f"runtime-symlink:{case[0]}", "")
        marks = (
            [
                pytest.mark.xfail(
                    strict=True,
                    reason=f"route: runtime-symlink — closed by issue 23 branch {branch}",
                )
            ]
            if branch
            else []
        )
        yield pytest.param(*case, marks=marks, id=case[0])


@pytest.mark.parametrize(("spelling", "link", "target"), list(link_cases()))
def test_a_symlinked_runtime_receives_no_cache_and_no_key(
    tmp_path: Path, spelling: str, link: str, target: str
) -> None:
    from hookrun import CATALOG, Project

    project = Project(tmp_path, CATALOG)  # a project catalog: cached under runtime/ only
    outside = tmp_path / target
    where = project.dir / link
    if where.exists():
        outside.parent.mkdir(parents=True, exist_ok=True)
        where.rename(outside)
    else:
        outside.mkdir(parents=True)
    where.symlink_to(outside, target_is_directory=True)
    out, _ = project.run(project.bash("echo hard-me"), FORGE_WORKER="off")
    assert verdict("claude-code", out)[0] == "deny"  # the hook still decides
    landed = sorted(p.name for p in outside.rglob("*") if p.name.startswith("catalog-cache"))
    assert landed == [], landed


def test_verdict_reads_each_harness_s_answers_as_the_conformance_suite_pins_them() -> None:
    from tests.harness.conformance import Texts
    from tests.harness.test_conformance import PRE_TOOL

    t = Texts("s")
    asks = {"cursor", "copilot", "antigravity"}  # the others cannot ask: they deny
    for harness, (_fixture, _event, expected) in PRE_TOOL.items():
        for outcome in ("allow", "nudge", "warning"):
            assert verdict(harness, expected(t, outcome)) == ("allow", ""), (harness, outcome)
        assert verdict(harness, expected(t, "hard")) == ("deny", t.hard), harness
        assert verdict(harness, expected(t, "soft_agent")) == ("deny", t.soft), harness
        want = "ask" if harness in asks else "deny"
        assert verdict(harness, expected(t, "soft_user"))[0] == want, harness
    claude = {"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "?"}}
    assert verdict("claude-code", json.dumps(claude)) == ("ask", "?")
