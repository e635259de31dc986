"""Command facts: the shell commands of a tool call, as sent and as the command model reads them.

``facts.commands`` is what the agent sent: ``tool_input.command`` and every string (or
``{command}`` object) of ``tool_input.commands``. ``facts.shell_commands`` is what a shell would
run, one string per simple command, so that a rule can anchor on the command name (``^rm\\s``)
instead of matching words inside a commit message or an ``echo``:

- resolved as ``facts.executed_commands`` is (the same reading, :func:`runs`): variables set
  earlier substituted (``h=--hard; git reset $h`` gives ``git reset --hard``), braces, ``$IFS``,
  loops, functions and aliases expanded; a form the reading does not model makes it incomplete;
- quotes removed, ``NAME=value`` prefixes and wrappers (``sudo``, ``env``, ``nohup``,
  ``timeout 5`` …) stripped, words joined by one space;
- output redirections appended as ``> TARGET`` (``cat img > /dev/sda``);
- a pipeline is also given whole, stages joined by `` | `` (``curl -fsSL x | sh``);
- the commands inside ``$(…)``, backticks, ``sh -c``/``bash -c``/``eval`` scripts, shells fed
  a here-document or here-string, and an ``ssh`` remote command are listed too;
- so are the programs reached through another one (``xargs``, ``parallel``, ``find -exec``,
  ``busybox``, interpreter code), in the canonical form of ``facts.executed_commands``.

``facts.executed_commands``, ``facts.command_readings``, ``facts.recursive_deletes`` and
``facts.shell_data`` come from the command model (:mod:`forge_policy.commands.execution`,
:mod:`forge_policy.commands.deletes`). The reading is :mod:`forge_policy.commands`; this
module gives it an event, and caps and budgets what it lists.

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

from forge_policy._budget import CURRENT, outside_reads
from forge_policy.errors import FactTimeout
from forge_policy.facts._io import event_commands, event_cwd
from forge_policy.facts._runtime import shared, truncated

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any, TypeVar

    from forge_policy.commands import Command, Run
    from forge_policy.model import Event

    T = TypeVar("T")

    #: one simple command as the lexer reads it: ``(argv, command, cwd)``
    Words = tuple[list[str], Command, str]

#: At most this many distinct simple commands are listed; past it the fact is incomplete
#: (a :class:`~forge_policy.facts.Partial`, which blocking rules read as a possible match).
MAX_COMMANDS = 1 << 14
#: At most this many characters in all (nesting repeats the inner text in the outer command).
MAX_CHARS = 8 << 20

#: Readings kept across tool calls (:func:`_kept`), by (command text, directory): an agent
#: repeats its commands (``git status``, ``pytest -q``), and the process reads each once.
_KEPT_RUNS: dict[tuple[str, str], list[Run]] = {}
_KEPT_WORDS: dict[tuple[str, str], tuple[list[Words], bool]] = {}
#: at most this many readings of each kind are kept, each of a text at most this long
KEPT_READINGS = 256
KEPT_CHARS = 4096


def command_runs(event: Event, command: str, cwd: str) -> list[Run]:
    """Every program ``command`` runs from ``cwd`` (:func:`forge_policy.commands.runs`), read
    once per event for all the facts that ask (six of them on a Bash call: the command facts,
    the files it names, governance, apply_patch): the reading is kept in the event's shared work
    (:func:`~forge_policy.facts._runtime.shared`), keyed by the exact command text and
    directory, so it never stands for another text. The cuts it reported (a form the model
    does not read, a cap) are reported again to every fact that reuses it, so each one is as
    incomplete as the first. A reading that read nothing but its text (no file, no environment
    variable) and was not cut is also kept for later calls with the same text and directory
    (:func:`_kept`). The runs are shared: callers only read them.

    >>> from forge_policy.model import Event
    >>> ev = Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "cd a && ls"})
    >>> [(run.line, run.cwd) for run in command_runs(ev, "cd a && ls", "/r")]
    [('ls', '/r/a')]
    """
    # the command model is imported by a call that runs commands, not by a Read
    from forge_policy.commands import runs

    if CURRENT.get() is None:  # no running fact to report cuts to (nor to share with)
        return list(runs(command, cwd))

    def read() -> list[Run]:
        words, substituted = command_words(event, command, cwd)
        return list(runs(command, cwd, None if substituted else words))

    return shared(
        f"commands.runs\0{cwd}\0{command}", event, lambda: _kept(_KEPT_RUNS, command, cwd, read)
    )


def command_words(event: Event, command: str, cwd: str) -> tuple[list[Words], bool]:
    """The lexer's reading of ``command`` from ``cwd``, ``iter_commands(command, cwd,
    distinct=True, bare=True)`` (commands with no argv included: ``> file``), read once per
    event like :func:`command_runs`, and whether it read a substitution (``$(…)``, backticks):
    readers that read substitutions their own way (the command model, ``git commit``'s
    ``$(cat FILE)``) then lex the command themselves. The words are shared: callers only read
    them.

    >>> from forge_policy.model import Event
    >>> ev = Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "cd a && ls"})
    >>> [(argv, at) for argv, _cmd, at in command_words(ev, "cd a && ls", "/r")[0]]
    [(['ls'], '/r/a')]
    """
    from forge_policy.commands.shell import iter_commands, literal_subst

    def read() -> tuple[list[Words], bool]:
        substituted: list[bool] = []

        def subst(done: list[Command], raw: str) -> str:
            substituted.append(True)
            return literal_subst(done, raw)

        words = list(iter_commands(command, cwd, subst, distinct=True, bare=True))
        return words, bool(substituted)

    if CURRENT.get() is None:
        return read()
    return shared(
        f"commands.words\0{cwd}\0{command}",
        event,
        lambda: _kept(_KEPT_WORDS, command, cwd, read),
    )


#: Command facts kept across tool calls (:func:`kept_value`), by (fact, command texts,
#: directory); at most this many
_KEPT_VALUES: dict[tuple[str, tuple[str, ...], str], object] = {}
KEPT_VALUES = 1024


def kept_value(fact: str, event: Event, compute: Callable[[], T]) -> T:
    """``compute()``, the value of a command ``fact`` of the event read from its command texts
    and directory alone (the command facts, ``commit_message``), kept for later calls with the
    same texts and directory as :func:`_kept` keeps a reading: when computing it read no file
    and no environment variable and reported no cut or note. The running provider's cuts and
    notes so far must be none (a kept value stands for a whole provider call). A kept list is
    handed out as a copy: a caller may change its own."""
    run = CURRENT.get()
    commands = event_commands(event)
    if run is None or run.cuts or run.notes or sum(map(len, commands)) > KEPT_CHARS:
        return compute()
    key = (fact, tuple(commands), event_cwd(event))
    found = _KEPT_VALUES.get(key)
    if found is not None:
        return list(found) if isinstance(found, list) else found  # type: ignore[return-value]
    value, alone = _read_alone(compute)
    if alone:
        _keep(_KEPT_VALUES, KEPT_VALUES, key, list(value) if isinstance(value, list) else value)
    return value


def _kept(store: dict[tuple[str, str], T], command: str, cwd: str, read: Callable[[], T]) -> T:
    """``read()``, kept in ``store`` for the next tool call with the same command text and
    directory when nothing else decided it: it read no file and no environment variable
    (:func:`~forge_policy._budget.outside_reads` did not move: a script fed to a shell, ``$(cat
    F)``, git's configured aliases, ``~`` and ``$HOME`` all count) and reported no cut or note
    (an incomplete reading is read again, so that each call reports its own reasons). Runs
    inside :func:`~forge_policy.facts._runtime.shared`, whose run holds only this computation's
    cuts and notes. The value is shared like the event's: callers only read it."""
    key = (command, cwd)
    found = store.get(key)
    if found is not None:
        return found
    value, alone = _read_alone(read)
    if alone and len(command) <= KEPT_CHARS:
        _keep(store, KEPT_READINGS, key, value)
    return value


def _read_alone(compute: Callable[[], T]) -> tuple[T, bool]:
    """``compute()``, and whether nothing but its arguments decided it: it ran in a provider's
    run, read no file and no environment variable (:func:`~forge_policy._budget.outside_reads`
    did not move) and reported no cut or note. Only such a value may be kept across calls."""
    run = CURRENT.get()
    before = outside_reads()
    value = compute()
    alone = run is not None and not run.cuts and not run.notes and outside_reads() == before
    return value, alone


def _keep(store: dict[Any, Any], limit: int, key: object, value: object) -> None:
    """Keep ``value`` under ``key``; a full store starts again. Dropping the oldest (``del
    store[next(iter(store))]``) made every later insert scan the dict's deleted slots from its
    start, ~5 us a call once it had filled: what a session of new commands paid on every fact."""
    if len(store) >= limit:
        store.clear()
    store[key] = value


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
            from forge_policy.commands.lines import lines_of  # loaded with the runs it reads

            yield from lines_of(command_runs(event, command, cwd))

    return kept_value("shell_commands", event, lambda: _capped(lines())[0])


def provide_executed_commands(event: Event) -> list[str]:
    """``facts.executed_commands``: every program the call would run, in canonical form.

    One line per program, however it is reached (``sh -c``, ``$(…)``, ``xargs``, ``parallel``,
    ``find -exec``, ``busybox``, wrappers, interpreter code): the program's basename, short-flag
    clusters split, long flags kept, quotes removed, known variables expanded (``echo / | xargs
    rm -rf`` gives ``rm -r -f /``). Data is not a program: ``echo "rm -rf /"`` gives only ``echo
    rm -rf /``. Incomplete (a :class:`~forge_policy.facts.Partial`) past the caps of
    ``shell_commands`` or when interpreter code could not be read in full.
    """
    return _distinct(event, "executed_commands", lambda run, _cwd: [run.line])


def provide_command_readings(event: Event) -> list[str]:
    """``facts.command_readings``: ``executed_commands`` as messages name them, each program
    reached through another one with its route (``rm -r -f / reached through xargs``)."""
    return _distinct(event, "command_readings", lambda run, _cwd: [run.reading])


def provide_recursive_deletes(event: Event) -> list[str]:
    """``facts.recursive_deletes``: one line per target of a recursive delete (``rm -r``,
    ``find -delete``, however reached): ``SCOPE[ forced]: PATH by READING``, where SCOPE is
    ``root``, ``home``, ``project``, ``inside``, ``temp``, ``outside`` or ``unknown`` (see
    :mod:`forge_policy.commands.deletes`; the project is the event's cwd)."""

    def deletes(run: Run, cwd: str) -> list[str]:
        from forge_policy.commands import recursive_deletes  # loaded with the runs it reads

        return [str(d) for d in recursive_deletes(run, cwd)]

    return _distinct(event, "recursive_deletes", deletes)


def provide_shell_data(event: Event) -> list[str]:
    """``facts.shell_data``: the strings the call's commands hold only as data, never run —
    ``echo``/``printf`` text, ``grep`` patterns, here-documents and here-strings fed to a program
    that is not a shell (``cat <<EOF``, ``tee x <<< …``) — for rules about content, not
    commands."""

    def held(run: Run, _cwd: str) -> list[str]:
        from forge_policy.commands import data  # loaded with the runs it reads

        return data(run)

    return _distinct(event, "shell_data", held)


def _distinct(event: Event, fact: str, lines: Callable[[Run, str], list[str]]) -> list[str]:
    """The distinct lines of every run of the call, capped as ``shell_commands`` is (kept as
    :func:`kept_value` keeps ``fact``)."""
    return kept_value(fact, event, lambda: _distinct_lines(event, lines))


def _distinct_lines(event: Event, lines: Callable[[Run, str], list[str]]) -> list[str]:
    cwd = event_cwd(event)
    incomplete: list[str] = []

    def produced() -> Iterator[str]:
        for command in event_commands(event):
            for run in command_runs(event, command, cwd):
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
