"""The one table of supported harnesses: what ``forge-policy hook --harness NAME`` accepts.

Each :class:`Harness` says how the harness names its events and tools (mapped onto the catalog's
Claude Code vocabulary, so a behavior written for Claude Code means the same everywhere), what it
can express (ask the user, block a prompt, block stopping, add context for the model) and
whether it fails open when a hook errors. ``adapter`` is its
:class:`~forge_policy.harness.base.HookAdapter` (:class:`~forge_policy.harness.codex.CodexAdapter`,
…), whose module is imported on first use, so a hook loads only the adapter it speaks through.

Where each wire format comes from (docs, schemas, source; with dates) is written at the top of
each adapter module. This module is on the hook's hot path: no ``typing``, no ``dataclasses``.

>>> get("codex").tools["apply_patch"], get("cursor").events["beforeShellExecution"]
('Edit', 'PreToolUse')
>>> get("codex").can_ask, get("claude-code").can_ask
(False, True)
>>> names()[:2]
('claude-code', 'codex')
>>> get("cursor").adapter
<CursorAdapter cursor>
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from forge_policy.harness.base import HookAdapter

    #: An adapter class, constructed with its registry entry.
    AdapterClass = Callable[["Harness"], HookAdapter]


class Harness:
    """One coding-agent CLI with a command-hook protocol.

    ``tools``: harness tool name → catalog tool name (names not listed keep their own, e.g.
    ``mcp__server__tool``). ``events``: harness hook event → catalog event; events not listed
    are not handled. ``ask_events``: the harness events at which it honors "ask the user" (the
    user-mode soft block); elsewhere such a block becomes a deny with the reason.
    ``event_from_argv``: its payload may not name the event, so the hook command carries
    ``--event NAME`` (``forge-policy init`` writes it). ``config``: the project file
    ``forge-policy init --harness NAME`` writes; ``markers``: project paths that show the
    harness is in use; ``install_events``: the harness events ``init`` registers the hook
    for (one per kind of call: Cursor sends a shell command to both ``preToolUse`` and
    ``beforeShellExecution``, and registering both would count it twice).
    ``rewrite_events``: the harness events at which its answer can replace a tool call's
    arguments (SPEC §13: a shell call rewritten to run under forge_policy's own floor), and
    ``command_key``: the argument of its shell tool that holds the command. ``adapter`` (the
    argument): a function returning the adapter class, which imports its module, so that the
    table loads no adapter; the :attr:`adapter` property builds it once, on first use.
    """

    __slots__ = (
        "_adapter",
        "_adapter_class",
        "ask_events",
        "auto_approve",
        "can_add_context",
        "can_block_prompt",
        "can_block_stop",
        "command_key",
        "config",
        "event_from_argv",
        "events",
        "fails_open",
        "install_events",
        "markers",
        "name",
        "rewrite_events",
        "title",
        "tools",
    )

    def __init__(
        self,
        name: str,
        title: str,
        adapter: Callable[[], AdapterClass],
        *,
        tools: Mapping[str, str],
        events: Mapping[str, str],
        ask_events: frozenset[str],
        can_block_prompt: bool,
        can_block_stop: bool,
        can_add_context: bool,
        fails_open: bool,
        config: str,
        markers: tuple[str, ...],
        install_events: tuple[str, ...],
        event_from_argv: bool = False,
        auto_approve: frozenset[str] = frozenset(),
        rewrite_events: frozenset[str] = frozenset(),
        command_key: str = "command",
    ) -> None:
        self.name = name
        self.title = title
        self._adapter_class = adapter
        self._adapter: HookAdapter | None = None
        self.tools = dict(tools)
        self.events = dict(events)
        self.ask_events = ask_events
        self.can_block_prompt = can_block_prompt
        self.can_block_stop = can_block_stop
        self.can_add_context = can_add_context
        self.fails_open = fails_open
        self.config = config
        self.markers = markers
        self.install_events = install_events
        self.event_from_argv = event_from_argv
        self.auto_approve = auto_approve
        self.rewrite_events = rewrite_events
        self.command_key = command_key

    @property
    def adapter(self) -> HookAdapter:
        """The harness's adapter (its module is imported the first time it is asked for)."""
        if self._adapter is None:
            self._adapter = self._adapter_class()(self)
        return self._adapter

    @property
    def can_ask(self) -> bool:
        """Whether the harness can ask the user at some event (``False``: a soft block that
        the user would approve becomes a deny naming the reason)."""
        return bool(self.ask_events)

    @property
    def can_rewrite(self) -> bool:
        """Whether the harness runs a tool call with the arguments a hook hands back at some
        event (``False``: forge_policy's own floor cannot be applied; the hook only decides)."""
        return bool(self.rewrite_events)

    def catalog_tools(self) -> frozenset[str]:
        """The catalog tool names a behavior can match under this harness."""
        return frozenset(self.tools.values())

    def catalog_events(self) -> frozenset[str]:
        """The catalog events this harness sends."""
        return frozenset(self.events.values())

    def __repr__(self) -> str:
        return f"<Harness {self.name}>"


# The adapter classes, each imported by the first call that needs it: a hook process pays for
# the one adapter it speaks through, not for six.


def _claude_code() -> AdapterClass:
    from forge_policy.harness.claude_code import ClaudeCodeAdapter

    return ClaudeCodeAdapter


def _codex() -> AdapterClass:
    from forge_policy.harness.codex import CodexAdapter

    return CodexAdapter


def _gemini() -> AdapterClass:
    from forge_policy.harness.gemini import GeminiAdapter

    return GeminiAdapter


def _cursor() -> AdapterClass:
    from forge_policy.harness.cursor import CursorAdapter

    return CursorAdapter


def _copilot() -> AdapterClass:
    from forge_policy.harness.copilot import CopilotAdapter

    return CopilotAdapter


def _antigravity() -> AdapterClass:
    from forge_policy.harness.antigravity import AntigravityAdapter

    return AntigravityAdapter


def _opencode() -> AdapterClass:
    from forge_policy.harness.opencode import OpenCodeAdapter

    return OpenCodeAdapter


#: Claude Code's own tool names (the catalog's vocabulary).
_CLAUDE_TOOLS = (
    "Bash",
    "PowerShell",
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "Glob",
    "Grep",
    "LS",
    "WebFetch",
    "WebSearch",
    "Agent",
    "Task",
    "TodoWrite",
    "TaskCreate",  # the task tools that replaced TodoWrite (respect-todo-state reads them)
    "TaskUpdate",
    "AskUserQuestion",
    "ExitPlanMode",
)
_CLAUDE_EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "UserPromptSubmit",
    "SessionStart",
    "SessionEnd",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "Notification",
)

