"""The command model: every program a shell command runs, in canonical form, and how it got there.

:func:`runs` reads a command line with the lexer of :mod:`forge_policy.commands.shell` and yields
one :class:`Run` per program that would execute, following what runs something else:

- ``sh -c``, ``eval``, a shell fed a here-document, a here-string or ``echo … |``, ``ssh host
  CMD``, ``$(…)``, backticks and ``<(…)`` (the lexer's and :func:`iter_commands`' part);
- wrappers (``sudo``, ``env``, ``nice``, ``timeout`` …) and ``busybox``/``toybox APPLET``;
- ``xargs`` and ``parallel``: the utility and its fixed arguments run, with the words they are
  fed when the command line shows them (``echo / | xargs rm -rf``), else with an unknown
  operand (:data:`UNKNOWN`, ``find . | xargs rm -rf``); ``parallel ::: 'CMD'`` runs each item;
- ``find … -exec/-execdir/-ok/-okdir CMD {} ;``: CMD runs on what ``find`` finds: its starting
  points when no test narrows the walk, unknown files under them otherwise;
- interpreter one-liners and scripts on stdin (``python -c``, ``node -e``, ``perl <<EOF``),
  through :mod:`forge_policy.commands.interpreters`: each shell line it returns is read again here,
  and code it cannot read in full, or code piped in that the command line does not show
  (``curl x | python3``, ``base64 -d x | sh``), yields a run marked incomplete.

Variables are resolved where the command line decides them: ``VAR=x`` prefixes, assignments
earlier in the command (``D=/; rm -rf $D``), ``${VAR:-default}``, ``$HOME``, ``$PWD`` and
``$TMPDIR`` (the system's temporary directory when unset). Any other ``$…`` stays as written, and
so does the source text of a substitution whose output is not certain (``$(pwd)``): a word that
holds one is not a known path (:func:`opaque`).

>>> [(r.line, r.via) for r in runs("echo / | xargs rm -rf", "/p")]
[('echo /', ''), ('rm -r -f /', 'xargs'), ('xargs rm -rf', '')]
>>> [r.line for r in runs("D=/tmp/x; busybox rm -rf $D", "/p")]
['rm -r -f /tmp/x', 'busybox rm -rf /tmp/x']
"""

from __future__ import annotations

import os
import re

import attrs

from forge_policy._budget import truncated
from forge_policy.commands.git_argv import (
    alias_definition,
    git_code,
    is_git,
    normalise_git,
    with_aliases,
)
from forge_policy.commands.launchers import (
    awk_commands,
    awk_program,
    code_environment,
    cron_commands,
    crontab,
    launch,
    sed_runs_commands,
)
from forge_policy.commands.paths import expand_path
from forge_policy.commands.safety_net import deobfuscated, hidden_command
from forge_policy.commands.shell import (
    SHELLS,
    Command,
    basename,
    echo_text,
    iter_commands,
    read_text,
    shell_c_script,
    ssh_remote_command,
    stdin_text,
    strip_wrappers,
)
from forge_policy.commands.shell_state import UNKNOWN as UNKNOWN
from forge_policy.commands.shell_state import ShellState, env_split

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

_UNSEEN = "\0unseen"  # a script piped into a shell that the command line does not show
#: at most this many input items of one xargs or parallel are followed
MAX_ITEMS = 256
#: levels of programs run by other programs (xargs, find -exec, scripts), followed inside each other
NESTING = 8
_MULTICALL = frozenset({"busybox", "toybox"})
_GREPS = frozenset({"grep", "egrep", "fgrep", "zgrep", "rg", "ag"})
# commands whose single-dash words are long options, not clusters of one-letter flags
# (and the programs whose words are data or another program's argv)
# fmt: off
_NO_CLUSTERS = frozenset({"find", "java", "javac", "gcc", "g++", "cc", "clang", "go", "ffmpeg",
                          "echo", "printf", "xargs", "parallel", "busybox", "toybox"})
# fmt: on
_CLUSTER = re.compile(r"-[A-Za-z]{2,}")
#: programs that run something beyond their argv (besides shells and paths): see ``reached``
_REACHING = frozenset({"trap", "coproc", "source", ".", "ssh"})
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.S)
# fmt: off
_XARGS_VALUE = frozenset({"-a", "-d", "-E", "-I", "-J", "-L", "-n", "-P", "-R", "-s", "-S",
                          "--arg-file", "--delimiter", "--eof", "--max-args", "--max-procs",
                          "--max-lines", "--max-chars", "--process-slot-var"})
