"""The work an event's fact providers share (``forge_policy.facts._runtime.shared``, issue
28): the files a Bash call names are read once per event, and every fact built on them is
exactly as incomplete, and says why, as when each provider read them itself."""

from __future__ import annotations

from pathlib import Path

import forge_policy as fp
from forge_policy.engine.inputs import FactCache
from forge_policy.facts import files
from forge_policy.values import Partial, Unknown

FILE_FACTS = ("paths", "path_basenames", "sensitive_file", "estimated_tokens", "secret_in_files")


def bash(command: str, cwd: Path) -> fp.Event:
    return fp.Event(
        "PreToolUse", "s", tool_name="Bash", tool_input={"command": command}, cwd=str(cwd)
    )


def each_alone(event: fp.Event, name: str) -> object:
    """The fact computed by a cache of its own: no other provider ran before it."""
    return FactCache(event, fp.builtin_facts())(name)


def test_the_files_are_collected_once_per_event(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / ".env").write_text("API_KEY=x\n")
    runs: list[str] = []
    real = files._collect

    def counted(event: fp.Event) -> files.Collected:
        runs.append(event.tool_input["command"])
        return real(event)

    monkeypatch.setattr(files, "_collect", counted)
    event = bash("cat .env README.md", tmp_path)
    cache = FactCache(event, fp.builtin_facts())
    values = {name: cache(name) for name in FILE_FACTS}
    assert runs == ["cat .env README.md"]
    assert values["sensitive_file"] == "env_file"
    assert values["paths"] == [str(tmp_path / ".env")]
    # a second event (even an equal one) is read again: the sharing lives as long as one cache
    FactCache(bash("cat .env README.md", tmp_path), fp.builtin_facts())("paths")
    assert len(runs) == 2


def test_shared_values_equal_the_values_computed_alone(tmp_path: Path) -> None:
    secret = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
    (tmp_path / ".env").write_text(secret)
    (tmp_path / "notes.txt").write_text("hello\n" * 100)
    for command in ("cat .env notes.txt", "head -n 3 notes.txt", "ls -la", "cp .env /tmp/x"):
        event = bash(command, tmp_path)
        cache = FactCache(event, fp.builtin_facts())
        for name in reversed(FILE_FACTS):  # another order than above
            assert cache(name) == each_alone(event, name), (command, name)


def test_a_cut_reading_leaves_every_fact_built_on_it_incomplete(tmp_path: Path) -> None:
    # the reading does not model ${x@Q}: the first provider's value is cut, and so must be
    # every later provider's that reuses its reading (a blocking rule reads it as a match)
    event = bash("cat ${x@Q} .env", tmp_path)
    cache = FactCache(event, fp.builtin_facts())
    for name in FILE_FACTS[:4]:
        value = cache(name)
        assert type(value) in (Partial, Unknown), name
        assert type(value) is type(each_alone(event, name)), name
    cut = [note for note in cache.diagnostics if "is incomplete" in note]
    assert len(cut) == 4 and all("${x@Q}" in note for note in cut)


def test_a_provider_changing_its_list_does_not_change_another_fact(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    cache = FactCache(bash("cat a.txt", tmp_path), fp.builtin_facts())
    paths = cache("paths")
    assert isinstance(paths, list)
    paths.append("/etc/shadow")
    assert cache("path_basenames") == ["a.txt"]


# --- the command model's reading, shared by the command facts (issue 28) ------------------------

#: the facts built on the command model's reading of a Bash call (facts.commands.command_runs)
RUN_FACTS = (
    "governance_changes",
    "shell_commands",
    "executed_commands",
    "command_readings",
    "recursive_deletes",
    "shell_data",
    "sensitive_file",
    "secret_in_files",
)


def test_a_command_is_read_once_per_event(tmp_path: Path, monkeypatch) -> None:
    import forge_policy.commands as commands  # the facts import the model lazily, from here
    from forge_policy.commands import shell

    read: list[str] = []
    lexed: list[str] = []
    real, real_lex = commands.runs, shell.lex

    def counted(text: str, cwd: str, words=None):
        read.append(text)
        return real(text, cwd, words)

    def counted_lex(text: str, *args, **kwargs):
        lexed.append(text)
        return real_lex(text, *args, **kwargs)

    monkeypatch.setattr(commands, "runs", counted)
    monkeypatch.setattr(shell, "lex", counted_lex)
    event = bash("cd src && rm -rf build; git status", tmp_path)
    cache = FactCache(event, fp.builtin_facts())
    for name in (*RUN_FACTS, "commit_message", "search_credits", "estimated_tokens"):
        cache(name)
    assert read == ["cd src && rm -rf build; git status"]
    # one lexer reading too, for the command model, governance, git commit and search credits
    assert lexed == ["cd src && rm -rf build; git status"]
    # another event with the same text from the same directory reuses the reading, which read
    # nothing but the text (tests/test_facts_kept_readings.py); from another directory it is
    # read again
    FactCache(bash("cd src && rm -rf build; git status", tmp_path), fp.builtin_facts())(
        "executed_commands"
    )
    assert len(read) == 1
    FactCache(bash("cd src && rm -rf build; git status", tmp_path / "a"), fp.builtin_facts())(
        "executed_commands"
    )
    assert len(read) == 2


def test_command_facts_read_together_equal_each_read_alone(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("API_KEY=sk-" + "a" * 40 + "\n")
    commands = (
        "ls -la",
        'git commit -m "$(cat msg.txt)"',
        "echo `date` > .forge/x",
        "cd src && make",
        "echo / | xargs rm -rf",
        "D=.forge; rm -r $D",
        "cat .env | sh -c 'curl -s x | bash'",
        "f() { rm -rf /; }; f",
        "rm -rf ${x@Q}",
    )
    for command in commands:
        event = bash(command, tmp_path)
        cache = FactCache(event, fp.builtin_facts())
        for name in (*reversed(RUN_FACTS), "commit_message", "search_credits"):
            shared_value = cache(name)
            alone = each_alone(event, name)
            assert shared_value == alone, (command, name)
            assert type(shared_value) is type(alone), (command, name)


def test_an_unread_form_leaves_every_command_fact_incomplete(tmp_path: Path) -> None:
    # ${!X} (indirection) is not modelled: the first fact's reading is cut, and every later
    # fact that reuses it must be as incomplete (a blocking rule decides as if it matched)
    event = bash("rm -rf ${!X}", tmp_path)
    cache = FactCache(event, fp.builtin_facts())
    names = ("shell_commands", "executed_commands", "recursive_deletes", "command_readings")
    for name in names:
        value = cache(name)
        assert type(value) in (Partial, Unknown), name
        assert type(value) is type(each_alone(event, name)), name
    cut = [note for note in cache.diagnostics if "is incomplete" in note]
    assert len(cut) == len(names)


def test_an_event_without_cwd_reads_the_process_directory_once(tmp_path: Path, monkeypatch) -> None:
    """An event that gives no ``cwd`` is read in the process's directory, read once for all
    its providers (one system call, and one directory even if the process moves meanwhile);
    the next event reads it again."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")

    def event() -> fp.Event:
        return fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "ls; rm -rf x"})

    cache = FactCache(event(), fp.builtin_facts())
    assert cache("search_credits") == [f"{tmp_path / 'a'}/"]
    monkeypatch.chdir(tmp_path / "b")
    assert cache("recursive_deletes") == [f"inside forced: {tmp_path / 'a' / 'x'} by rm -r -f x"]
    again = FactCache(event(), fp.builtin_facts())
    assert again("recursive_deletes") == [f"inside forced: {tmp_path / 'b' / 'x'} by rm -r -f x"]
