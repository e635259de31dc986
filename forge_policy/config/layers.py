"""Layered configuration (SPEC §10): profile, per-behavior settings and exceptions, never a fork.

Every layer is one YAML file with the same shape; a layer higher in this table wins for each
key it sets:

=========  ==============================================================  =====================
layer      file                                                            who writes it
=========  ==============================================================  =====================
managed    ``${FORGE_MANAGED_DIR:-/etc/forge-policy}/config.yaml``         an organisation
local      ``<FORGE_ROOT>/config.local.yaml`` (git-ignored)                one developer
project    ``<FORGE_ROOT>/config.yaml`` (committed)                        the team
user       ``${XDG_CONFIG_HOME:-~/.config}/forge-policy/config.yaml``      one developer
built-in   the catalog's own values                                        forge_policy
=========  ==============================================================  =====================

The shape::

    profile: strict                    # minimal | standard | strict (FORGE_PROFILE wins below)
    shadow: false                      # true: every behavior decides and audits, none blocks
    candidate: ../candidate-catalog    # read by ``shadow report`` (never decides)
    floor: harness                     # harness | own | off (SPEC §13); ``on`` means harness
    coverage: true                     # false: no ``seen`` audit record per tool call
    testing: {tdd_mode: strict}        # the git hooks' settings (forge_policy.config.project)
    behaviors:
      search-first: {enabled: false}
      verify-before-done: {escalation: [{after: 3, level: soft_block}]}
      risky-commands: {tuning: strict}                 # strict | relaxed (catalog.tuning)
      no-destructive-git: {level: hard_block, locked: true}   # locked: managed layer only
    exceptions:
      - {behavior: risky-commands, match: {command: "npm install left-pad"},
         until: 2026-12-31, reason: vendored}
    locked: [profile, floor]           # managed layer only: these keys cannot be loosened

**Locks.** ``locked: true`` on a behavior, and ``locked: [profile, floor, shadow, coverage]`` at
the top, mean something in the managed layer only (anywhere else they are reported and ignored). A
locked setting can be *tightened* by a lower layer or by the environment, never loosened below
the managed value: a locked behavior stays on (``enabled: false``, ``FORGE_DISABLE``, the
seeds' ``DISABLE_*`` switches and a profile that leaves it out do not turn it off), never
reaches a lower level at any count than the managed layer gives it (``level``, ``escalation``,
``tuning: relaxed``, ``shadow``), and no exception applies to it. A locked ``profile`` can
only move up (minimal < standard < strict), a locked ``floor`` only away from ``off``
(off < harness < own), a locked ``shadow: false`` cannot become true, nor a locked ``coverage:
true`` false. An unlocked managed value simply wins over the lower layers (the environment
still applies on top of it).

**Exceptions** are scoped, expiring allowances: an event that matches an unexpired exception
is allowed *for that behavior only* and every use is audited (kind ``exception``). ``match``
holds exactly one of ``command`` (the whole shell command, runs of whitespace counted as one
— a command with anything chained to it does not match), ``path`` (a file path relative to
the project or absolute; one ending in ``/`` matches every file below it) or ``tool`` (the
tool name). ``until`` is the last day it holds (local date). An expired exception does
nothing and is reported; one naming a locked or ``bypass: never`` behavior is refused.

**Problems.** A wrong type or value anywhere is a :class:`~forge_policy.errors.
ProjectConfigError` listing every problem at once, each as ``file:line: key: message``.
Unknown keys at the top level are warnings (other tools may share the file, as
:mod:`forge_policy.config.project` allows); unknown keys inside ``behaviors`` entries,
exceptions and ``match`` are errors (they are ours, and a misspelled ``enabeld`` silently
ignored would mislead).

**The managed bundle may be signed.** When ``public-key.pem`` (an Ed25519 public key) is in the
managed folder, ``config.yaml.sig`` (the detached signature of ``config.yaml``: 64 raw bytes
or their base64) must verify with it, checked with the ``cryptography`` package (imported only
then). A missing or bad signature, or a missing ``cryptography``, is an error: the managed
layer is never dropped silently, the hook refuses what it cannot decide (SPEC §9).

**Cost.** With no layer file present, a load is a few ``stat`` calls. Otherwise what the files
gave is memoised in the process and in a sealed cache beside the catalog cache
(``<FORGE_ROOT>/runtime/settings-cache.json``, written only when ``<FORGE_ROOT>`` exists), keyed by
each file's stat identity and sha256 as :mod:`forge_policy.catalog.cache` keys the catalog: a
warm hook parses no YAML and verifies no signature.

>>> settings = load_settings("/nowhere", "/nowhere/.forge", {"HOME": "/nowhere"})
>>> settings.profile, settings.files, settings.origins["profile"]
(None, (), 'built-in')
"""

from __future__ import annotations

import itertools
import json
import os

import attrs

from forge_policy.errors import ProjectConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

    from forge_policy.catalog.catalog import Catalog
    from forge_policy.config._layer_values import BehaviorSettings as BehaviorSettings
    from forge_policy.config._layer_values import ExceptionRule as ExceptionRule
    from forge_policy.config.last_good import Fallback


def __getattr__(name: str) -> Any:
    """:class:`BehaviorSettings` and :class:`ExceptionRule`, defined on first use (issue 28: a
    hook call in a project that sets neither builds neither, nor imports :mod:`datetime`)."""
    if name in ("BehaviorSettings", "ExceptionRule"):
        from forge_policy.config import _layer_values

        value = globals()[name] = getattr(_layer_values, name)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: the layers, lowest precedence first
LAYER_NAMES = ("user", "project", "local", "managed")
CONFIG_FILE = "config.yaml"
LOCAL_FILE = "config.local.yaml"
MANAGED_DIR = "/etc/forge-policy"
SIGNATURE_FILE = "config.yaml.sig"
PUBLIC_KEY_FILE = "public-key.pem"
CACHE_FILE = "settings-cache.json"
CACHE_FORMAT = 1
_CACHE_MAGIC = b"forge-policy-settings-cache"

PROFILES = ("minimal", "standard", "strict")
FLOOR_MODES = ("off", "harness", "own")  # loosest first
_FLOOR_ALIASES: dict[object, str] = {"on": "harness", True: "harness", False: "off"}
LEVELS = ("silent", "nudge", "warning", "soft_block", "hard_block")
TUNINGS = ("strict", "relaxed")
MATCH_KINDS = ("command", "path", "tool")
#: top-level keys a managed layer may lock
LOCKABLE = ("profile", "floor", "shadow", "coverage")
_TOP_KEYS = frozenset(
    {
        "profile",
        "shadow",
        "candidate",
        "floor",
        "coverage",
        "behaviors",
        "exceptions",
        "locked",
        "testing",
    }
)
_BEHAVIOR_KEYS = ("enabled", "level", "escalation", "tuning", "locked")
_EXCEPTION_KEYS = frozenset({"behavior", "match", "until", "reason"})
_MAX_BYTES = 1 << 20
BUILT_IN = "built-in"


