"""What controls the hook besides ``.forge/`` and the harness settings: the places and the
commands :mod:`forge_policy.facts.governance` guards for ``protect-governance`` (SPEC §7).

- the engine's own installation, computed from the interpreter that runs the hook
  (:func:`installation`): its package folder, the ``*.pth`` files, ``sitecustomize`` and
  ``usercustomize`` of every site folder on ``sys.path`` and of the user site, the entries
  named ``forge_policy…``/``__editable__…forge_policy…`` there (distribution metadata, the
  editable finder), the console entry point and the interpreters beside it (``bin/forge-policy``,
  ``bin/python*``) and the venv's ``pyvenv.cfg``. An editable install whose package folder lies
  inside the project being worked on is the project's own code, not guarded as installation
  (an agent developing forge-policy edits it); its ``.pth`` and entry point still are;
- managed settings (:data:`MANAGED`) and forge-policy's own configuration layers (user,
  managed, ``FORGE_MANAGED_DIR``);
- git hooks (``.git/hooks/``, the folder ``core.hooksPath`` names) and git configuration files
  (``.git/config``, ``~/.gitconfig``, ``~/.config/git/config``, ``/etc/gitconfig``), with the
  configuration keys that make git run a program (:func:`code_key`);
- the engine's processes and locks (:func:`kills_engine`).

Pure functions of their arguments and of the running interpreter, memoised per process: every
tool call asks, so nothing here imports more than :mod:`os`, :mod:`sys` and :mod:`re`.
"""

from __future__ import annotations

import functools
import os
import re
import sys

from forge_policy._budget import read_outside

#: Managed (administrator) settings of the coding-agent CLIs, and forge-policy's managed layer:
#: Claude Code (https://code.claude.com/docs/en/settings, "managed-settings.json",
#: "managed-mcp.json"), Codex (``/etc/codex/managed_config.toml``, ``requirements.toml``),
#: Gemini CLI (system settings ``/etc/gemini-cli/settings.json``, ``system-defaults.json``),
#: Cursor (enterprise ``hooks.json``), each folder whole.
MANAGED = (
    "/etc/claude-code",
    "/Library/Application Support/ClaudeCode",
    "/etc/codex",
    "/etc/gemini-cli",
    "/Library/Application Support/GeminiCli",
    "/etc/cursor",
    "/Library/Application Support/Cursor",
    "/etc/forge-policy",
)
#: names guarded in a site folder (besides ``*.pth``), by prefix
_SITE_PREFIXES = ("sitecustomize", "usercustomize", "forge_policy", "forge-policy",
                  "__editable__.forge_policy", "__editable___forge_policy")  # fmt: skip
#: names guarded in the folder of the hook's interpreter, by prefix
_BIN_PREFIXES = ("forge-policy", "forge_policy", "python", "pyvenv.cfg")
_GIT_CONFIG_NAMES = ("config", "config.worktree")

# patterns, compiled (and cached by re) when a git configuration key is first judged: every
# tool call imports this module, few set a git key
_CODE_KEY = (
    r"(?ix)^(?:core\.(?:hookspath|fsmonitor|sshcommand|pager|editor|askpass|gitproxy"
    r"|alternaterefscommand|worktree)"
    r"|sequence\.editor|pager\..+|filter\..+|diff\.external|diff\..+\.(?:command|textconv)"
    r"|merge\..+\.driver|include\.path|includeif\..+\.path|gpg\.(?:.+\.)?program"
    r"|uploadpack\.packobjectshook|remote\..+\.(?:uploadpack|receivepack)|protocol\..*allow"
    r"|(?:difftool|mergetool|browser|man)\..+\.(?:cmd|path)|web\.browser"
    r"|interactive\.difffilter|sendemail\.(?:.+\.)?(?:\w*cmd|smtpserver))$"
)
#: keys that run code only with a ``!`` value
_BANG_KEY = r"(?i)^(?:alias\..+|credential\.(?:.+\.)?helper|submodule\..+\.update)$"
#: sections whose removal or renaming may change what runs
_CODE_SECTIONS = frozenset({"core", "alias", "filter", "diff", "merge", "include", "includeif",
                            "pager", "credential", "gpg", "sequence", "uploadpack", "remote",
                            "protocol", "difftool", "mergetool", "submodule"})  # fmt: skip


