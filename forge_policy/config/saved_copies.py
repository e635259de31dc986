"""Where a last-good copy lives (:mod:`forge_policy.config.last_good`): its own module (issue 28)
so that a hook call, which only stats the copy, does not load the reader and writer and build
their attrs classes."""

from __future__ import annotations

import os


def path_of(folder: str, name: str) -> str:
    """The last-good file of document ``name`` in ``folder`` (a ``runtime/`` folder)."""
    return os.path.join(folder, f"last-good-{name}.json")


def exists(folder: str, name: str) -> bool:
    """Whether a last-good file of ``name`` is there (unverified: one ``stat``)."""
    return os.path.exists(path_of(folder, name))
