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
    project's floor (SPEC §13) set to ``floor`` (``off`` by default: these tests are about
    decisions, not the floor — no harness sandbox block, no rewrite): ``init --floor own``
    writes no sandbox block, then ``floor:`` is written. None, or a ``--floor`` in
    ``init_args``: init's own choice, untouched."""
    made: list[Any] = []

    def make(client: str = "claude-code", *, floor: str | None = "off", **options: Any) -> Any:
        options.setdefault("search", forge_real_client_search)
        chosen = floor is not None and "--floor" not in options.get("init_args", ())
        if chosen:  # no harness sandbox block either (init writes none under `own`)
            options["init_args"] = (*options.get("init_args", ()), "--floor", "own")
        made.append(open_real_client(client, tmp_path / f"real-client-{len(made)}", **options))
        if chosen:  # written after init, as a user would, so init audits no floor change
            config = made[-1].project / ".forge" / "config.yaml"
            config.parent.mkdir(parents=True, exist_ok=True)
            kept = config.read_text() if config.exists() else ""
            kept = "".join(line for line in kept.splitlines(True) if not line.startswith("floor:"))
            config.write_text(f"{kept}floor: {floor}\n")
        return made[-1]

    yield make
    for project in made:
        project.close()
