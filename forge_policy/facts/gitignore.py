"""Whether git ignores a path: ``.gitignore`` semantics from **pathspec**, git's sources and order.

Each pattern line is translated by pathspec's ``gitignore`` pattern class (globs, ``**``,
anchoring, directory-only patterns, ``!`` negation, escapes) and run with RE2. The sources
are git's, from lowest to highest precedence, and within them the last matching line wins:

1. ``core.excludesFile`` (``git config``, so includes and ``~`` work), else git's default
   ``$XDG_CONFIG_HOME/git/ignore`` or ``~/.config/git/ignore``;
2. ``$GIT_DIR/info/exclude``;
3. the ``.gitignore`` of the root, then of each directory down to the path's own, each matched
   against the path relative to its directory.

As in git, a path inside an ignored directory is ignored whatever follows (a parent's
exclusion cannot be undone), and the ``.gitignore`` files inside an ignored directory are not
read. Outside a repository the ``.gitignore`` files and the global file still count: they say
what the project means to keep out of git. pathspec is imported only when a rule is compiled.

>>> ignored("secrets/.env", ["*.env*", "!.env.example"]), ignored(".env", [".env.local"])
(True, False)
>>> ignored(".env.local", [".env*", "!.env.local"]), ignored(".npmrc", ["/.npmrc/"])
(False, False)
"""

from __future__ import annotations

import os
from functools import lru_cache

from forge_policy.facts._io import git_dir, read_text
from forge_policy.facts._runtime import check_deadline, note, remaining

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    # (compiled regex, include): include is False for a "!" line
    Rule = tuple[Any, bool]


@lru_cache(maxsize=1024)
def compile_rule(line: str) -> Rule | None:
    """One ignore-file line as ``(regex, include)``; ``None`` for a blank line, a comment or a
    pattern git cannot use (such as an unclosed ``[`` or a trailing ``\\``), which never match.

    The regex runs on a ``/``-separated path relative to the ignore file's directory, with a
    trailing ``/`` for a directory.

    >>> regex, include = compile_rule("!build/")
    >>> include, bool(regex.search("src/build/")), bool(regex.search("src/build"))
    (False, True, False)
    >>> compile_rule("# a comment"), compile_rule("weird[.txt")
    (None, None)
    """
    import re

    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

    from forge_policy.catalog.dsl import compile_regex

    rule: Rule | None = None
    line = re.sub(r"(?<!\\)\*{3,}", "**", line)  # git reads a run of stars as "**"
    if line.rstrip(" ").endswith("/**/"):
        # git: "a/**/" names the directories below a; pathspec would name a itself
        line = line.rstrip(" ") + "*/"
    try:
        regex, include = GitIgnoreSpecPattern.pattern_to_regex(line)
        if include is False and GitIgnoreSpecPattern.pattern_to_regex(line[1:])[0] is None:
            regex = None  # "!" before a line that names nothing ("!/") names nothing either
    except ValueError:  # pathspec's GitIgnorePatternError: git ignores such a line too
        regex, include = None, None
    if regex is not None and include is not None:
        # git's bracket expressions never match "/"; pathspec's negated ones ([!a]) would
        regex = re.sub(r"(?<!\\)\[\^", "[^/", regex)
        if "(?P<ps_d>" in regex:  # see _names: the match must end where the path ends
            regex = f"(?:{regex})$"
        rule = (compile_regex(regex), bool(include))
    return rule


def compile_rules(lines: Iterable[str]) -> list[Rule]:
    """The usable rules of an ignore file's lines, in order (a UTF-8 BOM is skipped, as git does).

    >>> [include for _regex, include in compile_rules(["\ufeff*.log", "", "# x", "!keep.log"])]
    [True, False]
    """
    rules: list[Rule] = []
    for number, line in enumerate(lines):
        if number == 0:
            line = line.removeprefix("\ufeff")
        rule = compile_rule(line.rstrip("\r\n"))
        if rule is not None:
            rules.append(rule)
    return rules


def decide(rules: Iterable[tuple[str, list[Rule]]], path: str, is_dir: bool) -> bool | None:
    """The last matching rule's verdict for ``path`` (``True`` = ignored), or ``None``.

    ``rules`` holds ``(base, rules)`` pairs from lowest to highest precedence; ``base`` is the
    directory (relative, ``""`` for the root) the rules are relative to.

    >>> rules = [("", compile_rules(["*.tmp"])), ("sub", compile_rules(["!keep.tmp"]))]
    >>> [decide(rules, path, False) for path in ("sub/keep.tmp", "a.tmp", "a")]
    [False, True, None]
    """
    verdict: bool | None = None
    for base, group in rules:
        if base and not path.startswith(base + "/"):
            continue
        local = path[len(base) + 1 :] if base else path
        subject = local + "/" if is_dir else local
        for regex, include in group:
            if _names(regex, subject, is_dir):
                verdict = include
    return verdict


def _names(regex: Any, subject: str, is_dir: bool) -> bool:
    """Whether the rule matches this very path, not only one of its parent directories.

    pathspec's regexes also match a file inside a matching directory, through the group
    ``ps_d`` (the slash after the directory). Parents are decided first (:func:`decide` runs
    level by level), so :func:`compile_rule` anchors such a regex at the end: it must name the
    whole path, a directory by its trailing slash. A regex without ``ps_d`` (``a/**``, ``*``)
    names what lies below a prefix: on a directory it must reach past that prefix, so that
    ``a/**`` names ``a/b/`` but not ``a/`` itself.
    """
    match = regex.search(subject)
    if match is None:
        return False
    return "ps_d" in regex.groupindex or not is_dir or bool(match.end() < len(subject))


