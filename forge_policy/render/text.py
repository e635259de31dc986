"""A decision as a chat message, for orchestrators that relay decisions to a chat channel
(SPEC §8, rollout gate 4: a remote channel must not deform a warning or a block).

Three formats: ``plain`` text, Telegram ``MarkdownV2`` (``parse_mode=MarkdownV2``) and Slack
``mrkdwn``. A message is a title (what happened, bold where the format has bold) and a body that
is, word for word, the text the Claude Code hook shows (:mod:`forge_policy.render.outcome`):
the warning (``systemMessage``) or the block reason the agent reads
(``permissionDecisionReason``), then the audited-override notes.

Escaping follows each format's documentation:

* Telegram MarkdownV2: every ``_ * [ ] ( ) ~ ` > # + - = | { } . !`` and every backslash gets a
  backslash in front ("any character with code between 1 and 126 can be escaped anywhere with a
  preceding '\\'"); nothing else changes, emoji included.
* Slack mrkdwn: ``&``, ``<`` and ``>`` become ``&amp;``, ``&lt;``, ``&gt;`` (the only escapes
  Slack decodes). Slack has no escape for ``* _ ~ `` `` ` ``, so the message goes in a ```` ``` ````
  block, where Slack applies no formatting; a run of backticks in it is split with a zero-width
  space (U+200B) so it cannot close the block.

>>> print(escape_telegram("a_b (c) 1.5!"))
a\\_b \\(c\\) 1\\.5\\!
>>> escape_slack("x < y & z")
'x &lt; y &amp; z'
"""

from __future__ import annotations

import attrs

from forge_policy.render.outcome import outcome, override_notes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.model import Decision

PLAIN = "plain"
TELEGRAM = "telegram"
SLACK = "slack"
#: The chat formats :func:`render` writes.
FORMATS = (PLAIN, TELEGRAM, SLACK)
#: Characters Telegram's MarkdownV2 reserves (its "Formatting options" section), plus ``\``.
TELEGRAM_RESERVED = frozenset("_*[]()~`>#+-=|{}.!\\")
ZERO_WIDTH_SPACE = "\u200b"
_SLACK_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


@attrs.frozen
class ChatMessage:
    """What to tell a chat channel about one decision: ``title`` (one line) and ``body``
    (Claude Code's text for it, unchanged)."""

    title: str
    body: str
    blocked: bool


def chat_message(decision: Decision) -> ChatMessage | None:
    """The title and body for ``decision``, or None when the hook would say nothing.

    >>> from forge_policy import Decision, Event, Violation
    >>> from forge_policy.levels import Level
    >>> event = Event("PreToolUse", "s1", tool_name="Bash")
    >>> v = Violation("no-force-push", "N", Level.HARD_BLOCK, 1, "Refused: force push.")
    >>> chat_message(Decision(event, [v], [v.message], blocking=v)).title
    'forge-policy: hard block by no-force-push (Bash)'
    >>> chat_message(Decision(event)) is None
    True
    """
    said = outcome(decision)  # Claude Code's texts: it can ask
    if said is None:
        return None
    subject = decision.event.tool_name or decision.event.event_name
    blocking = decision.blocking
    if blocking is None:
        behaviors = ", ".join(
            dict.fromkeys(
                v.behavior_id
                for v in decision.violations
                if not v.shadow and not v.overridden and v.message
            )
        )
        label = decision.level.label.replace("_", " ")
        if decision.level.value == 0:  # only override notes: the call went through
            label = "override"
        title = f"forge-policy: {label}" + (f" from {behaviors}" if behaviors else "")
        return ChatMessage(f"{title} ({subject})", said.advice, blocked=False)
    label = blocking.level.label.replace("_", " ")
    if said.ask:
        label += ", the user's approval needed"
    body = "\n\n".join([said.reason, *override_notes(decision)])
    return ChatMessage(f"forge-policy: {label} by {blocking.behavior_id} ({subject})", body, True)


def render_chat(decision: Decision, fmt: str = PLAIN) -> str | None:
    """``decision`` as one chat message in ``fmt`` (see :data:`FORMATS`), or None when there is
    nothing to say.

    >>> from forge_policy import Decision, Event, Violation
    >>> from forge_policy.levels import Level
    >>> v = Violation("search-first", "S", Level.WARNING, 3, "3 writes, no search.")
    >>> d = Decision(Event("PreToolUse", "s1", tool_name="Write"), [v], [v.message])
    >>> print(render_chat(d, TELEGRAM))
    *forge\\-policy: warning from search\\-first \\(Write\\)*
    3 writes, no search\\.
    """
    message = chat_message(decision)
    return None if message is None else format_message(message.title, message.body, fmt)


def format_message(title: str, body: str, fmt: str = PLAIN) -> str:
    """A title and a body in ``fmt``: ``plain`` puts them on separate lines, Telegram makes the
    title bold, Slack puts both in a preformatted block."""
    if fmt == PLAIN:
        return f"{title}\n{body}"
    if fmt == TELEGRAM:
        return f"*{escape_telegram(title)}*\n{escape_telegram(body)}"
    if fmt == SLACK:  # title too: a tool name such as mcp__a__b would turn italic outside
        fence = "```"
        text = _unfenced(escape_slack(title + "\n" + body))
        return f"{fence}\n{text}\n{fence}"
    raise ValueError(f"unknown chat format {fmt!r} (expected one of: {', '.join(FORMATS)})")


def escape_telegram(text: str) -> str:
    """``text`` for a Telegram MarkdownV2 message: each reserved character backslash-escaped."""
    return "".join("\\" + c if c in TELEGRAM_RESERVED else c for c in text)


def escape_slack(text: str) -> str:
    """``text`` for Slack mrkdwn: ``&``, ``<`` and ``>`` as HTML entities (nothing else)."""
    return "".join(_SLACK_ENTITIES.get(c, c) for c in text)


def _unfenced(text: str) -> str:
    """A zero-width space after every second backtick of a run: no three are adjacent, so
    nothing in the text closes the block (one or two are shown as they are)."""
    return text.replace("``", f"`{ZERO_WIDTH_SPACE}`")
