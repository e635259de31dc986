"""The command model follows launchers, code-running environment variables, git's own ways to
run code, and the textual safety net (issue 23, SPEC §6 "Reading fails closed").

Each table holds at least three spellings of a route and, apart, the harmless twins that must
read as what they are: no guarded program, and a complete reading.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from forge_policy._budget import CURRENT
from forge_policy._budget import Run as Budget
from forge_policy.commands import runs
from forge_policy.commands.git_argv import code_key, git_code, normalise_git, with_aliases
from forge_policy.commands.launchers import awk_commands, code_environment, cron_commands, launch
from forge_policy.commands.safety_net import deobfuscated, hidden_command


def read(command: str, cwd: str = "/p") -> tuple[list[str], list[str]]:
    """``(lines of every run, the reasons the reading is incomplete)``."""
    budget = Budget(10_000, [])
    token = CURRENT.set(budget)
    try:
        lines = [run.line for run in runs(command, cwd)]
    finally:
        CURRENT.reset(token)
    return lines, budget.cuts


# a launcher runs its argument, its string, its stdin or its file: each reaches `rm -r -f ~`
LAUNCHED = [
    "setsid rm -rf ~",
    "setsid -f -w rm -rf ~",
    "/usr/bin/setsid --fork rm -rf ~",
    "flock /tmp/x.lock rm -rf ~",
    "flock -xw5 x.lock rm -rf ~",
    "flock x.lock -c 'rm -rf ~'",
    "flock --timeout 3 -c 'rm -rf ~' x.lock",
    "script -qc 'rm -rf ~' /dev/null",
    "script -q -c 'rm -rf ~'",
    "script --command='rm -rf ~' log.txt",
    "echo 'rm -rf ~' | script -q /dev/null",
    "watch 'rm -rf ~'",
    "watch -n1 rm -rf ~",
    "watch -x rm -rf ~",
    "unshare -r rm -rf ~",
    "unshare --map-user=0 --mount rm -rf ~",
    "unshare -w / rm -rf ~",
    "ionice -c3 rm -rf ~",
    "ionice -c 2 -n 7 rm -rf ~",
    "ionice --class idle rm -rf ~",
    "chrt -f 99 rm -rf ~",
    "chrt --idle 0 rm -rf ~",
    "chrt -b 0 rm -rf ~",
    "taskset 0x1 rm -rf ~",
    "taskset -c 0-3 rm -rf ~",
    "taskset -a 1 rm -rf ~",
    "nohup rm -rf ~ &",
    "stdbuf -oL rm -rf ~",
    "firejail --noprofile rm -rf ~",
    "chroot / rm -rf ~",
    "chroot --userspec=0:0 / rm -rf ~",
    "su -c 'rm -rf ~' root",
    "su - root -c 'rm -rf ~'",
    "runuser -u me -- rm -rf ~",
    "runuser -l me -c 'rm -rf ~'",
    "echo 'rm -rf ~' | su root",
    "sg docker -c 'rm -rf ~'",
    "sg docker 'rm -rf ~'",
    "sg - docker 'rm -rf ~'",
    "doas -u root rm -rf ~",
    "at now <<< 'rm -rf ~'",
    "echo 'rm -rf ~' | at now + 1 minute",
    "batch <<EOF\nrm -rf ~\nEOF",
    "crontab - <<< '* * * * * rm -rf ~'",
    "printf '@reboot rm -rf ~\\n' | crontab -",
    "crontab -u me - <<EOF\nSHELL=/bin/sh\n*/5 * * * * rm -rf ~\nEOF",
    "systemd-run --user rm -rf ~",
    "systemd-run -p Nice=5 --unit x rm -rf ~",
    "systemd-run --on-active=30 rm -rf ~",
    "tmux new -d 'rm -rf ~'",
    "tmux new-session -d -s x 'rm -rf ~'",
    "tmux send-keys -t x 'rm -rf ~' Enter",
    "screen -dm rm -rf ~",
    "screen -S x -dm bash -c 'rm -rf ~'",
    "screen -S x -X stuff 'rm -rf ~\n'",
    "nice -n 5 setsid taskset 1 rm -rf ~",
    "awk 'BEGIN{system(\"rm -rf ~\")}'",
    "gawk 'END { system(\"rm -rf ~\") }' f",
    "echo | awk '{ \"rm -rf ~\" | getline x }'",
    "strace -f -o /dev/null rm -rf ~",
    "eatmydata rm -rf ~",
    "xvfb-run -a rm -rf ~",
]


@pytest.mark.parametrize("command", LAUNCHED)
def test_a_launcher_runs_what_it_launches(command: str) -> None:
    lines, _cuts = read(command)
    assert "rm -r -f ~" in lines, lines


# the harmless twins: the launched program is read, nothing more
HARMLESS = {
    "flock .lock make": "make",
    "flock -n /tmp/x.lock -c 'make test'": "make test",
    "nice make": "make",
    "watch -n1 ls": "ls",
    "setsid -f code .": "code .",
    "taskset -c 0 pytest -q": "pytest -q",
    "ionice -c3 tar czf a.tgz src": "tar czf a.tgz src",
    "script -q /dev/null": "script -q /dev/null",
    "awk '{print $1}' f": "awk {print $1} f",
    "at -l": "at -l",
    "crontab -l": "crontab -l",
    "tmux new -d -s dev": "tmux new -d -s dev",
    "sed -i 's/a/b/g' f": "sed -i s/a/b/g f",
    "EDITOR=vim git commit": "git commit",
    "PYTHONPATH=src pytest": "pytest",
    "git config user.name X": "git config user.name X",
    "git -c user.name=x commit -m hi": "git commit -m hi",
}


@pytest.mark.parametrize(("command", "line"), HARMLESS.items())
def test_harmless_launches_read_as_what_they_run(command: str, line: str) -> None:
    lines, cuts = read(command)
    assert line in lines and cuts == []
    assert not any(x.startswith(("rm ", "git reset")) for x in lines)


@pytest.mark.parametrize(
    "argv",
    [["taskset", "-p", "1234"], ["ionice", "-p", "1"], ["chrt", "-p", "5", "1"], ["at", "-l"]],
)
def test_a_launcher_acting_on_a_process_launches_nothing(argv: list[str]) -> None:
    found = launch(argv)
    assert found is not None and found.argv == [] and found.script is None


def test_a_crontab_gives_the_command_of_each_entry() -> None:
    text = "# m h dom mon dow command\nMAILTO=me\n0 3 * * 1 make backup\n@daily rm -rf ~/tmp\n"
    assert cron_commands(text) == ["make backup", "rm -rf ~/tmp"]


# ------------------------------------------------------------------ awk and sed


@pytest.mark.parametrize(
    ("program", "commands", "complete"),
    [
        ('BEGIN{system("rm -rf ~")}', ["rm -rf ~"], True),
        ('{print "x" | "sort"}', ["sort"], True),
        ('{print $0 | "sh"}', ["sh"], False),  # what is printed into a shell is not shown
        ("{system($0)}", [], False),
        ("{c = $1; system(c)}", [], False),
        ("{print $1}", [], True),
        ("{s += $2} END {print s}", [], True),
    ],
)
def test_awk_runs_its_literal_commands_and_marks_the_built_ones(
    program: str, commands: list[str], complete: bool
) -> None:
    assert awk_commands(program) == (commands, complete)


@pytest.mark.parametrize(
    "command",
    [
        'ls | awk \'{print "rm -rf " $1 | "sh"}\'',
        "awk '{system($0)}' cmds.txt",
        "sed 's/.*/rm/e' f",
        "sed -e '1e rm -rf ~' f",
        "gsed --expression='s/x/y/ge' f",
    ],
)
def test_awk_and_sed_running_built_text_make_the_reading_incomplete(command: str) -> None:
    _lines, cuts = read(command)
    assert cuts, command


# ------------------------------------------------------------------ the environment


@pytest.mark.parametrize(
    "command",
    [
        "GIT_SSH_COMMAND='rm -rf ~' git fetch",
        "export GIT_SSH_COMMAND='rm -rf ~'; git pull",
        "env GIT_SSH_COMMAND='rm -rf ~' git clone x",
        "GIT_EDITOR='rm -rf ~' git rebase -i HEAD~2",
        "GIT_SEQUENCE_EDITOR='rm -rf ~' git rebase -i x",
        "EDITOR='rm -rf ~' crontab -e",
        "PAGER='rm -rf ~' git log",
        "export PROMPT_COMMAND='rm -rf ~'",
        "GIT_EXTERNAL_DIFF='rm -rf ~' git diff",
    ],
)
def test_a_variable_holding_a_command_is_read_as_that_command(command: str) -> None:
    lines, _cuts = read(command)
    assert "rm -r -f ~" in lines, lines


@pytest.mark.parametrize(
    "command",
    [
        "BASH_ENV=./x.sh bash -c ls",
        "export BASH_ENV=/tmp/x; bash run.sh",
        "env ENV=/tmp/rc sh -c true",
        "LD_PRELOAD=./evil.so ls",
        "env LD_PRELOAD=/tmp/x.so git status",
        "declare -x LD_PRELOAD=x.so",
        "PYTHONSTARTUP=x.py python",
        "NODE_OPTIONS='--require ./x.js' npm test",
        "PERL5OPT=-Mx perl -e 1",
        "RUBYOPT=-rx ruby -e 1",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=x git log",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.st GIT_CONFIG_VALUE_0='reset --hard' git st",
        "GIT_CONFIG_PARAMETERS=\"'core.sshcommand'='x'\" git fetch",
    ],
)
def test_a_variable_that_loads_unshown_code_makes_the_reading_incomplete(command: str) -> None:
    _lines, cuts = read(command)
    assert cuts, command


@pytest.mark.parametrize(
    "command",
    [
        "PYTHONPATH=src pytest",  # a module path: the files are the project's, like `python x.py`
        "LD_LIBRARY_PATH=/usr/local/lib ./app",
        "NODE_OPTIONS=--max-old-space-size=4096 npm test",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0=x git commit",
        "EDITOR=vim git commit",
        "GIT_PAGER=cat git log",
        "export EDITOR=",
    ],
)
def test_variables_that_run_no_hidden_code_read_complete(command: str) -> None:
    _lines, cuts = read(command)
    assert cuts == [], cuts


def test_code_environment_reads_prefixes_env_and_export_alike() -> None:
    for words in (
        ["GIT_SSH_COMMAND=x", "git", "fetch"],
        ["env", "-u", "A", "GIT_SSH_COMMAND=x", "git", "fetch"],
        ["export", "GIT_SSH_COMMAND=x"],
    ):
        assert list(code_environment(words)) == [("GIT_SSH_COMMAND", "x", True)]
    assert list(code_environment(["git", "GIT_SSH_COMMAND=x"])) == []  # an argument, not a variable


# ------------------------------------------------------------------ git's own ways


@pytest.mark.parametrize(
    "command",
    [
        "git -c alias.x='!rm -rf ~' x",
        "git -c 'alias.clean-all=!rm -rf ~' clean-all",
        "git -calias.x='!sh -c \"rm -rf ~\"' x",
        "git -c core.pager='rm -rf ~' log",
        "git -c core.sshCommand='rm -rf ~' fetch",
        "git -c diff.external='rm -rf ~' diff",
        "git -c core.editor='rm -rf ~' commit",
        "git -c filter.x.smudge='rm -rf ~' checkout .",
        "git -c pager.log='rm -rf ~' log",
        "git config alias.x '!rm -rf ~' && git x",
        "git config --local alias.x '!rm -rf ~'; git x",
    ],
)
def test_git_runs_the_commands_its_config_and_aliases_name(command: str) -> None:
    lines, _cuts = read(command)
    assert "rm -r -f ~" in lines, lines


@pytest.mark.parametrize(
    "command",
    [
        "git -c core.hooksPath=/tmp/h commit -m x",
        "git -c core.fsmonitor=./x.sh status",
        "git -c include.path=/tmp/cfg log",
        "git --config-env=core.pager=PAGER_CMD log",
    ],
)
def test_git_loading_unshown_code_makes_the_reading_incomplete(command: str) -> None:
    _lines, cuts = read(command)
    assert cuts, command


@pytest.mark.parametrize(
    ("command", "line"),
    [
        ("git config alias.rh 'reset --hard' && git rh", "git reset --hard"),
        ("git config --global alias.nuke 'clean -fdx'; git nuke", "git clean --force -d -x"),
        ("git config alias.p 'push -f' && git p origin x", "git push --force origin x"),
        ("git -c alias.rh='reset --hard' rh", "git reset --hard"),
    ],
)
def test_an_alias_defined_in_the_call_expands_where_it_is_used(command: str, line: str) -> None:
    lines, _cuts = read(command)
    assert line in lines, lines


def test_an_alias_from_the_repository_config_expands(tmp_path: Path) -> None:
    git = tmp_path / ".git"
    git.mkdir()
    (git / "config").write_text("[core]\n\tbare = false\n[alias]\n\tnuke = reset --hard\n")
    lines, _cuts = read("git nuke", str(tmp_path / "sub"))
    assert "git reset --hard" in lines
    # an alias the call and the config do not show is git's external command: read as written
    assert read("git st", str(tmp_path))[0] == ["git st"]
    # an alias named like a git command is ignored, as git ignores it
    assert with_aliases(["git", "status"], {"status": "reset --hard"}, "") == ["git", "status"]


@pytest.mark.parametrize(
    ("key", "kind"),
    [("core.sshCommand", "command"), ("diff.tool.textconv", "command"), ("alias.x", "alias"),
     ("core.hooksPath", "loads"), ("includeIf.gitdir:x.path", "loads"), ("user.email", ""),
     ("color.ui", "")],
)  # fmt: skip
def test_code_keys(key: str, kind: str) -> None:
    assert code_key(key) == kind


def test_boolean_and_harmless_config_runs_nothing() -> None:
    assert git_code(["git", "-c", "core.fsmonitor=false", "status"]) == []
    assert git_code(["git", "-c", "core.pager=", "log"]) == []
    assert git_code(["git", "-c", "alias.x=!make", "status"]) == []  # the alias is not called


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        ("git read-tree -u --reset HEAD", "git read-tree -u --reset HEAD"),
        ("git checkout-index -af", "git checkout-index --all --force"),
        ("git update-ref -d refs/heads/main", "git update-ref --delete refs/heads/main"),
        ("git -c gc.pruneExpire=now gc", "git gc --prune=now"),
        ("git -c gc.reflogExpire=now gc --quiet", "git gc --quiet --prune=now"),
        ("git -c gc.pruneExpire=never gc", "git gc --prune=never"),
        ("git apply -R", "git apply --reverse"),
        ("git symbolic-ref -d HEAD", "git symbolic-ref --delete HEAD"),
    ],
)
def test_plumbing_is_canonical(argv: str, line: str) -> None:
    assert " ".join(normalise_git(argv.split())) == line


# ------------------------------------------------------------------ the textual safety net


@pytest.mark.parametrize(
    "command",
    [
        "{rm,-rf,~}",
        "rm${IFS}-rf${IFS}~",
        "rm$IFS-rf$IFS~",
        "$'\\x72\\x6d' -rf ~",
        "$'\\162\\155' -rf ~",
        "$(printf '\\x72m') -rf ~",
        "r''m -rf ~",
        'r""m -rf ~',
        "r\\m -rf ~",
        "echo cm0gLXJmIH4= | base64 -d | sh",
        "base64 -d <<< cm0gLXJmIH4= | bash",
        "python3 -c \"import os,base64; os.system(base64.b64decode('cm0gLXJmIH4='))\"",
        "echo 726d202d7266207e | xxd -r -p | sh",
        "echo '~ fr- mr' | rev | sh",
        "foo rm -rf ~",
        "./tool.sh --then rm -rf ~",
        "mystery -x git reset --hard",
        "uv run --with x rm -rf ~",
        "npm exec -- rm -rf ~",
        "poetry run bash -c 'rm -rf ~'",
    ],
)
def test_the_net_reveals_what_obfuscation_or_an_unknown_program_hides(command: str) -> None:
    lines, _cuts = read(command)
    assert "rm -r -f ~" in lines or "git reset --hard" in lines, lines


@pytest.mark.parametrize(
    "command",
    [
        "echo 'rm -rf /'",  # data, and not obfuscated: read once
        "echo {a,b}",
        "echo aGVsbG8gd29ybGQ= | base64 -d",
        "for f in *.py; do ruff $f; done",
        "git rm -r --cached build",
        "docker exec c rm -rf /app",  # runs in the container
        "man rm",
        "grep -r 'rm -rf' .",
        "printf '%s\\n' a b",
        "git log --grep rm",
        "uv run pytest",
        "bundle exec rake test",
        "npm run build",
    ],
)
def test_the_net_leaves_plain_commands_as_read(command: str) -> None:
    lines, _cuts = read(command)
    assert "rm -r -f ~" not in lines and "rm -r -f /" not in lines


def test_deobfuscated_is_none_for_ordinary_text() -> None:
    for text in ("rm -rf build", "git status && make test", "echo 'a b' | sort"):
        assert deobfuscated(text) is None
    assert hidden_command(["echo", "rm", "-rf", "~"]) is None
    assert hidden_command(["git", "rm", "-rf", "."]) is None


# ------------------------------------------------------------------ xargs


@pytest.mark.parametrize(
    "command",
    [
        "echo 'rm -rf ~' | xargs bash -c",
        "printf 'rm -rf ~' | xargs -0 sh -c",
        "echo 'rm -rf ~' | xargs -n 9 sh -xc",
    ],
)
def test_text_piped_into_a_shell_by_xargs_is_read_as_its_script(command: str) -> None:
    lines, _cuts = read(command)
    assert "rm -r -f ~" in lines, lines


def test_a_fixed_script_given_to_xargs_is_not_read_twice() -> None:
    lines, cuts = read("echo a.py | xargs -I{} sh -c 'ruff {}'")
    assert "ruff a.py" in lines and cuts == []
