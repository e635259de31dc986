"""The project config file, ``<FORGE_ROOT>/config.yaml`` (default ``.forge/config.yaml``).

Optional; today it holds the git-side testing settings::

    testing:
      tdd_mode: strict          # standard (default) | focused | strict
      production_globs: ["src/**/*.py", "*.go"]     # default: Python, Go, JS/TS sources
      test_globs: ["test_*.py", "*_test.go"]         # default: common test file names
      planning_globs: ["tasks.md"]                   # default: tasks.md anywhere

Globs use ``.gitignore`` syntax on repository-relative paths: a glob without ``/`` matches a
file name at any depth, one with ``/`` is anchored at the repository root, ``**`` spans
directories. Under ``tdd_mode: strict``, ``forge-policy git pre-commit`` refuses a commit that
stages production files with neither a test file nor a planning file (behavior ``strict-tdd``).

The file is parsed with ruamel.yaml only when a git hook asks for it, and cached by its stat
identity. Unknown keys are ignored (other tools may share the file); a wrong type or value is an
error naming the file, line and key.

>>> settings = TddSettings()
>>> settings.tdd_mode, settings.test_globs[:3]
('standard', ('test_*.py', '*_test.py', '*_test.go'))
"""

from __future__ import annotations

import os

from forge_policy.errors import ProjectConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

CONFIG_FILE = "config.yaml"
TDD_MODES = ("standard", "focused", "strict")
# fmt: off
DEFAULT_PRODUCTION_GLOBS = ("*.py", "*.pyi", "*.go", "*.js", "*.jsx", "*.mjs", "*.cjs", "*.ts",
                            "*.tsx", "*.mts", "*.cts")
DEFAULT_TEST_GLOBS = ("test_*.py", "*_test.py", "*_test.go", "*.test.js", "*.test.jsx",
                      "*.test.mjs", "*.test.cjs", "*.test.ts", "*.test.tsx", "*.spec.*",
                      "conftest.py", "**/tests/**", "**/__tests__/**")
# fmt: on
DEFAULT_PLANNING_GLOBS = ("tasks.md",)
_MAX_BYTES = 1 << 20


class TddSettings:
    """``testing:`` of the project config."""

    __slots__ = ("planning_globs", "production_globs", "tdd_mode", "test_globs")

    def __init__(
        self,
        *,
        tdd_mode: str = "standard",
        production_globs: Iterable[str] = DEFAULT_PRODUCTION_GLOBS,
        test_globs: Iterable[str] = DEFAULT_TEST_GLOBS,
        planning_globs: Iterable[str] = DEFAULT_PLANNING_GLOBS,
    ) -> None:
        self.tdd_mode = tdd_mode
        self.production_globs = tuple(production_globs)
        self.test_globs = tuple(test_globs)
        self.planning_globs = tuple(planning_globs)

    def __repr__(self) -> str:
        return f"<TddSettings tdd_mode={self.tdd_mode}>"


class ProjectConfig:
    """The parsed project config; :attr:`path` is ``""`` when there is no file."""

    __slots__ = ("path", "testing")

    def __init__(self, path: str = "", testing: TddSettings | None = None) -> None:
        self.path = path
        self.testing = testing or TddSettings()


_cache: dict[str, tuple[tuple[int, int, int], ProjectConfig]] = {}


def load_project_config(forge_root: str) -> ProjectConfig:
    """``<forge_root>/config.yaml`` parsed, or the defaults when the file does not exist.

    Raises :class:`ProjectConfigError` for unreadable or invalid content.

    >>> load_project_config("/nonexistent/.forge").testing.tdd_mode
    'standard'
    """
    path = os.path.join(forge_root, CONFIG_FILE)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return ProjectConfig()
    except OSError as exc:
        raise ProjectConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    identity = (info.st_mtime_ns, info.st_size, info.st_ino)
    cached = _cache.get(path)
    if cached is not None and cached[0] == identity:
        return cached[1]
    config = _parse(path, info.st_size)
    _cache[path] = (identity, config)
    return config


def _parse(path: str, size: int) -> ProjectConfig:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    if size > _MAX_BYTES:
        raise ProjectConfigError(f"{path}: file too large ({size} bytes, at most {_MAX_BYTES})")
    try:
        with open(path, encoding="utf-8") as handle:
            document = YAML(typ="rt").load(handle.read())
    except UnicodeDecodeError as exc:
        raise ProjectConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        raise ProjectConfigError(f"{path}{where}: invalid YAML: {exc.problem}") from None
    except (YAMLError, OSError) as exc:
        raise ProjectConfigError(f"{path}: cannot read: {exc}") from None
    if document is None:
        return ProjectConfig(path)
    if not isinstance(document, dict):
        raise ProjectConfigError(f"{path}: expected a mapping at the top level")
    testing = document.get("testing")
    if testing is None:
        return ProjectConfig(path)
    if not isinstance(testing, dict):
        raise ProjectConfigError(
            f"{path}:{_line(document, 'testing')}: testing: expected a mapping"
        )
    mode = testing.get("tdd_mode", "standard")
    if not isinstance(mode, str) or mode.strip().lower() not in TDD_MODES:
        raise ProjectConfigError(
            f"{path}:{_line(testing, 'tdd_mode')}: testing.tdd_mode: unknown value {mode!r}: "
            f"expected one of {', '.join(TDD_MODES)}"
        )
    globs = {
        key: _globs(path, testing, key, default)
        for key, default in (
            ("production_globs", DEFAULT_PRODUCTION_GLOBS),
            ("test_globs", DEFAULT_TEST_GLOBS),
            ("planning_globs", DEFAULT_PLANNING_GLOBS),
        )
    }
    return ProjectConfig(path, TddSettings(tdd_mode=mode.strip().lower(), **globs))


def _globs(path: str, testing: Any, key: str, default: tuple[str, ...]) -> tuple[str, ...]:
    value = testing.get(key)
    if value is None:
        return default
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ProjectConfigError(
            f"{path}:{_line(testing, key)}: testing.{key}: expected a list of glob strings"
        )
    return tuple(str(v).strip() for v in value)


def _line(mapping: Any, key: str) -> int:
    """The 1-based line of ``key`` in a ruamel mapping (0 when unknown)."""
    try:
        return int(mapping.lc.key(key)[0]) + 1
    except (AttributeError, KeyError, TypeError, IndexError):
        return 0
