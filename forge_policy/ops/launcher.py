"""The committed hook launcher: what a harness's *shared* settings file runs, on every machine.

A settings file that is committed (``.claude/settings.json``, ``.codex/hooks.json``, …) is read
on every clone, so the command in it must name no path of one machine: a venv path from the
machine that ran ``init`` does not exist on a teammate's, and most harnesses treat a command
that cannot start (``sh`` exit 127) as a *non-blocking* error: the hook silently stops
enforcing. ``init`` (``--shared``, the default) writes instead a small POSIX ``sh`` script into
the project, ``<FORGE_ROOT>/bin/forge-policy-hook``, committed with it, and makes each
harness's command run it by a project-relative path (:func:`command`, :data:`PROJECT_REFS`).
Claude Code's entry is in its *exec form* (:func:`exec_form`): ``command`` the launcher's path
by way of the ``${CLAUDE_PROJECT_DIR}`` placeholder, ``args`` its arguments; Claude Code
substitutes the placeholder and spawns the launcher directly, without starting the user's shell
(bash, zsh) first for every tool call.

The launcher runs this machine's forge-policy, first found of:

1. ``$FORGE_POLICY`` (a ``forge-policy`` executable, for an unusual installation);
2. the machine record ``<FORGE_ROOT>/runtime/hook-client`` (git-ignored, written by ``init`` on
   this machine): the warm-worker client (this venv's interpreter and
   ``forge_policy/worker/launch.py``) or this venv's ``forge-policy``, when they still exist;
3. ``forge-policy`` on ``PATH`` (``forge-policy hook``: evaluated in-process, no worker).

With none of them it **exits 2** with a message naming what to install and run: exit 2 blocks
a ``PreToolUse`` in Claude Code, Codex (with the reason on stderr), Gemini CLI and Cursor, so a
teammate without forge-policy is refused loudly rather than let through in silence. Copilot CLI
and Antigravity read a refusal from JSON: for their pre-tool event it prints their deny (exit 0).
``forge-policy doctor`` runs the command as the harness would and says "not enforced" with the
fix when it does not answer.

>>> print(command("claude-code", ".forge"))
"$CLAUDE_PROJECT_DIR"/.forge/bin/forge-policy-hook
>>> exec_form("claude-code", ".forge")
('${CLAUDE_PROJECT_DIR}/.forge/bin/forge-policy-hook', [])
>>> print(command("cursor", ".forge"))
.forge/bin/forge-policy-hook --harness cursor
>>> "exit 2" in SCRIPT and "hook-client" in SCRIPT
True
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

#: The launcher, relative to the forge root.
LAUNCHER = Path("bin") / "forge-policy-hook"
#: The machine record, relative to the forge root (in the git-ignored runtime folder).
RECORD = Path("runtime") / "hook-client"
#: The exit status of a launcher that finds no forge-policy: a block where the harness has one.
NOT_FOUND = 2
#: How each harness's command reaches the project folder (where the launcher is): an
#: environment variable the harness sets for hooks, else the folder it runs them from.
#: Claude Code: ``$CLAUDE_PROJECT_DIR`` (hooks may run in a subfolder); Gemini CLI:
#: ``$GEMINI_PROJECT_DIR``; Codex runs hooks in the session's working directory, which may be
#: a subfolder, and finds its project layer in the repository: the git top level; Cursor runs
#: project hooks from the project root; Copilot CLI from the handler's ``cwd`` (``.``: the
#: repository root, written beside the command); Antigravity from its workspace (a command
#: that cannot start there leaves no decision, which Antigravity refuses).
PROJECT_REFS = {
    "claude-code": '"$CLAUDE_PROJECT_DIR"/',
    "codex": '"$(git rev-parse --show-toplevel 2>/dev/null || pwd)"/',
    "gemini": '"$GEMINI_PROJECT_DIR"/',
    "cursor": "",
    "copilot": "",
    "antigravity": "",
}
#: The harnesses whose hook entry has an exec form (``command`` spawned with the list ``args``,
#: no shell; Claude Code from 2.1.139, so on every version that honours ``onFailure``, 2.1.295)
#: and the placeholder that reaches the project folder in it: Claude Code substitutes
#: ``${CLAUDE_PROJECT_DIR}`` (braces only, a plain string: no quoting) in ``command`` and in each
#: of ``args``.
EXEC_REFS = {"claude-code": "${CLAUDE_PROJECT_DIR}/"}
#: The environment each harness gives a hook (beyond its own), as ``doctor`` recreates it.
HARNESS_ENV = {
    "claude-code": ("CLAUDE_PROJECT_DIR",),
    "codex": (),
    "gemini": ("GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"),
    "cursor": ("CURSOR_PROJECT_DIR", "CLAUDE_PROJECT_DIR"),
    "copilot": (),
    "antigravity": (),
}


def hook_env(harness: str, project: Path | str) -> dict[str, str]:
    """The variables ``harness`` sets for a hook of the project ``project`` (the project folder
    under each name of :data:`HARNESS_ENV`), as ``doctor`` and tests recreate them.

    >>> hook_env("gemini", "/p")
    {'GEMINI_PROJECT_DIR': '/p', 'CLAUDE_PROJECT_DIR': '/p'}
    """
    return dict.fromkeys(HARNESS_ENV.get(harness, ()), os.fspath(project))


SCRIPT = """\
#!/bin/sh
# forge-policy's hook launcher, written by `forge-policy init`. Commit it: the harness settings
# files run it by a project-relative path, so they hold no path of one machine. It runs this
# machine's forge-policy: $FORGE_POLICY, else the one `forge-policy init` recorded here
# (.forge/runtime/hook-client, git-ignored: the warm-worker client), else `forge-policy` on
# PATH. Without any it exits 2, which blocks the tool call: install forge-policy, then run
# `forge-policy init` in this project (it changes no committed file) or `forge-policy doctor`.
# With `statusline` first it is Claude Code's statusLine command instead (one line, exit 0).
# its folder without `dirname`: a command substitution forks and runs a program, ~1 ms a call
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
record="$here/../runtime/hook-client"
verb=hook
if [ "${1:-}" = statusline ]; then verb=statusline; shift; fi
if [ -n "${FORGE_POLICY:-}" ]; then
  exec "$FORGE_POLICY" "$verb" "$@"
