"""Git argv normalisation: a ``git`` command line rendered the way git itself reads it.

Rules about git (no-destructive-git, the force-push rule of dangerous-commands) match the
canonical line this module renders into ``facts.shell_commands``, so that they anchor on the
subcommand and its options instead of on words that happen to follow ``git`` somewhere:

- the program: ``/usr/bin/git``, ``GIT`` (case-insensitive file systems run it) → ``git``;
- git's own options before the subcommand are stripped and kept apart (:attr:`GitCommand.stripped`):
  ``-C dir``, ``-c k=v``, ``--git-dir=…``, ``--work-tree …``, ``--no-pager``, ``--``…; an alias
  defined by ``-c alias.NAME=…`` is expanded (a ``!shell`` alias is not);
- for the subcommands that can discard work (:data:`SPECS`), the arguments are parsed with git's
  option table: short clusters split (``-fdx`` → ``--force -d -x``), short options spelled long
  (``-D`` → ``--delete --force``), values attached (``--exclude=x``, ``-bNAME``), unique
  abbreviations expanded (``--har`` → ``--hard``), ``--no-X`` cancelling an earlier ``--X``, and
  the options put before the operands, as git's option parser permutes them;
- what git leaves implicit is made explicit where a rule needs it: ``checkout``'s pathspec gets
  its ``--`` (``git checkout main a.txt`` → ``git checkout main -- a.txt``), ``restore`` without
  ``--staged`` or ``--worktree`` gets git's default ``--worktree``, ``clean`` under
  ``-c clean.requireForce=false`` gets the ``--force`` git then assumes.

Spellings git would reject but that name a destructive command (``git RESET --HARD``, ``--hard``
typed with Unicode hyphens or dashes) are read as that command: refusing a command that cannot run
costs nothing, and such a spelling is an attempt to slip past a rule.

>>> " ".join(normalise_git(["/usr/bin/git", "-C", "repo", "--no-pager", "clean", "-fdx"]))
'git clean --force -d -x'
>>> " ".join(normalise_git(["git", "checkout", "-q", "main", "a.txt"]))
'git checkout --quiet main -- a.txt'
>>> parse(["git", "-C", "repo", "reset", "--har"]).stripped
('-C', 'repo')
"""

from __future__ import annotations

import os

from forge_policy._budget import read_outside

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

# git's options before the subcommand: those taking a value, and plain flags (git 2.39 to 2.47)
_GLOBAL_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env",
                           "--super-prefix", "--attr-source", "--list-cmds"})  # fmt: skip
# these print something and exit: no subcommand runs
_GLOBAL_INFO = frozenset({"-v", "--version", "-h", "--help", "--html-path", "--man-path",
                          "--info-path", "--exec-path"})  # fmt: skip
