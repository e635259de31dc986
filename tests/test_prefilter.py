"""The literal prefilter of regex conditions: sound (never refuses a text RE2 would match)."""

from __future__ import annotations

import sys

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import forge_policy as fp
from forge_policy.catalog.dsl import LazyRegex, compile_operator, compile_regex
from forge_policy.catalog.prefilter import required_literals
from forge_policy.errors import RegexError

# letters with non-ASCII case partners in RE2's fold orbits (k: KELVIN SIGN, s: LONG S)
ALPHABET = "abkKsSAB\u212a\u017f- .|\n1"

_leaf = st.sampled_from(
    [
        "a", "b", "k", "s", "K", "S", "ab", "ks", r"\.", r"\-", r"\|", r"\n", ".", r"\s", r"\d",
        r"\w", r"\S", r"\b", r"\B", "^", "$", "[ab]", "[^a]", "[]a]", r"[\]k]", "[[:alpha:]]",
        "[a-k]", "-", " ", "1", "(?i)", "(?-i)", "(?s)",
    ]
)  # fmt: skip
_quantifier = st.sampled_from(["", "", "", "*", "+", "?", "{0,2}", "{1}", "{2}", "{1,}", "+?"])


def _combine(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(children, children).map("".join),
        st.tuples(children, children).map("|".join),
        st.tuples(st.sampled_from(["(?:", "(", "(?i:", "(?P<n>"]), children, _quantifier).map(
            lambda t: f"{t[0]}{t[1]}){t[2]}"
        ),
        st.tuples(children, _quantifier).map("".join),
    )


patterns = st.recursive(_leaf, _combine, max_leaves=12)
texts = st.text(alphabet=ALPHABET, max_size=24)


def _compiled(pattern: str) -> object:
    try:
        return compile_regex(pattern)
    except RegexError:
        assume(False)
        raise AssertionError("unreachable") from None


@given(patterns, st.lists(texts, min_size=1, max_size=8))
def test_a_refused_text_has_no_match(pattern: str, samples: list[str]) -> None:
    """Soundness: whenever the prefilter refuses a text, RE2 finds no match in it."""
    regex = _compiled(pattern)
    requirement = required_literals(pattern)
    assume(requirement is not None)
    assert requirement is not None
    for text in samples:
        if not requirement.admits(text):
            assert regex.search(text) is None, (pattern, text, requirement)  # type: ignore[attr-defined]


@given(patterns, st.lists(texts, min_size=1, max_size=8))
def test_the_operators_answer_as_re2_does(pattern: str, samples: list[str]) -> None:
    """``regex_match`` and ``not_regex_match`` (prefiltered) agree with a bare RE2 search."""
    regex = _compiled(pattern)
    positive = compile_operator("regex_match", pattern)
    negative = compile_operator("not_regex_match", pattern)
    for text in samples:
        found = regex.search(text) is not None  # type: ignore[attr-defined]
        assert positive(text) is found
        assert negative(text) is (not found)
    # the list form: any element for regex_match, none for not_regex_match
    found_any = any(regex.search(text) is not None for text in samples)  # type: ignore[attr-defined]
    assert positive(samples) is found_any
    assert negative(samples) is (not found_any)


def test_ascii_case_folds_are_casefold_equal() -> None:
    """What a case-insensitive prefilter relies on: every character RE2 ``(?i)`` matches for
    an ASCII character has the same ``casefold()`` (checked over every code point)."""
    everything = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c < 0xE000)
    for code in range(0x20, 0x7F):
        char = chr(code)
        partners = compile_regex("(?i)" + ("\\" + char if not char.isalnum() else char)).findall(
            everything
        )
        assert char in partners
        for partner in partners:
            assert partner.casefold() == char.casefold(), (char, partner)


@pytest.mark.parametrize(
    ("pattern", "alternatives"),
    [
        (r"git\s+push", (("git", "push"),)),
        (r"rm\s+-rf|git push", (("rm", "-rf"), ("git push",))),
        (r"ab+c", (("ab", "c"),)),
        (r"ab*c", (("a", "c"),)),
        (r"a(?:b|c)?d", (("a", "d"),)),
        (r"x{3}y", (("x", "y"),)),
        (r"\$HOME", (("$HOME",),)),
        (r"[]a]bc", (("bc",),)),
        (r"[[:alpha:]]q", (("q",),)),
    ],
)
def test_literals_of_simple_patterns(pattern: str, alternatives: tuple[tuple[str, ...]]) -> None:
    requirement = required_literals(pattern)
    assert requirement is not None
    assert requirement.alternatives == alternatives
    assert not requirement.casefold


@pytest.mark.parametrize(
    "pattern",
    [
        "",
        "a*",
        "a|b*",
        r"\p{Greek}",
        r"\x41",
        r"\Qa.b\E",
        r"\141",
        "a{,3}",
        "(?i)caf\u00e9",  # a non-ASCII literal under (?i): case folds not modelled
        "(?i)x|\U0001f916",
    ],
)
def test_no_prefilter_when_unsure(pattern: str) -> None:
    assert required_literals(pattern) is None


def test_case_insensitive_patterns_compare_casefolded() -> None:
    requirement = required_literals(r"(?i)kill\s")
    assert requirement is not None and requirement.casefold
    assert requirement.admits("KILL -9")
    assert requirement.admits("\u212aill -9")  # KELVIN SIGN: RE2 (?i) matches it as k
    assert compile_regex(r"(?i)kill\s").search("\u212aill -9")
    assert not requirement.admits("ls")


def test_a_refused_text_never_compiles_the_pattern() -> None:
    regex = LazyRegex(r"(?:^|\s)terraform\s+destroy")
    assert not regex.search("ls -la")
    assert not regex.compiled
    assert regex.search("terraform destroy")
    assert regex.compiled


def test_a_catalog_decides_as_before_with_the_prefilter() -> None:
    """The built-in catalog still blocks and allows what its seed policies say."""
    evaluator = fp.Evaluator(fp.builtin_catalog(), clock=lambda: 1000.0)
    pushed = fp.Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": "git push -f"})
    listed = fp.Event("PreToolUse", "t", tool_name="Bash", tool_input={"command": "ls -la"})
    assert evaluator.evaluate(pushed).outcome == "hard_block"
    assert evaluator.evaluate(listed).outcome == "allow"


@given(
    st.lists(
        st.lists(st.sampled_from(["rm", "-", "--force", "git ", "push", ":", "iex", "x"]),
                 min_size=1, max_size=3).map(tuple),
        max_size=12,
    ),
    st.lists(st.sampled_from(["rm -rf x", "git push --force", "ls", "a:b", "iex x", "-"]),
             max_size=3),
)  # fmt: skip
def test_the_hitting_literals_refuse_only_what_no_alternative_admits(
    alternatives: list[tuple[str, ...]], parts: list[str]
) -> None:
    # Requirement.admits first looks for a few literals that every alternative holds one of
    from forge_policy.catalog.prefilter import Requirement, hitting_literals

    keys = hitting_literals(tuple(alternatives))
    assert all(any(key in literals for key in keys) for literals in alternatives)
    text = " ".join(parts)
    expected = any(all(literal in text for literal in literals) for literals in alternatives)
    assert Requirement(tuple(alternatives), False).admits(text) == expected
