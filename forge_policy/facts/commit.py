"""``facts.commit_message``: the messages of the call's ``git commit`` commands.

The parser is :mod:`forge_policy.commands.git_commit`; this module gives it an event.

>>> from forge_policy.model import Event
>>> provide_commit_message(Event("PreToolUse", "s", tool_name="Bash",
...                              tool_input={"command": "git commit -m 'fix: x' -m body"}))
'fix: x\\n\\nbody'
"""

from __future__ import annotations

from forge_policy.events import GIT_HOOK_EVENTS
from forge_policy.facts._io import event_commands, event_cwd
from forge_policy.facts.commands import command_words, kept_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.model import Event


def provide_commit_message(event: Event) -> str:
    """``facts.commit_message``: every ``git commit`` message in the command(s), blank-line joined.

    ``""`` when the command runs no ``git commit`` or gives no message (the editor would open).
    For the git-side events (``commit-msg`` …) it is the event's ``commit_message``: the text
    ``forge-policy git commit-msg FILE`` read from the message file.
    """
    if event.event_name in GIT_HOOK_EVENTS:
        message = event.payload.get("commit_message")
        return message if isinstance(message, str) else ""
    commands = event_commands(event)
    if not commands:
        return ""  # a Read: the command model is not even imported
    from forge_policy.commands import commits

    cwd = event_cwd(event)

    def read() -> str:
        messages: list[str] = []
        for command in commands:
            # the call's one lexer reading, unless it read a substitution: this parser reads
            # `$(cat FILE)` its own way
            words, substituted = command_words(event, command, cwd)
            found = commits(command, cwd, distinct=True, read=None if substituted else words)
            messages += [commit.message for commit in found if commit.message]
        return "\n\n".join(dict.fromkeys(messages))

    # read from the command texts alone (a message file, -F, is read again each call)
    return kept_value("commit_message", event, read)
