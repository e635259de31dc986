"""Limits on the documents forge_policy reads (catalog and config YAML, hook and settings JSON).

A deeply nested document is refused with a clear error before any recursive walk can reach
Python's recursion limit: a 2 KB catalog nested 1,000 levels deep once gave a 3,000-line
traceback. The walk here is iterative.

>>> too_deep([[[1]]], 2), too_deep({"a": [1]}, 2)
(True, False)
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any

#: The deepest nesting of mappings and lists accepted in a file a person writes (a behavior
#: file needs 6).
MAX_DEPTH = 64
#: The same for a harness's JSON (an MCP tool's input may nest more; later walks recurse).
MAX_JSON_DEPTH = 128


def too_deep(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests dicts and lists more than ``limit`` levels deep."""
    # one level at a time: only containers are kept, so a flat payload costs one pass
    level: list[Any] = [value] if isinstance(value, dict | list | tuple) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below: list[Any] = []
        for node in level:
            items = node.values() if isinstance(node, dict) else node
            below.extend(item for item in items if isinstance(item, dict | list | tuple))
        level = below
    return False


#: every byte but brackets and quotes, deleted before the depth is counted
_OTHER_BYTES = bytes(b for b in range(256) if b not in b'[]{}"')
#: byte -> depth change: +1 for an opening bracket, -1 for a closing one
_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1


def json_too_deep(raw: bytes, limit: int) -> bool:
    """Whether JSON text nests more than ``limit`` levels deep, judged on the text before it is
    parsed, at C speed (a hook's payload can be megabytes: a walk of the parsed value cost
    four times its parse).

    >>> json_too_deep(b'{"a": [[1]], "b": "[[[["}', 3), json_too_deep(b"[[[[]]]]", 3)
    (False, True)
    """
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False  # the common case: too few brackets to be that deep
    # escapes first (an escaped backslash before an escaped quote); then only brackets and
    # quotes are kept, and every other piece between quotes is a string's: all of it in C
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside = b"".join(raw.translate(None, _OTHER_BYTES).split(b'"')[::2])
    return max(accumulate(map(_STEP.__getitem__, outside)), default=0) > limit
