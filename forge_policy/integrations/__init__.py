"""Agent-framework integrations: an :class:`~forge_policy.Evaluator` in front of an agent built
with an SDK, in-process (the coding-agent CLIs, which run a command hook, are
:mod:`forge_policy.harness`).

Each module sits behind an optional extra and imports its framework only when called (for
LangChain: when imported), never by ``import forge_policy`` or this package:
:mod:`~forge_policy.integrations.claude_agent_sdk` (extra ``claude-agent-sdk``: hook and
permission callbacks), :mod:`~forge_policy.integrations.openai_agents` (extra
``openai-agents``: tool guardrails) and :mod:`~forge_policy.integrations.langchain` (extra
``langchain``: an agent middleware). What they share (one evaluation at a time per evaluator,
the caller's session id, the fail-closed text) is ``_embedding``; the floor they give the shell
tools they wrap (SPEC §13: an allowed command rewritten to run under forge_policy's own
sandbox) is ``_floor``.

These modules were ``forge_policy.harness.claude_agent_sdk``, ``…openai_agents`` and
``…langchain``; those paths still import, re-exporting the public names from here.
"""
