"""The literals each regex needs, stored in the compiled catalog cache (format 3) so that a cold
hook does not read its patterns again: equal to what the patterns give, and never misread."""

from __future__ import annotations

import os
from pathlib import Path

import cache_support
import pytest
from helpers import behavior_yaml, write_catalog

import forge_policy as fp
from forge_policy.catalog import cache as cache_module
from forge_policy.catalog import prefilter
from forge_policy.catalog.cache import BUILTIN_DIR, LOADER_FILES, CatalogCache
from forge_policy.catalog.prefilter import derive_literals, required_literals

DOTFORGE = Path(__file__).resolve().parents[2] / "shared" / "compat" / "dotforge"

TRIGGERS = """\
    - event: PreToolUse
      matcher: Bash
      conditions:
        - field: command
          operator: regex_match
          value: '(?i)git\\s+push\\s+--force'
    - event: PreToolUse
      matcher: 'Bash|Wri.e'
      conditions:
        - field: command
          operator: not_regex_match
          value: '.*'
"""


@pytest.fixture(autouse=True)
def known(monkeypatch: pytest.MonkeyPatch) -> dict[str, prefilter.Known]:
    """The prefilter's memory of this test alone (a forged cache must not leak into others)."""
    memory: dict[str, prefilter.Known] = {}
    monkeypatch.setattr(prefilter, "_KNOWN", memory)
    return memory


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return write_catalog(
        tmp_path / "behaviors", {"push-rule": behavior_yaml("push-rule", triggers=TRIGGERS)}
    )


@pytest.fixture
def cache(tmp_path: Path) -> CatalogCache:
    return CatalogCache([str(tmp_path / "runtime" / "catalog-cache.json")])


def _patterns(catalog: fp.Catalog) -> list[str]:
    found = [
        c.regex.pattern
        for b in catalog
        for t in b.triggers
        for c in t.conditions
        if c.regex is not None
    ]
    return list(dict.fromkeys(found))


def test_the_cache_stores_each_regex_with_the_literals_it_needs(
    folder: Path, cache: CatalogCache, known: dict[str, prefilter.Known]
) -> None:
    cache.load(str(folder))
    assert cache.status == "rebuilt"
    stored = cache_support.body(cache.paths[0])["literals"]
    assert stored == [
        ["(?i)git\\s+push\\s+--force", True, [["git", "push", "--force"]]],
        ["Bash|Wri.e", False, [["Bash"], ["Wri", "e"]]],  # a trigger's regex matcher
        [".*", None],
    ]
    known.clear()
    cache.load(str(folder))
    assert cache.status == "hit"
    # read from the cache, not from the patterns: the same answer a reading gives
    assert known == {pattern: derive_literals(pattern) for pattern, *_ in stored}
    requirement = required_literals("(?i)git\\s+push\\s+--force")
    assert requirement is not None and not requirement.admits("git push origin")
    assert requirement.admits("GIT  PUSH --FORCE")


@pytest.mark.parametrize(
    "root",
    [BUILTIN_DIR, str(DOTFORGE)],
    ids=["builtin", "dotforge"],
)
def test_the_literals_read_from_the_cache_equal_those_of_the_patterns(
    root: str, cache: CatalogCache, known: dict[str, prefilter.Known]
) -> None:
    if not os.path.isdir(root):
        pytest.skip(f"{root} is absent (the shared compat catalogs are not checked out)")
    cache.load(root)
    known.clear()
    catalog = cache.load(root)
    assert cache.status == "hit"
    patterns = _patterns(catalog)
    assert patterns and set(patterns) <= set(known)
    for pattern in patterns:
        assert known[pattern] == derive_literals(pattern), pattern
        read = required_literals(pattern)
        assert (read and (read.alternatives, read.casefold)) == derive_literals(pattern)
    assert cache.check(root, fp.load_catalog(root)) == []


def test_the_prefilter_is_a_loader_module() -> None:
    """An edit to how literals are derived invalidates every cache that stores them."""
    assert os.path.join(os.path.dirname(BUILTIN_DIR), "prefilter.py") in LOADER_FILES


