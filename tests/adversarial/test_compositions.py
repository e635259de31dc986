"""A guarded command composed at random with wrappers, expansions and separators is never
allowed (issue 23): whatever the agent wraps around ``rm -rf ~``, ``git reset --hard``,
``git push --force`` or a write to ``.forge/``, the built-in catalog refuses or asks.

A composition is a list of steps applied to the guarded command, innermost first: expansions
change its words (braces, ``$IFS``, a quote split inside a word, a variable, ``$'…'``), then
wrappers launch it (``sudo``, ``env``, ``nice``, ``timeout``, ``nohup``, ``setsid``,
``command``, ``exec``…), then separators and subshells put it among other commands (``;``,
``&&``, ``||``, ``|``, ``$( )``, ``( )``, ``{ ;}``, a newline, ``sh -c``). Every composition
still runs the guarded command when bash runs it.

In process through the evaluator for speed, and a handful of fixed compositions through the
real hook process. Two properties: the forms main read before issue 23 (quotes, ``$'…'``), and
every form (braces, ``$IFS``, variables, launchers such as ``setsid`` included).
"""

from __future__ import annotations

import itertools
import shlex
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hookrun import stop_workers
from hypothesis import given
from hypothesis import strategies as st

import forge_policy as fp
from tests.adversarial.routes import Route
from tests.adversarial.test_routes import World

CATALOG = fp.builtin_catalog()
CWD = "/home/user/project"

#: guarded command → (its words, a redirection after them)
GUARDS: dict[str, tuple[list[str], str]] = {
    "rm -rf ~": (["rm", "-rf", "~"], ""),
    "git reset --hard": (["git", "reset", "--hard"], ""),
    "git push --force": (["git", "push", "--force"], ""),
    "write .forge": (["echo", "x"], " > .forge/config.yaml"),
}

Words = list[str]


# --- expansions: change the words, keep what bash runs --------------------------------------


def _plain(word: str) -> bool:
    """A word whose meaning survives quoting (``~`` expands only unquoted; a quoted
    ``NAME=value;`` is a program name, no assignment) and holds no quote or expansion of an
    earlier step."""
    return len(word) >= 2 and not any(c in word for c in "~'$=;")


def quote_split(words: Words, i: int) -> Words:
    w = words[i]
    return [*words[:i], f"{w[0]}''{w[1:]}" if _plain(w) else w, *words[i + 1 :]]


def ansi_c(words: Words, i: int) -> Words:
    w = words[i]
    coded = "$'" + "".join(f"\\x{ord(c):02x}" for c in w) + "'"
    return [*words[:i], coded if _plain(w) else w, *words[i + 1 :]]


def variable(words: Words, i: int) -> Words:
    if not _plain(words[i]):
        return words
    name = f"V{i}"
    while any(w.startswith(f"{name}=") for w in words):  # each variable its own name
        name += "x"
    return [f"{name}={shlex.quote(words[i])};", *words[:i], f"${name}", *words[i + 1 :]]


def braces(words: Words, i: int) -> Words:
    if any(w.endswith(";") or "$" in w or "'" in w or "{" in w for w in words):
        return words  # a brace word cannot hold an assignment, a quote or another brace word
    return ["{" + ",".join(words) + "}"]


def ifs(words: Words, i: int) -> Words:
    if any(w.endswith(";") or "~" in w for w in words):
        return words  # ${IFS}~ is no tilde expansion
    return ["${IFS}".join(words)]


EXPANSIONS: dict[str, Callable[[Words, int], Words]] = {
    "quote": quote_split,
    "ansi-c": ansi_c,
    "variable": variable,
    "braces": braces,
    "ifs": ifs,
}
#: the expansions main reads today
READ_TODAY = ("quote", "ansi-c")

# --- wrappers and separators ------------------------------------------------------------------

WRAPPERS = {
    "sudo": "sudo",
    "env": "env",
    "env-assign": "env LC_ALL=C",
    "nice": "nice -n 5",
    "timeout": "timeout 60",
    "nohup": "nohup",
    "setsid": "setsid",
    "command": "command",
    "exec": "exec",
    "time": "time",
    "stdbuf": "stdbuf -o0",
}
#: the wrappers main knows today
WRAPPERS_TODAY = tuple(name for name in WRAPPERS if name != "setsid")