@attrs.frozen
class Settings:
    """The effective settings of one project for one environment (SPEC §10).

    ``behaviors`` holds, per behavior id, the merged settings of every layer (a managed value
    wins where not locked); ``managed`` the managed layer's own settings of each *locked*
    behavior (the floor a lower layer cannot go below: :func:`overlay_spec` joins both);
    ``origins`` each dotted key's origin (``file:line``, an environment variable, or
    ``built-in``); ``files`` the layer files read; ``disable`` the environment's
    ``FORGE_DISABLE`` (and ``DISABLE_*``) entries that a lock does not refuse; ``notes``
    warnings (unknown keys, ignored locks, refused environment switches, expired exceptions).
    """

    profile: str | None = None
    shadow: bool | None = None
    candidate: str | None = None
    floor: str | None = None
    #: whether the hook appends a ``seen`` record per tool call (None: the default, true)
    coverage: bool | None = None
    behaviors: Mapping[str, BehaviorSettings] = attrs.field(factory=dict)
    exceptions: tuple[ExceptionRule, ...] = ()
    origins: Mapping[str, str] = attrs.field(factory=dict)
    files: tuple[str, ...] = ()
    managed: Mapping[str, BehaviorSettings] = attrs.field(factory=dict)
    locks: frozenset[str] = frozenset()
    disable: Mapping[str, str] = attrs.field(factory=dict)
    notes: tuple[str, ...] = ()
    #: the profile the managed layer holds locked behaviors to (their reference)
    managed_profile: str | None = None
    #: while a layer does not load: the last layers that loaded are these settings, and this
    #: says so (:mod:`forge_policy.config.last_good`, SPEC §10); None when every layer loads
    fallback: Fallback | None = attrs.field(default=None, eq=False, repr=False)

    def locked(self, behavior_id: str) -> bool:
        return behavior_id in self.managed

    def active_exceptions(self, today: datetime.date | None = None) -> tuple[ExceptionRule, ...]:
        """The exceptions not expired on ``today`` (default: the local date)."""
        if today is None:
            import datetime

            today = datetime.date.today()
        day = today
        return tuple(rule for rule in self.exceptions if not rule.expired(day))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form ``forge-policy config --json`` prints."""
        behaviors = {}
        for behavior_id, bs in sorted(self.behaviors.items()):
            entry: dict[str, Any] = {
                key: getattr(bs, key)
                for key in ("enabled", "level", "tuning")
                if getattr(bs, key) is not None
            }
            if bs.escalation is not None:
                entry["escalation"] = [{"after": a, "level": lv} for a, lv in bs.escalation]
            if bs.locked:
                entry["locked"] = True
            behaviors[behavior_id] = entry
        return {
            "profile": self.profile,
            "shadow": self.shadow,
            "candidate": self.candidate,
            "floor": self.floor,
            "coverage": self.coverage,
            "behaviors": behaviors,
            "exceptions": [rule.to_dict() for rule in self.exceptions],
            "locked": sorted(self.locks),
            "files": list(self.files),
            "notes": list(self.notes),
        }


#: The seeds' environment bypasses (SPEC §7), as aliases of ``FORGE_DISABLE`` entries.
LEGACY_DISABLE: dict[str, tuple[str, ...]] = {
    "DISABLE_AGENT_SHIELD": ("agent-shield", "agent-shield-ask", "agent-shield-startup"),
    "DISABLE_TOKEN_ADVISOR": ("token-budget",),
    "DISABLE_OSPEC_PRECOMMIT": ("strict-tdd",),
    "DISABLE_OSPEC_ATTRIBUTION_CHECK": ("no-model-attribution",),
}
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def disabled_switches(get: Callable[[str], str]) -> dict[str, str]:
    """``FORGE_DISABLE`` and the seeds' ``DISABLE_*`` switches: behavior id -> the variable;
    :class:`~forge_policy.errors.ConfigError` for an id that cannot be one."""
    from forge_policy.errors import ConfigError

    found: dict[str, str] = {}
    for variable, behavior_ids in LEGACY_DISABLE.items():
        if get(variable).lower() in ("true", "1"):
            for behavior_id in behavior_ids:
                found.setdefault(behavior_id, variable)
    for item in get("FORGE_DISABLE").split(","):
        behavior_id = item.strip()
        if not behavior_id:
            continue
        if (
            len(behavior_id) < 2
            or not set(behavior_id) <= _ID_CHARS
            or not behavior_id[0].isalpha()
            or behavior_id.endswith("-")
        ):
            raise ConfigError(f"FORGE_DISABLE: invalid behavior id {behavior_id!r}")
        found[behavior_id] = "FORGE_DISABLE"
    return found


# -- where the layers are ----------------------------------------------------------------------


def layer_paths(forge_root: str, environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """``(layer name, file)`` of every layer, lowest precedence first.

    >>> for _, path in layer_paths("/p/.forge", {"HOME": "/h", "FORGE_MANAGED_DIR": "/m"}):
    ...     print(path)
    /h/.config/forge-policy/config.yaml
    /p/.forge/config.yaml
    /p/.forge/config.local.yaml
    /m/config.yaml
    """
    home = environ.get("HOME") or os.path.expanduser("~")
    xdg = environ.get("XDG_CONFIG_HOME", "").strip() or os.path.join(home, ".config")
    managed = environ.get("FORGE_MANAGED_DIR", "").strip() or MANAGED_DIR
    return [
        ("user", os.path.join(xdg, "forge-policy", CONFIG_FILE)),
        ("project", os.path.join(forge_root, CONFIG_FILE)),
        ("local", os.path.join(forge_root, LOCAL_FILE)),
        ("managed", os.path.join(managed, CONFIG_FILE)),
    ]


def watched_files(forge_root: str, environ: Mapping[str, str]) -> list[str]:
    """Every file whose change changes the settings: the layers, the managed signature and
    key (what a long-lived process stats to know when to reload)."""
    paths = [path for _, path in layer_paths(forge_root, environ)]
    managed_dir = os.path.dirname(paths[-1])
    return [
        *paths,
        os.path.join(managed_dir, SIGNATURE_FILE),
        os.path.join(managed_dir, PUBLIC_KEY_FILE),
    ]


# -- loading -----------------------------------------------------------------------------------

#: what the files gave, per fingerprint of every watched file (the process's memo), and the
#: last-good fallback when they did not load
_MEMO: dict[tuple[Any, ...], tuple[list[dict[str, Any]], Fallback | None]] = {}
#: the name of the layers' last-good copy (:mod:`forge_policy.config.last_good`)
LAST_GOOD = "settings"
#: fingerprints whose layers loaded but are not kept as the last good ones yet (the value:
#: whether they were parsed now, so that the copy is rewritten)
_UNKEPT: dict[tuple[Any, ...], bool] = {}


def _identity(path: str) -> tuple[int, ...] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None
    except OSError as exc:
        raise ProjectConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, st.st_ctime_ns)


def load_settings(project_dir: str, forge_root: str, environ: Mapping[str, str]) -> Settings:
    """The effective settings: every layer merged, the environment (``FORGE_PROFILE``,
    ``FORGE_DISABLE``, ``DISABLE_*``) applied below the managed locks;
    ``FORGE_CANDIDATE_DIR`` (relative to the project) wins over ``candidate:``.

    When a layer does not load, the layers that last loaded in this project (a sealed copy
    under ``<forge_root>/runtime/``, :mod:`forge_policy.config.last_good`) are merged instead
    and :attr:`Settings.fallback` says so (SPEC §10: the last configuration that loaded keeps
    enforcing). Raises :class:`~forge_policy.errors.ProjectConfigError` listing every problem
    of every layer (``file:line: key: message``), and for a managed bundle whose signature
    does not verify, only when there is no trusted copy (a note on it says why).
    """
    forge_root = os.path.abspath(forge_root)
    watched = watched_files(forge_root, environ)
    fingerprint = tuple((path, _identity(path)) for path in watched)
    memo = _MEMO.get(fingerprint)
    if memo is None:
        parsed: bool | None = None
        try:
            layers, parsed = _layers(forge_root, watched, fingerprint)
        except ProjectConfigError as exc:
            memo = _last_good_layers(forge_root, exc)
        else:
            memo = (layers, None)
        if len(_MEMO) > 16:  # before this load is noted: clearing after it lost its keep
            _MEMO.clear()
            _UNKEPT.clear()
        if parsed is not None:
            _UNKEPT[fingerprint] = parsed
        _MEMO[fingerprint] = memo
    layers, fallback = memo
    if fingerprint in _UNKEPT and _keep(forge_root, layers, _UNKEPT[fingerprint]):
        del _UNKEPT[fingerprint]
    settings = merge(layers, environ, project_dir)
    return settings if fallback is None else attrs.evolve(settings, fallback=fallback)


def _layers(
    forge_root: str, watched: list[str], fingerprint: tuple[Any, ...]
) -> tuple[list[dict[str, Any]], bool]:
    """The parsed layers (:class:`ProjectConfigError` when one does not load) and whether
    their files were parsed now (not read from the sealed cache)."""
    if all(identity is None for _, identity in fingerprint[:4]):
        if fingerprint[5][1] is not None:  # a key and no managed config: fail closed
            raise ProjectConfigError(
                f"{watched[5]}: a signing key is installed but {watched[3]} is missing: "
                "the managed configuration cannot be verified"
            )
        return [], False  # the defaults
    return _cached_layers(forge_root, watched, fingerprint)


def _keep(forge_root: str, layers: list[dict[str, Any]], parsed: bool) -> bool:
    """Keep ``layers`` as the last good ones (when parsed now, or when no copy exists);
    False while ``<forge_root>/runtime`` does not exist yet (a later load keeps them: the
    folder is never made here)."""
    from forge_policy.config.saved_copies import exists

    folder = os.path.join(forge_root, "runtime")
    if not os.path.isdir(folder):
        return False
    if parsed or not exists(folder, LAST_GOOD):
        from forge_policy.config import last_good

        last_good.save(folder, LAST_GOOD, {"layers": layers})
    return True


def _last_good_layers(
    forge_root: str, exc: ProjectConfigError
) -> tuple[list[dict[str, Any]], Fallback]:
    """The layers of the last good copy and the :class:`~forge_policy.config.last_good.
    Fallback` that says they enforce in place of the files (naming the first problem of
    ``exc``); ``exc``, with a note saying why, when there is no copy to trust."""
    from forge_policy.config import last_good

    folder = os.path.join(forge_root, "runtime")
    saved, why = last_good.load(folder, LAST_GOOD)
    layers = saved.document.get("layers") if saved is not None else None
    if (
        saved is None
        or not isinstance(layers, list)
        or not all(isinstance(layer, dict) for layer in layers)
    ):
        why = why or "sealed but malformed"
        exc.add_note(
            "no configuration has loaded in this project yet"
            if why == "none saved"
            else f"the saved last good configuration is not used: {why}"
        )
        raise exc
    problems = str(exc).splitlines() or [""]
    first = problems[0]
    if len(problems) > 1:
        more = len(problems) - 1
        first += f" (and {more} more problem{'s' if more > 1 else ''})"
    return layers, last_good.Fallback("configuration", first, saved.saved_at, saved.path)


def _cached_layers(
    forge_root: str, watched: list[str], fingerprint: tuple[Any, ...]
) -> tuple[list[dict[str, Any]], bool]:
    """The parsed layers from the sealed cache when every watched file is unchanged, else
    parsed (and the cache rewritten); and whether they were parsed."""
    cache = os.path.join(forge_root, "runtime", CACHE_FILE)
    found = _read_cache(cache, fingerprint)
    if found is not None:
        return found, False
    from forge_policy.catalog.cache import _sha256

    hashes = {path: _sha256(path) for path, identity in fingerprint if identity is not None}
    layers = parse_layers(watched)
    if os.path.isdir(forge_root):  # never makes the project's .forge, only its runtime/
        _write_cache(cache, fingerprint, hashes, layers)
    return layers, True


def parse_layers(watched: list[str]) -> list[dict[str, Any]]:
    """Every existing layer file parsed into its plain form (see :func:`_parse_layer`); every
    problem of every file at once as one :class:`ProjectConfigError`."""
    problems: list[str] = []
    layers: list[dict[str, Any]] = []
    for name, path in zip(LAYER_NAMES, watched[:4], strict=True):
        if _identity(path) is None:
            if name == "managed" and _identity(watched[5]) is not None:
                problems.append(
                    f"{watched[5]}: a signing key is installed but {path} is missing: the "
                    "managed configuration cannot be verified"
                )
            continue
        if name == "managed":
            problem = verify_managed(path, watched[4], watched[5])
            if problem:
                problems.append(problem)
                continue
        layer, found = _parse_layer(name, path)
        problems += found
        if layer is not None:
            layers.append(layer)
    if problems:
        raise ProjectConfigError("\n".join(problems))
    return layers


def verify_managed(config: str, signature: str, key: str) -> str:
    """Why the managed ``config`` does not verify against ``key`` (``""``: it does, or there is
    no key, so nothing is to verify). Imports ``cryptography`` only when a key is present."""
    try:
        with open(key, "rb") as handle:
            key_data = handle.read(1 << 16)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        return f"{key}: cannot read the managed signing key: {exc.strerror or exc}"
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
        from cryptography.hazmat.primitives.serialization import load_pem_public_key
    except ImportError:
        return (
            f"{key}: a signed managed configuration needs the 'cryptography' package "
            "(pip install 'forge-policy[managed]'); refusing to use it unverified"
        )
    try:
        public = load_pem_public_key(key_data)
    except ValueError as exc:
        return f"{key}: not a PEM public key: {exc}"
    if not isinstance(public, Ed25519PublicKey):
        return f"{key}: not an Ed25519 public key"
    try:
        with open(signature, "rb") as handle:
            sig = handle.read(1 << 12)
        with open(config, "rb") as handle:
            data = handle.read(_MAX_BYTES + 1)
    except FileNotFoundError:
        return (
            f"{signature}: missing: the managed configuration is signed with {key} but has "
            "no signature; refusing to use it unverified"
        )
    except OSError as exc:
        return f"{signature}: cannot read: {exc.strerror or exc}"
    if len(sig) != 64:
        import base64
        import binascii

        try:
            sig = base64.b64decode(sig.strip(), validate=True)
        except (binascii.Error, ValueError):
            sig = b""
    try:
        public.verify(sig, data)
    except InvalidSignature:
        return (
            f"{signature}: the signature of {config} does not verify with {key}: the managed "
            "configuration was changed or signed with another key; refusing to use it"
        )
    return ""


# -- one file ----------------------------------------------------------------------------------


def _parse_layer(name: str, path: str) -> tuple[dict[str, Any] | None, list[str]]:
    """One layer file as plain data: ``{"name", "file", "values": {dotted key: [value, line]},
    "exceptions": [...], "locks": [...], "notes": [...]}`` and the problems found."""
    from forge_policy.catalog.yaml_io import key_line, position, read_yaml

    try:
        size = os.stat(path).st_size
    except OSError as exc:
        return None, [f"{path}: cannot read: {exc.strerror or exc}"]
    if size > _MAX_BYTES:
        return None, [f"{path}: file too large ({size} bytes, at most {_MAX_BYTES})"]
    document = _plain_document(path)
    if document is None:
        document, issues = read_yaml(path, path)
        if issues:
            return None, [str(issue) for issue in issues]
    layer: dict[str, Any] = {
        "name": name,
        "file": path,
        "values": {},
        "exceptions": [],
        "locks": [],
        "notes": [],
    }
    if document is None:
        return layer, []
    if not isinstance(document, dict):
        return None, [f"{path}:1: expected a mapping at the top level"]
    problems: list[str] = []
    values: dict[str, list[Any]] = layer["values"]
    managed = name == "managed"

    def where(mapping: Any, key: str) -> str:
        return f"{path}:{key_line(mapping, key) or position(mapping, ())[0]}"

    for key in document:
        if key not in _TOP_KEYS:
            layer["notes"].append(f"{where(document, key)}: {key}: unknown key, ignored")
    for key in ("profile", "candidate"):
        if key in document and document[key] is not None:
            value = document[key]
            if not isinstance(value, str) or (key == "profile" and value not in PROFILES):
                expected = "one of " + ", ".join(PROFILES) if key == "profile" else "a path"
                problems.append(
                    f"{where(document, key)}: {key}: expected {expected}, got {value!r}"
                )
            else:
                values[key] = [value, key_line(document, key)]
    if "shadow" in document and document["shadow"] is not None:
        if not isinstance(document["shadow"], bool):
            problems.append(
                f"{where(document, 'shadow')}: shadow: expected true or false, "
                f"got {document['shadow']!r}"
            )
        else:
            values["shadow"] = [document["shadow"], key_line(document, "shadow")]
    if "coverage" in document and document["coverage"] is not None:
        if not isinstance(document["coverage"], bool):
            problems.append(
                f"{where(document, 'coverage')}: coverage: expected true or false, "
                f"got {document['coverage']!r}"
            )
        else:
            values["coverage"] = [document["coverage"], key_line(document, "coverage")]
    if "floor" in document and document["floor"] is not None:
        raw = document["floor"]
        mode = _FLOOR_ALIASES.get(raw, raw) if isinstance(raw, (str, bool)) else raw
        if mode not in FLOOR_MODES:
            problems.append(
                f"{where(document, 'floor')}: floor: expected one of harness, own, off, got {raw!r}"
            )
        else:
            values["floor"] = [mode, key_line(document, "floor")]
    if "locked" in document and document["locked"] is not None:
        locks = document["locked"]
        if isinstance(locks, str):
            locks = [locks]
        if not isinstance(locks, list) or not all(lock in LOCKABLE for lock in locks):
            problems.append(
                f"{where(document, 'locked')}: locked: expected a list of "
                f"{', '.join(LOCKABLE)}, got {locks!r}"
            )
        elif not managed:
            layer["notes"].append(
                f"{where(document, 'locked')}: locked: means something in the managed layer "
                "only; ignored here"
            )
        else:
            line = key_line(document, "locked")
            layer["locks"] += [[str(lock), line] for lock in locks]
    behaviors = document.get("behaviors")
    if behaviors is not None:
        if not isinstance(behaviors, dict):
            problems.append(f"{where(document, 'behaviors')}: behaviors: expected a mapping")
        else:
            for behavior_id, entry in behaviors.items():
                problems += _parse_behavior(layer, behaviors, str(behavior_id), entry, managed)
    exceptions = document.get("exceptions")
    if exceptions is not None:
        if not isinstance(exceptions, list):
            problems.append(f"{where(document, 'exceptions')}: exceptions: expected a list")
        else:
            for index, entry in enumerate(exceptions):
                problems += _parse_exception(layer, exceptions, index, entry)
    return (layer if not problems else None), problems


class _Marks:
    """Where each key of a plain document is, as ruamel's ``lc`` tells it (0-based)."""

    def __init__(self, lines: dict[str, int]) -> None:
        self.lines = lines
        self.line, self.col = 0, 0

    def key(self, key: str) -> tuple[int, int]:
        return (self.lines[key], 0)


