"""The enforcement floor (SPEC §13): what the operating system holds however a command is spelled.

:mod:`forge_policy.floor.model` is its shape (plain data, built-ins only, so the launcher can read
it). Deriving it from the catalog, configuring harness sandboxes from it and enforcing it with
forge_policy's own launcher live in the sibling modules.
"""

from __future__ import annotations

from forge_policy.floor.model import FLOOR_FORMAT, Floor, FloorPath

__all__ = ["FLOOR_FORMAT", "Floor", "FloorPath"]
