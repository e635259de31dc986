"""A scripted OpenAI Responses API (``POST …/responses``, streaming SSE), what Codex CLI talks to
through a custom model provider with ``wire_api = "responses"``.

The stream follows the Responses streaming events: ``response.created``, per output item
``response.output_item.added`` / (``response.output_text.delta`` or
``response.function_call_arguments.delta``) / ``response.output_item.done``, then
``response.completed`` with the whole response
(https://platform.openai.com/docs/api-reference/responses-streaming). Tool results come back as
``function_call_output`` input items. A request with tools takes the next turn; one without gets
a short text.

>>> from forge_policy.testing.models import Turn
>>> with ResponsesModel([Turn.call("shell", command=["ls"])]) as model:
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
    ToolCall,
    ToolResult,
    Turn,
    json_reply,
    sse,
)

#: What a side request (no tools offered) is answered.
SIDE_TEXT = "none"


class ResponsesModel(ScriptedModel):
    """The Responses API from a script of :class:`~forge_policy.testing.models.Turn`."""

    api = "openai-responses"

    def respond(self, request: Request) -> tuple[int, Mapping[str, str], Iterator[bytes]]:
        path = request.path.split("?", 1)[0]
        body = request.body if isinstance(request.body, dict) else {}
        if request.method != "POST" or not path.endswith("/responses"):
            if path.endswith("/models"):
                return json_reply({"object": "list", "data": [], "models": []})
            return json_reply({})
        turn = self.next_turn() if body.get("tools") else Turn.say(SIDE_TEXT)
        items = _items(turn, self)
        response = _response(items, str(body.get("model", "scripted")))
        if not body.get("stream"):
            return json_reply(response)
        events: list[tuple[str | None, Any]] = [
            (
                "response.created",
                {
                    "type": "response.created",
                    "response": response | {"status": "in_progress", "output": []},
                },
            ),
        ]
        for index, item in enumerate(items):
            events.append(
                (
                    "response.output_item.added",
                    {
                        "type": "response.output_item.added",
                        "output_index": index,
                        "item": item | _emptied(item),
                    },
                )
            )
            if item["type"] == "function_call":
                events.append(
                    (
                        "response.function_call_arguments.delta",
                        {
                            "type": "response.function_call_arguments.delta",
                            "output_index": index,
                            "item_id": item["id"],
                            "delta": item["arguments"],
                        },
                    )
                )
            else:
                events.append(
                    (
                        "response.output_text.delta",
                        {
                            "type": "response.output_text.delta",
                            "output_index": index,
                            "item_id": item["id"],
                            "content_index": 0,
                            "delta": item["content"][0]["text"],
                        },
                    )
                )
            events.append(
                (
                    "response.output_item.done",
                    {"type": "response.output_item.done", "output_index": index, "item": item},
                )
            )
        events.append(("response.completed", {"type": "response.completed", "response": response}))
        return sse(events)

    def wire_id(self, call: ToolCall) -> str:
        return call.id

    def tool_results(self) -> dict[str, ToolResult]:
        found: dict[str, ToolResult] = {}
        for request in self.requests:
            body = request.body if isinstance(request.body, dict) else {}
            for item in body.get("input") or ():
                if isinstance(item, dict) and item.get("type") == "function_call_output":
                    found[str(item.get("call_id"))] = ToolResult(
                        _text_of(item.get("output")), False
                    )
        return found


def _emptied(item: dict[str, Any]) -> dict[str, Any]:
    """What an output item holds when it is announced, before its content streams."""
    return {"arguments": ""} if item["type"] == "function_call" else {"content": []}


def _text_of(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(str(p.get("text", "")) for p in output if isinstance(p, dict))
    return json.dumps(output)


def _items(turn: Turn, model: ScriptedModel) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if turn.text:
        items.append(
            {
                "type": "message",
                "id": f"msg_{len(model.requests)}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
            }
        )
    for call in turn.tool_calls:
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{call.id}",
                "call_id": model.wire_id(call),
                "name": call.name,
                "arguments": json.dumps(dict(call.input)),
                "status": "completed",
            }
        )
    return items


def _response(items: list[dict[str, Any]], model: str) -> dict[str, Any]:
    return {
        "id": "resp_scripted",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": model,
        "output": items,
        "error": None,
        "incomplete_details": None,
        "usage": {
            "input_tokens": 1,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 1,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 2,
        },
    }
