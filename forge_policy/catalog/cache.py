"""The compiled catalog cache (SPEC §10): normalised specs in JSON, so the hook never parses YAML.

:meth:`forge_policy.config.env.Config.cache_paths` places it in ``<root>/runtime/``, one file
per catalog folder (and, for the built-in catalog only, also in the user's cache folder).

What a cache file is
--------------------
A header line and a JSON body::

    forge-policy-catalog-cache 3 <HMAC-SHA256 of the body, hex>
    {"format": 3, "forge_policy": "0.1.0", "root": "/abs/catalog",
     "sources": [{"path": "/abs/catalog/index.yaml", "stat": [M, S, I, D, C], "sha256": "…"},
                 {"path": "/abs/catalog/<id>/behavior.yaml", …}, …, {"path": "…/loader.py", …}],
     "specs": [{…normalised spec…}, …],
     "literals": [["git\\s+push", false, [["git", "push"]]], [".*", null], …]}

``sources`` are the files :func:`~forge_policy.catalog.loader.read_catalog` read, in its order
(the index, then the behavior file of every entry the index lists), then the modules that turn
YAML into specs (:data:`LOADER_FILES`); each with its stat identity (``st_mtime_ns``,
``st_size``, ``st_ino``, ``st_dev``, ``st_ctime_ns``) and sha256. ``specs`` are what those
files gave. ``literals`` are, for each regex of the specs, the literals every match needs
(:func:`~forge_policy.catalog.prefilter.derive_literals`, ``null``: none), derived from the
pattern when the cache is written, so a cold hook does not read its patterns again; the
prefilter is one of the loader modules, and ``forge-policy validate`` derives them anew and
rebuilds a cache whose literals differ. The header seals the body with a key of the folder
the cache lives in (``catalog-cache.key`` beside it: 32 random bytes, mode 0600, made on the
first write).

Why a hit is sound
------------------
A cache is a memo of one pure function, *YAML files → specs*, so it is right exactly when (1)
its specs are what this loader derived, (2) from exactly the files the catalog folder now
makes the catalog of, (3) whose content is what it was then. The loader checks each one on
every hit, cheaply (no YAML is parsed):

1. **The specs were derived by this loader.** Checking that by re-deriving them is the YAML
   parse the cache exists to avoid, and a digest anyone can compute (sha256 of sources +
   specs) proves nothing: whoever writes a cache can write a matching digest. So the body is
   sealed with a secret key: a cache written by anything but this code (an agent's ``Write``
   or ``echo >`` into ``.forge/runtime/``, a copy from another project, which has another key)
   does not verify and is ignored. Forging a seal means reading the key and computing an HMAC
   over a crafted body: deliberate code execution as the user, which SPEC §9's threat model
   leaves to a container boundary; editing a governance file through the agent's tools does
   not get there. Deleting or replacing the key only invalidates every cache (rebuilt). A
   genuine cache saved and put back later is right for the files it names, which (3) checks.
2. **The file set is the folder's own.** The first source must be ``<root>/index.yaml`` (a
   path the loader decides, not the cache), ``root`` must be the folder asked for, the next
   sources one ``<root>/<id>/behavior.yaml`` per spec in order, and the rest every loader
   module this install has. The list of behavior files is the loader's own derivation from the
   index content recorded beside it (1), and that content is checked now (3), so it is the
   list a parse of the current index would give, without parsing it. A cache that covers
   anything else (a lost source entry, lost specs, a loader with fewer modules) is ignored.
3. **Every source is unchanged.** Its current stat identity equals the recorded one, else its
   current sha256 equals the recorded one (then only the stat is refreshed). The identity is a
   safe shortcut because ``st_ctime_ns`` cannot be set by an unprivileged process: ``touch -d``
   and ``os.utime`` restore an mtime but move the ctime to now, a replaced file has a new inode
   and ctime. Its one gap is a write in the same timestamp tick as the stat (a "racily clean"
   file, as git calls it), so a file changed less than :data:`RACY_NS` before its stat is
   recorded with no identity (``[]``) and is hashed on each load until it has settled.

The ``forge_policy`` version and :data:`FORMAT` are in the body, so another version's cache
is never used, and the loader modules are sources, so an edited loader (an editable install)
never trusts specs an older one wrote. A damaged, foreign or unsealed cache is ignored and
rebuilt from the YAML, which stays the only source of truth: the cache is never the only copy.
Each ignored cache is named with the reason in :attr:`CatalogCache.ignored`, which ``forge-policy
validate`` prints. Writes are atomic (temp file + ``os.replace``); a cache that cannot be
written is skipped, never an error.

The body is the named tuple :class:`CacheDocument` (issue 28: an attrs class cost every hook
process its generated methods; a value, compared and shown alike), read by a strict
structuring function of this module's own (the hook reads the cache on every call: a cattrs
converter cost it ~10 ms of imports and hook compilation). A field of the wrong JSON type (a
string for a number, a number for a path) fails the structuring, and a cache that does not
structure is rebuilt from the YAML, never read as an empty catalog.

This module imports neither ruamel.yaml, :mod:`pathlib` nor :mod:`hashlib` (which loads
OpenSSL): a warm hook stats, reads the key and the cache, checks the seal, structures the JSON
and compiles the specs.

>>> import tempfile, os
>>> cache = CatalogCache([os.path.join(tempfile.mkdtemp(), "catalog-cache.json")])
>>> cache.load(BUILTIN_DIR).ids[0], cache.status
('protect-governance', 'rebuilt')
>>> cache.load(BUILTIN_DIR).ids[0], cache.status
('protect-governance', 'hit')
>>> with open(cache.paths[0], "w") as forged:  # an unsealed cache with no behavior at all
...     _ = forged.write('{"format":2,"forge_policy":"0.1.0","root":"/","sources":[],"specs":[]}')
>>> len(cache.load(BUILTIN_DIR)) > 0, cache.status, cache.ignored[0][1]
(True, 'rebuilt', 'not sealed by forge-policy (no header line)')
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time

# typing is loaded by attrs already
from typing import Any, NamedTuple, TypeVar

from forge_policy import __version__
from forge_policy.catalog.behavior import Behavior
from forge_policy.catalog.catalog import BEHAVIOR_FILE, INDEX_FILE, Catalog
from forge_policy.catalog.dsl import matcher_kind
from forge_policy.catalog.prefilter import Known, derive_literals, remember
from forge_policy.errors import CatalogError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

_T = TypeVar("_T")

#: 3: the body also holds the literals each regex needs (``literals``); a format-2 cache lacks
#: them and is ignored (its header names the old format)
FORMAT = 3
#: The first word of a cache file's header line.
MAGIC = b"forge-policy-catalog-cache"
#: The key file beside every cache file of a folder.
KEY_FILE = "catalog-cache.key"
KEY_BYTES = 32
#: A file changed less than this long before its stat is never trusted by its stat alone.
RACY_NS = 2_000_000_000
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
            "prefilter.py",  # it derives the literals the cache stores for each regex
            "cache.py",  # it structures the cache document: a new reader never trusts an old one
        )
    ),
    *(os.path.join(_PACKAGE, name) for name in ("levels.py", "events.py")),
)
MAX_CACHE_BYTES = 32 * 1024 * 1024


def _identity(st: os.stat_result) -> tuple[int, ...]:
    # st_ctime_ns too: no one can set it, so an edit that restores the mtime is still seen
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, st.st_ctime_ns)


def _settled(identity: tuple[int, ...], now_ns: int) -> tuple[int, ...]:
    """``identity``, or ``()`` when the file changed too recently for it to prove anything (a
    later write in the same timestamp tick would keep it); a future mtime never settles."""
    mtime, ctime = identity[0], identity[4]
    return identity if now_ns - max(mtime, ctime) >= RACY_NS else ()


_SHA256: list[Any] = []


def _new_sha256(data: bytes = b"") -> Any:
    """A sha256 object from the interpreter's builtin module (:mod:`hashlib` loads OpenSSL)."""
    if not _SHA256:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]  # 3.12+
        except ImportError:
            try:
                from _sha256 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
            except ImportError:  # pragma: no cover - an interpreter without the builtin
                from hashlib import sha256
        _SHA256.append(sha256)
    return _SHA256[0](data)


