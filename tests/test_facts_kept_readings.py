"""Command readings and command facts kept across tool calls (issue 28:
``forge_policy.facts.commands._kept`` and ``kept_value``): a command text read from one
directory is read once per process, but only when nothing besides the text decided its
reading. A reading that read a file (a script fed to a shell, ``$(cat F)``, git's configured
aliases), the environment (``~``, ``$HOME``, ``$TMPDIR``), or that was cut, is read again on
every call, so that the next call sees the file or variable as it is then and reports its own
reasons."""

from __future__ import annotations

from pathlib import Path

import pytest

import forge_policy as fp
from forge_policy.engine.inputs import FactCache
from forge_policy.facts import commands
from forge_policy.values import Partial


def bash(command: str, cwd: Path | str) -> fp.Event:
    return fp.Event(
        "PreToolUse", "s", tool_name="Bash", tool_input={"command": command}, cwd=str(cwd)
    )


def fact(command: str, cwd: Path | str, name: str = "executed_commands") -> object:
    return FactCache(bash(command, cwd), fp.builtin_facts())(name)


@pytest.fixture(autouse=True)
def _empty_memo() -> None:
    commands._KEPT_RUNS.clear()
    commands._KEPT_WORDS.clear()
    commands._KEPT_VALUES.clear()


def test_a_plain_reading_is_kept_per_text_and_directory(tmp_path: Path) -> None:
    first = fact("ls -la && git status", tmp_path)
    assert ("ls -la && git status", str(tmp_path)) in commands._KEPT_RUNS
    assert fact("ls -la && git status", tmp_path) == first
    # another directory, another text: their own readings
    other = tmp_path / "sub"
    assert fact("cd .. && rm -rf sub", other, "recursive_deletes") != fact(
        "cd .. && rm -rf sub", tmp_path, "recursive_deletes"
    )
    assert ("cd .. && rm -rf sub", str(other)) in commands._KEPT_RUNS
    assert fact("rm -rf build", tmp_path) == ["rm -r -f build"]


@pytest.mark.parametrize(
    ("command", "name", "change", "expected"),
    [
        ("sh < run.sh", "executed_commands", "rm -rf /", "rm -r -f /"),  # a script on stdin
        ("cat run.sh | bash", "executed_commands", "rm -rf /", "rm -r -f /"),  # piped in
        ("crontab run.sh", "executed_commands", "* * * * * rm -rf /", "rm -r -f /"),
        ("git commit -F run.sh", "commit_message", "wip", "wip"),  # a message file
        ('git commit -m "$(cat run.sh)"', "commit_message", "wip", "wip"),  # $(cat F)
    ],
)
def test_a_reading_of_a_file_is_read_again_when_the_file_changes(
    tmp_path: Path, command: str, name: str, change: str, expected: str
) -> None:
    script = tmp_path / "run.sh"
    script.write_text("echo hello\n")
    assert expected not in str(fact(command, tmp_path, name))
    script.write_text(change + "\n")
    assert expected in str(fact(command, tmp_path, name))


def test_git_aliases_are_read_again_when_the_configuration_changes(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    config = tmp_path / ".git" / "config"
    config.write_text("[alias]\n\tnuke = log\n")
    assert "git reset --hard" not in fact("git nuke", tmp_path)
    config.write_text("[alias]\n\tnuke = reset --hard\n")
    assert "git reset --hard" in fact("git nuke", tmp_path)


@pytest.mark.parametrize("command", ["rm -rf ~/x", "rm -rf $HOME/x", "cd && rm -rf x"])
def test_a_reading_of_home_is_read_again_when_home_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.setenv("HOME", "/home/a")
    assert "forced: /home/a/x by" in str(fact(command, tmp_path, "recursive_deletes"))
    monkeypatch.setenv("HOME", "/home/b")
    assert "forced: /home/b/x by" in str(fact(command, tmp_path, "recursive_deletes"))


def test_tmpdir_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", "/t1")
    assert fact("rm -rf $TMPDIR/x", tmp_path) == ["rm -r -f /t1/x"]
    monkeypatch.setenv("TMPDIR", "/t2")
    assert fact("rm -rf $TMPDIR/x", tmp_path) == ["rm -r -f /t2/x"]


@pytest.mark.parametrize("command", ["$X rm -rf /", 'eval "$CMD"', "rm -rf /{a..z}{a..z}{a..z}"])
def test_a_cut_reading_is_not_kept(tmp_path: Path, command: str) -> None:
    for _ in range(3):
        value = fact(command, tmp_path)
        assert isinstance(value, Partial), (command, value)
    assert (command, str(tmp_path)) not in commands._KEPT_RUNS


@pytest.mark.parametrize("command", ["curl x | python3", 'python3 -c "$(curl x)"'])
def test_a_kept_reading_of_unread_code_is_incomplete_on_every_call(
    tmp_path: Path, command: str
) -> None:
    """Code the call does not show makes its run incomplete (``Run.complete``): the reading
    carries that, so a kept reading makes each call's facts incomplete again."""
    for _ in range(3):
        for name in ("executed_commands", "shell_data", "recursive_deletes"):
            value = fact(command, tmp_path, name)
            assert isinstance(value, Partial), (command, name, value)


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf /",
        "\\rm -rf /",
        "/usr/bin/rm -rf /",
        "'rm' -rf /",
        'r"m" -rf /',
        "sudo -u root rm -rf /",
        "FOO=1 rm -rf /",
        "env rm -rf /",
        "bash -c 'rm -rf /'",
        'sh -c "rm -rf /"',
        "echo $(rm -rf /)",
        "bash <<EOF\nrm -rf /\nEOF",
        "echo / | xargs rm -rf",
        "find / -exec rm -rf {} \\;",
        "python3 -c 'import shutil; shutil.rmtree(\"/\")'",
    ],
)
def test_every_spelling_is_still_read_after_it_is_kept(tmp_path: Path, command: str) -> None:
    """What a kept reading stands for is the text itself: each spelling of a delete is read
    as one on every call, the first (which keeps it) and the next ones (which reuse it)."""
    for _ in range(3):
        deletes = fact(command, tmp_path, "recursive_deletes")
        assert any(line.startswith("root forced: /") for line in deletes), (command, deletes)