class _PlainDocument(dict):  # type: ignore[type-arg]
    """A plain document, with ruamel's ``lc`` so that lines are found the same way."""

    lc: _Marks


_PLAIN_KEY = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
_PLAIN_VALUE = _PLAIN_KEY | frozenset("./~+")


def _plain_document(path: str) -> _PlainDocument | None:
    """The file read without a YAML parser when it is simple enough to be sure of it: only
    unindented ``key: scalar`` lines (a word, optionally quoted, an optional trailing comment),
    comments and blank lines. None: the YAML parser decides (and names a bad line).

    A plain file is what most layers are (``profile: strict``, ``floor: own``): reading it
    costs no ruamel import, cached or not.
    """
    try:
        with open(path, "rb") as handle:
            raw = handle.read(_MAX_BYTES + 1)
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return plain_document(text)


def plain_document(text: str) -> _PlainDocument | None:
    """See :func:`_plain_document`.

    >>> plain_document("profile: minimal\\nfloor: off  # audited\\nshadow: false\\n")
    {'profile': 'minimal', 'floor': 'off', 'shadow': False}
    >>> plain_document("floor: &a own\\n") is None, plain_document("a: {floor: off}\\n") is None
    (True, True)
    >>> plain_document("behaviors:\\n  x: {enabled: false}\\n") is None
    True
    """
    found = _PlainDocument()
    lines: dict[str, int] = {}
    for number, line in enumerate(text.splitlines()):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if line[0] in " \t" or stripped.startswith(("---", "...", "%")):
            return None
        key, colon, rest = line.partition(":")
        if not colon or not key or not set(key) <= _PLAIN_KEY or key in found:
            return None
        if rest and not rest.startswith(" "):
            return None
        value = rest.split(" #", 1)[0].strip()
        if len(value) >= 2 and value[0] in "'\"" and value[-1] == value[0]:
            inner = value[1:-1]
            if not set(inner) <= _PLAIN_VALUE:
                return None
            found[key] = inner
        elif not value:
            return None  # a mapping or list follows, or null: the parser decides
        elif not set(value) <= _PLAIN_VALUE:
            return None
        elif value in ("true", "True", "TRUE", "false", "False", "FALSE"):
            found[key] = value.lower() == "true"
        elif value in ("null", "Null", "NULL", "~") or value[0] in "0123456789+-.":
            return None  # numbers and nulls: the parser's spelling rules
        else:
            found[key] = value
        lines[key] = number
    found.lc = _Marks(lines)
    return found