_PARALLEL_VALUE = frozenset({"-j", "-S", "-a", "-I", "-d", "-C", "-N", "-n", "-L", "-P",
                             "--jobs", "--sshlogin", "--arg-file", "--results", "--res",
                             "--joblog", "--delimiter", "--colsep", "--tmpdir", "--workdir",
                             "--timeout", "--retries", "--halt", "--delay", "--memfree", "--load",
                             "--basefile", "--env", "--max-args", "--max-replace-args",
                             "--sshloginfile", "--tagstring", "--shebang-wrap"})
# find: options before the expression, tests that take a value, and actions
_FIND_OPTIONS = frozenset({"-H", "-L", "-P", "-O0", "-O1", "-O2", "-O3"})
_FIND_VALUE = frozenset({"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename",
                         "-regex", "-iregex", "-type", "-xtype", "-user", "-group", "-uid",
                         "-gid", "-perm", "-size", "-mtime", "-mmin", "-atime", "-amin", "-ctime",
                         "-cmin", "-newer", "-anewer", "-cnewer", "-maxdepth", "-mindepth",
                         "-links", "-inum", "-samefile", "-lname", "-ilname", "-fstype",
                         "-context", "-printf", "-fprint", "-fprint0", "-fls", "-used",
                         "-regextype", "-D", "-files0-from"})
_FIND_UNFILTERED = frozenset({"-maxdepth", "-mindepth", "-regextype", "-printf", "-fprint",
                              "-fprint0", "-fls", "-D", "-print", "-print0", "-depth", "-xdev",
                              "-mount", "-follow", "-noleaf", "-ignore_readdir_race", "-delete",
                              "-daystart", "-warn", "-nowarn", "-ls", "-true", "(", ")", ","})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})
# the words that set variables for what follows (launchers.code_environment reads them)
_ENV_SETTERS = frozenset({"env", "export", "declare", "typeset", "readonly", "local", "sudo",
                          "exec", "command", "nohup", "nice", "time", "setsid"})
# programs that run commands they read on stdin, from a file, or in their own code
_TEXT_RUNNERS = frozenset({"at", "batch", "crontab", "su", "runuser", "script", "chroot", "sg",
                           "sed", "gsed", *_AWKS})
# fmt: on


# no generated repr: class creation is paid in every hook process (see shell.py)
@attrs.define(eq=False, repr=False)
class Run:
    """One program that would run: its canonical argv, directory, and what led to it.

    ``via`` names the programs it was reached through, outermost first (``"xargs"``,
    ``"find -exec"``, ``"busybox"``, ``"python code"``), ``""`` when it is written directly.
    ``complete`` is False for a run whose effects could not be read in full (interpreter code
    that was not understood): blocking rules read it as a possible match.

    >>> run = Run(["rm", "-r", "-f", "/"], "/p", "xargs")
    >>> run.line, run.reading
    ('rm -r -f /', 'rm -r -f / reached through xargs')
    """

    argv: list[str]
    cwd: str
    via: str = ""
    complete: bool = True
    #: the simple command as the lexer read it (its redirections), when written directly
    command: Command | None = None
    #: the argv before :func:`normalise_argv` (wrappers stripped, known variables expanded)
    words: list[str] = attrs.Factory(list)
    #: the command's redirection targets, known variables expanded (``command``'s order)
    targets: list[str] | None = None

    @property
    def line(self) -> str:
        """The canonical command line: words joined by one space."""
        return " ".join(self.argv)

    @property
    def reading(self) -> str:
        """The line as a message names it: ``rm -r -f / reached through xargs``."""
        return f"{self.line} reached through {self.via}" if self.via else self.line


def normalise_argv(argv: list[str], cwd: str = "") -> list[str]:
    """Any ``argv`` as rules read it: the program's basename, short-flag clusters split (``-rf``
    → ``-r -f``, none after ``--``), long flags and operands kept; git as git reads it
    (:func:`~forge_policy.commands.git_argv.normalise_git`).

    >>> normalise_argv(["/bin/rm", "-rf", "--no-preserve-root", "--", "-x", "/"])
    ['rm', '-r', '-f', '--no-preserve-root', '--', '-x', '/']
    >>> normalise_argv(["find", ".", "-delete"])
    ['find', '.', '-delete']
    """
    if not argv:
        return argv
    name = basename(argv[0]) or argv[0]
    out = [name]
    split = name not in _NO_CLUSTERS
    for i, word in enumerate(argv[1:], start=1):
        if word == "--":
            out.extend(argv[i:])
            break
        if split and _CLUSTER.fullmatch(word):
            out.extend(f"-{letter}" for letter in word[1:])
        else:
            out.append(word)
    return normalise_git(argv, cwd) if name == "git" else out


