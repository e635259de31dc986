"""The adapters' decision tests run fake shell tools in a project whose ``floor:`` is ``off``:
what they check is the engine's answer, word for word. The floor the adapters add to a shell
call (on by default: ``floor: harness`` means forge_policy's own for an SDK) has its own tests,
``test_sdk_floor.py``, which override this fixture."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def project_floor(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("forge-root")
    (root / "config.yaml").write_text("floor: off\n", encoding="utf-8")
    monkeypatch.setenv("FORGE_ROOT", str(root))
