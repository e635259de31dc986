"""Harness adapters: translate one :class:`~forge_policy.Decision` into what a harness reads.

Only Claude Code hooks for now (:mod:`forge_policy.render.claude_code`); Codex, Gemini and
Cursor adapters come later. No adapter imports a framework at module level.
"""

#: Names accepted by ``forge-policy hook --harness``.
HARNESSES = ("claude-code",)