def code_key(key: str, value: str | None) -> bool:
    """Whether setting (or unsetting: ``value`` None) git configuration ``key`` can make git
    run a program: ``core.hooksPath``, ``core.fsmonitor``, ``alias.x = !…``, ``filter.*`` …

    >>> code_key("core.hooksPath", "h"), code_key("alias.st", "status"), code_key("alias.x", "!rm")
    (True, False, True)
    >>> code_key("user.name", "me"), code_key("includeIf.gitdir:~/w/.path", "x")
    (False, True)
    """
    if re.match(_CODE_KEY, key):
        return True
    if re.match(_BANG_KEY, key):
        return value is None or value.lstrip().startswith("!")
    return False


def code_section(section: str) -> bool:
    """Whether removing or renaming configuration section ``section`` may change what runs."""
    return section.split(".", 1)[0].lower() in _CODE_SECTIONS


def config_code(text: str) -> frozenset[tuple[str, str]]:
    """The ``(key, value)`` pairs of a git configuration file's text that make git run a
    program (:func:`code_key`): what a Write or Edit of it must leave as it is.

    >>> sorted(config_code('[core]\\n\\thooksPath = .h\\n[alias]\\n\\tst = status\\n'))
    [('core.hookspath', '.h')]
    >>> sorted(config_code('[includeIf "gitdir:~/w/"]\\npath = x\\n'))
    [('includeif.gitdir:~/w/.path', 'x')]
    """
    found: set[tuple[str, str]] = set()
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            head, _, rest = line[1:].partition("]")
            name, _, sub = head.strip().partition(" ")
            sub = sub.strip().strip('"')
            section = f"{name.lower()}.{sub}" if sub else name.lower()
            line = rest.strip()
            if not line:
                continue
        key, eq, value = line.partition("=")
        full = f"{section}.{key.strip().lower()}"
        value = value.strip().strip('"') if eq else "true"
        if code_key(full, value):
            found.add((full, value))
    return frozenset(found)


# --- where the hook's installation lives -----------------------------------------------------


class Installation:
    """The running installation's places (:func:`installation`)."""

    __slots__ = ("bin_dirs", "files", "package", "site_dirs")

    def __init__(
        self,
        package: str,
        site_dirs: frozenset[str],
        bin_dirs: frozenset[str],
        files: frozenset[str],
    ) -> None:
        self.package = package
        self.site_dirs = site_dirs
        self.bin_dirs = bin_dirs
        self.files = files

    def holds(self, inner: str) -> bool:
        """Whether folder ``inner`` (ending in ``/``) holds a guarded place (``rm -rf .venv``)."""
        return any(
            place.startswith(inner)
            for group in ((self.package,), self.site_dirs, self.bin_dirs, self.files)
            for place in group
            if place
        )

    def guards(self, path: str, glob: bool = False) -> bool:
        """Whether ``path`` (absolute, normalized; its last part maybe a glob) is, or is inside,
        a guarded place of the installation."""
        package = self.package
        if package and (path == package or path.startswith(package + "/")):
            return True
        if path in self.files:
            return True
        folder, _, name = path.rpartition("/")
        if folder in self.bin_dirs and _named(name, _BIN_PREFIXES, glob):
            return True
        for site in self.site_dirs:
            if path.startswith(site + "/"):
                first = path[len(site) + 1 :].split("/", 1)[0]
                if _named(first, _SITE_PREFIXES, glob) or _pth(first, glob):
                    return True
        return False

    def samples(self) -> list[str]:
        """Existing guarded files, for the hard-link check (bounded)."""
        found = [f for f in self.files if os.path.isfile(f)]
        for folder in self.bin_dirs:
            found += [os.path.join(folder, n) for n in ("forge-policy",)]
        for site in self.site_dirs:
            try:
                names = os.listdir(site)
            except OSError:
                continue
            found += [os.path.join(site, n) for n in names if n.endswith(".pth")
                      or n.startswith(("sitecustomize", "usercustomize"))]  # fmt: skip
        return found[:4096]


