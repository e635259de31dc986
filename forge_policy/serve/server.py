"""The ``forge-policy serve`` HTTP server (stdlib :mod:`http.server`; see :mod:`forge_policy.serve`
for the protocol).

One :class:`App` authenticates each request and hands payloads to the request handler it
shares with the warm worker (:class:`forge_policy.serve.warm.Warm`): catalog reload on a
changed file, answers byte-for-byte the command hook's, concurrent requests evaluated
concurrently.

Two credentials are accepted: ``X-Forge-Auth`` (``hook --via-serve`` and ``status``: a MAC over
a fresh nonce and the body, :mod:`forge_policy.serve.auth`), whose ``200`` answers carry
``X-Forge-Answer-MAC`` so the client can tell this server from an impostor on the port; and
``Authorization: Bearer <token>`` (Claude Code http hooks, which can send nothing else; their
answers are not signed, since they could not be checked). A signed request whose MAC is wrong,
whose time is more than :data:`~forge_policy.serve.auth.FRESHNESS` seconds off, or whose nonce
was already accepted (a replay) gets 401 like a missing token.

With ``FORGE_OTEL`` on, a span per decision and the decision metrics are exported
(:mod:`forge_policy.telemetry`), batched off the answer's path; an answer's latency is recorded
once it is written.
"""

from __future__ import annotations

import heapq
import hmac
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from forge_policy.serve import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    HEALTH_PATH,
    HOOK_PATH,
    MAX_BODY,
    port_problem,
    read_serve_config,
    read_token,
    token_path,
)
from forge_policy.serve.auth import (
    ANSWER_MAC_HEADER,
    AUTH_HEADER,
    FRESHNESS,
    answer_message,
    parse_credential,
    request_message,
)
from forge_policy.serve.warm import Warm

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TextIO

    from forge_policy.config.env import Config
    from forge_policy.telemetry.export import Exporting

IDLE_TIMEOUT = 60.0
DRAIN_SECONDS = 5.0


class Nonces:
    """The nonces of the signed requests accepted in the last freshness window: a second use is
    a replay. Entries leave once their request's time is out of the window (a request that old
    is refused anyway), so the set stays as small as the last minute's traffic."""

    def __init__(self, window: float = FRESHNESS) -> None:
        self.window = window
        self._seen: set[bytes] = set()
        self._expiry: list[tuple[float, bytes]] = []
        self._lock = threading.Lock()

    def first_use(self, nonce: bytes, stamp: float, now: float) -> bool:
        """Record ``nonce`` (of a request made at ``stamp``); False when it was seen already.

        >>> nonces = Nonces()
        >>> nonces.first_use(b"n", 100, 100), nonces.first_use(b"n", 100, 101)
        (True, False)
        """
        with self._lock:
            while self._expiry and self._expiry[0][0] < now:
                self._seen.discard(heapq.heappop(self._expiry)[1])
            if nonce in self._seen:
                return False
            self._seen.add(nonce)
            heapq.heappush(self._expiry, (stamp + self.window, nonce))
            return True

    def __len__(self) -> int:
        return len(self._seen)


