"""The compiled catalog cache (SPEC §10): valid only while every source file is unchanged.

Tampering with the cache itself (unsealed edits, a copy from elsewhere, the key) is in
``test_cache_trust.py``; here every edit is re-sealed with the folder's key, so these tests reach
the checks behind the seal.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import cache_support
import pytest
from helpers import behavior_yaml, write_catalog

import forge_policy as fp
from forge_policy.catalog import cache as cache_module
from forge_policy.catalog.cache import BUILTIN_DIR, LOADER_FILES, CatalogCache


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return write_catalog(
        tmp_path / "behaviors",
        {"first-rule": behavior_yaml("first-rule"), "second-rule": behavior_yaml("second-rule")},
        enabled={"second-rule": False},
    )


@pytest.fixture
def cache(tmp_path: Path) -> CatalogCache:
    return CatalogCache([str(tmp_path / "runtime" / "catalog-cache.json")])


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files count as settled at once (no racy window), so their stats are recorded."""
    monkeypatch.setattr(cache_module, "RACY_NS", 0)


def cache_doc(cache: CatalogCache) -> dict[str, object]:
    return cache_support.body(cache.paths[0])


def specs(catalog: fp.Catalog) -> list[object]:
    return [dict(b.spec) for b in catalog.behaviors]


def test_first_load_builds_the_cache_and_the_second_uses_it(
    folder: Path, cache: CatalogCache
) -> None:
    built = cache.load(str(folder))
    assert cache.status == "rebuilt"
    again = cache.load(str(folder))
    assert cache.status == "hit"
    direct = fp.load_catalog(folder)
    assert again.ids == built.ids == direct.ids == ["first-rule", "second-rule"]
    assert [b.enabled for b in again] == [True, False]
    assert specs(again) == specs(direct)
    assert again.root == str(folder)


def test_the_cache_records_stat_and_hash_of_every_source(
    folder: Path, cache: CatalogCache, settled: None
) -> None:
    cache.load(str(folder))
    doc = cache_doc(cache)
    assert (doc["format"], doc["forge_policy"], doc["root"]) == (
        cache_module.FORMAT,
        fp.__version__,
        str(folder),
    )
    sources = doc["sources"]
    assert isinstance(sources, list)
    paths = [s["path"] for s in sources]
    assert paths[:3] == [
        str(folder / "index.yaml"),
        str(folder / "first-rule" / "behavior.yaml"),
        str(folder / "second-rule" / "behavior.yaml"),
    ]
    assert set(paths[3:]) == {p for p in LOADER_FILES if os.path.exists(p)}
    for source in sources:
        st = os.stat(source["path"])
        assert source["stat"] == [st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, st.st_ctime_ns]
        assert len(source["sha256"]) == 64
    leftovers = [p.name for p in Path(cache.paths[0]).parent.iterdir()]
    assert sorted(leftovers) == [".gitignore", "catalog-cache.json", "catalog-cache.key"]


def test_a_touched_file_with_the_same_content_only_refreshes_the_stats(
    folder: Path, cache: CatalogCache, settled: None
) -> None:
    cache.load(str(folder))
    path = folder / "first-rule" / "behavior.yaml"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    cache.load(str(folder))
    assert cache.status == "refreshed"
    cache.load(str(folder))
    assert cache.status == "hit"


def test_an_edit_invalidates_the_cache(folder: Path, cache: CatalogCache) -> None:
    cache.load(str(folder))
    path = folder / "first-rule" / "behavior.yaml"
    path.write_text(path.read_text().replace("warning", "nudge\n"), encoding="utf-8")
    catalog = cache.load(str(folder))
    assert cache.status == "rebuilt"
    assert catalog["first-rule"].default_level is fp.Level.NUDGE