def _named(name: str, prefixes: tuple[str, ...], glob: bool) -> bool:
    if not glob:
        return name.startswith(prefixes)
    from fnmatch import fnmatchcase

    return any(fnmatchcase(p + "x", name) or fnmatchcase(p, name) for p in prefixes)


def _pth(name: str, glob: bool) -> bool:
    if not glob:
        return name.endswith(".pth")
    from fnmatch import fnmatchcase

    return fnmatchcase("x.pth", name)


@functools.lru_cache(maxsize=4)
def installation(home: str, project: str) -> Installation:
    """The places of the forge-policy installation that runs this hook: ``sys.path``'s site
    folders and the user site of ``home``, the package folder (unless inside ``project``), the
    interpreter's folder and ``pyvenv.cfg``. Computed from ``sys`` and ``forge_policy.__file__``
    (no ``sysconfig``, no ``importlib.metadata``: this is on the hook's path)."""
    import forge_policy

    package = os.path.dirname(os.path.realpath(forge_policy.__file__))
    if project and (package + "/").startswith(project.rstrip("/") + "/"):
        package = ""  # the project's own code (an editable install being developed)
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    sites = {p for p in sys.path if p.rstrip("/").endswith(("site-packages", "dist-packages"))}
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        sites.add(os.path.join(prefix, "lib", version, "site-packages"))
    bases = [os.environ.get("PYTHONUSERBASE", ""), os.path.join(home, ".local")]
    sites.update(os.path.join(b, "lib", version, "site-packages") for b in bases if b)
    # sitecustomize and usercustomize are imported from anywhere on sys.path
    customize = {p for p in sys.path if p and os.path.isabs(p)}
    files = {os.path.join(p, f"{n}customize{ext}") for p in customize for n in ("site", "user")
             for ext in (".py", "")}  # fmt: skip
    executable = os.path.abspath(sys.executable) if sys.executable else ""
    bins = {os.path.join(sys.prefix, "bin")}
    if executable:
        bins.add(os.path.dirname(executable))
    for prefix in {sys.prefix, os.path.dirname(os.path.dirname(executable))}:
        if prefix:
            files.add(os.path.join(prefix, "pyvenv.cfg"))
    real = {os.path.realpath(s) for s in sites}
    return Installation(
        package,
        frozenset(os.path.normpath(s) for s in sites | real),
        frozenset(os.path.normpath(b) for b in bins),
        frozenset(os.path.normpath(f) for f in files),
    )


# --- git ----------------------------------------------------------------------------------------


_GIT_CACHE: dict[
    tuple[str, str], tuple[tuple[int, ...], tuple[tuple[str, ...], tuple[str, ...]]]
] = {}


