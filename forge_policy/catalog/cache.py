"""The compiled catalog cache (SPEC §10): normalised specs in JSON, so the hook never parses YAML.

:meth:`forge_policy.config.env.Config.cache_paths` places it in ``<root>/runtime/`` (else the user's
cache folder), one file per catalog folder.

A cache file holds the normalised specs of one catalog folder (what
:func:`forge_policy.catalog.loader.read_catalog` returns) and, for every file they came from,
its stat identity (``st_mtime_ns``, ``st_size``, ``st_ino``, ``st_dev``, ``st_ctime_ns``) and
sha256::

    {"format": 1, "forge_policy": "0.1.0", "root": "/abs/catalog",
     "sources": [{"path": "/abs/catalog/index.yaml", "stat": [M, S, I, D, C], "sha256": "…"}],
     "specs": [{…normalised spec…}, …]}

The cache is used only when every source still matches: a file whose stat differs is re-hashed,
and a same-hash file only refreshes its stat. ``index.yaml`` is a source, so a new behavior
(which needs an index entry) invalidates it; so do the modules that turn YAML into specs
(:data:`LOADER_FILES`), so a new validator never trusts specs an older one wrote. A cache whose
catalog sources are not exactly the index and one file per spec it holds, or that misses a loader
file, is never trusted either. A damaged cache, one from another version, or one for another
folder is ignored and rebuilt from the YAML, which stays the only source of truth: the cache is
never the only copy. Writes are atomic (temp file + ``os.replace``); a cache that cannot be
written is skipped, never an error.

The document is the attrs class :class:`CacheDocument`, read and written by a converter of this
module's own (cattrs, imported on first use). Its hooks are strict: a field of the wrong JSON
type (a string for a number, a number for a path) fails the structuring, and a cache that does
not structure is rebuilt from the YAML, never read as an empty catalog.

This module imports neither ruamel.yaml nor :mod:`pathlib`: a warm hook only stats, reads JSON,
structures it and compiles the specs.

>>> import tempfile, os
>>> cache = CatalogCache([os.path.join(tempfile.mkdtemp(), "catalog-cache.json")])
>>> cache.load(BUILTIN_DIR).ids[0], cache.status
('protect-governance', 'rebuilt')
>>> cache.load(BUILTIN_DIR).ids[0], cache.status
('protect-governance', 'hit')
"""

from __future__ import annotations

import contextlib
import json
import os

# typing is loaded by attrs already; cattrs resolves these annotations at run time
from typing import Any

import attrs

from forge_policy import __version__
from forge_policy.catalog.behavior import Behavior
from forge_policy.catalog.catalog import BEHAVIOR_FILE, INDEX_FILE, Catalog
from forge_policy.errors import CatalogError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    import cattrs

FORMAT = 1
_HERE = os.path.dirname(os.path.abspath(__file__))
#: The folder of the catalog shipped with forge_policy.
BUILTIN_DIR = os.path.join(_HERE, "builtin")
_PACKAGE = os.path.dirname(_HERE)
#: The code that turns YAML into specs (parsing, structuring, the vocabularies and rules it
#: checks against, tuning): a change to any of it invalidates every cache.
LOADER_FILES = (
    *(
        os.path.join(_HERE, name)
        for name in (
            "yaml_io.py",
            "schema.py",
            "structuring.py",
            "loader.py",
            "tuning.py",
            "dsl.py",
            "behavior.py",
            "cache.py",  # it structures the cache document: a new reader never trusts an old one
        )
    ),
    *(os.path.join(_PACKAGE, name) for name in ("levels.py", "events.py")),
)
MAX_CACHE_BYTES = 32 * 1024 * 1024


def _identity(st: os.stat_result) -> tuple[int, ...]:
    # st_ctime_ns too: no one can set it, so an edit that restores the mtime is still seen
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, st.st_ctime_ns)


def _sha256(path: str) -> str:
    import hashlib  # only on a cache miss or a changed stat: hashlib loads OpenSSL

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


@attrs.frozen
class SourceRecord:
    """One file the specs came from: its path, stat identity and sha256."""

    path: str
    stat: tuple[int, ...]
    sha256: str


@attrs.frozen
class CacheDocument:
    """A cache file: the normalised specs of one catalog folder and every file they depend on.

    >>> doc = CacheDocument(FORMAT, __version__, "/c", (SourceRecord("/c/index.yaml", (1, 2),
    ...                     "ab"),), ({"id": "x"},))
    >>> _structure(_unstructure(doc)) == doc
    True
    >>> _structure({**_unstructure(doc), "format": "1"}) is None  # a string is not a number
    True
    """

    format: int
    forge_policy: str
    root: str
    sources: tuple[SourceRecord, ...]
    specs: tuple[dict[str, Any], ...]