def _sha256(path: str) -> str:
    digest = _new_sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    hexdigest: str = digest.hexdigest()
    return hexdigest


def seal(key: bytes, body: bytes) -> str:
    """HMAC-SHA256 of ``body`` under ``key``, in hex (RFC 2104, on the builtin sha256).

    >>> seal(b"key", b"The quick brown fox jumps over the lazy dog")[:16]
    'f7bc83f430538424'
    """
    block = key.ljust(64, b"\0") if len(key) <= 64 else _new_sha256(key).digest().ljust(64, b"\0")
    inner = _new_sha256(bytes(b ^ 0x36 for b in block) + body).digest()
    mac: str = _new_sha256(bytes(b ^ 0x5C for b in block) + inner).hexdigest()
    return mac


def _same(a: str, b: str) -> bool:
    from _operator import _compare_digest  # constant time; hmac's imports OpenSSL

    return bool(_compare_digest(a.encode("ascii", "replace"), b.encode("ascii", "replace")))


class SourceRecord(NamedTuple):
    """One file the specs came from: its path, stat identity (``()``: hash it) and sha256."""

    path: str
    stat: tuple[int, ...]
    sha256: str


class CacheDocument(NamedTuple):
    """A cache body: the normalised specs of one catalog folder and every file they depend on.

    >>> doc = CacheDocument(FORMAT, __version__, "/c", (SourceRecord("/c/index.yaml", (1, 2),
    ...                     "ab"),), ({"id": "x"},))
    >>> _structure(_unstructure(doc)) == doc
    True
    >>> _structure({**_unstructure(doc), "format": "2"}) is None  # a string is not a number
    True
    >>> doc = doc._replace(literals=(("git", ((("git",),), False)), (".", None)))
    >>> _structure(_unstructure(doc)) == doc
    True
    >>> _structure({**_unstructure(doc), "literals": [["x", False, []]]}) is None  # refuses all
    True
    """

    format: int
    forge_policy: str
    root: str
    sources: tuple[SourceRecord, ...]
    specs: tuple[dict[str, Any], ...]
    #: each regex of the specs (conditions, matchers) with what
    #: :func:`~forge_policy.catalog.prefilter.derive_literals` gave for it when written
    literals: tuple[tuple[str, Known], ...] = ()


