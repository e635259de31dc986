"""``forge-policy serve``: the evaluator kept warm on loopback, for Claude Code http hooks.

Wire protocol (Claude Code ``type: "http"`` hooks, harness-protocols §1.2/§1.4)::

    POST /hook     body: the hook input JSON (what a command hook reads on stdin)
                   200 + the JSON a command hook prints, or 200 + empty body (nothing to say)
    GET  /health   200 {"ok": true, "pid": …, "root": …, "behaviors": …}

Every request needs ``Authorization: Bearer <token>``, the per-install secret that
``forge-policy init --serve`` writes to ``<FORGE_ROOT>/runtime/serve.token`` (mode 0600);
otherwise 401. Other methods get 405, other paths 404, bodies over ``max_body`` 413 and bodies
without ``Content-Length`` 411. The server binds to 127.0.0.1 only, keeps connections alive,
reloads the catalog when one of its files changes (a few ``stat`` calls per request) and exits 0
on SIGTERM or SIGINT after finishing the requests in flight.

Claude Code treats an http hook that cannot connect as a non-blocking error: while the server is
down every call goes through. The safe form is therefore a command hook that asks the server and
evaluates in-process when it does not answer (``forge-policy hook --via-serve``, :func:`ask`);
``init --serve`` writes that form unless ``--http-only`` is given.

This module is imported by the hook's ``--via-serve`` path, so its top level imports nothing
heavy; the server part lives in :mod:`forge_policy._server`.
"""

from __future__ import annotations

import json
import os

from forge_policy.errors import ServeUnavailable

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8731
HOOK_PATH = "/hook"
HEALTH_PATH = "/health"
TOKEN_ENV = "FORGE_SERVE_TOKEN"
TOKEN_FILE = "serve.token"
SERVE_FILE = "serve.json"
MAX_BODY = 4 * 1024 * 1024
CONNECT_TIMEOUT = 0.5
ANSWER_TIMEOUT = 5.0


def _runtime(root: str | os.PathLike[str], name: str) -> str:
    return os.path.join(os.fspath(root), "runtime", name)


def token_path(root: str | os.PathLike[str]) -> str:
    """``<root>/runtime/serve.token``."""
    return _runtime(root, TOKEN_FILE)


def ensure_token(root: str | os.PathLike[str]) -> bool:
    """Create the secret token (32 random bytes, URL-safe, mode 0600) unless it exists.

    Returns whether it was created. An existing token is kept, so re-running ``init --serve``
    does not break a configured environment.
    """
    import secrets

    path = token_path(root)
    if os.path.exists(path):
        return False
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as file:
        file.write(secrets.token_urlsafe(32) + "\n")
    return True


def read_token(root: str | os.PathLike[str]) -> str | None:
    """The token, or None when there is none."""
    try:
        with open(token_path(root), encoding="ascii") as file:
            token = file.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return token or None


def read_serve_config(root: str | os.PathLike[str]) -> dict[str, object] | None:
    """``<root>/runtime/serve.json`` (host, port, mode) as written by ``init --serve``."""
    try:
        with open(_runtime(root, SERVE_FILE), encoding="utf-8") as file:
            config = json.load(file)
    except (OSError, ValueError):
        return None
    return config if isinstance(config, dict) else None


def write_serve_config(root: str | os.PathLike[str], *, host: str, port: int, mode: str) -> bool:
    """Record where the server listens and which hook form was installed; returns whether the
    file changed."""
    wanted = {"host": host, "port": port, "mode": mode}
    if read_serve_config(root) == wanted:
        return False
    path = _runtime(root, SERVE_FILE)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as file:
        file.write(json.dumps(wanted, indent=2) + "\n")
    return True


def _address(root: str | os.PathLike[str]) -> tuple[str, int, str]:
    config = read_serve_config(root)
    if config is None:
        raise ServeUnavailable(f"serve is not configured ({_runtime(root, SERVE_FILE)})")
    token = read_token(root)
    if token is None:
        raise ServeUnavailable(f"no serve token at {token_path(root)}")
    host, port = config.get("host", DEFAULT_HOST), config.get("port", DEFAULT_PORT)
    if not isinstance(host, str) or not isinstance(port, int) or isinstance(port, bool):
        raise ServeUnavailable("serve.json: host must be a string and port a number")
    return host, port, token


def _exchange(host: str, port: int, request: bytes, timeout: float) -> tuple[int, bytes]:
    """Send one request (``Connection: close``) and read the whole answer."""
    import socket

    chunks: list[bytes] = []
    with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT) as sock:
        sock.settimeout(timeout)
        sock.sendall(request)
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
        raise ServeUnavailable("the server's answer is not HTTP")
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and int(value.strip() or 0) != len(body):
            raise ServeUnavailable("the server's answer was cut short")
    return int(parts[1]), body


def _request(method: str, path: str, host: str, port: int, token: str, body: bytes) -> bytes:
    return (
        f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode("latin-1") + body


def _reason(exc: OSError) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    return (exc.strerror or str(exc) or type(exc).__name__).lower()


def ask(payload: bytes, root: str | os.PathLike[str], *, timeout: float = ANSWER_TIMEOUT) -> bytes:
    """Ask the running server to decide one hook payload; return its answer (what a command
    hook prints: JSON, or empty for nothing to say).

    Raises :class:`ServeUnavailable` (with the reason) when serve is not configured, does not
    accept the connection, rejects the token or does not answer 200 in ``timeout`` seconds; the
    caller then evaluates in-process. Uses a raw socket: :mod:`http.client` costs more to import
    than a whole evaluation.
    """
    host, port, token = _address(root)
    try:
        status, body = _exchange(
            host, port, _request("POST", HOOK_PATH, host, port, token, payload), timeout
        )
    except OSError as exc:
        raise ServeUnavailable(f"no answer from {host}:{port} ({_reason(exc)})") from exc
    if status != 200:
        raise ServeUnavailable(f"{host}:{port} answered HTTP {status}")
    return body


def probe(root: str | os.PathLike[str], *, timeout: float = 1.0) -> dict[str, object]:
    """Whether serve mode is configured and the server answers, for ``forge-policy status``.

    ``{"configured": bool, "mode": "via-serve" | "http" | None, "url": str | None,
    "answering": bool, "detail": str}``.

    >>> import tempfile
    >>> probe(tempfile.mkdtemp())["detail"]
    'serve mode is not configured'
    """
    config = read_serve_config(root)
    result: dict[str, object] = {
        "configured": config is not None,
        "mode": config.get("mode") if config else None,
        "url": None,
        "answering": False,
        "detail": "serve mode is not configured",
    }
    if config is None:
        return result
    try:
        host, port, token = _address(root)
    except ServeUnavailable as exc:
        result["detail"] = str(exc)
        return result
    result["url"] = f"http://{host}:{port}{HOOK_PATH}"
    request = _request("GET", HEALTH_PATH, host, port, token, b"")
    try:
        status, body = _exchange(host, port, request, timeout)
    except (OSError, ServeUnavailable) as exc:
        reason = _reason(exc) if isinstance(exc, OSError) else str(exc)
        result["detail"] = f"no answer from {host}:{port} ({reason})"
        return result
    if status != 200:
        result["detail"] = f"HTTP {status} from {result['url']}"
        return result
    try:
        health = json.loads(body)
    except ValueError:
        health = {}
    result["answering"] = True
    result["detail"] = f"answering (pid {health.get('pid') if isinstance(health, dict) else '?'})"
    return result
