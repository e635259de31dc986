"""Harness adapters: a coding-agent CLI's hook payload in, an :class:`~forge_policy.Event` out,
and the decision back in the CLI's own words (``forge-policy hook --harness NAME``).

:mod:`~forge_policy.harness.base` is the seam (:class:`~forge_policy.harness.base.HookAdapter`);
:mod:`~forge_policy.harness.registry` the table of supported CLIs, one adapter class each
(``claude_code``, ``codex``, ``gemini``, ``cursor``, ``copilot``, ``antigravity``,
``opencode``: the one spoken through forge-policy's own plugin), sharing the
skeleton in :mod:`~forge_policy.harness.common`; ``payload`` reads and bounds a hook's stdin.
The Claude Code answer is rendered by :mod:`forge_policy.render.claude_code`.

Agent-framework integrations (Claude Agent SDK, OpenAI Agents SDK, LangChain) live in
:mod:`forge_policy.integrations`; ``forge_policy.harness.claude_agent_sdk``,
``…openai_agents`` and ``…langchain`` re-export them under their former paths. Transcripts
(``forge-policy replay``'s reader) are :mod:`forge_policy.ops.transcript`.
"""

from forge_policy.harness.registry import names as _names

#: Names accepted by ``forge-policy hook --harness``.
HARNESSES = _names()
