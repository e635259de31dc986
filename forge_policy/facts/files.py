"""File facts: which files a tool call names, their sizes, token estimates, secrets, name classes.

Upstream AgentShield (ospec, seed-systems a.4) only saw ``tool_input`` strings that were already
existing file paths, so ``cat id_rsa`` went through. Here the file operands of reading commands
count too. They are found with the command model of :mod:`forge_policy.commands.execution`:
``cat``, ``head``, ``cp``, ``grep``, ``awk``, ``sed``, ``tar``, ``base64``, ``<`` and the like,
including ``~``, ``$HOME``, a ``cd`` earlier in the chain, ``sh -c``, ``$(…)``, ``xargs``,
``find -exec``, ``busybox`` and interpreter code.

>>> estimate_tokens("a.py", 4000), estimate_tokens("a.log", 30), estimate_tokens("a.log", 29)
(1000, 7, 6)
>>> classify("/home/u/.ssh/id_ed25519"), classify("/r/.env.local"), classify("/r/id_card.md")
('private_key', 'env_file', '')
"""

from __future__ import annotations

import os
import re
import stat

import attrs

from forge_policy._lazy import kept
from forge_policy.commands import expand_path  # the lexer only: the command model loads on use
from forge_policy.facts._io import event_commands, event_cwd, read_bounded
from forge_policy.facts._patches import event_patches
from forge_policy.facts._runtime import check_deadline, note, shared, truncated
from forge_policy.facts.commands import command_runs, command_words

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from forge_policy.model import Event

#: The token advisor's "code" extensions: 4 bytes per token. Any other file: 6 bytes per word,
#: 1.3 tokens per word.
# fmt: off
CODE_EXTENSIONS = frozenset({".js", ".go", ".json", ".yaml", ".yml", ".md", ".ts", ".py", ".txt",
                             ".rs", ".c", ".cpp", ".h", ".html", ".css"})
# fmt: on
#: tool_input keys whose values are file paths even when no such file exists.
# fmt: off
PATH_KEYS = frozenset({"file_path", "filePath", "notebook_path", "path", "paths", "AbsolutePath",
                       "absolute_path", "target_file", "file", "filename"})
# fmt: on
_DENY_CLASSES = ("private_key", "git_config", "npmrc")

_GLOB_CHARS = frozenset("*?[")


# no generated repr: it would cost class-creation time in every hook process (see shell.py)
@attrs.define(eq=False, repr=False)
class Collected:
    """What one event names. ``declared`` holds path operands whether they exist or not.

    Filled in by :func:`collect` as it reads the event, so the class is mutable.

    >>> found = Collected()
    >>> found.paths, found.declared, found.basenames, found.files
    ([], [], [], [])
    """

    paths: list[str] = attrs.Factory(list)
    declared: list[str] = attrs.Factory(list)
    basenames: list[str] = attrs.Factory(list)
    #: (path, size) of each regular file found
    files: list[tuple[str, int]] = attrs.Factory(list)
    #: keys ``ssh``/``scp -i`` authenticate with: named, used, not shown (see _identities)
    used: list[str] = attrs.Factory(list)


def collect(event: Event) -> Collected:
    """Find the files an event names (see :func:`forge_policy.facts.provide_paths`): once per
    event for all the providers that read them (:func:`~forge_policy.facts._runtime.shared`); the
    value is shared, so its readers never change it."""
    return shared("files.collect", event, lambda: _collect(event))


def _collect(event: Event) -> Collected:
    cwd = event_cwd(event)
    found = Collected()
    seen: set[str] = set()
    inodes: set[tuple[int, int]] = set()
    declared: dict[str, None] = {}

    def consider(raw: str, base: str, is_declared: bool, glob: bool = False) -> None:
        if not raw or "\0" in raw or len(raw) > 4096:
            return
        text = raw[7:] if raw.startswith("file://") else raw
        path = os.path.normpath(os.path.join(base, expand_path(text)))
        wildcard = glob and bool(_GLOB_CHARS & set(os.path.basename(text)))
        matches = _glob(path) if wildcard and not os.path.lexists(path) else [path]
        if is_declared and matches and matches[0] == path:
            declared.setdefault(path)
        for candidate in matches:
            try:
                info = os.stat(candidate)
            except (OSError, ValueError):
                continue
            if not stat.S_ISREG(info.st_mode):
                continue
            for name in (candidate, _revealing_target(candidate)):
                if name and name not in seen:
                    seen.add(name)
                    found.paths.append(name)
            if (info.st_dev, info.st_ino) not in inodes:
                inodes.add((info.st_dev, info.st_ino))
                found.files.append((candidate, info.st_size))

    reading = event.tool_name in READ_TOOLS
    exclude = event.tool_input.get("exclude")
    excluded = [x for x in exclude if isinstance(x, str)] if isinstance(exclude, list) else []
    defaults = event.tool_input.get("useDefaultExcludes") is not False
    filters = event.tool_name in _FILTERING_TOOLS
    for key, value in _strings(event.tool_input):
        check_deadline()
        if filters and key in _FILTER_KEYS:
            continue  # read_many_files' exclude, list_directory's ignore: files it does not read
        in_path_key = key in PATH_KEYS
        if in_path_key or ("\n" not in value and len(value) <= 4096):
            consider(value, cwd, in_path_key)
        if reading and key in _READ_GLOB_KEYS and _globbed(value, cwd, key):
            # Gemini's read_many_files: globs and folders, expanded before any check
            for path in expand_read_glob(value, cwd, excluded, defaults=defaults):
                consider(path, cwd, True)
    for _tool, path, _written, _edit in event_patches(event):  # every file apply_patch writes
        consider(path, cwd, True)
    aliases: dict[str, str] = {}  # a name the call links or moves a file to -> that file
    for command in event_commands(event):
        # the command model is imported by a call that runs commands, not by a Read
        from forge_policy.commands import UNKNOWN, reader_operands

        for run in command_runs(event, command, cwd):
            if not run.cwd:
                continue  # a remote host's files (ssh host cat x)
            _record_aliases(run.argv, run.cwd, aliases)
            used = _identities(run.argv)
            found.used += [os.path.normpath(os.path.join(run.cwd, expand_path(u))) for u in used]
            operands = reader_operands(run.argv)
            redirects = run.command.redirects if run.command else ()
            operands += [r.target for r in redirects if r.op in ("<", "<>")]
            for operand in operands:
                if UNKNOWN not in operand:
                    consider(operand, run.cwd, True, glob=True)
                    named = os.path.normpath(os.path.join(run.cwd, expand_path(operand)))
                    target = _through_aliases(named, aliases)
                    if target != named:
                        consider(target, run.cwd, True)
    found.declared = list(declared)
    names: dict[str, None] = {}
    regular = set(found.paths)  # stat'ed above as regular files: no folder, no second stat
    for path in dict.fromkeys([*found.paths, *found.declared]):  # a Read's file is in both
        if path in regular or not os.path.isdir(path):
            names.setdefault(os.path.basename(path))
    found.basenames = [name for name in names if name]
    return found


