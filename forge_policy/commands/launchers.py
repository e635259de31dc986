"""Launchers: programs that run their arguments, a string or their input as a command.

The command model follows what a launcher runs instead of reading it as a harmless program:
``setsid rm -rf ~`` deletes the home folder, ``flock x.lock -c 'git reset --hard'`` resets.
:data:`LAUNCHERS` gives each launcher its options that take a value and the operands that come
before the command (``flock FILE``, ``taskset MASK``, ``chrt PRIO``, ``chroot NEWROOT``), from
their manuals (util-linux 2.39: setsid(1), flock(1), script(1), unshare(1), ionice(1), chrt(1),
taskset(1), runuser(1), su(1); procps-ng watch(1); coreutils 9: nohup, stdbuf, chroot, nice,
timeout; shadow sg(1); at(1); cron's crontab(1) and crontab(5); systemd-run(1); tmux(1);
screen(1); firejail(1)).

:func:`launch` reads one argv. What a launcher runs comes in one of four forms (a
:class:`Launch`): an argv run directly (``setsid CMD ARGS``), a string a shell runs
(``flock -c 'CMD'``, ``su -c``, ``script -c``, ``watch 'CMD'``, ``sg GROUP 'CMD'``, ``tmux new
'CMD'``), commands read on stdin (``at``, ``batch``, ``crontab -``) or a file of commands (``at -f
FILE``, ``crontab FILE``, whose lines are a crontab's).

:func:`awk_commands` and :func:`sed_runs_commands` read the commands ``awk`` and ``sed`` can run
(``system("…")``, ``print | "sh"``, ``"cmd" | getline``; ``sed``'s ``e`` command and ``s///e``
flag). :func:`code_environment` reads the variables that make a program run code (SPEC §6):
``GIT_SSH_COMMAND``, editors and pagers hold a command line; ``BASH_ENV``, ``LD_PRELOAD``,
``GIT_CONFIG_*``… make a program load code the command line does not show.

This module imports only :mod:`forge_policy.commands.git_argv`: :mod:`~forge_policy.commands.shell`
reads it.

>>> launch(["flock", "-w", "5", "x.lock", "rm", "-rf", "/"]).argv
['rm', '-rf', '/']
>>> launch(["flock", "x.lock", "-c", "git reset --hard"]).script
'git reset --hard'
>>> launch(["at", "now"]).stdin
True
"""

from __future__ import annotations

import re

from forge_policy._lazy import lazy_pattern
from forge_policy.commands.expansion import PROCESS_SUBSTITUTION
from forge_policy.commands.git_argv import code_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator


class Launch:
    """What one launcher runs: ``argv`` (run directly), ``script`` (a shell string),
    ``stdin`` (commands read on stdin), ``file`` (a file of commands), ``cron`` (the text read is
    a crontab)."""

    __slots__ = ("argv", "cron", "file", "script", "stdin")

    def __init__(
        self,
        argv: list[str] | None = None,
        script: str | None = None,
        stdin: bool = False,
        file: str | None = None,
        cron: bool = False,
    ) -> None:
        self.argv = argv or []
        self.script = script
        self.stdin = stdin
        self.file = file
        self.cron = cron


class _Spec:
    """One launcher's argument syntax.

    ``values``: options taking a value in the next word (short ones may attach it);
    ``scripts``: options whose value is a shell string the launcher runs; ``operands``: the
    operands before the command; ``none``: options after which nothing is launched (a pid is
    acted on, a listing is printed); ``joined``: the command words are joined and run by a
    shell (``watch``, ``sg``); ``stdin``: without a command, commands are read on stdin.
    """

    __slots__ = ("command", "joined", "none", "operands", "scripts", "stdin", "values")

    def __init__(
        self,
        values: str = "",
        scripts: str = "",
        operands: int = 0,
        none: str = "",
        joined: bool = False,
        stdin: bool = False,
        command: bool = True,
    ) -> None:
        self.command = command  # False: the operands are not a command (script's FILE)
        self.values = frozenset(values.split())
        self.scripts = frozenset(scripts.split())
        self.operands = operands
        self.none = frozenset(none.split())
        self.joined = joined
        self.stdin = stdin


