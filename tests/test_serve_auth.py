"""The via-serve authentication and answer checks, in-process: the light HMAC is the stdlib's,
a credential or answer MAC survives no change, a response survives no cut, every answer the hook
can print passes :func:`~forge_policy.serve.check_answer`, and the replay set forgets on time."""

from __future__ import annotations

import hmac
import io
import json
import subprocess
import sys
import tempfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_policy.errors import ServeUnavailable
from forge_policy.hook import answer
from forge_policy.serve import _parse_answer, check_answer
from forge_policy.serve.auth import (
    answer_mac_ok,
    answer_message,
    hmac_sha256,
    parse_credential,
    request_message,
    sign,
)
from forge_policy.serve.server import Nonces

keys = st.binary(min_size=0, max_size=200)  # shorter and longer than SHA-256's 64-byte block


@given(keys, st.binary(max_size=300))
def test_the_light_hmac_is_the_stdlib_hmac(key: bytes, message: bytes) -> None:
    assert hmac_sha256(key, message) == hmac.digest(key, message, "sha256")


@given(keys, st.binary(max_size=64), st.integers(0, 10**11), st.binary(min_size=16, max_size=16))
def test_a_credential_round_trips_and_binds_everything(
    key: bytes, body: bytes, stamp: int, nonce: bytes
) -> None:
    header, mac = sign(key, "POST", "/hook", body, stamp=stamp, nonce=nonce)
    assert parse_credential(header) == (stamp, nonce, mac)
    assert mac == hmac.digest(key, request_message("POST", "/hook", stamp, nonce, body), "sha256")
    others = [
        request_message("GET", "/hook", stamp, nonce, body),
        request_message("POST", "/health", stamp, nonce, body),
        request_message("POST", "/hook", stamp + 1, nonce, body),
        request_message("POST", "/hook", stamp, bytes(16) if any(nonce) else b"\1" * 16, body),
        request_message("POST", "/hook", stamp, nonce, body + b" "),
    ]
    assert all(hmac_sha256(key, other) != mac for other in others)


def test_fresh_credentials_never_repeat_a_nonce() -> None:
    nonces = {parse_credential(sign(b"k", "POST", "/hook", b"")[0])[1] for _ in range(1000)}  # type: ignore[index]
    assert len(nonces) == 1000


@pytest.mark.parametrize(
    "value",
    [
        "",
        "v1",
        "v2 1 " + "0" * 32 + " " + "0" * 64,
        "v1 -1 " + "0" * 32 + " " + "0" * 64,
        "v1 ² " + "0" * 32 + " " + "0" * 64,
        "v1 1 " + "0" * 31 + " " + "0" * 64,
        "v1 1 " + "0" * 32 + " " + "0" * 63 + "g",
        "v1 1 " + "0" * 32 + " " + "0" * 62 + "\t0",
        "v1 1 " + "0" * 32 + "  " + "0" * 64,
        "v1 1 " + "0" * 32 + " " + "0" * 64 + " x",
    ],
)
def test_malformed_credentials_are_refused(value: str) -> None:
    assert parse_credential(value) is None


@given(keys, st.binary(min_size=32, max_size=32), st.binary(max_size=64), st.data())
def test_an_answer_mac_holds_for_that_answer_only(
    key: bytes, request_mac: bytes, body: bytes, data: st.DataObject
) -> None:
    good = hmac.digest(key, answer_message(request_mac, 200, body), "sha256").hex()
    assert answer_mac_ok(key, request_mac, 200, body, good)
    assert not answer_mac_ok(key, request_mac, 200, body, good.upper())
    assert not answer_mac_ok(key, request_mac, 201, body, good)
    assert not answer_mac_ok(key, request_mac, 200, body + b"x", good)
    flip = data.draw(st.integers(0, 31))
    other = request_mac[:flip] + bytes([request_mac[flip] ^ 1]) + request_mac[flip + 1 :]
    assert not answer_mac_ok(key, other, 200, body, good)
    assert not answer_mac_ok(key + b"x", request_mac, 200, body, good)
    # a request's own MAC is never its answer's (the labels differ)
    assert not answer_mac_ok(key, request_mac, 200, body, request_mac.hex())


RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


def test_a_response_survives_no_cut_and_no_extra_byte() -> None:
    assert _parse_answer(RESPONSE) == (
        200,
        {"content-type": "application/json", "content-length": "2"},
        b"{}",
    )
    for end in range(len(RESPONSE)):
        with pytest.raises(ServeUnavailable):
            _parse_answer(RESPONSE[:end])
    with pytest.raises(ServeUnavailable, match="longer than its Content-Length"):
        _parse_answer(RESPONSE + b"\n")


@given(st.binary(max_size=120))
def test_arbitrary_bytes_are_refused_or_a_consistent_response(data: bytes) -> None:
    try:
        status, headers, body = _parse_answer(data)
    except ServeUnavailable:
        return
    assert int(headers["content-length"]) == len(body) and 0 <= status <= 999


EVENTS = [
    {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": c}}
    for c in ("git push --force", "npm install left-pad", "ls", "rm -rf /")
] + [
    {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": "/p/a"}},
    {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "x"}},
    {"hook_event_name": "UserPromptSubmit", "prompt": "hi"},
    {"hook_event_name": "Stop"},
    {"hook_event_name": "SessionStart", "source": "startup"},
    {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}},
]
RAW = [json.dumps({"session_id": "s", "cwd": "/p", **e}).encode() for e in EVENTS] + [
    b"not json",
    b'{"hook_event_name": "PreToolUse"}',
    b"[]",
    b'{"hook_event_name": "Stop", "session_id": ""}',
]


@pytest.mark.parametrize("on_error", ["deny", "allow"])
def test_every_answer_the_hook_prints_is_a_hook_answer(on_error: str) -> None:
    env = {"FORGE_ROOT": tempfile.mkdtemp(), "FORGE_STORE": "memory", "FORGE_ON_ERROR": on_error}
    for raw in RAW:
        text = answer(raw, environ=env, stderr=io.StringIO())
        assert check_answer(text.encode()) == text, raw


def test_the_nonces_forget_once_out_of_the_window() -> None:
    nonces = Nonces(window=30)
    assert nonces.first_use(b"a", 100, 100) and nonces.first_use(b"b", 110, 110)
    assert not nonces.first_use(b"a", 100, 129)
    assert nonces.first_use(b"c", 140, 140) and len(nonces) == 2  # "a" left at 130
    assert not nonces.first_use(b"b", 110, 140)  # "b" stays until 140


def test_the_client_path_does_not_load_openssl() -> None:
    code = (
        "import sys, forge_policy.hook, forge_policy.serve, forge_policy.serve.auth as a\n"
        "a.hmac_sha256(b'k', b'm')\n"
        "print(sorted({'hmac', 'hashlib', '_hashlib'} & set(sys.modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout == "[]\n", result.stderr


def test_every_shape_the_renderer_builds_is_a_hook_answer() -> None:
    from forge_policy.events import BLOCKABLE_TOOL_EVENTS
    from forge_policy.render import claude_code as cc

    names = (
        cc.PERMISSION_EVENTS
        | cc.DECISION_EVENTS
        | cc.CONTINUE_EVENTS
        | cc.CONTEXT_EVENTS
        | set(BLOCKABLE_TOOL_EVENTS)
        | {"PermissionRequest", "Stop", "Notification"}
    )
    for name in sorted(names):
        for shape in (
            cc.advice(name, "a"),
            cc.refuse(name, "r", "s"),
            cc.refuse(name, "r", "s", ask=True),
            {**cc.refuse(name, "r", "s"), "override_allowed": False},
        ):
            text = cc.dumps(shape)
            assert check_answer(text.encode()) == text, (name, shape)
