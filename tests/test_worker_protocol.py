"""The client's wire format and root resolution, proven with Hypothesis: a request or answer
round-trips, any cut or extended answer is refused (so it is never mistaken for a decision), and
the client finds the same ``FORGE_ROOT`` as :class:`~forge_policy.config.env.Config`."""

from __future__ import annotations

import os
import pwd
import socket
import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_policy.config.env import Config
from forge_policy.harness.registry import HARNESSES
from forge_policy.worker.protocol import (
    OPTIONS,
    USAGE,
    HookOptions,
    HookRequest,
    OptionsError,
    decode_answer,
    decode_request,
    encode_answer,
    encode_request,
    place,
    receive,
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


# -- the hook's options: one parser for the hook, the CLI, the client and the worker ---------

harness_names = st.sampled_from(sorted(HARNESSES))
words = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=8)


@st.composite
def hook_options(draw: st.DrawFn) -> HookOptions:
    harness = draw(harness_names)
    event = draw(st.one_of(st.just(""), st.sampled_from(sorted(HARNESSES[harness].events))))
    return HookOptions(harness, event, draw(st.booleans()))


def spelled(options: HookOptions, joined: list[bool]) -> list[str]:
    """``options.argv()`` with some ``--flag value`` pairs written ``--flag=value``."""
    args = options.argv()
    out: list[str] = []
    i = 0
    while i < len(args):
        if args[i] in ("--harness", "--event") and joined[i % len(joined)]:
            out.append(f"{args[i]}={args[i + 1]}")
            i += 2
        else:
            out.append(args[i])
            i += 1
    return out


@given(hook_options(), st.lists(st.booleans(), min_size=1, max_size=4))
def test_hook_options_round_trip_through_argv_in_either_spelling(
    options: HookOptions, joined: list[bool]
) -> None:
    args = spelled(options, joined)
    assert HookOptions.parse(args, HARNESSES) == options
    assert HookOptions.parse(args) == options  # the client's form-only reading agrees
    assert options.for_worker is not options.via_serve


@given(hook_options())
def test_the_cli_declares_the_options_the_hook_parses(options: HookOptions) -> None:
    from forge_policy.cli.app import build_parser

    parsed = build_parser().parse_args(["hook", *options.argv()])
    assert HookOptions(parsed.harness, parsed.event, parsed.via_serve) == options
    defaults = build_parser().parse_args(["hook"])
    assert HookOptions(defaults.harness, defaults.event, defaults.via_serve) == HookOptions()
    assert [flag for flag, _, _ in OPTIONS] == ["--harness", "--event", "--via-serve"]


@given(hook_options(), words)
def test_any_other_word_is_refused_naming_it(options: HookOptions, word: str) -> None:
    if word in ("-h", "--help", "--via-serve") or word.startswith(("--harness=", "--event=")):
        return
    with pytest.raises(OptionsError) as refused:
        HookOptions.parse([*options.argv(), word])
    assert f"unexpected argument {word!r}" in str(refused.value) and USAGE in str(refused.value)


def test_help_stops_the_reading_and_unknown_names_are_refused_with_the_registry() -> None:
    assert HookOptions.parse(["--event", "x", "--help", "--bogus"]).help
    assert not HookOptions.parse(["--help"]).for_worker
    with pytest.raises(OptionsError, match="--harness 'vim' is not supported"):
        HookOptions.parse(["--harness=vim"], HARNESSES)
    HookOptions.parse(["--harness=vim"])  # the client cannot know: the worker or hook refuses
    with pytest.raises(OptionsError, match=r"--event 'Nope' is not a .*Codex.* hook event"):
        HookOptions.parse(["--harness", "codex", "--event", "Nope"], HARNESSES)
    for args in (["--harness"], ["--event"], ["--via-serve=1"], ["-x"]):
        with pytest.raises(OptionsError, match="unexpected argument"):
            HookOptions.parse(args)


# -- FORGE_ROOT: the protocol's rule is posixpath's ------------------------------------------

homes = st.one_of(st.none(), st.sampled_from([b"/h", b"/h/", b"/", b"//h", b"h"]))
users = st.sampled_from(["", "root", "nosuchuser-forge", pwd.getpwuid(os.getuid()).pw_name])
values = st.one_of(
    paths.map(str.encode),
    st.tuples(users, paths).map(lambda t: f"~{t[0]}/{t[1]}".encode()),
    users.map(lambda u: f"~{u}".encode()),
)