def _structure(data: object) -> CacheDocument | None:
    """The document in ``data``, or None when it does not structure.

    Strict, by hand rather than by a cattrs converter (whose import and hook compilation the
    warm hook paid on every call, ~10 ms): every field present with exactly its JSON type (no
    ``5`` for ``"5"``, no ``"5"`` or ``true`` for 5), arrays for tuples (a mapping is not an
    empty tuple), objects for specs; unknown keys are ignored.

    >>> _structure({"format": 2, "forge_policy": "1", "root": "/c", "sources": {}, "specs": []})
    >>> _structure({"format": True, "forge_policy": "1", "root": "/c", "sources": [], "specs": []})
    """
    try:
        return CacheDocument(
            _exactly(int, _field(data, "format")),
            _exactly(str, _field(data, "forge_policy")),
            _exactly(str, _field(data, "root")),
            tuple(_source(item) for item in _exactly(list, _field(data, "sources"))),
            tuple(_exactly(dict, item) for item in _exactly(list, _field(data, "specs"))),
            tuple(_literals(item) for item in _exactly(list, _field(data, "literals"))),
        )
    except (TypeError, KeyError):  # any other shape: the cache is rebuilt
        return None


def _literals(data: object) -> tuple[str, Known]:
    """One ``[pattern, null]`` or ``[pattern, casefold, [[literal, ...], ...]]``. A requirement
    with no alternative, or an alternative with no literal, is refused: the first would refuse
    every text and :func:`~forge_policy.catalog.prefilter.derive_literals` gives neither."""
    entry = _exactly(list, data)
    if len(entry) == 2 and entry[1] is None:
        return _exactly(str, entry[0]), None
    if len(entry) != 3:
        raise TypeError("expected [pattern, null] or [pattern, casefold, alternatives]")
    alternatives = tuple(
        tuple(_exactly(str, literal) for literal in _exactly(list, alternative))
        for alternative in _exactly(list, entry[2])
    )
    if not alternatives or not all(alternatives):
        raise TypeError("an empty requirement")
    return _exactly(str, entry[0]), (alternatives, _exactly(bool, entry[1]))


