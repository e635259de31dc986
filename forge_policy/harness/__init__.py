"""Harness adapters: a harness's payload in, an :class:`~forge_policy.Event` out.

``payload`` reads and bounds a hook's stdin; ``transcript`` reads Claude Code transcripts back
into the hook payloads their session produced (for ``forge-policy replay``); the Claude Code
answer is rendered by :mod:`forge_policy.render.claude_code`. Agent-framework adapters live
here, each behind an optional extra and importing its framework only when called:
``claude_agent_sdk`` (extra ``claude-agent-sdk``), ``openai_agents`` (extra ``openai-agents``),
``langchain`` (extra ``langchain``). The coding-agent CLIs with command hooks (``forge-policy
hook --harness NAME``) are listed in :mod:`forge_policy.harness.registry`, one adapter module
each.
"""

from forge_policy.harness.registry import names as _names

#: Names accepted by ``forge-policy hook --harness``.
HARNESSES = _names()