#: tools that read the files they name (the catalog's names: Gemini's read_file and
#: read_many_files are Read), and the keys whose values may be globs or folders read whole
READ_TOOLS = frozenset({"Read", "NotebookRead"})
_READ_GLOB_KEYS = frozenset({"paths", "include", "glob"})
#: the tools whose ``exclude``/``ignore`` arguments name what they leave out
_FILTERING_TOOLS = frozenset({"Read", "LS", "Glob", "Grep"})
_FILTER_KEYS = frozenset({"exclude", "ignore"})


def _globbed(value: str, cwd: str, key: str) -> bool:
    """Whether a read tool's ``value`` stands for several files: a glob, or a folder given in
    a list of paths (``read_many_files`` reads every file under it)."""
    if not value or "\0" in value or len(value) > 4096:
        return False
    if _GLOB_CHARS & set(value) or "{" in value:
        return True
    folder = os.path.join(cwd, os.path.expanduser(value))
    return key in ("paths", "include") and os.path.isdir(folder)


def _record_aliases(argv: list[str], cwd: str, aliases: dict[str, str]) -> None:
    """Note the names ``ln``/``link``/``mv`` give files earlier in the call, so that a later
    reader of the new name reads the file (``ln -s ~/.ssh/id_rsa k && cat k``): command order,
    before any such file exists.

    >>> seen = {}
    >>> _record_aliases(["ln", "-s", "-f", "/h/.ssh/id_rsa", "k"], "/r", seen)
    >>> _record_aliases(["mv", "k", "notes.txt"], "/r", seen)
    >>> seen["/r/notes.txt"]
    '/h/.ssh/id_rsa'
    """
    name = os.path.basename(argv[0])
    if name not in ("ln", "link", "mv"):
        return
    from forge_policy.commands import UNKNOWN  # loaded with the commands it reads

    operands = [a for a in argv[1:] if not a.startswith("-") and UNKNOWN not in a]
    if len(operands) < 2:
        return
    *sources, dest = operands
    dest_path = os.path.normpath(os.path.join(cwd, expand_path(dest)))
    into = len(sources) > 1 or os.path.isdir(dest_path) or dest.endswith("/")
    symbolic = name == "ln" and any(a in ("-s", "--symbolic") for a in argv)
    for source in sources:
        link = os.path.join(dest_path, os.path.basename(source)) if into else dest_path
        base = os.path.dirname(link) if symbolic else cwd
        target = os.path.normpath(os.path.join(base, expand_path(source)))
        aliases[link] = aliases.get(target, target)


def _through_aliases(path: str, aliases: dict[str, str]) -> str:
    """``path`` with a name :func:`_record_aliases` noted replaced by its file, or a folder's
    (``s/id_rsa`` after ``ln -s ~/.ssh s``)."""
    if not aliases:
        return path
    head, tail = path, ""
    while head and head != os.sep:
        if head in aliases:
            return os.path.join(aliases[head], tail) if tail else aliases[head]
        head, name = os.path.split(head)
        tail = os.path.join(name, tail) if tail else name
    return path


def _identities(argv: list[str]) -> set[str]:
    """The keys ``ssh``/``scp``/``sftp`` authenticate with (``-i KEY``): used, never shown to
    the agent, as ``ssh host`` uses the default key (a copy or a print of the key is a read).

    >>> sorted(_identities(["scp", "-i", "k.pem", "a.py", "h:/tmp"])), _identities(["cat", "-i"])
    (['k.pem'], set())
    """
    if os.path.basename(argv[0]) not in ("ssh", "scp", "sftp"):
        return set()
    used = set()
    for i, arg in enumerate(argv[1:], start=1):
        if arg == "--":
            break
        if arg == "-i" and i + 1 < len(argv):
            used.add(argv[i + 1])
        elif arg.startswith("-i") and len(arg) > 2:
            used.add(arg[2:])
    return used


def _revealing_target(path: str) -> str:
    """The symlink-resolved path when it shows another file name or a hidden directory (``.ssh``,
    ``.git`` …) that ``path`` hides, else ``""``. A symlinked ``/tmp`` adds nothing."""
    real = _realpath(path)
    if real == path:
        return ""
    shown = set(path.split(os.sep))
    hidden = any(part.startswith(".") and part not in shown for part in real.split(os.sep))
    return real if hidden or os.path.basename(real) != os.path.basename(path) else ""


#: ``O_PATH`` (Linux): a file opened to name it, without reading it (no read permission needed)
_O_PATH = getattr(os, "O_PATH", 0)


def _realpath(path: str) -> str:
    """:func:`os.path.realpath` of an existing file's absolute, normalised ``path``: on Linux
    the kernel's resolution, read back from ``/proc/self/fd`` (three system calls, where
    ``realpath`` makes one ``lstat`` and a Python loop turn per component); anywhere that does
    not answer with an absolute path of a file still there, ``realpath`` itself."""
    if _O_PATH:
        try:
            fd = os.open(path, _O_PATH | os.O_CLOEXEC)
        except (OSError, ValueError):
            return os.path.realpath(path)
        try:
            real = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            real = ""
        finally:
            os.close(fd)
        if real.startswith("/") and not real.endswith(" (deleted)"):
            return real
    return os.path.realpath(path)


def _strings(root: object) -> list[tuple[str, str]]:
    """``(key, string)`` for every string in a JSON-like value, depth first, in order."""
    out: list[tuple[str, str]] = []
    stack: list[tuple[str, object, int]] = [("", root, 0)]
    while stack:
        key, node, depth = stack.pop()
        if isinstance(node, str):
            out.append((key, node))
        elif depth < 32 and isinstance(node, dict):
            stack.extend((str(k), v, depth + 1) for k, v in reversed(list(node.items())))
        elif depth < 32 and isinstance(node, list):
            stack.extend((key, v, depth + 1) for v in reversed(node))
    return out


def _glob(pattern: str) -> list[str]:
    """Matches of a wildcard in the last path component only, as the shell sorts them."""
    from fnmatch import fnmatchcase

    folder, name = os.path.split(pattern)
    if _GLOB_CHARS & set(folder):
        return []
    hits: list[str] = []
    try:
        with os.scandir(folder) as entries:
            for count, entry in enumerate(entries):
                if count >= 2000 or len(hits) >= 64:
                    break
                hidden = entry.name.startswith(".") and not name.startswith(".")
                if not hidden and fnmatchcase(entry.name, name):
                    hits.append(entry.path)
    except (OSError, ValueError):
        return []
    return sorted(hits)