def opaque(word: str) -> bool:
    """True when ``word`` holds something the command line does not decide: an unresolved
    ``$…``, a substitution's source text or the :data:`UNKNOWN` operand.

    >>> opaque("$X/a"), opaque("…"), opaque("`pwd`/a"), opaque("/tmp/a")
    (True, True, True, False)
    """
    return "$" in word or "`" in word or UNKNOWN in word


def runs(
    text: str, cwd: str, read: Iterable[tuple[list[str], Command, str]] | None = None
) -> Iterator[Run]:
    """Every program ``text`` runs, in completion order (see the module doc).

    ``read``: what ``iter_commands(text, cwd, distinct=True, bare=True)`` gave, when the caller
    has it and no substitution was read in it (with none, the lexer's reading does not depend
    on how substitutions are read, so it is this model's too).

    >>> [r.line for r in runs("find / -exec rm -rf {} \\\\;", "/p")]
    ['rm -r -f /', 'find / -exec rm -rf {} ;']
    """
    yield from _Walker().walk(text, cwd, "", 0, read)
    revealed = deobfuscated(text)  # the textual safety net (commands/safety_net.py)
    if revealed is not None:
        for run in _Walker().walk(revealed, cwd, "", 0):
            run.via = _joined("the de-obfuscated text", run.via)
            yield run


def data(run: Run) -> list[str]:
    r"""The strings a run holds only as data: what ``echo``/``printf`` print, a ``grep``
    pattern, and the here-documents and here-strings fed to a program that is not a shell.
    (Interpreter code is read by the model, not listed here.)

    >>> [data(r) for r in runs("grep -e 'rm -rf' x; cat <<E\nrm -rf /\nE", "/p")]
    [['rm -rf'], ['rm -rf /\n']]
    """
    argv = run.argv
    name = argv[0] if argv else ""
    found: list[str] = []
    if name in ("echo", "printf"):
        found.append(" ".join(argv[1:]))
    elif name in _GREPS:
        patterns = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-e", "--regexp")]
        operands = [a for a in argv[1:] if not a.startswith("-")]
        found.extend(patterns or operands[:1])
    if run.command is not None and name not in SHELLS:
        for redirect in run.command.redirects:
            if redirect.op in ("<<", "<<-") and redirect.body:
                found.append(redirect.body)
            elif redirect.op == "<<<":
                found.append(redirect.target)
    return found


def _subst(done: list[Command], raw: str) -> str:
    """A substitution's output when certain (``$(echo x)``), else its source text marked as a
    substitution, so that the word it joins is :func:`opaque`."""
    from forge_policy.commands.shell import literal_subst

    out = literal_subst(done, raw)
    return f"$({raw})" if out is raw else out


