"""The public surface of forge_policy.audit, and that importing it stays cheap."""

from __future__ import annotations

import subprocess
import sys

import forge_policy.audit as audit


def test_all_names_resolve() -> None:
    assert audit.__all__ == sorted(audit.__all__)
    for name in audit.__all__:
        assert getattr(audit, name) is not None
    assert set(audit.__all__) <= set(dir(audit))


def test_import_pulls_in_no_backend() -> None:
    code = (
        "import sys, forge_policy.audit, forge_policy.audit.memory\n"
        "print(sorted(m for m in ('sqlite3', 'portalocker') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