# fmt: off
LAUNCHERS: dict[str, _Spec] = {
    # util-linux setsid(1): -c -f -w, then PROGRAM [ARGS]
    "setsid": _Spec(),
    # util-linux flock(1): flock [opts] FILE|DIR CMD [ARGS] | FILE -c CMD | FD (no command)
    "flock": _Spec("-w --wait --timeout -E --conflict-exit-code", "-c --command", operands=1),
    # util-linux script(1): script [opts] [FILE]; -c CMD runs CMD, else an interactive shell
    "script": _Spec("-E --echo -I --log-in -O --log-out -B --log-io -T --log-timing -m "
                    "--logging-format -o --output-limit", "-c --command", operands=1,
                    stdin=True, command=False),
    # procps watch(1): watch [opts] CMD...: the words joined and run by sh -c (-x: exec'd)
    "watch": _Spec("-n --interval -q --equexit", joined=True),
    # util-linux unshare(1): long options attach their optional values with "="
    "unshare": _Spec("-S --setuid -G --setgid -R --root -w --wd --propagation --setgroups "
                     "--map-user --map-group --map-users --map-groups"),
    # util-linux ionice(1): -c CLASS -n LEVEL CMD | -p PID (no command)
    "ionice": _Spec("-c --class -n --classdata -p --pid -P --pgid -u --uid",
                    none="-p --pid -P --pgid -u --uid"),
    # util-linux chrt(1): chrt [opts] PRIO CMD | -p [PRIO] PID
    "chrt": _Spec("-T --sched-runtime -P --sched-period -D --sched-deadline", operands=1,
                  none="-p --pid -m --max"),
    # util-linux taskset(1): taskset [-c] MASK CMD | -p
    "taskset": _Spec(operands=1, none="-p --pid"),
    # coreutils nohup, stdbuf, nice, timeout (also stripped as wrappers by the lexer)
    "nohup": _Spec(),
    "stdbuf": _Spec("-i --input -o --output -e --error"),
    "nice": _Spec("-n --adjustment"),
    # coreutils chroot(8): chroot [--userspec=U] [--groups=G] NEWROOT [CMD]; no command runs
    # an interactive shell
    "chroot": _Spec("--userspec --groups", operands=1, stdin=True),
    # firejail(1): options are --name=value
    "firejail": _Spec(),
    # util-linux runuser(1) and su(1): -c CMD (--session-command), -s SHELL, -g/-G GROUP,
    # -w LIST; "runuser -u USER -- CMD" runs CMD; "su USER" opens a shell on stdin
    "su": _Spec("-s --shell -g --group -G --supp-group -w --whitelist-environment",
                "-c --command --session-command", stdin=True),
    "runuser": _Spec("-u --user -s --shell -g --group -G --supp-group -w "
                     "--whitelist-environment", "-c --command --session-command", stdin=True),
    # shadow sg(1): sg [-] [GROUP [-c] CMD]: CMD is run by /bin/sh -c
    "sg": _Spec(operands=1, joined=True, stdin=True),
    # at(1), batch: the commands are read on stdin or from -f FILE
    "at": _Spec("-q -f -t -M", none="-l -r -d -c", stdin=True),
    "batch": _Spec("-q -f -M", stdin=True),
    # systemd-run(1): systemd-run [opts] CMD [ARGS]
    "systemd-run": _Spec("-u --unit -p --property -H --host -M --machine -E --setenv "
                         "--description --slice --uid --gid --nice --working-directory "
                         "--on-calendar --on-active --on-boot --on-startup --on-unit-active "
                         "--on-unit-inactive --timer-property --path-property "
                         "--socket-property --service-type -D"),
    # screen(1): screen [opts] CMD [ARGS] (-dm detached)
    "screen": _Spec("-S -c -e -h -p -T -t -Logfile"),
    # eatmydata, fakeroot, torsocks, unbuffer, dbus-run-session, catchsegv: CMD [ARGS]
    "eatmydata": _Spec(), "fakeroot": _Spec("-l --lib --faked -s -i"), "torsocks": _Spec(),
    "unbuffer": _Spec(), "dbus-run-session": _Spec("--config-file --dbus-daemon"),
    "catchsegv": _Spec(), "caffeinate": _Spec("-t -w"), "proxychains": _Spec("-f"),
    "proxychains4": _Spec("-f"),
    # strace(1), ltrace(1): the traced command runs
    "strace": _Spec("-o -e -p -s -u -a -b -E -I -O -P -S -U -X", none="-p"),
    "ltrace": _Spec("-o -e -p -s -u -a -A -D -F -l -n -x", none="-p"),
    # util-linux nsenter(1): nsenter [opts] [CMD]
    "nsenter": _Spec("-t --target -S --setuid -G --setgid -w --wd -r --root"),
    "xvfb-run": _Spec("-n --server-num -s --server-args -f --auth-file -e --error-file -p "
                      "--xauth-protocol"),
}
# fmt: on
#: launchers whose words after the options form a tmux/screen-style subcommand
_TMUX_RUNS = frozenset(
    {
        "new",
        "new-session",
        "new-window",
        "neww",
        "split-window",
        "splitw",
        "respawn-pane",
        "respawnp",
        "respawn-window",
        "respawnw",
        "run-shell",
        "run",
        "display-popup",
        "popup",
    }
)  # fmt: skip
_TMUX_KEYS = frozenset({"send-keys", "send"})
_TMUX_VALUES = frozenset("cCeFfnstxylLSNTdwbhE")  # letters of tmux options that take a value
_TMUX_FLAGS = frozenset("dPhvbkaADXRZIEMp")  # and those that do not (beside d, a flag)
_KEY_NAMES = frozenset({"Enter", "C-m", "KPEnter", "C-j"})