def _fingerprint(path: str) -> SourceRecord:
    """Stat and hash of one file; the stat is taken first so a change in between is caught."""
    identity = _identity(os.stat(path))
    return SourceRecord(path, identity, _sha256(path))


_CONVERTER: list[cattrs.Converter] = []


def _converter() -> cattrs.Converter:
    """This module's converter, built on first use (cattrs stays off ``import`` of the module)."""
    if not _CONVERTER:
        import cattrs

        # no detailed validation: why a cache does not structure is never shown, it is rebuilt
        conv = cattrs.Converter(detailed_validation=False)
        conv.register_structure_hook(str, _exactly(str))
        conv.register_structure_hook(int, _exactly(int))
        conv.register_structure_hook_factory(_is_tuple, lambda cls: _list_as_tuple(cls, conv))
        _CONVERTER.append(conv)
    return _CONVERTER[0]


def _is_tuple(cls: object) -> bool:
    return getattr(cls, "__origin__", None) is tuple


def _list_as_tuple(cls: Any, conv: cattrs.Converter) -> Callable[[object, object], object]:
    """``tuple[X, ...]`` from a JSON array only: cattrs' default iterates anything, so a mapping
    (``"stat": {}``) would pass as an empty tuple."""
    item = cls.__args__[0]
    structure_item = conv.get_structure_hook(item)

    def structure(value: object, _type: object) -> object:
        if type(value) is not list:
            raise TypeError(f"expected a list, got {type(value).__name__}")
        return tuple(structure_item(element, item) for element in value)

    return structure


def _exactly(kind: type) -> Callable[[object, object], object]:
    """A strict hook: cattrs' default turns ``5`` into ``"5"``, and ``"5"`` or ``True`` into 5."""

    def check(value: object, _type: object) -> object:
        if type(value) is not kind:
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        return value

    return check


def _structure(data: object) -> CacheDocument | None:
    """The document of this format and version in ``data``, or None (malformed or foreign)."""
    try:
        doc = _converter().structure(data, CacheDocument)
    except Exception:  # any shape cattrs cannot structure: the cache is rebuilt
        return None
    if doc.format != FORMAT or doc.forge_policy != __version__:
        return None
    return doc


def _unstructure(doc: CacheDocument) -> dict[str, Any]:
    data: dict[str, Any] = _converter().unstructure(doc)
    return data


class CatalogCache:
    """Loads catalog folders through a JSON cache at the first writable path of ``paths``.

    ``status`` tells what the last :meth:`load` did: ``hit`` (cache used as is), ``refreshed``
    (cache used; some files had a new stat but the same content, so the stats were rewritten),
    ``rebuilt`` (YAML parsed, cache written), ``unwritable`` (YAML parsed, no path could be
    written) or ``uncached`` (a single behavior file, which is never cached).
    """

    __slots__ = ("paths", "status")

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = tuple(paths)
        self.status = ""

    def load(self, root: str) -> Catalog:
        """The catalog at ``root`` (a folder with ``index.yaml``, or one behavior file).

        Raises :class:`~forge_policy.CatalogError` (every issue, with file:line) when the YAML
        does not load; a broken catalog is never cached.
        """
        root = os.path.abspath(root)
        if os.path.isfile(root):
            from forge_policy.catalog.loader import load_catalog

            self.status = "uncached"
            return load_catalog(root)
        if not os.path.isdir(root):
            from forge_policy.errors import Issue

            raise CatalogError([Issue(root, 0, 0, "", "no such catalog folder or file")])
        for path in self.paths:
            doc = _read(path)
            if doc is None or doc.root != root:
                continue
            catalog, stale = _use(doc)
            if catalog is None:
                continue
            if stale:
                refreshed = attrs.evolve(doc, sources=stale)
                self.status = "refreshed" if self._write(refreshed, first=path) else "hit"
            else:
                self.status = "hit"
            return catalog
        return self._rebuild(root)

    def _rebuild(self, root: str) -> Catalog:
        from pathlib import Path

        from forge_policy.catalog.loader import read_catalog

        before = _snapshot(_candidates(root))
        specs, sources, issues = read_catalog(Path(root))
        if issues:
            raise CatalogError(issues)
        read = [os.path.abspath(s) for s in sources]
        catalog = _compile(specs, root, read)
        loader = [path for path in LOADER_FILES if path in before]
        fingerprints = [before.get(path) for path in [*read, *loader]]
        recorded = [fp for fp in fingerprints if fp is not None and _still(fp)]
        if len(recorded) == len(fingerprints):
            doc = CacheDocument(FORMAT, __version__, root, tuple(recorded), tuple(specs))
            self.status = "rebuilt" if self._write(doc) else "unwritable"
        else:  # a file changed while it was read: use what was read, cache nothing
            self.status = "unwritable"
        return catalog

    def _write(self, doc: CacheDocument, first: str | None = None) -> bool:
        """Write atomically to ``first`` or else the first writable path; False if none."""
        try:
            text = json.dumps(_unstructure(doc), ensure_ascii=False, separators=(",", ":"))
            data = text.encode("utf-8")
        except (TypeError, ValueError):
            return False
        return any(_write_atomic(path, data) for path in ([first] if first else self.paths))


