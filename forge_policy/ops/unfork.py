"""``forge-policy config unfork``: a forked catalog turned back into an overlay (SPEC §10).

Earlier versions copied the whole built-in catalog into ``<FORGE_ROOT>/behaviors`` for a
one-line ``off``; from then on the project stopped receiving rule upgrades. :func:`plan` compares
such a fork with the built-in catalog, behavior by behavior, and sorts every difference:

- **overlay**: what a configuration layer can say — ``enabled``, ``tuning`` (from the fork's
  ``index.yaml``), the default level (``level``) and the ``escalation`` steps. These become the
  proposed ``behaviors:`` entries of ``<FORGE_ROOT>/config.yaml``.
- **text**: only wording differs (name, description, hint, message templates, suggestions,
  tests). The fork was probably made before the built-in's wording changed; after unforking the
  built-in's current text applies. Reported, never blocking.
- **own**: the rules themselves differ (triggers, conditions, scope, override, mode, bypass,
  applies_to…), or the behavior is not in the built-in catalog at all. No overlay can say that:
  these are the project's own behaviors, kept in the fork. The fork cannot be removed while it
  has any (``--apply`` refuses and names them; ``--force`` unforks anyway, and they stop
  applying: the fork moved aside still holds them).
- **missing**: a built-in behavior the fork does not list (added to the built-in catalog since
  the fork was made, or deleted from it by hand). The equivalent overlay switches it off; the
  dry run says so, so that the user can delete that entry and receive it.

:func:`apply` writes the overlay into the project layer (one key at a time, through
:mod:`forge_policy.config.layer_edit`: the file's comments and other keys kept) and moves the
fork aside to ``<FORGE_ROOT>/behaviors.forked-<date>`` (never deleted); from then on the project
uses the built-in catalog under its overlay. The dry run (the default) writes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from forge_policy.errors import Refused

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.config.env import Config

#: spec keys a layer can set (``enabled`` and ``tuning`` come from the index entry too)
OVERLAY_KEYS = ("enabled", "default_level", "escalation")
#: spec keys that say where the behavior was read from, not what it does
IGNORED_KEYS = frozenset({"id", "source"})
#: spec keys that only change wording, never a decision
TEXT_KEYS = frozenset(
    {
        "name",
        "description",
        "category",
        "hint",
        "suggested_tool",
        "suggested_action",
        "templates",
        "tests",
        "schema_version",
    }
)


@attrs.frozen
class Finding:
    """One behavior's difference: ``kind`` is overlay, text, own or missing."""

    behavior: str
    kind: str
    detail: str
    #: the layer entry it proposes (overlay, missing), else empty
    overlay: dict[str, Any] = attrs.field(factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "behavior": self.behavior,
            "kind": self.kind,
            "detail": self.detail,
            "overlay": self.overlay or None,
        }


@attrs.frozen
class Plan:
    """What unforking would do (:func:`plan`)."""

    fork: str
    layer: str
    findings: tuple[Finding, ...]

    @property
    def overlay(self) -> dict[str, dict[str, Any]]:
        """behavior id -> its proposed layer entry."""
        return {f.behavior: f.overlay for f in self.findings if f.overlay}

    @property
    def own(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.kind == "own")

    def to_dict(self) -> dict[str, object]:
        return {
            "fork": self.fork,
            "layer": self.layer,
            "overlay": self.overlay,
            "own": [f.behavior for f in self.own],
            "findings": [f.to_dict() for f in self.findings],
        }

    def yaml(self) -> str:
        """The proposed ``behaviors:`` block, as it would be written.

        >>> Plan("f", "c", (Finding("a", "overlay", "", {"enabled": False}),)).yaml()
        'behaviors:\\n  a: {enabled: false}\\n'
        """
        if not self.overlay:
            return ""
        lines = ["behaviors:"]
        for behavior_id, entry in self.overlay.items():
            body = ", ".join(f"{key}: {_flow(value)}" for key, value in entry.items())
            lines.append(f"  {behavior_id}: {{{body}}}")
        return "\n".join(lines) + "\n"


