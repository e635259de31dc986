"""Reading and writing compiled catalog cache files in tests: the JSON body under the header line,
written back sealed with the folder's real key (to reach the checks behind the seal) or not."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from forge_policy.catalog import cache as cache_module


def body(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON body of the cache file at ``path``."""
    data = Path(path).read_bytes()
    header, _, text = data.partition(b"\n")
    assert header.startswith(cache_module.MAGIC + b" "), header
    doc: dict[str, Any] = json.loads(text)
    return doc


def write(path: str | os.PathLike[str], doc: object, *, sealed: bool = True) -> None:
    """Write ``doc`` as the cache at ``path``: sealed with the folder's key (as forge-policy
    would), or as the bare JSON an agent's editor tool would write."""
    write_bytes(path, json.dumps(doc).encode("utf-8"), sealed=sealed)


def write_bytes(path: str | os.PathLike[str], text: bytes, *, sealed: bool = True) -> None:
    """Write ``text`` as the body of the cache at ``path`` (see :func:`write`)."""
    if sealed:
        key = Path(path).with_name(cache_module.KEY_FILE).read_bytes()
        mac = cache_module.seal(key, text).encode()
        text = b"%s %d %s\n" % (cache_module.MAGIC, cache_module.FORMAT, mac) + text
    Path(path).write_bytes(text)


def edit(
    path: str | os.PathLike[str], field: tuple[str | int, ...], value: object, **kw: Any
) -> None:
    """Set one field of the body (by its JSON path) and write it back (see :func:`write`)."""
    doc = body(path)
    node: Any = doc
    for key in field[:-1]:
        node = node[key]
    node[field[-1]] = value
    write(path, doc, **kw)
