"""The compiled catalog cache is never trusted over the sources (SPEC §10; issue 10).

An agent can write any file under ``.forge/`` (and the user's cache folder) with its tools. None
of what it can write that way changes the catalog the hook uses: an unsealed cache, a cache with
edited specs, a cache sealed with another folder's key, a deleted or damaged key. The one thing
the seal cannot stop, a cache sealed by code that read the key (deliberate code execution,
outside the threat model), is still caught by ``forge-policy validate``.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import cache_support
import pytest
from helpers import behavior_yaml, write_catalog

import forge_policy as fp
from forge_policy.catalog import cache as cache_module
from forge_policy.catalog.cache import BUILTIN_DIR, KEY_FILE, CatalogCache
from forge_policy.config.env import Config
from tests.cli_support import FORGE, clean_env

#: the route of issue 10: an empty catalog written over the cache by an agent's editor tool
EMPTY = {"format": 1, "forge_policy": fp.__version__, "sources": [], "specs": []}
FORCE_PUSH = {
    "session_id": "s1",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "git push --force origin main"},
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return write_catalog(
        tmp_path / "behaviors",
        {"first-rule": behavior_yaml("first-rule"), "second-rule": behavior_yaml("second-rule")},
    )


@pytest.fixture
def cache(tmp_path: Path) -> CatalogCache:
    return CatalogCache([str(tmp_path / "runtime" / "catalog-cache.json")])


def specs(catalog: fp.Catalog) -> list[object]:
    return [dict(b.spec) for b in catalog.behaviors]


def forge(
    project: Path, *args: str, stdin: str = "", **env: str
) -> subprocess.CompletedProcess[str]:
    """The real ``forge-policy`` in ``project`` (its ``.forge`` root, in-process hook)."""
    environ = clean_env(project / ".forge", FORGE_WORKER="off", **env)
    return subprocess.run(
        [str(FORGE), *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=project,
        env=environ,
        timeout=60,
        check=False,
    )


# -- the seal -------------------------------------------------------------------------------


@pytest.mark.parametrize("drop_specs_only", [False, True])
def test_an_unsealed_cache_never_empties_the_catalog(
    folder: Path, cache: CatalogCache, drop_specs_only: bool
) -> None:
    cache.load(str(folder))
    path = cache.paths[0]
    if drop_specs_only:  # every source kept and unchanged, the specs gone
        doc = cache_support.body(path)
        doc["specs"] = []
        doc["sources"] = doc["sources"][:1] + doc["sources"][3:]
    else:
        doc = {**EMPTY, "root": str(folder)}
    cache_support.write(path, doc, sealed=False)
    assert cache.load(str(folder)).ids == ["first-rule", "second-rule"]
    assert cache.status == "rebuilt"
    assert cache.ignored == [(path, "not sealed by forge-policy (no header line)")]


def test_specs_edited_under_an_unchanged_header_are_refused(
    folder: Path, cache: CatalogCache
) -> None:
    cache.load(str(folder))
    path = Path(cache.paths[0])
    header, _, text = path.read_bytes().partition(b"\n")
    edited = text.replace(b'"enabled":true', b'"enabled":false')
    assert edited != text
    path.write_bytes(header + b"\n" + edited)  # sources and their hashes all still match
    catalog = cache.load(str(folder))
    assert [b.enabled for b in catalog] == [True, True]
    assert cache.status == "rebuilt"
    assert "seal does not match" in cache.ignored[0][1]


def test_a_cache_copied_from_another_folder_does_not_verify(
    folder: Path, cache: CatalogCache, tmp_path: Path
) -> None:
    # the other project had this very catalog empty once: its cache is genuine, with its key
    other = CatalogCache([str(tmp_path / "other" / "runtime" / "catalog-cache.json")])
    index = folder / "index.yaml"
    full = index.read_text()
    index.write_text('schema_version: "1"\nbehaviors: []\n')
    assert len(other.load(str(folder))) == 0
    index.write_text(full)
    cache.load(str(folder))
    shutil.copyfile(other.paths[0], cache.paths[0])
    assert cache.load(str(folder)).ids == ["first-rule", "second-rule"]
    assert "seal does not match" in cache.ignored[0][1]


def test_the_key_is_private_and_a_lost_or_damaged_key_only_invalidates(
    folder: Path, cache: CatalogCache
) -> None:
    cache.load(str(folder))
    key = Path(cache.paths[0]).with_name(KEY_FILE)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_bytes()) == 32
    old = key.read_bytes()
    key.unlink()
    assert cache.load(str(folder)).ids == ["first-rule", "second-rule"]
    assert (cache.status, cache.ignored[0][1].split(" (")[0]) == (
        "rebuilt",
        "no key to check its seal",
    )
    assert key.read_bytes() != old
    key.write_bytes(b"short")  # a key the agent chose would need code to seal with it
    cache.load(str(folder))
    assert cache.status == "rebuilt" and len(key.read_bytes()) == 32
    cache.load(str(folder))
    assert cache.status == "hit"


def test_a_forged_seal_is_still_caught_by_validate(tmp_path: Path) -> None:
    """Outside the threat model (code that reads the key), yet ``validate`` says so and repairs."""
    project = tmp_path / "p"
    write_catalog(project / ".forge" / "behaviors", {"first-rule": behavior_yaml("first-rule")})
    assert forge(project, "list").returncode == 0
    [path] = (project / ".forge" / "runtime").glob("catalog-cache-*.json")
    cache_support.edit(path, ("specs", 0, "enabled"), False)  # sealed with the real key
    result = forge(project, "validate")
    assert result.returncode == 0
    assert result.stdout.splitlines()[1:] == [
        f"cache: ignored {path}: its specs differ from the YAML's",
        "cache: rebuilt from the YAML",
    ]
    assert cache_support.body(path)["specs"][0]["enabled"] is True


# -- the issue's route, end to end ----------------------------------------------------------


@pytest.mark.parametrize("where", ["project", "user"])
def test_the_issue_route_leaves_the_hook_blocking_and_validate_says_why(
    tmp_path: Path, where: str
) -> None:
    xdg = tmp_path / "xdg"
    project = tmp_path / "p"
    (project / ".forge").mkdir(parents=True)  # a project: its cache is written there too
    env = {"XDG_CACHE_HOME": str(xdg)}
    assert forge(project, "list", **env).returncode == 0  # the built-in catalog, cached
    config = Config.from_env(
        {"FORGE_ROOT": str(project / ".forge"), "XDG_CACHE_HOME": str(xdg)}, cwd=str(project)
    )
    primary, user = config.cache_paths()
    target = Path(primary if where == "project" else user)
    if where == "user":  # the shared cache every new project reads: a new project here
        Path(primary).unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({**EMPTY, "root": BUILTIN_DIR}))
    hook = forge(project, "hook", stdin=json.dumps(FORCE_PUSH), **env)
    decision = json.loads(hook.stdout)["hookSpecificOutput"]["permissionDecision"]
    assert decision == "deny"
    target.write_text(json.dumps({**EMPTY, "root": BUILTIN_DIR}))
    if where == "user":
        Path(primary).unlink()
    result = forge(project, "validate", **env)
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"ok: {BUILTIN_DIR}: ")
    assert f"cache: ignored {target}: not sealed by forge-policy (no header line)" in lines


def test_a_project_catalog_never_reaches_the_user_cache(tmp_path: Path) -> None:
    project = tmp_path / "p"
    write_catalog(project / ".forge" / "behaviors", {"first-rule": behavior_yaml("first-rule")})
    xdg = tmp_path / "xdg"
    assert forge(project, "list", XDG_CACHE_HOME=str(xdg)).returncode == 0
    assert not xdg.exists()
    assert len(list((project / ".forge" / "runtime").glob("catalog-cache-*.json"))) == 1


# -- stat identity ---------------------------------------------------------------------------


def test_a_freshly_changed_file_is_hashed_until_its_stat_settles(
    folder: Path, cache: CatalogCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache.load(str(folder))
    recorded = {s["path"]: s["stat"] for s in cache_support.body(cache.paths[0])["sources"]}
    assert recorded[str(folder / "index.yaml")] == []  # written just now: racy
    assert all(recorded[p] for p in cache_module.LOADER_FILES if p in recorded)
    calls: list[str] = []
    real = cache_module._sha256
    monkeypatch.setattr(cache_module, "_sha256", lambda p: calls.append(p) or real(p))
    cache.load(str(folder))
    assert cache.status == "hit" and str(folder / "index.yaml") in calls
    monkeypatch.setattr(cache_module, "RACY_NS", 0)  # as if two seconds went by
    cache.load(str(folder))
    assert cache.status == "refreshed"
    calls.clear()
    cache.load(str(folder))
    assert (cache.status, calls) == ("hit", [])


def test_a_future_mtime_never_settles(
    folder: Path, cache: CatalogCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_module, "RACY_NS", 0)
    index = folder / "index.yaml"
    st = index.stat()
    os.utime(index, ns=(st.st_atime_ns, st.st_mtime_ns + 10**12))  # touch -d "+1000 s"
    cache.load(str(folder))
    recorded = {s["path"]: s["stat"] for s in cache_support.body(cache.paths[0])["sources"]}
    assert recorded[str(index)] == []


def test_a_warm_hit_loads_neither_yaml_nor_openssl(folder: Path, cache: CatalogCache) -> None:
    cache.load(str(folder))
    code = (
        "import sys\n"
        "from forge_policy.catalog.cache import CatalogCache\n"
        f"cache = CatalogCache([{cache.paths[0]!r}])\n"
        f"catalog = cache.load({str(folder)!r})\n"
        "heavy = [m for m in ('ruamel.yaml', 'forge_policy.catalog.loader', '_hashlib', "
        "'hashlib', 'hmac') if m in sys.modules]\n"
        "print(cache.status, len(catalog), heavy)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["hit", "2", "[]"]


def test_the_seal_is_hmac_sha256() -> None:
    import hashlib
    import hmac

    for key in (b"", b"k" * 32, b"long" * 40):
        body = b'{"format":2}'
        assert cache_module.seal(key, body) == hmac.new(key, body, hashlib.sha256).hexdigest()