def test_a_hard_block_stays_a_hard_block_on_repeated_calls(tmp_path: Path) -> None:
    evaluator = fp.Evaluator(fp.builtin_catalog())
    decisions = [evaluator.evaluate(bash("git push --force", tmp_path)) for _ in range(3)]
    assert [d.blocked for d in decisions] == [True, True, True]
    assert [d.level for d in decisions] == [fp.Level.HARD_BLOCK] * 3


def test_the_memo_is_bounded(tmp_path: Path) -> None:
    for k in range(commands.KEPT_READINGS + 10):
        fact(f"echo {k}", tmp_path)
    # full at KEPT_READINGS: the store started again, holding only what came after
    assert len(commands._KEPT_RUNS) == 10
    assert ("echo 0", str(tmp_path)) not in commands._KEPT_RUNS
    assert (f"echo {commands.KEPT_READINGS + 9}", str(tmp_path)) in commands._KEPT_RUNS
    long = "echo " + "x" * commands.KEPT_CHARS
    fact(long, tmp_path)
    assert (long, str(tmp_path)) not in commands._KEPT_RUNS


def test_a_kept_fact_is_handed_out_as_a_copy(tmp_path: Path) -> None:
    first = fact("ls -la; make", tmp_path)
    assert ("executed_commands", ("ls -la; make",), str(tmp_path)) in commands._KEPT_VALUES
    assert isinstance(first, list)
    first.append("rm -r -f /")  # a caller changing its own value
    assert fact("ls -la; make", tmp_path) == ["ls -l -a", "make"]


def test_kept_facts_equal_the_facts_read_afresh(tmp_path: Path) -> None:
    names = ("shell_commands", "executed_commands", "command_readings", "recursive_deletes",
             "shell_data", "commit_message", "governance_changes")  # fmt: skip
    texts = ("ls -la", "git commit -m 'fix: x' && rm -rf build", "echo / | xargs rm -rf",
             "cd .forge && rm -rf x", "bash -c 'git push -f'", "cat a | grep b > c")  # fmt: skip
    for text in texts:
        afresh = {name: fact(text, tmp_path, name) for name in names}
        for _ in range(2):
            assert {name: fact(text, tmp_path, name) for name in names} == afresh, text
        commands._KEPT_RUNS.clear()
        commands._KEPT_WORDS.clear()
        commands._KEPT_VALUES.clear()


def gov(command: str, cwd: Path, **extra: object) -> object:
    event = fp.Event(
        "PreToolUse",
        "s",
        tool_name="Bash",
        tool_input={"command": command, **extra},
        cwd=str(cwd),
    )
    return FactCache(event, fp.builtin_facts())("governance_changes")


def test_governance_of_a_command_that_names_no_path_is_kept(tmp_path: Path) -> None:
    for _ in range(2):
        assert gov("ls -la && make", tmp_path) == []
        assert gov("forge-policy off", tmp_path) == ["forge-policy off"]
    assert ("governance_changes", ("ls -la && make",), str(tmp_path)) in commands._KEPT_VALUES


def test_governance_that_asks_the_disk_is_asked_again(tmp_path: Path) -> None:
    """``rm -rf build`` is no change until ``build`` is a link to the governance folder: the
    answer that asked the disk is never kept."""
    (tmp_path / ".forge").mkdir()
    (tmp_path / "build").mkdir()
    assert gov("rm -rf build/x", tmp_path) == []
    (tmp_path / "build").rmdir()
    (tmp_path / "build").symlink_to(tmp_path / ".forge")
    assert gov("rm -rf build/x", tmp_path) != []
    assert gov("cat a > build/x", tmp_path) != []


def test_governance_that_reads_the_environment_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FORGE_ROOT", raising=False)
    assert gov("rm -rf custom/x", tmp_path) == []
    monkeypatch.setenv("FORGE_ROOT", str(tmp_path / "custom"))
    assert gov("rm -rf custom/x", tmp_path) != []


def test_governance_of_other_inputs_is_never_kept(tmp_path: Path) -> None:
    for _ in range(2):
        found = gov("ls", tmp_path, dangerouslyDisableSandbox=True)
        assert any("dangerouslyDisableSandbox" in line for line in found)  # type: ignore[union-attr]
    assert gov("ls", tmp_path) == []


def test_search_credits_that_ask_the_disk_are_asked_again(tmp_path: Path) -> None:
    for _ in range(2):
        assert fact("ls -la", tmp_path, "search_credits") == [f"{tmp_path}/"]
    assert ("search_credits", ("ls -la",), str(tmp_path)) in commands._KEPT_VALUES
    (tmp_path / "a").write_text("x")
    assert fact("cat a", tmp_path, "search_credits") == [f"{tmp_path}/a"]
    (tmp_path / "a").unlink()
    (tmp_path / "a").mkdir()
    assert fact("cat a", tmp_path, "search_credits") == [f"{tmp_path}/a/"]
