"""``forge-policy floor [--json]``: the enforcement floor of this project (SPEC §13).

One library call (:func:`forge_policy.floor.derive.floor_for` with the configured catalog and
profile); a broken catalog or a bad ``floor:`` in the project config is one line naming the
file and line, never a traceback.
"""

from __future__ import annotations

from forge_policy.cli.context import OK, REFUSED, USAGE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Callable
    from typing import Any

    from forge_policy.cli.context import Context
    from forge_policy.floor.model import FloorPath

_TITLES = (
    ("writable", "writable (writes go only here)"),
    ("never_written", "never written"),
    ("never_read", "never read (nor written)"),
)


def register(command: Callable[..., Any]) -> None:
    """Add ``floor`` to the parser."""
    p = command(
        "floor",
        cmd_floor,
        "The enforcement floor derived from the catalog: where writes may go, what is never "
        "written, what is never read; each path with its reason (docs/reference/floor.md).",
    )
    p.add_argument("--json", action="store_true", help="print the floor document as JSON")


def cmd_floor(args: Namespace, ctx: Context) -> int:
    """Print the floor: three lists with reasons, or (``--json``) :meth:`Floor.to_dict`."""
    from forge_policy.errors import CatalogError
    from forge_policy.floor.derive import floor_for
    from forge_policy.floor.status import FloorConfigError, configured_mode

    config = ctx.config
    try:
        mode = configured_mode(config.root)
        catalog = config.load_catalog()
    except FloorConfigError as exc:
        ctx.note(str(exc))
        return USAGE
    except CatalogError as exc:
        more = len(exc.issues) - 1
        extra = f" (and {more} more: forge-policy validate)" if more > 0 else ""
        ctx.note(f"catalog does not load: {exc.issues[0]}{extra}")
        return REFUSED
    environ = config.environ or {}
    floor = floor_for(config.project_dir, environ, catalog=catalog, profile=config.profile)
    if args.json:
        ctx.print_json(floor.to_dict())
        return OK
    ctx.print(f"floor of {floor.project} (floor: {mode}; docs/reference/floor.md)")
    for field, title in _TITLES:
        paths: tuple[FloorPath, ...] = getattr(floor, field)
        ctx.print(f"{title}: {len(paths)}")
        width = max((len(p.path) for p in paths), default=0)
        for entry in paths:
            ctx.print(f"  {entry.path.ljust(width)}  {entry.reason}")
    if mode == "off":
        ctx.print("the project turned the floor off: only the hook decides")
    return OK
