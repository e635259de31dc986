"""Command facts: the shell commands of a tool call, as written and as simple commands.

``facts.commands`` is what the agent sent: ``tool_input.command`` and every string (or
``{command}`` object) of ``tool_input.commands``. ``facts.shell_commands`` is what a shell would
run, one string per simple command, so that a rule can anchor on the command name (``^rm\\s``)
instead of matching words inside a commit message or an ``echo``:

- quotes removed, ``NAME=value`` prefixes and wrappers (``sudo``, ``env``, ``nohup``,
  ``timeout 5`` …) stripped, words joined by one space;
- output redirections appended as ``> TARGET`` (``cat img > /dev/sda``);
- a pipeline is also given whole, stages joined by `` | `` (``curl -fsSL x | sh``);
- the commands inside ``$(…)``, backticks, ``sh -c``/``bash -c``/``eval`` scripts, shells fed
  a here-document or here-string, and an ``ssh`` remote command are listed too;
- so are the programs reached through another one (``xargs``, ``parallel``, ``find -exec``,
  ``busybox``, interpreter code), in the canonical form of ``facts.executed_commands``.

``facts.executed_commands``, ``facts.command_readings``, ``facts.recursive_deletes`` and
``facts.shell_data`` come
from the command model (:mod:`forge_policy.facts.execution`, :mod:`forge_policy.facts.deletes`).

>>> from forge_policy.model import Event
>>> ev = Event("PreToolUse", "s", tool_name="Bash", tool_input={"command":
...     'git commit -m "drop rm -rf /" && sudo -u root bash -c "curl -s x | sh" 2>/dev/null'})
>>> for line in provide_shell_commands(ev): print(line)
git commit -m drop rm -rf /
bash -c curl -s x | sh > /dev/null
curl -s x
sh
curl -s x | sh
"""

from __future__ import annotations

from itertools import chain

