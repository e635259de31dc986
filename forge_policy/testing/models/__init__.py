"""Scripted models: each a wire API a coding-agent client talks to, served on ``127.0.0.1``
from a list of :class:`Turn` (tool calls to request, then text), every request recorded.

>>> from forge_policy.testing.models import AnthropicModel, Turn
>>> with AnthropicModel([Turn.call("Bash", command="ls"), Turn.say("done")]) as model:
...     model.url.startswith("http://127.0.0.1:")
True
"""

from __future__ import annotations

from forge_policy.testing.models._server import (
    DONE_TEXT,
    Request,
    ScriptedModel,
    ToolCall,
    ToolResult,
    Turn,
)
from forge_policy.testing.models.anthropic import AnthropicModel
from forge_policy.testing.models.gemini import GeminiModel
from forge_policy.testing.models.openai import ResponsesModel

__all__ = [
    "DONE_TEXT",
    "AnthropicModel",
    "GeminiModel",
    "Request",
    "ResponsesModel",
    "ScriptedModel",
    "ToolCall",
    "ToolResult",
    "Turn",
]
