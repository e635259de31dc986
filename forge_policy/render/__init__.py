"""Renderers: a decision as text and as a harness's answer.

``messages`` renders a violation's message from its behavior's templates (the one owner of the
message rules); ``claude_code`` turns a ``Decision`` into Claude Code's hook JSON (only renders: its
``bypassPermissions`` auto-approval is the harness registry's ``auto_approve``, decided in the
engine); ``text`` turns
it into a chat message (plain, Telegram MarkdownV2, Slack mrkdwn) with the same words;
``replay_html`` draws the ``forge-policy replay --html`` report.

The chat names load on first use (PEP 562): the hook path never imports them.
"""

from __future__ import annotations

from forge_policy._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.render.text import (
        FORMATS,
        PLAIN,
        SLACK,
        TELEGRAM,
        ChatMessage,
        chat_message,
        escape_slack,
        escape_telegram,
        format_message,
        render_chat,
    )

__all__ = [
    "FORMATS",
    "PLAIN",
    "SLACK",
    "TELEGRAM",
    "ChatMessage",
    "chat_message",
    "escape_slack",
    "escape_telegram",
    "format_message",
    "render_chat",
]

__getattr__, __dir__ = lazy_exports(
    "forge_policy.render", dict.fromkeys(__all__, "forge_policy.render.text"), __all__, globals()
)