def _source(data: object) -> SourceRecord:
    return SourceRecord(
        _exactly(str, _field(data, "path")),
        tuple(_exactly(int, n) for n in _exactly(list, _field(data, "stat"))),
        _exactly(str, _field(data, "sha256")),
    )


def _field(data: object, name: str) -> object:
    if type(data) is not dict:
        raise TypeError(f"expected an object, got {type(data).__name__}")
    return data[name]


def _exactly(kind: type[_T], value: object) -> _T:
    """``value`` when its type is exactly ``kind`` (``bool`` is not ``int``), else TypeError."""
    if type(value) is not kind:
        raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
    return value


def _unstructure(doc: CacheDocument) -> dict[str, Any]:
    """The JSON body of ``doc``: the inverse of :func:`_structure`."""
    return {
        "format": doc.format,
        "forge_policy": doc.forge_policy,
        "root": doc.root,
        "sources": [
            {"path": s.path, "stat": list(s.stat), "sha256": s.sha256} for s in doc.sources
        ],
        "specs": list(doc.specs),
        "literals": [
            [pattern, None]
            if known is None
            else [pattern, known[1], [list(alternative) for alternative in known[0]]]
            for pattern, known in doc.literals
        ],
    }


def _derived_literals(catalog: Catalog) -> tuple[tuple[str, Known], ...]:
    """Each regex of ``catalog`` (a condition's, a trigger's regex matcher), once, in order,
    with the literals a match needs, read from the pattern itself."""
    patterns: dict[str, None] = {}
    for behavior in catalog:
        for trigger in behavior.triggers:
            if matcher_kind(trigger.matcher) == "regex":
                patterns[trigger.matcher.strip()] = None
            for condition in trigger.conditions:
                if condition.regex is not None:
                    patterns[condition.regex.pattern] = None
    return tuple((pattern, derive_literals(pattern)) for pattern in patterns)


class Ignored(Exception):
    """Why a cache file is not used (its message)."""