CLAUDE_CODE = Harness(
    "claude-code",
    "Claude Code",
    _claude_code,
    tools={name: name for name in _CLAUDE_TOOLS},
    events={name: name for name in _CLAUDE_EVENTS},
    ask_events=frozenset({"PreToolUse"}),
    can_block_prompt=True,
    can_block_stop=True,
    can_add_context=True,
    fails_open=True,  # exit codes other than 0/2 and timeouts let the call through
    config=".claude/settings.json",
    markers=(".claude",),
    install_events=("PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart", "Stop"),
    auto_approve=frozenset({"bypassPermissions"}),
    rewrite_events=frozenset({"PreToolUse"}),  # hookSpecificOutput.updatedInput
)

CODEX = Harness(
    "codex",
    "OpenAI Codex CLI",
    _codex,
    # the shell and unified exec report tool_name "Bash"; apply_patch is Edit or Write by what
    # the patch does (the adapter decides); spawn_agent also answers to the matcher "Agent"
    tools={"Bash": "Bash", "exec_command": "Bash", "apply_patch": "Edit", "spawn_agent": "Agent"},
    events={
        name: name
        for name in (
            "PreToolUse",
            "PermissionRequest",
            "PostToolUse",
            "UserPromptSubmit",
            "SessionStart",
            "SessionEnd",
            "Stop",
            "SubagentStart",
            "SubagentStop",
            "PreCompact",
            "PostCompact",
        )
    },
    ask_events=frozenset(),  # "ask" is unsupported: the hook is marked failed, the call runs
    can_block_prompt=True,
    can_block_stop=True,
    can_add_context=True,
    fails_open=True,
    rewrite_events=frozenset({"PreToolUse"}),  # updatedInput with permissionDecision "allow"
    config=".codex/hooks.json",
    markers=(".codex",),
    install_events=("PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart", "Stop"),
)

