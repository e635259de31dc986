"""The scripted models of the testing kit, spoken to over HTTP as a client would: loopback only,
every request recorded, turns served in order, tool results read back; and the fixture's answer
when a client is not installed."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from forge_policy.testing.clients import ClientMissing
from forge_policy.testing.models import (
    DONE_TEXT,
    AnthropicModel,
    GeminiModel,
    ResponsesModel,
    ScriptedModel,
    Turn,
)
from forge_policy.testing.real_client import RealClientProject


def _post(model: ScriptedModel, path: str, body: dict[str, Any]) -> tuple[str, str]:
    request = urllib.request.Request(
        model.url + path, json.dumps(body).encode(), {"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.headers["content-type"], answer.read().decode()


def _sse_data(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


TOOLS = [{"name": "Bash"}]


def test_anthropic_streams_the_script_in_order_then_says_done() -> None:
    with AnthropicModel([Turn.call("Bash", command="ls"), Turn.say("bye")]) as model:
        assert model.url.startswith("http://127.0.0.1:")
        replies = [
            _post(model, "/v1/messages", {"stream": True, "tools": TOOLS, "messages": []})
            for _ in range(3)
        ]
    kinds = [kind for kind, _ in replies]
    assert all(k.startswith("text/event-stream") for k in kinds)
    first = _sse_data(replies[0][1])
    assert first[0]["type"] == "message_start"
    assert first[1]["content_block"]["name"] == "Bash"
    assert json.loads(first[2]["delta"]["partial_json"]) == {"command": "ls"}
    assert first[-2]["delta"]["stop_reason"] == "tool_use"
    texts = [
        e["delta"]["text"]
        for _, body in replies[1:]
        for e in _sse_data(body)
        if e["type"] == "content_block_delta"
    ]
    assert texts == ["bye", DONE_TEXT]
    assert len(model.requests) == 3 and model.requests[0].path == "/v1/messages"


def test_a_request_without_tools_takes_no_turn() -> None:
    with AnthropicModel([Turn.say("the turn")]) as model:
        _post(model, "/v1/messages", {"messages": []})  # a title or a probe
        _, body = _post(model, "/v1/messages", {"tools": TOOLS, "messages": []})
    assert json.loads(body)["content"] == [{"type": "text", "text": "the turn"}]


def test_tool_results_are_read_back_by_wire_id() -> None:
    turn = Turn.call("Bash", command="ls")
    call = turn.tool_calls[0]
    with AnthropicModel([turn]) as model:
        wire = model.wire_id(call)
        _post(
            model,
            "/v1/messages",
            {
                "tools": TOOLS,
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": wire,
                                "is_error": True,
                                "content": [{"type": "text", "text": "refused"}],
                            },
                        ],
                    },
                ],
            },
        )
        assert (model.tool_results()[wire].text, model.tool_results()[wire].is_error) == (
            "refused",
            True,
        )


def test_responses_streams_a_function_call_and_reads_its_output() -> None:
    turn = Turn.call("exec_command", cmd="ls")
    with ResponsesModel([turn]) as model:
        _, body = _post(model, "/v1/responses", {"stream": True, "tools": TOOLS, "input": []})
        events = _sse_data(body)
        _post(
            model,
            "/v1/responses",
            {
                "tools": TOOLS,
                "input": [
                    {
                        "type": "function_call_output",
                        "call_id": model.wire_id(turn.tool_calls[0]),
                        "output": "blocked",
                    },
                ],
            },
        )
        results = model.tool_results()
    done = [e for e in events if e["type"] == "response.output_item.done"]
    assert done[0]["item"]["name"] == "exec_command"
    assert json.loads(done[0]["item"]["arguments"]) == {"cmd": "ls"}
    assert events[-1]["type"] == "response.completed"
    assert results[turn.tool_calls[0].id].text == "blocked"


def test_gemini_streams_a_function_call() -> None:
    with GeminiModel([Turn.call("run_shell_command", command="ls")]) as model:
        _, body = _post(
            model,
            "/v1beta/models/m:streamGenerateContent?alt=sse",
            {"tools": [{"functionDeclarations": []}], "contents": []},
        )
    part = _sse_data(body)[0]["candidates"][0]["content"]["parts"][0]
    assert part["functionCall"]["name"] == "run_shell_command"
    assert part["functionCall"]["args"] == {"command": "ls"}


def test_the_model_stops_with_its_context() -> None:
    with AnthropicModel() as model:
        url = model.url
    with pytest.raises(OSError):
        urllib.request.urlopen(url + "/v1/messages", timeout=2)


def test_a_client_that_is_not_installed_says_what_was_looked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reason tests/conftest.py turns into a failure under CI (``not found on PATH``)."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ClientMissing, match=r"codex: codex not found on PATH \(nor in /nowhere\)"):
        RealClientProject("codex", tmp_path / "p", search=[Path("/nowhere")])
