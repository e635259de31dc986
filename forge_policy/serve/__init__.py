"""``forge-policy serve``: the evaluator kept warm on loopback, and ``hook --via-serve``, its
client that trusts no answer it cannot authenticate.

Wire protocol (Claude Code ``type: "http"`` hooks, harness-protocols §1.2/§1.4)::

    POST /hook     body: the hook input JSON (what a command hook reads on stdin)
                   200 + the JSON a command hook prints, or 200 + empty body (nothing to say)
    GET  /health   200 {"ok": true, "pid": …, "root": …, "behaviors": …}

The key is the per-install secret that ``forge-policy init --serve`` writes to
``<FORGE_ROOT>/runtime/serve.token`` (mode 0600). A request carries one of two credentials,
otherwise it gets 401:

- ``X-Forge-Auth`` (``hook --via-serve``, ``status``): a fresh nonce and an HMAC-SHA256 over it
  and the body; the server's ``200`` answer carries ``X-Forge-Answer-MAC``, an HMAC over the
  request's MAC and the answer's body (:mod:`forge_policy.serve.auth`). The token never crosses
  the wire, and a replayed request (same nonce, or older than 30 s) is refused;
- ``Authorization: Bearer <token>`` (Claude Code http hooks, which can send nothing else):
  answers are not signed, and the token goes to whatever listens on the port.

Other methods get 405, other paths 404, bodies over ``max_body`` 413 and bodies without
``Content-Length`` 411. The server binds to 127.0.0.1 only, keeps connections alive, reloads
the catalog when one of its files changes (a few ``stat`` calls per request) and exits 0 on
SIGTERM or SIGINT after finishing the requests in flight.

Claude Code treats an http hook that cannot connect as a non-blocking error: while the server is
down every call goes through. The safe form is therefore a command hook that asks the server and
evaluates in-process when it does not answer (``forge-policy hook --via-serve``, :func:`ask`);
``init --serve`` writes that form unless ``--http-only`` is given. That client fails closed:
it uses an answer only when it is a complete ``200`` (status line, exactly one
``Content-Length`` that its body matches, no ``Transfer-Encoding``), within the deadline
(:data:`ANSWER_TIMEOUT`, for the whole answer, not per read), signed for this very request, and
a hook answer (:func:`check_answer`). Whatever else comes back — no connection, a reset, another
status, a missing or wrong signature, a recorded answer to an earlier request, a short body,
non-JSON, JSON that is no hook answer, a trickle past the deadline — the event is evaluated
in-process with the full engine, exactly as ``forge-policy hook`` would, with one line on stderr
saying why. An impostor on the port (a process that took it while the server was down) can
therefore cost time, never a decision, and never learns the token.

This module is imported by the hook's ``--via-serve`` path, so its top level imports nothing
heavy (:mod:`forge_policy.serve.auth` avoids even :mod:`hmac`); the server part lives in
:mod:`forge_policy.serve.server`.
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
_DIGITS = frozenset("0123456789")


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


def port_problem(port: object, *, any_port: bool = False) -> str | None:
    """Why ``port`` is not a TCP port to listen on (0, "any free port", only with ``any_port``).

    >>> port_problem(70000)
    'port 70000 is out of range: expected 1-65535'
    >>> port_problem(0, any_port=True) is None
    True
    """
    low = 0 if any_port else 1
    if not isinstance(port, int) or isinstance(port, bool):
        return f"port {port!r} is not a whole number"
    if not low <= port <= 65535:
        return f"port {port} is out of range: expected {low}-65535"
    return None


def read_serve_config(root: str | os.PathLike[str]) -> dict[str, object] | None:
    """``<root>/runtime/serve.json`` (host, port, mode) as written by ``init --serve``."""
    try:
        with open(_runtime(root, SERVE_FILE), encoding="utf-8") as file:
            config = json.load(file)
    except (OSError, ValueError, RecursionError):
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
    if not isinstance(host, str):
        raise ServeUnavailable("serve.json: host must be a string")
    problem = port_problem(port)
    if problem is not None or not isinstance(port, int):
        raise ServeUnavailable(f"serve.json: {problem}")
    return host, port, token


#: The largest answer a client reads (a hook answer is a few kilobytes).
MAX_ANSWER = MAX_BODY + 65536
#: The top-level keys of a hook answer, and the type of each (what
#: :func:`forge_policy.render.claude_code.render` and the hook's failure answers produce).
ANSWER_KEYS = {
    "hookSpecificOutput": dict,
    "systemMessage": str,
    "decision": str,
    "reason": str,
    "continue": bool,
    "stopReason": str,
    "override_allowed": bool,
}


def _exchange(
    host: str, port: int, request: bytes, timeout: float
) -> tuple[int, dict[str, str], bytes]:
    """Send one request (``Connection: close``) and read the whole answer before the deadline:
    ``(status, headers with lower-case names, body)``.

    Raises :class:`OSError` for the connection and :class:`ServeUnavailable` for an answer that
    is not exactly one HTTP/1.x response with a ``Content-Length`` its body matches.
    """
    import socket
    import time

    deadline = time.monotonic() + timeout
    chunks: list[bytes] = []
    size = 0
    with socket.create_connection((host, port), timeout=min(CONNECT_TIMEOUT, timeout)) as sock:
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        sock.sendall(request)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:  # a trickle of bytes must not outlast the deadline
                raise TimeoutError
            sock.settimeout(left)
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_ANSWER:
                raise ServeUnavailable(f"the answer is over {MAX_ANSWER} bytes")
    return _parse_answer(b"".join(chunks))


def _parse_answer(data: bytes) -> tuple[int, dict[str, str], bytes]:
    """``(status, headers, body)`` of one complete HTTP/1.x response; :class:`ServeUnavailable`
    for anything else.

    >>> _parse_answer(b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\n{}")
    (200, {'content-length': '2'}, b'{}')
    >>> _parse_answer(b"HTTP/1.1 200 OK\\r\\nContent-Length: 3\\r\\n\\r\\n{}")
    Traceback (most recent call last):
    forge_policy.errors.ServeUnavailable: the answer was cut short (2 of 3 bytes)
    """
    head, found, body = data.partition(b"\r\n\r\n")
    if not found:
        raise ServeUnavailable("the answer ended inside its headers" if data else "empty answer")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if (
        len(parts) < 2
        or parts[0] not in ("HTTP/1.0", "HTTP/1.1")
        or len(parts[1]) != 3
        or not set(parts[1]) <= _DIGITS
    ):
        raise ServeUnavailable("the answer is not HTTP")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        name = name.strip().lower()
        if not colon or not name:
            raise ServeUnavailable("the answer has a malformed header line")
        if name in headers:
            raise ServeUnavailable(f"the answer repeats its {name} header")
        headers[name] = value.strip()
    if "transfer-encoding" in headers:
        raise ServeUnavailable("the answer has a Transfer-Encoding (a Content-Length is needed)")
    length = headers.get("content-length")
    if length is None:
        raise ServeUnavailable("the answer has no Content-Length")
    if not (0 < len(length) <= 10 and set(length) <= _DIGITS):
        raise ServeUnavailable(f"the answer has a bad Content-Length {length[:20]!r}")
    if int(length) > len(body):
        raise ServeUnavailable(f"the answer was cut short ({len(body)} of {length} bytes)")
    if int(length) < len(body):
        raise ServeUnavailable(f"the answer is longer than its Content-Length {length}")
    return int(parts[1]), headers, body


def _request(
    method: str, target: str, host: str, port: int, key: bytes, body: bytes
) -> tuple[bytes, bytes]:
    """The request bytes and its MAC (:func:`forge_policy.serve.auth.sign`): the token itself is
    never sent."""
    from forge_policy.serve.auth import AUTH_HEADER, sign

    credential, mac = sign(key, method, target, body)
    head = (
        f"{method} {target} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"{AUTH_HEADER}: {credential}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("latin-1") + body, mac


def _reason(exc: OSError) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    return (exc.strerror or str(exc) or type(exc).__name__).lower()


def _authentic(
    method: str, target: str, root: str | os.PathLike[str], body: bytes, timeout: float
) -> tuple[str, bytes]:
    """One signed exchange: ``(where, the answer's body)`` once the answer is a 200 whose MAC
    proves it comes from a holder of the token and answers this very request."""
    from forge_policy.serve.auth import ANSWER_MAC_HEADER, answer_mac_ok

    host, port, token = _address(root)
    where = f"{host}:{port}"
    key = token.encode("utf-8")
    request, mac = _request(method, target, host, port, key, body)
    try:
        status, headers, answer = _exchange(host, port, request, timeout)
    except OSError as exc:
        raise ServeUnavailable(f"no answer from {where} ({_reason(exc)})") from None
    except ServeUnavailable as exc:
        raise ServeUnavailable(f"{where}: {exc}") from None
    if status != 200:
        raise ServeUnavailable(f"{where} answered HTTP {status}")
    signature = headers.get(ANSWER_MAC_HEADER.lower())
    if signature is None:
        raise ServeUnavailable(f"{where}: the answer is not signed (is it forge-policy serve?)")
    if not answer_mac_ok(key, mac, status, answer, signature):
        raise ServeUnavailable(f"{where}: the answer's signature is wrong (not our server)")
    return where, answer


def check_answer(body: bytes) -> str:
    """The text of a hook answer: empty (nothing to say) or one JSON object of the keys and
    types a hook answer has (:data:`ANSWER_KEYS`); :class:`ServeUnavailable` otherwise.

    >>> check_answer(b'{"systemMessage": "hi"}')
    '{"systemMessage": "hi"}'
    >>> check_answer(b'{"permissionDecision": "allow"}')
    Traceback (most recent call last):
    forge_policy.errors.ServeUnavailable: not a hook answer: unexpected key 'permissionDecision'
    """
    try:
        text = body.decode("utf-8").strip()
        value = json.loads(text) if text else None
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ServeUnavailable("not a hook answer: not UTF-8 JSON") from None
    if value is None and not text:
        return ""
    if not isinstance(value, dict) or not value:
        raise ServeUnavailable("not a hook answer: not a non-empty JSON object")
    for name, item in value.items():
        kind = ANSWER_KEYS.get(name)
        if kind is None:
            raise ServeUnavailable(f"not a hook answer: unexpected key {name[:40]!r}")
        if not isinstance(item, kind):
            raise ServeUnavailable(f"not a hook answer: {name} is not a {kind.__name__}")
    specific = value.get("hookSpecificOutput")
    if specific is not None and not isinstance(specific.get("hookEventName"), str):
        raise ServeUnavailable("not a hook answer: hookSpecificOutput without hookEventName")
    return text


def ask(payload: bytes, root: str | os.PathLike[str], *, timeout: float = ANSWER_TIMEOUT) -> str:
    """Ask the running server to decide one hook payload; return its answer (what a command
    hook prints: JSON, or empty for nothing to say).

    Raises :class:`ServeUnavailable` (with the reason) unless serve is configured and the
    answer, within ``timeout`` seconds, is a complete ``200`` signed for this request
    (:mod:`forge_policy.serve.auth`) whose body is a hook answer (:func:`check_answer`): no
    connection, a reset, a status, a missing or wrong signature, a bad ``Content-Length``, a
    short body, non-JSON. The caller then evaluates in-process. Uses a raw socket:
    :mod:`http.client` costs more to import than a whole evaluation.
    """
    where, body = _authentic("POST", HOOK_PATH, root, payload, timeout)
    try:
        return check_answer(body)
    except ServeUnavailable as exc:
        raise ServeUnavailable(f"{where}: {exc}") from None


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
        host, port, _ = _address(root)
    except ServeUnavailable as exc:
        result["detail"] = str(exc)
        return result
    result["url"] = f"http://{host}:{port}{HOOK_PATH}"
    try:
        _, body = _authentic("GET", HEALTH_PATH, root, b"", timeout)
    except ServeUnavailable as exc:
        result["detail"] = str(exc)
        return result
    try:
        health = json.loads(body)
    except ValueError:
        health = {}
    result["answering"] = True
    result["detail"] = f"answering (pid {health.get('pid') if isinstance(health, dict) else '?'})"
    return result
