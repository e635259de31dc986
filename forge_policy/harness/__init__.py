"""Harness adapters: a harness's payload in, an :class:`~forge_policy.Event` out.

``payload`` reads and bounds a hook's stdin; the Claude Code answer is rendered by
:mod:`forge_policy.render.claude_code`. Adapters for Codex, Gemini, Cursor and agent frameworks
arrive here, each behind an optional extra; none imports a framework at module level.
"""

#: Names accepted by ``forge-policy hook --harness``.
HARNESSES = ("claude-code",)
