"""The floor of one project under the active catalog (SPEC §13): :func:`floor_for`.

Three lists, each path with its reason (``docs/reference/floor.md`` says it for users):

- **never written** — governance per SPEC §7, as :mod:`forge_policy.facts.governance` and
  :mod:`forge_policy.facts.controls` define it: ``$FORGE_ROOT`` (``.forge``) and the other
  roots of :func:`~forge_policy.facts.governance.governance_roots`, every ``.forge`` folder the
  project scan meets, the folder holding each harness's hook or settings file
  (:func:`~forge_policy.harness.registry.hook_files`) in the project and in ``$HOME``, the
  managed settings (:data:`~forge_policy.facts.controls.MANAGED`), git's hook folders and
  configuration files (:func:`~forge_policy.facts.controls.git_places`, ``core.hooksPath``
  included) and the engine's installation (:func:`~forge_policy.facts.controls.installation`);
  plus the paths of the catalog's hard-block write rules (:func:`behavior_paths`);
- **never read** — the secret-file families (:data:`~forge_policy.facts.files.SECRET_FILE_FAMILIES`)
  the active catalog refuses or asks about through ``facts.sensitive_file`` (agent-shield's
  deny set, agent-shield-ask's families), made concrete: the home folder's secret files by name
  (:data:`~forge_policy.facts.files.SECRET_HOME_PLACES`) and the project's secret files found
  by a bounded scan (:data:`SCAN_DIRS` folders, :data:`SCAN_ENTRIES` entries, breadth first,
  :data:`SCAN_SKIP` left out); plus the paths of the catalog's hard-block read rules. A file
  created after the scan, or beyond its bound, is the hook's to decide. ``.git/config`` is no
  secret here: git reads it for every command (it stays never written);
- **writable** — the project and the temp folders (``$TMPDIR``, ``/tmp``, ``/var/tmp``); the
  never-written and never-read paths are carved out of them by every enforcer.

:func:`floor_for` is on the hot path (the hook asks it for every shell call): its answer is
memoised per project, environment and catalog, and reused only while every source it read
keeps its stat (the catalog files when it loaded the catalog itself, git's configuration files,
every folder the scan listed).

>>> import tempfile
>>> project, home = tempfile.mkdtemp(), tempfile.mkdtemp()
>>> floor = floor_for(project, {"HOME": home})
>>> floor.writes_allowed(project + "/src/a.py"), floor.writes_allowed(project + "/.forge/x")
(True, False)
>>> floor.reads_allowed(home + "/.ssh/id_rsa")
False
"""

from __future__ import annotations

import os

from forge_policy.floor.model import Floor, FloorPath

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from forge_policy.catalog.behavior import Behavior
    from forge_policy.catalog.catalog import Catalog

    Signature = tuple[tuple[str, tuple[int, ...]], ...]

#: The project scan's bound: folders listed, entries looked at (breadth first, so the shallow
#: folders where ``.env`` files live come first).
SCAN_DIRS = 512
SCAN_ENTRIES = 20_000
#: Folders the scan does not enter: git's own, dependencies, caches (never a project's secrets).
SCAN_SKIP = frozenset(
    {".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache",
     ".pytest_cache", ".ruff_cache", ".hypothesis", "site-packages", "dist-packages"}
)  # fmt: skip
#: The environment variables the floor reads (they key its memo).
ENVIRONMENT = (
    "HOME", "TMPDIR", "FORGE_ROOT", "FORGE_BEHAVIORS_DIR", "FORGE_STORE", "FORGE_MANAGED_DIR",
    "FORGE_PROFILE", "XDG_CACHE_HOME", "XDG_CONFIG_HOME",
)  # fmt: skip
TEMP = ("/tmp", "/var/tmp")
#: the secret-file class git itself reads (never hidden; never written through "git")
_GIT_CLASS = "git_config"
#: operators of a literal path condition (docs/reference/floor.md, "Behaviors")
_LITERAL_OPERATORS = frozenset({"equals", "in", "starts_with", "glob"})
_GLOB = frozenset("*?[")
_MEMO: dict[tuple[object, ...], tuple[object, Signature, Floor]] = {}
_MEMO_LIMIT = 32


