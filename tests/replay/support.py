"""Paths of the transcript fixtures and a stricter copy of the built-in catalog."""

from __future__ import annotations

import shutil
from pathlib import Path

from forge_policy.catalog.loader import BUILTIN_DIR

HERE = Path(__file__).resolve().parent
UPLOAD = HERE / "upload-session.jsonl"
RENAME = HERE / "rename-session.jsonl"
UPLOAD_SESSION = "3b7d6a52-1c0e-4f8a-9d2b-5e6f7a8b9c0d"
RENAME_SESSION = "c4f0e8d1-7a2b-4c3d-9e5f-0a1b2c3d4e5f"

_LADDER = """\
      - after: 3
        level: warning
      - after: 5
        level: soft_block
"""


def strict_catalog(folder: Path) -> Path:
    """The built-in catalog with search-first blocking from its second violation (not fifth)."""
    shutil.copytree(BUILTIN_DIR, folder)
    path = folder / "search-first" / "behavior.yaml"
    text = path.read_text(encoding="utf-8")
    assert _LADDER in text, "the built-in search-first ladder changed: update this helper"
    path.write_text(text.replace(_LADDER, "      - after: 2\n        level: soft_block\n"))
    return folder
