"""Read catalog folders and behavior files, all-or-nothing, every error at once.

YAML goes through :mod:`forge_policy.catalog.yaml_io` and is structured into the schema's attrs
classes (:mod:`forge_policy.catalog.schema`) by :mod:`forge_policy.catalog.structuring`
(cattrs); the hook path reaches this module only when the compiled cache is missing or stale.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs

from forge_policy.catalog.behavior import Behavior
from forge_policy.catalog.catalog import BEHAVIOR_FILE, INDEX_FILE, Catalog
from forge_policy.catalog.schema import ID_PATTERN, BehaviorTestDoc, IndexEntryDoc, SchemaVersion
from forge_policy.catalog.structuring import (
    dotted,
    kind,
    structure,
    structure_behavior,
    validate_behavior,
)
from forge_policy.catalog.tuning import tune, tuning_problem
from forge_policy.catalog.yaml_io import display, edit_index_entry, plain, position, read_yaml
from forge_policy.errors import CatalogError, Issue

__all__ = [
    "BEHAVIOR_FILE",
    "BUILTIN_DIR",
    "INDEX_FILE",
    "builtin_catalog",
    "load_behavior",
    "load_catalog",
    "read_behavior",
    "read_behavior_tests",
    "read_catalog",
    "set_enabled",
]

BUILTIN_DIR = Path(__file__).with_name("builtin")


def read_behavior(path: Path) -> tuple[dict[str, Any] | None, list[Issue]]:
    """Parse and validate one behavior file into its normalised spec."""
    shown = display(path)
    document, issues = read_yaml(path, shown)
    if issues:
        return None, issues
    return validate_behavior(document, shown)


def read_behavior_tests(path: Path) -> tuple[list[LocatedTest], list[Issue]]:
    """The ``tests`` of one behavior file, each with the line of the test and of each event.

    >>> tests, issues = read_behavior_tests(BUILTIN_DIR / "search-first" / "behavior.yaml")
    >>> issues, tests[0].test.name != "", tests[0].line > 0
    ([], True, True)
    """
    shown = display(path)
    document, issues = read_yaml(path, shown)
    if issues:
        return [], issues
    doc, issues = structure_behavior(document, shown)
    if doc is None:
        return [], issues
    located = []
    for index, test in enumerate(doc.tests):
        where = ("tests", index)
        lines = tuple(position(document, (*where, "events", i))[0] for i in range(len(test.events)))
        located.append(LocatedTest(test, shown, position(document, where)[0], lines))
    return located, []


@attrs.frozen
class LocatedTest:
    """A behavior test and where it is written: the file, its line, each event's line."""

    test: BehaviorTestDoc
    file: str
    line: int
    event_lines: tuple[int, ...]


def load_behavior(path: str | os.PathLike[str]) -> Behavior:
    """Load one ``behavior.yaml``; raise :class:`~forge_policy.CatalogError` listing every problem.

    >>> load_behavior(BUILTIN_DIR / "search-first" / "behavior.yaml").id
    'search-first'
    """
    spec, issues = read_behavior(Path(path))
    if spec is None:
        raise CatalogError(issues)
    return Behavior(spec)