fi
if [ -r "$record" ]; then
  { IFS= read -r program; IFS= read -r script; } < "$record"
  if [ -n "$script" ] && [ -x "$program" ] && [ -f "$script" ]; then
    if [ "$verb" = statusline ]; then set -- statusline "$@"; fi
    exec "$program" -I -S "$script" "$@"
  elif [ -z "$script" ] && [ -n "$program" ] && [ -x "$program" ]; then
    exec "$program" "$verb" "$@"
  fi
fi
if command -v forge-policy >/dev/null 2>&1; then
  exec forge-policy "$verb" "$@"
fi
if [ "$verb" = statusline ]; then
  echo "forge-policy: not installed on this machine"
  exit 0
fi
why="forge-policy is not installed on this machine (no forge-policy on PATH), so this project's \
policy hook cannot run and the call is blocked. Install it (pipx install forge-policy), then run: \
forge-policy doctor"
echo "$why" >&2
harness=claude-code event= previous=
for arg in "$@"; do
  case $previous in --harness) harness=$arg ;; --event) event=$arg ;; esac
  previous=$arg
done
case $harness:$event in  # the harnesses that read a refusal from JSON alone
  copilot:preToolUse)
    printf '{"permissionDecision":"deny","permissionDecisionReason":"%s"}\n' "$why"
    exit 0 ;;
  antigravity:PreToolUse)
    printf '{"decision":"deny","reason":"%s"}\n' "$why"
    exit 0 ;;
