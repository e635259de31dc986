"""The JSON Schema of behavior files (schema v1), shipped beside this module for editors.

``behavior.schema.json`` (draft-07, what yaml-language-server reads) describes every key of a
``behavior.yaml`` with its type, vocabulary and cross-field rules (a ``check_flag`` trigger
names its flag, ``on_present`` and ``on_absent``; an ``in`` condition's value is a list…).
It is stricter than the loader in one way: it flags every key the engine does not read, which
the loader accepts with a warning. ``forge-policy schema`` prints it; ``init --copy-catalog``
copies it into the catalog folder and points each behavior file at it with a
``# yaml-language-server: $schema=…`` first line (:func:`add_modeline`).

>>> schema()["properties"]["schema_version"]["const"]
'1'
>>> modeline("../behavior.schema.json")
'# yaml-language-server: $schema=../behavior.schema.json'
"""

from __future__ import annotations

import json
import os
from typing import Any

#: the file name, in the package and in a copied catalog folder
SCHEMA_NAME = "behavior.schema.json"
SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), SCHEMA_NAME)
_PREFIX = "# yaml-language-server: $schema="


def schema_text() -> str:
    """The schema as shipped (JSON text)."""
    with open(SCHEMA_FILE, encoding="utf-8") as handle:
        return handle.read()


def schema() -> dict[str, Any]:
    """The schema as a mapping."""
    value: dict[str, Any] = json.loads(schema_text())
    return value


def modeline(url: str) -> str:
    """The comment that tells yaml-language-server which schema a YAML file follows
    (``url``: a URL, or a path relative to the YAML file)."""
    return f"{_PREFIX}{url}"


def add_modeline(path: str | os.PathLike[str], url: str) -> bool:
    """Make :func:`modeline` the first line of the YAML file at ``path`` (replacing an older
    one); return whether the file changed. Comments are YAML's: the document is unchanged.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp(), "behavior.yaml")
    >>> _ = path.write_text("id: x\\n")
    >>> add_modeline(path, "s.json"), add_modeline(path, "s.json"), path.read_text()
    (True, False, '# yaml-language-server: $schema=s.json\\nid: x\\n')
    """
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    first, _, rest = text.partition("\n")
    body = rest if first.startswith(_PREFIX) else text
    updated = f"{modeline(url)}\n{body}"
    if updated == text:
        return False
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(updated)
    return True
