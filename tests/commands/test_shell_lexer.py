"""The shell lexer's fast paths read what the character-by-character path reads, in linear time.

The bulk path (runs of plain simple commands split by regular expressions), ``distinct`` (a
repeated plain command read once) and the here-document search must change only the speed:
these properties compare them with the plain reading on random shell-like text.
"""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from forge_policy.commands.shell import Command, _Lexer, lex, literal_subst
from forge_policy.facts.commands import provide_shell_commands
from forge_policy.model import Event

# pieces that exercise every branch: operators, quotes, escapes, substitutions, heredocs, cd
PIECES = [" ", "\t", "\n", ";", "&&", "||", "|", "&", "(", ")", "<", ">", ">>", "2>", "'", '"',
          "\\", "$", "$(", "`", "#", "=", "-", "a", "bb", "cd x", "EOF", "<<", "<<-", "sh -c ",
          "echo ", "x=1 ", "\r", "a b c", "rm -rf /"]  # fmt: skip
shell_text = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


def shape(commands: list[Command]) -> list[tuple[object, ...]]:
    index = {id(c): k for k, c in enumerate(commands)}
    return [
        (c.words, [(r.op, r.target, r.body) for r in c.redirects], index.get(id(c.piped_from)))
        for c in commands
    ]


def plain(text: str) -> list[Command]:
    commands: list[Command] = []
    _Lexer(text, literal_subst, commands, bulk=False).scan(0, 0, False)
    return commands


@given(shell_text)
def test_the_bulk_path_reads_what_the_plain_path_reads(text: str) -> None:
    assert shape(lex(text)) == shape(plain(text))


@given(shell_text)
def test_distinct_drops_only_repeats(text: str) -> None:
    every, distinct = lex(text), lex(text, distinct=True)
    assert {" ".join(c.words) for c in every} == {" ".join(c.words) for c in distinct}
    remaining = iter([" ".join(c.words) for c in every])
    assert all(any(w == r for r in remaining) for w in (" ".join(c.words) for c in distinct))


@given(shell_text)
def test_heredoc_bodies_are_read_as_before(text: str) -> None:
    full = text + "\ncat <<EOF\n" + text + "\nEOF\n" + text
    assert shape(lex(full)) == shape(plain(full))


def test_distinct_reads_again_after_a_cd() -> None:
    words = [c.words for c in lex("cat x; cd a; cat x; cat x;", distinct=True)]
    assert words == [["cat", "x"], ["cd", "a"], ["cat", "x"]]


def shell_commands(command: str) -> list[str]:
    return provide_shell_commands(
        Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": command}, cwd="/")
    )


def cpu(command: str) -> float:
    """The least CPU time of three runs (what the budget counts; the least is the least noisy).

    The garbage collector is held off while timing: a full collection walks the whole test
    process's heap (it grows with the suite: psycopg and the PostgreSQL tests tipped it), a cost
    of the suite's size, not of the input's."""
    import gc

    samples = []
    for _ in range(3):
        gc.collect()
        gc.disable()
        try:
            start = time.thread_time()
            shell_commands(command)
            samples.append(time.thread_time() - start)
        finally:
            gc.enable()
    return min(samples)


def test_padding_is_read_in_linear_time_and_within_budget() -> None:
    for unit in ("a;", "a\n", "a b ", "'x'", "$(a)", "a | "):
        small, large = cpu(unit * 5_000), cpu(unit * 20_000)
        assert large < 10 * max(small, 1e-3), unit  # 4x the input: no quadratic blow-up
    assert shell_commands("rm -rf / ; " + "a;" * 500_000) == ["rm -rf /", "a"]
    assert cpu("rm -rf / ; " + "a;" * 500_000) < 0.25  # 1 MB of padding, well within budget


def test_a_megabyte_heredoc_is_one_command() -> None:
    body = ("x" * 79 + "\n") * 13_000
    assert shell_commands(f"cat > f <<'EOF'\n{body}EOF\nrm -rf /") == ["cat > f", "rm -rf /"]
    assert cpu(f"cat > f <<'EOF'\n{body}EOF\n") < 0.25
