"""Catalog commands: list, describe, validate, on/off, strict/relaxed."""

from __future__ import annotations

import os
import textwrap

from forge_policy.cli._format import table
from forge_policy.cli.context import OK, REFUSED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Callable
    from typing import Any

    from forge_policy.catalog.behavior import Behavior
    from forge_policy.catalog.catalog import Catalog
    from forge_policy.cli.context import Context
    from forge_policy.ops.toggles import Toggle


def register(command: Callable[..., Any]) -> None:
    """Add this group's commands to the parser."""
    p = command("list", cmd_list, "List the behaviors: id, enabled, default level, category.")
    p.add_argument("--json", action="store_true", help="print JSON")
    p = command("describe", cmd_describe, "Show one behavior in full.")
    p.add_argument("behavior_id", metavar="ID")
    p.add_argument("--json", action="store_true", help="print the normalised spec as JSON")
    p = command(
        "validate",
        cmd_validate,
        "Check a catalog folder (or one behavior file) and print every problem as "
        "file:line:col: field: message. Exit 1 when there is any. For the configured catalog, "
        "also say which compiled cache files were ignored and why (they are rebuilt).",
    )
    p.add_argument("directory", metavar="DIR", nargs="?", help="default: the configured catalog")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--strict",
        action="store_true",
        help="lints (unknown keys, fields nothing produces, triggers that never fire, "
        "unknown template variables, unlisted behavior folders, profile exclusions…) are "
        "errors: exit 1 when there is any",
    )
    for name, enabled in (("on", True), ("off", False)):
        p = command(
            name,
            cmd_toggle,
            f"Switch a behavior {name} for the project or for one session (--session). The "
            "project's switch is written to <FORGE_ROOT>/config.yaml (behaviors: {ID: {enabled: "
            "false}}, comments and other keys kept; the built-in catalog is never copied); a "
            "project with its own catalog (<FORGE_ROOT>/behaviors or FORGE_BEHAVIORS_DIR) has "
            "its index.yaml edited instead.",
        )
        p.set_defaults(enabled=enabled)
        p.add_argument("behavior_id", metavar="ID")
        scope = p.add_mutually_exclusive_group()
        scope.add_argument("--session", metavar="SID", help="only this session")
        scope.add_argument("--project", action="store_true", help="the whole project (default)")
        p.add_argument("--json", action="store_true", help="print what changed, and where")
    texts = {
        "strict": "Make a behavior escalate in half as many violations (project setting "
        "'tuning: strict' in <FORGE_ROOT>/config.yaml, or in index.yaml of a project with its "
        "own catalog).",
        "relaxed": "Cap a behavior at warning: it never blocks (project setting "
        "'tuning: relaxed' in <FORGE_ROOT>/config.yaml, or in index.yaml of a project with its "
        "own catalog).",
    }
    for name, text in texts.items():
        p = command(name, cmd_tuning, text)
        p.set_defaults(tuning=name)
        p.add_argument("behavior_id", metavar="ID")
        p.add_argument("--reset", action="store_true", help="remove the tuning")
        p.add_argument("--json", action="store_true", help="print what changed, and where")


def _catalog(ctx: Context) -> tuple[Catalog, dict[str, str]]:
    """The configured catalog with FORGE_DISABLE applied, and who disabled what."""
    from forge_policy.engine.bypass import Bypass

    bypass = Bypass(ctx.config.load_catalog(), ctx.config.disable)
    return bypass.catalog, {b.id: bypass.via[b.id] for b in bypass.bypassed}


def _escalation(behavior: Behavior) -> str:
    steps = ", ".join(f"{s.after}: {s.level.label}" for s in behavior.escalation)
    return behavior.default_level.label + (f" (then {steps})" if steps else "")


def cmd_list(args: Namespace, ctx: Context) -> int:
    """``forge-policy list``."""
    from forge_policy.reports.status import catalog_entries

    catalog, bypassed = _catalog(ctx)
    entries = catalog_entries(catalog, bypassed, ctx.config.profile)
    if args.json:
        ctx.print_json({"catalog": catalog.root, "behaviors": entries})
        return OK
    header = ["id", "enabled", "default", "category", "tuning", "name"]
    ctx.print(
        table(
            header,
            [
                [
                    e.id,
                    f"no ({e.disabled_by})"
                    if e.disabled_by
                    else f"inactive (profile {e.inactive_under})"
                    if e.enabled and e.inactive_under
                    else e.enabled,
                    e.default_level.label,
                    e.category,
                    e.tuning,
                    e.name,
                ]
                for e in entries
            ],
        )
    )
    return OK