def floor_for(
    project: str,
    environ: Mapping[str, str],
    *,
    catalog: Catalog | None = None,
    profile: str | None = None,
) -> Floor:
    """The floor for ``project`` (absolute) under ``catalog`` (default: the catalog the hook
    would load from ``environ``: ``$FORGE_BEHAVIORS_DIR``, else ``<$FORGE_ROOT>/behaviors``,
    else the built-in one) with ``environ``'s ``HOME``, ``TMPDIR`` and ``FORGE_*``; behaviors
    left out of ``profile`` (default ``$FORGE_PROFILE``, else ``standard``) add nothing.

    Raises :class:`~forge_policy.CatalogError` when it loads the catalog and that fails.
    """
    project = os.path.normpath(os.path.abspath(project))
    env = tuple(environ.get(name, "") for name in ENVIRONMENT)
    if profile is None:
        from forge_policy.catalog.behavior import DEFAULT_PROFILE

        profile = environ.get("FORGE_PROFILE", "").strip() or DEFAULT_PROFILE
    loaded: list[str] = []
    if catalog is None:
        catalog, loaded = _default_catalog(project, environ)
    key = (project, env, profile, id(catalog))
    cached = _MEMO.get(key)
    if cached is not None and cached[0] is catalog and _still(cached[1]):
        return cached[2]
    floor, sources = _derive(project, environ, catalog, profile)
    signature = _signature([*loaded, *sources])
    if len(_MEMO) >= _MEMO_LIMIT:
        _MEMO.clear()
    if _settled(signature):
        _MEMO[key] = (catalog, signature, floor)  # holds the catalog: its id is not reused
    else:
        _MEMO.pop(key, None)  # a source changed just now: derive again next time
    return floor


# --- the memo's sources -----------------------------------------------------------------------