@given(paths.map(lambda p: "/proj/" + p), values, homes)
def test_place_is_posixpath_expanduser_join_normpath(
    project: str, value: bytes, home: bytes | None
) -> None:
    """What Config.from_env did before it used the protocol (HOME as expanduser reads it)."""
    import posixpath

    saved = os.environ.get("HOME")
    try:
        if home is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = os.fsdecode(home)
        absolute = posixpath.abspath(project).encode()
        expected = posixpath.normpath(posixpath.join(absolute, posixpath.expanduser(value)))
    finally:
        if saved is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = saved
    assert place(absolute, value, home) == expected


# -- the one read loop ---------------------------------------------------------------------------


@given(st.binary(max_size=200_000), st.integers(0, 300_000))
def test_receive_reads_to_the_end_or_stops_past_the_limit(data: bytes, limit: int) -> None:
    left, right = socket.socketpair()
    try:
        sender = threading.Thread(target=lambda: (right.sendall(data), right.shutdown(2)))
        sender.start()
        got = receive(left, limit)
        sender.join()
    finally:
        left.close()
        right.close()
    if len(data) <= limit:
        assert got == data
    else:
        assert got is None


def test_receive_gives_up_at_its_deadline() -> None:
    left, right = socket.socketpair()
    try:
        right.sendall(b"partial")  # and never shuts down
        with pytest.raises(TimeoutError):
            receive(left, 100, time.monotonic() + 0.05)
        with pytest.raises(TimeoutError):
            receive(left, 100, time.monotonic() - 1)  # already past: no read at all
    finally:
        left.close()
        right.close()


@given(
    chunks,
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9),
    chunks,
    st.lists(words, max_size=4),
    chunks,
    st.lists(chunks, max_size=4),
)
def test_hook_requests_round_trip_and_any_other_is_refused(
    identity: bytes,
    deadline: float,
    cwd: bytes,
    args: list[str],
    raw: bytes,
    environ: list[bytes],
) -> None:
    if args == [""]:
        args = []  # one empty argument and none are the same bytes; the client sends neither
    request = HookRequest(identity, deadline, cwd, args, raw, environ)
    items = decode_request(request.encode())
    assert items[0] == b"hook" and len(items) == 6 + len(environ)
    back = HookRequest.decode(items)
    assert (back.identity, back.cwd, back.args, back.raw, back.environ) == (
        identity,
        cwd,
        args,
        raw,
        environ,
    )
    assert abs(back.deadline - deadline) <= 1e-6 * max(1.0, abs(deadline))
    for cut in range(6):
        with pytest.raises(ValueError, match="unknown request"):
            HookRequest.decode(items[:cut])
    with pytest.raises(ValueError, match="unknown request"):
        HookRequest.decode([b"status", *items[1:]])


def test_a_hook_request_past_or_without_a_deadline_is_expired() -> None:
    now = time.monotonic()
    assert HookRequest(b"", now + 60, b"", [], b"", []).expired() is False
    assert HookRequest(b"", now - 1, b"", [], b"", []).expired() is True
    items = decode_request(HookRequest(b"", now + 60, b"", [], b"", []).encode())
    for garbage in (b"soon", b"nan", b""):
        assert HookRequest.decode([*items[:2], garbage, *items[3:]]).expired() is True


def test_the_hook_options_the_worker_keeps_are_a_copy_of_the_parse() -> None:
    """The worker keeps the answer for each argument list (a pure function of it): a kept one
    is the parse's, refusals included, and a caller that changes its copy changes nothing."""
    from forge_policy.worker.server import _hook_options

    args = ["--harness", "gemini", "--event", "BeforeTool"]
    first = _hook_options(args)
    assert first == {"harness": "gemini", "event": "BeforeTool"}
    assert first is not None
    first["harness"] = "changed"
    assert _hook_options(list(args)) == {"harness": "gemini", "event": "BeforeTool"}
    for refused in (["--harness", "nope"], ["--via-serve"], ["--help"], ["--bogus"]):
        assert _hook_options(refused) is None
        assert _hook_options(refused) is None
