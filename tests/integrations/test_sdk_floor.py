"""The floor the SDK adapters give the shell tools they wrap (SPEC §13), through the real
packages: the claude-agent-sdk's hook and permission callbacks answered over its control
protocol (``sdk_wire``), a LangChain ``create_agent`` graph with LangChain's own
``ShellToolMiddleware``, and an OpenAI Agents ``Runner.run`` with a function tool and a local
``ShellTool``. The rewritten commands are executed under bubblewrap: the harmless part works,
``.forge/`` stays unwritten. Blocked calls stay blocked and unrewritten; ``floor: off`` leaves
commands as they are; other tools are never rewritten. (The decision tests beside this file
pass ``floor="off"``: they check the engine's words, not the rewrite.)"""

from __future__ import annotations

import asyncio
import gc
import json
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk")
pytest.importorskip("langchain")
pytest.importorskip("agents")

if shutil.which("bwrap") is None:  # .ci/run installs it: in CI this skip fails the run
    pytest.skip("bwrap not found on PATH", allow_module_level=True)

import anyio
from agents import Agent, Runner, ShellTool, function_tool
from agents.tool import ShellCommandRequest
from claude_agent_sdk import ClaudeAgentOptions, PermissionResultAllow
from langchain.agents import create_agent
from langchain.agents.middleware import ShellToolMiddleware
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

import forge_policy as fp
from forge_policy.integrations import claude_agent_sdk as claude
from forge_policy.integrations import openai_agents
from forge_policy.integrations._floor import FloorUnavailable, ShellFloor
from forge_policy.integrations.langchain import ForgePolicyMiddleware
from tests.helpers import behavior_yaml, write_catalog
from tests.integrations.agents_model import QUIET, TurnModel
from tests.integrations.sdk_wire import client
from tests.integrations.test_langchain import ScriptedModel

#: how a command rewritten under bubblewrap starts (its absolute path, then a space)
BWRAP = f"{shutil.which('bwrap')} "

