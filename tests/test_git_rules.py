"""The git rules of the built-in catalog (no-destructive-git, dangerous-commands' force push,
risky-commands' reset and clean), family by family, in both directions.

Each table row is a command and the behavior that must refuse it, or ``None`` when no behavior
may block it. The commands are run by git (directly, through wrappers, ``sh -c``, ``$(…)``,
heredocs fed to a shell, ssh) or are only data (an ``echo``, a pattern, a commit message).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import forge_policy as fp
from forge_policy.model import Event

CATALOG = fp.builtin_catalog()
GIT = "no-destructive-git"


def blocked_by(command: str, catalog: fp.Catalog = CATALOG, cwd: str = "/tmp") -> str | None:
    evaluator = fp.Evaluator(catalog, profile="standard", clock=lambda: 1000.0)
    event = Event("PreToolUse", "s1", tool_name="Bash", tool_input={"command": command}, cwd=cwd)
    blocking = evaluator.evaluate(event).blocking
    return f"{blocking.behavior_id}:{blocking.level.label}" if blocking else None


def table(blocked: list[str], allowed: list[str]) -> list[tuple[str, str | None]]:
    return [(c, f"{GIT}:hard_block") for c in blocked] + [(c, None) for c in allowed]


FORCE_PUSH = table(
    [
        "git push --force origin feat",
        "git push origin feat -f",
        "git push -fu origin feat",
        "git push origin +feat:feat",
        "git push --mirror backup",
        "git push --force=yes",  # git rejects the value; read as force all the same
        "git push --force-with-lease -f origin feat",  # git ignores the lease under --force
        "git push --force-with-lease origin +feat",
        "git -C ../other --no-pager push -f",
    ],
    [
        "git push origin feat",
        "git push -u origin feat/force-fix",
        "git push --force-with-lease origin feat",
        "git push --force-with-lease=feat:abc123 --force-if-includes origin feat",
        "git push --force --no-force origin feat",
        "git push --for origin feat",  # ambiguous to git, which refuses it
        "git push --tags",
        "git push --follow-tags origin main",
    ],
)

RESET = table(
    [
        "git reset --hard",
        "git reset --hard origin/main",
        "git reset -q --hard HEAD~3",
        "git reset --merge ORIG_HEAD",
        "git reset --har",
        "git -c core.quotepath=off reset --hard",
        "git RESET --HARD",
    ],
    [
        "git reset",
        "git reset HEAD~1",
        "git reset --soft HEAD~2",
        "git reset --keep HEAD~1",  # refuses to touch a file with local changes
        "git reset --mixed HEAD",
        "git reset -- --hard",  # a path named --hard
        "git reset HEAD notes.txt",
    ],
)

CLEAN = table(
    [
        "git clean -f",
        "git clean -dffx",
        "git clean -Xf build",
        "git clean --force -d",
        "git clean -e keep.txt -fd",
        "git clean --forc -d",  # the abbreviation git expands to --force
        "git -c clean.requireForce=false clean -dx",
    ],
    [
        "git clean -n",
        "git clean -dn",
        "git clean --dry-run -x",
        "git clean -i",
    ],
)

BRANCH = table(
    [
        "git branch -D topic",
        "git branch -qD topic",
        "git branch -d -f topic",
        "git branch --delete --force topic",
        "git branch -f topic HEAD~3",
        "git branch --force topic origin/topic",
    ],
    [
        "git branch topic",
        "git branch -d merged",
        "git branch --delete merged",
        "git branch -M main",
        "git branch -vv",
        "git branch --list 'feat/*'",
    ],
)

WORKTREE_DISCARDS = table(
    [
        "git checkout -- src/app.py",
        "git checkout -- .",
        "git checkout .",
        "git checkout HEAD -- src",
        "git checkout HEAD~2 src/app.py",
        "git checkout main src/a.py src/b.py",
        "git checkout --quiet main lib.c",
        "git checkout -f main",
        "git checkout --force topic",
        "git checkout -qf topic",
        "git checkout -f -b fresh",
        "git checkout --pathspec-from-file=list.txt",
        "git checkout -- -weird-name",
        "git switch -f main",
        "git switch --discard-changes topic",
        "git switch -qf topic",
        "git restore src/app.py",
        "git restore .",
        "git restore --worktree src/app.py",
        "git restore -W --staged src/app.py",
        "git restore -SW .",
        "git restore --source=HEAD~1 src/app.py",
        "git stash drop",
        "git stash drop stash@{2}",
        "git stash clear",
        "git worktree remove --force ../wt",
        "git worktree remove -f ../wt",
    ],
    [
        "git checkout main",
        "git checkout -b feature/x",
        "git checkout -bfix",
        "git checkout -B rebuild origin/main",
        "git checkout --orphan pages",
        "git checkout --detach v1.0",
        "git checkout -",
        "git checkout --track origin/topic",
        "git checkout -b a b c d",  # git refuses paths when creating a branch
        "git switch main",
        "git switch -c fix-f",
        "git switch -Cfeature",
        "git switch -- -f",  # a branch named -f
        "git restore --staged src/app.py",
        "git restore -S .",
        "git restore --help",
        "git stash",
        "git stash push -m wip",
        "git stash pop",
        "git stash list",
        "git stash show -p stash@{0}",
        "git worktree remove ../wt",
        "git worktree remove -- -f",  # a worktree named -f
        "git worktree add ../wt topic",
    ],
)

SAFETY_NET = table(
    [
        "git reflog expire --expire=now --all",
        "git reflog expire --expire-unreachable=now --all",
        "git reflog expire --expire 1.second.ago HEAD",
        "git reflog delete HEAD@{1}",
        "git gc --prune=now",
        "git gc --aggressive --prune=all",
    ],
    [
        "git reflog",
        "git reflog show topic",
        "git reflog expire --all",  # git's default expiry: 90 days
        "git reflog expire --expire=never --all",
        "git gc",
        "git gc --prune",
        "git gc --prune=never",
    ],
)

# the same commands reached through the shell, and as mere data
REACHED = table(
    [
        "sudo -u dev git reset --hard",
        "env GIT_DIR=.git nice git clean -fd",
        "timeout 60 git push -f",
        "cd repo && git reset --hard",
        "git status && git checkout -- .",
        "bash -c 'git stash clear'",
        'sh -lc "git -C x reset --hard"',
        "echo $(git reset --hard)",
        "bash <<'EOF'\ngit clean -fdx\nEOF",
        "ssh build 'cd app && git reset --hard origin/main'",
        '"/usr/bin/git" "reset" "--hard"',
        "\\git restore .",
        '"g""it" reset --hard',  # no word "git" in the text: a raw-text prefilter would miss it
        "env -P /usr/local/bin git reset --hard",  # BSD env's search path takes a value
        "env - git clean -fd",  # env - is env -i
        "env -i -- git stash clear",
        # words that only look like assignments: sh runs them as a program that is not found,
        # but shells differ on names, so what follows is read as the command too
        "1A=2 git reset --hard",
        "=x git reset --hard",
        "A-B=2 git push -f",
        # a program not known (./x=y) whose words are a guarded command: the safety net reads
        # them as run (SPEC §6), as it reads `foo rm -rf ~`
        "./x=y git reset --hard",
    ],
    [
        'echo "git reset --hard"',
        "printf '%s\\n' 'git push --force'",
        "grep -rn 'git clean -fdx' docs/",
        "sed -i 's/git checkout -- ./git restore --staged ./' notes.md",
        'git commit -m "Refuse git push --force and git reset --hard"',
        "git commit -m 'docs: never git stash clear'",
        'git tag -a v2 -m "git branch -D is refused"',
        "cat <<'EOF'\ngit reset --hard\ngit clean -fdx\nEOF",
        "tee -a log.txt <<< 'git checkout -- .'",
        "man git-reset",
        "git help reset",
        "git log --grep='reset --hard'",
        "legit reset --hard",
        "git-lfs prune",
        "git push origin main | grep +refs",  # a pipeline's later words are not push's
        "git checkout main | grep -- -x",
        "A-B=2",  # alone it runs nothing
    ],
)

FAMILIES = {
    "force_push": FORCE_PUSH,
    "reset": RESET,
    "clean": CLEAN,
    "branch": BRANCH,
    "worktree_discards": WORKTREE_DISCARDS,
    "safety_net": SAFETY_NET,
    "reached_and_data": REACHED,
}


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        pytest.param(c, e, id=f"{family}: {c[:60]}")
        for family, rows in FAMILIES.items()
        for c, e in rows
    ],
)
def test_git_rules(command: str, expected: str | None) -> None:
    assert blocked_by(command) == expected


def test_a_checkout_of_an_existing_file_is_a_discard(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("print(1)\n")
    assert blocked_by("git checkout app.py", cwd=str(tmp_path)) == f"{GIT}:hard_block"
    assert blocked_by("git checkout topic", cwd=str(tmp_path)) is None


WITHOUT = CATALOG.with_enabled({GIT: False})


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git push -f origin main", "dangerous-commands:hard_block"),
        ("git --no-pager push --force-with-lease -f", "dangerous-commands:hard_block"),
        ("git push origin +main", "dangerous-commands:hard_block"),
        ("git push --mirror", "dangerous-commands:hard_block"),
        ("git reset --hard", "risky-commands:soft_block"),
        ("git reset --merge", "risky-commands:soft_block"),
        ("git -C x clean -xdf", "risky-commands:soft_block"),
        ("git push --force-with-lease origin main", None),
        ("git reset --soft HEAD~1", None),
        ("git clean -n", None),
    ],
)
def test_the_other_behaviors_take_over_when_it_is_off(command: str, expected: str | None) -> None:
    assert blocked_by(command, WITHOUT) == expected


def test_the_reason_names_the_command_as_git_reads_it() -> None:
    evaluator = fp.Evaluator(CATALOG, profile="standard", clock=lambda: 1000.0)
    command = "git -C repo status && git -C repo --no-pager reset --ha"
    event = Event("PreToolUse", "s1", tool_name="Bash", tool_input={"command": command})
    message = evaluator.evaluate(event).message
    first = message.splitlines()[0]
    assert first.startswith("[no-destructive-git] Refused")
    assert "(as git reads it: git reset --hard)" in first
    assert "git stash push" in message and "cannot be overridden" in message
