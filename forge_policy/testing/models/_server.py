"""What every scripted model shares: a list of turns, a loopback HTTP server on a free port that
records every request, and a context manager that stops it.

A *turn* is one model reply: the tool calls it requests (:class:`ToolCall`) and the text it says.
Each request a wire API serves as a main-loop reply takes the next turn; when the script is used
up the model says :data:`DONE_TEXT` and ends. Requests a client makes on the side (title
generation, quota checks, ``count_tokens``) are answered without taking a turn, by each model.

Only the standard library: :mod:`http.server`, :mod:`threading`, :mod:`json`.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs

#: What the model says once the script is used up.
DONE_TEXT = "done"
#: The only address a scripted model listens on.
LOOPBACK = "127.0.0.1"

_ids = itertools.count(1)


def _new_id() -> str:
    return f"call_{next(_ids):04d}"


@attrs.frozen
class ToolCall:
    """One tool call the model requests: the client's tool name and its input.

    >>> ToolCall("Bash", {"command": "ls"}).name
    'Bash'
    """

    name: str
    input: Mapping[str, Any] = attrs.field(factory=dict)
    id: str = attrs.field(factory=_new_id)


@attrs.frozen
class Turn:
    """One model reply: the tool calls it requests, then (or instead) text.

    >>> Turn.call("Bash", command="ls").tool_calls[0].input
    {'command': 'ls'}
    >>> Turn.say("all good").text
    'all good'
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()

    @classmethod
    def call(cls, name: str, text: str = "", /, **tool_input: Any) -> Turn:
        """A reply asking for one call of ``name`` with ``tool_input``."""
        return cls(text=text, tool_calls=(ToolCall(name, tool_input),))

    @classmethod
    def say(cls, text: str) -> Turn:
        """A reply that only says ``text`` (the client ends its turn)."""
        return cls(text=text)


@attrs.frozen
class Request:
    """One request a client made: method, path (with the query), headers (lower-cased), body
    (parsed JSON, or ``None``)."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any


class ToolResult:
    """A tool's result as the model saw it: its text and whether the client marked it an error.

    >>> ToolResult("boom", True)
    ToolResult(text='boom', is_error=True)
    """

    __slots__ = ("is_error", "text")

    def __init__(self, text: str, is_error: bool) -> None:
        self.text = text
        self.is_error = is_error

    def __repr__(self) -> str:
        return f"ToolResult(text={self.text!r}, is_error={self.is_error!r})"


class ScriptedModel:
    """A wire API served from a script on ``127.0.0.1`` (a free port), as a context manager.

    Subclasses implement :meth:`respond`; ``next_turn()`` hands them the script one turn at a
    time. ``requests`` holds every request, in arrival order (the server is threaded, so a lock
    orders the script).
    """

    #: the wire API's name, as in the driver's configuration
    api = "scripted"

    def __init__(self, turns: Iterable[Turn] = ()) -> None:
        self.turns: list[Turn] = list(turns)
        self.requests: list[Request] = []
        self.served = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- the script ----------------------------------------------------------------------
    def script(self, turns: Iterable[Turn]) -> None:
        """Replace what the model will say next (the served turns stay served)."""
        with self._lock:
            self.turns = list(turns)
            self.served = 0

    def next_turn(self) -> Turn:
        """The next turn of the script, or :data:`DONE_TEXT` once it is used up."""
        with self._lock:
            if self.served < len(self.turns):
                turn = self.turns[self.served]
                self.served += 1
                return turn
        return Turn.say(DONE_TEXT)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (the server must be running)."""
        if self._server is None:
            raise RuntimeError("the scripted model is not running: use it as a context manager")
        return f"http://{LOOPBACK}:{self._server.server_address[1]}"

    # --- what a subclass answers ---------------------------------------------------------
    def wire_id(self, call: ToolCall) -> str:
        """The id ``call`` carries on the wire (what the client sends back with its result)."""
        return call.id

    def respond(self, request: Request) -> tuple[int, Mapping[str, str], Iterator[bytes]]:
        """Status, headers and body chunks for ``request`` (each chunk is flushed)."""
        raise NotImplementedError

    def tool_results(self) -> dict[str, ToolResult]:
        """Every tool result the client sent back, by wire id (what the model saw of each call)."""
        return {}

    # --- the server ----------------------------------------------------------------------
    def __enter__(self) -> ScriptedModel:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass  # the recorded requests are the log

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                request = Request(
                    self.command,
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                )
                with model._lock:
                    model.requests.append(request)
                status, headers, chunks = model.respond(request)
                self.send_response(status)
                streamed = headers.get("content-type", "").startswith("text/event-stream")
                for name, value in headers.items():
                    self.send_header(name, value)
                if streamed:
                    self.send_header("cache-control", "no-cache")
                    self.send_header("connection", "close")
                    self.end_headers()
                    for chunk in chunks:
                        self.wfile.write(chunk)
                        self.wfile.flush()
                    self.close_connection = True
                else:
                    payload = b"".join(chunks)
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = _serve

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

        self._server = ThreadingHTTPServer((LOOPBACK, 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=f"scripted-{self.api}", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the server (idempotent)."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None


def json_reply(payload: Any, status: int = 200) -> tuple[int, dict[str, str], Iterator[bytes]]:
    """A JSON response."""
    return status, {"content-type": "application/json"}, iter([json.dumps(payload).encode()])


def sse(events: Sequence[tuple[str | None, Any]]) -> tuple[int, dict[str, str], Iterator[bytes]]:
    """A ``text/event-stream`` response of ``(event name or None, data)`` pairs."""

    def chunks() -> Iterator[bytes]:
        for name, data in events:
            text = data if isinstance(data, str) else json.dumps(data)
            head = f"event: {name}\n" if name else ""
            yield f"{head}data: {text}\n\n".encode()

    return 200, {"content-type": "text/event-stream"}, chunks()
