"""The client's wire format and root resolution, proven with Hypothesis: a request or answer
round-trips, any cut or extended answer is refused (so it is never mistaken for a decision), and
the client finds the same ``FORGE_ROOT`` as :class:`~forge_policy.config.env.Config`."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_policy.config.env import Config
from forge_policy.worker.protocol import (
    decode_answer,
    decode_request,
    encode_answer,
    encode_request,
    relevant,
    root_of,
)

chunks = st.binary(max_size=64)
statuses = st.sampled_from([b"A", b"R"])


@given(st.lists(chunks, max_size=8))
def test_requests_round_trip_and_refuse_any_cut(items: list[bytes]) -> None:
    data = encode_request(items)
    assert decode_request(data) == items
    for end in range(len(data)):
        with pytest.raises(ValueError):
            decode_request(data[:end])
    with pytest.raises(ValueError):
        decode_request(data + b"\0")


@given(statuses, chunks, chunks, st.integers(0, 255), st.binary(min_size=1, max_size=8))
def test_answers_round_trip_and_refuse_any_cut_or_extra_bytes(
    status: bytes, out: bytes, err: bytes, code: int, extra: bytes
) -> None:
    data = encode_answer(status, out, err, code)
    assert decode_answer(data) == (status, out, err, code)
    for end in range(len(data)):
        with pytest.raises(ValueError):
            decode_answer(data[:end])
    with pytest.raises(ValueError):
        decode_answer(data + extra)


@given(st.binary(max_size=40))
def test_arbitrary_bytes_are_an_answer_only_when_well_formed(data: bytes) -> None:
    try:
        status, out, err, code = decode_answer(data)
    except ValueError:
        return
    assert encode_answer(status, out, err, code) == data


segment = st.sampled_from(["a", "b", ".", "..", "", "state", ".forge"])
paths = st.lists(segment, max_size=5).map("/".join)
roots = st.one_of(
    paths,
    paths.map(lambda p: "/" + p),
    paths.map(lambda p: "~/" + p),
    st.just("~"),
    paths.map(lambda p: f" {p} "),
)


@given(roots, st.one_of(st.none(), paths.map(lambda p: "/proj/" + p), paths), st.booleans())
def test_the_client_resolves_forge_root_as_config_does(
    forge_root: str, project: str | None, set_root: bool
) -> None:
    env = {"HOME": os.path.expanduser("~")}  # expanduser reads the process environment
    if set_root:
        env["FORGE_ROOT"] = forge_root
    if project is not None:
        env["CLAUDE_PROJECT_DIR"] = project
    expected = Config.from_env(env).root  # relative paths: against the process cwd
    raw = {k.encode(): v.encode() for k, v in env.items()}
    got = root_of(raw, os.getcwdb())
    assert got.decode() == expected


def test_relevant_names_every_variable_an_answer_depends_on() -> None:
    environ = {
        b"FORGE_PROFILE": b"strict",
        b"DISABLE_AGENT_SHIELD": b"true",
        b"GIT_DIR": b"/g",
        b"CLAUDE_PROJECT_DIR": b"/p",
        b"XDG_CACHE_HOME": b"/c",
        b"HOME": b"/h",
        b"PATH": b"/bin",
        b"FORGE_WORKER": b"on",
        b"FORGE_WORKER_TIMEOUT": b"2",
        b"FORGE_WORKER_IDLE_SECONDS": b"9",
        b"TERM": b"xterm",
        b"CLAUDECODE": b"1",
    }
    assert relevant(environ) == sorted(
        k + b"=" + v
        for k, v in environ.items()
        if k not in (b"FORGE_WORKER", b"FORGE_WORKER_TIMEOUT", b"FORGE_WORKER_IDLE_SECONDS")
        and k not in (b"TERM", b"CLAUDECODE")
    )