def _flow(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    return str(value)


def fork_of(config: Config) -> str:
    """The project's forked catalog folder; :class:`Refused` when there is none."""
    if config.behaviors_dir is not None:
        raise Refused(
            f"the catalog is FORGE_BEHAVIORS_DIR ({config.behaviors_dir}): a folder chosen by the "
            "environment, not a fork of the project's; unset it to use the built-in catalog"
        )
    folder = os.path.join(config.root, "behaviors")
    if not os.path.isdir(folder):
        raise Refused(
            f"no forked catalog in {folder}: the project already uses the built-in catalog "
            "(and its config.yaml overlay); nothing to unfork"
        )
    return folder


def _read(folder: Path) -> tuple[list[tuple[str, dict[str, Any], Any]], list[str]]:
    """``(id, raw spec, index entry)`` in index order, and the ids as listed; raises
    :class:`~forge_policy.CatalogError` when the folder does not load."""
    from forge_policy.catalog.catalog import BEHAVIOR_FILE, INDEX_FILE
    from forge_policy.catalog.loader import load_catalog, read_behavior
    from forge_policy.catalog.yaml_io import plain, read_yaml

    load_catalog(folder)  # every problem at once, as validate reports them
    document, _ = read_yaml(folder / INDEX_FILE, str(folder / INDEX_FILE))
    out = []
    for item in plain(document)["behaviors"]:
        entry = item if isinstance(item, dict) else {"id": item}
        spec, _ = read_behavior(folder / entry["id"] / BEHAVIOR_FILE)
        assert spec is not None  # load_catalog checked it
        out.append((entry["id"], spec, entry))
    return out, [i for i, _, _ in out]


def plan(config: Config) -> Plan:
    """Compare the project's fork with the built-in catalog (module doc); reads only."""
    from forge_policy.catalog.loader import BUILTIN_DIR

    fork = fork_of(config)
    forked, _ = _read(Path(fork))
    builtin, builtin_ids = _read(BUILTIN_DIR)
    by_id = {behavior_id: (spec, entry) for behavior_id, spec, entry in builtin}
    findings: list[Finding] = []
    listed = set()
    for behavior_id, spec, entry in forked:
        listed.add(behavior_id)
        if behavior_id not in by_id:
            findings.append(
                Finding(behavior_id, "own", "not in the built-in catalog: your own behavior")
            )
            continue
        base, base_entry = by_id[behavior_id]
        findings.extend(_compare(behavior_id, spec, entry, base, base_entry))
    for behavior_id in builtin_ids:
        if behavior_id not in listed:
            findings.append(
                Finding(
                    behavior_id,
                    "missing",
                    "in the built-in catalog but not in your fork (new since the fork, or "
                    "removed from it): proposed off to stay equivalent; delete this entry to "
                    "receive it",
                    {"enabled": False},
                )
            )
    return Plan(fork, os.path.join(config.root, "config.yaml"), tuple(findings))


def _enabled(spec: dict[str, Any], entry: dict[str, Any]) -> bool:
    value = entry.get("enabled")
    return bool(spec.get("enabled", True) if value is None else value)


def _compare(
    behavior_id: str,
    spec: dict[str, Any],
    entry: dict[str, Any],
    base: dict[str, Any],
    base_entry: dict[str, Any],
) -> list[Finding]:
    keys = (set(spec) | set(base)) - IGNORED_KEYS
    rules = sorted(k for k in keys - TEXT_KEYS - set(OVERLAY_KEYS) if spec.get(k) != base.get(k))
    if rules:
        return [
            Finding(
                behavior_id,
                "own",
                f"its rules differ from the built-in's ({', '.join(rules)}): kept as your own "
                "behavior; no overlay can express that",
            )
        ]
    found: list[Finding] = []
    overlay: dict[str, Any] = {}
    if _enabled(spec, entry) != _enabled(base, base_entry):
        overlay["enabled"] = _enabled(spec, entry)
    if spec.get("default_level") != base.get("default_level"):
        overlay["level"] = spec.get("default_level")
    if spec.get("escalation", []) != base.get("escalation", []):
        steps = spec.get("escalation", [])
        overlay["escalation"] = [{"after": after, "level": level} for after, level in steps]
    if entry.get("tuning") != base_entry.get("tuning"):
        overlay["tuning"] = entry.get("tuning")
    if overlay:
        detail = ", ".join(f"{k} {_flow(v)}" for k, v in overlay.items())
        found.append(Finding(behavior_id, "overlay", detail, overlay))
    texts = sorted(k for k in keys & TEXT_KEYS if spec.get(k) != base.get(k))
    if texts:
        found.append(
            Finding(
                behavior_id,
                "text",
                f"wording differs ({', '.join(texts)}): the built-in's current text will apply",
            )
        )
    return found


@attrs.frozen
class Applied:
    """What :func:`apply` did."""

    layer: str
    moved_to: str
    written: tuple[str, ...]


def apply(
    config: Config, unfork: Plan, *, force: bool = False, today: str | None = None
) -> Applied:
    """Write ``unfork``'s overlay into the project layer and move the fork aside.

    :class:`Refused` (nothing written) when the fork holds behaviors of the project's own,
    unless ``force``.
    """
    from forge_policy.config.layer_edit import set_behavior_setting

    own = unfork.own
    if own and not force:
        names = ", ".join(f.behavior for f in own)
        raise Refused(
            f"the fork holds rules no overlay can express ({names}): it stays; nothing was "
            "changed. Keep the fork, or unfork anyway with --force (they stop applying; the "
            "fork moved aside keeps them)"
        )
    if today is None:
        import datetime

        today = datetime.date.today().isoformat()
    target = f"{unfork.fork}.forked-{today}"
    suffix = 1
    while os.path.exists(target):
        suffix += 1
        target = f"{unfork.fork}.forked-{today}.{suffix}"
    keys = {"level": "level", "escalation": "escalation", "enabled": "enabled", "tuning": "tuning"}
    written = []
    for behavior_id, entry in unfork.overlay.items():
        for key, value in entry.items():
            set_behavior_setting(unfork.layer, behavior_id, keys[key], _plain(value))
        written.append(behavior_id)
    os.rename(unfork.fork, target)
    return Applied(unfork.layer, target, tuple(written))


def _plain(value: Any) -> Any:
    """A value as the layer file should hold it (an escalation's steps in flow style)."""
    if isinstance(value, list):
        from forge_policy.catalog.yaml_io import flow_list

        return flow_list(value)
    return value