def basename(word: str) -> str:
    return word[word.rfind("/") + 1 :]


def launch(argv: list[str]) -> Launch | None:
    """What the launcher ``argv`` runs, or None when ``argv[0]`` is not a launcher (see the
    module doc).

    >>> launch(["setsid", "-f", "rm", "-rf", "/"]).argv
    ['rm', '-rf', '/']
    >>> launch(["watch", "-n1", "git", "reset", "--hard"]).script
    'git reset --hard'
    >>> launch(["taskset", "-p", "123"]).argv
    []
    """
    if not argv:
        return None
    name = basename(argv[0])
    if name == "tmux":
        return _tmux(argv)
    if name == "screen" and "stuff" in argv:  # screen -X stuff 'CMD\n': typed into a shell
        at = argv.index("stuff")
        return Launch(script=" ".join(argv[at + 1 :])) if at + 1 < len(argv) else Launch()
    spec = LAUNCHERS.get(name)
    if spec is None:
        return None
    i, count = 1, len(argv)
    script: str | None = None
    exec_direct = False
    positional: list[str] = []
    while i < count:
        word = argv[i]
        if word == "--":
            i += 1
            break
        if name == "sg" and word == "-" and not positional:
            i += 1
            continue
        if not word.startswith("-") or word == "-":
            if len(positional) < spec.operands:
                positional.append(word)
                i += 1
                if name == "sg" and i < count and argv[i] == "-c":
                    i += 1  # sg GROUP -c CMD
                continue
            break
        i += 1
        for flag, value in _flags(word, spec.values | spec.scripts):
            if flag in spec.none:
                return Launch()
            if flag in spec.values or flag in spec.scripts:
                if value is None:
                    value = argv[i] if i < count else ""
                    i += 1
                if flag in spec.scripts:
                    script = value
            elif name == "watch" and flag in ("-x", "--exec"):
                exec_direct = True
    # flock FILE -c CMD, su USER -c CMD: the options may follow the operands (getopt permutes)
    rest = argv[i:]
    for k, word in enumerate(rest[:-1]):
        if word in spec.scripts:
            script = rest[k + 1]
            rest = rest[:k]
            break
    if script is not None:
        return Launch(script=script)
    if name in ("su", "runuser") and rest:
        rest = [] if "-u" not in argv and "--user" not in argv else rest
    if name in ("at", "batch"):
        at_file = _value(argv, ("-f",))
        return Launch(file=at_file) if at_file is not None else Launch(stdin=True)
    if not rest or not spec.command:
        return Launch(stdin=spec.stdin)
    if spec.joined and not exec_direct:
        return Launch(script=" ".join(rest))
    return Launch(argv=rest)


