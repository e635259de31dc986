"""Reading a Claude Code hook payload: size cap, UTF-8, one JSON object, and the fallbacks that
keep a bad payload answerable (the event name sniffed from unparseable input, a session id
derived when none is given).

>>> parse(b'{"hook_event_name": "Stop", "session_id": "s"}')["hook_event_name"]
'Stop'
>>> sniff_event(b'{"session_id": "s", "hook_event_name": "PreToolUse", "tool_inp')
'PreToolUse'
>>> parse(b'{"a": ')
Traceback (most recent call last):
...
forge_policy.errors.HookInputError: input is not JSON: Expecting value (line 1, column 7)
"""

from __future__ import annotations

import json

from forge_policy._limits import MAX_JSON_DEPTH, json_too_deep
from forge_policy.errors import HookInputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Larger input is refused (a Claude Code payload is rarely over a few hundred KiB).
MAX_INPUT = 8 * 1024 * 1024


def check_size(raw: bytes) -> None:
    """Refuse input over :data:`MAX_INPUT` bytes, and empty input."""
    if len(raw) > MAX_INPUT:
        raise HookInputError(f"input is over {MAX_INPUT // (1024 * 1024)} MiB; refused")
    if not raw.strip():
        raise HookInputError("no input: expected one JSON event on stdin")


def sniff_event(raw: bytes) -> str:
    """The event name of input that may not parse (too large, invalid), so that a refusal can
    still be addressed to the right event. Claude Code writes ``hook_event_name`` early."""
    import re

    found = re.search(rb'"hook_event_name"\s*:\s*"([A-Za-z]{1,40})"', raw[:65536])
    return found.group(1).decode("ascii") if found else ""


def parse(raw: bytes) -> object:
    """UTF-8 JSON, or :class:`HookInputError` saying in one line why not (any JSON value)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HookInputError(f"input is not UTF-8 (invalid byte at offset {exc.start})") from None
    if json_too_deep(raw, MAX_JSON_DEPTH):  # later walks (canonical identity, facts) recurse
        raise HookInputError(f"input is nested deeper than {MAX_JSON_DEPTH} levels; refused")
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HookInputError(
            f"input is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise HookInputError(
            f"input is nested deeper than {MAX_JSON_DEPTH} levels; refused"
        ) from None
    return payload


def derive_session(payload: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The payload with a stable session id derived from ``transcript_path`` (else ``cwd``), and
    the ``diagnostic`` audit record saying so; :class:`~forge_policy.EventError` when neither.

    >>> payload, record = derive_session({"transcript_path": "/t/abc.jsonl"})
    >>> payload["session_id"] == record["session_id"], record["derived_from"]
    (True, 'transcript_path')
    """
    import hashlib
    import time

    from forge_policy._time import iso

    for key in ("transcript_path", "cwd"):
        value = payload.get(key)
        if isinstance(value, str) and value:
            digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
            session_id = f"derived-{digest[:32]}"
            event_name = payload.get("hook_event_name")
            return {**payload, "session_id": session_id}, {
                "kind": "diagnostic",
                "code": "session_id_derived",
                "timestamp": iso(time.time()),
                "session_id": session_id,
                "derived_from": key,
                "event": event_name if isinstance(event_name, str) else "",
                "message": f"session_id missing; using {session_id} derived from {key}",
            }
    from forge_policy.errors import EventError

    raise EventError("event: session_id: required field missing (no transcript_path or cwd)")