#: A shell call the engine allows (no rule sees into the script) whose script writes `.forge/`;
#: the built-in catalog cannot see into it either.
SNEAKY = "echo built > build.txt; sh ./w.sh; echo finished"
#: A shell call the engine refuses (``keep-forge``, a soft block).
DIRECT = "echo x > .forge/state.json"
#: The catalog of these tests: one rule, decided without any time budget at stake.
KEEP_FORGE = behavior_yaml(
    "keep-forge",
    triggers=(
        "    - event: PreToolUse\n"
        "      matcher: Bash\n"
        "      conditions:\n"
        "        - field: tool_input.command\n"
        "          operator: contains\n"
        "          value: .forge/state.json\n"
    ),
    default_level="soft_block",
    name="Keep .forge",
)
#: Asks the user about any ``deploy`` (an ``override: user`` soft block).
ASK_DEPLOY = behavior_yaml(
    "ask-deploy",
    triggers=(
        "    - event: PreToolUse\n"
        "      matcher: Bash\n"
        "      conditions:\n"
        "        - field: tool_input.command\n"
        "          operator: starts_with\n"
        "          value: deploy\n"
    ),
    default_level="soft_block",
    escalation="    override: user\n",
    name="Ask before deploying",
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with a ``.forge/`` and a script that writes into it."""
    root = tmp_path / "project"
    (root / ".forge").mkdir(parents=True)
    (root / "w.sh").write_text("echo owned > .forge/x.txt\n", encoding="utf-8")
    return root


def configure(project: Path, mode: str) -> None:
    (project / ".forge" / "config.yaml").write_text(f"floor: {mode}\n", encoding="utf-8")


def execute(command: str, project: Path) -> subprocess.CompletedProcess[str]:
    """Run ``command`` as the harness would: ``bash -c`` in the project."""
    return subprocess.run(
        ["bash", "-c", command], cwd=project, capture_output=True, text=True, timeout=60
    )


def assert_floor_held(done: subprocess.CompletedProcess[str], project: Path) -> None:
    assert (project / "build.txt").read_text() == "built\n", done.stderr
    assert not (project / ".forge" / "x.txt").exists()
    assert "Read-only file system" in done.stdout + done.stderr
    assert "finished" in done.stdout


CATALOG: list[fp.Catalog] = []


@pytest.fixture(scope="module", autouse=True)
def catalog(tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = write_catalog(
        tmp_path_factory.mktemp("catalog"), {"keep-forge": KEEP_FORGE, "ask-deploy": ASK_DEPLOY}
    )
    CATALOG[:] = [fp.load_catalog(folder)]


def evaluator() -> fp.Evaluator:
    return fp.Evaluator(CATALOG[0], audit=fp.MemoryAuditSink())


# --- the shared rule ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "keyword", "rewritten"),
    [
        (None, None, True),  # the default, harness: an SDK has none, so forge_policy's own
        ("harness", None, True),
        ("own", None, True),
        ("off", None, False),
        ("off", "own", True),  # the adapter's keyword chooses over the project
        ("own", "off", False),
    ],
)
def test_the_project_config_and_the_keyword_choose(
    project: Path, config: str | None, keyword: str | None, rewritten: bool
) -> None:
    if config is not None:
        configure(project, config)
    shell = ShellFloor(keyword, project=str(project), harness="langchain")
    assert (shell.command("make") is not None) is rewritten


def test_without_bubblewrap_the_next_method_that_works_wraps_the_call(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No bubblewrap on ``PATH``: the Landlock launcher (this kernel has it) wraps the call, as
    the hook's rewrite does. (Where no method works at all, ``floor="own"`` raises
    :class:`FloorUnavailable` and the default runs the call as the engine decided it; no kernel
    here lacks Landlock, so that branch is not run by this suite.)"""
    monkeypatch.setenv("PATH", str(project))  # no bwrap on it
    command = ShellFloor("own", project=str(project)).command("make")
    assert command is not None and "launch.py" in command and "bwrap" not in command
    assert issubclass(FloorUnavailable, RuntimeError)


def test_a_bad_floor_keyword_is_refused() -> None:
    with pytest.raises(ValueError, match="floor: expected one of own, off"):
        ShellFloor("harness")


# --- claude-agent-sdk ---------------------------------------------------------------------------


def pre_tool(project: Path, command: str, tool: str = "Bash") -> dict[str, Any]:
    tool_input = {"command": command} if tool == "Bash" else {"file_path": command, "content": ""}
    return {
        "session_id": "s1",
        "transcript_path": "/nonexistent/s1.jsonl",
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": {**tool_input, "description": "build"},
        "tool_use_id": "toolu_1",
    }


def hook_answers(inputs: list[dict[str, Any]], **options: Any) -> list[dict[str, Any]]:
    """The answers the CLI reads for ``inputs``, through a ``ClaudeSDKClient``."""

    async def main() -> list[dict[str, Any]]:
        sdk, cli = client(ClaudeAgentOptions(hooks=claude.hooks(evaluator(), **options)))
        await sdk.connect()
        try:
            return [await cli.hook(data) for data in inputs]
        finally:
            await sdk.disconnect()

    return anyio.run(main)


def test_claude_an_allowed_bash_call_comes_back_rewritten_and_cannot_write_forge(
    project: Path,
) -> None:
    [answer] = hook_answers([pre_tool(project, SNEAKY)])
    specific = answer["hookSpecificOutput"]
    assert "permissionDecision" not in specific  # the CLI's own permission flow still applies
    updated = specific["updatedInput"]
    assert updated["description"] == "build"  # updatedInput replaces the whole input
    assert updated["command"].startswith(BWRAP) and updated["command"] != SNEAKY
    assert_floor_held(execute(updated["command"], project), project)


def test_claude_a_blocked_call_stays_blocked_and_is_not_rewritten(project: Path) -> None:
    [answer] = hook_answers([pre_tool(project, DIRECT)])
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "updatedInput" not in answer["hookSpecificOutput"]


def test_claude_a_call_put_to_the_user_carries_the_rewrite(project: Path) -> None:
    """What the user approves runs under the floor (the CLI applies ``updatedInput`` with
    ``ask``)."""
    [answer] = hook_answers([pre_tool(project, "deploy; " + SNEAKY)])
    specific = answer["hookSpecificOutput"]
    assert specific["permissionDecision"] == "ask"
    assert specific["updatedInput"]["command"].startswith(BWRAP)


@pytest.mark.parametrize("how", ["config", "keyword"])
def test_claude_floor_off_leaves_the_command(project: Path, how: str) -> None:
    if how == "config":
        configure(project, "off")
    options = {"floor": "off"} if how == "keyword" else {}
    [answer] = hook_answers([pre_tool(project, SNEAKY)], **options)
    assert answer == {}


def test_claude_other_tools_are_never_rewritten(project: Path) -> None:
    [answer] = hook_answers([pre_tool(project, str(project / "notes.txt"), tool="Write")])
    assert answer == {}


def test_claude_shell_tools_names_the_tools_rewritten(project: Path) -> None:
    [answer] = hook_answers([pre_tool(project, SNEAKY)], shell_tools=("MyShell",))
    assert answer == {}


@pytest.mark.parametrize(
    ("config", "rewritten"), [("harness", False), ("own", True)], ids=["harness", "own"]
)
def test_claude_the_sdks_sandbox_counts_under_floor_harness(
    project: Path, config: str, rewritten: bool
) -> None:
    configure(project, config)
    sandbox = {"enabled": True, "failIfUnavailable": True, "allowUnsandboxedCommands": False}
    [answer] = hook_answers([pre_tool(project, SNEAKY)], sandbox=sandbox)
    assert ("hookSpecificOutput" in answer) is rewritten
    # a sandbox a command may leave does not count
    [leaky] = hook_answers([pre_tool(project, SNEAKY)], sandbox={**sandbox, "enabled": False})
    assert "updatedInput" in leaky["hookSpecificOutput"]


def test_claude_the_settings_files_sandbox_counts_unless_the_sdks_option_says_otherwise(
    project: Path,
) -> None:
    sandbox = {"enabled": True, "failIfUnavailable": True, "allowUnsandboxedCommands": False}
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps({"sandbox": sandbox}))
    [answer] = hook_answers([pre_tool(project, SNEAKY)])
    assert answer == {}  # Claude Code's sandbox holds: nothing to add
    # the SDK's option is the CLI's highest settings layer: turned off there, it is off
    [answer] = hook_answers([pre_tool(project, SNEAKY)], sandbox={**sandbox, "enabled": False})
    assert answer["hookSpecificOutput"]["updatedInput"]["command"].startswith(BWRAP)


