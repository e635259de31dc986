"""How a ``hook --via-serve`` client and ``forge-policy serve`` authenticate each other without
the shared token ever crossing the wire.

The token (``<FORGE_ROOT>/runtime/serve.token``, 32 random bytes, mode 0600) is the HMAC-SHA256
key of both directions. For each request the client draws a fresh 16-byte nonce and sends::

    X-Forge-Auth: v1 <unix seconds> <nonce, 32 hex> <request MAC, 64 hex>

    request MAC = HMAC(token, "forge-policy serve request v1" LF method LF target LF
                              seconds LF nonce LF body)

The server recomputes it (:func:`hmac.compare_digest`), refuses a time more than
:data:`FRESHNESS` seconds from its clock and a nonce it has already accepted in that window
(401), and signs its ``200`` answer::

    X-Forge-Answer-MAC: <64 hex>

    answer MAC = HMAC(token, "forge-policy serve answer v1" LF request MAC (32 bytes)
                             status (3 digits) LF body)

The client accepts the answer only with that header and a MAC it recomputes itself; anything
else and it evaluates in-process. What this gives:

- *an impostor on the port* (a process that took the port while the server was down) cannot
  forge an answer: it lacks the key. A recorded genuine answer does not help it either, since
  the answer MAC covers the request MAC, hence this request's nonce and body;
- *a passive impostor* learns the event it was sent and one MAC over a nonce it will never see
  again: nothing reusable. The token is 256 bits, so the MAC gives no handle on it. Replayed to
  the real server, that request is refused (nonce already used, or out of the window);
- labels keep the two directions apart (a request MAC is never a valid answer MAC), and every
  field before the body has a fixed form (no LF), so no two messages share an encoding.

The event itself still goes to whatever listens (there is no encryption): the channel is
authenticated, not confidential. Claude Code's own ``type: "http"`` hooks (``init --serve
--http-only``) cannot take part: they send the token itself as ``Authorization: Bearer``, which
the server still accepts, and which an impostor in that mode receives.

This module is on the hook's ``--via-serve`` path: it uses the interpreter's ``_sha256`` and
``_operator`` directly, since importing :mod:`hmac` loads OpenSSL (``_hashlib``, ~7 ms, more than
the rest of the exchange). :func:`hmac_sha256` is RFC 2104 over SHA-256; the server computes
with :mod:`hmac`, so every exchange checks one against the other (and a test does, exhaustively).

>>> key, body = b"k" * 32, b'{"hook_event_name": "Stop"}'
>>> header, mac = sign(key, "POST", "/hook", body, stamp=1700000000, nonce=bytes(16))
>>> header[:47]
'v1 1700000000 00000000000000000000000000000000 '
>>> parse_credential(header) == (1700000000, bytes(16), mac)
True
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import sha256
    from hmac import compare_digest
else:
    try:  # OpenSSL-free SHA-256, and the constant-time compare hmac.compare_digest falls back to
        from _operator import _compare_digest as compare_digest
        from _sha256 import sha256
    except ImportError:  # an interpreter built without them
        from hashlib import sha256
        from hmac import compare_digest

AUTH_HEADER = "X-Forge-Auth"
ANSWER_MAC_HEADER = "X-Forge-Answer-MAC"
VERSION = "v1"
NONCE_BYTES = 16
#: Seconds a request's time may differ from the server's clock (same machine: only the
#: request's own latency and clock steps).
FRESHNESS = 30
REQUEST_LABEL = b"forge-policy serve request v1"
ANSWER_LABEL = b"forge-policy serve answer v1"
_BLOCK = 64
_IPAD = bytes(x ^ 0x36 for x in range(256))
_OPAD = bytes(x ^ 0x5C for x in range(256))
_DIGITS = frozenset("0123456789")
_HEX = frozenset("0123456789abcdef")


def hmac_sha256(key: bytes, message: bytes) -> bytes:
    """HMAC-SHA256 of ``message`` (RFC 2104), the bytes :func:`hmac.digest` gives.

    >>> import hmac
    >>> hmac_sha256(b"key", b"msg") == hmac.digest(b"key", b"msg", "sha256")
    True
    """
    if len(key) > _BLOCK:
        key = sha256(key).digest()
    key = key.ljust(_BLOCK, b"\0")
    inner = sha256(key.translate(_IPAD) + message).digest()
    return sha256(key.translate(_OPAD) + inner).digest()


def request_message(method: str, target: str, stamp: int, nonce: bytes, body: bytes) -> bytes:
    """What the request MAC covers (``target``: the request line's path, as sent)."""
    head = f"{method}\n{target}\n{stamp}\n{nonce.hex()}\n".encode("latin-1")
    return REQUEST_LABEL + b"\n" + head + body


def answer_message(request_mac: bytes, status: int, body: bytes) -> bytes:
    """What the answer MAC covers: the request MAC binds it to one request."""
    return ANSWER_LABEL + b"\n" + request_mac + b"%03d\n" % status + body


def sign(
    key: bytes,
    method: str,
    target: str,
    body: bytes,
    *,
    stamp: int | None = None,
    nonce: bytes | None = None,
) -> tuple[str, bytes]:
    """``(X-Forge-Auth value, request MAC)`` for one request: a fresh nonce and the current time
    unless given (tests)."""
    stamp = int(time.time()) if stamp is None else stamp
    nonce = os.urandom(NONCE_BYTES) if nonce is None else nonce
    mac = hmac_sha256(key, request_message(method, target, stamp, nonce, body))
    return f"{VERSION} {stamp} {nonce.hex()} {mac.hex()}", mac


def parse_credential(value: str) -> tuple[int, bytes, bytes] | None:
    """``(stamp, nonce, request MAC)`` of an ``X-Forge-Auth`` value, None when malformed.

    >>> parse_credential("v1 12 zz " + "0" * 64) is None
    True
    """
    parts = value.strip().split(" ")
    if len(parts) != 4 or parts[0] != VERSION:
        return None
    _, stamp, nonce, mac = parts
    if not (0 < len(stamp) <= 12 and set(stamp) <= _DIGITS):
        return None
    if len(nonce) != 2 * NONCE_BYTES or len(mac) != 64 or not set(nonce + mac) <= _HEX:
        return None
    return int(stamp), bytes.fromhex(nonce), bytes.fromhex(mac)


def answer_mac_ok(key: bytes, request_mac: bytes, status: int, body: bytes, header: str) -> bool:
    """Whether ``header`` (an ``X-Forge-Answer-MAC`` value) signs this answer to this request."""
    if len(header) != 64 or not set(header) <= _HEX:
        return False
    given = bytes.fromhex(header)
    expected = hmac_sha256(key, answer_message(request_mac, status, body))
    return compare_digest(given, expected)
