"""Property: the compiled cache is never trusted over its sources (SPEC §10).

Whatever source file is edited (a behavior, the index, a loader module), however the edit keeps
its size and mtime, the next load recompiles and gives what a direct load of the YAML gives. So
does a cache document with any field of the wrong JSON type (sealed, to reach the checks behind
the seal), and any cache document written without forge-policy's seal.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import cache_support
from helpers import behavior_yaml, write_catalog
from hypothesis import assume, given
from hypothesis import strategies as st

import forge_policy as fp
from forge_policy.catalog import cache as cache_module
from forge_policy.catalog.cache import CatalogCache

#: (file, text, same-size replacement) edits that change what loads or must be re-checked
EDITS = (
    ("first-rule/behavior.yaml", "Test Rule", "Best Rule"),
    ("first-rule/behavior.yaml", "default_level: warning", "default_level: nudge  "),
    ("second-rule/behavior.yaml", "matcher: Bash", "matcher: Read"),
    ("index.yaml", "enabled: true", "enabled: fals"),
    ("loader-module.py", "# v1", "# v2"),
)


@given(edit=st.sampled_from(EDITS), keep_mtime=st.booleans(), warm=st.integers(1, 3))
def test_an_edited_source_is_never_served_from_the_cache(
    edit: tuple[str, str, str], keep_mtime: bool, warm: int
) -> None:
    folder = Path(tempfile.mkdtemp())
    try:
        root = write_catalog(
            folder / "behaviors",
            {
                "first-rule": behavior_yaml("first-rule"),
                "second-rule": behavior_yaml("second-rule"),
            },
        )
        module = root / "loader-module.py"
        module.write_text("# v1\n")
        saved = cache_module.LOADER_FILES
        cache_module.LOADER_FILES = (str(module),)
        try:
            cache = CatalogCache([str(folder / "runtime" / "cache.json")])
            for _ in range(warm):
                cache.load(str(root))
            assert cache.status == "hit" if warm > 1 else cache.status == "rebuilt"
            name, old, new = edit
            path = root / name
            text = path.read_text()
            stat = path.stat()
            path.write_text(text.replace(old, new, 1))
            assert path.stat().st_size == stat.st_size
            if keep_mtime:
                os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
            cache.status = ""
            try:
                loaded = cache.load(str(root))
                assert cache.status == "rebuilt"
            except fp.CatalogError:
                loaded = None  # the broken YAML raised: the old cache was not served
            try:
                direct = fp.load_catalog(root)
            except fp.CatalogError:
                direct = None
            if direct is None or loaded is None:
                assert direct is None and loaded is None
            else:
                assert [dict(b.spec) for b in loaded] == [dict(b.spec) for b in direct]
        finally:
            cache_module.LOADER_FILES = saved
    finally:
        shutil.rmtree(folder)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)
#: every place of a cache document whose value the reader relies on, by its JSON path
FIELDS = (
    ("format",),
    ("forge_policy",),
    ("root",),
    ("sources",),
    ("specs",),
    ("sources", 0),
    ("sources", 1, "path"),
    ("sources", 1, "stat"),
    ("sources", 1, "stat", 2),
    ("sources", 2, "sha256"),
    ("specs", 0),
    ("specs", 1, "id"),
)


@given(field=st.sampled_from(FIELDS), value=JSON)
def test_a_cache_with_a_field_of_another_type_is_rebuilt(
    field: tuple[str | int, ...], value: object
) -> None:
    """Whatever JSON value of another type takes a field's place, the next load is the YAML's."""
    folder = Path(tempfile.mkdtemp())
    try:
        root = write_catalog(
            folder / "behaviors",
            {
                "first-rule": behavior_yaml("first-rule"),
                "second-rule": behavior_yaml("second-rule"),
            },
        )
        cache = CatalogCache([str(folder / "runtime" / "cache.json")])
        saved, cache_module.RACY_NS = cache_module.RACY_NS, 0  # record real stats
        try:
            cache.load(str(root))
        finally:
            cache_module.RACY_NS = saved
        path = Path(cache.paths[0])
        doc = cache_support.body(path)
        node = doc
        for key in field[:-1]:
            node = node[key]
        assume(type(value) is not type(node[field[-1]]))
        node[field[-1]] = value
        cache_support.write(path, doc)
        loaded = cache.load(str(root))
        assert cache.status == "rebuilt"
        assert [dict(b.spec) for b in loaded] == [dict(b.spec) for b in fp.load_catalog(root)]
    finally:
        shutil.rmtree(folder)


#: what an agent writing the cache file may change in the genuine body, by JSON path
TAMPERING = (
    ("specs",),
    ("specs", 0),
    ("specs", 0, "enabled"),
    ("specs", 1, "triggers"),
    ("sources",),
    ("sources", 1),
    ("root",),
)


@given(field=st.sampled_from(TAMPERING), value=JSON, whole=st.booleans())
def test_a_cache_without_the_seal_is_never_used(
    field: tuple[str | int, ...], value: object, whole: bool
) -> None:
    """The genuine body with any field replaced, or any JSON document at all, written over the
    cache without the seal (as an editor tool writes a file): the next load is the YAML's."""
    folder = Path(tempfile.mkdtemp())
    try:
        root = write_catalog(
            folder / "behaviors",
            {
                "first-rule": behavior_yaml("first-rule"),
                "second-rule": behavior_yaml("second-rule"),
            },
        )
        cache = CatalogCache([str(folder / "runtime" / "cache.json")])
        cache.load(str(root))
        path = Path(cache.paths[0])
        doc = cache_support.body(path)
        if whole:
            doc = value
        else:
            node = doc
            for key in field[:-1]:
                node = node[key]
            node[field[-1]] = value
        cache_support.write(path, doc, sealed=False)
        loaded = cache.load(str(root))
        assert cache.status == "rebuilt"
        assert cache.ignored == [(str(path), "not sealed by forge-policy (no header line)")]
        assert [dict(b.spec) for b in loaded] == [dict(b.spec) for b in fp.load_catalog(root)]
    finally:
        shutil.rmtree(folder)
