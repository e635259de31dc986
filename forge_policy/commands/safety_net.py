"""The textual safety net: a second reading of a command line that was obfuscated, and of the
arguments of a program the model does not know (SPEC §6).

The structural reading (:mod:`forge_policy.commands.execution`) reads what a shell would run;
what it cannot follow exactly is marked incomplete. The net catches what it still misses, where
a guarded command hides in text:

- :func:`deobfuscated`: when the command line holds a form whose only use here is to hide a
  word (``$IFS``, ``$'\\x72m'``, ``\\x72``/``\\162`` escapes, an unquoted brace list
  ``{rm,-rf,~}``, quotes or backslashes inside a word ``r''m``/``r\\m``, a literal decoded by
  ``base64 -d``/``b64decode``/``xxd -r``/``rev``), the line with those forms undone, and each
  decoded literal on a line of its own. The command model reads that text again, and what it
  finds runs "through the de-obfuscated text": a blocking rule reads it like any other run.
  A line with none of these forms is not read twice, so the false-positive rate does not move
  for ordinary commands (``echo 'rm -rf /'`` stays data).
- :func:`hidden_command`: the words of a program the model does not know, from the first word
  that names a guarded program on (``foo rm -rf ~`` → ``rm -rf ~``): an unknown program may
  run its arguments. Programs known not to (``echo``, ``grep``, ``man``, git, package managers,
  container tools whose commands run elsewhere…) are not read so.

>>> deobfuscated("{rm,-rf,~}")
'rm -rf ~'
>>> deobfuscated("echo cm0gLXJmIH4= | base64 -d | sh")
'echo cm0gLXJmIH4= | base64 -d | sh\\nrm -rf ~'
>>> deobfuscated("rm -rf build") is None
True
>>> hidden_command(["foo", "-q", "rm", "-rf", "~"])
['rm', '-rf', '~']
"""

from __future__ import annotations

import re

from forge_policy._lazy import lazy_pattern

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

# forms whose only use in a command line is to hide a word from a reader: a substring that
# must be present, then the form itself (each pattern starts at its rare character, so a
# megabyte of ordinary text is scanned at C speed; compiled the first time its substring is
# seen, as are the patterns below, which only a marked text reaches)
_MARKERS: tuple[tuple[str, Callable[[], re.Pattern[str]]], ...] = (
    ("IFS", lazy_pattern(r"\$\{?IFS\b")),
    ("$", lazy_pattern(r"(?<=\w)\$\{?[0-9@*]\}?|\$\{?[0-9@*]\}?(?=[\w-])")),
    ("\\", lazy_pattern(r"\\(?:x[0-9A-Fa-f]{2}|[0-7]{3})|(?<=[A-Za-z])\\[A-Za-z]")),
    ("$'", lazy_pattern(r"\$'[^']*\\")),
    (",", lazy_pattern(r"(?<![\w$])\{[^\s{}'\"]*,[^\s{}'\"]*\}")),
    ("''", lazy_pattern(r"(?<=\w)''(?=\w)")),
    ('""', lazy_pattern(r'(?<=\w)""(?=\w)')),
    ("base64", lazy_pattern(r"\bbase64\b")),
    ("b64decode", lazy_pattern(r"b64decode")),
    ("xxd", lazy_pattern(r"\bxxd\b")),
    ("rev", lazy_pattern(r"(?<![\w-])rev(?![\w-])")),
    ("base32", lazy_pattern(r"\bbase32\b")),
)


def _marked(text: str) -> bool:
    return any(needle in text and form().search(text) for needle, form in _MARKERS)


