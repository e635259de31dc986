"""Configuration from the environment (SPEC §10), and the evaluator it describes.

==================================  ===========================================================
variable                            meaning (default)
==================================  ===========================================================
``FORGE_ROOT``                      state folder (``.forge`` in the project directory)
``FORGE_BEHAVIORS_DIR``             catalog folder (``<root>/behaviors``; the built-in catalog
                                    when that folder does not exist)
``FORGE_STORE``                     ``file`` (``<root>/runtime/state.json``), ``sqlite:PATH``
                                    (``<root>/runtime/state.db`` when PATH is empty),
                                    ``postgresql://…``, ``memory``
``FORGE_AUDIT``                     ``file`` (``<root>/audit/overrides.log``), ``sqlite:PATH``
                                    (``<root>/audit/audit.db`` when PATH is empty),
                                    ``postgresql://…`` (file)
``FORGE_SESSION_TTL_SECONDS``       session expiry after last access (86400)
``FORGE_OVERRIDE_WINDOW_SECONDS``   override-by-retry window (60)
``FORGE_GRANT_SECONDS``             how long an explicit grant (``override``) lives (600)
``FORGE_LOCK_TIMEOUT``              store lock / busy timeout in seconds (15), bounded by
                                    the hook's deadline
``FORGE_HOOK_DEADLINE``             seconds within which a hook call answers, whatever it
                                    waits for: worker, catalog, facts, locks, store, audit
                                    (10); must stay below the harness's hook timeout
``FORGE_PROFILE``                   ``minimal``, ``standard`` or ``strict`` (standard); over
                                    the configuration files, below a managed lock
``FORGE_DISABLE``                   comma-separated behavior ids to bypass (see
                                    :mod:`forge_policy.engine.bypass`); not a locked one
``FORGE_MANAGED_DIR``               the managed configuration layer's folder
                                    (``/etc/forge-policy``)
``FORGE_ON_ERROR``                  ``deny`` or ``allow``: the hook's answer when it cannot
                                    decide (deny)
``FORGE_WORKER``                    ``on`` or ``off``: whether the hook client asks a warm
                                    worker (see :mod:`forge_policy.worker`) (on)
``FORGE_WORKER_IDLE_SECONDS``       the worker exits after this long without a request (900)
``FORGE_WORKER_TIMEOUT``            seconds a hook client waits for the worker's answer before
                                    evaluating in-process (10)
``FORGE_WORKER_MAX``                workers per project, one per environment; starting one
                                    more stops the least recently used (4)
``FORGE_CANDIDATE_DIR``             a candidate catalog decided beside the active one on
                                    every event, never deciding (see
                                    :mod:`forge_policy.engine.candidate`); over ``candidate:``
==================================  ===========================================================

Beside the environment, :meth:`Config.from_env` reads the layered configuration files
(:mod:`forge_policy.config.layers`: user, ``<FORGE_ROOT>/config.yaml``,
``<FORGE_ROOT>/config.local.yaml``, managed): the profile, per-behavior settings (applied by
:meth:`Config.load_catalog`) and exceptions (given to the evaluator by
:meth:`Config.build_evaluator`).

The project directory is found as git finds a work tree (:func:`project_folder`): from
``$CLAUDE_PROJECT_DIR`` when set (Claude Code sets it for hooks), else the working directory, the
nearest folder up holding ``.forge`` (the ``FORGE_ROOT`` name), else the repository's top level,
else that folder itself; relative paths in these variables are resolved against it. An empty
variable counts as unset. The seeds' switches set to ``true`` add behaviors to
``FORGE_DISABLE``: ``DISABLE_AGENT_SHIELD`` the three ``agent-shield*`` behaviors,
``DISABLE_TOKEN_ADVISOR`` ``token-budget``, ``DISABLE_OSPEC_PRECOMMIT`` ``strict-tdd`` and
``DISABLE_OSPEC_ATTRIBUTION_CHECK`` ``no-model-attribution`` (see :data:`LEGACY_DISABLE`).

>>> config = Config.from_env({"FORGE_PROFILE": "strict", "FORGE_STORE": "memory"}, cwd="/p")
>>> config.root, config.profile, config.store
('/p/.forge', 'strict', 'memory')
>>> Config.from_env({"FORGE_LOCK_TIMEOUT": "soon"}, cwd="/p")
Traceback (most recent call last):
...
forge_policy.errors.ConfigError: FORGE_LOCK_TIMEOUT: expected a number of seconds, got 'soon'
"""

from __future__ import annotations

import functools
import os
import time

import attrs

