"""Project facts: secrets a repository exposes, and the strict-TDD check of staged files.

``facts.unignored_secret_files`` (AgentShield's SessionStart check, seed-systems a.4) names
``.env``, ``.env.local``, ``.env.development``, ``.env.production`` and ``.npmrc`` when they sit
at the project root and git would not ignore them, and ``.git/config`` when a remote URL in it
holds a password or token. Only names are reported, never contents. Ignore rules come from the
root ``.gitignore`` and ``.git/info/exclude`` with git's semantics (globs, ``**``, anchoring,
directory-only patterns, ``!`` negation, last match wins), not substring tests.

``facts.tdd_untested_files`` reads the project config (``<FORGE_ROOT>/config.yaml``,
:mod:`forge_policy.config.project`) and, when ``testing.tdd_mode`` is ``strict``, lists the
staged production files of a commit that stages neither a test file nor a planning file.

>>> ignored("secrets/.env", ["*.env*", "!.env.example"]), ignored(".env", [".env.local"])
(True, False)
>>> ignored(".env.local", [".env*", "!.env.local"]), ignored(".npmrc", ["/.npmrc/"])
(False, False)
"""

from __future__ import annotations

import os
from functools import lru_cache

from forge_policy.facts import event_cwd, note

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from forge_policy.model import Event

#: Files the SessionStart check looks for at the project root (AgentShield's list).
ROOT_SECRET_FILES = (".env", ".env.local", ".env.development", ".env.production", ".npmrc")
GIT_CONFIG_ITEM = ".git/config (a remote URL holds a password or token)"
_MAX_READ = 1 << 20
# user:password@ in an http(s) URL, or a bare token user name GitHub/GitLab accept
_URL_CREDENTIALS = (
    r"(?i)https?://(?:[^/@\s:]+:[^/@\s]+|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}"
    r"|glpat-[\w-]{20,})@"
)


# --- .gitignore patterns ------------------------------------------------------------------------


@lru_cache(maxsize=512)
def glob_regex(pattern: str) -> Any:
    """One gitignore-syntax glob as an RE2 regex over a ``/``-separated relative path.

    A pattern with a ``/`` before its end is anchored at the root; any other matches a name at
    any depth. ``*`` and ``?`` stop at ``/``; ``**`` spans directories; ``[…]`` and ``[!…]``
    are character classes; ``\\`` escapes. A trailing ``/`` is the caller's business.
    """
    from forge_policy.catalog.dsl import compile_regex

    anchored = "/" in pattern.rstrip("/")
    body = pattern.lstrip("/") if anchored else pattern
    out: list[str] = [] if anchored else ["(?:.*/)?"]
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if body.startswith("**/", i) and (i == 0 or body[i - 1] == "/"):
            out.append("(?:.*/)?")
            i += 3
        elif body.startswith("**", i) and (i == 0 or body[i - 1] == "/") and i + 2 == n:
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and _class_end(body, i) > 0:
            end = _class_end(body, i)
            inner = body[i + 1 : end]
            negate = inner[:1] in ("!", "^")
            chars = "".join(_class_char(ch) for ch in (inner[1:] if negate else inner))
            out.append(f"[{'^' if negate else ''}{chars}]")
            i = end + 1
        elif c == "\\" and i + 1 < n:
            out.append(_escape(body[i + 1]))
            i += 2
        else:
            out.append(_escape(c))
            i += 1
    return compile_regex("^" + "".join(out) + "$")


def _class_end(body: str, start: int) -> int:
    """The index of the ``]`` closing the class opened at ``start``, or -1."""
    j = start + 1
    if body[j : j + 1] in ("!", "^"):
        j += 1
    if body[j : j + 1] == "]":
        j += 1
    return body.find("]", j)


def _escape(ch: str) -> str:
    return "\\" + ch if ch.isascii() and not ch.isalnum() and ch not in "_/ " else ch


def _class_char(ch: str) -> str:
    return "\\" + ch if ch in "\\[]^" else ch


def parse_ignore(lines: Iterable[str]) -> list[tuple[str, bool, bool]]:
    """``(glob, negated, directory_only)`` for each pattern line, in order."""
    rules: list[tuple[str, bool, bool]] = []
    for raw in lines:
        line = raw.rstrip("\r\n")
        while line.endswith(" ") and not line.endswith("\\ "):
            line = line[:-1]
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated or line.startswith(("\\!", "\\#")):
            line = line[1:]
        directory = line.endswith("/")
        line = line.rstrip("/")
        if line:
            rules.append((line, negated, directory))
    return rules


def ignored(path: str, lines: Iterable[str]) -> bool:
    """Whether git ignores the file ``path`` (relative, ``/``-separated) under these patterns.

    Last match wins; a file inside an ignored directory stays ignored whatever follows.
    """
    rules = parse_ignore(lines)
    parts = path.strip("/").split("/")
    for depth in range(1, len(parts)):
        if _decide("/".join(parts[:depth]), True, rules):
            return True
    return _decide("/".join(parts), False, rules)


def _decide(path: str, is_dir: bool, rules: list[tuple[str, bool, bool]]) -> bool:
    result = False
    for glob, negated, directory in rules:
        if directory and not is_dir:
            continue
        if glob_regex(glob).search(path) is not None:
            result = not negated
    return result


# --- the SessionStart check ---------------------------------------------------------------------


def _read(path: str) -> str | None:
    from forge_policy.facts.files import read_bounded

    if not os.path.isfile(path):
        return None
    data = read_bounded(path, _MAX_READ)
    return None if data is None else data.decode("utf-8", "replace")


def _git_dir(root: str) -> str | None:
    """The repository's common git directory (``.git``, or where a ``.git`` file points)."""
    dot_git = os.path.join(root, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    text = _read(dot_git)
    if not text or not text.startswith("gitdir:"):
        return None
    gitdir = os.path.normpath(os.path.join(root, text[len("gitdir:") :].strip()))
    common = _read(os.path.join(gitdir, "commondir"))
    return os.path.normpath(os.path.join(gitdir, common.strip())) if common else gitdir


def unignored_secret_files(root: str) -> list[str]:
    """The SessionStart findings for a project root (see module doc)."""
    git_dir = _git_dir(root)
    lines: list[str] = []
    for source in (
        os.path.join(git_dir, "info", "exclude") if git_dir else "",
        os.path.join(root, ".gitignore"),
    ):
        text = _read(source) if source else None
        lines.extend(text.splitlines() if text else [])
    found = [
        name
        for name in ROOT_SECRET_FILES
        if os.path.lexists(os.path.join(root, name)) and not ignored(name, lines)
    ]
    config = _read(os.path.join(git_dir, "config")) if git_dir else None
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
    return any(glob_regex(glob).search(path) is not None for glob in globs)


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
        from forge_policy.facts import remaining
        from forge_policy.facts.git import staged as git_staged

        staged = git_staged(cwd, timeout=remaining())
        if not staged:
            note(f"no staged files found in {cwd}")
    return untested_files([p for p in staged if isinstance(p, str)], config.testing)