class _Walker:
    """One reading of a command line: the shell state built so far (:class:`ShellState`)."""

    __slots__ = ("defining", "git_aliases", "seen", "state")

    def __init__(self) -> None:
        self.state = ShellState()
        self.defining = 0  # inside a function body read where it is defined
        # the commands read under each state: the same command under the same state reads the
        # same (a padded command is read once)
        self.seen: set[tuple[object, ...]] = set()
        self.git_aliases: dict[str, str] = {}  # git config alias.NAME VALUE earlier in the call

    def walk(
        self,
        text: str,
        cwd: str,
        via: str,
        depth: int,
        read: Iterable[tuple[list[str], Command, str]] | None = None,
    ) -> Iterator[Run]:
        state = self.state
        if read is None:
            read = iter_commands(text, cwd, _subst, distinct=True, bare=True)
        for argv, cmd, current in read:
            words = cmd.words
            if cmd.opens or state.capture is not None or words[:1] == ["function"]:
                body = state.define(words, cmd)
                if body is not None:
                    if not body:
                        continue
                    words, argv = body, strip_wrappers(body)
                    self.defining += 1
                    try:
                        yield from self.command(argv, words, cmd, current, via, depth, {})
                    finally:
                        self.defining -= 1
                    continue
            yield from self.command(argv, words, cmd, current, via, depth, {})

    def command(
        self,
        argv: list[str],
        words: list[str],
        cmd: Command,
        cwd: str,
        via: str,
        depth: int,
        local: dict[str, str],
    ) -> Iterator[Run]:
        """One simple command (``words`` as written, ``argv`` without wrappers), once per item
        of each loop whose variable it reads."""
        state = self.state
        if not cmd.redirects and cmd.piped_from is None and not local:
            key = (*words, cwd, via, depth, self.defining, state.version)
            if key in self.seen:
                return
            self.seen.add(key)
        # env -S splits a string: only where strip_wrappers stripped something
        split = env_split(words) if argv is not words else None
        if split is not None:
            words, argv = split, strip_wrappers(split)
        while words and words[0] in _RESERVED_LEADS:  # `{ D=/; …`, `then D=/`: still an assignment
            words = words[1:]
        prefix = _prefix_assignments(words)
        if not argv:  # D=/ on its own: later words read it
            for k, v in prefix.items():
                state.assign(k, state.expand(v, local))
            return
        loops = state.mentions_loop(argv)
        if not loops:
            yield from self.simple(argv, words, cmd, cwd, via, depth, local, prefix)
            return
        combos: list[dict[str, str]] = [dict(local)]
        for name in loops:
            combos = [{**c, name: item} for c in combos for item in state.loops[name]]
            if len(combos) > MAX_ITEMS:
                truncated(f"loops giving more than {MAX_ITEMS} commands: the rest was not read")
                del combos[MAX_ITEMS:]
                break
        for combo in combos:
            yield from self.simple(argv, words, cmd, cwd, via, depth, combo, prefix)

    def simple(
        self,
        argv: list[str],
        words: list[str],
        cmd: Command,
        cwd: str,
        via: str,
        depth: int,
        local: dict[str, str],
        prefix: dict[str, str],
    ) -> Iterator[Run]:
        state = self.state
        if prefix:
            local = {**local, **{k: state.expand(v, local) for k, v in prefix.items()}}
        if any("$" in word for word in argv):
            expanded = state.expand_words(argv, local)
            expanded = strip_wrappers(expanded) if expanded != argv else expanded
        else:
            expanded = argv
        if not expanded:
            return
        cwd = _wrapper_cwd(words[len(prefix) :], cwd)
        name = basename(expanded[0])
        if name in state.functions or name in state.aliases:
            # the body runs here; so may the program of that name (a definition in a subshell,
            # `command NAME`): both are read
            yield from self.call(expanded, cwd, via, depth)
        if opaque(expanded[0]) and not self.defining:
            truncated(
                f"the program {expanded[0]!r} is decided only when the command runs "
                "(an unset variable, a substitution or an unknown item)"
            )
        targets = [state.expand(r.target, local) for r in cmd.redirects] if cmd.redirects else None
        state.builtin(expanded, cmd, cwd, targets, local)
        yield from self.program(expanded, cmd, cwd, via, depth, targets)
        if name in _REACHING or name in SHELLS or "/" in expanded[0]:
            yield from self.reached(expanded, cmd, cwd, via, depth)

    def call(self, argv: list[str], cwd: str, via: str, depth: int) -> Iterator[Run]:
        """A function or an alias defined earlier in the call: its body runs here."""
        if depth >= NESTING:
            truncated(f"functions and aliases nested deeper than {NESTING} were not read")
            return
        state = self.state
        alias = state.alias_text(argv)
        if alias is not None:
            yield from self.walk(alias, cwd, via, depth + 1)
            return
        for words, cmd, local in state.called(argv):
            body = strip_wrappers(words)
            yield from self.command(body, words, cmd, cwd, via, depth + 1, local)

    def reached(
        self, argv: list[str], cmd: Command, cwd: str, via: str, depth: int
    ) -> Iterator[Run]:
        """What a command runs beyond itself: a script fed to a shell on stdin, a script the
        call wrote, ``trap``'s command, ``coproc``'s, ``source`` of computed text."""
        state = self.state
        name = basename(argv[0])
        script: str | None
        if name == "trap":
            args = argv[2:] if argv[1:2] == ["--"] else argv[1:]
            if len(args) >= 2 and not args[0].startswith("-"):
                yield from self.nested(args[0], cwd, via, depth)
        elif name == "coproc" and len(argv) > 1:
            rest = argv[2:] if len(argv) > 2 and argv[2] in ("{", "(") else argv[1:]
            yield from self.program(strip_wrappers(rest), cmd, cwd, via, depth + 1)
        elif name in ("source", "."):
            operand = argv[1] if len(argv) > 1 else ""
            if not operand or operand.startswith(("/dev/", "/proc/")) or operand == "-":
                truncated(f"source of text computed when the command runs is not read ({name})")
            else:
                script = state.script_of(operand, cwd, name)
                if script is not None:
                    yield from self.nested(script, cwd, via, depth)
        elif "/" in argv[0] and not argv[0].startswith("/usr/") and not argv[0].startswith("/bin/"):
            script = state.script_of(argv[0], cwd, "runs")
            if script is not None:
                yield from self.nested(script, cwd, via, depth)
        fed = _fed_script(argv, cmd, cwd)
        if fed is _UNSEEN:  # `base64 -d x | sh`: the shell runs what nobody has read
            unread = _joined(via, "a pipe of unread code")
            yield Run(normalise_argv(argv, cwd), cwd, unread, complete=False)
        elif fed is not None:
            yield from self.nested(fed, "" if name == "ssh" else cwd, via, depth)
        elif name in SHELLS and shell_c_script(argv) is None:
            path = next((a for a in argv[1:] if not a.startswith(("-", "+"))), None)
            if path is not None and path.startswith(("/dev/fd/", "/proc/", "/dev/stdin")):
                truncated(f"{name} runs a script computed when the command runs ({path})")
            elif path is not None:
                script = state.script_of(path, cwd, name)
                if script is not None:
                    yield from self.nested(script, cwd, via, depth)

    def nested(self, script: str, cwd: str, via: str, depth: int) -> Iterator[Run]:
        if depth < NESTING:
            yield from self.walk(script, cwd, via, depth + 1)
        else:
            truncated(f"scripts fed to a shell nested deeper than {NESTING} were not read")

    def expand(self, word: str, local: dict[str, str]) -> str:
        """``word`` with the parameters the command line decides expanded."""
        return self.state.expand(word, local)

    def program(
        self,
        argv: list[str],
        cmd: Command | None,
        cwd: str,
        via: str,
        depth: int,
        targets: list[str] | None = None,
    ) -> Iterator[Run]:
        """The runs of one argv: those it leads to, then itself."""
        cwd = _wrapper_cwd(argv, cwd)
        yield from self.environment(cmd.words if cmd is not None else argv, cwd, via, depth)
        argv = strip_wrappers(argv)
        if not argv:
            return
        name = basename(argv[0])
        if name[:3].lower() == "git" and is_git(argv[0]):
            defined = alias_definition(argv)
            if defined is not None:
                self.git_aliases[defined[0]] = defined[1]
            argv = with_aliases(argv, self.git_aliases, cwd)
        if depth >= NESTING:
            truncated(f"programs run by programs nested deeper than {NESTING} were not read")
        elif name in _MULTICALL and len(argv) > 1 and not argv[1].startswith("-"):
            yield from self.inner(argv[1:], cwd, via, name, depth)
        elif name == "xargs":
            for inner in _xargs(argv, cmd):
                yield from self.inner(inner, cwd, via, "xargs", depth)
            script = _xargs_script(argv, cmd)
            if script is not None:
                yield from self.text(script, cwd, _joined(via, "xargs"), depth)
        elif name == "parallel":
            for inner, script in _parallel(argv, cmd):
                if script is not None:
                    yield from self.walk(script, cwd, _joined(via, "parallel"), depth + 1)
                else:
                    yield from self.inner(inner, cwd, via, "parallel", depth)
        elif name == "find":
            for inner, action in _find_actions(argv):
                yield from self.inner(inner, cwd, via, f"find {action}", depth)
        elif name in _TEXT_RUNNERS:
            yield from self.launched(argv, cmd, cwd, via, depth)
        elif name[:3].lower() == "git" and is_git(argv[0]):
            for by, script in git_code(argv):
                yield from self.text(script, cwd, _joined(via, by), depth)
        else:
            yield from self.interpreted(argv, cmd, cwd, via, depth)
            hidden = hidden_command(argv)  # `foo rm -rf ~`: a program the model does not know
            if hidden is not None:
                yield from self.inner(hidden, cwd, via, f"{name}, a program not known", depth)
        yield Run(normalise_argv(argv, cwd), cwd, via, command=cmd, words=argv, targets=targets)

    def text(self, script: str | None, cwd: str, via: str, depth: int) -> Iterator[Run]:
        """A command line some program runs (``None``: one the call does not show, so the
        reading is incomplete and blocking rules read it as a possible match)."""
        if script is None:
            truncated(f"{via} runs code the command line does not show")
            yield Run([UNKNOWN], cwd, via, complete=False)
        elif depth + 1 < NESTING:
            yield from self.walk(script, cwd, via, depth + 1)
        else:
            truncated(f"programs run by programs nested deeper than {NESTING} were not read")

    def environment(self, words: list[str], cwd: str, via: str, depth: int) -> Iterator[Run]:
        """The variables of ``words`` that make a program run code (SPEC §6): a command line
        (``GIT_SSH_COMMAND``, an editor, a pager) is read as one; any other (``BASH_ENV``,
        ``LD_PRELOAD``, ``GIT_CONFIG_*``…) loads code the call does not show."""
        if not words or ("=" not in words[0] and basename(words[0]) not in _ENV_SETTERS):
            return  # no NAME=value prefix, env, export…: the common case
        for name, value, is_command in code_environment(words):
            yield from self.text(value if is_command else None, cwd, _joined(via, name), depth)

    def launched(
        self, argv: list[str], cmd: Command | None, cwd: str, via: str, depth: int
    ) -> Iterator[Run]:
        """What a launcher that reads commands on stdin or from a file runs (``at``,
        ``batch``, ``crontab``, ``su``/``script`` without ``-c``), and the commands awk and
        sed can run (commands/launchers.py)."""
        name = basename(argv[0])
        through = _joined(via, name)
        if name in _AWKS:
            program = awk_program(argv)
            if program is None:
                return
            commands, complete = awk_commands(program)
            for line in commands:
                yield from self.text(line, cwd, _joined(via, "awk code"), depth)
            if not complete:
                yield from self.text(None, cwd, _joined(via, "awk code"), depth)
            return
        if name in ("sed", "gsed"):
            if sed_runs_commands(argv):
                yield from self.text(None, cwd, _joined(via, "sed's e command"), depth)
            return
        found = crontab(argv) if name == "crontab" else launch(argv)
        if found is None or found.script is not None or found.argv:
            return  # a string or an argv: the lexer follows it (shell.strip_wrappers)
        text: str | None
        if found.file is not None:
            text = read_text(found.file, cwd) if cwd else None
        elif found.stdin and cmd is not None:
            text = stdin_text(cmd, cwd)
            if text is None and not _fed(cmd):
                return  # a terminal (none in an agent's tool): nothing is read
        else:
            return
        if text is not None and found.cron:
            text = "\n".join(cron_commands(text))
        yield from self.text(text, cwd, through, depth)

    def inner(self, argv: list[str], cwd: str, via: str, by: str, depth: int) -> Iterator[Run]:
        """A program run by another one (``by``), and a shell script it is handed."""
        through = _joined(via, by)
        yield from self.program(argv, None, cwd, through, depth + 1)
        stripped = strip_wrappers(argv)
        script = shell_c_script(stripped) if stripped else None
        if script is not None:
            yield from self.walk(script, cwd, through, depth + 1)

    def interpreted(
        self, argv: list[str], cmd: Command | None, cwd: str, via: str, depth: int
    ) -> Iterator[Run]:
        """The shell lines interpreter code amounts to (:mod:`forge_policy.commands.interpreters`);
        code piped in that the command line does not show is unread (``curl x | python3``)."""
        from forge_policy.commands.interpreters import analyse, interpreter_program, language_of

        stdin = stdin_text(cmd, cwd) if cmd else None
        found = interpreter_program(argv, stdin)
        language = language_of(argv[0]) if found is None else None
        if language is not None and "-m" not in argv[1:]:
            # a script file: read when this call wrote it (`cat > r.py <<E … E; python3 r.py`)
            operand = next((a for a in argv[1:] if not a.startswith("-")), None)
            if operand is not None and self.state.wrote(operand, cwd):
                script = self.state.script_of(operand, cwd, basename(argv[0]))
                if script is not None:
                    found = (language, script)
        if found is None:
            fed = stdin is None and cmd is not None and _fed(cmd)
            if fed and interpreter_program(argv, _UNSEEN) is not None:
                unread = _joined(via, "a pipe of unread code")
                yield Run(normalise_argv(argv, cwd), cwd, unread, complete=False)
            return
        language, code = found
        effects = analyse(language, code)
        through = _joined(via, f"{basename(argv[0])} code")
        for line in effects.commands:
            yield from self.walk(line, cwd, through, depth + 1)
        if not effects.complete:
            yield Run(normalise_argv(argv, cwd), cwd, through, complete=False)


