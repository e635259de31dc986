"""The dashboard's HTTP server: loopback only, read-only, behind a token, for one user.

Every request passes four gates, in this order, before anything is read:

1. *the same user*: on Linux the connecting socket's owner (:mod:`forge_policy.ui.peer`) must
   be the uid running the server, else 403 (another local user who learnt the URL still gets
   nothing); elsewhere this gate is open and the token alone guards the page;
2. *GET or HEAD*: any other method is 405: there is no endpoint that takes a body;
3. *our Host*: ``127.0.0.1:PORT`` or ``localhost:PORT`` only, else 421, so a web page that
   rebinds its own host name to 127.0.0.1 (DNS rebinding) cannot read the dashboard;
4. *the token*: 32 random bytes, printed in the URL at start (as Jupyter does), compared in
   constant time; passed once as ``?token=``, it is set as an ``HttpOnly``, ``SameSite=Strict``
   cookie and the browser is sent to the URL without it. Without it: 403.

Then ``/`` is the page, ``/data.json`` what it is drawn from and ``/count.json`` the number of
audit records (what the page's script polls); anything else is 404. Nothing is served from the
file system.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from forge_policy.ui import peer
from forge_policy.ui.data import gather
from forge_policy.ui.page import csp, render

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, TextIO

    from forge_policy.config.env import Config
    from forge_policy.engine.evaluator import Evaluator

HOST = "127.0.0.1"
PAGE, DATA, COUNT = "/", "/data.json", "/count.json"
#: The headers of every answer: never cached, never framed, never sniffed, no referrer.
SAFE_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Resource-Policy": "same-origin",
}


class App:
    """What the handlers share: the evaluator (one request at a time reads through it), the
    configuration and transcripts the page is drawn from
    (:func:`~forge_policy.ui.data.gather`), the token, and the uid allowed to connect (None:
    unchecked)."""

    def __init__(
        self,
        evaluator: Evaluator,
        config: Config | None = None,
        *,
        transcripts: Sequence[str] = (),
        token: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.evaluator = evaluator
        self.config = config
        self.transcripts = tuple(transcripts)
        self.project = config.project_dir if config is not None else ""
        self.token = token or secrets.token_urlsafe(32)
        self.clock = clock
        self.uid: int | None = os.getuid() if peer.available() and hasattr(os, "getuid") else None
        self._lock = threading.Lock()

    def data(self) -> dict[str, Any]:
        """:func:`~forge_policy.ui.data.gather` now."""
        with self._lock:
            return gather(
                self.evaluator, now=self.clock(), config=self.config, transcripts=self.transcripts
            )

    def count(self) -> dict[str, Any]:
        """What the page's script polls: how many audit records there are now (a read of the
        log, not the whole gathering)."""
        from forge_policy._time import iso

        with self._lock:
            try:
                records = sum(1 for _ in self.evaluator.audit.records())
            except Exception as exc:  # said on the page, never a crash of the server
                return {"records": None, "error": f"{type(exc).__name__}: {exc}"}
            return {"records": records, "generated_at": iso(self.clock())}

    def valid(self, token: str | None) -> bool:
        """Whether ``token`` is this server's (constant time)."""
        return token is not None and hmac.compare_digest(token.encode(), self.token.encode())