def ignored(path: str, lines: Iterable[str]) -> bool:
    """Whether the file ``path`` (relative, ``/``-separated) is ignored by one root ``.gitignore``
    holding ``lines``. A file inside an ignored directory stays ignored whatever follows.
    """
    return _ignored_by(path.strip("/"), [("", compile_rules(lines))])


def _ignored_by(path: str, rules: list[tuple[str, list[Rule]]]) -> bool:
    parts = path.split("/")
    for depth in range(1, len(parts)):
        if decide(rules, "/".join(parts[:depth]), True):
            return True
    return bool(decide(rules, path, False))


def glob_names(glob: str, path: str) -> bool:
    """Whether one ``.gitignore``-syntax glob names the file ``path`` or one of its directories
    (what ``testing.*_globs`` of the project config mean); a ``!`` glob names nothing.

    >>> glob_names("src/**/*.py", "src/a/b.py"), glob_names("tests/", "tests/unit/test_a.py")
    (True, True)
    >>> glob_names("*.go", "cmd/main.go"), glob_names("/*.go", "cmd/main.go")
    (True, False)
    """
    rule = compile_rule(glob)
    return rule is not None and rule[1] and _ignored_by(path.strip("/"), [("", [rule])])


class GitIgnore:
    """The ignore rules of one work tree, read on demand (``.gitignore`` files are cached).

    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / ".gitignore").write_text("*.log\\n")
    >>> (root / "sub").mkdir()
    >>> _ = (root / "sub" / ".gitignore").write_text("!keep.log\\n")
    >>> rules = GitIgnore(str(root), global_file="")
    >>> rules.ignored("a.log"), rules.ignored("sub/keep.log"), rules.ignored("sub/b.log")
    (True, False, True)
    """

    __slots__ = ("_base", "_dirs", "root")

    def __init__(self, root: str, *, global_file: str | None = None) -> None:
        """``global_file``: the ``core.excludesFile`` to use; ``None`` asks git (see module doc),
        ``""`` uses none."""
        self.root = root
        found = excludes_file(root) if global_file is None else global_file
        base: list[tuple[str, list[Rule]]] = []
        for source in (found, _info_exclude(root)):
            text = read_text(source) if source else None
            if text:
                base.append(("", compile_rules(text.splitlines())))
        self._base = base
        self._dirs: dict[str, list[Rule]] = {}

    def _gitignore(self, directory: str) -> tuple[str, list[Rule]]:
        if directory not in self._dirs:
            check_deadline()
            text = read_text(os.path.join(self.root, directory, ".gitignore"))
            self._dirs[directory] = compile_rules(text.splitlines()) if text else []
        return directory, self._dirs[directory]

    def ignored(self, path: str, *, is_dir: bool | None = None) -> bool:
        """Whether git ignores ``path`` (relative to the root, ``/``-separated).

        ``is_dir`` says whether ``path`` is a directory; by default the file system is asked,
        as git does.
        """
        parts = [part for part in path.replace(os.sep, "/").split("/") if part]
        if is_dir is None:
            is_dir = os.path.isdir(os.path.join(self.root, *parts))
        rules = [*self._base, self._gitignore("")]
        for depth in range(1, len(parts) + 1):
            prefix = "/".join(parts[:depth])
            last = depth == len(parts)
            if decide(rules, prefix, is_dir or not last):
                return True
            if last:
                return False
            rules.append(self._gitignore(prefix))
        return False


def _info_exclude(root: str) -> str:
    found = git_dir(root)
    return os.path.join(found, "info", "exclude") if found else ""


def excludes_file(root: str) -> str:
    """The global ignore file git uses at ``root``: ``core.excludesFile`` (asked of ``git config``
    under the time budget, so includes and ``~`` work), else git's XDG default; ``""`` if none.
    """
    import subprocess

    argv = ["git", "config", "--path", "--get", "core.excludesFile"]
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    try:
        done = subprocess.run(
            argv,
            cwd=root if os.path.isdir(root) else None,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=remaining(2.0),
            check=False,
        )
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        note(f"git config could not run in {root}: {exc}; using git's default excludes file")
        done = None
    if done is not None and done.returncode == 0:
        value = os.fsdecode(done.stdout).strip()
        if value:
            return os.path.join(root, value)
    return default_excludes_file(os.environ)


def default_excludes_file(environ: Any) -> str:
    """Git's default ``core.excludesFile``: ``$XDG_CONFIG_HOME/git/ignore``, else
    ``$HOME/.config/git/ignore``; ``""`` without either variable.

    >>> default_excludes_file({"XDG_CONFIG_HOME": "/x", "HOME": "/h"})
    '/x/git/ignore'
    >>> default_excludes_file({"HOME": "/h"}), default_excludes_file({})
    ('/h/.config/git/ignore', '')
    """
    xdg = environ.get("XDG_CONFIG_HOME")
    if xdg:
        return os.path.join(xdg, "git", "ignore")
    home = environ.get("HOME")
    return os.path.join(home, ".config", "git", "ignore") if home else ""