def _wrapper_cwd(argv: list[str], cwd: str) -> str:
    """The directory a wrapper runs its program in: ``env -C DIR``/``--chdir=DIR``, ``sudo -D
    DIR``/``--chdir=DIR`` (the lexer strips the wrappers themselves)."""
    name = basename(argv[0]) if argv else ""
    if name not in ("env", "sudo") or not cwd:
        return cwd
    short = "-C" if name == "env" else "-D"
    for i, word in enumerate(argv[1:], start=1):
        target = None
        if word in (short, "--chdir") and i + 1 < len(argv):
            target = argv[i + 1]
        elif word.startswith("--chdir="):
            target = word[len("--chdir=") :]
        elif not word.startswith("-"):
            break
        if target is not None:
            return os.path.normpath(os.path.join(cwd, expand_path(target)))
    return cwd


def _joined(via: str, by: str) -> str:
    return f"{via}, {by}" if via else by


#: reserved words a simple command can follow (``strip_wrappers`` drops them from argv)
_RESERVED_LEADS = frozenset({"!", "{", "if", "then", "else", "elif", "do", "while", "until"})


def _prefix_assignments(words: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for word in words:
        m = _ASSIGNMENT.fullmatch(word)
        if m is None:
            break
        found[m.group(1)] = m.group(2)
    return found


def _fed_script(argv: list[str], cmd: Command, cwd: str) -> str | None:
    """The script a shell reads on stdin (``bash <<EOF``, ``cat x.sh | sh``), :data:`_UNSEEN`
    when it reads one the command line does not show (``base64 -d x | sh``), or an ssh remote
    command."""
    name = basename(argv[0])
    if name in SHELLS:
        if shell_c_script(argv) is not None or any(not a.startswith(("-", "+")) for a in argv[1:]):
            return None
        script = stdin_text(cmd, cwd)
        return _UNSEEN if script is None and _fed(cmd) else script
    return ssh_remote_command(argv)


def _fed(cmd: Command) -> bool:
    """Whether a command's stdin is fed by the command line (a pipe or ``<``), not a terminal."""
    return cmd.piped_from is not None or any(r.op in ("<", "<>") for r in cmd.redirects)


def _options(argv: list[str], valued: frozenset[str]) -> tuple[dict[str, str], int]:
    """Leading options of ``argv[1:]`` (``-x V``, ``-xV``, ``--x=V``, ``--x V``), and the index
    of the first word after them."""
    found: dict[str, str] = {}
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return found, i + 1
        if not arg.startswith("-") or arg == "-":
            break
        i += 1
        if arg.startswith("--"):
            flag, eq, value = arg.partition("=")
            if not eq and flag in valued and i < len(argv):
                value, i = argv[i], i + 1
        else:
            flag, value = arg[:2], arg[2:]
            if not value and flag in valued and i < len(argv):
                value, i = argv[i], i + 1
        found[flag] = value
    return found, i


def _fed_words(
    cmd: Command | None, options: dict[str, str], lines: bool = False
) -> list[str] | None:
    """The distinct words ``xargs``/``parallel`` read on stdin when the command line shows them
    (whole lines when ``lines``: ``xargs -I``, ``-L`` and ``parallel``), at most
    :data:`MAX_ITEMS` of them."""
    if cmd is None or "-a" in options or "--arg-file" in options:
        return None
    text = stdin_text(cmd, "")
    if text is None:
        return None
    delimiter = options.get("-d", options.get("--delimiter"))
    if "-0" in options or "--null" in options:
        delimiter = "\0"
    if delimiter:
        delimiter = echo_text(["printf", delimiter]) or "\n"
        items = [item for item in text.split(delimiter) if item.strip()]
    else:
        items = [line for line in text.splitlines() if line.strip()] if lines else text.split()
    return _capped(items)


def _capped(items: list[str]) -> list[str]:
    """``items`` without repeats, cut at :data:`MAX_ITEMS` (the fact is then incomplete): each
    item may run a whole script again, so their number bounds the work."""
    distinct = list(dict.fromkeys(items))
    if len(distinct) > MAX_ITEMS:
        truncated(f"more than {MAX_ITEMS} input items of xargs or parallel were not read")
        del distinct[MAX_ITEMS:]
    return distinct


def _xargs(argv: list[str], cmd: Command | None) -> list[list[str]]:
    """The command lines ``xargs`` runs (``echo`` without a utility)."""
    options, i = _options(argv, _XARGS_VALUE)
    utility = argv[i:] or ["echo"]
    replace = next(
        (options[flag] or "{}" for flag in ("-I", "-J", "-i", "--replace") if flag in options),
        None,
    )
    lines = replace is not None or "-L" in options or "--max-lines" in options
    words = _fed_words(cmd, options, lines)
    if words is None:
        words = [UNKNOWN]
    if replace is None:
        return [[*utility, *words]]
    return [[part.replace(replace, word) for part in utility] for word in words]


def _xargs_script(argv: list[str], cmd: Command | None) -> str | None:
    """The text fed to ``xargs sh -c`` (a shell whose script comes from the input), read
    whole as one script: the items are cut by blanks, quotes, ``-d``, ``-0``, ``-L``, ``-n`` or
    ``-s`` as options and implementations decide, and text piped into a shell's ``-c`` is
    there to run, however it is cut (``echo 'rm -rf /' | xargs bash -c``)."""
    _, i = _options(argv, _XARGS_VALUE)
    utility = strip_wrappers(argv[i:])
    if not utility or basename(utility[0]) not in SHELLS or cmd is None:
        return None
    if shell_c_script([*utility, "x"]) != "x":
        return None  # the script is a fixed argument, read with the items
    return stdin_text(cmd, "")


def _parallel(argv: list[str], cmd: Command | None) -> list[tuple[list[str], str | None]]:
    """``(argv, None)`` for each command line ``parallel`` runs, or ``([], script)`` for an
    input item that is itself a command line (``parallel ::: 'rm -rf x'``)."""
    options, i = _options(argv, _PARALLEL_VALUE)
    rest = argv[i:]
    items: list[str] = []
    template: list[str] = []
    sources = False
    group = ""
    for word in rest:
        if word in (":::", ":::+", "::::", "::::+"):
            sources, group = True, word
            continue
        if not sources:
            template.append(word)
        elif group.startswith("::::"):
            items.append(UNKNOWN)  # an argument file
        else:
            items.append(word)
    items = _capped(items) if sources else _fed_words(cmd, options, lines=True) or [UNKNOWN]
    if not template:
        return [([], item) for item in items if item != UNKNOWN]
    replace = options.get("-I") or "{}"
    out: list[tuple[list[str], str | None]] = []
    for item in items:
        if any(replace in part for part in template):
            out.append(([part.replace(replace, item) for part in template], None))
        else:
            out.append(([*template, item], None))
    return out


def find_walk(argv: list[str]) -> tuple[list[str], bool, bool]:
    """``(starting points, filtered, deletes)`` of a ``find`` command: ``filtered`` when a test
    narrows what it acts on, ``deletes`` when ``-delete`` is one of its actions.

    >>> find_walk(["find", "/", "-delete"]), find_walk(["find", "-name", "-delete"])
    ((['/'], False, True), (['.'], True, False))
    """
    i = 1
    while i < len(argv) and argv[i] in _FIND_OPTIONS:
        i += 1
    roots: list[str] = []
    while i < len(argv) and not argv[i].startswith(("-", "(", "!", ",")):
        roots.append(argv[i])
        i += 1
    filtered = deletes = False
    while i < len(argv):
        word = argv[i]
        i += 1
        if word in _FIND_EXEC:
            while i < len(argv) and argv[i] != ";" and not (argv[i] == "+" and argv[i - 1] == "{}"):
                i += 1
            i += 1
            continue
        deletes = deletes or word == "-delete"
        filtered = filtered or (word.startswith("-") and word not in _FIND_UNFILTERED)
        filtered = filtered or word in ("!", "-not", "-o", "-or", "-prune")
        if word in _FIND_VALUE:
            i += 2 if word == "-fprintf" else 1
    return roots or ["."], filtered, deletes


def _find_actions(argv: list[str]) -> list[tuple[list[str], str]]:
    """``(argv, action)`` for each ``-exec``-style action of a ``find``, ``{}`` replaced by each
    starting point when no test narrows the walk, else by :data:`UNKNOWN`."""
    roots, filtered, _deletes = find_walk(argv)
    found: list[tuple[list[str], str]] = []
    i = 1
    while i < len(argv):
        word = argv[i]
        i += 1
        if word in _FIND_VALUE:
            i += 1
            continue
        if word not in _FIND_EXEC:
            continue
        start = i
        while i < len(argv) and argv[i] != ";" and not (argv[i] == "+" and argv[i - 1] == "{}"):
            i += 1
        template = argv[start:i]
        i += 1
        if not template:
            continue
        for root in [UNKNOWN] if filtered else roots:
            found.append(([part.replace("{}", root) for part in template], word))
    return found
