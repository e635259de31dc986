"""Project facts: secrets a repository exposes, and the strict-TDD check of staged files.

``facts.unignored_secret_files`` (AgentShield's SessionStart check, seed-systems a.4) names
``.env``, ``.env.local``, ``.env.development``, ``.env.production`` and ``.npmrc`` when they sit
at the project root and git would not ignore them, and ``.git/config`` when a remote URL in it
holds a password or token. Only names are reported, never contents. Whether git ignores a file
is decided by :mod:`forge_policy.facts.gitignore`: git's sources (``core.excludesFile``,
``.git/info/exclude``, ``.gitignore``) and git's semantics, not substring tests.

``facts.tdd_untested_files`` reads the project config (``<FORGE_ROOT>/config.yaml``,
:mod:`forge_policy.config.project`) and, when ``testing.tdd_mode`` is ``strict``, lists the
staged production files of a commit that stages neither a test file nor a planning file. Its
globs have ``.gitignore`` syntax too (:func:`~forge_policy.facts.gitignore.glob_names`).

>>> ignored("secrets/.env", ["*.env*", "!.env.example"]), ignored(".env", [".env.local"])
(True, False)
>>> ignored(".env.local", [".env*", "!.env.local"]), ignored(".npmrc", ["/.npmrc/"])
(False, False)
"""

from __future__ import annotations

import os

from forge_policy.facts._io import event_cwd, git_dir, read_text
from forge_policy.facts._runtime import note, remaining
from forge_policy.facts.gitignore import GitIgnore, glob_names, ignored

# ``ignored`` is re-exported: it was defined here before ``facts.gitignore`` existed
__all__ = [
    "GIT_CONFIG_ITEM",
    "ROOT_SECRET_FILES",
    "ignored",
    "provide_tdd_untested_files",
    "provide_unignored_secret_files",
    "unignored_secret_files",
    "untested_files",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from forge_policy.model import Event

#: Files the SessionStart check looks for at the project root (AgentShield's list).
ROOT_SECRET_FILES = (".env", ".env.local", ".env.development", ".env.production", ".npmrc")
GIT_CONFIG_ITEM = ".git/config (a remote URL holds a password or token)"
# user:password@ in an http(s) URL, or a bare token user name GitHub/GitLab accept
_URL_CREDENTIALS = (
    r"(?i)https?://(?:[^/@\s:]+:[^/@\s]+|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}"
    r"|glpat-[\w-]{20,})@"
)


# --- the SessionStart check ---------------------------------------------------------------------


def unignored_secret_files(root: str) -> list[str]:
    """The SessionStart findings for a project root (see module doc)."""
    present = [name for name in ROOT_SECRET_FILES if os.path.lexists(os.path.join(root, name))]
    rules = GitIgnore(root) if present else None
    found = [name for name in present if rules is not None and not rules.ignored(name)]
    repository = git_dir(root)
    config = read_text(os.path.join(repository, "config")) if repository else None
    if config:
        from forge_policy.catalog.dsl import compile_regex

        if compile_regex(_URL_CREDENTIALS).search(config) is not None:
            found.append(GIT_CONFIG_ITEM)
    return found


def provide_unignored_secret_files(event: Event) -> list[str]:
    """``facts.unignored_secret_files``: see :func:`unignored_secret_files` (root = ``cwd``)."""
    return unignored_secret_files(event_cwd(event))


# --- strict TDD ---------------------------------------------------------------------------------


def untested_files(staged: Iterable[str], settings: Any) -> list[str]:
    """Staged production files when the commit stages no test and no planning file, else ``[]``.

    ``settings`` is a :class:`forge_policy.config.project.TddSettings`.

    >>> from forge_policy.config.project import TddSettings
    >>> strict = TddSettings(tdd_mode="strict")
    >>> untested_files(["src/app.py", "README.md"], strict)
    ['src/app.py']
    >>> untested_files(["src/app.py", "tests/test_app.py"], strict)
    []
    >>> untested_files(["cmd/main.go", "openspec/changes/x/tasks.md"], strict)
    []
    """
    if settings.tdd_mode != "strict":
        return []
    production: list[str] = []
    for path in staged:
        path = path.replace("\\", "/")
        if _matches(path, settings.test_globs) or _matches(path, settings.planning_globs):
            return []
        if _matches(path, settings.production_globs):
            production.append(path)
    return production


def _matches(path: str, globs: Iterable[str]) -> bool:
    return any(glob_names(glob, path) for glob in globs)


def provide_tdd_untested_files(event: Event) -> list[str]:
    """``facts.tdd_untested_files``: :func:`untested_files` for the commit being made.

    Staged files come from the event's ``staged_files`` (what ``forge-policy git pre-commit``
    passes), else from git in ``cwd``. The project config is ``<forge_root>/config.yaml``
    (``forge_root`` from the event, else ``<cwd>/.forge``).
    """
    from forge_policy.config.project import load_project_config

    cwd = event_cwd(event)
    root = event.payload.get("forge_root")
    config = load_project_config(root if isinstance(root, str) else os.path.join(cwd, ".forge"))
    if config.testing.tdd_mode != "strict":
        return []
    staged = event.payload.get("staged_files")
    if not isinstance(staged, list):
        from forge_policy.facts.git import staged as git_staged

        staged = git_staged(cwd, timeout=remaining())
        if not staged:
            note(f"no staged files found in {cwd}")
    return untested_files([p for p in staged if isinstance(p, str)], config.testing)
