"""A scripted Gemini API (``POST …/models/{model}:streamGenerateContent?alt=sse`` and
``:generateContent``), what Gemini CLI talks to when ``GOOGLE_GEMINI_BASE_URL`` names it.

Each streamed chunk is a ``GenerateContentResponse``: ``candidates[0].content.parts`` with
``text`` or ``functionCall`` (``name``, ``args``, ``id``), a ``finishReason`` and
``usageMetadata`` (https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent).
Tool results come back as ``functionResponse`` parts. A request that offers tools is the
client's main loop and takes the next turn; one without (a routing or next-speaker question,
asked for JSON) gets :data:`SIDE_TEXT`.

>>> from forge_policy.testing.models import Turn
>>> with GeminiModel([Turn.call("run_shell_command", command="ls")]) as model:
...     model.url.startswith("http://127.0.0.1:")
True
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from forge_policy.testing.models._server import (
    Request,
    ScriptedModel,
    ToolResult,
    Turn,
    json_reply,
    sse,
)

#: What a side request (no tools offered) is answered: the JSON Gemini CLI's side questions
#: parse (who speaks next: the user; which model: the default one).
SIDE_TEXT = json.dumps({"next_speaker": "user", "reasoning": "scripted", "model_choice": "pro"})


class GeminiModel(ScriptedModel):
    """The Gemini API from a script of :class:`~forge_policy.testing.models.Turn`."""

    api = "gemini-generate-content"

    def respond(self, request: Request) -> tuple[int, Mapping[str, str], Iterator[bytes]]:
        path = request.path.split("?", 1)[0]
        body = request.body if isinstance(request.body, dict) else {}
        if request.method != "POST":
            return json_reply({"models": []})
        if path.endswith(":countTokens"):
            return json_reply({"totalTokens": 1})
        if path.endswith(":embedContent"):
            return json_reply({"embedding": {"values": [0.0]}})
        turn = self.next_turn() if body.get("tools") else Turn.say(SIDE_TEXT)
        chunk = _chunk(turn, self)
        if path.endswith(":streamGenerateContent"):
            return sse([(None, chunk)])
        return json_reply(chunk)

    def tool_results(self) -> dict[str, ToolResult]:
        found: dict[str, ToolResult] = {}
        for request in self.requests:
            body = request.body if isinstance(request.body, dict) else {}
            for content in body.get("contents") or ():
                for part in content.get("parts") or () if isinstance(content, dict) else ():
                    answer = part.get("functionResponse") if isinstance(part, dict) else None
                    if isinstance(answer, dict):
                        response = answer.get("response")
                        text = json.dumps(response) if not isinstance(response, str) else response
                        found[str(answer.get("id"))] = ToolResult(text, "error" in (response or {}))
        return found


def _chunk(turn: Turn, model: ScriptedModel) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if turn.text:
        parts.append({"text": turn.text})
    for call in turn.tool_calls:
        parts.append(
            {
                "functionCall": {
                    "name": call.name,
                    "args": dict(call.input),
                    "id": model.wire_id(call),
                }
            }
        )
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
        "modelVersion": "scripted",
    }
