"""The request handler that ``forge-policy serve`` (HTTP) and the warm worker (Unix socket) share.

:class:`Warm` keeps one evaluator built from a :class:`~forge_policy.config.env.Config` and
answers raw hook payloads with :func:`forge_policy.hook.respond`, so a warm answer is
byte-for-byte the command hook's, failure answers (``FORGE_ON_ERROR``) included.

Before each answer the catalog's files are ``stat``-ed (the identity the compiled cache keys
on); when one changed, the evaluator is rebuilt through the cache. Evaluations run concurrently:
the warm state is one immutable snapshot swapped under a lock only on reload, and what an
evaluation changes goes through the store's transaction, which serialises per session (memory,
file and SQLite stores are thread-safe; the audit log appends under its own lock). ``serve``
used to hold one lock around every answer; the only shared mutable state was this snapshot and
the request counter.

>>> import tempfile
>>> from forge_policy.config.env import Config
>>> warm = Warm(Config(root=tempfile.mkdtemp(), store="memory"))
>>> text, log, code = warm.answer(b'{"session_id": "s", "hook_event_name": "PreToolUse", '
...     b'"tool_name": "Bash", "tool_input": {"command": "git push --force"}}')
>>> text[:42], log, code
('{"hookSpecificOutput":{"hookEventName":"Pr', '', 0)
"""

from __future__ import annotations

import io
import os
import threading

import attrs

from forge_policy._lazy import kept

#: Connections a PostgreSQL store keeps for the threads of one worker or serve process.
POOL_SIZE = 8

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from forge_policy.config.env import Config
    from forge_policy.engine.evaluator import DecisionObserver, Evaluator


@attrs.frozen(eq=False)
class _Snapshot:
    """One loaded state: the catalog files' identity and what was built from them.

    Frozen: a reload swaps in a new snapshot, threads reading the old one never see it change.
    """

    files: list[str]
    signature: tuple[Any, ...]
    evaluator: Evaluator | None
    error: str


