"""Optional programs a test needs: a skip with a reason on a developer's machine, a failure in
CI (``tests/conftest.py`` turns a "not found on PATH" skip into one there: ``.ci/run`` installs
every service the suite uses). For an optional package use ``pytest.importorskip``, which the
same rule covers."""

from __future__ import annotations

import shutil

import pytest


def need_binary(name: str, *candidates: str) -> str:
    """The path of the first program found among ``name`` and ``candidates``, else a skip."""
    for candidate in (name, *candidates):
        found = shutil.which(candidate)
        if found:
            return found
    pytest.skip(f"{name} not found on PATH")