from forge_policy._infra.filelock import DEFAULT_TIMEOUT as DEFAULT_LOCK_TIMEOUT
from forge_policy._lazy import kept
from forge_policy.catalog.behavior import DEFAULT_PROFILE, PROFILES
from forge_policy.config.layers import LEGACY_DISABLE as LEGACY_DISABLE  # its old home
from forge_policy.config.layers import disabled_switches as _disabled
from forge_policy.errors import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

    from forge_policy.audit.base import AuditSink
    from forge_policy.catalog.catalog import Catalog
    from forge_policy.config.last_good import Fallback, Saved
    from forge_policy.config.layers import ExceptionRule, Settings
    from forge_policy.engine.candidate import Candidate
    from forge_policy.engine.evaluator import DecisionObserver, Evaluator
    from forge_policy.engine.overrides import AutoApprove
    from forge_policy.stores.base import RuntimeStore

ON_ERROR = ("deny", "allow")
#: ``FORGE_HOOK_DEADLINE``'s default, bounds and what ``init`` writes as the harness's timeout:
#: the hook answers within the deadline, the harness waits longer (a hook the harness times out
#: does not block in Claude Code, SPEC §9).
DEFAULT_HOOK_DEADLINE = 10.0
MIN_HOOK_DEADLINE = 2.0
MAX_HOOK_DEADLINE = 20.0
WORKER = ("on", "off")


def _absolute(path: str) -> str:
    return os.path.abspath(path)


def _disable_map(disable: Mapping[str, str] | None) -> dict[str, str]:
    return dict(disable or {})


def _text(value: str | None) -> str:
    return value or ""


def _environ(environ: Mapping[str, str] | None) -> Mapping[str, str]:
    return environ if environ is not None else {}


@kept
def _catalog_folder() -> Any:
    from forge_policy.catalog.catalog import catalog_folder

    return catalog_folder