esac
exit 2
"""


def path(root: Path) -> Path:
    """The launcher of the forge root ``root``."""
    return root / LAUNCHER


def relative(project: Path, root: Path) -> str | None:
    """The launcher's path relative to ``project`` (``/``-separated), or None when the forge
    root is outside the project (then no project-relative command can reach it).

    >>> relative(Path("/p"), Path("/p/.forge")), relative(Path("/p"), Path("/elsewhere"))
    ('.forge/bin/forge-policy-hook', None)
    """
    rel = os.path.relpath(os.path.abspath(root / LAUNCHER), os.path.abspath(project))
    if rel.startswith(".."):
        return None
    return rel.replace(os.sep, "/")


def command(harness: str, launcher: str, git_prefix: str = "") -> str:
    """The portable command of ``harness`` for the launcher at ``launcher`` (relative to the
    project; a forge root such as ``.forge`` stands for its launcher), with ``--harness``
    for any harness but Claude Code. ``git_prefix``: the project's folder relative to the git
    top level (Codex reaches the project from there).

    >>> command("codex", ".forge", "services/api").split(")")[1]
    '"/services/api/.forge/bin/forge-policy-hook --harness codex'
    """
    if not launcher.endswith(LAUNCHER.name):
        launcher = f"{launcher.rstrip('/')}/{LAUNCHER.as_posix()}"
    if harness == "codex" and git_prefix.strip("/") not in ("", "."):
        launcher = f"{git_prefix.strip('/')}/{launcher}"
    out = PROJECT_REFS.get(harness, "") + shlex.quote(launcher)
    return out + ("" if harness == "claude-code" else f" --harness {harness}")


def exec_form(harness: str, launcher: str) -> tuple[str, list[str]]:
    """``(command, args)`` of ``harness``'s exec-form entry (:data:`EXEC_REFS`) for the launcher
    at ``launcher`` (as for :func:`command`): the path is not shell-quoted, no shell reads it.

    >>> exec_form("claude-code", "my forge/bin/forge-policy-hook")[0]
    '${CLAUDE_PROJECT_DIR}/my forge/bin/forge-policy-hook'
    """
    if not launcher.endswith(LAUNCHER.name):
        launcher = f"{launcher.rstrip('/')}/{LAUNCHER.as_posix()}"
    args = [] if harness == "claude-code" else ["--harness", harness]
    return EXEC_REFS[harness] + launcher, args


def substituted(harness: str, value: str, project: Path | str) -> str:
    """``value`` of a project's exec-form entry of ``harness`` with the placeholder it
    substitutes (:data:`EXEC_REFS`) replaced by ``project`` as a plain string: what the harness
    spawns, for ``doctor``.

    >>> substituted("claude-code", "${CLAUDE_PROJECT_DIR}/.forge/x", "/a $b")
    '/a $b/.forge/x'
    """
    return value.replace(EXEC_REFS[harness].rstrip("/"), os.fspath(project))


def git_prefix(project: Path) -> str:
    """``project`` relative to its git top level (``""`` at the top or outside a repository)."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "rev-parse", "--show-prefix"],
            cwd=project,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip().strip("/") if done.returncode == 0 else ""


def write(root: Path) -> bool:
    """Write (or refresh) the launcher under ``root``, executable; returns whether it changed."""
    target = path(root)
    try:
        if target.read_text(encoding="utf-8") == SCRIPT and os.access(target, os.X_OK):
            return False
    except OSError:
        pass
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    tmp.write_text(SCRIPT, encoding="utf-8")
    tmp.chmod(0o755)
    os.replace(tmp, target)
    return True


def executable() -> str:
    """The ``forge-policy`` command this process runs from, as a shell-quoted absolute path
    (:func:`executable_argv`, joined)."""
    return shlex.join(executable_argv())


def executable_argv() -> list[str]:
    """The ``forge-policy`` command this process runs from: an absolute path, looked up beside
    :data:`sys.executable` (the virtual environment's ``bin``), then on ``PATH``; failing both
    ``<python> -m forge_policy.cli``. Never a bare ``python3``."""
    bindir = Path(sys.executable).parent
    for name in ("forge-policy", "forge-policy.exe"):
        candidate = bindir / name
        if candidate.is_file():
            return [str(candidate.absolute())]
    found = shutil.which("forge-policy")
    if found:
        return [os.path.abspath(found)]
    return [os.path.abspath(sys.executable), "-m", "forge_policy.cli"]


def record_text(*, worker: bool) -> str:
    """This machine's record: the warm-worker client (interpreter, then ``launch.py``) when
    ``worker``, else this venv's ``forge-policy`` executable (one line)."""
    if worker:
        from forge_policy.worker import client

        launch = os.path.join(os.path.dirname(os.path.abspath(client.__file__)), "launch.py")
        return f"{os.path.abspath(sys.executable)}\n{launch}\n"
    program = executable_argv()
    if len(program) != 1:  # ``python -m forge_policy.cli``: the launcher's PATH lookup instead
        return ""
    return f"{program[0]}\n"


def record(root: Path, *, worker: bool) -> bool:
    """Write this machine's record under ``root`` (removed when there is nothing to record);
    returns whether it changed. Paths holding a line break cannot be recorded (skipped)."""
    target = root / RECORD
    text = record_text(worker=worker)
    if text.count("\n") > 2 or "\r" in text:
        text = ""
    try:
        old = target.read_text(encoding="utf-8")
    except OSError:
        old = None
    if not text:
        if old is None:
            return False
        target.unlink()
        return True
    if old == text:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, target)
    return True