def crontab(argv: list[str]) -> Launch | None:
    """What ``crontab`` installs: ``crontab FILE`` or ``crontab -`` (stdin); None for ``-l``,
    ``-r``, ``-e`` and the other forms that install nothing from the command line.

    >>> crontab(["crontab", "-"]).stdin, crontab(["crontab", "-l"])
    (True, None)
    """
    operands: list[str] = []
    i = 1
    while i < len(argv):
        word = argv[i]
        i += 1
        if word in ("-u", "-s"):
            i += 1
        elif word in ("-l", "-r", "-e", "-i", "-V", "-n", "-c", "-T"):
            return None
        elif word == "-" or not word.startswith("-"):
            operands.append(word)
    if not operands or operands[0] == "-":
        return Launch(stdin=True, cron=True)
    return Launch(file=operands[0], cron=True)


_CRON_ENV = lazy_pattern(r"[A-Za-z_][A-Za-z0-9_]*\s*=")


def cron_commands(text: str) -> list[str]:
    """The command of each line of a crontab (crontab(5): five time fields or an ``@``
    nickname, then the command; ``NAME=value`` lines and comments skipped).

    >>> cron_commands("# m h\\nSHELL=/bin/sh\\n* * * * * rm -rf ~\\n@reboot make\\n")
    ['rm -rf ~', 'make']
    """
    found: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or _CRON_ENV().match(line):
            continue
        fields = line.split(None, 1 if line.startswith("@") else 5)
        keep = 1 if line.startswith("@") else 5
        if len(fields) > keep:
            found.append(fields[keep])
    return found


def _tmux(argv: list[str]) -> Launch:
    """``tmux [-L s] [-S p] [-f f] SUBCOMMAND [opts] [CMD…]``: the shell command a new session,
    window or pane runs, ``run-shell``'s, or the keys ``send-keys`` types (a command line
    typed into a shell); ``tmux -c CMD`` runs CMD. Subcommands after ``;`` are read too."""
    i, count = 1, len(argv)
    while i < count and argv[i].startswith("-"):
        if argv[i] == "-c" and i + 1 < count:
            return Launch(script=argv[i + 1])
        i += 2 if argv[i] in ("-L", "-S", "-f", "-T") else 1
    scripts: list[str] = []
    while i < count:
        sub = argv[i]
        i += 1
        end = next((k for k in range(i, count) if argv[k] in (";", "\\;")), count)
        words = argv[i:end]
        i = end + 1
        if sub not in _TMUX_RUNS and sub not in _TMUX_KEYS:
            continue
        k = 0
        while k < len(words) and words[k].startswith("-") and len(words[k]) > 1:
            letters = words[k][1:]
            k += 1
            if letters[-1] in _TMUX_VALUES and letters[-1] not in _TMUX_FLAGS:
                k += 1
        rest = words[k:]
        if sub in _TMUX_KEYS:
            rest = [w for w in rest if w not in _KEY_NAMES]
        if rest:
            scripts.append(" ".join(rest))
    return Launch(script="\n".join(scripts)) if scripts else Launch()


def _flags(word: str, valued: frozenset[str]) -> Iterator[tuple[str, str | None]]:
    """The options of one word: ``--name[=value]``, or a cluster of short ones (``-qc CMD``,
    ``-w5``): a letter in ``valued`` takes the rest of the word as its value, or the next word
    (value None).

    >>> list(_flags("-qc", frozenset({"-c"}))), list(_flags("-w5", frozenset({"-w"})))
    ([('-q', None), ('-c', None)], [('-w', '5')])
    """
    if word.startswith("--"):
        flag, eq, value = word.partition("=")
        yield flag, (value if eq else None)
        return
    letters = word[1:]
    for k, letter in enumerate(letters):
        flag = f"-{letter}"
        if flag in valued:
            yield flag, letters[k + 1 :] or None
            return
        yield flag, None