def _parse_behavior(
    layer: dict[str, Any], behaviors: Any, behavior_id: str, entry: Any, managed: bool
) -> list[str]:
    from forge_policy.catalog.yaml_io import key_line, plain, position

    path = layer["file"]
    prefix = f"behaviors.{behavior_id}"
    line = key_line(behaviors, behavior_id)
    if not isinstance(entry, dict):
        return [f"{path}:{line}: {prefix}: expected a mapping such as {{enabled: false}}"]
    problems: list[str] = []
    values = layer["values"]

    def at(key: str) -> int:
        return key_line(entry, key) or position(entry, ())[0] or line

    for key, value in entry.items():
        here = f"{path}:{at(key)}: {prefix}.{key}"
        if key not in _BEHAVIOR_KEYS:
            import difflib

            close = difflib.get_close_matches(str(key), _BEHAVIOR_KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(f"{here}: unknown key{hint}: expected {', '.join(_BEHAVIOR_KEYS)}")
        elif value is None:
            continue
        elif key in ("enabled", "locked") and not isinstance(value, bool):
            problems.append(f"{here}: expected true or false, got {value!r}")
        elif key == "level" and value not in LEVELS:
            problems.append(f"{here}: expected one of {', '.join(LEVELS)}, got {value!r}")
        elif key == "tuning" and value not in TUNINGS:
            problems.append(f"{here}: expected one of {', '.join(TUNINGS)}, got {value!r}")
        elif key == "escalation":
            steps, problem = _escalation(plain(value))
            if problem:
                problems.append(f"{here}: {problem}")
            else:
                values[f"{prefix}.escalation"] = [steps, at(key)]
        elif key == "locked":
            if value and not managed:
                layer["notes"].append(
                    f"{here}: means something in the managed layer only; ignored here"
                )
            elif value:
                layer["locks"].append([prefix, at(key)])
        else:
            values[f"{prefix}.{key}"] = [value, at(key)]
    return problems


def _escalation(value: Any) -> tuple[list[list[Any]], str]:
    """``[{after, level}, ...]`` as ``[[after, level], ...]``, or the problem (SPEC §3.10:
    ``after`` ≥ 1 and strictly increasing, levels known and non-decreasing).

    >>> _escalation([{"after": 3, "level": "soft_block"}])
    ([[3, 'soft_block']], '')
    >>> _escalation([{"after": 3, "level": "warning"}, {"after": 2, "level": "soft_block"}])[1]
    'steps must have strictly increasing after and non-decreasing levels'
    """
    if not isinstance(value, list):
        return [], "expected a list of {after: N, level: LEVEL}"
    steps: list[list[Any]] = []
    for item in value:
        if (
            not isinstance(item, dict)
            or set(item) != {"after", "level"}
            or type(item["after"]) is not int
            or item["after"] < 1
            or item["level"] not in LEVELS
        ):
            return (
                [],
                f"expected {{after: N >= 1, level: one of {', '.join(LEVELS)}}}, got {item!r}",
            )
        steps.append([item["after"], item["level"]])
    for (a1, l1), (a2, l2) in itertools.pairwise(steps):
        if a2 <= a1 or LEVELS.index(l2) < LEVELS.index(l1):
            return [], "steps must have strictly increasing after and non-decreasing levels"
    return steps, ""


def _parse_exception(layer: dict[str, Any], listed: Any, index: int, entry: Any) -> list[str]:
    from forge_policy.catalog.yaml_io import key_line, plain, position

    path = layer["file"]
    line = position(listed, (index,))[0]
    prefix = f"exceptions[{index}]"
    if not isinstance(entry, dict):
        return [f"{path}:{line}: {prefix}: expected a mapping {{behavior, match, until, reason}}"]
    problems = []
    for key in entry:
        if key not in _EXCEPTION_KEYS:
            problems.append(
                f"{path}:{key_line(entry, key) or line}: {prefix}.{key}: unknown key: expected "
                "behavior, match, until, reason"
            )
    for key in sorted(_EXCEPTION_KEYS - set(entry)):
        problems.append(f"{path}:{line}: {prefix}.{key}: required")
    if problems:
        return problems
    behavior, match, until, reason = (
        plain(entry[k]) for k in ("behavior", "match", "until", "reason")
    )

    def bad(key: str, message: str) -> None:
        problems.append(f"{path}:{key_line(entry, key) or line}: {prefix}.{key}: {message}")

    if not isinstance(behavior, str) or not behavior:
        bad("behavior", f"expected a behavior id, got {behavior!r}")
    if not isinstance(reason, str) or not reason.strip():
        bad("reason", "expected a non-empty reason (it is audited with every use)")
    kind = value = ""
    if (
        not isinstance(match, dict)
        or len(match) != 1
        or next(iter(match)) not in MATCH_KINDS
        or not isinstance(next(iter(match.values())), str)
        or not next(iter(match.values())).strip()
    ):
        bad("match", f"expected exactly one of {{command|path|tool: text}}, got {match!r}")
    else:
        kind, value = next(iter(match.items()))
    import datetime

    day = None
    try:
        day = datetime.date.fromisoformat(str(until))
    except ValueError:
        bad("until", f"expected a date YYYY-MM-DD, got {until!r}")
    if not problems and day is not None:
        layer["exceptions"].append([behavior, kind, value, day.isoformat(), reason.strip(), line])
    return problems


# -- merging -----------------------------------------------------------------------------------


def _tighter(order: Iterable[object], a: object, b: object) -> object:
    ranks = list(order)
    return a if ranks.index(a) >= ranks.index(b) else b


def merge(
    layers: list[dict[str, Any]], environ: Mapping[str, str], project_dir: str = ""
) -> Settings:
    """Settings from parsed layers (lowest first) and the environment: pure.

    >>> layer = {"name": "managed", "file": "/m/config.yaml", "values": {"profile": ["strict", 1]},
    ...          "exceptions": [], "locks": [["profile", 2]], "notes": []}
    >>> s = merge([layer], {"FORGE_PROFILE": "minimal"})
    >>> s.profile, s.origins["profile"]
    ('strict', '/m/config.yaml:1')
    >>> print(s.notes[0])
    FORGE_PROFILE=minimal: profile is locked at strict by /m/config.yaml:2; ignored
    """
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    lower: dict[str, Any] = {}  # what the layers below managed say (for locked keys)
    lower_origins: dict[str, str] = {}
    notes: list[str] = []
    locks: dict[str, str] = {}
    exceptions: list[ExceptionRule] = []
    files: list[str] = []
    for layer in layers:
        files.append(layer["file"])
        notes += layer["notes"]
        for key, (value, line) in layer["values"].items():
            values[key] = value
            origins[key] = f"{layer['file']}:{line}"
            if layer["name"] != "managed":
                lower[key] = value
                lower_origins[key] = origins[key]
        for key, line in layer["locks"]:
            locks[key] = f"{layer['file']}:{line}"
        for behavior, kind, value, until, reason, line in layer["exceptions"]:
            import datetime

            from forge_policy.config._layer_values import ExceptionRule

            day = datetime.date.fromisoformat(until)
            origin = f"{layer['file']}:{line}"
            if kind == "path" and project_dir and not os.path.isabs(value):
                # relative to the project; a trailing "/" (a folder) is kept
                tail = "/" if value.endswith("/") else ""
                value = os.path.normpath(os.path.join(project_dir, value)) + tail
            exceptions.append(ExceptionRule(behavior, kind, value, day, reason, origin))
    managed_values: dict[str, Any] = next(
        (layer["values"] for layer in layers if layer["name"] == "managed"), {}
    )

    # locked scalars: a lower layer may tighten, never loosen
    orders: dict[str, tuple[object, ...]] = {
        "profile": PROFILES,
        "floor": FLOOR_MODES,
        "shadow": (True, False),
        "coverage": (False, True),
    }
    for key, order in orders.items():
        if key in locks and key in managed_values and key in lower:
            held = managed_values[key][0]
            chosen = _tighter(order, lower[key], held)
            values[key] = chosen
            if chosen != held:
                origins[key] = lower_origins[key]

    # the environment, below the locks
    profile = values.get("profile")
    env_profile = environ.get("FORGE_PROFILE", "").strip()
    if env_profile in PROFILES:
        if "profile" in locks and "profile" in managed_values:
            held = managed_values["profile"][0]
            if _tighter(PROFILES, env_profile, held) == env_profile:
                profile, origins["profile"] = env_profile, "FORGE_PROFILE"
            else:
                notes.append(
                    f"FORGE_PROFILE={env_profile}: profile is locked at {held} by "
                    f"{locks['profile']}; ignored"
                )
        else:
            profile, origins["profile"] = env_profile, "FORGE_PROFILE"
    origins.setdefault("profile", BUILT_IN)
    # FORGE_CANDIDATE_DIR wins over the layers (as FORGE_PROFILE does); the candidate never
    # decides, so no lock holds it
    env_candidate = environ.get("FORGE_CANDIDATE_DIR", "").strip()
    if env_candidate:
        folder = os.path.expanduser(env_candidate)
        values["candidate"] = os.path.normpath(os.path.join(project_dir, folder))
        origins["candidate"] = "FORGE_CANDIDATE_DIR"
    for key in ("shadow", "candidate", "floor", "coverage"):
        origins.setdefault(key, BUILT_IN)

    behaviors: dict[str, BehaviorSettings] = {}
    managed: dict[str, BehaviorSettings] = {}
    ids = sorted(
        {key.split(".")[1] for key in values if key.startswith("behaviors.")}
        | {key.split(".", 1)[1] for key in locks if key.startswith("behaviors.")}
    )
    for behavior_id in ids:
        prefix = f"behaviors.{behavior_id}"
        is_locked = prefix in locks
        source = lower if is_locked else values
        behaviors[behavior_id] = _behavior(source, prefix, is_locked)
        if is_locked:
            managed[behavior_id] = _behavior(managed_values, prefix, True, raw=True)
            origins[f"{prefix}.locked"] = locks[prefix]
            for key in _BEHAVIOR_KEYS[:4]:
                dotted = f"{prefix}.{key}"
                if dotted in managed_values and dotted not in lower:
                    origins[dotted] = (
                        f"{locks[prefix].rsplit(':', 1)[0]}:{managed_values[dotted][1]}"
                    )
                elif dotted in lower:
                    origins[dotted] = lower_origins[dotted]

    disable: dict[str, str] = {}
    switches = disabled_switches(lambda name: environ.get(name, "").strip())
    for behavior_id, variable in switches.items():
        if behavior_id in managed:
            notes.append(
                f"{variable}: {behavior_id} is locked by {locks['behaviors.' + behavior_id]}; "
                "it stays on"
            )
        else:
            disable[behavior_id] = variable

    kept: list[ExceptionRule] = []
    if exceptions:
        import datetime

        today = datetime.date.today()
    for rule in exceptions:
        if rule.behavior in managed:
            notes.append(
                f"{rule.origin}: exception for {rule.behavior} refused: the behavior is locked "
                f"by {locks['behaviors.' + rule.behavior]}"
            )
            continue
        if rule.expired(today):
            notes.append(
                f"{rule.origin}: exception for {rule.behavior} expired on "
                f"{rule.until.isoformat()}; it does nothing"
            )
        kept.append(rule)
    managed_profile = managed_values.get("profile", [None])[0]
    return Settings(
        profile=profile,
        shadow=values.get("shadow"),
        candidate=_placed(values.get("candidate"), origins.get("candidate", ""), project_dir),
        floor=values.get("floor"),
        coverage=values.get("coverage"),
        behaviors=behaviors,
        exceptions=tuple(kept),
        origins=origins,
        files=tuple(files),
        managed=managed,
        locks=frozenset(locks),
        disable=disable,
        notes=tuple(notes),
        managed_profile=managed_profile,
    )


def _placed(candidate: str | None, origin: str, project_dir: str) -> str | None:
    """A relative ``candidate`` is relative to the folder of the file that set it."""
    if not candidate or os.path.isabs(candidate) or ":" not in origin:
        return candidate
    folder = os.path.dirname(origin.rsplit(":", 1)[0]) or project_dir
    return os.path.normpath(os.path.join(folder, os.path.expanduser(candidate)))


def _behavior(
    values: Mapping[str, Any], prefix: str, locked: bool, *, raw: bool = False
) -> BehaviorSettings:
    def get(key: str) -> Any:
        found = values.get(f"{prefix}.{key}")
        if raw and found is not None:
            return found[0]
        return found

    from forge_policy.config._layer_values import BehaviorSettings

    escalation = get("escalation")
    return BehaviorSettings(
        enabled=get("enabled"),
        level=get("level"),
        escalation=tuple((int(a), str(lv)) for a, lv in escalation) if escalation else None,
        tuning=get("tuning"),
        locked=locked,
    )


# -- the sealed cache --------------------------------------------------------------------------


def _loader_identity() -> list[int]:
    """This module's stat identity: a cache written by another version of the parser is not
    read (the version number does not change in an editable install)."""
    st = os.stat(__file__)
    return [st.st_mtime_ns, st.st_size, st.st_ino]


def _read_cache(path: str, fingerprint: tuple[Any, ...]) -> list[dict[str, Any]] | None:
    from forge_policy import __version__
    from forge_policy.catalog.cache import (
        _linked_project_folder,
        _read_key,
        _same,
        _sha256,
        seal,
    )

    if _linked_project_folder(path):  # read nothing from outside the project
        return None
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_BYTES * 8)
    except OSError:
        return None
    header, newline, body = data.partition(b"\n")
    words = header.split(b" ")
    if not newline or len(words) != 3 or words[0] != _CACHE_MAGIC:
        return None
    key = _read_key(os.path.dirname(path))
    if key is None or not _same(words[2].decode("ascii", "replace"), seal(key, body)):
        return None
    try:
        doc = json.loads(body)
        if doc.get("format") != CACHE_FORMAT or doc.get("forge_policy") != __version__:
            return None
        if doc.get("loader") != _loader_identity():  # an edited loader (editable install)
            return None
        recorded = doc["files"]
        if [entry[0] for entry in recorded] != [p for p, _ in fingerprint]:
            return None
        for (file, identity), (_, stat, digest) in zip(fingerprint, recorded, strict=True):
            if identity is None or stat is None:
                if (identity is None) != (stat is None):
                    return None
                continue
            if list(identity) != stat and _sha256(file) != digest:
                return None
        layers: list[dict[str, Any]] = doc["layers"]
    except (ValueError, KeyError, TypeError, OSError):
        return None
    return layers