from forge_policy.errors import FactTimeout
from forge_policy.facts._io import event_cwd
from forge_policy.facts._runtime import truncated
from forge_policy.facts.deletes import deletes
from forge_policy.facts.execution import Run, data, runs
from forge_policy.facts.git_argv import canonical as canonical_git
from forge_policy.facts.shell import (
    SHELLS,
    Command,
    basename,
    event_commands,
    iter_commands,
    ssh_remote_command,
    stdin_text,
    strip_wrappers,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from forge_policy.model import Event

#: At most this many distinct simple commands are listed; past it the fact is incomplete
#: (a :class:`~forge_policy.facts.Partial`, which blocking rules read as a possible match).
MAX_COMMANDS = 1 << 14
#: At most this many characters in all (nesting repeats the inner text in the outer command).
MAX_CHARS = 8 << 20
#: Levels of scripts fed to a shell on stdin or run by ssh, followed inside each other.
NESTING = 8
#: A pipeline is listed with at most this many of its last stages.
_PIPELINE_STAGES = 32
_OUTPUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
# a word each program must contain for the command model to find a program it runs (xargs,
# find -exec, busybox, parallel, interpreter code) beyond what the lexer lists
_RUNNERS = ("xargs", "parallel", "find", "box", "python", "pypy", "node", "perl", "ruby", "php",
            "deno", "bun", "lua", "osascript", "Rscript")  # fmt: skip


def provide_commands(event: Event) -> list[str]:
    """``facts.commands``: ``tool_input.command`` and the strings of ``tool_input.commands``."""
    return event_commands(event)


def provide_shell_commands(event: Event) -> list[str]:
    """``facts.shell_commands``: every simple command the call would run (see module doc).

    Incomplete (:func:`~forge_policy.facts.truncated`) past :data:`MAX_COMMANDS` distinct
    commands, :data:`MAX_CHARS` characters, the lexer's nesting caps, or its time budget: the
    commands found until then are returned.
    """
    cwd = event_cwd(event)

    def lines() -> Iterator[str]:
        for command in event_commands(event):
            # a second pass only where a program may run another one (xargs, find, busybox…)
            runner = any(word in command for word in _RUNNERS)
            indirect = (run.line for run in runs(command, cwd) if run.via) if runner else ()
            yield from chain(_lines(command, cwd, 0), indirect)

    return _capped(lines())[0]


def provide_executed_commands(event: Event) -> list[str]:
    """``facts.executed_commands``: every program the call would run, in canonical form.

    One line per program, however it is reached (``sh -c``, ``$(…)``, ``xargs``, ``parallel``,
    ``find -exec``, ``busybox``, wrappers, interpreter code): the program's basename, short-flag
    clusters split, long flags kept, quotes removed, known variables expanded (``echo / | xargs
    rm -rf`` gives ``rm -r -f /``). Data is not a program: ``echo "rm -rf /"`` gives only ``echo
    rm -rf /``. Incomplete (a :class:`~forge_policy.facts.Partial`) past the caps of
    ``shell_commands`` or when interpreter code could not be read in full.
    """
    return _distinct(event, lambda run, _cwd: [run.line])


def provide_command_readings(event: Event) -> list[str]:
    """``facts.command_readings``: ``executed_commands`` as messages name them, each program
    reached through another one with its route (``rm -r -f / reached through xargs``)."""
    return _distinct(event, lambda run, _cwd: [run.reading])


def provide_recursive_deletes(event: Event) -> list[str]:
    """``facts.recursive_deletes``: one line per target of a recursive delete (``rm -r``,
    ``find -delete``, however reached): ``SCOPE[ forced]: PATH by READING``, where SCOPE is
    ``root``, ``home``, ``project``, ``inside``, ``temp``, ``outside`` or ``unknown`` (see
    :mod:`forge_policy.facts.deletes`; the project is the event's cwd)."""
    return _distinct(event, lambda run, cwd: [str(d) for d in deletes(run, cwd)])


def provide_shell_data(event: Event) -> list[str]:
    """``facts.shell_data``: the strings the call's commands hold only as data, never run —
    ``echo``/``printf`` text, ``grep`` patterns, here-documents and here-strings fed to a program
    that is not a shell (``cat <<EOF``, ``tee x <<< …``) — for rules about content, not
    commands."""
    return _distinct(event, lambda run, _cwd: data(run))


def _distinct(event: Event, lines: Callable[[Run, str], list[str]]) -> list[str]:
    """The distinct lines of every run of the call, capped as ``shell_commands`` is."""
    cwd = event_cwd(event)
    incomplete: list[str] = []

    def produced() -> Iterator[str]:
        for command in event_commands(event):
            for run in runs(command, cwd):
                if not run.complete:
                    incomplete.append(f"{run.reading}: its code was not read in full")
                yield from lines(run, cwd)

    found, cut = _capped(produced())
    if incomplete and not cut:
        truncated(incomplete[-1])
    return found


def _capped(lines: Iterator[str]) -> tuple[list[str], bool]:
    """The distinct ``lines``, in order, up to :data:`MAX_COMMANDS` lines and
    :data:`MAX_CHARS` characters or the fact's budget, and whether they were cut there (the
    fact is then marked incomplete, with the reason)."""
    found: dict[str, None] = {}
    size = 0
    try:
        for line in lines:
            if line in found:
                continue
            size += len(line)
            if len(found) >= MAX_COMMANDS or size > MAX_CHARS:
                truncated(
                    f"more than {MAX_COMMANDS} distinct commands or {MAX_CHARS} "
                    "characters: the rest was not read"
                )
                return list(found), True
            found[line] = None
    except FactTimeout as exc:
        truncated(f"stopped at its budget after {len(found)} commands ({exc})")
    return list(found), False


def simple_commands(
    text: str, cwd: str, depth: int = 0, *, bare: bool = False
) -> Iterator[tuple[list[str], Command, str]]:
    """``(argv, command, cwd)`` for each simple command of ``text`` as
    :func:`~forge_policy.facts.shell.iter_commands` gives them (``distinct``), and those of the
    scripts a shell reads on stdin (``bash <<EOF``) or an ``ssh`` runs, :data:`NESTING` deep.

    >>> [argv for argv, _cmd, _cwd in simple_commands("bash <<E\\nrm -r x\\nE", "/")]
    [['bash'], ['rm', '-r', 'x']]
    """
    for argv, cmd, current in iter_commands(text, cwd, distinct=True, bare=bare):
        yield argv, cmd, current
        if not argv:
            continue
        script = _nested_script(argv, cmd)
        if script:
            if depth >= NESTING:
                truncated(f"scripts fed to a shell nested deeper than {NESTING} were not read")
                continue
            yield from simple_commands(script, current, depth + 1, bare=bare)


def _lines(text: str, cwd: str, depth: int) -> Iterator[str]:
    # the last stages of each command's pipeline, kept per command so that each pipeline is
    # rendered from its predecessor's in one step (the commands stay alive meanwhile)
    windows: dict[int, list[str]] = {}
    for argv, cmd, current in simple_commands(text, cwd, depth):
        rendered = " ".join(canonical_git(argv, current))
        yield _render(rendered, cmd) if cmd.redirects else rendered
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


def _render(rendered: str, cmd: Command) -> str:
    words = [rendered]
    for redirect in cmd.redirects:
        target = redirect.target
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