SEPARATORS: dict[str, Callable[[str], str]] = {
    "semicolon": lambda c: f"true; {c}",
    "and": lambda c: f"true && {c}",
    "or": lambda c: f"false || {c}",
    "pipe": lambda c: f"echo y | {c}",
    "substitution": lambda c: f"echo $( {c} )",  # "$((" would be arithmetic
    "subshell": lambda c: f"( {c} )",
    "group": lambda c: f"{{ {c}; }}",
    "newline": lambda c: f"echo start\n{c}",
    "sh-c": lambda c: f"sh -c {shlex.quote(c)}",
    "bash-c": lambda c: f"bash -c {shlex.quote(c)}",
    "after": lambda c: f"{c}; echo done",
}


def compose(
    guard: str, expansions: list[tuple[str, int]], wrappers: list[str], separators: list[str]
) -> str:
    """The shell text running ``guard`` under the given steps, innermost first."""
    words, redirect = GUARDS[guard]
    words = list(words)
    for name, index in expansions:
        words = EXPANSIONS[name](words, index % len(words))
    # an assignment prefix stays before the wrappers: split it off
    assigns = [w for w in words if w.endswith(";")]
    command = " ".join(WRAPPERS[w] for w in wrappers)
    command = " ".join(filter(None, [command, *[w for w in words if not w.endswith(";")]]))
    text = " ".join([*assigns, command]) + redirect
    for name in separators:
        text = SEPARATORS[name](text)
    return text


def compositions(expansions: tuple[str, ...], wrappers: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.builds(
        compose,
        st.sampled_from(list(GUARDS)),
        st.lists(st.tuples(st.sampled_from(expansions), st.integers(0, 3)), max_size=3),
        st.lists(st.sampled_from(wrappers), max_size=3),
        st.lists(st.sampled_from(list(SEPARATORS)), max_size=3),
    )


EVALUATOR = fp.Evaluator(CATALOG, profile="standard", clock=lambda: 1000.0)
_sessions = itertools.count()


def decide(command: str) -> str:
    """The built-in catalog's outcome for ``command``, in a session of its own."""
    event = fp.Event(
        "PreToolUse",
        f"s{next(_sessions)}",
        tool_name="Bash",
        tool_input={"command": command},
        cwd=CWD,
    )
    return EVALUATOR.evaluate(event).outcome


def test_compose_builds_what_bash_runs() -> None:
    assert compose("rm -rf ~", [], [], []) == "rm -rf ~"
    assert compose("git reset --hard", [("braces", 0)], ["nice"], ["and"]) == (
        "true && nice -n 5 {git,reset,--hard}"
    )
    assert compose("git push --force", [("variable", 1)], ["sudo"], ["sh-c"]) == (
        "sh -c 'V1=push; sudo git $V1 --force'"
    )
    assert compose("write .forge", [("ifs", 0)], [], ["group"]) == (
        "{ echo${IFS}x > .forge/config.yaml; }"
    )
    assert compose("rm -rf ~", [("ansi-c", 0)], [], []) == "$'\\x72\\x6d' -rf ~"


@given(compositions(READ_TODAY, WRAPPERS_TODAY))
def test_forms_read_today_are_never_allowed(command: str) -> None:
    assert decide(command) != "allow", command


@given(compositions(tuple(EXPANSIONS), tuple(WRAPPERS)))
def test_every_composition_is_never_allowed(command: str) -> None:
    assert decide(command) != "allow", command


# --- a handful through the real hook process --------------------------------------------------

FIXED = [
    ("rm -rf ~", [("quote", 0)], ["sudo", "timeout"], ["sh-c", "and"]),
    ("git reset --hard", [("ansi-c", 1)], ["nohup"], ["substitution", "newline"]),
    ("git push --force", [], ["env-assign", "exec"], ["group", "pipe"]),
    ("write .forge", [("quote", 0)], ["command"], ["subshell", "bash-c"]),
    ("rm -rf ~", [], ["time", "nice"], ["or", "after"]),
]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    built = World(tmp_path_factory.mktemp("compositions"))
    try:
        yield built
    finally:
        stop_workers(built.project.root)


@pytest.mark.parametrize("steps", FIXED, ids=lambda s: f"{s[0]}:{'+'.join(s[2])}")
@pytest.mark.parametrize("harness", ["claude-code", "codex", "gemini", "antigravity"])
def test_fixed_compositions_through_the_hook(
    world: World, harness: str, steps: tuple[str, list[tuple[str, int]], list[str], list[str]]
) -> None:
    command = compose(*steps)
    route = Route("compositions", "fixed", "Bash", {"command": command})
    decided, reason = world.ask(harness, world.payload(route, harness))
    assert decided == "deny" and "cannot be overridden" in reason, (command, decided, reason)


def test_the_fixed_compositions_are_refused_in_process_too(tmp_path: Path) -> None:
    for steps in FIXED:
        assert decide(compose(*steps)) == "hard_block", steps