@attrs.frozen(kw_only=True, eq=False)
class Config:
    """Where forge_policy keeps its files and how it evaluates, as read from ``FORGE_*``.

    Build it with :meth:`from_env`, or directly for embedding:

    >>> config = Config(root="/tmp/proj/.forge", store="memory")
    >>> config.catalog_dir is None   # no /tmp/proj/.forge/behaviors: the built-in catalog
    True
    """

    root: str = attrs.field(converter=_absolute)
    behaviors_dir: str | None = None
    store: str = "file"
    audit: str = "file"
    ttl: float = 86400.0
    override_window: float = 60.0
    grant_seconds: float = 600.0
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    profile: str = DEFAULT_PROFILE
    #: behavior id -> the variable that disabled it
    disable: dict[str, str] = attrs.field(default=None, converter=_disable_map)
    on_error: str = "deny"
    #: the parent of ``root`` when not given
    project_dir: str = attrs.field(default=None, converter=_text)
    # the whole environment: kept out of repr, it may hold secrets
    environ: Mapping[str, str] = attrs.field(default=None, converter=_environ, repr=False)
    worker: str = "on"
    worker_idle: float = 900.0
    worker_timeout: float = 10.0
    hook_deadline: float = DEFAULT_HOOK_DEADLINE
    #: the layered settings (SPEC §10, :mod:`forge_policy.config.layers`) as :meth:`from_env`
    #: read them; None: no layers (a Config built directly, as embedders may)
    settings: Settings | None = attrs.field(default=None, repr=False)

    def __attrs_post_init__(self) -> None:
        if not self.project_dir:
            # frozen: attrs' documented way to set a derived field after __init__
            object.__setattr__(self, "project_dir", os.path.dirname(self.root))

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        cwd: str | None = None,
        *,
        here: bool = False,
    ) -> Config:
        """Read ``FORGE_*`` (default: :data:`os.environ`); raise :class:`ConfigError` naming
        the first variable with an unusable value. The project is found from ``cwd`` (default:
        the working directory) as :func:`project_folder` finds it; ``here``: the starting
        folder itself is the project (``init --here``)."""
        env = os.environ if environ is None else environ

        def get(name: str) -> str:
            return env.get(name, "").strip()

        from forge_policy.worker.protocol import place as resolve

        project = project_folder(env, cwd, here=here)

        def place(value: str) -> str:
            if os.name != "posix":  # pragma: no cover - the worker's rule is POSIX's
                return os.path.normpath(os.path.join(project, os.path.expanduser(value)))
            # as the hook client resolves FORGE_ROOT (HOME read as os.path.expanduser does)
            path = resolve(os.fsencode(project), os.fsencode(value), os.environb.get(b"HOME"))
            return os.fsdecode(path)

        root = place(get("FORGE_ROOT") or ".forge")
        behaviors = get("FORGE_BEHAVIORS_DIR")
        _choice("FORGE_PROFILE", get("FORGE_PROFILE") or DEFAULT_PROFILE, PROFILES)
        _disabled(get)  # FORGE_DISABLE's own errors first, as before the layers
        from forge_policy.config.layers import load_settings

        settings = load_settings(project, root, env)
        return cls(
            root=root,
            behaviors_dir=place(behaviors) if behaviors else None,
            store=_backend_spec(
                "FORGE_STORE", get("FORGE_STORE") or "file", place, ("file", "memory"), "store"
            ),
            audit=_backend_spec(
                "FORGE_AUDIT", get("FORGE_AUDIT") or "file", place, ("file",), "audit sink"
            ),
            ttl=_seconds("FORGE_SESSION_TTL_SECONDS", get, 86400.0, positive=True),
            override_window=_seconds("FORGE_OVERRIDE_WINDOW_SECONDS", get, 60.0),
            grant_seconds=_seconds("FORGE_GRANT_SECONDS", get, 600.0, positive=True),
            lock_timeout=_seconds("FORGE_LOCK_TIMEOUT", get, DEFAULT_LOCK_TIMEOUT),
            profile=settings.profile or DEFAULT_PROFILE,
            disable=dict(settings.disable),
            on_error=on_error_from(env),
            project_dir=project,
            environ=env,
            worker=_choice("FORGE_WORKER", get("FORGE_WORKER") or "on", WORKER),
            worker_idle=_seconds("FORGE_WORKER_IDLE_SECONDS", get, 900.0, positive=True),
            worker_timeout=_seconds("FORGE_WORKER_TIMEOUT", get, 10.0, positive=True),
            hook_deadline=hook_deadline_from(env),
            settings=settings,
        )

    # -- the pieces -----------------------------------------------------------------------

    @property
    def catalog_dir(self) -> str | None:
        """The catalog folder in use, or None for the built-in catalog."""
        catalog_folder = _catalog_folder()
        folder: str | None = catalog_folder(self.root, self.behaviors_dir)
        return folder

    def cache_paths(self) -> list[str]:
        """Where the compiled catalog cache may live (see :mod:`forge_policy.catalog.cache`).

        ``<root>/runtime/``, sealed with that folder's key. The file name is keyed by the
        catalog folder, so two installs (a venv and a pipx CLI) or two catalogs never overwrite
        each other's cache. The user's cache folder comes second for the built-in catalog only:
        its sources are the installed package's files, the same for every project, so a cache
        of them (sealed with the user folder's own key, checked against those files like any
        other) holds nothing one project could use to change another's catalog. A project's
        own catalog is never cached outside the project.

        No project cache where ``root`` does not exist yet: reading the catalog does not create
        the project's folder.

        >>> import tempfile
        >>> root = os.path.join(tempfile.mkdtemp(), ".forge"); os.mkdir(root)
        >>> config = Config(root=root, environ={"XDG_CACHE_HOME": "/c"})
        >>> [path.split("/catalog-cache-")[0][-14:] for path in config.cache_paths()]
        ['.forge/runtime', 'c/forge-policy']
        >>> len(Config(root=root, behaviors_dir="/p/rules").cache_paths())
        1
        >>> elsewhere = Config(root="/p/.forge", environ={"XDG_CACHE_HOME": "/c"})
        >>> [path[:16] for path in elsewhere.cache_paths()]
        ['/c/forge-policy/']
        """
        from forge_policy.catalog.cache import BUILTIN_DIR
        from forge_policy.model import sha256_hex  # not hashlib: it loads OpenSSL

        catalog = os.path.abspath(self.catalog_dir or BUILTIN_DIR)
        name = f"catalog-cache-{sha256_hex(catalog.encode('utf-8'))[:16]}.json"
        # no project folder (FORGE_ROOT) yet: a command that only reads makes none (SPEC §10)
        paths = [os.path.join(self.root, "runtime", name)] if os.path.isdir(self.root) else []
        if self.catalog_dir is None:
            home = os.path.join(os.path.expanduser("~"), ".cache")
            paths.append(
                os.path.join(self.environ.get("XDG_CACHE_HOME") or home, "forge-policy", name)
            )
        return paths

    def load_catalog(self) -> Catalog:
        """The configured catalog through the compiled cache, with the layered settings
        applied (:func:`~forge_policy.config.layers.overlay_catalog`: ``enabled``, ``level``,
        ``escalation``, ``tuning``, ``shadow`` and the managed locks; ``FORGE_DISABLE`` not
        applied: it is the evaluator's bypass).

        Raises :class:`~forge_policy.CatalogError` with every issue when the YAML does not
        load, :class:`~forge_policy.errors.ProjectConfigError` when a setting cannot apply. A
        project catalog that loads is kept as the last known good one
        (:mod:`forge_policy.config.last_good`) whenever its files were parsed.
        """
        return self._overlay(self._raw_catalog())

    def _raw_catalog(self) -> Catalog:
        """The configured catalog through the compiled cache, no setting applied; kept as the
        last good one when it is the project's."""
        from forge_policy.catalog.cache import BUILTIN_DIR, CatalogCache

        cache = CatalogCache(self.cache_paths())
        catalog = cache.load(self.catalog_dir or BUILTIN_DIR)
        if self.catalog_dir is not None:
            self._keep_last_good(catalog, cache.status, cache.used)
        return catalog

    def _overlay(self, catalog: Catalog) -> Catalog:
        """``catalog`` with the layered settings applied."""
        settings = self.current_settings()
        if settings is None:
            return catalog
        from forge_policy.config.layers import overlay_catalog

        return overlay_catalog(catalog, settings)[0]

    def current_settings(self) -> Settings | None:
        """The layered settings as the files say now (a long-lived process, the warm worker,
        sees an edit without being restarted); None for a Config without layers. While a
        layer does not load, the last layers that loaded, with their
        :attr:`~forge_policy.config.layers.Settings.fallback` (SPEC §10)."""
        if self.settings is None:
            return None
        from forge_policy.config.layers import load_settings

        return load_settings(self.project_dir, self.root, self.environ)

    def _last_good(self) -> tuple[str, str]:
        """``(folder, name)`` of the project catalog's last-good copy (beside its cache)."""
        from forge_policy.model import sha256_hex

        catalog = os.path.abspath(self.catalog_dir or "")
        name = f"catalog-{sha256_hex(catalog.encode('utf-8'))[:16]}"
        return os.path.join(self.root, "runtime"), name

    def _keep_last_good(self, catalog: Catalog, status: str, used: str) -> None:
        """Save ``catalog`` as the last good one when its files were just parsed, or when the
        copy is missing or older than the cache file ``used``; only where the runtime folder
        already exists (a read-only command whose cache writes nothing creates nothing here
        either). A cache hit costs two stats."""
        from forge_policy.config.saved_copies import path_of

        folder, name = self._last_good()
        if status == "hit" or status == "uncached":
            path = path_of(folder, name)
            try:
                saved = os.stat(path).st_mtime_ns
            except OSError:
                saved = -1
            if status == "hit" and saved >= 0 and (not used or _mtime(used) <= saved):
                return
            if (
                status == "uncached"
                and saved >= 0
                and all(_mtime(source) < saved for source in catalog.sources)
            ):
                return
        if not os.path.isdir(folder):
            return
        document = {
            "root": os.path.abspath(self.catalog_dir or ""),
            "sources": list(catalog.sources),
            "specs": [behavior.spec for behavior in catalog.behaviors],
        }
        from forge_policy.config import last_good

        last_good.save(folder, name, document)

    def enforced_catalog(self) -> tuple[Catalog, Fallback | None]:
        """The catalog that enforces: the configured one (:meth:`load_catalog`), or, when its
        files do not load, the last one that loaded in this project, with the
        :class:`~forge_policy.config.last_good.Fallback` that says so (SPEC §10).

        Raises the :class:`~forge_policy.CatalogError` when there is no trusted last-good copy
        (a note on it says why: none saved, or the reason the saved one is not trusted).
        """
        from forge_policy.errors import CatalogError

        try:
            return self.load_catalog(), None  # the settings' own errors are not the catalog's
        except CatalogError as exc:
            if self.catalog_dir is None:
                raise
            from forge_policy.config import last_good

            found, why = self.last_good_catalog()
            if found is None:
                note = (
                    "no catalog has loaded in this project yet"
                    if why == "none saved"
                    else f"the saved last good catalog is not used: {why}"
                )
                exc.add_note(note)
                raise
            catalog, saved = found
            first = str(exc.issues[0]) if exc.issues else str(exc)
            more = len(exc.issues) - 1
            if more > 0:
                first += f" (and {more} more problem{'s' if more > 1 else ''})"
            fallback = last_good.Fallback("catalog", first, saved.saved_at, saved.path)
            return self._overlay(catalog), fallback

    def last_good_catalog(self) -> tuple[tuple[Catalog, Saved] | None, str]:
        """``((catalog, saved copy), "")``: the project catalog's last-good copy, verified and
        compiled; or ``(None, why not)`` (``"none saved"``, or why the copy is not trusted)."""
        from forge_policy.catalog.behavior import Behavior
        from forge_policy.catalog.catalog import Catalog
        from forge_policy.config import last_good

        folder, name = self._last_good()
        saved, why = last_good.load(folder, name)
        if saved is None:
            return None, why
        document = saved.document
        specs, sources = document.get("specs"), document.get("sources")
        if document.get("root") != os.path.abspath(self.catalog_dir or ""):
            return None, "saved for another catalog folder"
        if not isinstance(specs, list) or not isinstance(sources, list) or not specs:
            return None, "sealed but malformed"
        try:
            catalog = Catalog(
                [Behavior(spec) for spec in specs],
                root=os.path.abspath(self.catalog_dir or ""),
                sources=[str(source) for source in sources],
            )
        except Exception:  # specs that do not compile: no catalog to fall back on
            return None, "its specs do not compile"
        return (catalog, saved), ""

    def open_audit(self, *, long_lived: bool = False) -> AuditSink:
        """The configured audit sink (``FORGE_AUDIT``), opened on first use: by default the
        JSONL log ``<root>/audit/overrides.log``, which a ``long_lived`` process (the warm
        worker, ``serve``) reads through an index of the sessions it holds
        (:mod:`forge_policy.audit._index`)."""
        spec = self.audit
        if spec.startswith("sqlite:"):
            from forge_policy.audit.sqlite import SQLiteAuditSink

            path = spec[len("sqlite:") :] or os.path.join(self.root, "audit", "audit.db")
            return SQLiteAuditSink(path, timeout=self.lock_timeout)
        if spec != "file":
            from forge_policy.audit.postgres import PostgresAuditSink

            _check_postgres("FORGE_AUDIT", spec, self.environ or os.environ)
            return PostgresAuditSink(
                spec, lock_timeout=self.lock_timeout, environ=self.environ or None
            )
        from forge_policy.audit.lazy import LazyJsonlSink

        return LazyJsonlSink(
            os.path.join(self.root, "audit", "overrides.log"),
            lock_timeout=self.lock_timeout,
            session_index=long_lived,
        )

    def open_store(
        self,
        *,
        audit: AuditSink | None = None,
        clock: Callable[[], float] = time.time,
        pool_size: int = 1,
    ) -> RuntimeStore:
        """The configured store; a recovered corrupt state file is reported to ``audit``.
        ``pool_size`` > 1 gives a PostgreSQL store a connection pool (the worker and serve,
        whose threads share it); a cold hook process keeps the default, one connection."""
        spec = self.store
        if spec == "memory":
            from forge_policy.stores.memory import MemoryStore

            return MemoryStore()
        report = functools.partial(_report_recovery, audit) if audit is not None else None
        if spec == "file":
            from forge_policy.stores.file import FileStore

            return FileStore(
                os.path.join(self.root, "runtime", "state.json"),
                lock_timeout=self.lock_timeout,
                on_recovery=(lambda record: report([record])) if report else None,
                ttl=self.ttl,
                clock=clock,
            )
        if spec.startswith("sqlite:"):
            path = spec[len("sqlite:") :] or os.path.join(self.root, "runtime", "state.db")
            from forge_policy.stores.sqlite import SQLiteStore

            return SQLiteStore(
                path,
                busy_timeout=self.lock_timeout,
                on_recovery=(lambda record: report([record])) if report else None,
                ttl=self.ttl,
                clock=clock,
            )
        from forge_policy.stores.postgres import PostgresStore

        _check_postgres("FORGE_STORE", spec, self.environ or os.environ)
        return PostgresStore(
            spec,
            lock_timeout=self.lock_timeout,
            pool_size=pool_size,
            on_recovery=(lambda record: report([record])) if report else None,
            ttl=self.ttl,
            clock=clock,
            environ=self.environ or None,
        )

    def build_evaluator(
        self,
        *,
        catalog: Catalog | None = None,
        disable: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.time,
        pool_size: int = 1,
        reuse: Evaluator | None = None,
        auto_approve: AutoApprove | None = None,
        observers: Sequence[DecisionObserver] = (),
    ) -> Evaluator:
        """An evaluator wired per this configuration: catalog (cached, unless ``catalog`` is
        given; the last known good one, with a notice on every decision, while the project's
        does not load: :meth:`enforced_catalog`), ``FORGE_DISABLE`` (or ``disable``: behavior
        id -> the variable naming it) as its bypass, store, audit log, profile, TTL, window,
        a ``seen`` record per tool call (``coverage:``, on unless a layer says false),
        and each harness's ``auto_approve`` capability
        (:meth:`~forge_policy.engine.overrides.PermissionModes.from_registry`; ``auto_approve``
        replaces it). The one place the hook, the warm worker, ``serve``, the
        CLI and the git hooks build their evaluator; embedders call it as
        :func:`forge_policy.build_evaluator`. ``reuse``: an evaluator whose store and audit
        sink to keep (a long-lived process reloading its catalog keeps its connections);
        ``pool_size`` as for :meth:`open_store`. The settings' ``candidate`` (``candidate:``,
        ``FORGE_CANDIDATE_DIR``) is decided beside every event, never changing a decision
        (:mod:`forge_policy.engine.candidate`); ``observers``: the evaluator's decision
        observers (the warm worker's and ``serve``'s OpenTelemetry export,
        :mod:`forge_policy.telemetry`).

        >>> import tempfile
        >>> ev = Config(root=tempfile.mkdtemp(), store="memory").build_evaluator()
        >>> ev.settings.profile, type(ev.store).__name__, ev.bypass
        ('standard', 'MemoryStore', None)
        """
        from forge_policy.engine.evaluator import Evaluator
        from forge_policy.engine.overrides import PermissionModes

        settings = self.current_settings()
        profile = self.profile
        exceptions: tuple[ExceptionRule, ...] = ()
        fallbacks: list[Fallback] = []
        if settings is not None:
            from forge_policy.config.layers import usable_exceptions

            profile = settings.profile or DEFAULT_PROFILE
            if disable is None:
                disable = settings.disable
            if settings.fallback is not None:
                fallbacks.append(settings.fallback)
        if catalog is None:
            catalog, fallback = self.enforced_catalog()
            if fallback is not None:
                fallbacks.insert(0, fallback)
        if settings is not None:
            exceptions = usable_exceptions(catalog, settings)[0]
        if reuse is not None:
            audit, store = reuse.audit, reuse.store
        else:
            audit = self.open_audit(long_lived=pool_size > 1)  # a pool: the worker, serve
            store = self.open_store(audit=audit, clock=clock, pool_size=pool_size)
        auto_approve = auto_approve or PermissionModes.from_registry()
        candidate = None
        if settings is not None and settings.candidate:
            candidate = self.load_candidate(
                settings.candidate,
                clock=clock,
                auto_approve=auto_approve,
                reuse=reuse.candidate if reuse is not None else None,
            )
        return Evaluator(
            catalog,
            store=store,
            audit=audit,
            clock=clock,
            profile=profile,
            ttl=self.ttl,
            override_window=self.override_window,
            grant_seconds=self.grant_seconds,
            auto_approve=auto_approve,
            disable=self.disable if disable is None else disable,
            exceptions=exceptions,
            # a seen record per tool call unless a configuration layer says coverage: false
            record_calls=settings is None or settings.coverage is not False,
            notices=tuple(fallback.notice for fallback in fallbacks),
            notice_records=(
                (
                    lambda event: [
                        record
                        for fallback in fallbacks
                        for record in fallback.records(event.session_id, event.event_name)
                    ]
                )
                if fallbacks
                else None
            ),
            candidate=candidate,
            observers=observers,
        )

    def load_candidate(
        self,
        folder: str,
        *,
        clock: Callable[[], float] = time.time,
        auto_approve: AutoApprove | None = None,
        reuse: Candidate | None = None,
    ) -> Candidate:
        """The candidate catalog at ``folder`` (:mod:`forge_policy.engine.candidate`): its
        catalog through the compiled cache (keyed by its folder, so it never overwrites the
        active catalog's cache), the settings applied as to the active one, its own store (that
        of ``reuse`` when the same) and a sink that keeps nothing. Never raises: a catalog or
        setting that does not load gives a candidate holding the ``problem``."""
        from forge_policy.engine import candidate as shadow
        from forge_policy.engine.overrides import PermissionModes

        spec = shadow.store_spec(self.store, self.root)
        runtime = None if spec == "memory" else shadow.runtime_folder(self.root)
        try:
            evaluator = self._candidate_evaluator(
                folder, spec, clock, auto_approve or PermissionModes.from_registry(), reuse
            )
        except Exception as exc:  # any failure: the active decision stands, it is told
            problem = shadow.describe(exc)
            return shadow.Candidate(folder, None, problem=problem, runtime=runtime, store_spec=spec)
        loaded = shadow.Candidate(folder, evaluator, runtime=runtime, store_spec=spec)
        loaded.forget_reported()
        return loaded

    def _candidate_evaluator(
        self,
        folder: str,
        spec: str,
        clock: Callable[[], float],
        auto_approve: AutoApprove,
        reuse: Candidate | None,
    ) -> Evaluator:
        from forge_policy.catalog.cache import CatalogCache
        from forge_policy.engine.candidate import Discard, open_store
        from forge_policy.engine.evaluator import Evaluator

        placed = attrs.evolve(self, behaviors_dir=os.path.abspath(folder))
        catalog = CatalogCache(placed.cache_paths()).load(folder)
        settings = self.current_settings()
        disable = dict(self.disable)
        exceptions: tuple[ExceptionRule, ...] = ()
        profile = self.profile
        if settings is not None:
            from forge_policy.config.layers import overlay_catalog, usable_exceptions

            catalog = overlay_catalog(catalog, settings)[0]
            exceptions = usable_exceptions(catalog, settings)[0]
            disable = dict(settings.disable)
            profile = settings.profile or DEFAULT_PROFILE
        # an id only the active catalog has is not the candidate's to bypass
        disable = {key: value for key, value in disable.items() if key in catalog}
        store = None
        if reuse is not None and reuse.evaluator is not None and reuse.store_spec == spec:
            store = reuse.evaluator.store
        if store is None:
            store = open_store(spec, lock_timeout=self.lock_timeout, ttl=self.ttl, clock=clock)
        return Evaluator(
            catalog,
            store=store,
            audit=Discard(),
            clock=clock,
            profile=profile,
            ttl=self.ttl,
            override_window=self.override_window,
            grant_seconds=self.grant_seconds,
            auto_approve=auto_approve,
            disable=disable,
            exceptions=exceptions,
        )

    def __repr__(self) -> str:
        return f"<Config root={self.root!r} store={self.store!r} profile={self.profile!r}>"