def _index_entries(
    root: Path, document: Any, shown: str
) -> tuple[list[tuple[IndexEntryDoc, tuple[int, int]]], list[Issue]]:
    """The index's entries in order, each with the position of its id, and every issue."""
    issues: list[Issue] = []
    if not isinstance(document, dict):
        line, column = position(document, ())
        message = "index.yaml must be a mapping with schema_version and behaviors"
        return [], [Issue(shown, line, column, "", message)]
    line, column = position(document, ())
    for key in ("schema_version", "behaviors"):
        if document.get(key) is None:
            issues.append(Issue(shown, line, column, key, "required field missing"))
    if document.get("schema_version") is not None:
        issues += structure(plain(document["schema_version"]), SchemaVersion, document, shown,
                            ("schema_version",))[1]  # fmt: skip
    listed = document.get("behaviors")
    if listed is None:
        return [], issues
    if not isinstance(listed, list):
        line, column = position(document, ("behaviors",))
        issues.append(
            Issue(shown, line, column, "behaviors", f"expected a list, got {kind(listed)}")
        )
        return [], issues
    entries: list[tuple[IndexEntryDoc, tuple[int, int]]] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(listed):
        where: tuple[str | int, ...] = ("behaviors", index)
        entry, found = structure(plain(item), IndexEntryDoc, document, shown, where)
        issues += found
        if entry is None:
            continue
        if isinstance(item, dict):
            where = (*where, "id")
        line, column = position(document, where)
        field = dotted(where)

        behavior_id = entry.id
        file = root / behavior_id / BEHAVIOR_FILE
        if not ID_PATTERN.match(behavior_id):
            problem = f"invalid id {behavior_id!r}"
        elif behavior_id in seen:
            problem = f"duplicate id {behavior_id!r} (first listed at line {seen[behavior_id]})"
        elif not file.is_file():
            seen[behavior_id] = line
            problem = f"behavior {behavior_id!r} has no file {display(file)}"
        else:
            seen[behavior_id] = line
            entries.append((entry, (line, column)))
            continue
        issues.append(Issue(shown, line, column, field, problem))
    return entries, issues


def read_catalog(root: Path) -> tuple[list[dict[str, Any]], list[Path], list[Issue]]:
    """Validate a catalog folder: its index and every listed behavior file.

    Returns the normalised specs in index order (with the index's ``enabled`` and ``tuning``
    applied), the source files read, and every issue.
    """
    index_path = root / INDEX_FILE
    shown = display(index_path)
    document, issues = read_yaml(index_path, shown)
    sources = [index_path]
    if issues:
        return [], sources, issues
    entries, issues = _index_entries(root, document, shown)
    specs: list[dict[str, Any]] = []
    for entry, (line, column) in entries:
        path = root / entry.id / BEHAVIOR_FILE
        sources.append(path)
        spec, found = read_behavior(path)
        issues.extend(found)
        if spec is None:
            continue
        if spec["id"] != entry.id:
            issues.append(
                Issue(
                    display(path),
                    0,
                    0,
                    "id",
                    f"id {spec['id']!r} does not match its index entry "
                    f"{entry.id!r} ({shown}:{line})",
                )
            )
            continue
        if entry.enabled is not None:
            spec["enabled"] = entry.enabled
        if entry.tuning is not None:
            problem = tuning_problem(spec, entry.tuning)
            if problem is not None:
                issues.append(Issue(shown, line, column, "tuning", problem))
                continue
            spec = tune(spec, entry.tuning)
        specs.append(spec)
    return specs, sources, issues


def load_catalog(path: str | os.PathLike[str] | None = None) -> Catalog:
    """Load a catalog folder (``index.yaml`` + ``<id>/behavior.yaml``) or one behavior file.

    All-or-nothing: any problem raises :class:`~forge_policy.CatalogError` with every issue, each
    naming file, line, column and field. ``None`` loads the built-in catalog.

    >>> catalog = load_catalog()
    >>> catalog.ids[0]
    'protect-governance'
    """
    root = BUILTIN_DIR if path is None else Path(path)
    if root.is_file():
        behavior = load_behavior(root)
        return Catalog([behavior], root=str(root), sources=[str(root)])
    if not root.is_dir():
        raise CatalogError([Issue(display(root), 0, 0, "", "no such catalog folder or file")])
    specs, sources, issues = read_catalog(root)
    if issues:
        raise CatalogError(issues)
    return Catalog(
        [Behavior(spec) for spec in specs], root=str(root), sources=[str(s) for s in sources]
    )


def builtin_catalog() -> Catalog:
    """The catalog shipped with forge_policy (see the README for what each behavior does)."""
    return load_catalog(BUILTIN_DIR)


def set_enabled(root: str | os.PathLike[str], behavior_id: str, enabled: bool) -> bool:
    """Set a behavior's ``enabled`` in ``index.yaml``, keeping comments, order and unknown keys.

    Returns whether the file changed. Raises :class:`~forge_policy.CatalogError` when the id is
    not listed.
    """
    return edit_index_entry(Path(root) / INDEX_FILE, behavior_id, "enabled", enabled)