def _candidates(root: str) -> list[str]:
    """Every file a load of ``root`` may read: the index, each ``*/behavior.yaml``, the loader."""
    found = [os.path.join(root, INDEX_FILE)]
    try:
        names = sorted(os.listdir(root))
    except OSError:
        names = []
    for name in names:
        path = os.path.join(root, name, BEHAVIOR_FILE)
        if os.path.isfile(path):
            found.append(path)
    return [*found, *LOADER_FILES]


def _snapshot(paths: Iterable[str]) -> dict[str, SourceRecord]:
    result: dict[str, SourceRecord] = {}
    for path in paths:
        try:
            result[path] = _fingerprint(path)
        except OSError:
            continue
    return result


def _still(fingerprint: SourceRecord) -> bool:
    try:
        return _identity(os.stat(fingerprint.path)) == fingerprint.stat
    except OSError:
        return False


def _read(path: str) -> CacheDocument | None:
    """A cache document of this format and version, or None (missing, damaged, foreign)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CACHE_BYTES + 1)
        if len(data) > MAX_CACHE_BYTES:
            return None
        raw = json.loads(data)
    except (OSError, ValueError, RecursionError):
        return None
    return _structure(raw)


def _use(doc: CacheDocument) -> tuple[Catalog | None, tuple[SourceRecord, ...] | None]:
    """Check every source; return the compiled catalog (None if invalid) and, when some stats
    changed but no content did, the refreshed source list to write back."""
    refreshed: list[SourceRecord] = []
    stale = False
    for source in doc.sources:
        try:
            now = _identity(os.stat(source.path))
            if now != source.stat:
                if _sha256(source.path) != source.sha256:
                    return None, None
                stale = True
                source = attrs.evolve(source, stat=now)
        except OSError:
            return None, None
        refreshed.append(source)
    paths = [source.path for source in refreshed]
    if not _covers(doc, paths):
        return None, None
    try:
        catalog = _compile(doc.specs, doc.root, [p for p in paths if p not in LOADER_FILES])
    except Exception:  # specs that structure but do not compile: rebuild from the YAML
        return None, None
    return catalog, tuple(refreshed) if stale else None


def _covers(doc: CacheDocument, paths: list[str]) -> bool:
    """Whether the recorded sources are exactly the files this version reads to build the specs.

    The catalog files must be the index and one behavior file per spec, in that order (what
    :func:`~forge_policy.catalog.loader.read_catalog` reads): a cache that lost a source entry,
    or lost specs whose files it still records (which would load as a smaller, even empty,
    catalog), is not trusted. Nor is one written by a loader with fewer files (same version
    number, e.g. an editable install).
    """
    needed = [os.path.join(doc.root, INDEX_FILE)]
    for spec in doc.specs:
        behavior_id = spec.get("id")
        if not isinstance(behavior_id, str):
            return False
        needed.append(os.path.join(doc.root, behavior_id, BEHAVIOR_FILE))
    if [path for path in paths if path not in LOADER_FILES] != needed:
        return False
    recorded = set(paths)
    return all(path in recorded or not os.path.exists(path) for path in LOADER_FILES)


def _compile(specs: Sequence[dict[str, Any]], root: str, sources: list[str]) -> Catalog:
    return Catalog([Behavior(spec) for spec in specs], root=root, sources=sources)


def _write_atomic(path: str, data: bytes) -> bool:
    folder = os.path.dirname(path)
    tmp = f"{path}.tmp-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        if not os.path.isdir(folder):
            os.makedirs(folder, exist_ok=True)
            _ignore_in_git(folder)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, path)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False


def _ignore_in_git(folder: str) -> None:
    """A runtime folder made here holds only machine state: keep it out of git."""
    if os.path.basename(folder) != "runtime":
        return
    with (
        contextlib.suppress(OSError),
        open(os.path.join(folder, ".gitignore"), "x", encoding="utf-8") as handle,
    ):
        handle.write("# forge_policy runtime state and caches: never committed\n*\n")