class CatalogCache:
    """Loads catalog folders through a sealed JSON cache at the first writable path of ``paths``.

    ``status`` tells what the last :meth:`load` did: ``hit`` (cache used as is; a file changed
    too recently to trust its stat was hashed), ``refreshed`` (cache used; some files had a new
    stat but the same content, so the stats were rewritten), ``rebuilt`` (YAML parsed, cache
    written), ``unwritable`` (YAML parsed, no path could be written) or ``uncached`` (a single
    behavior file, which is never cached). ``ignored`` lists each existing cache file the last
    load did not use, with the reason; ``used`` is the cache file it used (``""``: none).
    """

    __slots__ = ("document", "ignored", "paths", "status", "used")

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = tuple(paths)
        self.status = ""
        self.used = ""
        self.ignored: list[tuple[str, str]] = []
        #: the document of the cache file the last load used (None: none)
        self.document: CacheDocument | None = None

    def load(self, root: str) -> Catalog:
        """The catalog at ``root`` (a folder with ``index.yaml``, or one behavior file).

        Raises :class:`~forge_policy.CatalogError` (every issue, with file:line) when the YAML
        does not load; a broken catalog is never cached.
        """
        root = os.path.abspath(root)
        self.ignored = []
        self.used = ""
        self.document = None
        if os.path.isfile(root):
            from forge_policy.catalog.loader import load_catalog

            self.status = "uncached"
            return load_catalog(root)
        if not os.path.isdir(root):
            from forge_policy.errors import Issue

            raise CatalogError([Issue(root, 0, 0, "", "no such catalog folder or file")])
        for path in self.paths:
            try:
                catalog, doc, refreshed = _use(path, root)
            except FileNotFoundError:
                continue
            except Ignored as why:
                self.ignored.append((path, str(why)))
                continue
            self.used = path
            self.document = doc
            if refreshed is not None:
                renewed = doc._replace(sources=refreshed)
                self.status = "refreshed" if self._write(renewed, first=path) else "hit"
            else:
                self.status = "hit"
            return catalog
        return self.rebuild(root)

    def check(self, root: str, parsed: Catalog) -> list[tuple[str, str]]:
        """Compare what a load of the folder ``root`` through the cache gives with ``parsed``
        (its YAML, loaded directly); return every cache file ignored, with the reason.

        A cache served whose specs differ from the YAML's, or whose literals differ from those
        its patterns need (only a forged seal gets there), is listed too, and the cache is
        rebuilt from the YAML.
        """
        cached = self.load(root)
        ignored = list(self.ignored)
        if self.used and [b.spec for b in cached] != [b.spec for b in parsed]:
            ignored.append((self.used, "its specs differ from the YAML's"))
            self.rebuild(root)
        elif self.document is not None and self.document.literals != _derived_literals(parsed):
            ignored.append((self.used, "its literals differ from those its patterns need"))
            self.rebuild(root)
        self.ignored = ignored
        return ignored

    def rebuild(self, root: str) -> Catalog:
        """The catalog at the folder ``root`` from its YAML, written to the cache."""
        from pathlib import Path

        from forge_policy.catalog.loader import read_catalog

        root = os.path.abspath(root)
        self.used = ""
        loader = [path for path in LOADER_FILES if os.path.exists(path)]
        # every file the parse may read, stat and hashed before it: a change while it reads
        # them moves a stat, which the recheck below sees
        before = {fp.path: fp for fp in _fingerprints([*_catalog_files(root), *loader])}
        specs, sources, issues = read_catalog(Path(root))
        if issues:
            raise CatalogError(issues)
        read = [os.path.abspath(s) for s in sources]
        catalog = _compile(specs, root, read)
        recorded = [before.get(path) for path in [*read, *loader]]
        if not all(fp is not None and _still(fp) for fp in recorded):
            self.status = "unwritable"  # a file changed while it was read: cache nothing
            return catalog
        now = time.time_ns()
        settled = tuple(
            fp._replace(stat=_settled(fp.stat, now)) for fp in recorded if fp is not None
        )
        literals = _derived_literals(catalog)
        remember(literals)  # over any a forged cache of this process gave (see check)
        doc = CacheDocument(FORMAT, __version__, root, settled, tuple(specs), literals)
        self.status = "rebuilt" if self._write(doc) else "unwritable"
        return catalog

    def _write(self, doc: CacheDocument, first: str | None = None) -> bool:
        """Seal and write atomically to ``first`` or else the first writable path."""
        try:
            text = json.dumps(_unstructure(doc), ensure_ascii=False, separators=(",", ":"))
            body = text.encode("utf-8")
        except (TypeError, ValueError):
            return False
        return any(_write_sealed(path, body) for path in ([first] if first else self.paths))


def _catalog_files(root: str) -> list[str]:
    """The index and every ``*/behavior.yaml`` of ``root``: all a parse of it may read."""
    found = [os.path.join(root, INDEX_FILE)]
    try:
        names = sorted(os.listdir(root))
    except OSError:
        names = []
    for name in names:
        path = os.path.join(root, name, BEHAVIOR_FILE)
        if os.path.isfile(path):
            found.append(path)
    return found


