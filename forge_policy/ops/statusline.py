"""``forge-policy statusline``: Claude Code's ``statusLine`` command, in-process and in the warm
worker (one function each, one line of output either way).

Claude Code runs the command after each assistant message (debounced, 300 ms) with JSON about
the session on stdin (``session_id``, ``transcript_path``, ``cwd``, ``workspace.current_dir``
and ``project_dir``, ``model``, ``version``, ``cost``, …) and shows the first line of its
stdout; ANSI colour is rendered. The line is :func:`forge_policy.reports.statusline.status_line`
of the session named by ``session_id`` with the Claude Code floor's state
(:func:`forge_policy.reports.statusline.floor_word`).

A status line is read-only and must never hurt the session it describes: it creates no file and
no session (a project without ``FORGE_ROOT`` gets :data:`NOT_SET_UP`), starts no worker, and
anything it cannot read or parse gives :data:`~forge_policy.reports.statusline.UNKNOWN`, exit 0,
never a traceback (a status line that fails only shows nothing useful; it decides nothing).

>>> parse_input(b'{"session_id": "abc", "workspace": {"project_dir": "/p"}}')
'abc'
>>> parse_input(b"not json") is None, parse_input(b'{"session_id": 3}') is None
(True, True)
"""

from __future__ import annotations

import os
import threading
import time

from forge_policy.reports.statusline import UNKNOWN, floor_word, status_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from forge_policy.catalog.catalog import Catalog
    from forge_policy.config.env import Config
    from forge_policy.engine.evaluator import Evaluator

#: What the line says in a folder forge-policy does not govern (no ``FORGE_ROOT`` folder).
NOT_SET_UP = "forge-policy: not set up here"
#: The most stdin a status line reads (Claude Code's JSON is a few hundred bytes).
MAX_INPUT = 1 << 20
#: Seconds the floor's state is reused by a long-lived process (the worker): it changes only
#: when a settings file or the machine does, and finding it reads several files.
FLOOR_TTL = 5.0
HARNESS = "claude-code"


def parse_input(raw: bytes) -> str | None:
    """The ``session_id`` of Claude Code's status line JSON, None when ``raw`` is not such a
    JSON object (a session id must be a non-empty string)."""
    import json

    try:
        data = json.loads(raw[:MAX_INPUT])
    except (ValueError, RecursionError):
        return None
    session = data.get("session_id") if isinstance(data, dict) else None
    return session if isinstance(session, str) and session else None


def color_on(environ: Mapping[str, str]) -> bool:
    """Colour unless ``NO_COLOR`` is set and not empty (https://no-color.org) or ``TERM`` is
    ``dumb``: stdout is a pipe Claude Code reads and renders ANSI from, never a terminal, so
    a terminal test would always say no."""
    return not environ.get("NO_COLOR", "") and environ.get("TERM", "") != "dumb"


class FloorCache:
    """The Claude Code floor's word for one project, reused for :data:`FLOOR_TTL` seconds."""

    def __init__(self, ttl: float = FLOOR_TTL) -> None:
        self.ttl = ttl
        self._lock = threading.Lock()
        self._value: tuple[float, str | None] | None = None

    def get(self, config: Config, catalog: Catalog | None = None) -> str | None:
        """The floor's word (None when it cannot be told): :func:`floor_of`."""
        now = time.monotonic()
        with self._lock:
            if self._value is not None and now - self._value[0] < self.ttl:
                return self._value[1]
        word = floor_of(config, catalog)
        with self._lock:
            self._value = (now, word)
        return word


def floor_of(config: Config, catalog: Catalog | None = None) -> str | None:
    """The Claude Code floor's word (:func:`~forge_policy.reports.statusline.floor_word`) for
    the project of ``config``, derived from ``catalog`` (the evaluator's: loading the catalog
    again from YAML costs some 300 ms); None when it cannot be told."""
    from forge_policy.floor.derive import floor_for
    from forge_policy.ops.floor_report import floor_of as harness_floor

    project = os.path.abspath(config.project_dir)
    try:
        floor = None
        if catalog is not None:
            floor = floor_for(project, config.environ, catalog=catalog, profile=config.profile)
        found = harness_floor(HARNESS, project, config.root, config.environ, floor)
    except Exception:  # a status line shows "?" rather than fail
        return None
    return floor_word(found)


def line_for(evaluator: Evaluator, session_id: str, floor: str | None, *, color: bool) -> str:
    """The status line of ``session_id`` with ``evaluator``'s store (read without a
    transaction), catalog and settings."""
    from forge_policy.stores.base import read_only

    return status_line(
        read_only(evaluator.store, session_id) if session_id else None,
        evaluator.catalog,
        session_id,
        floor=floor,
        now=evaluator.clock(),
        ttl=evaluator.settings.ttl,
        profile=evaluator.settings.profile,
        color=color,
    )


def in_process(raw: bytes, environ: Mapping[str, str], cwd: str | None = None) -> str:
    """The line for ``raw`` (Claude Code's JSON) in this process: the project found from
    ``environ`` and ``cwd`` as the hook finds it. Never raises; creates nothing."""
    try:
        session_id = parse_input(raw)
        if session_id is None:
            return UNKNOWN
        from forge_policy.config.env import Config

        config = Config.from_env(environ, cwd)
        if not os.path.isdir(config.root):
            return NOT_SET_UP
        if config.store == "memory":
            return UNKNOWN  # a status line process has no session state to show
        evaluator = config.build_evaluator()
        try:
            floor = floor_of(config, evaluator.catalog)
            return line_for(evaluator, session_id, floor, color=color_on(environ))
        finally:
            evaluator.store.close()
    except Exception:  # a status line never prints a traceback
        return UNKNOWN
