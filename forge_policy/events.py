"""The event vocabulary: every event name the engine knows and what each kind of event carries.

Event names are Claude Code's (the reference harness), plus the git-side events. Other
harnesses' adapters translate their own names to these, so a behavior's ``events:`` list means
the same thing under every harness. This module is the only owner of these sets.

>>> "PreToolUse" in TOOL_EVENTS and "PreToolUse" in BLOCKABLE_TOOL_EVENTS
True
>>> MATCHER_SUBJECT["SessionStart"]
'source'
"""

from __future__ import annotations

#: Events whose subject is a tool call: they carry ``tool_name`` and ``tool_input``.
TOOL_EVENTS = frozenset(
    {
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PermissionRequest",
        "PermissionDenied",
        "PreSkillShellCommand",
    }
)
#: Events at which a tool call can still be refused.
BLOCKABLE_TOOL_EVENTS = frozenset({"PreToolUse", "PermissionRequest", "PreSkillShellCommand"})


#: Claude Code event names (CLI 2.1.332), plus the git-side events ``commit-msg`` and
#: ``pre-commit`` (git's own hook names, emitted by ``forge-policy git …``; see
#: :mod:`forge_policy.ops.git_hooks`). Other harnesses' adapters translate to these.
EVENTS: frozenset[str] = frozenset(
    [
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "Notification",
        "UserPromptSubmit",
        "UserPromptExpansion",
        "SessionStart",
        "SessionEnd",
        "Stop",
        "StopFailure",
        "SubagentStart",
        "SubagentStop",
        "PreCompact",
        "PostCompact",
        "PreModelSwitch",
        "PostModelSwitch",
        "PermissionRequest",
        "PermissionDenied",
        "Setup",
        "TeammateIdle",
        "TaskCreated",
        "TaskCompleted",
        "Elicitation",
        "ElicitationResult",
        "ConfigChange",
        "WorktreeCreate",
        "WorktreeRemove",
        "InstructionsLoaded",
        "CwdChanged",
        "FileChanged",
        "DirectoryAdded",
        "MessageDisplay",
        "PreSkillShellCommand",
        "commit-msg",
        "pre-commit",
    ]
)

#: What a trigger's ``matcher`` is matched against, per event (Claude Code's rule); events not
#: listed here ignore the matcher.
MATCHER_SUBJECT: dict[str, str] = {
    **dict.fromkeys(TOOL_EVENTS, "tool_name"),
    "SessionStart": "source",
    "Setup": "trigger",
    "SessionEnd": "reason",
    "Notification": "notification_type",
    "SubagentStart": "agent_type",
    "SubagentStop": "agent_type",
    "PreCompact": "trigger",
    "PostCompact": "trigger",
    "ConfigChange": "source",
    "DirectoryAdded": "source",
    "StopFailure": "error",
    "InstructionsLoaded": "load_reason",
    "UserPromptExpansion": "command_name",
    "Elicitation": "mcp_server_name",
    "ElicitationResult": "mcp_server_name",
}

#: The prefix of an MCP tool's name in the catalog's vocabulary: ``mcp__<server>__<tool>``
#: (:mod:`forge_policy.facts.mcp` reads such a call for what it does).
MCP_PREFIX = "mcp__"


def mcp_name(server: str, tool: str) -> str:
    """The catalog's name of an MCP tool, ``mcp__<server>__<tool>`` (Claude Code's and Codex's
    spelling), to which every adapter maps its harness's own (Cursor's ``beforeMCPExecution``,
    Gemini CLI's ``mcp_context``, OpenCode's).

    >>> mcp_name("github", "create_issue")
    'mcp__github__create_issue'
    """
    return f"{MCP_PREFIX}{server}__{tool}"


#: The payload key of an event read as a built-in tool (:func:`forge_policy.facts.mcp.read_as`)
#: that holds the tool name the harness sent: triggers and ``applies_to.tools`` match either.
READ_FROM = "forge_read_from"

#: Events at which the tool already ran, so a block can only inform.
AFTER_TOOL_EVENTS = frozenset({"PostToolUse", "PostToolUseFailure", "PostToolBatch"})
#: Event names of the git-side entry points. For these, git runs in ``event.cwd``.
# fmt: off
GIT_HOOK_EVENTS = frozenset({"pre-commit", "commit-msg", "prepare-commit-msg", "pre-merge-commit",
                             "pre-push", "post-commit"})
# fmt: on

# --- what each event carries (read by the lints of forge-policy validate) ------------------

#: Claude Code's built-in tools and their ``tool_input`` keys (its hook reference).
TOOL_INPUT_FIELDS: dict[str, frozenset[str]] = {
    name: frozenset(fields.split())
    for name, fields in {
        "Bash": "command description timeout run_in_background",
        "PowerShell": "command description timeout run_in_background",
        "Write": "file_path content",
        "Edit": "file_path old_string new_string replace_all",
        "MultiEdit": "file_path edits",
        "Read": "file_path offset limit",
        "Glob": "pattern path",
        "Grep": "pattern path glob output_mode -i -n -A -B -C multiline type head_limit",
        "LS": "path ignore",
        "WebFetch": "url prompt",
        "WebSearch": "query allowed_domains blocked_domains",
        "Agent": "prompt description subagent_type model",
        "Task": "prompt description subagent_type model",
        "AskUserQuestion": "questions answers",
        "ExitPlanMode": "plan planFilePath allowedPrompts",
        "TodoWrite": "todos",
        "TaskCreate": "subject description activeForm",
        "TaskUpdate": "taskId status subject description activeForm",
        "NotebookEdit": "notebook_path cell_id new_source cell_type edit_mode",
        "Skill": "skill args",
        "BashOutput": "bash_id filter",
        "KillShell": "shell_id",
    }.items()
}
#: Top-level keys of every Claude Code hook input, and the engine's own event attributes.
COMMON_FIELDS = frozenset(
    [
        "session_id",
        "transcript_path",
        "cwd",
        "hook_event_name",
        "prompt_id",
        "permission_mode",
        "agent_id",
        "agent_type",
        "agent",
        "effort",
        "tool_name",
        "tool_input",
        "tool_use_id",
        "prompt",
    ]
)
#: The extra top-level keys per event (Claude Code's hook reference).
EVENT_FIELDS: dict[str, frozenset[str]] = {
    name: frozenset(fields.split())
    for name, fields in {
        "PreToolUse": "mcp_server",
        "PermissionRequest": "permission_suggestions mcp_server",
        "PostToolUse": "tool_response duration_ms mcp_server",
        "PostToolUseFailure": "error is_interrupt duration_ms mcp_server",
        "PermissionDenied": "reason mcp_server",
        "UserPromptSubmit": "source session_title",
        "SessionStart": "source model session_title seconds_since_last_response context_tokens",
        "Stop": "stop_hook_active last_assistant_message background_tasks session_crons",
        "SubagentStop": "stop_hook_active agent_transcript_path last_assistant_message",
        "PreCompact": "trigger custom_instructions",
        "PostCompact": "trigger compact_summary",
        "Notification": "message title notification_type",
        "SessionEnd": "reason",
    }.items()
}