def _fingerprints(paths: Sequence[str]) -> list[SourceRecord]:
    """Stat and hash of each file (the stat first, so a change in between shows); a file that
    cannot be read is left out."""
    found: list[SourceRecord] = []
    for path in paths:
        try:
            identity = _identity(os.stat(path))
            found.append(SourceRecord(path, identity, _sha256(path)))
        except OSError:
            continue
    return found


def _still(fingerprint: SourceRecord) -> bool:
    try:
        return _identity(os.stat(fingerprint.path)) == fingerprint.stat
    except OSError:
        return False


def _use(path: str, root: str) -> tuple[Catalog, CacheDocument, tuple[SourceRecord, ...] | None]:
    """The catalog of the cache file at ``path`` for the folder ``root``, its document, and
    the sources to write back when only stats changed; :class:`Ignored` says why not."""
    linked = _linked_project_folder(path)
    if linked:
        raise Ignored(f"{linked} is a symlink: the cache would be read from outside the project")
    doc = _open(path)
    if doc.format != FORMAT or doc.forge_policy != __version__:
        raise Ignored(f"written by forge-policy {doc.forge_policy} (format {doc.format})")
    if doc.root != root:
        raise Ignored(f"for another catalog folder ({doc.root})")
    _cover(doc)
    refreshed = _check_sources(doc)
    catalog_files = [s.path for s in doc.sources[: len(doc.specs) + 1]]
    try:
        catalog = _compile(doc.specs, root, catalog_files)
    except Exception:  # specs that structure but do not compile: rebuild from the YAML
        raise Ignored("its specs do not compile") from None
    remember(doc.literals)  # sealed and of this loader: the hook need not read its regexes
    return catalog, doc, refreshed


def _open(path: str) -> CacheDocument:
    """The sealed document at ``path``; :class:`Ignored` unless its seal verifies under the key
    beside it, ``FileNotFoundError`` when there is no such file."""
    doc = _structure(_open_sealed(path, MAGIC, FORMAT, MAX_CACHE_BYTES))
    if doc is None:
        raise Ignored("sealed but malformed")
    return doc


