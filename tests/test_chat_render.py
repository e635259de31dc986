"""The chat renderer keeps Claude Code's words: each format, unescaped by its own spec, gives back
the warning or block text the Claude Code hook shows (rollout gate 4)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import forge_policy as fp
from forge_policy.levels import Level
from forge_policy.render import (
    PLAIN,
    SLACK,
    TELEGRAM,
    chat_message,
    escape_telegram,
    format_message,
    render_chat,
)
from forge_policy.render.claude_code import answer

#: What Telegram's MarkdownV2 says must be escaped (its "Formatting options"), and ``\``.
TELEGRAM_SPECIALS = set("_*[]()~`>#+-=|{}.!\\")
AWKWARD = [*"_*[]()~`>#+-=|{}.!\\&<>", "```", "\n", "\n\n", " ", "😀", "🔥", "👍🏽", "🇫🇷", "é"]
# U+200B is what the Slack form inserts between backticks: a message holding one of its own is
# the one text the Slack unescape below could not tell apart, so it is left out
CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\u200b")
TEXT = st.lists(st.one_of(st.sampled_from(AWKWARD), CHARS), min_size=1, max_size=40).map("".join)
IDS = st.from_regex(r"[a-z][a-z0-9-]{0,15}", fullmatch=True)
TOOLS = st.sampled_from(["Bash", "Write", "Read", "mcp__git_hub__create_pr", "apply_patch"])
OVERRIDE = {"behavior_id": "b", "mechanism": "retry"}


def unescape_telegram(text: str) -> str:
    """Telegram MarkdownV2 read back: ``\\c`` is the character c (codes 1-126); an unescaped
    reserved character would be markup, which the body must never hold."""
    out: list[str] = []
    chars = iter(text)
    for c in chars:
        if c == "\\":
            nxt = next(chars)
            assert 1 <= ord(nxt) <= 126, f"escaped {nxt!r}"
            out.append(nxt)
        else:
            assert c not in TELEGRAM_SPECIALS, f"unescaped {c!r} in {text!r}"
            out.append(c)
    return "".join(out)


def read_telegram(message: str) -> tuple[str, str]:
    first, _, rest = message.partition("\n")
    assert first.startswith("*") and first.endswith("*") and len(first) > 2  # bold title
    return unescape_telegram(first[1:-1]), unescape_telegram(rest)


def read_slack(message: str) -> tuple[str, str]:
    """Slack mrkdwn read back: one ``` block (nothing inside can close it), the three HTML
    entities Slack decodes, and the zero-width spaces the form put between backticks."""
    assert message.startswith("```\n") and message.endswith("\n```")
    inner = message[4:-4]
    assert "```" not in inner and "<" not in inner and ">" not in inner
    assert not re.search(r"&(?!amp;|lt;|gt;)", inner)
    inner = re.sub("`\u200b(?=`)", "`", inner)
    inner = inner.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    title, _, body = inner.partition("\n")
    return title, body


def read(message: str, fmt: str) -> tuple[str, str]:
    if fmt == TELEGRAM:
        return read_telegram(message)
    if fmt == SLACK:
        return read_slack(message)
    title, _, body = message.partition("\n")
    return title, body


def claude_code_text(d: fp.Decision) -> str:
    """What the Claude Code hook shows for ``d``: the warning, or the block reason and the
    audited-override notes after its one-line summary."""
    out: dict[str, Any] | None = answer(d)
    assert out is not None
    if d.blocking is None:
        text: str = out["systemMessage"]
        return text
    specific = out.get("hookSpecificOutput", {})
    reason: str = specific.get("permissionDecisionReason") or out["reason"]
    notes = out["systemMessage"].partition("\n\n")[2]
    return "\n\n".join([reason, notes]) if notes else reason