def _value(argv: list[str], flags: tuple[str, ...]) -> str | None:
    for k, word in enumerate(argv[1:], start=1):
        if word in flags and k + 1 < len(argv):
            return argv[k + 1]
        for flag in flags:
            if word.startswith(flag) and len(word) > len(flag) and not flag.startswith("--"):
                return word[len(flag) :]
    return None


# ---------------------------------------------------------------- awk and sed

_AWK_STRING = r'"((?:[^"\\\n]|\\.)*)"'
_AWK_SYSTEM = lazy_pattern(r"\bsystem\s*\(\s*(?:" + _AWK_STRING + r"\s*\)|)")
_AWK_PIPE_TO = lazy_pattern(r"\|\s*(?:" + _AWK_STRING + r"|[A-Za-z_(])")
_AWK_PIPE_FROM = lazy_pattern(r"(?:" + _AWK_STRING + r"|[A-Za-z_)\]])\s*\|\s*getline\b")
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
_AWK_VALUE = frozenset({"-F", "-v", "-f", "--field-separator", "--assign", "--file", "-i",
                        "--include", "-l", "--load", "-E", "--exec"})  # fmt: skip


def awk_program(argv: list[str]) -> str | None:
    """The program text of an ``awk`` command (its first operand, unless ``-f`` names a file:
    then None).

    >>> awk_program(["awk", "-F:", "{print $1}", "/etc/passwd"])
    '{print $1}'
    """
    if basename(argv[0]) not in _AWKS:
        return None
    i = 1
    while i < len(argv):
        word = argv[i]
        if word == "--":
            i += 1
            break
        if not word.startswith("-") or word == "-":
            break
        if word in ("-f", "--file", "-E", "--exec") or word.startswith("--file="):
            return None
        i += 2 if word in _AWK_VALUE else 1
    return argv[i] if i < len(argv) else None


def awk_commands(program: str) -> tuple[list[str], bool]:
    """``(commands, complete)``: the shell commands an awk program runs with a literal string
    (``system("…")``, ``print … | "CMD"``, ``"CMD" | getline``); ``complete`` is False when it
    runs one it builds at run time (``system(cmd)``, ``print | c``).

    >>> awk_commands('BEGIN{system("rm -rf ~")}')
    (['rm -rf ~'], True)
    >>> awk_commands('{print $0 | "sh"}')
    (['sh'], False)
    >>> awk_commands('{print $1}')
    ([], True)
    """
    found: list[str] = []
    complete = True
    for pattern in (_AWK_SYSTEM(), _AWK_PIPE_TO(), _AWK_PIPE_FROM()):
        for m in pattern.finditer(program):
            if m.group(1) is None:
                complete = False
            else:
                found.append(_awk_unescape(m.group(1)))
    # what is printed into a shell is a script nobody has read
    if any(basename(c.split()[0]) in _SHELL_NAMES for c in found if c.split()):
        complete = complete and not _AWK_PIPE_TO().search(program)
    return found, complete


_SHELL_NAMES = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish"})


def _awk_unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


_SED_EXEC = lazy_pattern(
    r"(?:^|[;\n{}]\s*|\d\s*|/\s*|\$\s*)e(?:\s|;|$)|s(.).*?\1.*?\1[gpIiMm0-9w]*e"
)


def sed_runs_commands(argv: list[str]) -> bool:
    """Whether a GNU ``sed`` script uses the ``e`` command or the ``s///e`` flag (each runs a
    shell command built from the text it reads).

    >>> sed_runs_commands(["sed", "s/.*/rm -rf ~/e", "x"]), sed_runs_commands(["sed", "s/a/b/g"])
    (True, False)
    """
    if basename(argv[0]) not in ("sed", "gsed"):
        return False
    scripts: list[str] = []
    i = 1
    while i < len(argv):
        word = argv[i]
        i += 1
        if word in ("-e", "--expression") and i < len(argv):
            scripts.append(argv[i])
            i += 1
        elif word.startswith("--expression="):
            scripts.append(word.partition("=")[2])
        elif word in ("-f", "--file"):
            return False  # a script file: read like any file the model does not open
        elif not word.startswith("-") and not scripts:
            scripts.append(word)
            break
    return any(_SED_EXEC().search(script) for script in scripts)


