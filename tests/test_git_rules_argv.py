"""The git argv normaliser (``forge_policy/commands/git_argv.py``): a git command line rendered
as git reads it, which is what the git rules of the built-in catalog match."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from forge_policy.commands.git_argv import is_git, normalise_git, parse
from forge_policy.model import Event


def rendered(command: str, cwd: str = "") -> str:
    return " ".join(normalise_git(shlex.split(command), cwd))


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        # git's own options are stripped, the program read as git
        ("git -C sub -c core.pager=cat --no-pager reset --hard", "git reset --hard"),
        ("git -Csub -cuser.name=x reset --hard", "git reset --hard"),
        ("git --git-dir .git --work-tree . --bare clean -f", "git clean --force"),
        ("git --git-dir=.git --namespace=n -P push -f", "git push --force"),
        ("git -- reset --hard", "git reset --hard"),
        ("/opt/homebrew/bin/git reset --hard", "git reset --hard"),
        ("GIT Reset --Hard", "git reset --hard"),
        ("git.exe clean -f", "git clean --force"),
        ("git --frobnicate reset --hard", "git reset --hard"),  # unknown: read on, fail closed
        # nothing runs
        ("git --version", "git --version"),
        ("git -C x", "git"),
        ("git reset --hard --help", "git reset --help"),
        ("git checkout -h", "git checkout --help"),
        ("git push -fh", "git push --force -h"),  # -h is the usage only alone
        ("git reset -- --help", "git reset -- --help"),
        # short options spelled long, clusters split, values attached
        ("git clean -xdf", "git clean -x -d --force"),
        ("git clean -e '*.log' -n", "git clean --exclude=*.log --dry-run"),
        ("git push -uf origin main", "git push --set-upstream --force origin main"),
        ("git push -o ci.skip origin", "git push --push-option=ci.skip origin"),
        ("git branch -D old", "git branch --delete --force old"),
        ("git branch -M main", "git branch -M main"),  # a rename mode, not --force
        ("git checkout -qbfeat-f", "git checkout --quiet -bfeat-f"),
        ("git switch -cfix", "git switch -cfix"),
        ("git switch -qf main", "git switch --quiet --discard-changes main"),
        ("git reflog expire --expire now --all", "git reflog expire --expire=now --all"),
        # unique abbreviations, negations, options before operands
        ("git reset --ha HEAD~2", "git reset --hard HEAD~2"),
        ("git push origin --forc", "git push --forc origin"),  # ambiguous: left as typed
        ("git push --force-w origin", "git push --force-with-lease origin"),
        ("git push -f --no-force origin", "git push --no-force origin"),
        ("git clean . -f", "git clean --force ."),
        ("git reset \u2010\u2010hard", "git reset --hard"),  # Unicode hyphens
        # what git leaves implicit
        ("git checkout main src/a.py", "git checkout main -- src/a.py"),
        ("git checkout .", "git checkout -- ."),
        ("git checkout './*.py'", "git checkout -- ./*.py"),
        ("git checkout main", "git checkout main"),
        ("git checkout -", "git checkout -"),
        ("git checkout -b new base extra", "git checkout -bnew base extra"),
        ("git checkout --track inherit main", "git checkout --track=inherit main"),
        ("git restore a.py", "git restore --worktree a.py"),
        ("git restore -S a.py", "git restore --staged a.py"),
        ("git restore", "git restore"),  # no pathspec: git refuses
        ("git -c clean.requireForce=false clean -d", "git clean -d --force"),
        ("git -c clean.requireForce=false clean -n", "git clean --dry-run"),
        ("git -c alias.wipe='reset --hard' wipe HEAD", "git reset --hard HEAD"),
        ("git -c 'alias.sh=!rm -rf x' sh", "git sh"),  # a shell alias is not expanded
        # nested subcommands, and subcommands it does not know, whose words stay as they are
        ("git stash drop -q stash@{1}", "git stash drop --quiet stash@{1}"),
        ("git worktree remove -f ../wt", "git worktree remove --force ../wt"),
        ("git stash list -p", "git stash list -p"),
        ("git commit -qm 'git reset --hard'", "git commit -qm git reset --hard"),
    ],
)
def test_canonical_rendering(command: str, expected: str) -> None:
    assert rendered(command) == expected


def test_other_programs_are_left_alone() -> None:
    argv = ["git-lfs", "-fd"]
    assert normalise_git(argv) is argv
    assert not is_git("legit") and is_git("/usr/bin/git")


def test_what_was_stripped_is_kept() -> None:
    command = parse(["git", "-C", "repo", "--no-pager", "-c", "a.b=1", "reset", "--hard"])
    assert command.argv == ("git", "reset", "--hard")
    assert command.stripped == ("-C", "repo", "--no-pager", "-c", "a.b=1")
    assert command.alias == ""


def test_a_checkout_operand_that_is_a_file_is_a_path(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "docs").mkdir()
    assert rendered("git checkout notes.txt", str(tmp_path)) == "git checkout -- notes.txt"
    # a directory may share its name with a branch, and then git switches
    assert rendered("git checkout docs", str(tmp_path)) == "git checkout docs"
    assert rendered("git checkout missing", str(tmp_path)) == "git checkout missing"
    # -C moves where git looks
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "a.c").write_text("x")
    assert rendered("git -C sub checkout a.c", str(tmp_path)) == "git checkout -- a.c"


def test_the_shell_fact_holds_the_canonical_line(tmp_path: Path) -> None:
    from forge_policy.facts.commands import provide_shell_commands

    event = Event(
        "PreToolUse",
        "s",
        tool_name="Bash",
        tool_input={"command": "cd sub && \"git\" -C .. 'reset' --hard 2>/dev/null"},
        cwd=str(tmp_path),
    )
    assert provide_shell_commands(event) == ["git reset --hard > /dev/null"]