def _write_cache(
    path: str,
    fingerprint: tuple[Any, ...],
    hashes: Mapping[str, str],
    layers: list[dict[str, Any]],
) -> None:
    import time

    from forge_policy import __version__
    from forge_policy.catalog.cache import (
        _ignore_in_git,
        _linked_project_folder,
        _make_key,
        _settled,
        _write_atomic,
        seal,
    )

    folder = os.path.dirname(path)
    if _linked_project_folder(path):  # the Harness Home contract: never through a symlink
        return
    try:
        if not os.path.isdir(folder):
            os.makedirs(folder, exist_ok=True)
            _ignore_in_git(folder)
    except OSError:
        return

    now = time.time_ns()
    files = [
        [file, list(_settled(identity, now)) if identity else None, hashes.get(file)]
        for file, identity in fingerprint
    ]
    doc = {
        "format": CACHE_FORMAT,
        "forge_policy": __version__,
        "loader": _loader_identity(),
        "files": files,
        "layers": layers,
    }
    try:
        body = json.dumps(doc, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError):
        return
    key = _make_key(folder)
    if key is None:
        return
    _write_atomic(
        path, b"%s %d %s\n" % (_CACHE_MAGIC, CACHE_FORMAT, seal(key, body).encode()) + body
    )


# -- applying the settings to a catalog --------------------------------------------------------


