"""Project tuning of a behavior's enforcement: ``tuning: strict | relaxed`` in ``index.yaml``.

An ``index.yaml`` entry may carry ``tuning`` beside ``enabled`` (``forge-policy strict ID`` and
``forge-policy relaxed ID`` write it; ``--reset`` removes it)::

    behaviors:
      - id: search-first
        enabled: true
        tuning: strict      # soft-blocks from the 3rd violation instead of the 5th

- ``strict`` halves every escalation threshold (``after`` becomes ``ceil(after / 2)``; steps that
  land on the same threshold keep the higher level): the behavior reaches its top level in about
  half as many violations. Its levels are unchanged, so a behavior that never blocks does not
  start to block.
- ``relaxed`` caps every level at ``warning``: the behavior still counts, nudges and warns but
  never blocks. A behavior marked ``bypass: never`` cannot be relaxed.

The key is named ``tuning``, not ``mode``, because ``policy.enforcement.mode`` (``enforce`` /
``shadow``) already exists in behavior files. :func:`tune` is a pure transform of a normalised
spec, applied where the loader applies the index's ``enabled``; the result still satisfies
SPEC §3.10 (strictly increasing ``after``, non-decreasing levels, none below the default).

>>> spec = {"id": "x", "default_level": "silent",
...         "escalation": [[1, "nudge"], [3, "warning"], [5, "soft_block"]]}
>>> tune(spec, "strict")["escalation"]
[[1, 'nudge'], [2, 'warning'], [3, 'soft_block']]
>>> relaxed = tune(spec, "relaxed")
>>> relaxed["escalation"], relaxed["level_cap"]
([[1, 'nudge'], [3, 'warning'], [5, 'warning']], 'warning')
"""

from __future__ import annotations

import os
from pathlib import Path

from forge_policy.catalog.catalog import INDEX_FILE
from forge_policy.levels import Level

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

TUNINGS = ("strict", "relaxed")
RELAXED_CAP = Level.WARNING


def tuning_problem(spec: Mapping[str, Any], tuning: str) -> str | None:
    """Why ``tuning`` cannot apply to this behavior, or None when it can."""
    if tuning not in TUNINGS:
        return f"unknown tuning {tuning!r}: expected one of {', '.join(TUNINGS)}"
    if tuning == "relaxed" and spec.get("bypass") == "never":
        return f"{spec.get('id')} is marked bypass: never: it cannot be relaxed"
    return None


def tune(spec: Mapping[str, Any], tuning: str | None) -> dict[str, Any]:
    """A copy of a normalised behavior spec with ``tuning`` applied (None: unchanged).

    Raises ``ValueError`` when the tuning is unknown or not allowed for this behavior.
    """
    tuned = dict(spec)
    if tuning is None:
        return tuned
    problem = tuning_problem(spec, tuning)
    if problem is not None:
        raise ValueError(problem)
    steps = [(int(after), Level.parse(level)) for after, level in spec.get("escalation", ())]
    default = Level.parse(spec["default_level"])
    if tuning == "strict":
        merged: dict[int, Level] = {}
        for after, level in steps:
            half = -(-after // 2)
            merged[half] = max(level, merged.get(half, level))
        steps = sorted(merged.items())
    else:
        default = min(default, RELAXED_CAP)
        steps = [(after, min(level, RELAXED_CAP)) for after, level in steps]
        tuned["level_cap"] = RELAXED_CAP.label
    tuned["default_level"] = default.label
    tuned["escalation"] = [[after, level.label] for after, level in steps]
    tuned["tuning"] = tuning
    return tuned


def set_tuning(root: str | os.PathLike[str], behavior_id: str, tuning: str | None) -> bool:
    """Write (or with None remove) ``tuning`` on a behavior's ``index.yaml`` entry.

    Returns whether the file changed; raises :class:`~forge_policy.CatalogError` when the id is
    not listed.
    """
    if tuning is not None and tuning not in TUNINGS:
        raise ValueError(f"unknown tuning {tuning!r}: expected one of {', '.join(TUNINGS)}")
    from forge_policy.catalog.yaml_io import edit_index_entry

    return edit_index_entry(Path(root) / INDEX_FILE, behavior_id, "tuning", tuning)