def test_claude_can_use_tool_allows_with_the_rewritten_input(project: Path) -> None:
    async def user(name: str, tool_input: dict[str, Any], context: Any, reason: str) -> Any:
        return PermissionResultAllow()  # the user approves the call as the model asked it

    async def main(cli_input: dict[str, Any]) -> dict[str, Any]:
        decide = claude.can_use_tool(evaluator(), session_id="s1", project=str(project), ask=user)
        sdk, cli = client(ClaudeAgentOptions(can_use_tool=decide))
        await sdk.connect()
        try:
            return await cli.can_use_tool("Bash", cli_input, "toolu_1")
        finally:
            await sdk.disconnect()

    allowed = anyio.run(main, {"command": SNEAKY})
    assert allowed["behavior"] == "allow"
    assert_floor_held(execute(allowed["updatedInput"]["command"], project), project)
    approved = anyio.run(main, {"command": "deploy now"})
    assert approved["updatedInput"]["command"].startswith(BWRAP)
    refused = anyio.run(main, {"command": DIRECT})
    assert refused["behavior"] == "deny" and "updatedInput" not in refused
    other = anyio.run(main, {"command": SNEAKY, "note": 1})  # the whole input, kept
    assert other["updatedInput"]["note"] == 1


# --- LangChain ----------------------------------------------------------------------------------


#: ShellToolMiddleware (langchain 1.5.2) leaves its bash's pipes to the garbage collector.
LANGCHAIN_LEAK = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


