"""What a reader of interpreter code collects: effects rendered as POSIX shell lines.

Every effect found in a program becomes the shell command line that does the same thing
(``shutil.rmtree("/")`` is ``rm -r -f /``), so the shell model can re-read it and every rule
about commands applies unchanged. Words are quoted so the shell reads them back as the
program meant them; the home directory (``os.path.expanduser("~")``, ``Path.home()``,
``os.homedir()``, ``$HOME`` read from the environment) is kept as ``~`` so rules about home
see it.

>>> found = Found()
>>> found.argv(["git", "reset", "--hard"]); found.rm_rf(HOME + "/.ssh")
>>> found.effects()
(('git reset --hard', 'rm -r -f ~/.ssh'), True)
"""

from __future__ import annotations

import posixpath
import shlex

from forge_policy._budget import check_deadline

#: Stands for the home directory at the start of a path (a private-use character).
HOME = "\ue000"
#: Literal strings longer than this are not read (a program built to exhaust memory).
MAX_LITERAL = 1 << 20
#: Nesting of code run by code (``eval``/``exec`` of a literal string) read before giving up.
MAX_NESTING = 4
#: Steps between two looks at the fact budget.
CHECK_EVERY = 2048


def word(value: str) -> str:
    """``value`` quoted as one shell word, the home directory as ``~``.

    >>> word("a b"), word(HOME), word(HOME + "/.ssh/id_rsa"), word("~"), word("-rf")
    ("'a b'", '~', '~/.ssh/id_rsa', "'~'", '-rf')
    """
    if value.startswith(HOME):
        rest = value[len(HOME) :].replace(HOME, "$HOME")
        if not rest:
            return "~"
        if rest.startswith("/"):
            return "~/" + shlex.quote(rest[1:]) if rest[1:] else "~/"
        return '"$HOME"' + shlex.quote(rest)
    return shlex.quote(value.replace(HOME, "$HOME"))


def path_word(value: str) -> str:
    """A path as a word that no command can read as an option.

    >>> path_word("-x"), path_word("/")
    ('./-x', '/')
    """
    return word("./" + value if value.startswith("-") else value)


def join_paths(parts: list[str]) -> str:
    """``os.path.join`` of literal parts: an absolute part (or the home) starts again.

    >>> join_paths(["a", "b"]), join_paths(["a", "/b", "c"]), word(join_paths([HOME, ".ssh"]))
    ('a/b', '/b/c', '~/.ssh')
    """
    out = ""
    for part in parts:
        out = part if part.startswith(("/", HOME)) or not out else posixpath.join(out, part)
    return out


class Found:
    """The effects of one program: shell lines in the order found, and whether they are all
    (a sink whose argument could not be read, code that does not parse, a spent budget)."""

    __slots__ = ("complete", "lines", "steps")

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.complete = True
        self.steps = 0

    def step(self, count: int = 1) -> None:
        """Count work done; look at the fact budget every :data:`CHECK_EVERY` steps."""
        self.steps += count
        if self.steps >= CHECK_EVERY:
            self.steps = 0
            check_deadline()

    def unknown(self) -> None:
        """A sink ran with an argument that is not literal: what it does is not known."""
        self.complete = False

    def shell(self, line: str) -> None:
        """A command line run by a shell, as written (``os.system(s)``)."""
        line = line.replace(HOME, "$HOME")
        if line.strip() and line not in self.lines:
            self.lines.append(line)

    def argv(self, argv: list[str]) -> None:
        """A program run with these arguments, no shell between (``subprocess.run([...])``)."""
        if argv:
            self.shell(" ".join(word(arg) for arg in argv))

    def rm_rf(self, path: str) -> None:
        self.shell(f"rm -r -f {path_word(path)}")

    def rm(self, path: str, force: bool = False) -> None:
        self.shell(f"rm {'-f ' if force else ''}{path_word(path)}")

    def rm_f(self, path: str) -> None:
        self.rm(path, force=True)

    def rmdir(self, path: str) -> None:
        self.shell(f"rmdir {path_word(path)}")

    def read(self, path: str) -> None:
        self.shell(f"cat {path_word(path)}")

    def write(self, path: str) -> None:
        self.shell(f": > {path_word(path)}")

    def move(self, source: str, target: str) -> None:
        self.shell(f"mv {path_word(source)} {path_word(target)}")

    def copy(self, source: str, target: str, recursive: bool = False) -> None:
        self.shell(f"cp {'-r ' if recursive else ''}{path_word(source)} {path_word(target)}")

    def chmod(self, mode: int, path: str) -> None:
        self.shell(f"chmod {mode:o} {path_word(path)}")

    def mkdir(self, path: str) -> None:
        self.shell(f"mkdir -p {path_word(path)}")

    def link(self, target: str, path: str) -> None:
        self.shell(f"ln -s {path_word(target)} {path_word(path)}")

    def effects(self) -> tuple[tuple[str, ...], bool]:
        return tuple(self.lines), self.complete
