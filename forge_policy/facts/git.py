"""Git facts: the files staged for a commit, from ``git diff --cached`` run under a timeout, and
the git commands of a call that can discard work, as git reads them (for messages).

Git runs with configuration that cannot execute repository-defined programs (no external diff,
no textconv, no fsmonitor) and without taking optional locks. A repository the agent controls
therefore cannot make the policy engine run its code.
"""

from __future__ import annotations

import os

from forge_policy.errors import FactTimeout
from forge_policy.events import GIT_HOOK_EVENTS
from forge_policy.facts._io import event_commands, event_cwd
from forge_policy.facts._runtime import note, remaining

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.model import Event


_SAFE = ("-c", "core.fsmonitor=false", "-c", "diff.external=", "-c", "core.quotepath=false")


def provide_staged_files(event: Event) -> list[str]:
    """``facts.staged_files``: paths staged for the commit (``[]`` when git fails).

    Git runs only for the events of git hooks (:data:`GIT_HOOK_EVENTS`), in ``event.cwd``, and
    for tool calls whose command runs ``git commit``, in the directory of each
    ``[cd dir &&] git [-C dir] commit``. For ``commit -a`` the tracked files with work-tree
    changes count too. Paths are relative to the repository root, as git prints them.
    """
    cwd = event_cwd(event)
    if event.event_name in GIT_HOOK_EVENTS:
        return staged(cwd, timeout=remaining())
    # imported here: the git commands of a push or a reset (for messages) never need the
    # commit model (``commands.git_commit`` and its class)
    from forge_policy.commands import commits

    found: dict[str, None] = {}
    for command in event_commands(event):
        for commit in commits(command, cwd):
            for path in staged(commit.cwd, include_modified=commit.all, timeout=remaining()):
                found.setdefault(path)
    return list(found)


def provide_git_commands(event: Event) -> list[str]:
    """``facts.git_commands``: the call's git commands whose subcommand can discard work
    (:data:`~forge_policy.commands.DISCARDING_SUBCOMMANDS`), in the canonical form rules match
    (``git -C repo reset --har`` → ``git reset --hard``), so that a refusal names the command
    as it was understood. Display only: the rules live in the behaviors.
    """
    from forge_policy.commands import DISCARDING_SUBCOMMANDS as discarding
    from forge_policy.facts import commands

    # the command model's readings name the route (``… reached through xargs``) where it has them
    readings = getattr(commands, "provide_command_readings", commands.provide_shell_commands)
    found = []
    for line in readings(event):
        words = line.split(" ", 3)
        known = len(words) > 1 and (words[1] in discarding or " ".join(words[1:3]) in discarding)
        if words[0] == "git" and known and " | " not in line:
            found.append(line)
    return found


def staged(cwd: str, *, include_modified: bool = False, timeout: float = 5.0) -> list[str]:
    """Paths (relative to the repository root) staged with status A, C, M or R; ``[]`` on error.

    With ``include_modified``, tracked files changed in the work tree are added too: what
    ``git commit -a`` would stage.
    """
    found = _git_names(cwd, ["--cached"], timeout)
    if include_modified and found is not None:
        found += [p for p in _git_names(cwd, [], timeout) or [] if p not in found]
    return found or []


def _git_names(cwd: str, extra: list[str], timeout: float) -> list[str] | None:
    import subprocess

    options = ["--name-only", "--no-ext-diff", "--no-textconv", "--diff-filter=ACMR", "-z"]
    argv = ["git", *_SAFE, "diff", *extra, *options]
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    try:
        done = subprocess.run(
            argv,
            cwd=cwd or None,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise FactTimeout(f"git diff {' '.join(extra)} timed out after {timeout:.2f} s") from None
    except (OSError, ValueError) as exc:
        note(f"git could not run in {cwd}: {exc}")
        return None
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
        outside = not reason or "unknown option" in reason[0] or "not a git" in reason[0].lower()
        note(
            f"{cwd} is not in a git work tree"
            if outside
            else f"git diff failed in {cwd}: {reason[0]}"
        )
        return None
    return [os.fsdecode(name) for name in done.stdout.split(b"\0") if name]