# -- the project ------------------------------------------------------------------------------


def project_folder(
    environ: Mapping[str, str] | None = None, cwd: str | None = None, *, here: bool = False
) -> str:
    """The project folder, found as git finds a work tree (SPEC §10): from
    ``$CLAUDE_PROJECT_DIR`` when set, else ``cwd`` (default: the working directory), the
    nearest folder up holding the ``FORGE_ROOT`` folder (``.forge``), else the repository's
    top level (the nearest folder holding ``.git``), else the starting folder. ``here``: the
    starting folder, unsearched. The hook client finds it with the same code
    (:func:`forge_policy.worker.protocol.project_of`), so every command, the hook and the warm
    worker agree on the project: its state, audit log and worker.

    >>> import tempfile
    >>> top = os.path.realpath(tempfile.mkdtemp())
    >>> os.makedirs(os.path.join(top, ".git")); os.makedirs(os.path.join(top, "src", "app"))
    >>> project_folder({}, os.path.join(top, "src", "app")) == top
    True
    >>> project_folder({"CLAUDE_PROJECT_DIR": "src"}, top, here=True) == os.path.join(top, "src")
    True
    """
    env = os.environ if environ is None else environ
    base = os.path.abspath(cwd or os.getcwd())
    if os.name != "posix":  # pragma: no cover - the walk is POSIX's, as the worker is
        return os.path.abspath(os.path.join(base, env.get("CLAUDE_PROJECT_DIR", "").strip()))
    from forge_policy.worker import protocol

    names = {"CLAUDE_PROJECT_DIR", "FORGE_ROOT"}
    raw = {os.fsencode(k): os.fsencode(v) for k, v in env.items() if k in names}
    if here:
        return os.fsdecode(protocol.start_of(raw, os.fsencode(base)))
    return os.fsdecode(protocol.project_of(raw, os.fsencode(base)))