#: Dot-separated parts of a file name that make it a template without values
#: (``.env.example``, ``.env.local.sample``, ``secrets.example.json``, ``.env.schema``): the file
#: agent-shield-ask's own hint tells the agent to read. A template that does hold a key is still
#: caught by its content (``facts.secret_in_files``).
TEMPLATE_PARTS = frozenset(
    {"example", "sample", "template", "dist", "tpl", "tmpl", "defaults", "default", "schema"}
)
ENV_TEMPLATE_PARTS = TEMPLATE_PARTS  # the name this set had when it only covered .env files
_DATA = r"json|ya?ml|toml|ini|env|cfg|conf|txt|properties|xml|plist|enc"

#: The secret-file families of SPEC §7, in the order :func:`classify` tries them:
#: ``(family, class, regex)``. A regex is matched against the path in lower case with ``/``
#: separators and a leading ``/``, so ``/\.aws/[^/]+$`` is any file directly in a ``.aws``
#: folder. The class is what ``facts.sensitive_file`` reports and the catalog matches:
#: agent-shield refuses ``private_key``, ``git_config`` and ``npmrc``; agent-shield-ask asks
#: the user about ``env_file``, ``secrets_file`` and ``key_file``. This table is the one
#: owner of the families: tool paths, shell readers and folder-level searches all classify
#: with it.
SECRET_FILE_FAMILIES: tuple[tuple[str, str, str], ...] = (
    # AgentShield's deny classes
    ("ssh private keys", "private_key",
     r"/id_[^/.]+(?:\.key|\.pem)?$|/id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?$|/ssh_host_[a-z0-9]+_key$"),
    ("git config", "git_config", r"/\.git/config$"),
    ("npm tokens", "npmrc", r"/\.npmrc$"),
    # process environments: an environment file by another name
    ("environment files", "env_file",
     r"/\.env[^/]*$|^/proc/(?:[^/]+/)?(?:task/[^/]+/)?environ$"),
    ("package-manager and VCS tokens", "secrets_file",
     r"/\.pypirc$|/[._]netrc$|/\.git-credentials$|/\.config/gh/hosts\.ya?ml$"
     r"|/\.composer/auth\.json$|/\.terraformrc$|/\.dockercfg$"),
    ("database and service credentials", "secrets_file",
     r"/\.pgpass$|/\.my\.cnf$|/\.mylogin\.cnf$|/\.htpasswd$|/\.vault-token$|/\.s3cfg$|/\.boto$"),
    ("cloud, cluster and registry credentials", "secrets_file",
     r"/\.aws/[^/]+$|/\.kube/config$|/kubeconfig(?:\.ya?ml)?$|\.kubeconfig$"
     r"|/\.docker/config\.json$|/\.config/gcloud/|/\.azure/|/application_default_credentials\.json$"),
    ("secrets manifests", "secrets_file",
     rf"/(?:secrets?|credentials?)(?:(?:\.[a-z0-9_-]+)*\.(?:{_DATA}))?$"
     r"|/[^/]*service[-_]?account[^/]*\.json$|\.tfstate(?:\.backup)?$|^/(?:var/)?run/secrets/"),
    ("private keys, certificates and keystores", "key_file",
     r"\.(?:pem|key|p12|pfx|jks|keystore|bks|ppk|p8)$|/\.ssh/[^/.][^/]*$"
     r"|/\.gnupg/(?:private-keys-v1\.d/|secring\.gpg$)"),
)  # fmt: skip
#: The secret files and folders of the home folder, by name (relative to ``$HOME``): the
#: families above made concrete, for the enforcement floor (:mod:`forge_policy.floor.derive`),
#: which hides them whether they exist yet or not. A folder (``.ssh``) is hidden whole: the
#: families claim every file in it but its public keys and host lists. Each entry belongs to a
#: family (``tests/floor/test_derive.py`` checks it against :func:`classify`).
SECRET_HOME_PLACES: tuple[str, ...] = (
    ".ssh", ".aws", ".gnupg/private-keys-v1.d", ".gnupg/secring.gpg", ".kube/config",
    ".docker/config.json", ".config/gcloud", ".azure", ".npmrc", ".pypirc", ".netrc", "_netrc",
    ".git-credentials", ".config/gh/hosts.yml", ".composer/auth.json", ".terraformrc",
    ".dockercfg", ".pgpass", ".my.cnf", ".mylogin.cnf", ".vault-token", ".s3cfg", ".boto",
)  # fmt: skip
#: Names in the families' folders that hold no secret: public keys and host lists.
_PUBLIC = re.compile(
    r"\.pub$|/\.ssh/(?:known_hosts[^/]*|authorized_keys2?|config|rc|environment)$"
    r"|/\.aws/(?:cli/|sso/cache/)?(?:alias|README[^/]*)$"
)
_FAMILIES = [(family, klass, re.compile(regex)) for family, klass, regex in SECRET_FILE_FAMILIES]


def family(path: str) -> tuple[str, str]:
    """``(family, class)`` of the secret-file family ``path`` belongs to, or ``("", "")``.

    >>> family("/h/.aws/credentials"), family("/r/config/secrets.example.yaml")
    (('cloud, cluster and registry credentials', 'secrets_file'), ('', ''))
    """
    norm = "/" + path.replace("\\", "/").lower().lstrip("/")
    filename = norm.rsplit("/", 1)[-1]
    parts = filename.split(".")
    if TEMPLATE_PARTS & set(parts[2:] if filename.startswith(".") else parts[1:]):
        return "", ""
    if _PUBLIC.search(norm):
        return "", ""
    for name, klass, regex in _FAMILIES:
        if regex.search(norm):
            return name, klass
    return "", ""


def classify(path: str) -> str:
    """The class of ``path``'s secret-file family (:data:`SECRET_FILE_FAMILIES`), or ``""``:
    AgentShield's ``classifySensitiveFile`` (seed-systems a.4) grown to the families of SPEC
    §7. A template (:data:`TEMPLATE_PARTS`) and a public key are no secret.

    >>> classify(".env.production"), classify(".env.example"), classify("/h/.git-credentials")
    ('env_file', '', 'secrets_file')
    >>> classify("/srv/tls/server.key"), classify("/h/.ssh/id_rsa.pub"), classify("secrets.py")
    ('key_file', '', '')
    """
    return family(path)[1]


def most_sensitive(paths: list[str]) -> str:
    """The first deny class among ``paths``, else the first ask class, else ``""``."""
    classes = [c for c in map(classify, paths) if c]
    return next((c for c in classes if c in _DENY_CLASSES), classes[0] if classes else "")


