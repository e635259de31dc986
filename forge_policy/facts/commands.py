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
  a here-document or here-string, and an ``ssh`` remote command are listed too.

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

import os

from forge_policy.facts._io import event_cwd
from forge_policy.facts._runtime import check_deadline
from forge_policy.facts.shell import (
    Command,
    event_commands,
    iter_commands,
    stdin_text,
    strip_wrappers,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.model import Event

#: At most this many simple commands are listed (the rest of a huge script is not).
MAX_COMMANDS = 512
_NESTING = 4
_OUTPUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish"})
# ssh options that take a value (OpenSSH 9)
_SSH_VALUE_OPTS = frozenset("bcDEeFIiJLlmOoPpQRSWw")


def provide_commands(event: Event) -> list[str]:
    """``facts.commands``: ``tool_input.command`` and the strings of ``tool_input.commands``."""
    return event_commands(event)


def provide_shell_commands(event: Event) -> list[str]:
    """``facts.shell_commands``: every simple command the call would run (see module doc)."""
    cwd = event_cwd(event)
    found: dict[str, None] = {}
    for command in event_commands(event):
        _collect(command, cwd, found, 0)
        if len(found) >= MAX_COMMANDS:
            break
    return list(found)[:MAX_COMMANDS]


def _collect(text: str, cwd: str, found: dict[str, None], depth: int) -> None:
    for argv, cmd, current in iter_commands(text, cwd):
        check_deadline()
        if len(found) >= MAX_COMMANDS:
            return
        found.setdefault(_render(argv, cmd))
        if cmd.piped_from is not None:
            found.setdefault(_pipeline(cmd))
        if depth >= _NESTING:
            continue
        script = _nested_script(argv, cmd, current)
        if script:
            _collect(script, current, found, depth + 1)


def _render(argv: list[str], cmd: Command) -> str:
    words = [" ".join(argv)]
    for redirect in cmd.redirects:
        target = redirect.target
        if redirect.op in _OUTPUT_OPS or (
            redirect.op == ">&" and target and not target.isdigit() and target != "-"
        ):
            words.append(f"> {target}")
    return " ".join(words)


def _pipeline(cmd: Command) -> str:
    stages: list[str] = []
    node: Command | None = cmd
    while node is not None and len(stages) < 32:
        stages.append(" ".join(strip_wrappers(node.words)))
        node = node.piped_from
    return " | ".join(reversed(stages))


def _nested_script(argv: list[str], cmd: Command, cwd: str) -> str | None:
    """The script a shell reads on stdin (``bash <<EOF``), or an ssh remote command."""
    name = os.path.basename(argv[0])
    if name in _SHELLS:
        operands = [a for a in argv[1:] if not a.startswith(("-", "+"))]
        if any(a.startswith("-") and not a.startswith("--") and "c" in a for a in argv[1:]):
            return None  # sh -c: iter_commands already followed it
        return stdin_text(cmd, "") if not operands else None
    if name != "ssh":
        return None
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        flag = argv[i]
        i += 1
        if len(flag) == 2 and flag[1] in _SSH_VALUE_OPTS:
            i += 1
    remote = argv[i + 1 :]  # after the destination
    return " ".join(remote) if remote else None