# -- parsing helpers ------------------------------------------------------------------------


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 1 << 62  # gone: newer than any copy


def hook_deadline_from(environ: Mapping[str, str]) -> float:
    """``FORGE_HOOK_DEADLINE`` alone (the hook reads it before anything else can wait).

    >>> hook_deadline_from({}), hook_deadline_from({"FORGE_HOOK_DEADLINE": "4.5"})
    (10.0, 4.5)
    >>> hook_deadline_from({"FORGE_HOOK_DEADLINE": "0"})
    Traceback (most recent call last):
    ...
    forge_policy.errors.ConfigError: FORGE_HOOK_DEADLINE: must be at least 2 seconds, got '0'
    """
    name = "FORGE_HOOK_DEADLINE"
    value = _seconds(name, lambda key: environ.get(key, "").strip(), DEFAULT_HOOK_DEADLINE)
    if value < MIN_HOOK_DEADLINE:
        text = environ.get(name, "").strip()
        raise ConfigError(f"{name}: must be at least {MIN_HOOK_DEADLINE:g} seconds, got {text!r}")
    if value > MAX_HOOK_DEADLINE:
        text = environ.get(name, "").strip()
        raise ConfigError(
            f"{name}: must be at most {MAX_HOOK_DEADLINE:g} seconds (below the harness's hook "
            f"timeout that init writes), got {text!r}"
        )
    return value


