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
import stat

import attrs

from forge_policy.commands import UNKNOWN, expand_path, iter_commands, reader_operands, runs
from forge_policy.facts._io import event_commands
from forge_policy.facts._runtime import check_deadline

TYPE_CHECKING = False
if TYPE_CHECKING:
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


def collect(event: Event) -> Collected:
    """Find the files an event names (see :func:`forge_policy.facts.provide_paths`)."""
    cwd = event.cwd or os.getcwd()
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

    for key, value in _strings(event.tool_input):
        check_deadline()
        in_path_key = key in PATH_KEYS
        if in_path_key or ("\n" not in value and len(value) <= 4096):
            consider(value, cwd, in_path_key)
    for command in event_commands(event):
        for run in runs(command, cwd):
            if not run.cwd:
                continue  # a remote host's files (ssh host cat x)
            for operand in reader_operands(run.argv):
                if UNKNOWN not in operand:
                    consider(operand, run.cwd, True, glob=True)
            for redirect in run.command.redirects if run.command else ():
                if redirect.op in ("<", "<>"):
                    consider(redirect.target, run.cwd, True, glob=True)
    found.declared = list(declared)
    names: dict[str, None] = {}
    for path in [*found.paths, *found.declared]:
        if not os.path.isdir(path):
            names.setdefault(os.path.basename(path))
    found.basenames = [name for name in names if name]
    return found


def _revealing_target(path: str) -> str:
    """The symlink-resolved path when it shows another file name or a hidden directory (``.ssh``,
    ``.git`` …) that ``path`` hides, else ``""``. A symlinked ``/tmp`` adds nothing."""
    real = os.path.realpath(path)
    if real == path:
        return ""
    shown = set(path.split(os.sep))
    hidden = any(part.startswith(".") and part not in shown for part in real.split(os.sep))
    return real if hidden or os.path.basename(real) != os.path.basename(path) else ""


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


#: Suffixes of an environment file that make it a template without values (``.env.example``,
#: ``.env.local.sample``): the file agent-shield-ask's own hint tells the agent to read. A
#: template that does hold a key is still caught by its content (``facts.secret_in_files``).
ENV_TEMPLATE_PARTS = frozenset({"example", "sample", "template", "dist", "tpl", "tmpl"})
#: Files of plain credentials beyond AgentShield's two: the user decides, as for those.
SECRETS_FILES = frozenset(
    {
        "secrets.json",
        "credentials",
        "credentials.json",
        ".netrc",
        "_netrc",
        ".git-credentials",
        ".pgpass",
    }
)


def classify(path: str) -> str:
    """AgentShield's ``classifySensitiveFile`` on one path (seed-systems a.4), or ``""``.

    Beyond AgentShield: an environment file's template (:data:`ENV_TEMPLATE_PARTS`) is no
    secret, and :data:`SECRETS_FILES` lists more credential files.

    >>> classify(".env.production"), classify(".env.example"), classify("/h/.git-credentials")
    ('env_file', '', 'secrets_file')
    """
    filename = os.path.basename(path).lower()
    ext = os.path.splitext(filename)[1]
    if filename.startswith("id_") and (
        ext in ("", ".key", ".pem") or filename in ("id_rsa", "id_ecdsa", "id_ed25519")
    ):
        return "private_key"
    if filename == "config" and ".git/config" in path.replace("\\", "/"):
        return "git_config"
    if filename == ".npmrc":
        return "npmrc"
    if filename.startswith(".env"):
        return "" if ENV_TEMPLATE_PARTS & set(filename.split(".")[2:]) else "env_file"
    if filename in SECRETS_FILES:
        return "secrets_file"
    return ""


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
    return collect(event).paths


def provide_path_basenames(event: Event) -> list[str]:
    """``facts.path_basenames``: basenames of ``paths`` plus those of *declared* file operands.

    A declared operand is a path-key value (``file_path``, ``path``, ``notebook_path`` …) or a
    reader operand in a command. It counts even when no such file exists: a Read of a missing
    ``.env`` still fires ``.env`` rules. Our guess at the harness's cwd can be wrong, and the
    intent is what is governed. Case is kept, so match with ``(?i)``.
    """
    return collect(event).basenames


def provide_sensitive_file(event: Event) -> str:
    """``facts.sensitive_file``: AgentShield's file-name class of the call's most sensitive file.

    The deny classes are ``private_key``, ``git_config`` and ``npmrc``. The ask classes are
    ``env_file`` and ``secrets_file``. The result is ``""`` when no file has a class. Missing
    files count, as in ``path_basenames``. Symlink targets count too.
    """
    found = collect(event)
    return most_sensitive([*found.paths, *found.declared])


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
    return [(path, read_slice_bytes(path, offset, limit, size))]


def _shell_sizes(event: Event, files: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """``files`` with the size of each one that only ``head``/``tail`` with a line or byte
    count read replaced by what they print; any other reader of a file counts it whole."""
    cwd = event.cwd or os.getcwd()
    limited: dict[str, tuple[str, int, bool]] = {}  # path -> (command, count, bytes?)
    whole: set[str] = set()
    for command in event_commands(event):
        for argv, _cmd, current in iter_commands(command, cwd, distinct=True):
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


def read_slice_bytes(path: str, offset: int, limit: int, size: int) -> int:
    """The bytes of lines ``offset`` .. ``offset + limit - 1`` (1-based; Claude Code's Read
    starts at line 1 for an offset of 0 or 1) of the file at ``path``, read only up to the end of
    the slice. ``size`` (the file's size) is the answer when the file cannot be read.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
    ...     _ = handle.write("".join(f"line {n}\\n" for n in range(1, 101)))
    >>> read_slice_bytes(handle.name, 0, 2, 0), read_slice_bytes(handle.name, 99, 50, 0)
    (14, 17)
    """
    skip = max(offset - 1, 0)
    end = skip + limit
    lines = scanned = 0  # newlines and bytes before the current chunk
    start: int | None = None  # where the slice begins, once found
    try:
        with open(path, "rb") as handle:
            while True:
                check_deadline()
                chunk = handle.read(_CHUNK)
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
    except OSError:
        return size
    return 0 if start is None else scanned - start


def _after_newline(chunk: bytes, nth: int) -> int:
    """The index just after the ``nth`` newline of ``chunk`` (``nth`` ≥ 1, and there are at
    least that many), found in C rather than line by line."""
    return len(chunk) - len(chunk.split(b"\n", nth)[-1])


def provide_secret_in_files(event: Event) -> str:
    """``facts.secret_in_files``: id of the first secret pattern in a named file under 1 MiB.

    See :data:`forge_policy.facts.secrets.SECRET_PATTERNS`. Larger and unreadable files are
    skipped, each with a diagnostic note.
    """
    from forge_policy.facts.secrets import scan_files

    return scan_files(collect(event).files)
