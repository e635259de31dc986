"""Read catalog folders and behavior files (ruamel.yaml), all-or-nothing, every error at once.

This module is the only one that imports ruamel; the hook path reaches it only when the compiled
cache is missing or stale.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from forge_policy.catalog.behavior import Behavior
from forge_policy.catalog.catalog import Catalog
from forge_policy.catalog.schema import (
    ID_PATTERN,
    SCHEMA_VERSION,
    Node,
    Validator,
    root_node,
    validate_behavior,
)
from forge_policy.catalog.tuning import TUNINGS, edit_index_entry, tune, tuning_problem
from forge_policy.errors import CatalogError, Issue

BEHAVIOR_FILE = "behavior.yaml"
INDEX_FILE = "index.yaml"
MAX_FILE_BYTES = 1 << 20
BUILTIN_DIR = Path(__file__).with_name("builtin")


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    return yaml


def parse_yaml(path: Path, shown: str) -> tuple[Any, list[Issue]]:
    """Parse one YAML file keeping positions; problems come back as issues, never raised."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        if path.is_symlink() and not path.exists():
            return None, [Issue(shown, 0, 0, "", "broken symlink")]
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return None, [
                Issue(shown, 0, 0, "", f"file too large ({size} bytes, at most {MAX_FILE_BYTES})")
            ]
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None, [Issue(shown, 0, 0, "", "file not found")]
    except UnicodeDecodeError as exc:
        return None, [Issue(shown, 0, 0, "", f"not UTF-8 text (byte {exc.start})")]
    except OSError as exc:
        return None, [Issue(shown, 0, 0, "", f"cannot read: {exc.strerror or exc}")]
    try:
        return _yaml().load(text), []
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        problem = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        return None, [Issue(shown, line, column, "", f"invalid YAML: {problem}")]
    except YAMLError as exc:
        return None, [Issue(shown, 0, 0, "", f"invalid YAML: {exc}")]


def _display(path: Path) -> str:
    """Paths below the working directory are shown relative, others absolute."""
    absolute = os.path.abspath(path)
    cwd = os.getcwd()
    if absolute.startswith(cwd + os.sep):
        return os.path.relpath(absolute, cwd)
    return absolute


def read_behavior(path: Path) -> tuple[dict[str, Any] | None, list[Issue]]:
    """Parse and validate one behavior file into its normalised spec."""
    shown = _display(path)
    document, issues = parse_yaml(path, shown)
    if issues:
        return None, issues
    return validate_behavior(document, shown)


def load_behavior(path: str | os.PathLike[str]) -> Behavior:
    """Load one ``behavior.yaml``; raise :class:`~forge_policy.CatalogError` listing every problem.

    >>> load_behavior(BUILTIN_DIR / "search-first" / "behavior.yaml").id
    'search-first'
    """
    spec, issues = read_behavior(Path(path))
    if spec is None:
        raise CatalogError(issues)
    return Behavior(spec)


def read_catalog(root: Path) -> tuple[list[dict[str, Any]], list[Path], list[Issue]]:
    """Validate a catalog folder: its index and every listed behavior file.

    Returns the normalised specs in index order (with the index's ``enabled`` applied), the
    source files read, and every issue.
    """
    index_path = root / INDEX_FILE
    shown = _display(index_path)
    document, issues = parse_yaml(index_path, shown)
    sources = [index_path]
    if issues:
        return [], sources, issues
    v = Validator(shown)
    top = root_node(document)
    entries: list[tuple[str, bool | None, str | None, Node]] = []
    if not isinstance(document, dict):
        v.fail(top, "index.yaml must be a mapping with schema_version and behaviors")
        return [], sources, v.issues
    version = v.field(top, "schema_version", required=True)
    if version is not None and version.value != SCHEMA_VERSION:
        v.fail(version, f'unsupported schema_version {version.value!r}: expected "1"')
    listed = v.sequence(top, "behaviors", required=True)
    seen: dict[str, Node] = {}
    for item in listed.items() if listed is not None else []:
        tuning: str | None = None
        if isinstance(item.value, str):
            behavior_id, enabled, where = str(item.value), None, item
        elif isinstance(item.value, dict):
            behavior_id = v.text(item, "id", required=True) or ""
            enabled = v.boolean(item, "enabled")
            tuning = v.choice(item, "tuning", TUNINGS, required=False, what="tuning")
            where = item.child("id") or item
        else:
            v.fail(item, "expected an id or a mapping with id and enabled")
            continue
        if not behavior_id:
            continue
        if not ID_PATTERN.match(behavior_id):
            v.fail(where, f"invalid id {behavior_id!r}")
            continue
        if behavior_id in seen:
            v.fail(
                where,
                f"duplicate id {behavior_id!r} (first listed at line {seen[behavior_id].line})",
            )
            continue
        seen[behavior_id] = where
        if not (root / behavior_id / BEHAVIOR_FILE).is_file():
            v.fail(
                where,
                f"behavior {behavior_id!r} has no file "
                f"{_display(root / behavior_id / BEHAVIOR_FILE)}",
            )
            continue
        entries.append((behavior_id, enabled, tuning, where))
    issues = list(v.issues)
    specs: list[dict[str, Any]] = []
    for behavior_id, enabled, tuning, where in entries:
        path = root / behavior_id / BEHAVIOR_FILE
        sources.append(path)
        spec, found = read_behavior(path)
        issues.extend(found)
        if spec is None:
            continue
        if spec["id"] != behavior_id:
            issues.append(
                Issue(
                    _display(path),
                    0,
                    0,
                    "id",
                    f"id {spec['id']!r} does not match its index entry "
                    f"{behavior_id!r} ({shown}:{where.line})",
                )
            )
            continue
        if enabled is not None:
            spec["enabled"] = enabled
        if tuning is not None:
            problem = tuning_problem(spec, tuning)
            if problem is not None:
                issues.append(Issue(shown, where.line, where.column, "tuning", problem))
                continue
            spec = tune(spec, tuning)
        specs.append(spec)
    return specs, sources, issues


def load_catalog(path: str | os.PathLike[str] | None = None) -> Catalog:
    """Load a catalog folder (``index.yaml`` + ``<id>/behavior.yaml``) or one behavior file.

    All-or-nothing: any problem raises :class:`~forge_policy.CatalogError` with every issue, each
    naming file, line, column and field. ``None`` loads the built-in catalog.

    >>> catalog = load_catalog()
    >>> catalog.ids[0]
    'no-destructive-git'
    """
    root = BUILTIN_DIR if path is None else Path(path)
    if root.is_file():
        behavior = load_behavior(root)
        return Catalog([behavior], root=str(root), sources=[str(root)])
    if not root.is_dir():
        raise CatalogError([Issue(_display(root), 0, 0, "", "no such catalog folder or file")])
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
    return edit_index_entry(root, behavior_id, "enabled", enabled)