_IFS = lazy_pattern(r"\$\{IFS(?:[:#%][^}]*)?\}|\$IFS\b")
# a positional parameter glued to a word (`git$IFS$9push`): empty in the agent's shell, it is
# there to cut a word for a reader
_GLUED_POSITIONAL = lazy_pattern(r"(?<=\w)\$\{?[0-9@*]\}?|\$\{?[0-9@*]\}?(?=[\w-])")
_ANSI_C = lazy_pattern(r"\$'((?:[^'\\]|\\.)*)'", re.S)
_ESCAPE = lazy_pattern(r"\\(x[0-9A-Fa-f]{1,2}|[0-7]{3})")
_BRACES = lazy_pattern(r"(?<![\w$])\{([^\s{}'\"]*,[^\s{}'\"]*)\}")
_EMPTY_QUOTES = lazy_pattern(r"(?<=\w)(?:''|\"\")|(?:''|\"\")(?=\w)")
_INNER_BACKSLASH = lazy_pattern(r"(?<=[A-Za-z])\\(?=[A-Za-z])")
_B64 = lazy_pattern(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{8,}={0,2}(?![A-Za-z0-9+/=])")
_HEX = lazy_pattern(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){4,}(?![0-9A-Fa-f])")
_QUOTED = lazy_pattern(r"'([^']*)'|\"([^\"]*)\"")
_PRINTABLE = lazy_pattern(r"[\t\n\r\x20-\x7e]+")
#: a text longer than this is read again only in the lines the net changes
_WHOLE = 4096
#: decoded literals longer than this are not read (a payload that large is not a command)
_MAX_DECODED = 1 << 16


def deobfuscated(text: str) -> str | None:
    """``text`` with its hiding forms undone and its decoded literals appended (see the module
    doc), or None when it holds none of them (or undoing them changes nothing)."""
    if not _marked(text):
        return None
    out = _GLUED_POSITIONAL().sub("", _IFS().sub(" ", text))
    out = _ANSI_C().sub(lambda m: "'" + _unescape(m.group(1)).replace("'", "") + "'", out)
    out = _ESCAPE().sub(lambda m: _unescape("\\" + m.group(1)), out)
    out = _BRACES().sub(lambda m: " ".join(m.group(1).split(",")), out)
    out = _EMPTY_QUOTES().sub("", out)
    out = _INNER_BACKSLASH().sub("", out)
    decoded = _decoded(text)
    if len(text) > _WHOLE and out != text:
        # a long text (a script, a here-document) is read again only in the lines the net
        # changed, so its reading stays linear and within the fact's budget
        before = text.splitlines()
        after = out.splitlines()
        if len(before) == len(after):
            out = "\n".join(new for old, new in zip(before, after, strict=True) if new != old)
    if decoded:
        out = "\n".join([out, *decoded])
    return None if out == text else out


def _unescape(text: str) -> str:
    from forge_policy.commands.shell import unescape

    return unescape(text)


def _decoded(text: str) -> list[str]:
    """The literals of ``text`` that a decoder in it would turn into text: base64 (and
    base32) words, hex strings for ``xxd -r``, quoted strings for ``rev``."""
    found: list[str] = []
    if re.search(r"\bbase64\b|\bb64decode\b|\batob\b", text):
        import base64  # ~2.5 ms: only a line naming a decoder pays it

        for m in _B64().finditer(text):
            word = m.group()
            if len(word) % 4 or (word.isalpha() and word.islower()):
                continue  # not base64, or a plain word
            try:
                raw = base64.b64decode(word, validate=True)
            except ValueError:  # binascii.Error is one (no import for it)
                continue
            _keep(raw, found)
    if re.search(r"\bbase32\b|\bb32decode\b", text):
        import base64

        for m in re.finditer(r"[A-Z2-7]{8,}=*", text):
            try:
                _keep(base64.b32decode(m.group()), found)
            except ValueError:  # binascii.Error is one (no import for it)
                continue
    if re.search(r"\bxxd\b|\bunhexlify\b|fromhex|\bhex\b", text):
        for m in _HEX().finditer(text):
            _keep(bytes.fromhex(m.group()), found)
    if re.search(r"(?<![\w-])rev(?![\w-])", text):
        for m in _QUOTED().finditer(text):
            literal = m.group(1) if m.group(1) is not None else m.group(2)
            if literal and " " in literal:
                found.append(literal[::-1])
    return found


def _keep(raw: bytes, found: list[str]) -> None:
    if len(raw) > _MAX_DECODED:
        return
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return
    if decoded.strip() and _PRINTABLE().fullmatch(decoded):
        found.append(decoded)


#: programs whose words after their name are read as a command when the model does not know
#: the program that holds them
GUARDED = frozenset(
    {"rm", "git", "find", "xargs", "dd", "shred", "wipefs", "mkfs", "mke2fs", "sh", "bash",
     "zsh", "dash", "ksh", "curl", "wget", "chmod", "chown", "shutdown", "reboot", "eval",
     "busybox", "sudo", "env"}
)  # fmt: skip
#: programs known not to run their arguments as a command (or to run them elsewhere: in a
#: container, on a remote host, where the guarded paths are not this machine's)
KNOWN = frozenset(
    {"echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "ack", "man", "info", "help",
     "which", "whereis", "type", "whatis", "apropos", "tldr", "cat", "less", "more", "head",
     "tail", "wc", "sort", "uniq", "tr", "cut", "ls", "stat", "file", "test", "[", "[[", "true",
     "false", "hash", "alias", "unalias", "complete", "compgen", "read", "local", "export",
     "declare", "typeset", "readonly", "set", "unset", "shift", "return", "exit", "history",
     "git", "npm", "pnpm", "yarn", "bun", "npx", "pip", "pip3", "pipx", "uv", "poetry", "cargo",
     "go", "make", "cmake", "docker", "podman", "kubectl", "helm", "ssh", "scp", "rsync",
     "gsutil", "aws", "gcloud", "az", "gh", "glab", "hub", "dvc", "conda", "mamba", "brew",
     "apt", "apt-get", "dnf", "yum", "apk", "pacman", "snap", "dpkg", "rpm", "tar", "zip",
     "unzip", "jq", "yq", "sed", "awk", "diff", "cmp", "comm", "tee", "touch", "mkdir", "cp",
     "mv", "ln", "chmod", "chown", "rm", "rmdir", "kill", "pkill", "ps", "top", "date", "sleep",
     "pytest", "ruff", "mypy", "black", "tox", "nox", "jest", "vitest", "eslint", "prettier",
     "tsc", "node", "python", "python3", "perl", "ruby", "php", "java", "javac", "gcc", "cc",
     "clang", "rustc", "gradle", "mvn", "dotnet", "terraform", "ansible", "vagrant", "hdfs",
     "rclone", "s3cmd", "mc", "trash", "gio", "tmux", "screen", "vim", "nano", "code", "emacs",
     "open", "xdg-open", "say", "notify-send", "logger", "command", "builtin", "exec", "time",
     "nice", "nohup", "timeout", "sudo", "doas", "env", "xargs", "parallel", "find", "busybox",
     "toybox", "bash", "sh", "zsh", "dash", "ksh", "fish", "eval", "source", ".", "strace"}
)  # fmt: skip


#: a tool's subcommand that runs the command after its options (``uv run --with x CMD``):
#: its words are read from the first one naming a guarded program or an interpreter
RUNNER_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "uv": frozenset({"run"}), "uvx": frozenset(), "poetry": frozenset({"run"}),
    "pipenv": frozenset({"run"}), "pdm": frozenset({"run"}), "hatch": frozenset({"run"}),
    "conda": frozenset({"run"}), "mamba": frozenset({"run"}), "micromamba": frozenset({"run"}),
    "pixi": frozenset({"run", "exec"}), "rye": frozenset({"run"}), "bundle": frozenset({"exec"}),
    "npm": frozenset({"exec", "x"}), "pnpm": frozenset({"exec", "dlx"}),
    "yarn": frozenset({"exec", "dlx"}), "bun": frozenset({"x"}), "direnv": frozenset({"exec"}),
    "nix": frozenset({"develop", "shell"}), "devbox": frozenset({"run"}),
    "mise": frozenset({"exec", "x"}), "asdf": frozenset({"exec"}), "dotenv": frozenset({"run"}),
}  # fmt: skip
_INTERPRETERS = ("python", "pypy", "node", "perl", "ruby", "php", "bash", "sh", "zsh")


