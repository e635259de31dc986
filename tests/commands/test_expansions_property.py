"""A property of the reading (SPEC §6, issue 23): for random compositions of expansions,
quoting and separators around a guarded command, the built-in catalog never allows the call.

Each word of ``rm -rf ~`` or ``git reset --hard`` is spelled one of many ways (quotes, escapes,
a variable, a parameter operation, a brace expansion, ``printf -v``, ``read``), the words are
joined by blanks or ``$IFS``, and the whole is placed in a compound form (a group, a function, a
loop, an alias, ``trap``, ``env -S``…) after a harmless decoy: the decision is never ``allow``.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import forge_policy as fp
from forge_policy.model import Event

GUARDED = [["rm", "-rf", "~"], ["rm", "-rf", "/"], ["git", "reset", "--hard"]]
CATALOG = fp.builtin_catalog()


@st.composite
def spelled(draw: st.DrawFn, word: str, index: int) -> tuple[str, str]:
    """``(setup, spelling)``: commands that must run first, and the word as written."""
    name = f"V{index}"
    if word == "~":  # a tilde expands only unquoted, at a word's start
        form = draw(st.sampled_from(["plain", "var", "default"]))
    else:
        form = draw(
            st.sampled_from(
                ["plain", "single", "double", "split", "escape", "var", "braced", "default",
                 "slice", "trim", "brace", "printf", "read", "declare", "ansi"]
            )
        )  # fmt: skip
    head, tail = word[:1], word[1:]
    return {
        "plain": ("", word),
        "single": ("", f"'{word}'"),
        "double": ("", f'"{word}"'),
        "split": ("", f"{head}''{tail}" if tail else f"{head}''"),
        "escape": ("", f"\\{head}{tail}"),
        "var": (f"{name}={word}; ", f"${name}"),
        "braced": (f"{name}={word}; ", f"${{{name}}}"),
        "default": ("", f"${{{name}:-{word}}}"),
        "slice": (f"{name}=zz{word}zz; ", f"${{{name}:2:{len(word)}}}"),
        "trim": (f"{name}={word}.x; ", f"${{{name}%.x}}"),
        "brace": ("", f"{{{word},}}"),
        "printf": (f"printf -v {name} '%s' {word}; ", f"${name}"),
        "read": (f"read {name} <<< '{word}'; ", f"${name}"),
        "declare": (f"declare {name}={word}; ", f"${name}"),
        "ansi": ("", f"$'{word}'"),
    }[form]


@st.composite
def commands(draw: st.DrawFn) -> str:
    words = draw(st.sampled_from(GUARDED))
    setups, parts = [], []
    for i, word in enumerate(words):
        setup, spelling = draw(spelled(word, i))
        setups.append(setup)
        parts.append(spelling)
    separators = [draw(st.sampled_from([" ", "  ", "\t", "${IFS}", "$IFS"])) for _ in parts[1:]]
    if any("$IFS" in s or "${IFS}" in s for s in separators) and "~" in words:
        separators = [" "] * len(separators)  # "~" after $IFS is not a tilde: not a guarded word
    inner = parts[0] + "".join(sep + part for sep, part in zip(separators, parts[1:], strict=True))
    plain = " ".join(words)
    compound = draw(
        st.sampled_from(
            [
                "{c}", "{{ {c}; }}", "({c})", "f(){{ {c}; }}; f", "function g {{ {c}; }}; g",
                "for _ in 1; do {c}; done", "if true; then {c}; fi", "true && {c}",
                "while true; do {c}; break; done", "{c} &", "echo ok | {c}",
                "alias a='{p}'; a", "trap '{p}' EXIT", "env -S '{p}'", "eval '{p}'",
                "bash -c '{p}'", "echo '{p}' > s.sh; sh s.sh",
            ]
        )
    )  # fmt: skip
    decoy = draw(st.sampled_from(["", "ls; ", "echo {a,b}; ", "for f in *.py; do ruff $f; done; "]))
    return decoy + "".join(setups) + compound.format(c=inner, p=plain)


@given(commands())
def test_a_guarded_command_however_composed_is_never_allowed(command: str) -> None:
    event = Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": command}, cwd="/p")
    decision = fp.Evaluator(CATALOG, clock=lambda: 1000.0).evaluate(event)
    assert decision.outcome != "allow", command