def test_a_same_size_edit_with_the_old_mtime_restored_is_still_seen(
    folder: Path, cache: CatalogCache
) -> None:
    cache.load(str(folder))
    path = folder / "first-rule" / "behavior.yaml"
    st = path.stat()
    text = path.read_text()
    edited = text.replace("Test Rule", "Best Rule")
    assert len(edited) == len(text)
    path.write_text(edited, encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    catalog = cache.load(str(folder))
    assert cache.status == "rebuilt"
    assert catalog["first-rule"].name == "Best Rule"


def test_a_new_behavior_needs_an_index_change_which_invalidates(
    folder: Path, cache: CatalogCache
) -> None:
    cache.load(str(folder))
    (folder / "third-rule").mkdir()
    (folder / "third-rule" / "behavior.yaml").write_text(behavior_yaml("third-rule"))
    assert cache.load(str(folder)).ids == ["first-rule", "second-rule"]  # not listed: not loaded
    assert cache.status == "hit"
    with (folder / "index.yaml").open("a", encoding="utf-8") as index:
        index.write("  - id: third-rule\n")
    assert cache.load(str(folder)).ids == ["first-rule", "second-rule", "third-rule"]
    assert cache.status == "rebuilt"


@pytest.mark.parametrize(
    "damage",
    [
        "",
        "{not json",
        "[]",
        "FORMAT",
        "VERSION",
        "SPECS",
        "SOURCES",
    ],
)
def test_a_damaged_or_foreign_cache_is_ignored_and_rebuilt(
    folder: Path, cache: CatalogCache, damage: str
) -> None:
    cache.load(str(folder))
    path = Path(cache.paths[0])
    if damage == "VERSION":
        cache_support.edit(path, ("forge_policy",), "0.0.0-other")
    elif damage == "SPECS":
        cache_support.edit(path, ("specs", 0), {"id": "first-rule"})  # does not compile
    elif damage == "SOURCES":
        cache_support.edit(path, ("sources", 0), ["not", "a", "source"])
    elif damage == "FORMAT":
        cache_support.edit(path, ("format",), 99)
    else:  # sealed, so it is the body that is refused
        cache_support.write_bytes(path, damage.encode())
    assert cache.load(str(folder)).ids == ["first-rule", "second-rule"]
    assert cache.status == "rebuilt"
    assert len(cache.ignored) == 1 and cache.ignored[0][0] == str(path)
    assert cache_doc(cache)["forge_policy"] == fp.__version__


@pytest.mark.parametrize(
    "field, value",
    [
        (("sources", 0, "stat", 0), "1"),  # cattrs' default int hook would accept these three
        (("sources", 0, "stat", 1), True),
        (("sources", 0, "stat"), "12345"),
        (("sources", 0, "stat"), {}),  # and would read a mapping as an empty array
        (("specs",), {}),
        (("sources", 0, "path"), 7),
        (("sources", 0, "sha256"), None),
        (("format",), "2"),
        (("root",), ["/"]),
        (("specs", 0), ["id", "first-rule"]),
        (("sources",), {}),
    ],
)
def test_a_cache_field_of_the_wrong_type_is_rebuilt_not_refreshed(
    folder: Path, cache: CatalogCache, field: tuple[str | int, ...], value: object, settled: None
) -> None:
    cache.load(str(folder))
    cache_support.edit(cache.paths[0], field, value)
    assert specs(cache.load(str(folder))) == specs(fp.load_catalog(folder))
    assert cache.status == "rebuilt"
    assert cache_doc(cache)["format"] == cache_module.FORMAT


@pytest.mark.parametrize("kept", [0, 1])
def test_a_cache_that_lost_specs_is_rebuilt_never_a_smaller_catalog(
    folder: Path, cache: CatalogCache, kept: int
) -> None:
    cache.load(str(folder))
    path = Path(cache.paths[0])
    doc = cache_support.body(path)
    cache_support.edit(path, ("specs",), doc["specs"][:kept])  # every source still recorded
    assert cache.load(str(folder)).ids == ["first-rule", "second-rule"]
    assert cache.status == "rebuilt"
    assert "sources are not" in cache.ignored[0][1]


def test_a_cache_for_another_folder_is_not_used(folder: Path, cache: CatalogCache) -> None:
    cache.load(BUILTIN_DIR)
    assert cache.load(str(folder)).ids == ["first-rule", "second-rule"]
    assert cache.status == "rebuilt"


def test_a_broken_catalog_raises_with_file_and_line_and_is_never_cached(
    folder: Path, cache: CatalogCache
) -> None:
    cache.load(str(folder))
    path = folder / "first-rule" / "behavior.yaml"
    path.write_text(path.read_text().replace("default_level: warning", "default_level: loud"))
    with pytest.raises(fp.CatalogError) as info:
        cache.load(str(folder))
    assert f"{path}:" in str(info.value)  # absolute: the folder is outside the working directory
    with pytest.raises(fp.CatalogError):  # the old cache is still on disk, and still not used
        cache.load(str(folder))
    assert cache_doc(cache)["sources"]  # untouched: a failure is never written


def test_an_unwritable_primary_falls_back_then_skips(folder: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file-not-folder"
    blocker.write_text("x")
    fallback = tmp_path / "xdg" / "catalog.json"
    cache = CatalogCache([str(blocker / "runtime" / "c.json"), str(fallback)])
    cache.load(str(folder))
    assert cache.status == "rebuilt" and fallback.is_file()
    cache.load(str(folder))
    assert cache.status == "hit"
    nowhere = CatalogCache([str(blocker / "a.json")])
    assert nowhere.load(str(folder)).ids == ["first-rule", "second-rule"]
    assert nowhere.status == "unwritable"


def test_a_file_changed_during_the_rebuild_is_not_cached(
    folder: Path, cache: CatalogCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    from forge_policy.catalog import loader

    real = loader.read_catalog

    def racing(root: Path) -> object:
        result = real(root)
        index = root / "index.yaml"
        index.write_text(index.read_text() + "# edited meanwhile\n")
        return result

    monkeypatch.setattr(loader, "read_catalog", racing)
    cache.load(str(folder))
    assert cache.status == "unwritable"
    assert not Path(cache.paths[0]).exists()


def test_a_loader_change_invalidates(
    folder: Path, cache: CatalogCache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "schema.py"
    fake.write_text("# v1\n")
    monkeypatch.setattr(cache_module, "LOADER_FILES", (str(fake),))
    cache.load(str(folder))
    assert str(fake) in [s["path"] for s in cache_doc(cache)["sources"]]  # type: ignore[union-attr]
    fake.write_text("# v2\n")
    cache.load(str(folder))
    assert cache.status == "rebuilt"


def test_a_single_behavior_file_is_loaded_uncached(folder: Path, cache: CatalogCache) -> None:
    catalog = cache.load(str(folder / "first-rule" / "behavior.yaml"))
    assert (catalog.ids, cache.status) == (["first-rule"], "uncached")


def test_loading_through_a_warm_cache_does_not_import_ruamel(
    folder: Path, cache: CatalogCache
) -> None:
    cache.load(str(folder))
    code = (
        "import sys\n"
        "from forge_policy.catalog.cache import CatalogCache\n"
        f"cache = CatalogCache([{cache.paths[0]!r}])\n"
        f"catalog = cache.load({str(folder)!r})\n"
        "heavy = [m for m in ('ruamel.yaml', 'forge_policy.catalog.loader') if m in sys.modules]\n"
        "print(cache.status, len(catalog), heavy)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["hit", "2", "[]"]


def test_a_cache_written_by_a_loader_with_fewer_files_is_not_trusted(
    folder: Path, cache: CatalogCache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the same version number with a new loader module (an editable install): recompile
    old, new = tmp_path / "schema.py", tmp_path / "yaml_io.py"
    old.write_text("# v1\n")
    new.write_text("# v1\n")
    monkeypatch.setattr(cache_module, "LOADER_FILES", (str(old),))
    cache.load(str(folder))
    monkeypatch.setattr(cache_module, "LOADER_FILES", (str(old), str(new)))
    cache.load(str(folder))
    assert cache.status == "rebuilt"
    assert str(new) in [s["path"] for s in cache_doc(cache)["sources"]]  # type: ignore[union-attr]


@pytest.mark.parametrize("dropped", [0, 1])
def test_a_cache_that_lost_a_source_entry_is_not_trusted(
    folder: Path, cache: CatalogCache, dropped: int
) -> None:
    cache.load(str(folder))
    path = Path(cache.paths[0])
    doc = cache_support.body(path)
    del doc["sources"][dropped]  # the index, then a behavior file
    cache_support.write(path, doc)
    assert cache.load(str(folder)).ids == ["first-rule", "second-rule"]
    assert cache.status == "rebuilt"


def test_the_loader_files_include_every_module_that_shapes_specs() -> None:
    names = {os.path.relpath(p, os.path.dirname(BUILTIN_DIR)) for p in LOADER_FILES}
    assert {
        "yaml_io.py",
        "schema.py",
        "structuring.py",
        "loader.py",
        "tuning.py",
        "dsl.py",
    } <= names
    assert all(os.path.isfile(p) for p in LOADER_FILES)
