"""facts.commit_message and commit_messages(): every form a git commit carries a message in."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_policy.facts import builtin_facts, call_provider, commit_messages
from forge_policy.model import Event

HEREDOC_CLAUDE = """git commit -m "$(cat <<'EOF'
feat: x

Co-Authored-By: Claude <noreply@anthropic.com>
EOF
)\""""

MESSAGES = [
    # -m / --message in every spelling
    ('git commit -m "feat: x"', ["feat: x"]),
    ("git commit -m 'feat: x'", ["feat: x"]),
    ("git commit -m feat:x", ["feat:x"]),
    ('git commit --message "a b"', ["a b"]),
    ("git commit --message=a", ["a"]),
    ('git commit --message="a b"', ["a b"]),
    ("git commit --mess=abbrev", ["abbrev"]),
    ("git commit -mX", ["X"]),
    ('git commit -m"attached"', ["attached"]),
    ('git commit -am "all"', ["all"]),
    ('git commit -a -m "Co-Authored-By: Claude"', ["Co-Authored-By: Claude"]),
    ('git commit -qsam "cluster"', ["cluster"]),
    ('git commit -m "a" -m "b" --message c', ["a\n\nb\n\nc"]),
    ('git commit -m "say \\"hi\\" claude"', ['say "hi" claude']),
    ("git commit -m 'it'\"'\"'s'", ["it's"]),
    ("git commit -m $'x\\ny'", ["x\ny"]),
    ('git commit -m "a\nb"', ["a\nb"]),
    ("git commit -m \"$(printf 'a\\nb')\"", ["a\nb"]),
    ('git commit -m "$(echo hi)"', ["hi"]),
    ("git commit -m `echo back`", ["back"]),
    ('git commit -m "$(git log -1 --format=%s)"', ["git log -1 --format=%s"]),
    ('git commit -m "feat" --trailer "Co-authored-by: Claude"', ["feat\n\nCo-authored-by: Claude"]),
    # here-documents: -F - and $(cat <<EOF)
    (HEREDOC_CLAUDE, ["feat: x\n\nCo-Authored-By: Claude <noreply@anthropic.com>"]),
    ('git commit -m "$(cat <<EOF\nhi\nEOF)"', ["hi"]),
    ("git commit -F - <<EOF\nline1\nline2\nEOF\n", ["line1\nline2"]),
    ("git commit -F - <<'EOF'\nq \"x\" $(y)\nEOF", ['q "x" $(y)']),
    ('git commit -F - <<"EOF"\nquoted delim\nEOF', ["quoted delim"]),
    ("git commit -F- <<-EOF\n\tindented\n\tEOF", ["indented"]),
    ("git commit --file=- <<EOF\nlong option\nEOF", ["long option"]),
    ("git commit -F /dev/stdin <<EOF\ndevstdin\nEOF", ["devstdin"]),
    ('git commit -F - <<< "herestring"', ["herestring"]),
    ('echo "piped msg" | git commit -F -', ["piped msg"]),
    ("printf 'a\\nb' | git commit -F -", ["a\nb"]),
    ("git commit -F - <<EOF\nunterminated body", ["unterminated body"]),
    # where the command is: chains, -C, wrappers, nested shells
    ('git add . && git commit -m "chained"', ["chained"]),
    ("git add .; git commit -m one\ngit commit -m two", ["one", "two"]),
    ("git -C sub commit -m sub", ["sub"]),
    ("git --no-pager -c a=b --git-dir .git commit -m g", ["g"]),
    ('GIT_AUTHOR_NAME=x sudo -u me env A=1 git commit -qm"wrapped"', ["wrapped"]),
    ("/usr/bin/git commit -m abs", ["abs"]),
    ("bash -c \"git commit -m 'nested'\"", ["nested"]),
    ("sh -ec 'git commit -m nested2'", ["nested2"]),
    ("eval git commit -m evaled", ["evaled"]),
    ("(cd x && git commit -m sub)", ["sub"]),
    ("if true; then git commit -m cond; fi", ["cond"]),
    ("{ git commit -m group; }", ["group"]),
    ('git commit -m "a" # comment -m b', ["a"]),
    ('git commit -m "unterminated', ["unterminated"]),
    # not a commit message
    ("git status", []),
    ("git commit", []),
    ("git commit --amend --no-edit", []),
    ("git commit -m", []),
    ("git commit -C HEAD", []),
    ("git commit -- -m notamsg", []),
    ("git log -m x", []),
    ('echo git commit -m "x"', []),
    ("git commit-tree -m x HEAD^{tree}", []),
    ("", []),
]


@pytest.mark.parametrize(("command", "expected"), MESSAGES)
def test_commit_messages(command: str, expected: list[str]) -> None:
    assert commit_messages(command, "/nonexistent") == expected


def test_message_file_relative_to_commit_directory(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "msg.txt").write_text("from file\n\nCo-Authored-By: Claude\n")
    (tmp_path / "sub" / "m2").write_text("in sub")
    cwd = str(tmp_path)
    assert commit_messages("git commit -F msg.txt", cwd) == ["from file\n\nCo-Authored-By: Claude"]
    assert commit_messages("git commit --file msg.txt", cwd)[0].startswith("from file")
    assert commit_messages("git commit -Fmsg.txt", cwd)[0].startswith("from file")
    assert commit_messages("git -C sub commit -F m2", cwd) == ["in sub"]
    assert commit_messages("cd sub && git commit -F m2", cwd) == ["in sub"]
    assert commit_messages('git commit -m "$(cat msg.txt)"', cwd)[0].startswith("from file")
    assert commit_messages("git commit -F - < msg.txt", cwd)[0].startswith("from file")
    assert commit_messages("cat msg.txt | git commit -F -", cwd)[0].startswith("from file")


def test_unreadable_or_oversized_message_file_is_skipped_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * ((1 << 20) + 1))
    facts = builtin_facts()
    for command in ("git commit -F missing.txt", "git commit -F big", "git commit -F -"):
        event = Event(
            "PreToolUse", "s", tool_name="Bash", tool_input={"command": command}, cwd=str(tmp_path)
        )
        value, diagnostics = call_provider("commit_message", facts["commit_message"], event)
        assert value == ""
        assert diagnostics and all("fact 'commit_message'" in d for d in diagnostics)


def test_provider_reads_command_and_commands() -> None:
    provider = builtin_facts()["commit_message"]
    event = Event(
        "PreToolUse",
        "s",
        tool_name="Bash",
        tool_input={
            "command": 'git commit -m "one"',
            "commands": ["git commit -m two", {"command": "git commit -m three"}, 7],
        },
    )
    assert provider(event) == "one\n\ntwo\n\nthree"
    assert provider(Event("PreToolUse", "s", tool_name="Read", tool_input={"file_path": "x"})) == ""


# --- properties: never raises, linear on hostile input, exact on quoted messages -----------------


SHELLISH = st.text(alphabet="\"'\\$()`\n\t<>|&;#{}- mFaCgitcomEOF=~", max_size=300)


@given(st.one_of(st.text(max_size=300), SHELLISH))
def test_never_raises_on_arbitrary_text(text: str) -> None:
    for command in (text, f"git commit -m {text}", f"git commit -F - <<E\n{text}", f'"$({text}'):
        result = commit_messages(command, "/nonexistent")
        assert isinstance(result, list) and all(isinstance(m, str) for m in result)


@given(st.text(min_size=1, max_size=200))
def test_any_shell_quoted_message_round_trips(message: str) -> None:
    expected = message.strip("\n")
    got = commit_messages(f"git add -A && git commit -m {shlex.quote(message)}", "/x")
    assert got == ([expected] if expected else [])


@given(st.text(alphabet=st.characters(blacklist_characters="\n\r"), min_size=1, max_size=100))
def test_heredoc_body_round_trips(line: str) -> None:
    if line == "EOF":
        return
    assert commit_messages(f"git commit -F - <<'EOF'\n{line}\nEOF\n", "/x") == [line]


@pytest.mark.parametrize(
    "command",
    [
        'git commit -m "' + "a" * 300_000 + '"',
        "git commit -m " + "$(" * 20_000 + "x",
        "git commit -m " + "`" * 100_001,
        "git commit -m " + "\\" * 100_001,
        "git commit -m " + "$'" * 50_000,
        "git commit -F - " + "<<A " * 10_000 + "\n" + "line\n" * 10_000,
        "git commit -m x " + "&& git commit -m y " * 5_000,
        "bash -c " * 2_000 + "'git commit -m deep'",
        '"' * 100_001,
        "git commit -m '" + "'\"'\"'" * 30_000 + "'",
    ],
)
def test_stays_correct_on_long_hostile_input(command: str) -> None:
    result = commit_messages(command, "/nonexistent")
    if command.startswith('git commit -m "a'):
        assert result == ["a" * 300_000]
    elif command.startswith("git commit -m x &&"):
        assert result == ["x"] + ["y"] * 5_000
    elif command.startswith("git commit -m '"):
        assert result == ["'" * 30_000]
    else:
        assert isinstance(result, list)