def _stat(path: str) -> tuple[int, ...]:
    """What a source's change moves: mtime, size, inode, device and ctime (which no one can
    set back, so a change that restores the mtime is still seen); ``()`` when it is absent."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return ()
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, st.st_ctime_ns)


def _signature(paths: Iterable[str]) -> Signature:
    return tuple((path, _stat(path)) for path in dict.fromkeys(paths))


def _still(signature: Signature) -> bool:
    return all(_stat(path) == stamp for path, stamp in signature)


def _settled(signature: Signature) -> bool:
    """Whether every source last changed long enough ago for its stat to prove it unchanged
    later (a change in the same timestamp tick keeps the stat: the catalog cache's rule)."""
    import time

    from forge_policy.catalog.cache import RACY_NS

    now = time.time_ns()
    return all(not stamp or now - max(stamp[0], stamp[4]) >= RACY_NS for _p, stamp in signature)


_CATALOGS: dict[str, tuple[Signature, Catalog]] = {}


def _default_catalog(project: str, environ: Mapping[str, str]) -> tuple[Catalog, list[str]]:
    """The catalog the hook would load (``FORGE_DISABLE`` is a bypass of the hook's decisions,
    not of the floor: not applied), memoised while its files keep their stat."""
    from forge_policy.catalog.catalog import catalog_folder
    from forge_policy.worker.protocol import place

    def placed(value: str) -> str:
        home = environ.get("HOME")
        raw = place(os.fsencode(project), os.fsencode(value), os.fsencode(home) if home else None)
        return os.fsdecode(raw)

    root = placed(environ.get("FORGE_ROOT", "").strip() or ".forge")
    behaviors = environ.get("FORGE_BEHAVIORS_DIR", "").strip()
    folder = catalog_folder(root, placed(behaviors) if behaviors else None)
    from forge_policy.catalog.cache import BUILTIN_DIR

    folder = os.path.abspath(folder or BUILTIN_DIR)
    watched = [os.path.join(root, "behaviors"), folder]
    cached = _CATALOGS.get(folder)
    if cached is not None and _still(cached[0]):
        return cached[1], [path for path, _stamp in cached[0]]
    from forge_policy.catalog.loader import load_catalog

    before = _signature(watched)
    catalog = load_catalog(folder)
    signature = before + _signature(
        [*catalog.sources, os.path.join(folder, "index.yaml")] if os.path.isdir(folder) else []
    )
    if _settled(signature):
        _CATALOGS[folder] = (signature, catalog)
    return catalog, [path for path, _stamp in signature]


# --- the derivation ---------------------------------------------------------------------------


def _derive(
    project: str, environ: Mapping[str, str], catalog: Catalog, profile: str
) -> tuple[Floor, list[str]]:
    """The floor, and the files and folders whose stat keeps it valid."""
    from forge_policy.facts import controls
    from forge_policy.facts.governance import governance_roots
    from forge_policy.harness.registry import hook_files

    home = os.path.normpath(environ.get("HOME", "") or os.path.expanduser("~"))
    tmpdir = environ.get("TMPDIR", "").strip()
    temps = dict.fromkeys([*TEMP, *([os.path.normpath(tmpdir)] if tmpdir.startswith("/") else [])])
    writable = (FloorPath(project, "project"), *(FloorPath(t, "temp") for t in temps))

    scan = _scan(project)
    written: list[FloorPath] = [
        FloorPath(root, "protect-governance") for root in governance_roots(project, home, environ)
    ]
    written += [FloorPath(os.path.join(project, ".forge"), "protect-governance")]
    written += [FloorPath(folder, "protect-governance") for folder in scan.forge_folders]
    folders = dict.fromkeys(os.path.dirname(path) for path in hook_files())
    written += [
        FloorPath(os.path.join(base, folder), "protect-governance")
        for base in dict.fromkeys((project, home))
        for folder in folders
    ]
    written += [FloorPath(folder, "managed") for folder in controls.MANAGED]
    git_hooks, git_configs = controls.git_places(project, home)
    written += [FloorPath(hooks, "git") for hooks in git_hooks]
    written += [FloorPath(config, "git") for config in git_configs]
    place = controls.installation(home, project)
    for path in sorted({place.package, *place.site_dirs, *place.bin_dirs} - {""}):
        written.append(FloorPath(os.path.abspath(path), "installation"))
    # its single files (pyvenv.cfg, sitecustomize on sys.path) where a writable root holds
    # them: nothing is written anywhere else
    written += [
        FloorPath(path, "installation")
        for path in sorted(place.files)
        if any(root.covers(path) for root in writable)
    ]

    owners = _secret_owners(catalog, profile)
    hidden: list[FloorPath] = []
    if owners:
        from forge_policy.facts.files import SECRET_HOME_PLACES, classify

        for name in SECRET_HOME_PLACES:
            path = os.path.join(home, name)
            # a folder (no family of its own) by what its files would be
            samples = [path] if classify(path) else [path + "/id_rsa", path + "/x"]
            reason = _owner(owners, samples)
            if reason:
                hidden.append(FloorPath(path, reason))
        for path in scan.secrets:
            reason = _owner(owners, [path])
            if reason:
                hidden.append(FloorPath(path, reason))

    for behavior_id, kind, path in behavior_paths(catalog, project, home, profile):
        (hidden if kind == "read" else written).append(FloorPath(path, behavior_id))

    floor = Floor(project, writable, _tidy(written), _tidy(hidden))
    xdg = environ.get("XDG_CONFIG_HOME", "").strip() or os.path.join(home, ".config")
    git_sources = [os.path.join(home, ".gitconfig"), "/etc/gitconfig",
                   os.path.join(xdg, "git", "config"), *git_configs]  # fmt: skip
    top = controls.git_top(project)
    if top is not None:
        git_sources.append(os.path.join(top, ".git"))
    return floor, [*git_sources, *scan.folders]


def _tidy(paths: list[FloorPath]) -> tuple[FloorPath, ...]:
    """``paths`` without repeats and without a path another one already covers (the first
    reason given for a place is kept), in first-given order."""
    kept: dict[str, FloorPath] = {}
    for entry in paths:
        if entry.path not in kept:
            kept[entry.path] = entry
    out = []
    for path, entry in kept.items():
        parent = os.path.dirname(path)
        covered = False
        while parent and parent != path:
            if parent in kept:
                covered = True
                break
            path, parent = parent, os.path.dirname(parent)
        if not covered:
            out.append(entry)
    return tuple(out)


def _secret_owners(catalog: Catalog, profile: str) -> dict[str, str]:
    """Secret-file class → the first enabled behavior that refuses or asks about it through
    ``facts.sensitive_file`` (``equals`` or ``in``), in catalog order; ``git_config`` left out."""
    owners: dict[str, str] = {}
    for behavior in catalog:
        if not behavior.enabled or behavior.excluded_by(profile):
            continue
        for trigger in behavior.triggers:
            if trigger.event != "PreToolUse" or trigger.action != "evaluate":
                continue
            for condition in trigger.conditions:
                if condition.field != "facts.sensitive_file":
                    continue
                if condition.operator == "in" and isinstance(condition.value, list):
                    classes = [v for v in condition.value if isinstance(v, str)]
                elif condition.operator == "equals" and isinstance(condition.value, str):
                    classes = [condition.value]
                else:
                    continue
                for klass in classes:
                    if klass != _GIT_CLASS:
                        owners.setdefault(klass, behavior.id)
    return owners


def _owner(owners: dict[str, str], samples: list[str]) -> str:
    """The behavior owning the most sensitive class (refused before asked) among ``samples``'
    classes, or ``""`` when the catalog owns none of them."""
    from forge_policy.facts.files import classify, most_sensitive

    klass = most_sensitive([sample for sample in samples if classify(sample) in owners])
    return owners.get(klass, "")


# --- the project scan -------------------------------------------------------------------------


class _Scan:
    __slots__ = ("folders", "forge_folders", "secrets")

    def __init__(self) -> None:
        self.folders: list[str] = []  # every folder listed (their stat keeps the memo valid)
        self.forge_folders: list[str] = []
        self.secrets: list[str] = []


def _scan(project: str) -> _Scan:
    """The project's secret files (any family of :func:`~forge_policy.facts.files.classify`)
    and ``.forge`` folders, breadth first within :data:`SCAN_DIRS` and :data:`SCAN_ENTRIES`;
    symlinks are not followed."""
    from forge_policy.facts.files import classify

    found = _Scan()
    queue = [project]
    entries = 0
    while queue and len(found.folders) < SCAN_DIRS and entries < SCAN_ENTRIES:
        folder = queue.pop(0)
        found.folders.append(folder)
        try:
            with os.scandir(folder) as listing:
                for entry in listing:
                    entries += 1
                    if entries > SCAN_ENTRIES:
                        break
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        continue
                    if is_dir:
                        if entry.name == ".forge":
                            found.forge_folders.append(entry.path)
                        elif entry.name not in SCAN_SKIP:
                            queue.append(entry.path)
                    elif classify(entry.path) not in ("", _GIT_CLASS):
                        found.secrets.append(entry.path)
        except OSError:
            continue
    return found


# --- what behaviors add -----------------------------------------------------------------------


def behavior_paths(
    catalog: Catalog, project: str, home: str, profile: str
) -> list[tuple[str, str, str]]:
    """``(behavior id, "read" | "write", absolute path)`` for each literal path of the
    catalog's hard-block path rules on the Read and write tools (module doc;
    ``docs/reference/floor.md`` lists the forms that count). ``"read"``: the rule refuses a
    Read of it (the floor hides it); ``"write"``: it refuses only writes."""
    from forge_policy.catalog.dsl import matcher_names
    from forge_policy.facts.files import READ_TOOLS
    from forge_policy.facts.governance import PATH_TOOLS

    path_fields = frozenset(PATH_TOOLS.values())
    tools = READ_TOOLS | frozenset(PATH_TOOLS)
    found: list[tuple[str, str, str]] = []
    for behavior in catalog:
        if not _holds_hard(behavior, profile):
            continue
        for trigger in behavior.triggers:
            if trigger.event != "PreToolUse" or trigger.action != "evaluate":
                continue
            names = matcher_names(trigger.matcher)
            if names is None:
                continue
            if behavior.applies_tools:
                names = names & behavior.applies_tools
            if not names or not names <= tools:
                continue
            kind = "read" if names & READ_TOOLS else "write"
            conditions = trigger.conditions
            if trigger.logic == "all" and len(conditions) != 1:
                continue  # several conditions must all hold: the path alone is not refused
            for condition in conditions:
                if condition.field not in path_fields:
                    continue
                for path in _literal_paths(condition.operator, condition.value, project, home):
                    found.append((behavior.id, kind, path))
    return found


def _holds_hard(behavior: Behavior, profile: str) -> bool:
    """Whether ``behavior`` refuses with no override from its first violation on, for every
    agent under ``profile``: enabled, enforcing, ``hard_block`` by default and not capped."""
    from forge_policy.levels import Level

    return (
        behavior.enabled
        and behavior.mode == "enforce"
        and behavior.default_level == Level.HARD_BLOCK
        and (behavior.level_cap is None or behavior.level_cap == Level.HARD_BLOCK)
        and not behavior.applies_agents
        and not behavior.excluded_by(profile)
    )


def _literal_paths(operator: str, value: object, project: str, home: str) -> list[str]:
    """The paths a literal path condition names (absolute), or none for another form."""
    if operator not in _LITERAL_OPERATORS:
        return []
    if operator == "in":
        texts = [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
    elif isinstance(value, str):
        texts = [value]
    else:
        return []
    out = []
    for text in texts:
        if operator == "glob":
            for tail in ("/**", "/*"):
                if text.endswith(tail):
                    text = text[: -len(tail)]
                    break
        if not text.strip() or _GLOB & set(text) or "$" in text.replace("$HOME", ""):
            continue
        if text == "~" or text.startswith("~/"):
            text = home + text[1:]
        elif text == "$HOME" or text.startswith("$HOME/"):
            text = home + text[5:]
        elif text.startswith("~"):
            continue  # another user's home: not this floor's
        path = os.path.normpath(os.path.join(project, text))
        if path in (project, home) or (project + "/").startswith(path.rstrip("/") + "/"):
            continue  # the whole project, the home folder or above: no path rule means that
        out.append(path)
    return out