# ---------------------------------------------------------------- the environment

#: variables whose value is a command line a program runs (git(1) ENVIRONMENT, bash(1))
COMMAND_VARIABLES = frozenset(
    {"GIT_SSH_COMMAND", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "EDITOR", "VISUAL", "PAGER",
     "GIT_PAGER", "MANPAGER", "PROMPT_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_ASKPASS",
     "SSH_ASKPASS", "GIT_PROXY_COMMAND", "LESSOPEN", "LESSCLOSE", "SUDO_ASKPASS"}
)  # fmt: skip
#: variables that make a program load or run code the command line does not show
CODE_VARIABLES = frozenset(
    {"BASH_ENV", "ENV", "LD_PRELOAD", "LD_AUDIT", "PYTHONSTARTUP", "PERL5OPT", "PERL5DB",
     "RUBYOPT", "NODE_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
     "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
     "GIT_CONFIG", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "ZDOTDIR", "BASH_FUNC_", "SHELLOPTS",
     "BASHOPTS", "PS4", "DYLD_INSERT_LIBRARIES"}
)  # fmt: skip
_NAME_VALUE = lazy_pattern(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.S)


def code_environment(words: list[str]) -> Iterator[tuple[str, str, bool]]:
    """``(name, value, is_command)`` for each variable of ``words`` that makes a program run
    code: set as a ``NAME=value`` prefix, through ``env NAME=value``, or by ``export``,
    ``declare -x``, ``typeset``, ``readonly`` or ``local``. ``is_command``: the value is a
    command line (read as one); else the code it loads is not shown (the reading is
    incomplete). Empty values and ``GIT_CONFIG_KEY_n``/``VALUE_n`` pairs are read by
    :func:`git_config_environment`.

    >>> list(code_environment(["GIT_SSH_COMMAND=rm -rf ~", "git", "fetch"]))
    [('GIT_SSH_COMMAND', 'rm -rf ~', True)]
    >>> list(code_environment(["export", "BASH_ENV=./x.sh"]))
    [('BASH_ENV', './x.sh', False)]
    >>> list(code_environment(["PYTHONPATH=src", "pytest"]))
    []
    """
    i = 0
    assigning = True
    while i < len(words):
        word = words[i]
        i += 1
        m = _NAME_VALUE().fullmatch(word)
        if m is None:
            name = basename(word)
            if name in ("env", "export", "declare", "typeset", "readonly", "local", "sudo"):
                assigning = True
                continue
            if assigning and word.startswith("-"):
                if word in ("-u", "--unset", "-C", "--chdir", "-S", "--split-string"):
                    i += 1  # env's options that take a value
                continue
            if name in ("exec", "command", "nohup", "nice", "time", "setsid"):
                continue
            return
        if not assigning:
            return
        key, value = m.group(1), m.group(2)
        if not value and i < len(words) and words[i] == PROCESS_SUBSTITUTION:
            value = words[i]  # `BASH_ENV=<(…)`: the value is the substitution's file
            i += 1
        if key in COMMAND_VARIABLES:
            if value.strip():
                yield key, value, True
        elif key.startswith("GIT_CONFIG_KEY_"):
            if code_key(value):  # GIT_CONFIG_KEY_n=core.pager (git-config(1) ENVIRONMENT)
                yield key, value, False
        elif _loads_code(key, value):
            yield key, value, False


def _loads_code(key: str, value: str) -> bool:
    if not value.strip() or not (key in CODE_VARIABLES or key.startswith("BASH_FUNC_")):
        return False
    return key != "NODE_OPTIONS" or bool(_NODE_CODE().search(value))


# NODE_OPTIONS that load code (node(1)): --require/-r, --import, --loader, --experimental-loader
_NODE_CODE = lazy_pattern(r"(?:^|\s)(?:-r|--require|--import|--loader|--experimental-loader)\b")
