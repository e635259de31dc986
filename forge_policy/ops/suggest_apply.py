"""``forge-policy suggest --apply``: one suggestion (:mod:`forge_policy.ops.suggest`) written to
the project layer (``<FORGE_ROOT>/config.yaml``, SPEC §10), only when asked.

The change is made on a copy of the layer file beside it (:mod:`forge_policy.config.
layer_edit`: round-trip, comments and every other key kept), and the layers are loaded again
with the copy in the project layer's place and applied to the catalog: a change the loader
would refuse (a lock, ``bypass: never``, a malformed entry) is refused here and the file is
not touched. Then the ``tuning`` audit record is written (naming the suggestion, the change
and its evidence), and only then the copy replaces the file. A suggestion the managed layer
locks, a note (nothing to change) and one whose behavior is ``bypass: never`` are refused.
"""

from __future__ import annotations

import os

import attrs

from forge_policy.errors import ProjectConfigError, Refused

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.catalog.catalog import Catalog
    from forge_policy.config.env import Config
    from forge_policy.config.layers import Settings
    from forge_policy.ops.suggest import Suggestion

LAYER_FILE = "config.yaml"


@attrs.frozen
class Applied:
    """What ``suggest --apply`` did (``--json`` prints :meth:`to_dict`)."""

    suggestion: Suggestion
    file: str
    changed: bool
    #: what holds now, as the hook sees it: the behavior's ladder, or the exception's origin
    effective: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "applied": self.suggestion.to_dict(),
            "file": self.file,
            "changed": self.changed,
            "effective": self.effective,
        }


def apply(config: Config, suggestion: Suggestion, *, now: float) -> Applied:
    """Write ``suggestion`` to the project layer of ``config`` (module doc); :class:`Refused`
    says why not, and then nothing was written."""
    if suggestion.change is None:
        raise Refused(f"suggestion {suggestion.number} is a note: there is nothing to apply")
    if suggestion.refused:
        raise Refused(f"suggestion {suggestion.number} is not applied: {suggestion.refused}")
    settings = config.current_settings()
    if settings is not None and settings.fallback is not None:
        raise Refused(
            f"the configuration does not load ({settings.fallback.problem}); fix it before "
            "applying a suggestion (forge-policy config shows every problem), nothing was changed"
        )
    path = os.path.join(config.root, LAYER_FILE)
    copy = os.path.join(config.root, f".{LAYER_FILE}.suggest-{os.getpid()}")
    try:
        _copy(path, copy)
        changed = _edit(copy, suggestion)
        effective = _check(config, copy, suggestion)
        if changed:
            _audit(config, suggestion, path, now)
            os.replace(copy, path)
    finally:
        if os.path.exists(copy):
            os.unlink(copy)
    return Applied(suggestion, path, changed, effective)


def _copy(path: str, copy: str) -> None:
    import shutil

    os.makedirs(os.path.dirname(copy), exist_ok=True)
    if os.path.exists(path):
        shutil.copyfile(path, copy)
        shutil.copymode(path, copy)


def _edit(copy: str, suggestion: Suggestion) -> bool:
    """Make the change on the copy; whether it changed anything."""
    import datetime

    from forge_policy.config.layer_edit import add_exception, set_behavior_setting

    change = suggestion.change or {}
    changed = False
    for rule in change.get("exceptions", ()):
        ((kind, value),) = rule["match"].items()
        until = datetime.date.fromisoformat(rule["until"])
        changed = add_exception(copy, rule["behavior"], kind, value, until, rule["reason"])
    for behavior_id, entry in change.get("behaviors", {}).items():
        for key, value in entry.items():
            written = _flow(value) if key == "escalation" else value
            changed = set_behavior_setting(copy, behavior_id, key, written) or changed
    return changed


def _flow(steps: list[dict[str, Any]]) -> Any:
    from forge_policy.catalog.yaml_io import flow_list

    return flow_list(steps)


