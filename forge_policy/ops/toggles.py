"""Project-scoped ``forge-policy on|off ID`` and ``strict|relaxed ID [--reset]`` (SPEC §10).

Where the switch is written depends on the project's catalog:

- **The built-in catalog** (no ``<FORGE_ROOT>/behaviors``, no ``FORGE_BEHAVIORS_DIR``): the
  project layer ``<FORGE_ROOT>/config.yaml`` gets ``behaviors: {ID: {enabled: false}}`` or
  ``{tuning: strict}`` (:mod:`forge_policy.config.layer_edit`, comments and other keys kept).
  Nothing is copied: upgrades of the built-in catalog keep reaching the project. A setting equal
  to the catalog's own is removed rather than written, so ``off`` then ``on`` leaves the file as
  it was (unless a lower layer, the user's, says otherwise: then it is written explicitly).
- **A catalog of the project's own** (a fork in ``<FORGE_ROOT>/behaviors`` made by an earlier
  version, or ``FORGE_BEHAVIORS_DIR``): its ``index.yaml`` is edited, exactly as before. That
  folder is where the team already switches behaviors and where ``list``/``describe`` say they
  come from; writing the layer instead would leave two places that disagree about one switch.
  ``forge-policy config unfork`` turns such a fork into an overlay.

Either way the result is checked against the layers above the project's (``config.local.yaml``,
the managed layer): a switch they still decide is reported with the ``file:line`` that decides
it, and one the managed layer locks is refused before anything is written (a project may
tighten a locked behavior, never loosen it). ``protect-governance`` is never switched off, and
a ``bypass: never`` behavior is never relaxed. Switching a behavior on or off is written to the
audit log (``kind: "bypass"``, ``scope: "project"``) before the file is.
"""

from __future__ import annotations

import os

import attrs

from forge_policy.errors import Refused

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from forge_policy.catalog.behavior import Behavior
    from forge_policy.config.env import Config

#: behaviors the command line never switches off for the project: they guard the catalog itself
GOVERNANCE_GUARDS = frozenset({"protect-governance"})
LAYER_FILE = "config.yaml"


@attrs.frozen
class Toggle:
    """What one project-scoped switch did (``--json`` prints :meth:`to_dict`)."""

    behavior: str
    #: ``enabled`` or ``tuning``
    setting: str
    #: what was asked (None: ``--reset``)
    value: object
    #: the file written (or that would have been): the project layer or the fork's index.yaml
    file: str
    #: ``layer`` (config.yaml) or ``catalog`` (the project's own catalog's index.yaml)
    target: str
    changed: bool
    #: the setting in effect afterwards, as the hook will see it
    effective: object
    #: ``file:line`` of a higher layer that still decides the setting ("" when none)
    overridden_by: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "behavior": self.behavior,
            "setting": self.setting,
            "value": self.value,
            "file": self.file,
            "target": self.target,
            "changed": self.changed,
            "effective": self.effective,
            "overridden_by": self.overridden_by or None,
        }


def set_project_enabled(
    config: Config,
    behavior_id: str,
    enabled: bool,
    *,
    now: float | None = None,
    environ: Mapping[str, str] | None = None,
) -> Toggle:
    """``forge-policy on|off ID --project`` (module doc)."""
    behavior = _behavior(config, behavior_id)
    if not enabled and behavior.id in GOVERNANCE_GUARDS:
        raise Refused(
            f"{behavior_id} guards the governance files and commands: it cannot be switched off "
            "from the command line"
        )
    return _switch(config, behavior, "enabled", enabled, now=now, environ=environ)


def set_project_tuning(
    config: Config,
    behavior_id: str,
    tuning: str | None,
    *,
    environ: Mapping[str, str] | None = None,
) -> Toggle:
    """``forge-policy strict|relaxed ID [--reset]`` (module doc)."""
    from forge_policy.catalog.tuning import tuning_problem

    behavior = _behavior(config, behavior_id)
    problem = tuning_problem(behavior.spec, tuning) if tuning is not None else None
    if problem is not None:
        raise Refused(problem)
    return _switch(config, behavior, "tuning", tuning, environ=environ)


