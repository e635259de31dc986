"""``forge-policy config [show] [--origin] [--json]``: the effective layered settings (SPEC §10).

``config`` alone is ``config show``; further subcommands (``config unfork``) are added to the
group's subparsers in :func:`register`, each with its own handler.
"""

from __future__ import annotations

from forge_policy.cli.context import OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from argparse import Namespace
    from collections.abc import Callable
    from typing import Any

    from forge_policy.catalog.catalog import Catalog
    from forge_policy.cli.context import Context
    from forge_policy.config.layers import Settings


def register(command: Callable[..., Any]) -> None:
    """Add ``config`` and its subcommands to the parser."""
    import argparse

    p = command(
        "config",
        cmd_config_show,
        "The effective settings of the layered configuration (built-in, user, project "
        ".forge/config.yaml, local .forge/config.local.yaml, managed), after FORGE_PROFILE and "
        "FORGE_DISABLE and the managed locks: profile, shadow, floor, per-behavior settings, "
        "exceptions. `config` alone is `config show`.",
    )
    _show_options(p, argparse.SUPPRESS)
    sub = p.add_subparsers(dest="config_command", metavar="SUBCOMMAND")
    q = sub.add_parser(
        "show", help="the effective settings (the default)", description="the effective settings"
    )
    _show_options(q, argparse.SUPPRESS)
    q.set_defaults(handler=cmd_config_show)
    # further subcommands of the group go here, each with its own handler:
    from forge_policy.cli.unfork_cmds import add_unfork

    add_unfork(sub)


def _show_options(parser: argparse.ArgumentParser, default: object) -> None:
    parser.add_argument(
        "--origin",
        action="store_true",
        default=default,
        help="say where each setting comes from (file:line, a variable, or built-in)",
    )
    parser.add_argument("--json", action="store_true", default=default, help="print JSON")


def cmd_config_show(args: Namespace, ctx: Context) -> int:
    from forge_policy.config.layers import overlay_catalog, usable_exceptions

    config = ctx.config
    settings = config.current_settings()
    if settings is None:  # pragma: no cover - from_env always reads the layers
        raise AssertionError("no layered settings")
    from forge_policy.catalog.cache import BUILTIN_DIR, CatalogCache

    base = CatalogCache(config.cache_paths()).load(config.catalog_dir or BUILTIN_DIR)
    catalog, notes = overlay_catalog(base, settings)
    _, refused = usable_exceptions(catalog, settings)
    notes = [*settings.notes, *notes, *refused]
    origin = bool(getattr(args, "origin", False))
    if getattr(args, "json", False):
        ctx.print_json(_as_json(settings, catalog, notes, origin))
        return OK
    for line in _lines(settings, catalog, notes, origin):
        ctx.print(line)
    return OK


def _effective(catalog: Catalog, behavior_id: str) -> dict[str, Any] | None:
    behavior = catalog.get(behavior_id)
    if behavior is None:
        return None
    spec = behavior.spec
    found: dict[str, Any] = {
        "enabled": behavior.enabled,
        "level": spec["default_level"],
        "escalation": [{"after": a, "level": lv} for a, lv in spec.get("escalation", ())],
        "mode": behavior.mode,
    }
    if spec.get("tuning"):
        found["tuning"] = spec["tuning"]
    if spec.get("level_cap"):
        found["level_cap"] = spec["level_cap"]
    return found


def _as_json(
    settings: Settings, catalog: Catalog, notes: list[str], origin: bool
) -> dict[str, Any]:
    data = settings.to_dict()
    data["profile"] = settings.profile or "standard"
    data["notes"] = notes
    for behavior_id, entry in data["behaviors"].items():
        entry["effective"] = _effective(catalog, behavior_id)
    if origin:
        data["origins"] = dict(sorted(settings.origins.items()))
    return data


def _where(settings: Settings, key: str, origin: bool) -> str:
    if not origin:
        return ""
    return f"   ({_shown(settings.origins.get(key, 'built-in'))})"


def _shown(origin: str) -> str:
    from forge_policy.catalog.yaml_io import display

    if ":" in origin and origin.rsplit(":", 1)[1].isdigit():
        path, line = origin.rsplit(":", 1)
        return f"{display(path)}:{line}"
    return origin


def _lines(settings: Settings, catalog: Catalog, notes: list[str], origin: bool) -> list[str]:
    lines = []
    locks = settings.locks
    scalars = (
        ("profile", settings.profile or "standard"),
        ("shadow", "true" if settings.shadow else "false"),
        ("floor", settings.floor or "harness"),
        ("coverage", "false" if settings.coverage is False else "true"),
        ("candidate", settings.candidate or "-"),
    )
    for key, value in scalars:
        locked = " [locked]" if key in locks else ""
        lines.append(f"{key + ':':<11}{value}{locked}{_where(settings, key, origin)}")
    ids = sorted({*settings.behaviors, *settings.managed})
    lines.append("behaviors:" + ("" if ids else " (the catalog's own settings)"))
    for behavior_id in ids:
        effective = _effective(catalog, behavior_id)
        locked = " [locked]" if behavior_id in settings.managed else ""
        if effective is None:
            lines.append(f"  {behavior_id}: not in the catalog")
            continue
        lines.append(f"  {behavior_id}:{locked}")
        configured = settings.behaviors.get(behavior_id)
        lock = settings.origins.get(f"behaviors.{behavior_id}.locked", "")
        for key in ("enabled", "level", "escalation", "tuning"):
            raw: Any = effective.get(key)
            if key == "escalation":
                value = ", ".join(f"{s['after']}→{s['level']}" for s in raw) or "-"
            elif key == "enabled":
                value = "true" if raw else "false"
            elif raw is None and not (configured and getattr(configured, key) is not None):
                continue
            else:
                value = str(raw or "-")
            asked = getattr(configured, key) if configured is not None else None
            dotted = f"behaviors.{behavior_id}.{key}"
            if asked is None and dotted not in settings.origins and not origin:
                continue
            if locked and asked is not None and key != "escalation" and asked != raw:
                # a lower layer asked for something looser: the lock holds
                held = f"held by the lock at {_shown(lock)}"
                where = f"   ({held}; {_shown(settings.origins[dotted])} asks {asked})"
                lines.append(f"    {key + ':':<12}{value}{where if origin else ' [' + held + ']'}")
                continue
            where = _where(settings, dotted, origin) if dotted in settings.origins else ""
            if origin and not where:
                where = "   (built-in)"
            lines.append(f"    {key + ':':<12}{value}{where}")
    lines.append("exceptions:" + ("" if settings.exceptions else " none"))
    import datetime

    today = datetime.date.today()
    for rule in settings.exceptions:
        state = "expired" if rule.expired(today) else f"until {rule.until.isoformat()}"
        where = f"   ({_shown(rule.origin)})" if origin else ""
        lines.append(
            f"  {rule.behavior}: {rule.kind} {rule.value!r}, {state}: {rule.reason}{where}"
        )
    if settings.files:
        lines.append("files: " + ", ".join(_shown(path) for path in settings.files))
    else:
        lines.append("files: none (every setting is built-in)")
    lines += [f"note: {note}" for note in notes]
    return lines