class App:
    """The server's state: the token, the nonces seen and the shared warm handler
    (:class:`Warm`)."""

    def __init__(
        self,
        config: Config,
        token: str,
        *,
        max_body: int = MAX_BODY,
        telemetry: Exporting | None = None,
    ) -> None:
        self.config = config
        self.telemetry = telemetry
        self.key = token.encode("utf-8")
        self.token = f"Bearer {token}".encode()
        self.max_body = max_body
        self.nonces = Nonces()
        self.warm = Warm(config, observers=() if telemetry is None else (telemetry.recorder,))

    @property
    def error(self) -> str:
        """Why the catalog does not load (empty when it does)."""
        return self.warm.error

    @property
    def requests(self) -> int:
        """Hook requests answered so far."""
        return self.warm.requests

    def authorized(self, header: str | None) -> bool:
        """Whether an ``Authorization`` header carries the token (constant-time compare)."""
        return header is not None and hmac.compare_digest(header.strip().encode(), self.token)

    def verify(
        self, credential: tuple[int, bytes, bytes], method: str, target: str, body: bytes
    ) -> str:
        """Why a signed request is refused, or ``""`` when its MAC, time and nonce are good.

        The MAC is checked first, so that nobody without the key can use up a nonce.
        """
        stamp, nonce, mac = credential
        expected = hmac.digest(
            self.key, request_message(method, target, stamp, nonce, body), "sha256"
        )
        if not hmac.compare_digest(mac, expected):
            return "wrong request MAC"
        now = time.time()
        if abs(now - stamp) > FRESHNESS:
            return f"request time {stamp} is more than {FRESHNESS} s from the server's clock"
        if not self.nonces.first_use(nonce, stamp, now):
            return "nonce already used (a replayed request)"
        return ""

    def sign(self, credential: tuple[int, bytes, bytes], status: int, body: bytes) -> str:
        """The ``X-Forge-Answer-MAC`` of an answer to a signed request."""
        return hmac.digest(self.key, answer_message(credential[2], status, body), "sha256").hex()

    def answer(self, body: bytes) -> bytes:
        """The hook's answer to one payload, from the warm evaluator (reloaded if stale)."""
        text, log, _ = self.warm.answer(body)
        for line in log.splitlines():
            sys.stderr.write(line + "\n")
        return text.encode("utf-8")

    def health(self) -> dict[str, Any]:
        """What ``GET /health`` reports."""
        return self.warm.health()


class Handler(BaseHTTPRequestHandler):
    """One connection: keep-alive HTTP/1.1, every answer with a ``Content-Length``."""

    protocol_version = "HTTP/1.1"
    server_version = "forge-policy"
    timeout = IDLE_TIMEOUT
    # headers and body go out as two writes: without TCP_NODELAY the second waits for the
    # client's delayed ACK (~40 ms on Linux)
    disable_nagle_algorithm = True
    server: Server

    def version_string(self) -> str:
        """The ``Server`` header."""
        return self.server_version

    def do_POST(self) -> None:
        """POST /hook."""
        self._serve("POST")

    def do_GET(self) -> None:
        """GET /health."""
        self._serve("GET")

    def __getattr__(self, name: str) -> Callable[[], None]:
        if name.startswith("do_"):  # any other method: 405 (or 401/404 first)
            return lambda: self._serve(name[3:])
        raise AttributeError(name)

    def _serve(self, method: str) -> None:
        started = time.perf_counter()
        app = self.server.app
        path = self.path.split("?", 1)[0]
        credential = None
        signed = self.headers.get(AUTH_HEADER)
        if signed is not None:
            credential = parse_credential(signed)
            if credential is None:
                self._error(401, f"malformed {AUTH_HEADER} header")
                return
        elif not app.authorized(self.headers.get("Authorization")):
            self._error(401, "missing or wrong bearer token", {"WWW-Authenticate": "Bearer"})
            return
        if path not in (HOOK_PATH, HEALTH_PATH):
            self._error(404, f"no such path {path!r}: POST {HOOK_PATH} or GET {HEALTH_PATH}")
            return
        allowed = "POST" if path == HOOK_PATH else "GET"
        if method != allowed:
            self._error(405, f"{path} takes {allowed}", {"Allow": allowed})
            return
        body = b""
        if path == HOOK_PATH:
            length = self.headers.get("Content-Length")
            if length is None or self.headers.get("Transfer-Encoding"):
                self._error(411, "a Content-Length is required")
                return
            if not (length.strip().isascii() and length.strip().isdigit()):
                self._error(400, "bad Content-Length")
                return
            if int(length) > app.max_body:
                self._error(413, f"body over {app.max_body} bytes")
                return
            body = self.rfile.read(int(length))
            if len(body) != int(length):  # the client went away mid-body: nothing to answer
                self.close_connection = True
                return
        if credential is not None:
            problem = app.verify(credential, method, self.path, body)
            if problem:
                self._error(401, problem)
                return
        if path == HEALTH_PATH:
            answer = json.dumps(app.health()).encode()
        else:
            with self.server.counting():
                answer = app.answer(body)
        headers = {ANSWER_MAC_HEADER: app.sign(credential, 200, answer)} if credential else None
        self._send(200, answer, headers)
        if path == HOOK_PATH and app.telemetry is not None:  # the answer is out: its latency
            app.telemetry.answered(time.perf_counter() - started)

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        """An error answer; the connection is closed since a body may be left unread."""
        self.close_connection = True
        self._send(
            status,
            json.dumps({"error": message}).encode(),
            {**(headers or {}), "Connection": "close"},
        )

    def log_message(self, format: str, *args: Any) -> None:
        """Request log on stderr, only with ``--verbose``."""
        if self.server.verbose:
            sys.stderr.write(f"forge-policy serve: {self.address_string()} {format % args}\n")


