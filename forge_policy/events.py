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

#: Events at which the tool already ran, so a block can only inform.
AFTER_TOOL_EVENTS = frozenset({"PostToolUse", "PostToolUseFailure", "PostToolBatch"})
#: Event names of the git-side entry points. For these, git runs in ``event.cwd``.
# fmt: off
GIT_HOOK_EVENTS = frozenset({"pre-commit", "commit-msg", "prepare-commit-msg", "pre-merge-commit",
                             "pre-push", "post-commit"})
# fmt: on