def collect_langchain_shell_pipes(timeout: float = 10.0) -> None:
    """Wait for the middleware's reader threads (they end when its bash has exited, which
    ``after_agent`` asks for) and collect what they held: the unclosed pipes then warn in the
    test that made them, under :data:`LANGCHAIN_LEAK`, not in whichever test runs next (CI saw
    ``unclosed <_io.FileIO name=16 mode='rb'>`` fail the async test after them)."""
    deadline = time.monotonic() + timeout
    for thread in threading.enumerate():
        if thread.name.endswith("(_enqueue_stream)"):
            thread.join(max(0.0, deadline - time.monotonic()))
    gc.collect()


def langchain_run(folder: Path, *commands: str, **options: Any) -> list[ToolMessage]:
    """A ``create_agent`` graph whose shell is LangChain's ``ShellToolMiddleware`` (a
    persistent bash in the project), behind the adapter; the tool messages of one run."""
    turns = [
        AIMessage(content="", tool_calls=[{"name": "shell", "args": {"command": c}, "id": f"c{i}"}])
        for i, c in enumerate(commands)
    ]
    policy = ForgePolicyMiddleware(evaluator(), tools={"shell": "Bash"}, **options)
    graph = create_agent(
        ScriptedModel(messages=iter([*turns, AIMessage(content="done")])),
        [],
        middleware=[policy, ShellToolMiddleware(workspace_root=folder)],
        checkpointer=InMemorySaver(),
    )
    result = graph.invoke({"messages": [("user", "build")]}, {"configurable": {"thread_id": "t"}})
    del graph
    collect_langchain_shell_pipes()
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


@LANGCHAIN_LEAK
def test_langchain_an_allowed_shell_call_runs_under_the_floor(project: Path) -> None:
    [message] = langchain_run(project, SNEAKY, project=str(project))
    assert message.status != "error", message.content
    assert (project / "build.txt").read_text() == "built\n"
    assert not (project / ".forge" / "x.txt").exists()
    assert "Read-only file system" in str(message.content)


@LANGCHAIN_LEAK
def test_langchain_a_blocked_call_stays_blocked(project: Path) -> None:
    [message] = langchain_run(project, DIRECT, project=str(project))
    assert message.status == "error" and "[keep-forge]" in str(message.content)
    assert not (project / ".forge" / "state.json").exists()


@LANGCHAIN_LEAK
def test_langchain_floor_off_leaves_the_command(project: Path) -> None:
    configure(project, "off")
    langchain_run(project, SNEAKY, project=str(project))
    assert (project / ".forge" / "x.txt").exists()  # only the hook decided: it allowed this


def test_langchain_async_agents_get_the_floor_too(project: Path) -> None:
    @tool
    async def run(cmd: str) -> str:
        """Run a shell command in the project."""
        return execute(cmd, project).stderr

    call = {"name": "run", "args": {"cmd": SNEAKY}, "id": "c1"}
    policy = ForgePolicyMiddleware(
        evaluator(), tools={"run": ("Bash", {"cmd": "command"})}, project=str(project)
    )
    graph = create_agent(
        ScriptedModel(messages=iter([AIMessage("", tool_calls=[call]), AIMessage("done")])),
        [run],
        middleware=[policy],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "t"}}
    result = asyncio.run(graph.ainvoke({"messages": [("user", "build")]}, config))
    [message] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert "Read-only file system" in str(message.content)
    assert (project / "build.txt").exists() and not (project / ".forge" / "x.txt").exists()


def test_langchain_shell_tools_default_to_the_tools_mapped_onto_bash() -> None:
    policy = ForgePolicyMiddleware(evaluator(), tools={"run": ("Bash", {"cmd": "command"})})
    assert policy.shell_tools == {"shell": "command", "terminal": "commands", "run": "cmd"}
    only = ForgePolicyMiddleware(evaluator(), shell_tools={"sh": "script"})
    assert only.shell_tools == {"sh": "script"}


# --- OpenAI Agents ------------------------------------------------------------------------------