def _level_at(spec: Mapping[str, Any], counter: int) -> int:
    """The level (an index in :data:`LEVELS`) of the ``counter``-th violation of ``spec``."""
    level = LEVELS.index(spec["default_level"])
    for after, step in spec.get("escalation", ()):
        if counter >= after:
            level = max(level, LEVELS.index(step))
    cap = spec.get("level_cap")
    return min(level, LEVELS.index(cap)) if cap else level


def join_specs(held: Mapping[str, Any], wanted: Mapping[str, Any]) -> dict[str, Any]:
    """``wanted`` never looser than ``held`` (a locked behavior): on when either is, at every
    count the higher of the two levels, enforcing unless both are shadow.

    >>> held = {"id": "x", "default_level": "warning", "escalation": [[3, "hard_block"]]}
    >>> wanted = {"id": "x", "default_level": "nudge", "escalation": [[2, "soft_block"]],
    ...           "level_cap": "warning", "enabled": False}
    >>> joined = join_specs(held, wanted)
    >>> joined["default_level"], joined["escalation"], joined["enabled"], "level_cap" in joined
    ('warning', [[3, 'hard_block']], True, False)
    """
    joined = dict(wanted)
    joined["enabled"] = bool(held.get("enabled", True)) or bool(wanted.get("enabled", True))
    if held.get("mode", "enforce") == "enforce":
        joined["mode"] = "enforce"
    points = sorted({0, *(a for a, _ in held.get("escalation", ())),
                     *(a for a, _ in wanted.get("escalation", ()))})  # fmt: skip
    default = max(_level_at(held, 0), _level_at(wanted, 0))
    steps: list[list[Any]] = []
    current = default
    for point in points[1:]:
        level = max(_level_at(held, point), _level_at(wanted, point))
        if level > current:
            steps.append([point, LEVELS[level]])
            current = level
    joined["default_level"] = LEVELS[default]
    joined["escalation"] = steps
    joined.pop("level_cap", None)
    if held.get("bypass") == "never":
        joined["bypass"] = "never"
    if wanted.get("tuning") == "relaxed" and held.get("tuning") != "relaxed":
        joined.pop("tuning")  # refused: what holds is the join, not a relaxed ladder
        if held.get("tuning"):
            joined["tuning"] = held["tuning"]
    return joined


