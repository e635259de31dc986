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

The file is parsed (through :mod:`forge_policy.catalog.yaml_io`) and structured by cattrs into
the attrs classes below only when a git hook asks for it, and cached by its stat identity.
Unknown keys are ignored (other tools may share the file); a wrong type or value is an error
naming the file, line and key, every such problem at once.

>>> settings = TddSettings()
>>> settings.tdd_mode, settings.test_globs[:3]
('standard', ('test_*.py', '*_test.py', '*_test.go'))
"""

from __future__ import annotations

import os

import attrs

from forge_policy.errors import ProjectConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
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


@attrs.frozen
class TddSettings:
    """``testing:`` of the project config.

    >>> TddSettings(tdd_mode="strict").planning_globs
    ('tasks.md',)
    """

    tdd_mode: str = "standard"
    production_globs: tuple[str, ...] = attrs.field(
        default=DEFAULT_PRODUCTION_GLOBS, converter=tuple
    )
    test_globs: tuple[str, ...] = attrs.field(default=DEFAULT_TEST_GLOBS, converter=tuple)
    planning_globs: tuple[str, ...] = attrs.field(default=DEFAULT_PLANNING_GLOBS, converter=tuple)

    def __repr__(self) -> str:
        return f"<TddSettings tdd_mode={self.tdd_mode}>"


@attrs.frozen
class ProjectConfig:
    """The parsed project config; :attr:`path` is ``""`` when there is no file.

    >>> ProjectConfig().testing.tdd_mode
    'standard'
    """

    path: str = ""
    testing: TddSettings = attrs.field(factory=TddSettings)


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
    from forge_policy.catalog.yaml_io import read_yaml

    if size > _MAX_BYTES:
        raise ProjectConfigError(f"{path}: file too large ({size} bytes, at most {_MAX_BYTES})")
    document, issues = read_yaml(path, path)
    if issues:
        raise ProjectConfigError("\n".join(str(issue) for issue in issues))
    if document is None:
        return ProjectConfig(path)
    if not isinstance(document, dict):
        raise ProjectConfigError(f"{path}: expected a mapping at the top level")
    testing = document.get("testing")
    if testing is None:
        return ProjectConfig(path)
    return ProjectConfig(path, _structure_testing(path, document, testing))


def _structure_testing(path: str, document: Any, testing: Any) -> TddSettings:
    """``testing:`` structured by cattrs; every problem at once, each as ``file:line: key: …``."""
    import cattrs

    from forge_policy.catalog.yaml_io import key_line

    if not isinstance(testing, dict):
        raise ProjectConfigError(
            f"{path}:{key_line(document, 'testing')}: testing: expected a mapping"
        )
    converter = _converter()
    try:
        settings: TddSettings = converter.structure(
            {k: v for k, v in testing.items() if v is not None}, TddSettings
        )
    except cattrs.ClassValidationError as exc:
        problems = []
        for leaf in exc.exceptions:
            names = [n.name for n in getattr(leaf, "__notes__", ()) if hasattr(n, "name")]
            key = names[0] if names else ""
            problems.append(f"{path}:{key_line(testing, key)}: testing.{key}: {leaf.args[0]}")
        raise ProjectConfigError("\n".join(problems)) from None
    return settings


def _tdd_mode(value: object, _: object) -> str:
    if not isinstance(value, str) or value.strip().lower() not in TDD_MODES:
        raise ValueError(f"unknown value {value!r}: expected one of {', '.join(TDD_MODES)}")
    return value.strip().lower()


def _globs(value: object, _: object) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError("expected a list of glob strings")
    return tuple(str(v).strip() for v in value)


def _converter() -> Any:
    """A converter of the ``testing`` section (built per parse: parses are rare and cached)."""
    import cattrs
    from cattrs.gen import make_dict_structure_fn, override

    converter = cattrs.Converter(detailed_validation=True)
    globs = override(struct_hook=_globs)
    hook = make_dict_structure_fn(
        TddSettings,
        converter,
        tdd_mode=override(struct_hook=_tdd_mode),
        production_globs=globs,
        test_globs=globs,
        planning_globs=globs,
    )
    converter.register_structure_hook(TddSettings, hook)
    return converter