def test_openai_a_shell_function_tool_runs_the_rewritten_command(project: Path) -> None:
    ran: list[str] = []

    @function_tool
    def run_shell(cmd: str) -> str:
        """Run a shell command in the project."""
        ran.append(cmd)
        done = execute(cmd, project)
        return done.stdout + done.stderr

    @function_tool
    def write_note(cmd: str) -> str:
        """Not a shell: takes an argument of the same name."""
        ran.append(cmd)
        return "noted"

    guard = openai_agents.guard(
        evaluator(),
        session_id="s1",
        tools={"run_shell": ("Bash", {"cmd": "command"})},
        cwd=str(project),
    )
    model = TurnModel(
        [
            [("run_shell", {"cmd": SNEAKY})],
            [("run_shell", {"cmd": DIRECT})],
            [("write_note", {"cmd": "make"})],
        ]
    )
    coder = Agent(
        name="coder",
        model=model,
        tools=[guard.protect(run_shell), guard.protect(write_note)],
    )
    asyncio.run(Runner.run(coder, "build", run_config=QUIET))
    assert ran, model.outputs
    [first, *others] = ran
    assert first.startswith(BWRAP) and others == ["make"]  # the blocked call never ran
    assert "Read-only file system" in model.outputs["call_1"]
    assert (project / "build.txt").exists() and not (project / ".forge" / "x.txt").exists()
    assert model.outputs["call_2"].startswith("[keep-forge]")


def test_openai_floor_off_leaves_the_command(project: Path) -> None:
    ran: list[str] = []

    @function_tool
    def run_shell(cmd: str) -> str:
        """Run a shell command."""
        ran.append(cmd)
        return "ran"

    guard = openai_agents.guard(
        evaluator(), tools={"run_shell": ("Bash", {"cmd": "command"})}, floor="off"
    )
    coder = Agent(name="c", model=TurnModel([[("run_shell", {"cmd": "make"})]]))
    coder.tools = [guard.protect(run_shell)]
    asyncio.run(Runner.run(coder, "build", run_config=QUIET))
    assert ran == ["make"]


def test_openai_a_local_shell_tool_gets_the_floor(project: Path) -> None:
    async def executor(request: ShellCommandRequest) -> str:
        return "".join(
            (done := execute(c, project)).stdout + done.stderr for c in request.data.action.commands
        )

    guard = openai_agents.guard(evaluator(), cwd=str(project))
    tool = guard.protect_shell(ShellTool(executor=executor))
    assert guard.protect_shell(tool) is tool  # once is enough

    class ShellModel(TurnModel):
        async def get_response(self, *args: Any, **kwargs: Any) -> Any:
            from agents import ModelResponse, Usage
            from agents.testing import assistant_message
            from openai.types.responses import ResponseFunctionShellToolCall

            given = kwargs.get("input", args[1] if len(args) > 1 else None)
            for item in given if isinstance(given, list) else []:
                if isinstance(item, dict) and item.get("type") == "shell_call_output":
                    self.outputs[item["call_id"]] = json.dumps(item.get("output"))
            if self.calls:
                return ModelResponse(
                    output=[assistant_message("done")], usage=Usage(), response_id=None
                )
            self.calls += 1
            call = ResponseFunctionShellToolCall(
                id="sh_1",
                call_id="call_1",
                type="shell_call",
                status="completed",
                action={"commands": [SNEAKY], "timeout_ms": None, "max_output_length": None},
            )
            return ModelResponse(output=[call], usage=Usage(), response_id=None)

    model = ShellModel()
    asyncio.run(Runner.run(Agent(name="c", model=model, tools=[tool]), "go", run_config=QUIET))
    assert (project / "build.txt").exists() and not (project / ".forge" / "x.txt").exists()
    assert "Read-only file system" in model.outputs["call_1"]


def test_openai_a_hosted_shell_tool_cannot_get_the_floor() -> None:
    hosted = ShellTool(environment={"type": "container_auto"})
    with pytest.raises(ValueError, match="hosted container"):
        openai_agents.guard(evaluator()).protect_shell(hosted)
