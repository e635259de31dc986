"""The simple commands of a command line, scripts fed to a shell followed, rendered one a line.

:func:`simple_commands` gives each simple command the lexer (:func:`iter_commands`) finds, and
those of the scripts a shell reads on stdin (``bash <<EOF``) or an ``ssh`` runs, :data:`NESTING`
deep. :func:`command_lines` renders them the way ``facts.shell_commands`` lists them: quotes
removed, wrappers stripped, git as git reads it, output redirections appended, pipelines also
whole.
"""

from __future__ import annotations

from forge_policy._budget import truncated
from forge_policy.commands.git_argv import normalise_git
from forge_policy.commands.shell import (
    SHELLS,
    Command,
    basename,
    iter_commands,
    ssh_remote_command,
    stdin_text,
    strip_wrappers,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from forge_policy.commands.execution import Run

#: Levels of scripts fed to a shell on stdin or run by ssh, followed inside each other.
NESTING = 8
#: A pipeline is listed with at most this many of its last stages.
_PIPELINE_STAGES = 32
_OUTPUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})


def simple_commands(
    text: str,
    cwd: str,
    depth: int = 0,
    *,
    bare: bool = False,
    read: Iterable[tuple[list[str], Command, str]] | None = None,
) -> Iterator[tuple[list[str], Command, str]]:
    """``(argv, command, cwd)`` for each simple command of ``text`` as
    :func:`~forge_policy.commands.shell.iter_commands` gives them (``distinct``), and those of the
    scripts a shell reads on stdin (``bash <<EOF``) or an ``ssh`` runs, :data:`NESTING` deep.
    ``read``: what ``iter_commands(text, cwd, distinct=True, bare=bare)`` gave, when the caller
    has it already.

    >>> [argv for argv, _cmd, _cwd in simple_commands("bash <<E\\nrm -r x\\nE", "/")]
    [['bash'], ['rm', '-r', 'x']]
    """
    if read is None:
        read = iter_commands(text, cwd, distinct=True, bare=bare)
    for argv, cmd, current in read:
        yield argv, cmd, current
        if not argv:
            continue
        script = _nested_script(argv, cmd)
        if script:
            if depth >= NESTING:
                truncated(f"scripts fed to a shell nested deeper than {NESTING} were not read")
                continue
            yield from simple_commands(script, current, depth + 1, bare=bare)


def command_lines(text: str, cwd: str, depth: int = 0) -> Iterator[str]:
    """One line per program ``text`` runs, resolved as the command model reads it (variables,
    braces, loops, functions: :func:`~forge_policy.commands.execution.runs`): a program written
    in the command line as written there, quotes removed and wrappers stripped, git as git
    reads it, output redirections appended (``> TARGET``), and each pipeline also whole, its
    last stages joined by `` | ``; a program reached through another one (``xargs``, ``find
    -exec``, interpreter code) in canonical form (see :mod:`forge_policy.facts.commands`,
    ``facts.shell_commands``). ``depth`` is kept for callers; the reading starts at the top.

    >>> list(command_lines("sudo curl -s x | sh 2>/dev/null", "/"))
    ['curl -s x', 'sh > /dev/null', 'curl -s x | sh', 'sh']
    >>> list(command_lines("h=--hard; git reset $h", "/"))
    ['git reset --hard']
    """
    from forge_policy.commands.execution import runs

    return lines_of(runs(text, cwd))


def lines_of(read: Iterable[Run]) -> Iterator[str]:
    """:func:`command_lines` of a reading already made (the runs of one command line, in the
    order :func:`~forge_policy.commands.execution.runs` gives them)."""
    # the last stages of each command's pipeline, kept per command so that each pipeline is
    # rendered from its predecessor's in one step (the commands stay alive meanwhile)
    windows: dict[int, list[str]] = {}
    for run in read:
        cmd = run.command
        if run.via or cmd is None:
            yield run.line
            continue
        rendered = " ".join(normalise_git(run.words, run.cwd))
        yield _render(rendered, cmd, run.targets) if cmd.redirects else rendered
        source = cmd.piped_from
        if source is None:
            windows[id(cmd)] = [rendered]
            continue
        before = windows.get(id(source))
        if before is None:
            before = _window(source)
        window = [*before[-(_PIPELINE_STAGES - 1) :], rendered]
        windows[id(cmd)] = window
        yield " | ".join(window)


def _window(cmd: Command) -> list[str]:
    """The last stages of the pipeline that ends with ``cmd`` (a command the walk skipped)."""
    parts: list[str] = []
    node: Command | None = cmd
    while node is not None and len(parts) < _PIPELINE_STAGES:
        parts.append(" ".join(strip_wrappers(node.words)))
        node = node.piped_from
    return parts[::-1]


def _render(rendered: str, cmd: Command, targets: list[str] | None) -> str:
    words = [rendered]
    for k, redirect in enumerate(cmd.redirects):
        target = targets[k] if targets is not None else redirect.target
        if redirect.op in _OUTPUT_OPS or (
            redirect.op == ">&" and target and not target.isdigit() and target != "-"
        ):
            words.append(f"> {target}")
    return " ".join(words)


def _nested_script(argv: list[str], cmd: Command) -> str | None:
    """The script a shell reads on stdin (``bash <<EOF``), or an ssh remote command."""
    name = basename(argv[0])
    if name in SHELLS:
        operands = [a for a in argv[1:] if not a.startswith(("-", "+"))]
        if any(a.startswith("-") and not a.startswith("--") and "c" in a for a in argv[1:]):
            return None  # sh -c: iter_commands already followed it
        return stdin_text(cmd, "") if not operands else None
    return ssh_remote_command(argv)