def _check(config: Config, copy: str, suggestion: Suggestion) -> str:
    """Load the layers with ``copy`` as the project layer and apply them to the catalog; the
    setting as it then holds. :class:`Refused` (nothing written) when they do not load, or
    when the change would not hold (a lock, ``bypass: never``)."""
    from forge_policy.config.layers import merge, parse_layers, watched_files

    env = dict(config.environ or os.environ)
    watched = watched_files(config.root, env)
    watched[1] = copy  # the project layer (layers.layer_paths' order)
    try:
        layers = parse_layers(watched)
        for layer in layers:
            if layer["file"] == copy:
                layer["file"] = os.path.join(config.root, LAYER_FILE)
        settings = merge(layers, env, config.project_dir)
        from forge_policy.config.layers import overlay_catalog

        catalog, _ = overlay_catalog(_raw_catalog(config), settings)
    except ProjectConfigError as exc:
        raise Refused(f"{exc}; the change was not written") from None
    return _holds(catalog, settings, suggestion, os.path.join(config.root, LAYER_FILE))


def _raw_catalog(config: Config) -> Catalog:
    """The configured catalog with no layer applied (what the layers are applied to)."""
    from forge_policy.catalog.cache import BUILTIN_DIR, CatalogCache

    return CatalogCache(config.cache_paths()).load(config.catalog_dir or BUILTIN_DIR)


def _holds(catalog: Catalog, settings: Settings, suggestion: Suggestion, project: str) -> str:
    """What holds with the edited layers: the exception as loaded, or the behavior's ladder
    (:class:`Refused` when the change would not hold: a higher layer decides it)."""
    from forge_policy.config.layers import usable_exceptions

    change = suggestion.change or {}
    for rule in change.get("exceptions", ()):
        usable, notes = usable_exceptions(catalog, settings)
        wanted = (rule["behavior"], rule["match"])
        held = next((r for r in usable if (r.behavior, r.match) == wanted), None)
        if held is None:
            why = "; ".join(n for n in (*settings.notes, *notes) if rule["behavior"] in n)
            raise Refused(
                f"the exception for {rule['behavior']} would not apply"
                f"{': ' + why if why else ''}; the change was not written"
            )
        return f"exception {held.origin}: {held.kind}: {held.value} until {held.until}"
    behavior_id = suggestion.behavior
    behavior = catalog.get(behavior_id)
    if behavior is None:
        raise Refused(f"{behavior_id} is not in the catalog any more; the change was not written")
    entry = change.get("behaviors", {}).get(behavior_id, {})
    for key in entry:
        origin = settings.origins.get(f"behaviors.{behavior_id}.{key}", "")
        if origin and not origin.startswith(project + ":"):
            raise Refused(
                f"behaviors.{behavior_id}.{key} is decided by {origin}, a layer above the "
                "project's: writing it to the project layer would change nothing; the change "
                "was not written"
            )
    if entry.get("enabled") is False:
        if behavior.enabled:
            where = settings.origins.get(f"behaviors.{behavior_id}.enabled", "another layer")
            raise Refused(
                f"{behavior_id} would stay on ({where} decides it); the change was not written"
            )
        return f"{behavior_id}: off"
    from forge_policy.ops.suggest import ladder_text

    steps = [(s.after, s.level.label) for s in behavior.escalation]
    now_text = ladder_text(behavior.default_level.label, steps)
    proposed = suggestion.evidence.get("ladder_proposed")
    if proposed and proposed != now_text:  # a tuning: strict|relaxed of a layer applies on top
        tuning = settings.origins.get(f"behaviors.{behavior_id}.tuning", "")
        why = f"the tuning set at {tuning} applies too" if tuning else "another layer applies too"
        return f"{behavior_id}: {now_text} (not {proposed}: {why})"
    return f"{behavior_id}: {now_text}"


def _audit(config: Config, suggestion: Suggestion, path: str, now: float) -> None:
    from forge_policy._time import iso
    from forge_policy.audit import records
    from forge_policy.audit.base import write
    from forge_policy.ops.suggest import jsonable

    record = records.Tuning(
        timestamp=iso(now),
        behavior_id=suggestion.behavior,
        suggestion=suggestion.key,
        number=suggestion.number,
        action=suggestion.kind,
        title=suggestion.title,
        change=jsonable(suggestion.change),
        file=path,
        evidence=jsonable(suggestion.evidence),
    )
    write(config.open_audit(), [records.to_dict(record)])