class Warm:
    """A warm evaluator for one configuration, safe to call from many threads. ``observers``:
    each evaluator's decision observers (the process's OpenTelemetry export)."""

    def __init__(self, config: Config, *, observers: Sequence[DecisionObserver] = ()) -> None:
        self.config = config
        self.observers = tuple(observers)
        self.reloads = -1
        self.requests = 0
        self._lock = threading.Lock()  # taken to reload only
        self._counting = threading.Lock()
        self._last: Evaluator | None = None  # whose store and audit sink a reload keeps
        self._candidate: str | None = None
        #: the layers' files and what they were computed from (:meth:`_layers`)
        self._watched: tuple[tuple[str | None, ...], list[str]] | None = None
        #: the watched files that existed when last looked at (:meth:`_sign`)
        self._present: set[str] = set()
        self._snapshot = self._load()

    @property
    def evaluator(self) -> Evaluator | None:
        """The current evaluator (None while the catalog does not load)."""
        return self._snapshot.evaluator

    @property
    def error(self) -> str:
        """Why the catalog does not load (empty when it does)."""
        return self._snapshot.error

    def _catalog_files(self) -> tuple[str | None, list[str]]:
        """The catalog folder in use (``config.catalog_dir``: looked up once per answer) and
        the files whose change reloads the catalog: the folder's index and every
        ``*/behavior.yaml`` in it (a superset of what a load reads), or the single file; and
        every layer of the configuration (:func:`~forge_policy.config.layers.watched_files`)."""
        layers: list[str] = []
        if self.config.settings is not None:
            layers = self._layers()
        candidate = _catalog_sources(self._candidate) if self._candidate else []
        folder = self.config.catalog_dir
        return folder, [*_catalog_sources(folder), *layers, *candidate]

    def _layers(self) -> list[str]:
        """:func:`~forge_policy.config.layers.watched_files`, computed again only when what
        it reads changes: the forge root and the three variables it reads (the process's
        home folder is read when ``HOME`` is unset or empty: then every time)."""
        environ = self.config.environ
        home = environ.get("HOME")
        key = (
            self.config.root,
            home,
            environ.get("XDG_CONFIG_HOME"),
            environ.get("FORGE_MANAGED_DIR"),
        )
        kept = self._watched
        if home and kept is not None and kept[0] == key:
            return kept[1]
        from forge_policy.config.layers import watched_files

        layers = watched_files(self.config.root, environ)
        self._watched = (key, layers)
        return layers

    def _candidate_folder(self) -> str | None:
        """The candidate catalog's folder as the layers say now (they are watched: a change of
        ``candidate:`` reloads), whose files are watched as the active catalog's are."""
        from forge_policy.errors import ForgePolicyError

        try:
            settings = self.config.current_settings()
        except ForgePolicyError:
            return None  # the load reports it
        return settings.candidate if settings is not None else None

    def _sign(self, watched: tuple[str | None, list[str]]) -> tuple[Any, ...]:
        folder, files = watched
        parts: list[Any] = [folder, self._candidate]
        present = self._present
        for path in files:
            # most layers' files do not exist: access() says so without the OSError a failed
            # stat builds (a third of the cost); a file there last time is stat'ed at once
            if path not in present and not os.access(path, os.F_OK):
                parts.append(None)
                continue
            try:
                st = os.stat(path)
                # ctime too: a same-size edit can restore the mtime (`touch -d`), not the ctime
                parts.append((st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns))
                present.add(path)
            except OSError:
                parts.append(None)
                present.discard(path)
        return tuple(parts)

    def _load(self) -> _Snapshot:
        """Build the evaluator; a catalog that does not load is replaced by the last one that
        loaded (:meth:`~forge_policy.config.env.Config.enforced_catalog`, whose notice is then
        the snapshot's error too), and with none the snapshot has no evaluator: requests are
        answered as the command hook would (``FORGE_ON_ERROR``, naming file:line)."""
        from forge_policy.errors import ForgePolicyError

        self._candidate = self._candidate_folder()
        watched = self._catalog_files()
        signature = self._sign(watched)  # taken first: a change while reading shows next time
        self.reloads += 1
        try:
            # the threads share one evaluator (thread-safe) and one pool (a PostgreSQL store);
            # a reload keeps the connections; FORGE_DISABLE is the evaluator's bypass, audited
            evaluator = self.config.build_evaluator(
                pool_size=POOL_SIZE, reuse=self._last, observers=self.observers
            )
            self._last = evaluator
        except ForgePolicyError as exc:
            return _Snapshot(watched[1], signature, None, " ".join(str(exc).split()))
        # a last known good catalog enforcing (SPEC §10): answered with, and reported
        return _Snapshot(watched[1], signature, evaluator, " ".join(evaluator.notices))

    def current(self) -> _Snapshot:
        """The snapshot to answer with, reloaded first when a catalog file changed."""
        snapshot = self._snapshot
        if self._sign(self._catalog_files()) == snapshot.signature:
            return snapshot
        with self._lock:  # one thread reloads; the others wait for its snapshot
            if self._sign(self._catalog_files()) != self._snapshot.signature:
                self._snapshot = self._load()
            return self._snapshot

    def answer(
        self,
        raw: bytes,
        *,
        harness: str = "claude-code",
        event: str = "",
        deadline: float | None = None,
    ) -> tuple[str, str, int]:
        """``(stdout text, stderr text, exit code)`` of the command hook for one raw payload of
        ``harness`` (``event``: its ``--event``); ``deadline``: the :func:`time.monotonic`
        instant by which it answers (default: ``FORGE_HOOK_DEADLINE`` from now)."""
        respond = _respond()
        with self._counting:
            self.requests += 1
        snapshot = self.current()
        log = io.StringIO()
        text, code = respond(
            raw,
            harness=harness,
            event=event,
            environ=self.config.environ,
            stderr=log,
            evaluator=snapshot.evaluator,
            deadline=deadline,
        )
        return text, log.getvalue(), code

    def health(self) -> dict[str, Any]:
        """What ``GET /health`` and ``forge-policy worker status`` report."""
        snapshot = self._snapshot
        catalog = snapshot.evaluator.catalog if snapshot.evaluator is not None else None
        return {
            "ok": catalog is not None,
            "pid": os.getpid(),
            "root": self.config.root,
            "catalog": self.config.catalog_dir or "built-in",
            "behaviors": len(catalog) if catalog is not None else 0,
            "catalog_error": snapshot.error or None,
            "reloads": self.reloads,
            "requests": self.requests,
            **_candidate_health(snapshot.evaluator),
        }


@kept
def _respond() -> Any:
    from forge_policy.hook import respond

    return respond


def _catalog_sources(folder: str | None) -> list[str]:
    """The files of a catalog ``folder`` whose change reloads it: its index and every
    ``*/behavior.yaml`` in it (a superset of what a load reads), or the single file."""
    if folder is None:  # the built-in catalog: a project catalog appearing is the change
        return []
    if os.path.isfile(folder):
        return [folder]
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        names = []
    files = [os.path.join(folder, name, "behavior.yaml") for name in names]
    return [os.path.join(folder, "index.yaml"), *[f for f in files if os.path.isfile(f)]]


def _candidate_health(evaluator: Evaluator | None) -> dict[str, Any]:
    """The candidate catalog's part of :meth:`Warm.health` (nothing without one)."""
    candidate = evaluator.candidate if evaluator is not None else None
    if candidate is None:
        return {}
    return {
        "candidate": candidate.folder,
        "candidate_error": candidate.problem or None,
        "candidate_compared": candidate.compared,
    }