def estimate_tokens(path: str, size: int) -> int:
    """The token advisor's estimate, half-up, in exact integer arithmetic.

    Code-like extensions use ``bytes / 4``. Others use ``bytes / 6 * 1.3``. Half-up rounding:
    ``(b + 2) // 4`` and ``(13 b + 30) // 60``.
    """
    ext = os.path.splitext(os.path.basename(path).lower())[1]
    if ext in CODE_EXTENSIONS:
        return (size + 2) // 4
    return (13 * size + 30) // 60


# --- the providers ------------------------------------------------------------------------------


def provide_paths(event: Event) -> list[str]:
    """``facts.paths``: existing regular files the call names, absolute, first-seen order.

    It looks at every string in ``tool_input`` and at the file operands of reading commands
    (``cat``, ``head``, ``cp``, ``grep``, ``<`` …) in ``command``. A symlink adds its target
    after its own name when the target shows another file name or a hidden directory.
    """
    return list(collect(event).paths)


def provide_path_basenames(event: Event) -> list[str]:
    """``facts.path_basenames``: basenames of ``paths`` plus those of *declared* file operands.

    A declared operand is a path-key value (``file_path``, ``path``, ``notebook_path`` …) or a
    reader operand in a command. It counts even when no such file exists: a Read of a missing
    ``.env`` still fires ``.env`` rules. Our guess at the harness's cwd can be wrong, and the
    intent is what is governed. Case is kept, so match with ``(?i)``.
    """
    return list(collect(event).basenames)


def provide_sensitive_file(event: Event) -> str:
    """``facts.sensitive_file``: AgentShield's file-name class of the call's most sensitive file.

    The classes are those of :data:`SECRET_FILE_FAMILIES`: the deny classes ``private_key``,
    ``git_config`` and ``npmrc``, the ask classes ``env_file``, ``secrets_file`` and
    ``key_file``. The result is ``""`` when no file has a class. Missing files count, as in
    ``path_basenames``. Symlink targets count too, and so do the files a call reaches without
    naming them (:func:`reached`: a Grep or ``grep -r`` over their folder that finds a line of
    them, a Glob that targets them, an archive or a recursive copy of their folder, ``git show
    REV:.env``, ``curl file://…``).
    """
    found = collect(event)
    named = [p for p in [*found.paths, *found.declared] if p not in found.used]
    # each path once (a Read's file is both found and declared): the first deny and the first
    # class are those of first occurrences, so dropping repeats changes no answer, and saves
    # a stat and the families' patterns per repeat
    candidates = dict.fromkeys([*named, *reached(event)])
    sizes = dict(found.files)  # the size collect's stat of this event read: no second stat
    return most_sensitive([p for p in candidates if not _empty(p, sizes.get(p))])


def _empty(path: str, size: int | None = None) -> bool:
    """An existing regular file of no bytes (not procfs, whose files all say 0): reading it
    shows nothing, whatever its name. ``size``: the regular file's size, already read."""
    if path.startswith("/proc/"):
        return False
    if size is not None:
        return size == 0
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size == 0


def provide_file_bytes(event: Event) -> int:
    """``facts.file_bytes``: the bytes the call reads from the distinct files in ``paths`` (by
    inode): each file's size, except that a ``Read`` counts only the lines it returns
    (:func:`read_slice_bytes`)."""
    return sum(size for _path, size in _read_sizes(event))


def provide_estimated_tokens(event: Event) -> int:
    """``facts.estimated_tokens``: :func:`estimate_tokens` summed over what the call reads of
    each distinct file (see :func:`provide_file_bytes`)."""
    return sum(estimate_tokens(path, size) for path, size in _read_sizes(event))


#: Claude Code's Read returns at most this many lines when the call gives no ``limit``
READ_DEFAULT_LIMIT = 2000
#: Read ignores offset/limit for these (it returns an image, a PDF's pages, every notebook cell)
_WHOLE_FILE_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".pdf",
                                    ".ipynb"})  # fmt: skip
#: past this many bytes before the slice ends, the rest of the file is counted unread (an
#: over-estimate: a large read is asked about rather than let through unmeasured)
_SLICE_SCAN_LIMIT = 32 * 1024 * 1024
_CHUNK = 1024 * 1024


def _read_sizes(event: Event) -> list[tuple[str, int]]:
    """``(path, bytes read)`` of each distinct file: a Read's file by its slice, a file that
    only ``head``/``tail`` read by the lines they print."""
    files = collect(event).files
    tool_input = event.tool_input if isinstance(event.tool_input, dict) else {}
    if files and event_commands(event):
        return _shell_sizes(event, files)
    target = tool_input.get("file_path")
    if event.tool_name != "Read" or not isinstance(target, str) or len(files) != 1:
        return files
    path, size = files[0]
    if os.path.splitext(path.lower())[1] in _WHOLE_FILE_EXTENSIONS:
        return files
    offset = _count(tool_input.get("offset"))
    limit = _count(tool_input.get("limit")) or READ_DEFAULT_LIMIT
    # the secret scan of this event may have read the whole file already: not read twice
    content = _contents(event).get(path)
    return [(path, read_slice_bytes(path, offset, limit, size, content))]


def _contents(event: Event) -> dict[str, bytes]:
    """The files this event's providers read whole (a Read's file: the secret scan reads it,
    then its slice is measured), by path: one dict per event, shared by its providers."""
    return shared("files.contents", event, dict)