def cmd_describe(args: Namespace, ctx: Context) -> int:
    """``forge-policy describe ID``."""
    from forge_policy.ops.admin import find_behavior

    catalog, bypassed = _catalog(ctx)
    b = find_behavior(catalog, args.behavior_id)
    if args.json:
        ctx.print_json(dict(b.spec))
        return OK
    enabled = f"no ({bypassed[b.id]})" if b.id in bypassed else ("yes" if b.enabled else "no")
    if b.enabled and b.id not in bypassed and b.excluded_by(ctx.config.profile):
        enabled = f"yes, but inactive under profile {ctx.config.profile}"
    lines = [
        f"{b.id}: {b.name}",
        textwrap.fill(b.description, 96, initial_indent="  ", subsequent_indent="  "),
        f"  category {b.category}, scope {b.scope}, enabled {enabled}, "
        f"tuning {b.spec.get('tuning') or '-'}",
        f"  level: {_escalation(b)}",
        f"  override: {b.override}, mode: {b.mode}, bypass: {b.bypass}",
        "  triggers:",
    ]
    for trigger, spec in zip(b.triggers, b.spec["triggers"], strict=True):
        lines.append(f"    {trigger.index}. {trigger.describe()}")
        logic = spec.get("logic", "all")
        for condition in spec.get("conditions", ()):
            value = condition.get("value")
            shown = (
                "" if value is None else f" {value}" if isinstance(value, str) else f" {value!r}"
            )
            lines.append(f"       {logic}: {condition['field']} {condition['operator']}{shown}")
    lines.append(
        textwrap.fill("hint: " + b.hint, 96, initial_indent="  ", subsequent_indent="    ")
    )
    if b.suggested_tool:
        lines.append(f"  suggested tool: {b.suggested_tool}")
    if b.suggested_action:
        lines.append(f"  suggested action: {b.suggested_action}")
    applies = {
        "tools": b.applies_tools,
        "agents": b.applies_agents,
        "profiles": b.applies_profiles,
    }
    for key, values in applies.items():
        if values:
            lines.append(f"  applies to {key}: {', '.join(sorted(values))}")
    if catalog.root and os.path.isdir(catalog.root):
        lines.append(f"  file: {os.path.join(catalog.root, b.id, 'behavior.yaml')}")
    ctx.print("\n".join(lines))
    return OK


def cmd_validate(args: Namespace, ctx: Context) -> int:
    """``forge-policy validate [DIR]``: reads the YAML itself, never the compiled cache, then
    (for the configured catalog) says which cache files the hook would ignore, and why."""
    from forge_policy.catalog.loader import BUILTIN_DIR, load_catalog
    from forge_policy.errors import CatalogError

    target = args.directory or ctx.config.catalog_dir or str(BUILTIN_DIR)
    try:
        catalog = load_catalog(target)
    except CatalogError as exc:
        if args.json:
            ctx.print_json({"ok": False, "issues": [i.to_dict() for i in exc.issues]})
        else:
            for issue in exc.issues:
                ctx.print(str(issue))
            count = len(exc.issues)
            ctx.note(f"{target}: {count} problem{'s' if count != 1 else ''}")
        return REFUSED
    from forge_policy.catalog.lints import lint_behavior_file, lint_catalog

    profile = ctx.config.profile
    lint = lint_behavior_file if os.path.isfile(target) else lint_catalog
    warnings = lint(target, profile=profile)
    failed = bool(warnings) and args.strict
    enabled = sum(b.enabled for b in catalog.behaviors)
    cache = _check_cache(ctx, target, catalog)
    layered = [] if args.directory else _config_notes(ctx, catalog)
    if args.json:
        result: dict[str, Any] = {
            "ok": not failed,
            "behaviors": len(catalog),
            "enabled": enabled,
            "warnings": [i.to_dict() for i in warnings],
        }
        if cache is not None:
            result["cache"] = cache
        if layered:
            result["config_notes"] = layered
        ctx.print_json(result)
        return REFUSED if failed else OK
    for issue in warnings:
        ctx.print(f"{'error' if args.strict else 'warning'}: {issue}")
    if failed:
        count = len(warnings)
        ctx.note(f"{target}: {count} lint{'s' if count != 1 else ''} (--strict)")
        return REFUSED
    lints = f", {len(warnings)} warning{'s' if len(warnings) != 1 else ''}" if warnings else ""
    ctx.print(f"ok: {target}: {len(catalog)} behaviors, {enabled} enabled{lints}")
    if cache is not None and cache["ignored"]:
        for entry in cache["ignored"]:
            ctx.print(f"cache: ignored {entry['path']}: {entry['reason']}")
        outcome = {
            "rebuilt": "cache: rebuilt from the YAML",
            "unwritable": "cache: cannot be written: the hook parses the YAML each time",
        }
        ctx.print(outcome.get(cache["status"], f"cache: using {cache['used']}"))
    for note in layered:
        ctx.print(f"config: warning: {note}")
    return OK