def test_a_format_2_cache_is_ignored_never_misread(folder: Path, cache: CatalogCache) -> None:
    cache.load(str(folder))
    doc = cache_support.body(cache.paths[0])
    del doc["literals"]
    doc["format"] = 2
    key = Path(cache.paths[0]).with_name(cache_module.KEY_FILE).read_bytes()
    text = cache_support.json.dumps(doc).encode()
    sealed = b"%s 2 %s\n" % (cache_module.MAGIC, cache_module.seal(key, text).encode()) + text
    Path(cache.paths[0]).write_bytes(sealed)
    cache.load(str(folder))
    assert cache.status == "rebuilt"
    assert cache.ignored == [(cache.paths[0], "format 2, not 3")]
    # and a body without literals under the new header is malformed, not a catalog without them
    cache_support.write(cache.paths[0], doc)
    cache.load(str(folder))
    assert (cache.status, cache.ignored[0][1]) == ("rebuilt", "sealed but malformed")


@pytest.mark.parametrize(
    "entry",
    [
        ["(?i)git\\s+push\\s+--force", True, []],  # would refuse every text
        ["(?i)git\\s+push\\s+--force", True, [[]]],
        ["(?i)git\\s+push\\s+--force", "true", [["git"]]],
        ["(?i)git\\s+push\\s+--force", True, [["git", 1]]],
        ["(?i)git\\s+push\\s+--force", True],
        ["(?i)git\\s+push\\s+--force", False, None],
        [],
        {"pattern": "x"},
    ],
)
def test_a_malformed_literal_entry_is_rebuilt(
    folder: Path, cache: CatalogCache, entry: object, known: dict[str, prefilter.Known]
) -> None:
    cache.load(str(folder))
    cache_support.edit(cache.paths[0], ("literals", 0), entry)
    known.clear()
    cache.load(str(folder))
    assert (cache.status, cache.ignored[0][1]) == ("rebuilt", "sealed but malformed")
    assert known["(?i)git\\s+push\\s+--force"] == derive_literals("(?i)git\\s+push\\s+--force")


def test_forged_literals_are_found_by_validate_and_replaced(
    folder: Path, cache: CatalogCache, known: dict[str, prefilter.Known]
) -> None:
    """A cache sealed with the real key (only a forged seal gets there) whose literals would
    refuse ``git push --force``: ``check`` (``forge-policy validate``) finds it, rebuilds it, and
    the prefilter forgets the forged literals."""
    cache.load(str(folder))
    cache_support.edit(
        cache.paths[0], ("literals", 0), ["(?i)git\\s+push\\s+--force", True, [["nope"]]]
    )
    parsed = fp.load_catalog(folder)
    ignored = cache.check(str(folder), parsed)
    assert ignored == [(cache.paths[0], "its literals differ from those its patterns need")]
    assert cache.status == "rebuilt"
    requirement = required_literals("(?i)git\\s+push\\s+--force")
    assert requirement is not None and requirement.admits("git push --force")
    assert cache_support.body(cache.paths[0])["literals"][0][2] == [["git", "push", "--force"]]


def test_a_hook_served_by_the_cache_reads_none_of_its_patterns(
    cache: CatalogCache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The built-in catalog from a warm cache blocks ``git push --force`` as a parse of its
    YAML does, and the prefilter reads none of the catalog's patterns to decide it."""
    cache.load(BUILTIN_DIR)
    catalog = cache.load(BUILTIN_DIR)
    assert cache.status == "hit"
    read: list[str] = []
    real_read = prefilter._read

    def reading(pattern: str, limit: int) -> prefilter.Requirement | None:
        read.append(pattern)
        return real_read(pattern, limit)

    monkeypatch.setattr(prefilter, "_read", reading)
    payload = {
        "session_id": "s-cache-literals",
        "hook_event_name": "PreToolUse",
        "cwd": str(tmp_path),
        "tool_name": "Bash",
        "tool_input": {"command": "git push --force origin main"},
    }
    decision = fp.Evaluator(catalog).evaluate(fp.Event.from_claude_code(payload))
    parsed = fp.Evaluator(fp.load_catalog(BUILTIN_DIR)).evaluate(
        fp.Event.from_claude_code({**payload, "session_id": "s-cache-literals-2"})
    )
    assert decision.blocked and decision.blocking is not None
    assert parsed.blocking is not None
    assert decision.blocking.behavior_id == parsed.blocking.behavior_id
    patterns = set(_patterns(catalog))
    assert not [pattern for pattern in read if pattern in patterns]