def _shell_sizes(event: Event, files: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """``files`` with the size of each one that only ``head``/``tail`` with a line or byte
    count read replaced by what they print; any other reader of a file counts it whole."""
    cwd = event_cwd(event)
    limited: dict[str, tuple[str, int, bool]] = {}  # path -> (command, count, bytes?)
    whole: set[str] = set()
    for command in event_commands(event):
        from forge_policy.commands import reader_operands  # loaded on use

        for argv, _cmd, current in command_words(event, command, cwd)[0]:
            if not argv:
                continue  # only assignments or redirections (``> file``)
            operands = reader_operands(argv)
            name = os.path.basename(argv[0])
            count = _head_tail_count(argv) if name in ("head", "tail") else None
            for operand in operands:
                path = os.path.normpath(os.path.join(current, expand_path(operand)))
                if count is None or _GLOB_CHARS & set(operand) or path in limited:
                    whole.add(path)
                else:
                    limited[path] = (name, *count)
    sized = []
    for path, size in files:
        if path in limited and path not in whole:
            reader, lines, in_bytes = limited[path]
            size = _head_tail_bytes(path, reader, lines, in_bytes, size)
        sized.append((path, size))
    return sized


def _head_tail_count(argv: list[str]) -> tuple[int, bool] | None:
    """``(count, in bytes)`` of a ``head``/``tail`` (10 lines when none is given; a ``tail -n +K``
    from line K is ``-K``), or None for what is not a plain count (``-f``, ``1K``…).

    >>> _head_tail_count(["head", "-n", "50", "f"]), _head_tail_count(["tail", "-5", "f"])
    ((50, False), (5, False))
    >>> _head_tail_count(["tail", "-n", "+20", "f"]), _head_tail_count(["tail", "-f", "f"])
    ((-20, False), None)
    """
    count, in_bytes = 10, False
    args = iter(argv[1:])
    for arg in args:
        if arg in ("-n", "--lines", "-c", "--bytes"):
            value = next(args, "")
        elif arg.startswith(("--lines=", "--bytes=")):
            value = arg.split("=", 1)[1]
        elif arg.startswith(("-n", "-c")) and len(arg) > 2:
            value = arg[2:]
        elif arg[:1] == "-" and arg[1:].isdigit():
            value = arg[1:]
        elif arg.startswith("-") and arg != "-":
            return None  # -f, -q, -z …: not a plain slice
        else:
            continue
        in_bytes = arg.startswith(("-c", "--bytes"))
        sign = -1 if value.startswith("+") and argv[0].endswith("tail") else 1
        digits = value.lstrip("+")
        if not digits.isdigit():
            return None
        count = -max(int(digits), 1) if sign < 0 else int(digits)  # tail +0 is tail +1
    return count, in_bytes


def _head_tail_bytes(path: str, name: str, count: int, in_bytes: bool, size: int) -> int:
    """The bytes ``head``/``tail`` print of a file of ``size`` bytes (see
    :func:`_head_tail_count` for ``count``)."""
    if in_bytes:
        return min(abs(count), size) if count >= 0 else max(size - abs(count) + 1, 0)
    if name == "head" or count < 0:
        start = 1 if name == "head" else -count
        limit = count if name == "head" else max(size, 1)
        return read_slice_bytes(path, start, limit, size)
    return _tail_bytes(path, count, size)


def _tail_bytes(path: str, lines: int, size: int) -> int:
    """The bytes of the last ``lines`` lines of the file, read backwards from its end."""
    if lines <= 0:
        return 0
    try:
        with open(path, "rb") as handle:
            end = position = handle.seek(0, os.SEEK_END)
            seen = 0
            while position > 0:
                check_deadline()
                step = min(_CHUNK, position)
                position -= step
                handle.seek(position)
                chunk = handle.read(step)
                if position + step == end and chunk.endswith(b"\n"):
                    chunk = chunk[:-1]  # the last line's own newline ends it, it starts none
                found = chunk.count(b"\n")
                if seen + found >= lines:
                    # the (lines - seen)-th newline from the right of this chunk, found in C
                    cut = len(chunk.rsplit(b"\n", lines - seen)[0])
                    return end - (position + cut + 1)
                seen += found
                if end - position >= _SLICE_SCAN_LIMIT:
                    return size
    except OSError:
        return size
    return end


def _count(value: object) -> int:
    """A Read's ``offset`` or ``limit`` as a line count (Claude Code accepts numeric strings);
    0 for anything else."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    return value if isinstance(value, int) and value > 0 else 0


def read_slice_bytes(
    path: str, offset: int, limit: int, size: int, content: bytes | None = None
) -> int:
    """The bytes of lines ``offset`` .. ``offset + limit - 1`` (1-based; Claude Code's Read
    starts at line 1 for an offset of 0 or 1) of the file at ``path``, read only up to the end of
    the slice. ``size`` (the file's size) is the answer when the file cannot be read.
    ``content``: the whole file, read already (then it is not read again).

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
    ...     _ = handle.write("".join(f"line {n}\\n" for n in range(1, 101)))
    >>> read_slice_bytes(handle.name, 0, 2, 0), read_slice_bytes(handle.name, 99, 50, 0)
    (14, 17)
    >>> from pathlib import Path
    >>> read_slice_bytes("/nonexistent", 99, 50, 0, Path(handle.name).read_bytes())
    17
    """
    skip = max(offset - 1, 0)
    end = skip + limit
    if content is not None:  # one chunk, then the end of the file
        return _slice_bytes(iter((content,)), skip, end, size)
    try:
        # unbuffered: the chunks are large, and a buffer costs its own object and an ioctl and
        # an lseek per open; a short read is one more turn of the loop
        with open(path, "rb", buffering=0) as handle:
            return _slice_bytes(iter(lambda: handle.read(_CHUNK), b""), skip, end, size)
    except OSError:
        return size


def _slice_bytes(chunks: Iterator[bytes], skip: int, end: int, size: int) -> int:
    """:func:`read_slice_bytes` over a file's ``chunks``, in order (the last one is followed by
    the end of the file): the bytes after ``skip`` lines up to the end of line ``end``."""
    lines = scanned = 0  # newlines and bytes before the current chunk
    start: int | None = None  # where the slice begins, once found
    while True:
        check_deadline()
        chunk = next(chunks, b"")
        if not chunk:
            break
        if start is None and lines >= skip:
            start = scanned
        count = chunk.count(b"\n")
        if start is None and lines + count >= skip:
            start = scanned + _after_newline(chunk, skip - lines)
        if start is not None and lines + count >= end:
            return scanned + _after_newline(chunk, end - lines) - start
        lines += count
        scanned += len(chunk)
        if scanned >= _SLICE_SCAN_LIMIT:
            return max(size, scanned) - (scanned if start is None else start)
    return 0 if start is None else scanned - start


def _after_newline(chunk: bytes, nth: int) -> int:
    """The index just after the ``nth`` newline of ``chunk`` (``nth`` ≥ 1, and there are at
    least that many), found in C rather than line by line."""
    return len(chunk) - len(chunk.split(b"\n", nth)[-1])


@kept
def _scan_files() -> Any:
    from forge_policy.facts.secrets import scan_files

    return scan_files


def provide_secret_in_files(event: Event) -> str:
    """``facts.secret_in_files``: id of the first secret pattern in a named file under 1 MiB.

    See :data:`forge_policy.facts.secrets.SECRET_PATTERNS`. Larger and unreadable files are
    skipped, each with a diagnostic note.
    """
    scan_files = _scan_files()
    contents = _contents(event)

    def read(path: str, limit: int) -> bytes | None:
        data = read_bounded(path, limit)
        if data is not None:  # kept for this event's other readers of the file
            contents[path] = data
        return data

    found: str = scan_files(collect(event).files, read)
    return found


# --- readers that reach secret files without naming them ---------------------------------------
#
# A Grep over a folder, ``grep -r``/``rg``/``git grep``, an archive or a recursive copy of a
# folder, a Glob whose pattern targets a family, a ``git show REV:.env``, ``curl file://…``: the
# call names no secret file, yet reads one (or lists it). :func:`reached` finds those files, for
# ``facts.sensitive_file`` only (they are not what the call names: sizes and token estimates
# stay with :func:`collect`).

#: How far one folder's walk goes (entries looked at) and what it does not enter: version
#: control internals (but ``.git/config`` is looked at) and dependency or cache folders, whose
#: files are installed code, not the user's credentials.
WALK_ENTRIES = 20000
_WALK_SKIP = frozenset({".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox",
                        ".nox", ".mypy_cache", ".ruff_cache", ".pytest_cache", "site-packages",
                        ".cache"})  # fmt: skip
# programs that read every file under a folder operand: always (archivers), or with the
# recursive flags given
_ARCHIVERS = frozenset({"tar", "7z", "7za", "bsdtar"})
_RECURSIVE_COPIERS = {"cp": ("-r", "-R", "-a", "--recursive", "--archive"),
                      "rsync": ("-r", "-a", "--recursive", "--archive"), "scp": ("-r",),
                      "zip": ("-r", "-R", "--recurse-paths")}  # fmt: skip
_GREP_VALUE_OPTS = frozenset({"-e", "-f", "-m", "-A", "-B", "-C", "-d", "-D", "--regexp", "--file",
                              "--max-count", "--context", "--after-context", "--before-context",
                              "--include", "--exclude", "--exclude-dir", "--glob", "--type",
                              "--type-not", "--threads", "--replace", "--max-columns",
                              "--file-search-regex", "--iglob"})  # fmt: skip
#: short options that take a value in ripgrep and ag but not in grep (``rg -r`` replaces,
#: ``grep -r`` recurses)
_RG_VALUE_OPTS = frozenset({"-g", "-t", "-T", "-j", "-r", "-M", "-G"})
_GREP_RECURSIVE = ("-r", "-R", "--recursive", "--dereference-recursive")
#: Names a Glob's pattern is tried on: it targets secret files when it matches one of the first
#: and none of the second (``**/.env*``, ``*.pem`` do; ``**/*``, ``*.json`` do not).
_SAMPLE_SECRETS = (".env", ".env.local", ".envrc", "id_rsa", "id_ed25519", "server.key",
                   "cert.pem", "store.p12", "cert.pfx", "keystore.jks", "app.keystore",
                   ".npmrc", ".pypirc", ".netrc", ".git-credentials", ".pgpass", ".my.cnf",
                   ".htpasswd", ".vault-token", "secrets.json", "secrets.yaml", "credentials",
                   "credentials.json", "service-account.json", "terraform.tfstate",
                   "kubeconfig")  # fmt: skip
_SAMPLE_HARMLESS = ("main.py", "readme.md", "index.js", "config.json", "package.json",
                    ".gitignore", "makefile", "notes.txt", "app.yaml", "a", "test_app.py",
                    "style.css", "settings.toml", "data.csv", "x.lock")  # fmt: skip


def secret_files_under(folder: str, limit: int = WALK_ENTRIES) -> list[str]:
    """Files of a secret-file family under ``folder`` (hidden ones too: ``grep -r`` reads them),
    folders first-seen, without following symlinked folders; at most ``limit`` entries are
    looked at (a note says when the walk stopped there)."""
    if os.path.basename(os.path.normpath(folder)) == ".git":
        return _credentialed_git_config(folder)
    found: list[str] = []
    stack = [folder]
    seen = 0
    while stack:
        check_deadline()
        current = stack.pop()
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    seen += 1
                    if seen > limit:
                        note(f"secret-file walk of {folder} stopped after {limit} entries")
                        return found
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        continue
                    if is_dir:
                        if entry.name == ".git":
                            found += _credentialed_git_config(entry.path)
                        elif entry.name not in _WALK_SKIP:
                            stack.append(entry.path)
                    elif classify(entry.path) or classify(_revealing_target(entry.path)):
                        found.append(entry.path)
        except (OSError, ValueError):
            continue
    return found


def _credentialed_git_config(git_dir: str) -> list[str]:
    """``[.git/config]`` when it holds a credential (a token in a remote's URL): what makes it a
    secret file. A folder's walk counts it only then, so that archiving or searching a
    repository is not refused for the config every repository has."""
    from forge_policy.facts.secrets import MAX_SCAN_BYTES, find_secret

    path = os.path.join(git_dir, "config")
    data = read_bounded(path, MAX_SCAN_BYTES - 1) if os.path.isfile(path) else None
    return [path] if data is not None and find_secret(data) else []


def _expand_braces(pattern: str) -> list[str]:
    """``*.{ts,tsx}`` → ``*.ts``, ``*.tsx`` (one level, as globs write them)."""
    match = re.search(r"\{([^{}]*)\}", pattern)
    if match is None:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    return [alt for part in match.group(1).split(",") for alt in _expand_braces(head + part + tail)]


def _glob_accepts(globs: list[str], path: str, root: str) -> bool:
    """Whether a search's ``--glob``/``--include`` filters let it read ``path`` (no filter, a
    negated one or one it cannot read: yes, the search may read it)."""
    from fnmatch import fnmatchcase

    wanted = [g for g in globs if g and not g.startswith("!")]
    if not wanted or len(wanted) != len(globs):
        return True
    name = os.path.basename(path)
    relative = os.path.relpath(path, root) if path.startswith(root) else path
    return any(
        fnmatchcase(relative if "/" in alt else name, alt.removeprefix("**/"))
        or fnmatchcase(relative, alt)
        for glob in wanted
        for alt in _expand_braces(glob)
    )


def _search_hits(path: str, patterns: list[str] | None, ignore_case: bool, fixed: bool) -> bool:
    """Whether a search for ``patterns`` (``None``: not known) finds a line of ``path``. What
    cannot be read or compiled counts as found: the search may well show that file."""
    if patterns is None:
        return True
    from forge_policy.catalog.dsl import compile_regex
    from forge_policy.errors import RegexError
    from forge_policy.facts.secrets import MAX_SCAN_BYTES

    data = read_bounded(path, MAX_SCAN_BYTES - 1)
    if data is None:
        return True
    flags = "(?m" + ("i" if ignore_case else "") + ")"
    for pattern in patterns:
        try:
            regex = compile_regex(flags + (re.escape(pattern) if fixed else pattern))
        except RegexError:
            return True
        if regex.search(data) is not None:
            return True
    return False


def _searched(
    folder: str, patterns: list[str] | None, ignore_case: bool, fixed: bool, globs: list[str]
) -> list[str]:
    """The secret files under ``folder`` that a search for ``patterns`` reads and finds a line
    of: only what the search would show (a Grep for ``TODO`` shows nothing of a ``.env`` that
    holds no TODO; a Grep for ``API_KEY`` shows its line)."""
    return [
        path
        for path in secret_files_under(folder)
        if _glob_accepts(globs, path, folder) and _search_hits(path, patterns, ignore_case, fixed)
    ]


def _shell_search(argv: list[str]) -> tuple[list[str] | None, bool, bool, list[str], list[str]]:
    """A grep-like command's ``(patterns or None, ignore case, fixed strings, globs,
    operands)``: ``-e``/``--regexp`` values or its first operand; ``None`` when the patterns are
    in a file (``-f``)."""
    patterns: list[str] | None = []
    operands: list[str] = []
    globs: list[str] = []
    ignore_case = fixed = False
    value_opts = _GREP_VALUE_OPTS | (_RG_VALUE_OPTS if argv[0] in ("rg", "ag") else frozenset())
    args = iter(argv[2:] if argv[0] == "git" else argv[1:])
    for arg in args:
        if arg == "--":
            operands += list(args)
            break
        if not arg.startswith("-") or arg == "-":
            operands.append(arg)
            continue
        flag, eq, value = arg.partition("=")
        if flag in value_opts and not eq:
            value = next(args, "")
        if flag in ("-e", "--regexp") and patterns is not None:
            patterns.append(value)
        elif flag in ("-f", "--file"):
            patterns = None
        elif flag in ("--include", "-g", "--glob", "--iglob", "-G"):
            globs.append(value)
        ignore_case = ignore_case or flag in ("-i", "--ignore-case", "-S", "--smart-case")
        fixed = fixed or flag in ("-F", "--fixed-strings", "-Q", "--literal")
    if patterns == [] and operands:
        patterns = [operands.pop(0)]
    return patterns, ignore_case, fixed, globs, operands


#: tar's short options that take a value (``-f ARCHIVE``, ``-C DIR``, ``-T LIST`` …)
_TAR_VALUES = frozenset("fCTXbHKLNVg")


def _archive_operands(argv: list[str], cwd: str) -> list[tuple[str, str]]:
    """``(path, operand)`` of each file or folder an archiver's command names, each relative to
    the folder tar's ``-C``/``--directory`` gives before it (old-style bundled options too:
    ``tar czf out.tgz -C /srv app``).

    >>> _archive_operands(["tar", "-c", "-f", "o.tgz", "-C", "/srv", "app", "b"], "/r")
    [('/srv/app', 'app'), ('/srv/b', 'b')]
    >>> _archive_operands(["tar", "czf", "o.tgz", "."], "/r")
    [('/r', '.')]
    """
    from forge_policy.commands import UNKNOWN  # loaded with the commands it reads

    base = cwd
    out: list[tuple[str, str]] = []
    args = list(argv[1:])
    if argv[0] == "tar" and args and not args[0].startswith("-"):
        args = [f"-{letter}" for letter in args[0]] + args[1:]  # tar czf …: bundled options
    values = _TAR_VALUES if argv[0] in ("tar", "bsdtar") else frozenset()
    pending: list[str] = []
    for arg in args:
        if pending:
            flag = pending.pop(0)
            if flag == "C":
                base = os.path.normpath(os.path.join(base, expand_path(arg)))
            continue
        if arg.startswith("--directory="):
            base = os.path.normpath(os.path.join(base, expand_path(arg.split("=", 1)[1])))
        elif arg == "--directory":
            pending.append("C")
        elif arg.startswith("--"):
            continue
        elif arg.startswith("-") and len(arg) > 1:
            pending += [letter for letter in arg[1:] if letter in values]
        elif UNKNOWN not in arg:
            out.append((os.path.normpath(os.path.join(base, expand_path(arg))), arg))
    return out


def _git_show_paths(argv: list[str]) -> list[str]:
    """The files ``git show REV:path``, ``git cat-file -p REV:path``, ``git diff --no-index``
    and ``git show|log|diff … -- path`` print (relative to the working folder)."""
    if len(argv) < 2 or argv[1] not in ("show", "cat-file", "diff", "log", "blame"):
        return []
    words = argv[2:]
    out = [w.split(":", 1)[1] for w in words if ":" in w and not w.startswith("-")]
    if "--" in words:
        out += words[words.index("--") + 1 :]
    if argv[1] == "blame" or (argv[1] == "diff" and "--no-index" in words):
        out += [w for w in words if not w.startswith("-") and w != "--"]
    return [path.removeprefix("./") for path in out if path]


def glob_targets(pattern: str) -> str:
    """The class of secret file a Glob's ``pattern`` targets, or ``""``: it matches one of
    :data:`_SAMPLE_SECRETS` and none of the harmless names (``**/*`` lists everything, it
    targets nothing).

    >>> glob_targets("**/.env*"), glob_targets("src/**/*.pem"), glob_targets("**/*")
    ('env_file', 'key_file', '')
    """
    return classify(_glob_sample(pattern))


def _glob_sample(pattern: str) -> str:
    """The first of :data:`_SAMPLE_SECRETS` that the name part of ``pattern`` targets, or ``""``."""
    from fnmatch import fnmatchcase

    name = pattern.replace("\\", "/").rsplit("/", 1)[-1].lower()
    alternatives = _expand_braces(name) if name else []
    if any(fnmatchcase(sample, alt) for alt in alternatives for sample in _SAMPLE_HARMLESS):
        return ""
    return next(
        (sample for alt in alternatives for sample in _SAMPLE_SECRETS if fnmatchcase(sample, alt)),
        "",
    )


def expand_read_glob(
    pattern: str, base: str, exclude: list[str] | tuple[str, ...] = (), *, defaults: bool = True
) -> list[str]:
    """The files a reading tool's glob reads under ``base``, in walk order: Gemini CLI's
    ``read_many_files`` ``include`` (``paths`` in older builds), whose ``glob`` call
    (``packages/core/src/tools/read-many-files.ts``) matches dot-files too (``dot: true``) and
    ignores case (``nocase: true``); a folder stands for every file under it. ``exclude`` (its
    ignore patterns) is honoured where it surely matches (a ``*`` stays inside one folder, case
    kept: an exclude read too widely would hide a file it reads); ``defaults`` (its
    ``useDefaultExcludes``) skips only ``node_modules`` and version-control folders (its
    default ``**/.env`` exclude is not trusted: builds differ). Past :data:`WALK_ENTRIES`
    entries the reading is incomplete (blocking behaviors decide as if a secret was read).

    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("a.py", "sub/.ENV", "sub/b.py"):
    ...     (root / name).parent.mkdir(exist_ok=True); _ = (root / name).write_text("x")
    >>> sorted(os.path.relpath(p, root) for p in expand_read_glob("**/*.env", str(root)))
    ['sub/.ENV']
    >>> sorted(os.path.relpath(p, root) for p in expand_read_glob("**", str(root), ["*.py"]))
    ['sub/.ENV', 'sub/b.py']
    """
    from fnmatch import fnmatch

    skip = _READ_DEFAULT_SKIP if defaults else frozenset()
    root = os.path.normpath(os.path.join(base, os.path.expanduser(pattern)))
    if os.path.isdir(root):
        files = _files_under(root, skip=skip, complete=True)
    else:
        literal = _literal_root(root)
        alternatives = [a.lower() for a in _expand_braces(root)]
        # a walk cut short is a refusal only if the glob could name a secret (not *.py)
        name = root.rsplit("/", 1)[-1].lower()
        secret = any(fnmatch(s, a) for a in _expand_braces(name) for s in _SAMPLE_SECRETS)
        files = [
            path
            for path in _files_under(literal, skip=skip, complete=secret or "**" in name)
            if any(fnmatch(path.lower(), a) or fnmatch(path.lower(), a.replace("/**/", "/"))
                   for a in alternatives)
        ]  # fmt: skip
    ignores = [regex for pattern in exclude if isinstance(pattern, str) for regex in
               _ignore_regexes(pattern)]  # fmt: skip
    if not ignores:
        return files
    kept = []
    for path in files:
        relative = os.path.relpath(path, base).replace(os.sep, "/")
        if not any(regex.fullmatch(relative) for regex in ignores):
            kept.append(path)
    return kept


#: The folders ``read_many_files``'s default excludes skip (``**/node_modules/**``,
#: ``**/.git/**`` …)
_READ_DEFAULT_SKIP = frozenset({"node_modules", ".git", "bower_components", ".svn", ".hg"})


def _ignore_regexes(pattern: str) -> list[re.Pattern[str]]:
    """An ignore glob as anchored regexes over a ``/``-separated relative path: ``**`` spans
    folders, ``*`` and ``?`` stay in one, a trailing ``/`` or ``/**`` covers what is under it.

    >>> [bool(r.fullmatch("sub/.env")) for r in _ignore_regexes("*")]
    [False]
    >>> [bool(r.fullmatch("sub/.env")) for r in _ignore_regexes("**/.env")]
    [True]
    """
    out = []
    for alternative in _expand_braces(pattern.replace("\\", "/").removeprefix("./")):
        text = alternative.rstrip("/") + "/**" if alternative.endswith("/") else alternative
        regex = ""
        i = 0
        while i < len(text):
            if text.startswith("**/", i):
                regex += "(?:.*/)?"
                i += 3
            elif text.startswith("**", i):
                regex += ".*"
                i += 2
            elif text[i] == "*":
                regex += "[^/]*"
                i += 1
            elif text[i] == "?":
                regex += "[^/]"
                i += 1
            else:
                regex += re.escape(text[i])
                i += 1
        out.append(re.compile(regex, re.DOTALL))
    return out


def _literal_root(pattern: str) -> str:
    """The folders a glob starts with before its first wildcard: ``/r/src/**/*.py`` → ``/r/src``."""
    literal: list[str] = []
    for part in pattern.split("/")[:-1]:
        if _GLOB_CHARS & set(part) or "{" in part:
            break
        literal.append(part)
    return "/".join(literal) or "/"


def _files_under(
    folder: str,
    limit: int = WALK_ENTRIES,
    *,
    skip: frozenset[str] = frozenset(),
    complete: bool = False,
) -> list[str]:
    """Every regular file under ``folder``, not entering the folders named in ``skip``; at most
    ``limit`` entries are looked at: past them a note, or (``complete``) the reading is marked
    incomplete."""
    files: list[str] = []
    stack = [folder]
    seen = 0
    while stack:
        check_deadline()
        current = stack.pop()
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    seen += 1
                    if seen > limit:
                        message = f"walk of {folder} stopped after {limit} entries"
                        if complete:
                            truncated(f"{message}: the files past it may be read")
                        else:
                            note(message)
                        return files
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in skip:
                            stack.append(entry.path)
                    elif entry.is_file():
                        files.append(entry.path)
        except (OSError, ValueError):
            continue
    return files


def reached(event: Event) -> list[str]:
    """Secret-family files the call reads or lists without naming them: under a Grep's folder
    (those its pattern finds a line of), a Glob's targets, under the folders of ``grep -r``,
    ``rg``, ``git grep`` (likewise), of an archiver or a recursive copy (all of them), and what
    ``git show REV:path``, ``curl file://…`` print."""

    cwd = event_cwd(event)
    tool_input = event.tool_input if isinstance(event.tool_input, dict) else {}
    out: list[str] = []

    def text(key: str) -> str:
        value = tool_input.get(key)
        return value if isinstance(value, str) else ""

    if event.tool_name == "Grep":
        folder = os.path.normpath(os.path.join(cwd, os.path.expanduser(text("path") or ".")))
        if os.path.isdir(folder):
            glob = text("glob")
            out += _searched(folder, [text("pattern")], bool(tool_input.get("-i")), False,
                             [glob] if glob else [])  # fmt: skip
    if event.tool_name == "Glob":
        sample = _glob_sample(text("pattern"))
        if sample:  # what it targets, whether or not such a file exists yet
            out.append(os.path.join(cwd, os.path.expanduser(text("path") or "."), sample))
    for command in event_commands(event):
        for run in command_runs(event, command, cwd):
            if not run.cwd or not run.argv:
                continue
            out += _shell_reached(run.argv, run.cwd)
    return out