GEMINI = Harness(
    "gemini",
    "Gemini CLI",
    _gemini,
    tools={
        "run_shell_command": "Bash",
        "read_file": "Read",
        "read_many_files": "Read",
        "write_file": "Write",
        "replace": "Edit",
        "glob": "Glob",
        "search_file_content": "Grep",
        "grep_search": "Grep",
        "list_directory": "LS",
        "web_fetch": "WebFetch",
        "google_web_search": "WebSearch",
        "write_todos": "TodoWrite",
    },
    events={
        "BeforeTool": "PreToolUse",
        "AfterTool": "PostToolUse",
        "BeforeAgent": "UserPromptSubmit",
        "AfterAgent": "Stop",
        "SessionStart": "SessionStart",
        "SessionEnd": "SessionEnd",
        "PreCompress": "PreCompact",
        "Notification": "Notification",
    },
    # the scheduler honors decision "ask" (source, 2026-08), but the reference documents only
    # allow/deny: a build that does not know it would let the call run, so a deny it is
    ask_events=frozenset(),
    can_block_prompt=True,
    can_block_stop=True,  # AfterAgent deny retries with the reason as a new prompt
    can_add_context=True,
    fails_open=True,  # exit 1 is a warning and the CLI continues
    rewrite_events=frozenset({"BeforeTool"}),  # hookSpecificOutput.tool_input (merged)
    config=".gemini/settings.json",
    markers=(".gemini",),
    install_events=("BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "SessionStart"),
)

CURSOR = Harness(
    "cursor",
    "Cursor",
    _cursor,
    tools={
        "Shell": "Bash",
        "Read": "Read",
        "Write": "Write",
        "Edit": "Edit",
        "Grep": "Grep",
        "Glob": "Glob",
        "Task": "Agent",
        "WebFetch": "WebFetch",
        "WebSearch": "WebSearch",
    },
    events={
        "preToolUse": "PreToolUse",
        "beforeShellExecution": "PreToolUse",
        "beforeMCPExecution": "PreToolUse",
        "beforeReadFile": "PreToolUse",
        "postToolUse": "PostToolUse",
        "postToolUseFailure": "PostToolUseFailure",
        "afterShellExecution": "PostToolUse",
        "afterMCPExecution": "PostToolUse",
        "afterFileEdit": "PostToolUse",
        "beforeSubmitPrompt": "UserPromptSubmit",
        "stop": "Stop",
        "subagentStop": "SubagentStop",
        "subagentStart": "SubagentStart",
        "sessionStart": "SessionStart",
        "sessionEnd": "SessionEnd",
        "preCompact": "PreCompact",
    },
    # preToolUse accepts "ask" but does not enforce it; the shell and MCP events do
    ask_events=frozenset({"beforeShellExecution", "beforeMCPExecution"}),
    can_block_prompt=True,
    can_block_stop=True,  # a followup_message keeps the agent going
    can_add_context=True,  # postToolUse and sessionStart only
    fails_open=True,  # unless the hook entry says failClosed: true (init writes it)
    # updated_input is read at preToolUse only; beforeShellExecution answers permission only
    rewrite_events=frozenset({"preToolUse"}),
    config=".cursor/hooks.json",
    markers=(".cursor",),
    install_events=("preToolUse", "postToolUse", "beforeSubmitPrompt", "stop", "sessionStart"),
)

COPILOT = Harness(
    "copilot",
    "GitHub Copilot CLI",
    _copilot,
    tools={
        "bash": "Bash",
        "powershell": "PowerShell",
        "view": "Read",
        "create": "Write",
        "edit": "Edit",
        "glob": "Glob",
        "grep": "Grep",
        "task": "Agent",
        "web_fetch": "WebFetch",
        "ask_user": "AskUserQuestion",
    },
    events={
        # camelCase entries send camelCase payloads without the event name; PascalCase
        # entries send Claude-like snake_case payloads with hook_event_name
        "preToolUse": "PreToolUse",
        "PreToolUse": "PreToolUse",
        "postToolUse": "PostToolUse",
        "PostToolUse": "PostToolUse",
        "postToolUseFailure": "PostToolUseFailure",
        "PostToolUseFailure": "PostToolUseFailure",
        "permissionRequest": "PermissionRequest",
        "userPromptSubmitted": "UserPromptSubmit",
        "UserPromptSubmit": "UserPromptSubmit",
        "agentStop": "Stop",
        "Stop": "Stop",
        "subagentStop": "SubagentStop",
        "SubagentStop": "SubagentStop",
        "subagentStart": "SubagentStart",
        "sessionStart": "SessionStart",
        "SessionStart": "SessionStart",
        "sessionEnd": "SessionEnd",
        "SessionEnd": "SessionEnd",
        "preCompact": "PreCompact",
        "PreCompact": "PreCompact",
    },
    ask_events=frozenset({"preToolUse", "PreToolUse"}),
    can_block_prompt=False,  # userPromptSubmitted output is not processed
    can_block_stop=True,
    can_add_context=False,  # only notification / subagentStart / failure guidance
    fails_open=True,  # "hook failures … never block agent execution"
    config=".github/hooks/forge-policy.json",
    markers=(".github/hooks", ".github/copilot-instructions.md"),
    install_events=(
        "preToolUse",
        "postToolUse",
        "userPromptSubmitted",
        "agentStop",
        "sessionStart",
    ),
    event_from_argv=True,  # no documented way to change a call's arguments: no rewrite
)

ANTIGRAVITY = Harness(
    "antigravity",
    "Google Antigravity CLI",
    _antigravity,
    tools={
        "run_command": "Bash",
        "view_file": "Read",
        "write_to_file": "Write",
        "replace_file_content": "Edit",
        "multi_replace_file_content": "Edit",
        "edit_file": "Edit",
        "find_by_name": "Glob",
        "grep_search": "Grep",
        "codebase_search": "Grep",
        "list_dir": "LS",
        "read_url_content": "WebFetch",
        "search_web": "WebSearch",
    },
    events={
        "PreToolUse": "PreToolUse",
        "PostToolUse": "PostToolUse",
        "Stop": "Stop",
        "SessionStart": "SessionStart",
    },
    ask_events=frozenset({"PreToolUse"}),  # "ask" and "force_ask"
    can_block_prompt=False,
    can_block_stop=False,
    can_add_context=False,
    fails_open=False,  # a missing or malformed decision blocks the call
    config=".agents/hooks.json",
    markers=(".agents", ".antigravitycli"),
    install_events=("PreToolUse", "PostToolUse"),
    event_from_argv=True,  # no documented way to change a call's arguments: no rewrite
    command_key="CommandLine",
)

OPENCODE = Harness(
    "opencode",
    "OpenCode",
    _opencode,
    tools={
        "bash": "Bash",
        "read": "Read",
        "write": "Write",
        "edit": "Edit",
        "multiedit": "MultiEdit",
        "patch": "Edit",  # patch and apply_patch: Edit or Write by what the patch does
        "apply_patch": "Edit",
        "glob": "Glob",
        "grep": "Grep",
        "list": "LS",
        "webfetch": "WebFetch",
        "websearch": "WebSearch",
        "task": "Agent",
        "todowrite": "TodoWrite",
    },
    # forge-policy's own plugin (.opencode/plugins/forge-policy.js) sends the two tool hooks
    events={"tool.execute.before": "PreToolUse", "tool.execute.after": "PostToolUse"},
    ask_events=frozenset(),  # a plugin cannot raise OpenCode's permission prompt
    can_block_prompt=False,
    can_block_stop=False,
    can_add_context=True,  # the plugin appends the text to the tool's output
    fails_open=False,  # the plugin refuses a call it got no decision for
    rewrite_events=frozenset({"tool.execute.before"}),  # output.args, changed in place
    config=".opencode/plugins/forge-policy.js",
    markers=("opencode.json", "opencode.jsonc", ".opencode"),
    install_events=("tool.execute.before", "tool.execute.after"),
)

#: Every supported harness by ``--harness`` name, Claude Code first.
HARNESSES: dict[str, Harness] = {
    h.name: h for h in (CLAUDE_CODE, CODEX, GEMINI, CURSOR, COPILOT, ANTIGRAVITY, OPENCODE)
}


def names() -> tuple[str, ...]:
    """The ``--harness`` spellings, in table order."""
    return tuple(HARNESSES)


def get(name: str) -> Harness:
    """The harness called ``name``; :class:`~forge_policy.errors.UnknownName` (a ``KeyError``
    too) naming the supported ones otherwise.

    >>> get("vim")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    forge_policy.errors.UnknownName: unknown harness 'vim' (supported: claude-code, codex, ...)
    """
    try:
        return HARNESSES[name]
    except KeyError:
        from forge_policy.errors import UnknownName

        raise UnknownName(f"unknown harness {name!r} (supported: {', '.join(HARNESSES)})") from None


#: Project files besides a harness's ``config`` whose contents decide whether it runs hooks:
#: Claude Code's local settings, Codex's ``config.toml`` (``[hooks]``, ``[features] hooks``),
#: Copilot CLI's repository settings (``disableAllHooks``), OpenCode's older plugin folder.
HOOK_SWITCHES: dict[str, tuple[str, ...]] = {
    "claude-code": (".claude/settings.local.json",),
    "codex": (".codex/config.toml",),
    "copilot": (".github/copilot/settings.json", ".github/copilot/settings.local.json"),
    "opencode": (".opencode/plugin/forge-policy.js",),  # the folder older builds load
}


def hook_files() -> tuple[str, ...]:
    """Every file below a project (or the home folder) whose contents decide whether
    forge-policy's hook runs: each harness's ``config`` (the file ``init`` writes) and its
    :data:`HOOK_SWITCHES`. The governance fact guards them (it asks on every tool call).

    >>> hook_files()[:4]  # doctest: +NORMALIZE_WHITESPACE
    ('.claude/settings.json', '.claude/settings.local.json', '.codex/hooks.json',
     '.codex/config.toml')
    """
    return tuple(
        path for h in HARNESSES.values() for path in (h.config, *HOOK_SWITCHES.get(h.name, ()))
    )