def _open_sealed(path: str, magic: bytes, fmt: int, limit: int) -> object:
    """The JSON body of the file at ``path`` sealed with ``magic`` and format ``fmt`` (at most
    ``limit`` bytes) under the key of its folder; :class:`Ignored` says why not,
    ``FileNotFoundError`` when there is no such file. Shared with the last-good copies
    (:mod:`forge_policy.config.last_good`)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise Ignored(f"unreadable: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise Ignored(f"larger than {limit} bytes")
    header, newline, body = data.partition(b"\n")
    words = header.split(b" ")
    if not newline or len(words) != 3 or words[0] != magic:
        raise Ignored("not sealed by forge-policy (no header line)")
    if words[1] != str(fmt).encode():
        raise Ignored(f"format {words[1].decode('ascii', 'replace')}, not {fmt}")
    key = _read_key(os.path.dirname(path))
    if key is None:
        raise Ignored(f"no key to check its seal ({KEY_FILE} is missing or damaged)")
    if not _same(words[2].decode("ascii", "replace"), seal(key, body)):
        raise Ignored("its seal does not match: it was not written by forge-policy with this key")
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        raise Ignored("sealed but not JSON") from None


def _cover(doc: CacheDocument) -> None:
    """Whether the recorded sources are exactly the files this loader reads for ``doc.root``.

    The catalog files must be the index and one behavior file per spec, in that order (what
    :func:`~forge_policy.catalog.loader.read_catalog` reads), and the rest every loader module
    of this install: a cache that lost a source entry, lost specs whose files it still records
    (which would load as a smaller, even empty, catalog), or was written by a loader with fewer
    modules (same version number, e.g. an editable install) is not trusted.
    """
    needed = [os.path.join(doc.root, INDEX_FILE)]
    for spec in doc.specs:
        behavior_id = spec.get("id")
        if not isinstance(behavior_id, str) or "/" in behavior_id or behavior_id in ("", ".."):
            raise Ignored("a spec without a valid id")
        needed.append(os.path.join(doc.root, behavior_id, BEHAVIOR_FILE))
    paths = [source.path for source in doc.sources]
    loader = [path for path in LOADER_FILES if os.path.exists(path)]
    if paths != [*needed, *loader]:
        raise Ignored("its sources are not the catalog folder's index, behavior files and loader")


def _check_sources(doc: CacheDocument) -> tuple[SourceRecord, ...] | None:
    """Raise :class:`Ignored` unless every source is unchanged; return the sources with their
    new stats when some changed stat only (and settled), else None."""
    refreshed: list[SourceRecord] = []
    stale = False
    now_ns = 0
    for source in doc.sources:
        try:
            identity = _identity(os.stat(source.path))
            if identity != source.stat:
                if _sha256(source.path) != source.sha256:
                    raise Ignored(f"{source.path} changed since it was cached")
                now_ns = now_ns or time.time_ns()
                fresh = _settled(identity, now_ns)
                if fresh != source.stat:
                    stale = True
                    source = source._replace(stat=fresh)
        except OSError:
            raise Ignored(f"{source.path} is missing") from None
        refreshed.append(source)
    return tuple(refreshed) if stale else None


def _compile(specs: Sequence[dict[str, Any]], root: str, sources: list[str]) -> Catalog:
    return Catalog([Behavior(spec) for spec in specs], root=root, sources=sources)


# -- the key and the sealed writes -----------------------------------------------------------


def _read_key(folder: str) -> bytes | None:
    try:
        with open(os.path.join(folder, KEY_FILE), "rb") as handle:
            key = handle.read(KEY_BYTES + 1)
    except OSError:
        return None
    return key if len(key) == KEY_BYTES else None


def _make_key(folder: str) -> bytes | None:
    """The folder's key, made when missing or damaged (its caches then no longer verify)."""
    key = _read_key(folder)
    if key is not None:
        return key
    path = os.path.join(folder, KEY_FILE)
    tmp = f"{path}.tmp-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, os.urandom(KEY_BYTES))
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)  # complete when it appears; a concurrent maker's key wins
        except FileExistsError:
            if _read_key(folder) is None:  # there, but damaged: replace it
                os.replace(tmp, path)
    except OSError:
        return None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return _read_key(folder)


def _linked_project_folder(path: str) -> str:
    """The symlinked folder among a project cache's ``runtime/`` and the ``.forge`` above it
    (``""``: none). The Harness Home contract: no symlink among the existing components of the
    project's state paths, or the cache and its HMAC key would land outside the project."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.basename(folder) != "runtime":
        return ""  # the user's cache folder (built-in catalog only): the user's to place
    for candidate in (folder, os.path.dirname(folder)):
        if os.path.islink(candidate):
            return candidate
    return ""


def _write_sealed(path: str, body: bytes) -> bool:
    return _write_sealed_as(path, body, MAGIC, FORMAT)


def _write_sealed_as(path: str, body: bytes, magic: bytes, fmt: int) -> bool:
    """Write ``body`` to ``path`` atomically, under a header line of ``magic``, ``fmt`` and its
    seal with the folder's key (made when missing); False when it cannot be written. Shared
    with the last-good copies (:mod:`forge_policy.config.last_good`)."""
    folder = os.path.dirname(path)
    linked = _linked_project_folder(path)
    if linked:  # never written through a link (the catalog is parsed from its YAML instead)
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(
                f"forge-policy: {linked} is a symlink: refusing to write the catalog cache and "
                "its key outside the project (the Harness Home contract)\n"
            )
        return False
    try:
        if not os.path.isdir(folder):
            os.makedirs(folder, exist_ok=True)
            _ignore_in_git(folder)
    except OSError:
        return False
    key = _make_key(folder)
    if key is None:
        return False
    header = b"%s %d %s\n" % (magic, fmt, seal(key, body).encode("ascii"))
    return _write_atomic(path, header + body)


def _write_atomic(path: str, data: bytes) -> bool:
    tmp = f"{path}.tmp-{os.getpid()}-{os.urandom(4).hex()}"
    try:
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