def _shell_reached(argv: list[str], cwd: str) -> list[str]:
    """What one command reads of the secret files without naming them (see :func:`reached`)."""
    # `from package import name`: a dotted `from module import` costs more per call here
    from forge_policy.commands import UNKNOWN, readers

    GREPS = readers.GREPS
    name = os.path.basename(argv[0])
    out: list[str] = []

    def folders(operands: list[str]) -> list[str]:
        paths = [os.path.normpath(os.path.join(cwd, expand_path(op))) for op in operands
                 if UNKNOWN not in op]  # fmt: skip
        return [p for p in paths if os.path.isdir(p)]

    if name in GREPS or (name == "git" and argv[1:2] == ["grep"]):
        recursive = name in ("rg", "ag", "git") or any(a in _GREP_RECURSIVE for a in argv)
        if recursive or any(a.startswith("--directories=rec") for a in argv):
            patterns, ignore_case, fixed, globs, operands = _shell_search(argv)
            for folder in folders(operands or ["."]):
                out += _searched(folder, patterns, ignore_case, fixed, globs)
    elif name in _ARCHIVERS:
        for folder, _operand in _archive_operands(argv, cwd):
            out += secret_files_under(folder) if os.path.isdir(folder) else []
    elif any(f in argv for f in _RECURSIVE_COPIERS.get(name, ())):
        operands = [a for a in argv[1:] if not a.startswith("-")]
        for folder in folders(operands):
            out += secret_files_under(folder)
    elif name == "git":
        out += [os.path.normpath(os.path.join(cwd, p)) for p in _git_show_paths(argv)]
    if name in ("curl", "wget"):
        out += [a[7:] for a in argv if a.startswith("file://")]
    return out
