"""Plain git hook installation: ``commit-msg`` and ``pre-commit`` call ``forge-policy git …``.

The hooks directory is git's own answer (``git rev-parse --git-path hooks``), so
``core.hooksPath`` and worktrees are honoured. Our lines live in a marked block::

    # >>> forge-policy >>>
    ...
    # <<< forge-policy <<<

A new hook is ``#!/bin/sh`` plus the block. An existing shell hook keeps every line it has: the
block goes right after its shebang (so a trailing ``exit 0`` cannot skip it), or replaces our
previous block in place. Running the installer again changes nothing. A hook written in another
language (Python, Node …) is never edited: it is reported as skipped with the line to add.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

import attrs

from forge_policy.errors import GitHookError

BEGIN = "# >>> forge-policy >>>"
END = "# <<< forge-policy <<<"
HOOKS = ("commit-msg", "pre-commit")
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "busybox"})


@attrs.frozen(eq=False, repr=False)
class HookChange:
    """What :func:`install_git_hooks` did to one hook: ``created``, ``updated``, ``unchanged``
    or ``skipped`` (with the reason).

    >>> HookChange("pre-commit", ".git/hooks/pre-commit", "created")
    <HookChange pre-commit created>
    """

    hook: str
    path: str
    action: str
    detail: str = ""

    def __repr__(self) -> str:
        return f"<HookChange {self.hook} {self.action}>"


def default_command() -> list[str]:
    """How the hooks call forge-policy: the console script beside this Python, else ``-m``."""
    script = os.path.join(os.path.dirname(sys.executable), "forge-policy")
    if os.path.isfile(script) and os.access(script, os.X_OK):
        return [script]
    return [sys.executable, "-m", "forge_policy.cli.git_cmds"]


def hook_block(hook: str, command: list[str] | None = None) -> str:
    """The marked block for ``hook`` (``commit-msg`` passes git's message file, ``"$1"``).

    When the recorded interpreter is gone, a ``forge-policy`` on ``PATH`` is used; with neither,
    the check is skipped with a warning rather than refusing every commit.

    >>> print(hook_block("pre-commit", ["/v/bin/forge-policy"]))  # doctest: +ELLIPSIS
    # >>> forge-policy >>>
    ...
    if [ -x /v/bin/forge-policy ]; then
      /v/bin/forge-policy git pre-commit || exit $?
    ...
    """
    argv = command or default_command()
    args = f'git {hook} "$1"' if hook == "commit-msg" else f"git {hook}"
    quoted = " ".join(shlex.quote(part) for part in argv)
    return "\n".join(
        [
            BEGIN,
            "# Added by `forge-policy git install`; the rest of this file is yours.",
            f"if [ -x {shlex.quote(argv[0])} ]; then",
            f"  {quoted} {args} || exit $?",
            "elif command -v forge-policy >/dev/null 2>&1; then",
            f"  forge-policy {args} || exit $?",
            "else",
            f'  echo "forge-policy: not found; {hook} check skipped" >&2',
            "fi",
            END,
        ]
    )


def hooks_dir(repo_root: str) -> str:
    """The repository's hooks folder (absolute)."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--git-path", "hooks"],
            cwd=repo_root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitHookError(f"cannot run git in {repo_root}: {exc}") from None
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
        raise GitHookError(f"{repo_root}: not a git repository ({' '.join(reason)})")
    path = done.stdout.decode("utf-8", "replace").strip()
    return os.path.normpath(os.path.join(repo_root, path))


def install_git_hooks(repo_root: str, *, command: list[str] | None = None) -> list[HookChange]:
    """Install (or refresh) the ``commit-msg`` and ``pre-commit`` hooks; idempotent.

    Raises :class:`GitHookError` when ``repo_root`` is not in a git work tree.
    """
    folder = hooks_dir(repo_root)
    os.makedirs(folder, exist_ok=True)
    return [_install_one(os.path.join(folder, hook), hook, command) for hook in HOOKS]


def _install_one(path: str, hook: str, command: list[str] | None) -> HookChange:
    block = hook_block(hook, command)
    try:
        with open(path, encoding="utf-8") as handle:
            old: str | None = handle.read()
    except FileNotFoundError:
        old = None
    except (OSError, UnicodeDecodeError) as exc:
        return HookChange(hook, path, "skipped", f"cannot read it: {exc}")
    if old is None:
        text, action = f"#!/bin/sh\n{block}\n", "created"
    elif BEGIN in old and END in old.split(BEGIN, 1)[1]:
        head, rest = old.split(BEGIN, 1)
        text = head + block + rest.split(END, 1)[1]
        action = "unchanged" if text == old else "updated"
    else:
        first = old.split("\n", 1)[0]
        if first.startswith("#!") and not _is_shell(first):
            line = block.splitlines()[3].strip()
            return HookChange(hook, path, "skipped", f"not a shell script; add yourself: {line}")
        if first.startswith("#!"):
            rest = old.split("\n", 1)[1] if "\n" in old else ""
            text = f"{first}\n{block}\n{rest}"
        else:
            text = f"#!/bin/sh\n{block}\n{old}"
        action = "updated"
    try:
        if action != "unchanged":
            tmp = f"{path}.forge-policy-tmp"
            with open(tmp, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, path)
        mode = os.stat(path).st_mode
        if mode & 0o111 != 0o111:
            os.chmod(path, mode | 0o755)
    except OSError as exc:
        raise GitHookError(f"cannot write {path}: {exc.strerror or exc}") from None
    return HookChange(hook, path, action)


def _is_shell(shebang: str) -> bool:
    words = shebang[2:].split()
    if not words:
        return False
    name = os.path.basename(words[0])
    if name == "env":
        names = [w for w in words[1:] if not w.startswith("-")]
        name = os.path.basename(names[0]) if names else ""
    return name in _SHELLS


def uninstall_git_hooks(repo_root: str) -> list[HookChange]:
    """Take forge-policy's marked block out of each hook (the inverse of
    :func:`install_git_hooks`): every other line stays; a hook left with nothing but its shebang
    is deleted. A hook without the block is ``unchanged``. Raises :class:`GitHookError` when
    ``repo_root`` is not in a git work tree."""
    folder = hooks_dir(repo_root)
    changes = []
    for hook in HOOKS:
        path = os.path.join(folder, hook)
        try:
            with open(path, encoding="utf-8") as handle:
                old = handle.read()
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError) as exc:
            changes.append(HookChange(hook, path, "skipped", f"cannot read it: {exc}"))
            continue
        if BEGIN not in old or END not in old.split(BEGIN, 1)[1]:
            changes.append(HookChange(hook, path, "unchanged"))
            continue
        head, rest = old.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        text = head + (tail[1:] if tail.startswith("\n") else tail)
        try:
            if text.strip() in ("", "#!/bin/sh"):
                os.unlink(path)
                changes.append(HookChange(hook, path, "removed"))
                continue
            tmp = f"{path}.forge-policy-tmp"
            with open(tmp, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.chmod(tmp, os.stat(path).st_mode)
            os.replace(tmp, path)
        except OSError as exc:
            raise GitHookError(f"cannot write {path}: {exc.strerror or exc}") from None
        changes.append(HookChange(hook, path, "updated", "forge-policy's block taken out"))
    return changes
