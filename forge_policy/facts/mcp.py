"""Reading an MCP tool call for what it does: a command it runs, a file it writes or reads, a
URL it fetches, so that the rules written for ``Bash``, ``Write``, ``Read`` and ``WebFetch``
govern it too (issue 27; the how-to is ``docs/how-to/mcp-tools.md``).

An MCP tool is named ``mcp__<server>__<tool>`` (Claude Code, Codex; a plugin's server
``mcp__plugin_<plugin>_<server>__<tool>``; the other harnesses' adapters map their spelling to
this one, see :func:`mcp_name`). Its arguments follow no convention, so the reading is a set
of documented, conservative heuristics on the argument names and values and on the words of
the server and tool names (:func:`read_call`), giving a :class:`Reading`:

``shell``
    an argument named :data:`SHELL_KEYS` (``command``, ``cmd``, ``script``…), or a tool or
    server name with a word of :data:`SHELL_WORDS` (``shell``, ``terminal``, ``command``…), or
    a tool named only :data:`RUN_VERBS` (``run``, ``exec``, ``execute``; not ``run_tests``) on
    a server named so too or not at all (``mcp__exec__run``, not ``mcp__deploy__run``), unless
    the tool name starts with a read verb (``get_command_output``); a shell word glued to a run
    verb counts (``runcommand``); a shell word in the server's name only counts for a tool
    whose name has no file verb (``mcp__shell__write_file`` writes a file). Read as ``Bash`` with
    ``{"command": …}``; a list of strings is an argv, quoted and joined.
``write`` / ``read``
    a path argument (:data:`PATH_KEYS`: ``path``, ``file_path``, ``filePath``, ``paths[]``,
    ``source``/``destination``…; a ``file://`` URL is its path) and a verb of the tool name:
    :data:`WRITE_VERBS` (write wins when both are there) or :data:`READ_VERBS` (a word that
    starts with a verb of four letters or more has it: ``writefile``). Read as
    ``Write`` or ``Read`` with ``{"file_path": …}`` (a list when the call names several).
``fetch``
    an argument named :data:`URL_KEYS` (``url``, ``uri``, ``href``…) or any top-level string
    that is one ``http(s)://`` URL. Read as ``WebFetch`` with ``{"url": …}``.
``none``
    nothing of the above: the call is governed by its name only.

Argument names are compared without case, ``_`` and ``-`` (``Command``, ``FILE_PATH``): a
server reads what its schema names, so a decoy spelled otherwise beside it is read too, and
two commands that differ make the call unreadable.

**Fail closed.** A shell reading whose command cannot be read (no command argument in a tool
named as a shell, a value that is neither a string nor a list of strings, several candidates
that disagree, more than :data:`MAX_COMMAND` characters) gives an
:class:`~forge_policy.values.Unknown` command: every condition on it is undetermined, and the
command facts (``facts.shell_commands``…) are too, so a blocking rule on ``Bash`` decides as
if it matched, as for a command the shell analyser cannot read. The same for a write whose
path cannot be read.

The engine decides on :func:`read_as`'s event (the reading's tool name and input, the
original arguments kept beside them, the original name under :data:`READ_FROM`); triggers
fire on either name, and the audit log and the messages keep the name the harness sent.

>>> r = read_call("mcp__shell__run", {"cmd": ["git", "push", "--force"]})
>>> r.kind, r.tool_name, r.tool_input
('shell', 'Bash', {'command': 'git push --force'})
>>> read_call("mcp__fs__write_file", {"path": "file:///p/.forge/x", "content": "y"}).tool_input
{'file_path': '/p/.forge/x', 'content': 'y'}
>>> read_call("mcp__github__create_issue", {"title": "x"}).kind
'none'
"""

from __future__ import annotations

import re
import shlex

from forge_policy.events import MCP_PREFIX, READ_FROM, mcp_name
from forge_policy.values import Unknown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from forge_policy.model import Event

__all__ = ["MCP_PREFIX", "READ_FROM", "Reading", "mcp_name", "read_as", "read_call", "split_name"]

#: The kinds of reading, and the built-in tool each is read as.
KINDS = {"shell": "Bash", "write": "Write", "read": "Read", "fetch": "WebFetch", "none": ""}

#: Argument names that hold a command a shell runs.
SHELL_KEYS = ("command", "cmd", "script", "shell_command", "command_line", "commandLine",
              "cmdline", "bash_command")  # fmt: skip
#: Words of a tool or server name that say it runs commands.
SHELL_WORDS = frozenset({"shell", "terminal", "console", "bash", "sh", "zsh", "pwsh",
                         "powershell", "cmd", "command", "commands", "subprocess"})  # fmt: skip