def suggest(behavior_id: str, ids: tuple[str, ...] | list[str]) -> str:
    """`` (did you mean …?)`` for an unknown id: up to three close ids, or a pointer to
    ``list``.

    >>> suggest("serch-first", ["search-first", "strict-tdd"])
    " (did you mean 'search-first'?)"
    >>> suggest("zzz", ["search-first"])
    '; forge-policy list shows every id'
    """
    import difflib

    close = difflib.get_close_matches(behavior_id, ids, n=3, cutoff=0.6)
    if not close:
        return "; forge-policy list shows every id"
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)"


# --- the pieces -------------------------------------------------------------------------------


def _behavior(config: Config, behavior_id: str) -> Behavior:
    catalog = config.load_catalog()
    behavior = catalog.get(behavior_id)
    if behavior is None:
        raise Refused(f"unknown behavior {behavior_id!r}{suggest(behavior_id, catalog.ids)}")
    return behavior


def _own_value(behavior: Behavior, key: str) -> object:
    """The catalog's own value of ``key`` (no layer applied)."""
    if key == "enabled":
        return bool(behavior.spec.get("enabled", True))
    return behavior.spec.get("tuning")


def _loosens(key: str, value: object, own: object) -> bool:
    """Whether setting ``key`` to ``value`` weakens the behavior."""
    if key == "enabled":
        return value is False
    if value == "relaxed":
        return True
    return value is None and own is not None  # --reset of a tuning


def _switch(
    config: Config,
    behavior: Behavior,
    key: str,
    value: object,
    *,
    now: float | None = None,
    environ: Mapping[str, str] | None = None,
) -> Toggle:
    env = dict(config.environ or os.environ if environ is None else environ)
    if config.catalog_dir is not None:
        return _switch_catalog(config, behavior, key, value, now=now, env=env)
    from forge_policy.catalog.loader import builtin_catalog
    from forge_policy.config.layer_edit import read_setting, set_behavior_setting

    path = os.path.join(config.root, LAYER_FILE)
    before = _effective(config, behavior, key, env)
    _refuse_locked(before, behavior.id, key, value)
    _refuse_inapplicable(behavior, key, value)
    builtin = builtin_catalog().get(behavior.id)
    own = _own_value(builtin if builtin is not None else behavior, key)
    previous, _ = read_setting(path, behavior.id, key)
    # a setting equal to the catalog's own is not written: the catalog decides again
    wanted = None if value == own else value
    if key == "enabled" and before.value != value:
        _audit_switch(config, behavior, bool(value), now)
    original = _text(path)
    changed = set_behavior_setting(path, behavior.id, key, wanted)
    after = _effective(config, behavior, key, env)
    if wanted is None and after.value != value and after.origin_file in _lower_files(env):
        # the user's layer says otherwise: the project says it explicitly
        changed = set_behavior_setting(path, behavior.id, key, value) or changed
        after = _effective(config, behavior, key, env)
    _check_loads(config, path, original)
    if previous == wanted and not changed:
        changed = False
    return Toggle(
        behavior=behavior.id,
        setting=key,
        value=value,
        file=path,
        target="layer",
        changed=changed,
        effective=after.value,
        overridden_by=after.origin if after.value != value and after.origin_file != path else "",
    )


def _refuse_inapplicable(behavior: Behavior, key: str, value: object) -> None:
    """Refuse, before anything is written or audited, a setting the layered loader would not
    apply (a layer it refuses makes every tool call fail closed)."""
    from forge_policy.config.layers import BehaviorSettings, apply_behavior

    if value is None:
        return
    try:
        settings = (
            BehaviorSettings(enabled=bool(value))
            if key == "enabled"
            else BehaviorSettings(tuning=str(value))
        )
        apply_behavior(behavior.spec, settings)
    except ValueError as exc:
        raise Refused(f"{exc}; nothing was changed") from None


def _text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _check_loads(config: Config, path: str, original: str | None) -> None:
    """The catalog still loads under the edited layer; else the file is put back as it was."""
    from forge_policy.errors import ProjectConfigError

    try:
        config.load_catalog()
    except ProjectConfigError as exc:
        if original is None:
            os.unlink(path)
        else:
            from forge_policy.config.layer_edit import write_text

            write_text(path, original)
        raise Refused(f"{exc}; the change was undone, {path} is as it was") from None