class Server(ThreadingHTTPServer):
    """A threading HTTP server bound to loopback, holding the :class:`App`."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int, app: App, *, verbose: bool = False) -> None:
        self.app = app
        self.verbose = verbose
        self._busy = 0
        self._busy_lock = threading.Lock()
        super().__init__((DEFAULT_HOST, port), Handler)

    def counting(self) -> _Busy:
        """A context counting a request in flight (so shutdown can wait for it)."""
        return _Busy(self)

    def drain(self, timeout: float = DRAIN_SECONDS) -> None:
        """Wait up to ``timeout`` seconds for the requests in flight to finish."""
        deadline = time.monotonic() + timeout
        while self._busy and time.monotonic() < deadline:
            time.sleep(0.01)


class _Busy:
    def __init__(self, server: Server) -> None:
        self.server = server

    def __enter__(self) -> None:
        with self.server._busy_lock:
            self.server._busy += 1

    def __exit__(self, *exc: object) -> None:
        with self.server._busy_lock:
            self.server._busy -= 1


def serve_forever(
    config: Config,
    *,
    port: int | None = None,
    max_body: int = MAX_BODY,
    verbose: bool = False,
    err: TextIO | None = None,
) -> int:
    """Run the server until SIGTERM or SIGINT; return 0 after a clean shutdown.

    ``port`` defaults to the one ``init --serve`` recorded, else :data:`DEFAULT_PORT`; 0 picks a
    free port. The first line on ``err`` says where it listens (tests wait for it).
    """
    from forge_policy.errors import Refused

    err = err if err is not None else sys.stderr
    token = read_token(config.root)
    if token is None:
        raise Refused(f"no serve token at {token_path(config.root)}: run forge-policy init --serve")
    if port is None:
        recorded = (read_serve_config(config.root) or {}).get("port")
        port = recorded if isinstance(recorded, int) else DEFAULT_PORT
    problem = port_problem(port, any_port=True)
    if problem is not None:  # bind() would raise OverflowError, not OSError
        raise Refused(f"cannot listen on {DEFAULT_HOST}: {problem}")
    telemetry = _telemetry(config, err)
    app = App(config, token, max_body=max_body, telemetry=telemetry)
    try:
        server = Server(port, app, verbose=verbose)
    except OSError as exc:
        raise Refused(f"cannot listen on {DEFAULT_HOST}:{port}: {exc.strerror or exc}") from None

    def stop(signum: int, frame: object) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    bound = server.server_port
    state = f"catalog {app.health()['catalog']}" + (f"; {app.error}" if app.error else "")
    err.write(
        f"forge-policy serve: listening on http://{DEFAULT_HOST}:{bound}{HOOK_PATH} "
        f"(pid {os.getpid()}, {state})\n"
    )
    err.flush()
    try:
        server.serve_forever(poll_interval=0.2)
        server.drain()
    finally:
        server.server_close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    err.write(f"forge-policy serve: stopped after {app.requests} requests\n")
    err.flush()
    if telemetry is not None:
        from forge_policy.telemetry import STOP_FLUSH_SECONDS

        telemetry.close(STOP_FLUSH_SECONDS)
    return 0


def _telemetry(config: Config, err: TextIO) -> Exporting | None:
    """The server's OpenTelemetry export (``FORGE_OTEL``), or None: off, or it cannot start
    (said on ``err``; the server answers the same without it)."""
    from forge_policy import telemetry

    environ = config.environ
    if telemetry.problem(environ):
        err.write(f"forge-policy serve: {telemetry.problem(environ)}\n")
    try:
        return telemetry.start(environ, "serve")
    except Exception as exc:  # the extra missing, a bad OTEL_* value: never a reason not to answer
        err.write(f"forge-policy serve: telemetry off: {type(exc).__name__}: {exc}\n")
        return None
