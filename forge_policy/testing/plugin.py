"""The pytest plugin (registered through the ``pytest11`` entry point): ``forge_clock``,
``forge_catalog``, ``forge_evaluator`` and ``forge_real_client`` (a real coding-agent client run
against a scripted model, :mod:`forge_policy.testing.real_client`).

Installed ``forge-policy`` makes these fixtures available to every test suite; nothing is
imported from the package until a fixture is used.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from forge_policy.testing.clock import FakeClock

if TYPE_CHECKING:
    from forge_policy.catalog.catalog import Catalog
    from forge_policy.engine.evaluator import Evaluator
    from forge_policy.stores.base import RuntimeStore

STORE_KINDS = ("memory", "file", "sqlite")


class CatalogFactory:
    """Builds catalogs for one test: from YAML text or a dict (one behavior file's content),
    or from a path (a catalog folder with ``index.yaml``, or one behavior file).

    Text and dicts are written under the test's ``tmp_path`` and loaded by the same loader as
    production, so an invalid behavior raises :class:`~forge_policy.CatalogError` naming the
    field.

    >>> import tempfile
    >>> make = CatalogFactory(Path(tempfile.mkdtemp()))
    >>> make({"schema_version": "1", "id": "x"})
    Traceback (most recent call last):
    forge_policy.errors.CatalogError: catalog does not load: ...
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._made = 0

    def __call__(self, source: Any) -> Catalog:
        from forge_policy.catalog import load_catalog
        from forge_policy.catalog.catalog import Catalog

        if isinstance(source, Catalog):
            return source
        if isinstance(source, os.PathLike):
            return load_catalog(source)
        if isinstance(source, str):
            text = source
        elif isinstance(source, Mapping):
            text = json.dumps(source)  # JSON is YAML: the loader validates it like a file
        else:
            raise TypeError(
                "forge_catalog: expected YAML text, a dict, a path or a Catalog,"
                f" got {type(source).__name__}"
            )
        self._made += 1
        path = self.folder / f"catalog-{self._made}" / "behavior.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return load_catalog(path)


class EvaluatorFactory:
    """Builds evaluators for one test over the fake clock, closing their stores afterwards.

    ``catalog``: anything :class:`CatalogFactory` takes (default: the built-in catalog);
    ``store``: ``"memory"``, ``"file"`` or ``"sqlite"`` (a fresh file under ``tmp_path``) or a
    :class:`~forge_policy.RuntimeStore`; other keywords go to :class:`~forge_policy.Evaluator`
    (``audit``, ``profile``, ``ttl``, ``override_window``, ``facts``, …).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> make = EvaluatorFactory(folder, FakeClock(), CatalogFactory(folder))
    >>> ev = make(store="sqlite")
    >>> type(ev.store).__name__, ev.clock is make.clock
    ('SQLiteStore', True)
    >>> make.close()
    """

    def __init__(self, folder: Path, clock: FakeClock, catalogs: CatalogFactory) -> None:
        self.folder = folder
        self.clock = clock
        self.catalogs = catalogs
        self._opened: list[Any] = []

    def store(self, kind: str) -> RuntimeStore:
        """A fresh store of ``kind`` (closed when the test ends)."""
        if kind == "memory":
            from forge_policy.stores.memory import MemoryStore

            return MemoryStore()
        if kind not in STORE_KINDS:
            raise ValueError(
                f"forge_evaluator: store must be one of {', '.join(STORE_KINDS)}"
                f" or a RuntimeStore, got {kind!r}"
            )
        self.folder.mkdir(parents=True, exist_ok=True)
        made: RuntimeStore
        if kind == "file":
            from forge_policy.stores.file import FileStore

            made = FileStore(self.folder / f"state-{len(self._opened)}.json", fsync=False)
        else:
            from forge_policy.stores.sqlite import SQLiteStore

            made = SQLiteStore(self.folder / f"state-{len(self._opened)}.db")
        self._opened.append(made)
        return made

    def __call__(self, catalog: Any = None, *, store: Any = "memory", **settings: Any) -> Evaluator:
        from forge_policy.catalog import builtin_catalog
        from forge_policy.engine.evaluator import Evaluator

        chosen = builtin_catalog() if catalog is None else self.catalogs(catalog)
        backing = self.store(store) if isinstance(store, str) else store
        settings.setdefault("clock", self.clock)
        return Evaluator(chosen, store=backing, **settings)

    def close(self) -> None:
        for opened in self._opened:
            opened.close()


@pytest.fixture
def forge_clock() -> FakeClock:
    """A :class:`~forge_policy.testing.FakeClock` shared by this test's evaluators."""
    return FakeClock()


@pytest.fixture
def forge_catalog(tmp_path: Path) -> CatalogFactory:
    """A factory of catalogs: ``forge_catalog(yaml_text | dict | path)``."""
    return CatalogFactory(tmp_path / "forge-catalogs")


@pytest.fixture
def forge_evaluator(
    tmp_path: Path, forge_clock: FakeClock, forge_catalog: CatalogFactory
) -> Iterator[Callable[..., Evaluator]]:
    """A factory of evaluators: ``forge_evaluator(catalog, store="memory", **settings)``,
    on ``forge_clock``."""
    factory = EvaluatorFactory(tmp_path / "forge-stores", forge_clock, forge_catalog)
    yield factory
    factory.close()


@pytest.fixture
def forge_real_client_search() -> list[Path]:
    """Folders where ``forge_real_client`` looks for a client's program besides ``PATH``
    (override it in a ``conftest.py``, e.g. with a project-local ``node_modules/.bin``)."""
    return []


def open_real_client(client: str, folder: Path, **options: Any) -> Any:
    """A :class:`~forge_policy.testing.real_client.RealClientProject` in ``folder``, or a skip
    naming what is missing when the client is not installed (for a fixture of wider scope than
    ``forge_real_client``'s: close it yourself)."""
    from forge_policy.testing.clients import ClientMissing
    from forge_policy.testing.real_client import RealClientProject

    try:
        return RealClientProject(client, folder, **options)
    except ClientMissing as missing:
        pytest.skip(str(missing))


@pytest.fixture
def forge_real_client(
    tmp_path: Path, forge_real_client_search: list[Path]
) -> Iterator[Callable[..., Any]]:
    """A factory of projects run by a real client against a scripted model:
    ``forge_real_client("claude-code", init_args=("--no-worker",), environ={...})`` returns a
    :class:`~forge_policy.testing.real_client.RealClientProject`; ``.run(turns)`` runs the
    client once. A client that is not installed skips the test with the reason; every project
    (its model, its worker) is stopped when the test ends."""
    made: list[Any] = []

    def make(client: str = "claude-code", **options: Any) -> Any:
        options.setdefault("search", forge_real_client_search)
        made.append(open_real_client(client, tmp_path / f"real-client-{len(made)}", **options))
        return made[-1]

    yield make
    for project in made:
        project.close()
