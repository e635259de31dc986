"""The real-client tests: each coding-agent client's own program, driven by a scripted model on
127.0.0.1 (``forge_policy.testing.real_client``). The npm clients are looked for in the
project-local ``.ci/node_modules/.bin`` that ``.ci/run`` installs them into."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from forge_policy.testing.plugin import open_real_client

NODE_BIN = Path(__file__).resolve().parents[2] / ".ci" / "node_modules" / ".bin"


@pytest.fixture
def forge_real_client_search() -> list[Path]:
    return [NODE_BIN]


@pytest.fixture
def forge_real_client(
    tmp_path: Path, forge_real_client_search: list[Path]
) -> Iterator[Callable[..., Any]]:
    """The plugin's factory (:func:`forge_policy.testing.plugin.forge_real_client`), with the
    project's floor (SPEC §13) chosen by ``init --floor FLOOR`` (``off`` by default: these tests
    are about decisions, not the floor — no harness sandbox block, no rewrite; every ``init`` of
    the project, a later ``--copy-catalog`` one included, keeps it). None, or a ``--floor`` in
    ``init_args``: that choice, untouched."""
    made: list[Any] = []

    def make(client: str = "claude-code", *, floor: str | None = "off", **options: Any) -> Any:
        options.setdefault("search", forge_real_client_search)
        if floor is not None and "--floor" not in options.get("init_args", ()):
            options["init_args"] = (*options.get("init_args", ()), "--floor", floor)
        made.append(open_real_client(client, tmp_path / f"real-client-{len(made)}", **options))
        return made[-1]

    yield make
    for project in made:
        project.close()