def _config_notes(ctx: Context, catalog: Catalog) -> list[str]:
    """The layered configuration's warnings for the configured catalog (unknown keys, locks
    outside the managed layer, refused environment switches and exceptions, settings for a
    behavior the catalog does not have); its errors stop ``ctx.config`` already."""
    from forge_policy.config.layers import overlay_catalog, usable_exceptions

    settings = ctx.config.current_settings()
    if settings is None:
        return []
    notes = overlay_catalog(catalog, settings)[1]
    return [*settings.notes, *notes, *usable_exceptions(catalog, settings)[1]]


def _check_cache(ctx: Context, target: str, catalog: Catalog) -> dict[str, Any] | None:
    """For the configured catalog folder: the compiled cache's status and every cache file the
    hook would ignore, with the reason (see :meth:`CatalogCache.check`); None for another."""
    from forge_policy.catalog.cache import BUILTIN_DIR, CatalogCache

    configured = os.path.abspath(ctx.config.catalog_dir or BUILTIN_DIR)
    if os.path.abspath(target) != configured or not os.path.isdir(configured):
        return None
    cache = CatalogCache(ctx.config.cache_paths())
    ignored = cache.check(configured, catalog)
    return {
        "status": cache.status,
        "used": cache.used,
        "ignored": [{"path": path, "reason": reason} for path, reason in ignored],
    }


def cmd_toggle(args: Namespace, ctx: Context) -> int:
    """``forge-policy on|off ID [--session SID | --project] [--json]``."""
    word = "on" if args.enabled else "off"
    if args.session is not None:
        from forge_policy.ops.admin import set_session_enabled

        changed = set_session_enabled(ctx.evaluator, args.session, args.behavior_id, args.enabled)
        if args.json:
            ctx.print_json(
                {
                    "behavior": args.behavior_id,
                    "setting": "enabled",
                    "value": args.enabled,
                    "scope": "session",
                    "session": args.session,
                    "changed": changed,
                }
            )
            return OK
        state = "" if changed else " (it already was)"
        ctx.print(f"{args.behavior_id} is {word} for session {args.session}{state}")
        if args.enabled:
            _inactive_note(ctx, args.behavior_id)
        return OK
    from forge_policy.ops.toggles import set_project_enabled

    toggle = set_project_enabled(ctx.config, args.behavior_id, args.enabled)
    code = _report_toggle(args, ctx, toggle)
    if args.enabled and not args.json:
        _inactive_note(ctx, args.behavior_id)
    return code


def _report_toggle(args: Namespace, ctx: Context, toggle: Toggle) -> int:
    """Print what a project-scoped switch did; REFUSED when a higher layer still decides."""
    from forge_policy.ops.toggles import describe_value

    if args.json:
        ctx.print_json({**toggle.to_dict(), "scope": "project"})
    else:
        state = "" if toggle.changed else " (it already was)"
        if toggle.setting == "enabled":
            what = describe_value("enabled", toggle.value)
            ctx.print(f"{toggle.behavior} is {what} for the project in {toggle.file}{state}")
        else:
            what = describe_value("tuning", toggle.value)
            ctx.print(f"{toggle.behavior}: {what} in {toggle.file}{state}")
    if toggle.overridden_by:
        ctx.note(
            f"warning: {toggle.behavior} is still "
            f"{describe_value(toggle.setting, toggle.effective)}: {toggle.overridden_by} "
            "decides it (a layer above the project's); change it there"
        )
        return REFUSED
    return OK


def _inactive_note(ctx: Context, behavior_id: str) -> None:
    """``on`` must not look like success when the active profile leaves the behavior out."""
    from forge_policy.catalog.lints import inactive_note
    from forge_policy.ops.admin import find_behavior

    behavior = find_behavior(ctx.config.load_catalog(), behavior_id)
    if behavior.excluded_by(ctx.config.profile):
        ctx.note(f"warning: {behavior_id} is {inactive_note(behavior.spec, ctx.config.profile)}")


def cmd_tuning(args: Namespace, ctx: Context) -> int:
    """``forge-policy strict|relaxed ID [--reset] [--json]``."""
    from forge_policy.ops.toggles import set_project_tuning

    tuning = None if args.reset else args.tuning
    toggle = set_project_tuning(ctx.config, args.behavior_id, tuning)
    code = _report_toggle(args, ctx, toggle)
    if not args.json:
        ctx.print(f"  level: {_escalation(_tuned(ctx, toggle))}")
    return code


def _tuned(ctx: Context, toggle: Toggle) -> Behavior:
    """The behavior with the tuning now in effect (the level line of ``strict|relaxed``)."""
    from forge_policy.catalog.behavior import Behavior
    from forge_policy.catalog.tuning import tune
    from forge_policy.ops.admin import find_behavior

    behavior = find_behavior(ctx.config.load_catalog(), toggle.behavior)
    if behavior.spec.get("tuning") == toggle.effective:
        return behavior
    if toggle.target == "catalog" or behavior.spec.get("tuning"):
        return behavior
    return Behavior(tune(behavior.spec, toggle.effective))  # type: ignore[arg-type]