@st.composite
def decisions(draw: st.DrawFn) -> fp.Decision:
    event_name = draw(st.sampled_from(["PreToolUse", "UserPromptSubmit", "Stop"]))
    tool = draw(TOOLS) if event_name == "PreToolUse" else ""
    event = fp.Event(event_name, "s1", tool_name=tool)
    shown = [
        fp.Violation(draw(IDS), "B", draw(st.sampled_from([Level.NUDGE, Level.WARNING])), 2, m)
        for m in draw(st.lists(TEXT, max_size=3))
    ]
    kind = draw(st.sampled_from(["none", "agent", "user", "hard"]))
    blocking = None
    if kind != "none":
        level = Level.HARD_BLOCK if kind == "hard" else Level.SOFT_BLOCK
        mode = {"user": {"override_mode": "user"}}.get(kind, {})
        blocking = fp.Violation(draw(IDS), "B", level, 5, draw(TEXT), **mode)
    overrides = [OVERRIDE] if draw(st.booleans()) else []
    messages = ([blocking.message] if blocking else []) + [v.message for v in shown]
    violations = [*shown, *([blocking] if blocking else [])]
    return fp.Decision(event, violations, messages, blocking=blocking, overrides=overrides)


@given(decisions(), st.sampled_from([PLAIN, TELEGRAM, SLACK]))
def test_every_format_keeps_the_claude_code_words(d: fp.Decision, fmt: str) -> None:
    message = chat_message(d)
    if answer(d) is None:
        assert message is None and render_chat(d, fmt) is None
        return
    assert message is not None and message.blocked is d.blocked
    rendered = render_chat(d, fmt)
    assert rendered is not None
    title, body = read(rendered, fmt)
    assert (title, body) == (message.title, message.body)
    assert body == claude_code_text(d)


@given(TEXT, TEXT, st.sampled_from([PLAIN, TELEGRAM, SLACK]))
def test_any_title_and_body_survive(title: str, body: str, fmt: str) -> None:
    title = title.replace("\n", " ")  # a title is one line
    assert read(format_message(title, body, fmt), fmt) == (title, body)


def test_telegram_escapes_exactly_the_reserved_characters() -> None:
    assert escape_telegram("_*[]()~`>#+-=|{}.!\\") == "".join(
        "\\" + c for c in "_*[]()~`>#+-=|{}.!\\"
    )
    assert escape_telegram("Grep first 😀: ok, $x & <y@z") == "Grep first 😀: ok, $x & <y@z"


def test_titles_name_the_level_the_behavior_and_the_tool() -> None:
    event = fp.Event("PreToolUse", "s1", tool_name="Bash")
    ask = fp.Violation(
        "agent-shield", "A", Level.SOFT_BLOCK, 1, "Reading .env", override_mode="user"
    )
    warn = fp.Violation("search-first", "S", Level.WARNING, 3, "3 writes")
    blocked = chat_message(fp.Decision(event, [ask], [ask.message], blocking=ask))
    warned = chat_message(fp.Decision(event, [warn], [warn.message]))
    assert blocked is not None and warned is not None
    assert blocked.title == (
        "forge-policy: soft block, the user's approval needed by agent-shield (Bash)"
    )
    assert warned.title == "forge-policy: warning from search-first (Bash)"
    assert render_chat(fp.Decision(event, [warn], [warn.message]), SLACK) == (
        "```\nforge-policy: warning from search-first (Bash)\n3 writes\n```"
    )


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown chat format 'html'"):
        format_message("t", "b", "html")


def test_a_real_engine_block_reads_the_same(forge_evaluator: Callable[..., fp.Evaluator]) -> None:
    event = fp.Event.from_claude_code(
        {
            "hook_event_name": "PreToolUse",
            "session_id": "chat-1",
            "tool_name": "Bash",
            "tool_input": {"command": "git push --force origin main"},
        }
    )
    d = forge_evaluator().evaluate(event)
    assert d.blocked
    for fmt in (PLAIN, TELEGRAM, SLACK):
        rendered = render_chat(d, fmt)
        assert rendered is not None
        assert read(rendered, fmt)[1] == claude_code_text(d)