def _switch_catalog(
    config: Config,
    behavior: Behavior,
    key: str,
    value: object,
    *,
    now: float | None,
    env: dict[str, str],
) -> Toggle:
    """A project with its own catalog: its ``index.yaml`` is edited, as before layers."""
    from forge_policy.catalog.catalog import INDEX_FILE
    from forge_policy.catalog.yaml_io import edit_index_entry

    folder = config.catalog_dir
    assert folder is not None
    before = _effective(config, behavior, key, env)
    _refuse_locked(before, behavior.id, key, value)
    if key == "enabled" and before.value != value:
        _audit_switch(config, behavior, bool(value), now)
    index = os.path.join(folder, INDEX_FILE)
    changed = edit_index_entry(index, behavior.id, key, value)
    after = _effective(config, behavior, key, env)
    return Toggle(
        behavior=behavior.id,
        setting=key,
        value=value,
        file=index,
        target="catalog",
        changed=changed,
        effective=after.value,
        overridden_by=after.origin if after.value != value else "",
    )


def _audit_switch(config: Config, behavior: Behavior, enabled: bool, now: float | None) -> None:
    import time

    from forge_policy._time import iso
    from forge_policy.audit import records
    from forge_policy.audit.base import write

    switch = records.BypassSwitch(
        timestamp=iso(time.time() if now is None else now),
        behavior_id=behavior.id,
        scope="project",
        enabled=enabled,
        variable="forge-policy " + ("on" if enabled else "off"),
        bypass_never=behavior.bypass == "never",
    )
    write(config.open_audit(), [records.to_dict(switch)])


@attrs.frozen
class _Effective:
    value: object
    #: "file:line" of the layer that sets it, "" when the catalog decides
    origin: str = ""
    locked: str = ""

    @property
    def origin_file(self) -> str:
        return self.origin.rsplit(":", 1)[0] if self.origin else ""


def _effective(config: Config, behavior: Behavior, key: str, env: Mapping[str, str]) -> _Effective:
    """The setting as the layers leave it over the catalog (the catalog's own value when no
    layer sets it), with the ``file:line`` that decides it and the managed lock, if any."""
    from forge_policy.catalog.catalog import catalog_folder
    from forge_policy.config.layers import load_settings

    settings = load_settings(config.project_dir, config.root, env)
    entry = settings.behaviors.get(behavior.id)
    origins = settings.origins
    locked = ""
    if settings.locked(behavior.id):
        locked = origins.get(f"behaviors.{behavior.id}.locked", "") or "the managed layer"
    value = getattr(entry, key, None) if entry is not None else None
    origin = origins.get(f"behaviors.{behavior.id}.{key}", "")
    if value is None:
        folder = catalog_folder(config.root, config.behaviors_dir)
        catalog = config.load_catalog() if folder is not None else None
        own = catalog.get(behavior.id) if catalog is not None else None
        if own is None:
            from forge_policy.catalog.loader import builtin_catalog

            own = builtin_catalog().get(behavior.id) or behavior
        return _Effective(_own_value(own, key), "", locked)
    return _Effective(value, "" if origin == "built-in" else origin, locked)


def _refuse_locked(before: _Effective, behavior_id: str, key: str, value: object) -> None:
    if before.locked and _loosens(key, value, before.value):
        what = "off" if key == "enabled" else f"tuning {value or 'reset'}"
        raise Refused(
            f"{behavior_id} is locked by {before.locked}: the project cannot loosen it "
            f"({what}); nothing was changed"
        )


def _lower_files(env: Mapping[str, str]) -> tuple[str, ...]:
    """The layer files below the project's: the user's."""
    from forge_policy.config.layers import layer_paths

    return tuple(path for name, path in layer_paths("", env) if name == "user")


def describe_value(key: str, value: Any) -> str:
    """``on``/``off``/``tuning strict``/``no tuning`` for messages.

    >>> describe_value("enabled", False), describe_value("tuning", None)
    ('off', 'no tuning')
    """
    if key == "enabled":
        return "on" if value else "off"
    return f"tuning {value}" if value else "no tuning"