def apply_behavior(spec: Mapping[str, Any], bs: BehaviorSettings) -> dict[str, Any]:
    """A behavior's normalised spec with its layered settings applied: ``enabled`` as the
    index's ``enabled`` is, ``level`` (the default level; escalation steps below it are
    raised to it), ``escalation`` (replaces the catalog's), then ``tuning`` through
    :func:`forge_policy.catalog.tuning.tune` — the one transform the catalog loader applies.

    Raises ``ValueError`` naming the problem (a ``bypass: never`` behavior cannot be relaxed or
    lowered; ``protect-governance`` cannot be disabled).
    """
    from forge_policy.catalog.tuning import tune

    result = dict(spec)
    never = spec.get("bypass") == "never"
    if bs.enabled is not None:
        # the project's choice, as index.yaml's enabled was (no-model-attribution in a project
        # whose domain names AI vendors); bypass: never holds against the agent, and no layer
        # switches off the guard of governance itself (forge_policy.ops.toggles)
        if never and not bs.enabled and spec["id"] == "protect-governance":
            raise ValueError(f"{spec['id']} is marked bypass: never: it cannot be disabled")
        result["enabled"] = bs.enabled
    if bs.escalation is not None:
        result["escalation"] = [[a, lv] for a, lv in bs.escalation]
    if bs.level is not None:
        if never and LEVELS.index(bs.level) < LEVELS.index(spec["default_level"]):
            raise ValueError(f"{spec['id']} is marked bypass: never: its level cannot be lowered")
        result["default_level"] = bs.level
    floor = LEVELS.index(result["default_level"])
    result["escalation"] = [
        [int(a), LEVELS[max(floor, LEVELS.index(lv))]] for a, lv in result.get("escalation", ())
    ]
    # drop steps that no longer raise the level (SPEC §3.10 keeps levels non-decreasing)
    kept: list[list[Any]] = []
    current = floor
    for after, level in result["escalation"]:
        if LEVELS.index(level) > current:
            kept.append([after, level])
            current = LEVELS.index(level)
    result["escalation"] = kept
    if bs.tuning is not None:
        result = tune(result, bs.tuning)
    return result


