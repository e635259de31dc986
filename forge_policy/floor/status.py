"""Which floor holds for one harness in one project (SPEC §13): the harness's sandbox,
forge_policy's own, or none — and what the project asked for.

The project chooses with ``floor:`` in ``<FORGE_ROOT>/config.yaml``: ``harness`` (the default: the
harness's own sandbox where ``init`` configured it and it is on, else forge_policy's own),
``own`` (always forge_policy's own launcher) or ``off`` (no floor; the hook keeps deciding).
Only the project's files choose, never the agent: ``.forge/`` and the harness settings files are
governance (SPEC §7).

This module is on the hook's path: the layered settings are memoised and cached
(:mod:`forge_policy.config.layers`), so a warm hook loads no YAML parser for them.

>>> import tempfile
>>> project = tempfile.mkdtemp()
>>> configured_mode(project + "/.forge")
'harness'
>>> harness_sandbox_on("claude-code", project, project)
False
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

MODES = ("harness", "own", "off")
DEFAULT_MODE = "harness"
_CLAUDE_SETTINGS = (".claude/settings.json", ".claude/settings.local.json")
_MAX_BYTES = 1 << 20


class FloorConfigError(ValueError):
    """``floor:`` in the project config is not one of :data:`MODES` (message names file:line)."""


def configured_mode(forge_root: str, environ: Mapping[str, str] | None = None) -> str:
    """``floor:`` as the layered configuration sets it (SPEC §10: user, project
    ``<forge_root>/config.yaml``, local, managed — a managed ``locked`` floor only tightens;
    :mod:`forge_policy.config.layers` owns the rule), :data:`DEFAULT_MODE` when no layer does;
    :class:`FloorConfigError` naming the file and line when a layer does not load.
    ``environ``: where the user and managed layers are (default: :data:`os.environ`)."""
    from forge_policy.config.layers import load_settings
    from forge_policy.errors import ProjectConfigError

    env = os.environ if environ is None else environ
    try:
        mode = load_settings(os.path.dirname(forge_root), forge_root, env).floor
    except ProjectConfigError as exc:
        raise FloorConfigError(str(exc)) from None
    return mode or DEFAULT_MODE


def _json(path: str) -> object:
    try:
        with open(path, "rb") as handle:
            return json.loads(handle.read(_MAX_BYTES))
    except (OSError, ValueError):
        return None


def harness_sandbox_on(harness: str, project: str, home: str) -> bool:
    """Whether ``harness``'s own sandbox holds every shell call in ``project``: for Claude Code,
    the settings the CLI merges (user, project, local) say ``sandbox.enabled: true``,
    ``sandbox.failIfUnavailable: true`` and ``sandbox.allowUnsandboxedCommands: false`` (so a
    command cannot ask to leave it and a missing dependency stops the CLI instead of running
    unsandboxed). Codex: its sandbox is on unless the config it reads says
    ``sandbox_mode = "danger-full-access"`` (:func:`_codex_sandbox_on`). Other harnesses have
    none: ``False``."""
    if harness == "codex":
        return _codex_sandbox_on(project, home)
    if harness != "claude-code":
        return False
    merged: dict[str, object] = {}
    files = [os.path.join(home, ".claude", "settings.json")]
    files += [os.path.join(project, name) for name in _CLAUDE_SETTINGS]
    for path in files:
        settings = _json(path)
        if isinstance(settings, dict) and isinstance(settings.get("sandbox"), dict):
            merged.update(settings["sandbox"])
    return (
        merged.get("enabled") is True
        and merged.get("failIfUnavailable") is True
        and merged.get("allowUnsandboxedCommands") is False
    )


def active_floor(harness: str, project: str, forge_root: str, environ: Mapping[str, str]) -> str:
    """``harness`` (the harness's sandbox holds), ``own`` (forge_policy rewrites shell calls)
    or ``off`` (the project turned the floor off) for one harness in one project."""
    mode = configured_mode(forge_root, environ)
    if mode == "off":
        return "off"
    home = environ.get("HOME", "") or os.path.expanduser("~")
    if mode == "harness" and harness_sandbox_on(harness, project, home):
        return "harness"
    return "own"


def _codex_sandbox_on(project: str, home: str) -> bool:
    """Whether Codex runs shell calls in its own sandbox: its default is one (``read-only``, or
    ``workspace-write`` as ``init`` writes it), so only ``sandbox_mode = "danger-full-access"``
    in the project's ``.codex/config.toml`` (read first) or the user's
    ``~/.codex/config.toml`` turns it off. Sandboxes do not nest (Codex's seccomp refuses the
    namespaces bubblewrap needs), so while Codex's is on forge_policy rewrites nothing: Codex's
    sandbox holds writes outside the workspace and its ``.git`` and ``.codex``, the hook the
    rest (``doctor`` says which). A mode given on Codex's command line (``--sandbox``,
    ``--dangerously-bypass-approvals-and-sandbox``) is not visible to the hook: the user's
    choice, not the agent's. An unreadable file counts as no setting."""
    import tomllib

    for path in (os.path.join(project, ".codex", "config.toml"),
                 os.path.join(home, ".codex", "config.toml")):  # fmt: skip
        try:
            with open(path, "rb") as handle:
                mode = tomllib.loads(handle.read(_MAX_BYTES).decode("utf-8")).get("sandbox_mode")
        except (OSError, ValueError):
            continue
        if isinstance(mode, str):
            return mode != "danger-full-access"
    return True