# Lookalike dashes (hyphen, non-breaking hyphen, figure/en/em dash, minus, small/fullwidth hyphen)
_DASHES = str.maketrans(dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2212\ufe63\uff0d", "-"))
_FALSE = frozenset({"false", "no", "off", "0"})


# Plain slotted classes: this module loads in every hook process that reads a shell command,
# and attrs' generated methods would cost class-creation time there (see shell.py).
class Spec:
    """How one git subcommand reads its arguments (from git's own option tables).

    ``shorts`` maps a letter to the long options it stands for, ``value_shorts`` the letters
    that take a value; ``longs`` maps each long option to ``flag``, ``value`` (a separate or
    attached value) or ``optional`` (a value only when attached with ``=``); ``words`` names
    the values an ``optional`` option also takes as the next word (``--track direct``).

    >>> SPECS["push"].shorts["f"]
    ('--force',)
    """

    __slots__ = ("longs", "names", "shorts", "sorted_names", "value_shorts", "words")

    def __init__(
        self,
        shorts: Mapping[str, tuple[str, ...]],
        longs: Mapping[str, str],
        value_shorts: frozenset[str] = frozenset(),
        words: Mapping[str, frozenset[str]] | None = None,
    ) -> None:
        self.shorts = shorts
        self.longs = longs
        self.value_shorts = value_shorts
        self.words: Mapping[str, frozenset[str]] = words or {}
        # every spelling git accepts in full: the long options and the --no- forms of flags
        negations = [f"--no-{n[2:]}" for n, kind in longs.items() if kind == "flag"]
        self.names = frozenset([*longs, *negations])
        self.sorted_names = sorted(self.names)  # the names a prefix abbreviates are adjacent


def _spec(shorts: str, longs: str, value_shorts: str = "", **words: str) -> Spec:
    """``shorts`` as ``"f=force u=set-upstream D=delete,force"``, ``longs`` as
    ``"force hard exclude= track?"`` (``=`` takes a value, ``?`` an optional attached one)."""
    short_map = {
        letter: tuple(f"--{name}" if name else f"-{letter}" for name in names.split(","))
        for letter, _, names in (item.partition("=") for item in shorts.split())
    }
    long_map: dict[str, str] = {}
    for item in longs.split():
        kind = {"=": "value", "?": "optional"}.get(item[-1], "flag")
        long_map["--" + item.rstrip("=?")] = kind
    word_map = {"--" + k.replace("_", "-"): frozenset(v.split()) for k, v in words.items()}
    return Spec(short_map, long_map, frozenset(value_shorts), word_map)


_DIFF = "unified= inter-hunk-context="
_RECURSE = "checkout on-demand yes no only check"  # what --recurse-submodules takes elsewhere
# fmt: off
SPECS: dict[str, Spec] = {
    "push": _spec(
        "f=force u=set-upstream n=dry-run d=delete q=quiet v=verbose 4=ipv4 6=ipv6 o=push-option",
        "all branches mirror tags follow-tags dry-run porcelain delete prune force set-upstream "
        "thin quiet verbose progress atomic verify force-if-includes ipv4 ipv6 repo= "
        "receive-pack= exec= push-option= recurse-submodules= signed? force-with-lease?",
        "o",
    ),
    "reset": _spec(
        "q=quiet p=patch N=intent-to-add U=unified",
        f"soft mixed hard merge keep quiet patch intent-to-add refresh pathspec-from-file= "
        f"pathspec-file-nul recurse-submodules? {_DIFF}",
        "U",
    ),
    "clean": _spec(
        "d= f=force i=interactive n=dry-run q=quiet e=exclude x= X=",
        "force interactive dry-run quiet exclude=",
        "e",
    ),
    "checkout": _spec(
        "q=quiet f=force b= B= t=track l= m=merge p=patch U=unified",
        f"quiet progress force ours theirs track? guess detach orphan= "
        f"ignore-skip-worktree-bits merge conflict= patch ignore-other-worktrees overwrite-ignore "
        f"recurse-submodules? overlay pathspec-from-file= pathspec-file-nul {_DIFF}",
        "bBU",
        track="direct inherit", recurse_submodules=_RECURSE,
    ),
    "switch": _spec(
        "c= C= d=detach f=discard-changes m=merge q=quiet t=track",
        "create= force-create= detach guess force discard-changes merge conflict= quiet "
        "progress track? orphan= ignore-other-worktrees recurse-submodules?",
        "cC",
        track="direct inherit", recurse_submodules=_RECURSE,
    ),
    "restore": _spec(
        "s=source p=patch W=worktree S=staged q=quiet m=merge U=unified",
        f"source= patch worktree staged quiet progress ours theirs merge conflict= "
        f"ignore-unmerged ignore-skip-worktree-bits recurse-submodules overlay "
        f"pathspec-from-file= pathspec-file-nul {_DIFF}",
        "sU",
    ),
    "branch": _spec(
        "d=delete D=delete,force f=force m=move M= c=copy C= l=list a=all "
        "r=remotes v=verbose q=quiet i=ignore-case t=track u=set-upstream-to",
        "delete force move copy list all remotes verbose quiet ignore-case track? no-track "
        "set-upstream-to= unset-upstream edit-description create-reflog abbrev? color? column? "
        "sort= merged? contains? points-at= format= recurse-submodules show-current omit-empty",
        "u",
    ),
    "stash drop": _spec("q=quiet", "quiet"),
    "stash clear": _spec("", ""),
    "worktree remove": _spec("f=force", "force"),
    "reflog expire": _spec(
        "n=dry-run",
        "expire= expire-unreachable= rewrite updateref stale-fix dry-run verbose all "
        "single-worktree",
    ),
    "reflog delete": _spec(
        "n=dry-run", "rewrite updateref dry-run verbose"
    ),
    "gc": _spec("q=quiet", "aggressive auto quiet prune? no-prune force keep-largest-pack "
                "cruft max-cruft-size= detach"),
    # plumbing that discards work (git-read-tree(1), git-checkout-index(1), git-update-ref(1),
    # git-send-pack(1), git-prune(1), git-symbolic-ref(1), git-apply(1))
    "read-tree": _spec("m= u= i= n=dry-run v= q=quiet",
                       "reset prefix= index-output= trivial aggressive dry-run empty "
                       "exclude-per-directory= recurse-submodules? quiet no-sparse-checkout"),
    "checkout-index": _spec("a=all f=force n=no-create q=quiet u=index z=",
                            "all force no-create quiet index stdin temp prefix= stage= "
                            "ignore-skip-worktree-bits"),
    "update-ref": _spec("d=delete m= z=", "no-deref create-reflog stdin delete", "m"),
    "send-pack": _spec("", "all mirror dry-run force verbose thin atomic receive-pack= exec= "
                       "signed? stateless-rpc stdin force-with-lease? remote= quiet "
                       "helper-status"),
    "prune": _spec("n=dry-run v=verbose", "dry-run verbose progress expire="),
    "symbolic-ref": _spec("d=delete q=quiet m= ", "delete quiet short no-recurse recurse", "m"),
    "apply": _spec("R=reverse v=verbose p= C= 3=3way",
                   "reverse index cached check stat numstat summary apply 3way intent-to-add "
                   "reject unidiff-zero whitespace= exclude= include= directory= verbose "
                   "quiet recount allow-empty build-fake-ancestor= ignore-space-change "
                   "ignore-whitespace inaccurate-eof", "pC"),
}
# fmt: on
#: The subcommands that can discard work (``reset``, ``stash drop``…: the keys of :data:`SPECS`).
DISCARDING_SUBCOMMANDS = frozenset(SPECS)
# subcommands whose first operand is itself a subcommand
_NESTED = frozenset({"stash", "worktree", "reflog"})


class GitCommand:
    """A git command line as git reads it: the canonical argv, and what was stripped.

    ``argv`` starts with ``"git"`` and the subcommand (``"stash", "drop"`` for nested ones);
    ``stripped`` holds git's own options taken from before the subcommand (``-C repo``);
    ``alias`` names the ``-c alias.NAME=…`` that was expanded, if any.

    >>> command = parse(["git", "-c", "alias.nuke=reset --hard", "nuke"])
    >>> command.argv, command.stripped, command.alias
    (('git', 'reset', '--hard'), ('-c', 'alias.nuke=reset --hard'), 'nuke')
    """

    __slots__ = ("alias", "argv", "stripped")

    def __init__(self, argv: tuple[str, ...], stripped: tuple[str, ...] = (), alias: str = ""):
        self.argv = argv
        self.stripped = stripped
        self.alias = alias

    def __repr__(self) -> str:
        return f"GitCommand({self.argv!r}, stripped={self.stripped!r}, alias={self.alias!r})"


def normalise_git(argv: list[str], cwd: str = "") -> list[str]:
    """A git command line as git reads it, in canonical form (see the module doc); any other
    argv itself.

    ``cwd``, when given, lets ``git checkout NAME`` be read as a path restore when ``NAME``
    exists there (git prefers the file when no such branch exists, and refuses to guess when
    both do).
    """
    if not argv or _program(argv[0]) != "git":
        return argv
    return list(parse(argv, cwd).argv)


def is_git(word: str) -> bool:
    """Whether a command word runs git (``git``, ``/usr/bin/git``, ``GIT``, ``git.exe``).

    >>> is_git("/usr/local/bin/git"), is_git("git-lfs"), is_git("Git.exe")
    (True, False, True)
    """
    return _program(word) == "git"


def _program(word: str) -> str:
    name = word[word.rfind("/") + 1 :].lower()
    return name[:-4] if name.endswith(".exe") else name


def parse(argv: list[str], cwd: str = "") -> GitCommand:
    """Read ``argv`` (whose first word runs git) the way git does (see the module doc)."""
    stripped: list[str] = []
    config: dict[str, str] = {}
    i, count = 1, len(argv)
    while i < count:
        word = argv[i].translate(_DASHES)
        if not word.startswith("-"):
            break
        if word == "--":  # ends git's own options
            stripped.append(word)
            i += 1
            break
        name, eq, value = word.partition("=")
        if name in _GLOBAL_INFO and not eq:
            return GitCommand(("git", name), tuple(argv[1 : i + 1]))
        if len(name) > 2 and name[:2] in ("-C", "-c"):  # -Crepo, -cfoo=bar
            name, eq, value = name[:2], "=", word[2:]
        if name in _GLOBAL_VALUE and not eq and i + 1 < count:
            value = argv[i + 1]
            stripped += [word, value]
            i += 2
        else:  # a flag, an attached value, or an option git does not know (read on, fail closed)
            stripped.append(word)
            i += 1
        if name == "-c":
            key, has_value, setting = value.partition("=")
            config[key.lower()] = setting if has_value else "true"
        if name == "-C" and cwd:
            cwd = os.path.join(cwd, value)
    if i >= count:
        return GitCommand(("git",), tuple(stripped))
    head, args, alias = _subcommand(argv[i].lower(), argv[i + 1 :], config)
    spec = SPECS.get(" ".join(head[1:]))
    if spec is None:
        return GitCommand((*head, *args), tuple(stripped), alias)
    options, operands, paths = _read(spec, args)
    # git's option parser prints the usage and runs nothing for --help before "--", and for
    # -h only as the one argument
    if "--help" in args[: args.index("--") if "--" in args else len(args)] or args == ["-h"]:
        return GitCommand((*head, "--help"), tuple(stripped), alias)
    _explicit_defaults(head[1], options, operands, paths, config, cwd)
    rendered = [*head, *options, *operands]
    if paths is not None:
        rendered += ["--", *paths]
    return GitCommand(tuple(rendered), tuple(stripped), alias)


def _subcommand(
    sub: str, args: list[str], config: dict[str, str]
) -> tuple[list[str], list[str], str]:
    """``(["git", SUB[, NESTED]], its arguments, the alias expanded or "")``: an alias defined
    by ``-c alias.NAME=…`` expanded (not a ``!shell`` one), and the nested subcommand of
    ``stash``, ``worktree`` and ``reflog`` taken out of the arguments when it is in SPECS.

    >>> _subcommand("st", ["-q", "drop"], {"alias.st": "stash"})
    (['git', 'stash', 'drop'], ['-q'], 'st')
    """
    alias = ""
    expansion = config.get(f"alias.{sub}")
    if expansion and not expansion.startswith("!") and expansion.split():
        alias, words = sub, expansion.split()
        sub, args = words[0].lower(), words[1:] + args
    head = ["git", sub]
    if sub in _NESTED:
        at = next((k for k, a in enumerate(args) if not a.startswith("-")), None)
        if at is not None and f"{sub} {args[at].lower()}" in SPECS:
            head.append(args[at].lower())
            args = args[:at] + args[at + 1 :]
    return head, args, alias


def _read(spec: Spec, args: list[str]) -> tuple[list[str], list[str], list[str] | None]:
    """``(options, operands, paths after --)`` of a subcommand's arguments, options canonical."""
    options: list[str] = []
    operands: list[str] = []
    spelled: dict[str, str] = {}
    i, count = 0, len(args)
    while i < count:
        word = args[i].translate(_DASHES)
        i += 1
        if word == "--":
            return _negated(spec, options), operands, args[i:]
        if word == "-" or not word.startswith("-"):
            operands.append(args[i - 1])
        elif word.startswith("--"):
            name, eq, value = word.partition("=")
            name = name.lower()
            if name not in spec.names:  # an abbreviation: each spelling looked up once
                name = spelled.get(name) or spelled.setdefault(name, _long_name(spec, name))
            kind = spec.longs.get(name, "flag")
            # a value in the next word: always for "value", for "optional" only a known one
            if (
                not eq
                and i < count
                and (
                    kind == "value" or (kind == "optional" and args[i] in spec.words.get(name, ()))
                )
            ):
                value, eq = args[i], "="
                i += 1
            options.append(f"{name}={value}" if eq else name)
        else:
            i = _cluster(spec, word[1:], args, i, options)
    return _negated(spec, options), operands, None


def _negated(spec: Spec, options: list[str]) -> list[str]:
    """``options`` without each ``--X`` that a later ``--no-X`` cancels (in one pass)."""
    last: dict[str, int] = {}
    for k, option in enumerate(options):
        if option.startswith("--no-") and "--" + option[5:] in spec.longs:
            last["--" + option[5:]] = k
    if not last:
        return options
    return [o for k, o in enumerate(options) if last.get(o.partition("=")[0], -1) < k]


def _cluster(spec: Spec, letters: str, args: list[str], i: int, options: list[str]) -> int:
    """Split ``-abc`` into options; a letter that takes a value takes the rest (or the next
    word). Returns the index of the next word."""
    for k, letter in enumerate(letters):
        if letter in spec.value_shorts:
            value = letters[k + 1 :]
            if not value and i < len(args):
                value, i = args[i], i + 1
            names = spec.shorts.get(letter, (f"-{letter}",))
            long = names[0].startswith("--")
            options.append(f"{names[0]}={value}" if long else f"-{letter}{value}")
            return i
        options.extend(spec.shorts.get(letter, (f"-{letter}",)))
    return i


def _long_name(spec: Spec, name: str) -> str:
    """``name`` or the one long option it abbreviates (git accepts any unique prefix,
    ``--no-`` forms of flags included)."""
    if name in spec.names or len(name) < 3:
        return name
    from bisect import bisect_left  # an abbreviation is rare: a whole name never loads _bisect

    names = spec.sorted_names
    at = bisect_left(names, name)
    unique = at < len(names) and names[at].startswith(name)
    if unique and at + 1 < len(names) and names[at + 1].startswith(name):
        unique = False  # ambiguous: git refuses it
    return names[at] if unique else name


def _looks_like_path(word: str, cwd: str) -> bool:
    """Whether the one operand of ``git checkout NAME`` names files rather than a branch:
    ``.``, ``./x``, a glob, pathspec magic, or an existing file (a directory may share its name
    with a branch, and git then switches)."""
    if word in (".", "..") or word.startswith(("./", "../", "/", ":(")):
        return True
    if any(c in word for c in "*?["):
        return True
    if not cwd:
        return False
    read_outside()  # the file system decides
    return os.path.isfile(os.path.join(cwd, word))


def _explicit_defaults(
    sub: str,
    options: list[str],
    operands: list[str],
    paths: list[str] | None,
    config: dict[str, str],
    cwd: str,
) -> None:
    """Make explicit, in place, what git leaves implicit and a rule needs to see."""
    names = {o.partition("=")[0] for o in options}
    if sub == "restore":
        pathspec = operands or paths or "--pathspec-from-file" in names
        if pathspec and not names & {"--staged", "--worktree"}:
            options.append("--worktree")  # git restore's default target
    elif sub == "gc":
        # gc.pruneExpire and gc.reflogExpire(Unreachable) given with -c (git-gc(1)): what gc
        # prunes and expires, as the options a rule reads
        for key, option in (("gc.pruneexpire", "--prune"), ("gc.reflogexpire", "--prune"),
                            ("gc.reflogexpireunreachable", "--prune")):  # fmt: skip
            if key in config and option not in names:
                options.append(f"{option}={config[key]}")
                names.add(option)
    elif sub == "clean":
        if config.get("clean.requireforce", "").lower() in _FALSE and not names & {
            "--force",
            "--dry-run",
            "--interactive",
        }:
            options.append("--force")  # what git assumes when force is not required
    elif sub == "checkout" and paths is None and operands:
        if names & {"-b", "-B", "--orphan", "--detach"} or any(
            o[:2] in ("-b", "-B") for o in options
        ):
            return  # a branch is created or detached: git takes no pathspec here
        if len(operands) > 1:
            paths = operands[1:]
            del operands[1:]
        elif _looks_like_path(operands[0], cwd):
            paths = operands[:]
            del operands[:]
        if paths is not None:
            operands.append("--")
            operands.extend(paths)


# ---------------------------------------------------------------- git's own ways to run code

# git-config(1): the keys whose value is a command git runs (through the shell), and those that
# make git load code or configuration the command line does not show (a hooks folder, an
# included file, a template folder, the ext:: transport)
_COMMAND_KEYS = frozenset({
    "core.pager", "core.sshcommand", "core.editor", "core.askpass", "core.gitproxy",
    "core.alternaterefscommand", "sequence.editor", "diff.external", "gpg.program",
    "uploadpack.packobjectshook", "credential.helper", "sendemail.smtpserver",
})  # fmt: skip
_COMMAND_SUFFIXES = (".textconv", ".command", ".clean", ".smudge", ".process", ".driver",
                     ".cmd", ".uploadpack", ".receivepack", ".program", ".proxy")  # fmt: skip
_COMMAND_PREFIXES = ("pager.", "diff.", "filter.", "merge.", "mergetool.", "difftool.",
                     "remote.", "gpg.", "url.")  # fmt: skip
_LOADING_KEYS = frozenset({"core.hookspath", "include.path", "init.templatedir",
                           "protocol.ext.allow", "protocol.allow", "core.fsmonitor"})  # fmt: skip


def code_key(key: str) -> str:
    """How git uses a config key's value: ``"command"`` (a command line it runs),
    ``"loads"`` (it loads code the command line does not show), ``"alias"`` or ``""``.

    >>> code_key("core.sshCommand"), code_key("core.hooksPath"), code_key("user.name")
    ('command', 'loads', '')
    >>> code_key("filter.lfs.smudge"), code_key("alias.st")
    ('command', 'alias')
    """
    key = key.lower()
    if key.startswith("alias."):
        return "alias"
    if key in _COMMAND_KEYS:
        return "command"
    if key in _LOADING_KEYS or key.startswith(("includeif.", "include.")):
        return "loads"
    if key.startswith(_COMMAND_PREFIXES) and key.endswith(_COMMAND_SUFFIXES):
        return "command"
    if key.startswith("pager."):
        return "command"
    return ""


def git_code(argv: list[str]) -> list[tuple[str, str | None]]:
    """``(by, command line)`` for each command a git call runs through its own configuration
    given on the command line: a ``-c KEY=VALUE`` whose key runs a command (``core.pager``,
    ``core.sshCommand``, ``diff.external``, ``filter.*.smudge``…), the ``!shell`` alias it
    calls, and ``None`` for code it loads that the call does not show (``core.hooksPath``,
    ``core.fsmonitor``, ``include.path``, ``--config-env`` of such a key).

    >>> git_code(["git", "-c", "alias.x=!rm -rf ~", "x"])
    [('git alias x', 'rm -rf ~')]
    >>> git_code(["git", "-c", "core.pager=rm -rf ~", "log"])
    [('git -c core.pager', 'rm -rf ~')]
    >>> git_code(["git", "-c", "core.hooksPath=h", "commit"])
    [('git -c core.hookspath', None)]
    >>> git_code(["git", "-c", "user.name=x", "commit"])
    []
    """
    found: list[tuple[str, str | None]] = []
    aliases: dict[str, str] = {}
    i, count = 1, len(argv)
    while i < count:
        word = argv[i].translate(_DASHES)
        if not word.startswith("-") or word == "--":
            break
        name, eq, value = word.partition("=")
        if len(name) > 2 and name[:2] == "-c":
            name, eq, value = "-c", "=", word[2:]
        if name in _GLOBAL_VALUE and not eq and i + 1 < count:
            value = argv[i + 1]
            i += 2
        else:
            i += 1
        if name not in ("-c", "--config-env"):
            continue
        key, _, setting = value.partition("=")
        kind = code_key(key)
        if name == "--config-env" and kind:
            found.append((f"git --config-env {key.lower()}", None))
        elif kind == "alias":
            aliases[key.lower()[len("alias.") :]] = setting
        elif kind == "command" and setting.strip() and setting.lower() not in _BOOLEANS:
            found.append((f"git -c {key.lower()}", setting.removeprefix("!")))
        elif kind == "loads" and setting.lower() not in _BOOLEANS:
            found.append((f"git -c {key.lower()}", None))
    if i < count and argv[i].lower() in aliases:
        expansion = aliases[argv[i].lower()]
        if expansion.startswith("!"):
            rest = " ".join(_quote(a) for a in argv[i + 1 :])
            found.append((f"git alias {argv[i]}", f"{expansion[1:]} {rest}".strip()))
    return found


_BOOLEANS = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0", ""})


def _quote(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'" if not word.isalnum() else word


# ---------------------------------------------------------------- aliases

# git 2.39's commands (git --list-cmds=main): an alias of one of these names is ignored
_COMMANDS = frozenset(
    """add am annotate apply archive bisect blame branch bugreport bundle
cat-file check-attr check-ignore check-mailmap check-ref-format checkout checkout-index cherry
cherry-pick citool clean clone column commit commit-graph commit-tree config count-objects
credential credential-cache credential-store daemon describe diagnose diff diff-files diff-index
diff-tree difftool fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg
for-each-ref for-each-repo format-patch fsck fsck-objects gc get-tar-commit-id grep gui
hash-object help hook http-backend http-fetch http-push imap-send index-pack init init-db
instaweb interpret-trailers log ls-files ls-remote ls-tree mailinfo mailsplit maintenance merge
merge-base merge-file merge-index merge-octopus merge-one-file merge-ours merge-recursive
merge-resolve merge-subtree merge-tree mergetool mktag mktree multi-pack-index mv name-rev notes
pack-objects pack-redundant pack-refs patch-id prune prune-packed pull push quiltimport
range-diff read-tree rebase receive-pack reflog remote repack replace request-pull rerere reset
restore rev-list rev-parse revert rm send-email send-pack shell shortlog show show-branch
show-index show-ref sparse-checkout stage stash status stripspace submodule subtree switch
symbolic-ref tag unpack-file unpack-objects update-index update-ref update-server-info
upload-archive upload-pack var verify-commit verify-pack verify-tag version whatchanged
worktree write-tree lfs""".split()  # noqa: SIM905 - a list as git prints it
)
_CONFIG_SCOPES = frozenset({"--global", "--system", "--local", "--worktree", "--add",
                            "--replace-all", "--no-includes", "--includes"})  # fmt: skip
_MAX_CONFIG_BYTES = 1 << 18


def alias_definition(argv: list[str]) -> tuple[str, str] | None:
    """``(name, expansion)`` when ``argv`` is ``git config [scope] alias.NAME VALUE`` (or
    ``git config set …``), else None.

    >>> alias_definition(["git", "config", "--global", "alias.rh", "reset --hard"])
    ('rh', 'reset --hard')
    """
    head = parse_head(argv)
    if head is None or head[0] != "config":
        return None
    words = [w for w in head[1] if w not in _CONFIG_SCOPES and w != "set"]
    if len(words) >= 2 and words[0].lower().startswith("alias.") and not words[0].startswith("-"):
        return words[0][len("alias.") :].lower(), words[1]
    return None


def parse_head(argv: list[str]) -> tuple[str, list[str]] | None:
    """``(subcommand, its arguments)`` of a git argv, git's own options skipped."""
    i, count = 1, len(argv)
    while i < count:
        word = argv[i]
        if word == "--":
            i += 1
            break
        if not word.startswith("-"):
            break
        i += 2 if word in _GLOBAL_VALUE else 1
    return (argv[i].lower(), argv[i + 1 :]) if i < count else None


def with_aliases(argv: list[str], defined: Mapping[str, str], cwd: str) -> list[str]:
    """``argv`` with the alias it calls made explicit as ``-c alias.NAME=VALUE`` (which
    :func:`parse` and :func:`git_code` expand): one defined earlier in the call
    (``defined``), else one in the repository's or the user's git config files. A subcommand
    git knows is never an alias (git ignores such aliases).

    >>> with_aliases(["git", "rh"], {"rh": "reset --hard"}, "")
    ['git', '-c', 'alias.rh=reset --hard', 'rh']
    >>> with_aliases(["git", "status"], {"status": "reset --hard"}, "")
    ['git', 'status']
    """
    head = parse_head(argv)
    if head is None or head[0] in _COMMANDS:
        return argv
    name = head[0]
    if any(w.lower().startswith(f"alias.{name}=") for w in argv):
        return argv
    value = defined.get(name)
    if value is None and cwd:
        value = _config_aliases(cwd).get(name)
    if value is None:
        return argv
    return [argv[0], "-c", f"alias.{name}={value}", *argv[1:]]


def _config_aliases(cwd: str) -> dict[str, str]:
    """The ``[alias]`` entries of the repository's ``.git/config`` (found from ``cwd`` up)
    and of the user's ``~/.gitconfig`` and ``~/.config/git/config`` (a small reader: no
    includes, last value wins)."""
    from forge_policy._budget import read_bounded

    read_outside()  # the configuration files (and $HOME) decide
    paths = [os.path.expanduser("~/.gitconfig"), os.path.expanduser("~/.config/git/config")]
    here = os.path.abspath(cwd)
    for _ in range(64):
        candidate = os.path.join(here, ".git", "config")
        if os.path.isfile(candidate):
            paths.append(candidate)
            break
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    found: dict[str, str] = {}
    for path in paths:
        if not os.path.isfile(path):
            continue
        data = read_bounded(path, _MAX_CONFIG_BYTES)
        if data is None:
            continue
        section = ""
        for raw in data.decode("utf-8", "replace").splitlines():
            line = raw.strip()
            if line.startswith("["):
                section = line.strip("[]").strip().lower()
            elif section == "alias" and "=" in line and not line.startswith(("#", ";")):
                key, _, value = line.partition("=")
                found[key.strip().lower()] = value.strip().strip('"')
    return found