def overlay_catalog(catalog: Catalog, settings: Settings) -> tuple[Catalog, list[str]]:
    """``catalog`` with the settings applied (only the behaviors they change are rebuilt), and
    a note per setting that names no behavior of the catalog or cannot apply.

    Raises :class:`ProjectConfigError` when a setting cannot apply (``file:line: key: why``).
    """
    from forge_policy.catalog.behavior import DEFAULT_PROFILE, Behavior
    from forge_policy.catalog.catalog import Catalog

    notes: list[str] = []
    changed: dict[str, Behavior] = {}
    problems: list[str] = []
    profile = settings.profile or DEFAULT_PROFILE
    reference = settings.managed_profile or DEFAULT_PROFILE
    for behavior_id in sorted(set(settings.behaviors) | set(settings.managed)):
        behavior = catalog.get(behavior_id)
        if behavior is None:
            where = settings.origins.get(f"behaviors.{behavior_id}.enabled") or next(
                (
                    v
                    for k, v in settings.origins.items()
                    if k.startswith(f"behaviors.{behavior_id}.")
                ),
                "",
            )
            notes.append(f"{where}: behaviors.{behavior_id}: no such behavior in the catalog")
            continue
        bs = settings.behaviors.get(behavior_id)
        if bs is None:  # a locked behavior the lower layers leave alone
            from forge_policy.config._layer_values import BehaviorSettings

            bs = BehaviorSettings()
        try:
            spec = apply_behavior(behavior.spec, bs)
            if settings.shadow and not bs.locked and spec.get("bypass") != "never":
                spec["mode"] = "shadow"
            if behavior_id in settings.managed:
                held = apply_behavior(behavior.spec, settings.managed[behavior_id])
                spec = join_specs(held, spec)
                probe = Behavior(spec)
                if probe.excluded_by(profile) and not Behavior(held).excluded_by(reference):
                    applies = dict(spec.get("applies_to") or {})
                    applies["profiles"] = sorted({*applies.get("profiles", ()), profile})
                    spec["applies_to"] = applies
        except ValueError as exc:
            key = next(
                (k for k in ("tuning", "enabled", "level") if getattr(bs, k) is not None), "enabled"
            )
            where = settings.origins.get(f"behaviors.{behavior_id}.{key}", BUILT_IN)
            problems.append(f"{where}: behaviors.{behavior_id}.{key}: {exc}")
            continue
        if spec != behavior.spec:
            changed[behavior_id] = Behavior(spec)
    if settings.shadow:
        for behavior in catalog:
            if behavior.id in changed or behavior.id in settings.managed:
                continue
            if behavior.bypass != "never" and behavior.mode != "shadow":
                changed[behavior.id] = Behavior({**behavior.spec, "mode": "shadow"})
    if problems:
        raise ProjectConfigError("\n".join(problems))
    if not changed:
        return catalog, notes
    return (
        Catalog(
            (changed.get(b.id, b) for b in catalog.behaviors),
            root=catalog.root,
            sources=catalog.sources,
        ),
        notes,
    )


def usable_exceptions(
    catalog: Catalog, settings: Settings
) -> tuple[tuple[ExceptionRule, ...], list[str]]:
    """The exceptions that may apply with ``catalog``, and a note per one refused: an
    exception naming no behavior of the catalog, or a ``bypass: never`` one (which nothing
    may switch off, SPEC §7). Locked behaviors' exceptions were refused by :func:`merge`."""
    kept: list[ExceptionRule] = []
    notes: list[str] = []
    for rule in settings.exceptions:
        target = catalog.get(rule.behavior)
        if target is None:
            notes.append(f"{rule.origin}: exception for {rule.behavior}: no such behavior")
        elif target.bypass == "never":
            notes.append(
                f"{rule.origin}: exception for {rule.behavior} refused: it is marked bypass: never"
            )
        else:
            kept.append(rule)
    return tuple(kept), notes