#: Verbs that say it runs commands when they are the whole name (``run``, ``exec``,
#: ``run_exec``), never beside an object (``run_tests``, ``execute_query`` run what they name).
RUN_VERBS = frozenset({"run", "exec", "execute", "spawn"})
#: Argument names that hold a path the call reads or writes (lists of them too).
#: (Not ``target`` or ``dir``: a deployment's target is no file.)
PATH_KEYS = ("file_path", "filePath", "path", "paths", "filename", "file", "filepath",
             "absolute_path", "target_file", "source", "destination", "src", "dest",
             "old_path", "new_path", "notebook_path")  # fmt: skip
#: Verbs of a tool name that change files (one of these wins over a read verb).
WRITE_VERBS = frozenset({"write", "create", "edit", "update", "delete", "remove", "move",
                         "rename", "append", "patch", "replace", "put", "save", "insert",
                         "copy", "mkdir", "upload", "overwrite", "truncate", "touch", "set",
                         "modify", "unlink", "rm", "mv", "cp"})  # fmt: skip
#: Verbs of a tool name that only read files.
READ_VERBS = frozenset({"read", "get", "list", "search", "view", "cat", "show", "open", "head",
                        "tail", "find", "grep", "stat", "describe", "load", "ls", "tree",
                        "info", "glob"})  # fmt: skip
#: A name's word that says it runs commands: a shell word, or one glued to a run verb
#: (``runcommand``, ``execshell``, ``shellexec``).
_SHELLISH = SHELL_WORDS | frozenset(
    glued for verb in RUN_VERBS for word in SHELL_WORDS for glued in (verb + word, word + verb)
)
#: The verbs of four letters or more, by verb set: a word that starts with one has that verb.
_LONG_VERBS = {
    verbs: tuple(sorted(v for v in verbs if len(v) >= 4)) for verbs in (WRITE_VERBS, READ_VERBS)
}
#: Argument names that hold a URL the call fetches.
URL_KEYS = ("url", "uri", "href", "link", "endpoint", "urls")
_SHELL_KEYS = frozenset(k.lower().replace("_", "") for k in SHELL_KEYS)  # as _key() spells
_PATH_KEYS = frozenset(k.lower().replace("_", "") for k in PATH_KEYS)
_URL_KEYS = frozenset(k.lower().replace("_", "") for k in URL_KEYS)
#: A command longer than this is not read (an argument the agent can grow at will).
MAX_COMMAND = 1 << 16
#: How deep nested objects are searched for a command argument.
_MAX_DEPTH = 3
_URL = re.compile(r"https?://\S+\Z", re.IGNORECASE)
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


class Reading:
    """What an MCP call does, as :func:`read_call` reads it: ``kind`` (a key of
    :data:`KINDS`), ``tool_name`` (the built-in tool it is read as, ``""`` for ``none``),
    ``tool_input`` (that tool's arguments; an unreadable one is an
    :class:`~forge_policy.values.Unknown`) and ``unreadable`` (why, ``""`` when read)."""

    __slots__ = ("kind", "tool_input", "tool_name", "unreadable")

    def __init__(self, kind: str, tool_input: dict[str, Any], unreadable: str = "") -> None:
        self.kind = kind
        self.tool_name = KINDS[kind]
        self.tool_input = tool_input
        self.unreadable = unreadable

    def __repr__(self) -> str:
        why = f" unreadable={self.unreadable!r}" if self.unreadable else ""
        return f"<Reading {self.kind} {self.tool_name or '-'}{why}>"


NONE = Reading("none", {})


def is_mcp(tool_name: str) -> bool:
    """Whether ``tool_name`` is an MCP tool's (``mcp__…``): the one check on the hot path."""
    return tool_name.startswith(MCP_PREFIX)


def split_name(tool_name: str) -> tuple[str, str]:
    """``(server, tool)`` of an MCP tool name (the first ``__`` after the prefix ends the
    server; a name without it, such as Cursor's ``preToolUse`` gives, ``MCP:<tool>``, has
    no server); ``("", "")`` for any other name.

    >>> split_name("mcp__plugin_kit_fs__write_file"), split_name("Bash")
    (('plugin_kit_fs', 'write_file'), ('', ''))
    >>> split_name("mcp__write_file")
    ('', 'write_file')
    """
    if not is_mcp(tool_name):
        return "", ""
    server, separator, tool = tool_name[len(MCP_PREFIX) :].partition("__")
    if not separator:
        return "", server
    return server, tool