def git_places(project: str, home: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """:func:`read_git_places`, memoised while the configuration files that could name a
    ``core.hooksPath`` keep their modification times (a warm worker sees a change)."""
    top = git_top(project)
    xdg = os.environ.get("XDG_CONFIG_HOME", "").strip() or os.path.join(home, ".config")
    candidates = [os.path.join(home, ".gitconfig"), "/etc/gitconfig",
                  os.path.join(xdg, "git", "config")]  # fmt: skip
    if top is not None:
        candidates += [os.path.join(top, ".git"), os.path.join(top, ".git", "config")]
    signature = []
    for candidate in candidates:
        try:
            signature.append(os.stat(candidate).st_mtime_ns)
        except OSError:
            signature.append(-1)
    key = (project, home)
    cached = _GIT_CACHE.get(key)
    if cached is not None and cached[0] == tuple(signature):
        return cached[1]
    found = read_git_places(project, home)
    if len(_GIT_CACHE) > 64:
        _GIT_CACHE.clear()
    _GIT_CACHE[key] = (tuple(signature), found)
    return found


def read_git_places(project: str, home: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(hook folders, configuration files) of the repository holding ``project`` and of the
    user: ``.git/hooks`` (``commondir`` followed for a linked worktree), the folders
    ``core.hooksPath`` names in the configuration files, the configuration files themselves.
    Read on every call (a few ``stat`` and small reads): a warm worker must see a new
    ``core.hooksPath`` the user set."""
    configs = [os.path.join(home, ".gitconfig"), "/etc/gitconfig"]
    xdg = os.environ.get("XDG_CONFIG_HOME", "").strip() or os.path.join(home, ".config")
    configs.append(os.path.join(xdg, "git", "config"))
    hooks: list[str] = []
    top = git_top(project)
    if top is not None:
        gitdir = _git_dir(top)
        common = gitdir
        try:
            with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as f:
                common = os.path.normpath(os.path.join(gitdir, f.read().strip()))
        except OSError:
            pass
        hooks.append(os.path.join(common, "hooks"))
        configs[:0] = [os.path.join(common, "config"), os.path.join(gitdir, "config.worktree")]
    for config in list(configs):
        try:
            with open(config, encoding="utf-8", errors="replace") as f:
                text = f.read(1 << 20)
        except OSError:
            continue
        for key, value in config_code(text):
            if key == "core.hookspath" and value:
                base = top if top is not None else home
                hooks.append(os.path.normpath(os.path.join(base, os.path.expanduser(value))))
    return tuple(dict.fromkeys(hooks)), tuple(dict.fromkeys(os.path.normpath(c) for c in configs))


def git_top(folder: str) -> str | None:
    current = os.path.normpath(folder or "/")
    for _ in range(64):
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
    return None


def _git_dir(top: str) -> str:
    dot_git = os.path.join(top, ".git")
    if os.path.isfile(dot_git):
        try:
            with open(dot_git, encoding="utf-8") as f:
                line = f.read(4096).strip()
        except OSError:
            return dot_git
        if line.startswith("gitdir:"):
            return os.path.normpath(os.path.join(top, line[7:].strip()))
    return dot_git


def untracked(top: str, path: str, *, ignored: bool) -> bool:
    """Whether ``path`` (in the repository at ``top``) holds files git does not track (and,
    ``ignored``, files it ignores too): what ``git clean``/``git stash -u`` would remove. Asks
    git (2 s at most); any failure says yes (fail closed)."""
    import subprocess

    args = ["git", "-C", top, "ls-files", "--others", "--directory", "-z"]
    if not ignored:
        args.append("--exclude-standard")
    try:
        result = subprocess.run([*args, "--", path], capture_output=True, timeout=2, check=False)
    except (OSError, subprocess.SubprocessError):
        return True
    return result.returncode != 0 or bool(result.stdout.strip(b"\0"))


def differs(top: str, path: str, *commits: str) -> bool:
    """Whether ``path``'s tracked files differ between the work tree and ``commits[0]``
    (``HEAD`` when none is given), or between two commits: whether a stash, a checkout or a
    ``reset --hard`` would rewrite them. Any failure says yes."""
    import subprocess

    args = ["git", "-C", top, "diff", "--name-only", "-z", *(commits or ("HEAD",)), "--", path]
    try:
        result = subprocess.run(args, capture_output=True, timeout=2, check=False)
    except (OSError, subprocess.SubprocessError):
        return True
    return result.returncode != 0 or bool(result.stdout.strip(b"\0"))


# --- processes and locks ------------------------------------------------------------------------

_ENGINE = ("forge-policy", "forge_policy", ".forge/", "worker.sock", "worker.pid", "--worker")
_KILLERS = frozenset({"kill", "pkill", "killall", "skill", "fuser", "pkexec"})


def kills_engine(name: str, words: list[str]) -> bool:
    """Whether ``name words…`` signals the engine's processes: ``pkill -f forge-policy``,
    ``kill $(cat .forge/runtime/worker/worker.pid)``, ``fuser -k …/worker.sock``, ``kill PID``
    of a live worker (its ``/proc`` command line says so)."""
    if name not in _KILLERS:
        return False
    read_outside()  # a live worker's /proc entry decides
    if name == "fuser" and not any(w == "-k" or (w[:1] == "-" and "k" in w[1:2]) for w in words):
        return False
    text = " ".join(words)
    if any(marker in text for marker in _ENGINE):
        return True
    if name == "kill":
        for word in words:
            if word.isdigit() and _engine_pid(int(word)):
                return True
    return False


def _engine_pid(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read(1 << 16)
    except OSError:
        return False
    return b"forge_policy" in cmdline or b"forge-policy" in cmdline
