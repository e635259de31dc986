"""The real-client tests: each coding-agent client's own program, driven by a scripted model on
127.0.0.1 (``forge_policy.testing.real_client``). The npm clients are looked for in the
project-local ``.ci/node_modules/.bin`` that ``.ci/run`` installs them into."""

from __future__ import annotations

from pathlib import Path

import pytest

NODE_BIN = Path(__file__).resolve().parents[2] / ".ci" / "node_modules" / ".bin"


@pytest.fixture
def forge_real_client_search() -> list[Path]:
    return [NODE_BIN]