def on_error_from(environ: Mapping[str, str]) -> str:
    """``FORGE_ON_ERROR`` alone, so that a failure elsewhere still knows its answer."""
    return _choice("FORGE_ON_ERROR", environ.get("FORGE_ON_ERROR", "").strip() or "deny", ON_ERROR)


def _choice(name: str, value: str, allowed: Iterable[str]) -> str:
    allowed = tuple(allowed)
    if value in allowed:
        return value
    import difflib

    close = difflib.get_close_matches(value, allowed, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    expected = ", ".join(allowed[:-1]) + f" or {allowed[-1]}"
    raise ConfigError(f"{name}: unknown value {value!r}: expected {expected}{hint}")


def _seconds(
    name: str, get: Callable[[str], str], default: float, *, positive: bool = False
) -> float:
    text = get(name)
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"{name}: expected a number of seconds, got {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ConfigError(f"{name}: expected a finite number of seconds, got {text!r}")
    if value < 0 or (positive and value == 0):
        what = "greater than 0" if positive else "0 or more"
        raise ConfigError(f"{name}: must be {what}, got {text!r}")
    return value


def _backend_spec(
    variable: str, text: str, place: Callable[[str], str], plain: tuple[str, ...], what: str
) -> str:
    """``FORGE_STORE``/``FORGE_AUDIT``: one of ``plain``, ``sqlite:PATH`` (placed under the
    root) or a PostgreSQL URL; ``what`` names the kind in the error."""
    if text in plain:
        return text
    if text.startswith("sqlite:"):
        path = text[len("sqlite:") :].strip()
        return "sqlite:" + (place(path) if path else "")
    if text.startswith(("postgresql://", "postgres://")):
        return text
    names = [*plain[:1], "sqlite:PATH", "postgresql://…", *plain[1:]]
    expected = f"{', '.join(names[:-1])} or {names[-1]}"
    raise ConfigError(f"{variable}: unknown {what} {text!r}: expected {expected}")


def _check_postgres(variable: str, dsn: str, environ: Mapping[str, str]) -> None:
    """A PostgreSQL DSN is usable here: psycopg is installed (else the extra is named) and a
    ``password_env`` reference names a set variable. Nothing connects yet."""
    from forge_policy._infra import pg as _pg

    _pg.need_psycopg(variable)
    try:
        _pg.resolve(dsn, environ)
    except ConfigError as exc:
        raise ConfigError(f"{variable}: {exc}") from None


def _report_recovery(audit: AuditSink, records: list[dict[str, Any]]) -> None:
    """Hand a store's recovery notes to the audit log; imported only when a store recovers,
    so the hook's allow path never loads the audit interface."""
    from forge_policy.audit.base import write

    write(audit, records)


def build_evaluator(
    environ: Mapping[str, str] | None = None,
    *,
    cwd: str | None = None,
    catalog: Catalog | None = None,
    clock: Callable[[], float] = time.time,
) -> Evaluator:
    """The evaluator the hook would build for ``environ`` (default: :data:`os.environ`) and
    ``cwd``: ``Config.from_env(environ, cwd).build_evaluator(...)``, the one factory
    (:meth:`Config.build_evaluator`): project catalog, ``FORGE_DISABLE`` applied and audited,
    the configured store and audit log, each harness's ``auto_approve``. Exported as
    ``forge_policy.build_evaluator`` for embedders.

    >>> import tempfile, forge_policy as fp
    >>> env = {"FORGE_ROOT": tempfile.mkdtemp(), "FORGE_STORE": "memory",
    ...        "FORGE_DISABLE": "search-first"}
    >>> ev = fp.build_evaluator(env)
    >>> ev.catalog["search-first"].enabled, [b.id for b in ev.bypass.bypassed]
    (False, ['search-first'])
    """
    config = Config.from_env(environ, cwd=cwd)
    return config.build_evaluator(catalog=catalog, clock=clock)
