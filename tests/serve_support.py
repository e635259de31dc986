"""A real ``forge-policy serve`` in a subprocess, and a real impostor on a loopback port."""

from __future__ import annotations

import http.client
import re
import signal
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Callable

from tests.cli_support import FORGE, Project

#: What an impostor does with one request: the raw request in, the connection to answer on.
Behaviour = Callable[[socket.socket, bytes], None]


def free_port() -> int:
    """A TCP port nobody listens on (now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Server:
    """A running ``forge-policy serve``; :meth:`stop` sends SIGTERM and returns the exit code."""

    def __init__(self, project: Project, *args: str) -> None:
        self.process = subprocess.Popen(
            [str(FORGE), "serve", *args],
            cwd=project.path,
            env=project.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        stderr = self.process.stderr
        assert stderr is not None
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.append(stderr.readline()))
        reader.start()
        reader.join(timeout=10)
        found = re.search(r"listening on http://127\.0\.0\.1:(\d+)/hook", "".join(lines))
        assert found, f"serve did not start: {lines}"
        self.port = int(found.group(1))
        self.token = (project.root / "runtime" / "serve.token").read_text().strip()

    def request(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        token: str | None = "",
        headers: dict[str, str] | None = None,
    ) -> tuple[int, bytes]:
        """One request with ``Authorization: Bearer`` (the server's token unless ``token`` is
        given; none with ``token=None``) plus ``headers``."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        sent = {"Authorization": f"Bearer {token or self.token}"} if token is not None else {}
        conn.request(method, path, body=body, headers={**sent, **(headers or {})})
        response = conn.getresponse()
        result = response.status, response.read()
        conn.close()
        return result

    def stop(self) -> tuple[int, str]:
        self.process.send_signal(signal.SIGTERM)
        _, err = self.process.communicate(timeout=10)
        return self.process.returncode, err


def read_request(conn: socket.socket) -> bytes:
    """One whole HTTP request (headers, then ``Content-Length`` bytes of body) as sent."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head = data.split(b"\r\n\r\n", 1)[0]
    found = re.search(rb"(?im)^content-length:\s*(\d+)\s*$", head)
    total = len(head) + 4 + (int(found.group(1)) if found else 0)
    while len(data) < total:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


class Impostor:
    """Something else listening on the port ``hook --via-serve`` asks: a thread accepting
    connections, reading each whole request (recorded in :attr:`received`) and handing it to
    the current :attr:`behaviour`."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.received: list[bytes] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.05)  # so that close() stops the accept loop at once
        self.port: int = self.sock.getsockname()[1]
        self._stopping = False
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stopping:
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(30)
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        try:
            with conn:
                request = read_request(conn)
                self.received.append(request)
                self.behaviour(conn, request)
        except OSError:
            pass  # the client gave up (the slow behaviours)

    def close(self) -> None:
        self._stopping = True
        self._thread.join(timeout=5)
        self.sock.close()


def answer(body: bytes, *headers: str, status: str = "200 OK") -> bytes:
    """An HTTP/1.1 response with a correct ``Content-Length`` unless ``headers`` replace it."""
    lines = [f"HTTP/1.1 {status}", *headers]
    if not any(h.lower().startswith("content-length:") for h in headers):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def send(data: bytes) -> Behaviour:
    """Answer every request with ``data``, then close."""
    return lambda conn, request: conn.sendall(data)


def reset(conn: socket.socket, request: bytes) -> None:
    """Close with a TCP reset (SO_LINGER 0) instead of answering."""
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def trickle(conn: socket.socket, request: bytes) -> None:
    """A valid-looking answer one byte at a time, every 0.2 s: each read is quick, the whole
    answer takes far longer than the client's deadline."""
    for byte in answer(b" " * 60):
        conn.sendall(bytes([byte]))
        time.sleep(0.2)


def relay(port: int, record: list[bytes]) -> Behaviour:
    """Forward the request to the real server on ``port``; record and pass back its answer."""

    def behaviour(conn: socket.socket, request: bytes) -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as upstream:
            upstream.sendall(request)
            data = b""
            while chunk := upstream.recv(65536):
                data += chunk
        record.append(data)
        conn.sendall(data)

    return behaviour


def point_at(project: Project, port: int) -> None:
    """Make the project's ``serve.json`` name ``port`` (as ``init --serve --port`` would)."""
    project.run("init", "--serve", "--port", str(port))


def token_of(project: Project) -> str:
    return (project.root / "runtime" / "serve.token").read_text().strip()