def hidden_command(argv: list[str]) -> list[str] | None:
    """The words of ``argv`` from the first one naming a guarded program (:data:`GUARDED`),
    when ``argv``'s program is not one the model knows (:data:`KNOWN`), or from the first one
    naming a guarded program or an interpreter after a runner's subcommand
    (:data:`RUNNER_SUBCOMMANDS`: ``uv run``, ``npm exec``, ``bundle exec``…); else None.

    >>> hidden_command(["uv", "run", "--with", "x", "python", "-c", "pass"])
    ['python', '-c', 'pass']
    """
    if len(argv) < 2:
        return None
    name = argv[0][argv[0].rfind("/") + 1 :]
    runner = RUNNER_SUBCOMMANDS.get(name)
    if runner is not None and (not runner or argv[1] in runner):
        for k in range(1 if not runner else 2, len(argv)):
            base = argv[k][argv[k].rfind("/") + 1 :]
            if base in GUARDED or base.startswith(_INTERPRETERS):
                return argv[k:]
        return None
    if name in KNOWN or name.startswith(("python", "pypy", "node", "mkfs.")):
        return None
    for k in range(1, len(argv)):
        word = argv[k]
        base = word[word.rfind("/") + 1 :]
        if base in GUARDED or base.startswith("mkfs."):
            return argv[k:]
    return None