def words(name: str) -> list[str]:
    """The lowercase words of a name: split at ``_``, ``-``, ``.``, spaces and case changes.

    >>> words("runShellCommand"), words("write_file"), words("MCP-Exec.v2")
    (['run', 'shell', 'command'], ['write', 'file'], ['mcp', 'exec', 'v', '2'])
    """
    return [w.lower() for w in _WORD.findall(name)]


def read_call(tool_name: str, tool_input: Mapping[str, Any]) -> Reading:
    """What the MCP call ``tool_name`` with ``tool_input`` does (module doc); :data:`NONE` for
    a name that is not an MCP tool's.

    >>> read_call("mcp__desktop__execute_command", {"command": {"x": 1}}).unreadable
    "argument 'command' is a dict, not a command"
    >>> read_call("mcp__fs__read_file", {"path": "../.env"}).tool_input
    {'file_path': '../.env'}
    >>> read_call("mcp__web__fetch_page", {"page": "https://example.com/a"}).kind
    'fetch'
    """
    server, tool = split_name(tool_name)
    if not tool:
        return NONE
    tool_words = words(tool)
    server_words = words(server)
    shell = _shell(tool_words, server_words, tool_input)
    if shell is not None:
        return shell
    writes, reads = _has(tool_words, WRITE_VERBS), _has(tool_words, READ_VERBS)
    if writes or reads:
        path = _paths(tool_input, writes)
        if path is not None:
            kind = "write" if writes else "read"
            canonical: dict[str, Any] = {"file_path": path}
            if kind == "write":
                for key in ("content", "contents", "text", "new_string", "old_string"):
                    value = tool_input.get(key)
                    if isinstance(value, str):
                        canonical.setdefault("content" if key in ("contents", "text") else key,
                                             value)  # fmt: skip
            why = path.reason if type(path) is Unknown else ""
            return Reading(kind, canonical, why)
    url = _url(tool_input)
    if url is not None:
        return Reading("fetch", {"url": url})
    return NONE


def _shell(
    tool_words: list[str], server_words: list[str], tool_input: Mapping[str, Any]
) -> Reading | None:
    """The shell reading of a call, or None when nothing says it runs a command."""
    named = any(word in _SHELLISH for word in tool_words)
    if not named and any(word in _SHELLISH for word in server_words):
        # a shell server's tool runs commands, unless its name says it handles files:
        # mcp__shell__kill does, mcp__shell__write_file writes a file (read as Write)
        named = not (_has(tool_words, WRITE_VERBS) or _has(tool_words, READ_VERBS))
    if not named and tool_words and RUN_VERBS.issuperset(tool_words):
        # a bare run/exec runs a command on a server that says so (or says nothing else):
        # mcp__shell__run, mcp__exec__run; mcp__deploy__run runs a deployment
        named = not server_words or RUN_VERBS.issuperset(server_words)
    if named and tool_words[:1] and _has(tool_words[:1], READ_VERBS):
        named = False  # get_command_output, list_commands: about commands, running none
    found = _find(tool_input, _MAX_DEPTH if named else 0)
    if not found and not named:
        return None
    if not found:
        why = f"no argument named {', '.join(SHELL_KEYS[:4])}… holds its command"
        return Reading("shell", {"command": Unknown(why)}, why)
    commands: dict[str, None] = {}
    for key, value in found:
        command = _command(key, value)
        if type(command) is Unknown:
            return Reading("shell", {"command": command}, command.reason)
        commands[command] = None
    if len(commands) > 1:
        keys = ", ".join(key for key, _ in found)
        why = f"arguments {keys} name different commands"
        return Reading("shell", {"command": Unknown(why)}, why)
    return Reading("shell", {"command": next(iter(commands))})


def _has(name_words: list[str], verbs: frozenset[str]) -> bool:
    """Whether one of ``name_words`` is one of ``verbs``, or starts with one of four letters
    or more (``writefile``, ``readfile``: a name written without separators).

    >>> _has(["writefile"], WRITE_VERBS), _has(["settings"], WRITE_VERBS)
    (True, False)
    """
    long = _LONG_VERBS[verbs]
    return any(word in verbs or word.startswith(long) for word in name_words)


def _key(name: object) -> str:
    """An argument name compared without case, ``_`` and ``-`` (``Command``, ``file_path``,
    ``filePath`` and ``FILE-PATH`` are one name each: a server reads what its schema says,
    so a decoy spelled otherwise beside it must not be the one read)."""
    return name.lower().replace("_", "").replace("-", "") if isinstance(name, str) else ""