class Handler(BaseHTTPRequestHandler):
    """One request through the four gates (module docstring), then the page or its data."""

    protocol_version = "HTTP/1.1"
    server_version = "forge-policy"
    server: Server

    def version_string(self) -> str:
        """The ``Server`` header: no Python version."""
        return self.server_version

    def do_GET(self) -> None:
        """The page or its data."""
        self._serve(body=True)

    def do_HEAD(self) -> None:
        """As GET, without the body."""
        self._serve(body=False)

    def __getattr__(self, name: str) -> Callable[[], None]:
        if name.startswith("do_"):  # every other method: the same gates, then 405
            return lambda: self._serve(body=False, method=name[3:])
        raise AttributeError(name)

    def _serve(self, *, body: bool, method: str = "GET") -> None:
        app = self.server.app
        if app.uid is not None:
            uid = peer.peer_uid(self.client_address[1], self.server.server_port)
            if uid != app.uid:
                self._refuse(403, f"connection from another user (uid {uid}): refused")
                return
        if method not in ("GET", "HEAD"):
            self._refuse(405, "read-only: GET or HEAD only", {"Allow": "GET, HEAD"})
            return
        port = self.server.server_port
        if self.headers.get("Host", "") not in (f"{HOST}:{port}", f"localhost:{port}"):
            self._refuse(421, f"this server answers for {HOST}:{port} only")
            return
        url = urlsplit(self.path)
        given = parse_qs(url.query).get("token", [None])[-1]
        if given is not None and app.valid(given):
            if url.path == PAGE:  # the token leaves the address bar for a cookie
                self._send(
                    303,
                    b"",
                    "text/plain",
                    body,
                    {
                        "Location": PAGE,
                        "Set-Cookie": f"{self.server.cookie}={app.token}; Path=/; HttpOnly; "
                        "SameSite=Strict",
                    },
                )
                return
        elif not app.valid(self._cookie()):
            self._refuse(403, "missing or wrong token: open the URL forge-policy ui printed")
            return
        if url.path == PAGE:
            nonce = secrets.token_urlsafe(16)
            page = render(app.data(), nonce=nonce, project=app.project).encode("utf-8")
            self._send(
                200, page, "text/html; charset=utf-8", body, {"Content-Security-Policy": csp(nonce)}
            )
        elif url.path in (DATA, COUNT):
            found = app.data() if url.path == DATA else app.count()
            text = json.dumps(found, ensure_ascii=False, separators=(",", ":"))
            self._send(200, text.encode("utf-8"), "application/json", body)
        else:
            self._refuse(404, "no such page: /, /data.json or /count.json")

    def _cookie(self) -> str | None:
        from http.cookies import CookieError, SimpleCookie

        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(self.headers.get("Cookie", ""))
        except CookieError:
            return None
        found = jar.get(self.server.cookie)
        return found.value if found is not None else None

    def _send(
        self,
        status: int,
        payload: bytes,
        kind: str,
        body: bool,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in {**SAFE_HEADERS, **(headers or {})}.items():
            self.send_header(name, value)
        self.end_headers()
        if body:
            self.wfile.write(payload)

    def _refuse(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        """An error answer; the connection closes since a body may be left unread."""
        self.close_connection = True
        self.log_message("refused %s %s: %s", self.command, self.path.split("?")[0], message)
        extra = {"Content-Security-Policy": "default-src 'none'", "Connection": "close"}
        self._send(
            status,
            (message + "\n").encode(),
            "text/plain; charset=utf-8",
            self.command != "HEAD",
            {**extra, **(headers or {})},
        )

    def log_message(self, format: str, *args: Any) -> None:
        """Refusals only, on stderr (a page's own requests are not news)."""
        if format.startswith("refused"):
            self.server.log.write(f"forge-policy ui: {format % args}\n")
            self.server.log.flush()


class Server(ThreadingHTTPServer):
    """A threading HTTP server bound to 127.0.0.1, holding the :class:`App`."""

    daemon_threads = True

    def __init__(self, port: int, app: App, log: TextIO) -> None:
        self.app = app
        self.log = log
        super().__init__((HOST, port), Handler)
        #: cookies do not tell ports apart: two dashboards on one host keep their own
        self.cookie = f"forge_ui_{self.server_port}"

    @property
    def url(self) -> str:
        """The address to open, token included."""
        return f"http://{HOST}:{self.server_port}/?token={self.app.token}"


def run(
    evaluator: Evaluator,
    config: Config | None = None,
    *,
    transcripts: Sequence[str] = (),
    port: int = 0,
    open_browser: bool = False,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Serve the dashboard until SIGINT (Ctrl-C) or SIGTERM; return 0 after a clean stop.

    ``port`` 0 picks a free one. The first line on ``out`` is the URL (tests wait for it)."""
    from forge_policy.errors import Refused

    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    app = App(evaluator, config, transcripts=transcripts)
    try:
        server = Server(port, app, err)
    except (OSError, OverflowError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise Refused(f"cannot listen on {HOST}:{port}: {reason}") from None

    def stop(signum: int, frame: object) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    out.write(f"forge-policy ui: {server.url}\n")
    out.flush()
    if app.uid is None:
        err.write(
            "forge-policy ui: this system does not say which user opens a connection "
            "(no /proc/net/tcp): the token in the URL is the only guard, keep it to yourself\n"
        )
    err.write("forge-policy ui: read-only, on 127.0.0.1 only; Ctrl-C stops it\n")
    err.flush()
    if open_browser:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    err.write("forge-policy ui: stopped\n")
    err.flush()
    return 0