def _find(args: Mapping[str, Any], depth: int) -> list[tuple[str, Any]]:
    """``(name, value)`` of each argument of ``args`` named one of :data:`SHELL_KEYS`
    (:func:`_key`), then, when none is there and ``depth`` allows, in the objects it holds."""
    found = [(k, v) for k, v in args.items() if v is not None and _key(k) in _SHELL_KEYS]
    if found or depth <= 0:
        return found
    for value in args.values():
        if isinstance(value, dict):
            found += _find(value, depth - 1)
    return found


def _command(key: str, value: object) -> str:
    """One command argument as the text a shell runs, or an :class:`Unknown` saying why not."""
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        value = shlex.join(value)
    if not isinstance(value, str):
        return Unknown(f"argument {key!r} is a {type(value).__name__}, not a command")
    if len(value) > MAX_COMMAND:
        return Unknown(f"argument {key!r} holds more than {MAX_COMMAND} characters")
    return value


def _paths(args: Mapping[str, Any], strict: bool) -> str | list[str] | None:
    """The path (or paths) the call names: one string, a list, or, when ``strict`` (a write)
    and a path argument is neither, an :class:`Unknown`; None when it names none."""
    found: list[str] = []
    for key, value in args.items():
        if value is None or _key(key) not in _PATH_KEYS:
            continue
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, str):
                if item:
                    found.append(_file_path(item))
            elif strict:
                return Unknown(f"argument {key!r} is a {type(item).__name__}, not a path")
    found = list(dict.fromkeys(found))
    if not found:
        return None
    return found[0] if len(found) == 1 else found


def _file_path(value: str) -> str:
    """A ``file://`` URL's path (``file:///p/x`` and ``file://localhost/p/x`` give ``/p/x``),
    percent escapes decoded; any other string as it is."""
    if value[:7].lower() != "file://":
        return value
    from urllib.parse import unquote

    rest = value[7:]
    if rest.startswith("localhost/"):
        rest = rest[len("localhost") :]
    return unquote(rest)


def _url(args: Mapping[str, Any]) -> str | list[str] | None:
    """The URL (or URLs) the call fetches: a :data:`URL_KEYS` argument, else any top-level
    string that is one ``http(s)://`` URL."""
    found: list[str] = []
    for key, value in args.items():
        if _key(key) not in _URL_KEYS:
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item and not item.lower().startswith("file://"):
                found.append(item)
    if not found:
        found = [v for v in args.values() if isinstance(v, str) and _URL.match(v.strip())]
    found = list(dict.fromkeys(found))
    if not found:
        return None
    return found[0] if len(found) == 1 else found


def read_as(event: Event) -> Event:
    """The event the rules judge: for an MCP call read as a built-in tool, the same event
    with that tool's name and arguments (the reading's laid over the original ones, kept
    beside them for rules that name the MCP tool), the original name under
    :data:`READ_FROM`; any other event as it is. The check costs one prefix test.

    >>> from forge_policy.model import Event
    >>> seen = read_as(Event("PreToolUse", "s", tool_name="mcp__shell__run",
    ...                      tool_input={"cmd": "ls"}))
    >>> seen.tool_name, seen.tool_input, seen.payload[READ_FROM]
    ('Bash', {'cmd': 'ls', 'command': 'ls'}, 'mcp__shell__run')
    """
    name = event.tool_name
    if not name.startswith(MCP_PREFIX) or READ_FROM in event.payload:
        return event
    reading = read_call(name, event.tool_input)
    if reading.kind == "none":
        return event
    import attrs

    tool_input = {**event.tool_input, **reading.tool_input}
    payload = {
        **event.payload,
        "tool_name": reading.tool_name,
        "tool_input": tool_input,
        READ_FROM: name,
    }
    return attrs.evolve(event, tool_name=reading.tool_name, tool_input=tool_input, payload=payload)


def read_from(event: Event) -> str:
    """The tool name the harness sent for an event :func:`read_as` read (``""`` otherwise)."""
    value = event.payload.get(READ_FROM)
    return value if isinstance(value, str) else ""


def provide_mcp_reading(event: Event) -> str:
    """``facts.mcp_reading``: how an MCP call reads (``shell``, ``write``, ``read``,
    ``fetch``, ``none``; ``unreadable`` when its command or written path cannot be read);
    ``""`` for any other call.

    >>> from forge_policy.model import Event
    >>> provide_mcp_reading(Event("PreToolUse", "s", tool_name="mcp__x__shell_exec",
    ...                           tool_input={"code": "1"}))
    'unreadable'
    """
    name = read_from(event) or event.tool_name
    if not is_mcp(name):
        return ""
    return label(read_call(name, event.tool_input))


def label(reading: Reading) -> str:
    """The word the audit log and ``doctor`` use for a reading: its kind, or ``unreadable``."""
    return "unreadable" if reading.unreadable else reading.kind
