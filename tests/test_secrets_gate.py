"""The secret screen's gate (issue 28): :func:`forge_policy.secrets.may_hold` lets a text skip
the RE2 screen only when no secret pattern can match it, so it must admit every text a pattern
matches, or a secret would pass unredacted and a read of it unblocked. Its table
(:data:`~forge_policy.secrets.NEEDS`) is derived from the patterns (``tests/secrets_gate.py``),
never written by hand: a pattern that changes without it fails here."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from secrets_gate import derived, source
from test_secrets import NOT_SECRETS, SECRETS
from test_secrets_families import FOUND, NOT_FOUND
from test_secrets_relaxed import FILLER, PIECES
from test_secrets_shapes import FOUND as SHAPES
from test_secrets_shapes import NOT_FOUND as NOT_SHAPES

from forge_policy.catalog.dsl import compile_regex
from forge_policy.secrets import NEEDS, SECRET_PATTERNS, _key_gate, detect, may_hold, redact

REGEXES = [compile_regex(pattern) for _pid, pattern in SECRET_PATTERNS]
SAMPLES = [t for t, _ in SECRETS] + [t for t, *_ in FOUND + SHAPES] + NOT_SECRETS
SAMPLES += NOT_FOUND + NOT_SHAPES
#: each pattern's own gate: a pattern whose literals are wrong could hide behind another's
ALONE = [derived(((pid, pattern),)) or () for pid, pattern in SECRET_PATTERNS]


def _bytes(text: str | bytes) -> bytes:
    return text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text


def test_the_table_is_derived_from_the_patterns() -> None:
    table = derived()
    assert table is not None, "a secret pattern has no required literal: no gate is possible"
    assert table == NEEDS, "a secret pattern changed: paste this into forge_policy/secrets.py\n" + (
        source(table)
    )


def test_each_pattern_admits_every_sample_it_matches() -> None:
    hits = 0
    for text in SAMPLES:
        data = _bytes(text)
        for (pid, _pattern), regex, needs in zip(SECRET_PATTERNS, REGEXES, ALONE, strict=True):
            if regex.search(data) is not None:
                hits += 1
                assert may_hold(data, needs), (pid, text)
    assert hits > len(SECRETS)  # the samples did exercise the patterns


def _python(pattern: str) -> str:
    """An RE2 pattern as Python's ``re`` reads it (the secret patterns use one RE2-only escape),
    each repetition bounded (``*`` to ``{0,2}``, ``+`` to ``{1,3}``, ``{n,}`` to ``{n,n+8}``):
    every text the bounded pattern matches, the pattern matches too, and Hypothesis can draw
    one. Unbounded, a PEM key's 64 characters of key material, each followed by ``(?:NL)*``,
    made it throw 959 of 964 drawn texts away, in 209 s."""
    out: list[str] = []
    escaped = False
    in_class = -1  # characters read since the class's "[" (or "[^"); -1: outside a class
    for char in pattern.replace(r"\z", r"\Z"):
        if escaped:
            escaped = False
            in_class += in_class >= 0  # an escaped character is one of the class
        elif char == "\\":
            escaped = True
        elif in_class >= 0:
            in_class = -1 if char == "]" and in_class > 0 else in_class + 1
            if char == "^" and out[-1] == "[":
                in_class = 0  # "[^]" and "[]": the "]" right after them is a character
        elif char == "[":
            in_class = 0
        elif char in "*+":
            char = "{0,2}" if char == "*" else "{1,3}"
        out.append(char)
    return re.sub(r"(?<!\\)\{(\d+),\}", lambda m: f"{{{m[1]},{int(m[1]) + 8}}}", "".join(out))


def test_the_drawn_patterns_are_the_patterns_bounded() -> None:
    assert _python(r"a+[*+]\*b*?[]*]c{2,}\{3,}\z") == r"a{1,3}[*+]\*b{0,2}?[]*]c{2,10}\{3,}\Z"
    assert _python(r"[^]+]*") == r"[^]+]{0,2}"
    for _, pattern in SECRET_PATTERNS:
        assert "*" not in re.sub(r"\[[^]]*\]|\\.", "", _python(pattern).replace("[^]", "[^"))
        re.compile(_python(pattern))


#: the texts each pattern matches, bounded (:func:`_python`); made once: a strategy made in the
#: test would be made again for every example (seconds each for a PEM key's)
DRAWN = [st.from_regex(re.compile(_python(pattern))) for _, pattern in SECRET_PATTERNS]

#: a PEM key's 64 characters of key material are more than Hypothesis likes to generate
SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large]


@pytest.mark.parametrize("index", range(len(SECRET_PATTERNS)), ids=[p for p, _ in SECRET_PATTERNS])
@settings(max_examples=40, deadline=None, suppress_health_check=SLOW)
@given(data=st.data())
def test_every_text_a_pattern_matches_passes_its_gate(index: int, data: st.DataObject) -> None:
    text = data.draw(DRAWN[index])
    raw = _bytes(text)
    if REGEXES[index].search(raw) is not None:  # RE2's reading (\b, \s are ASCII there)
        assert may_hold(raw, ALONE[index]), (SECRET_PATTERNS[index][0], text)
        assert may_hold(raw)


@given(st.lists(st.one_of(PIECES, FILLER), max_size=12))
def test_pieces_of_secrets_never_match_past_the_gate(parts: list[str]) -> None:
    data = "".join(parts).encode()
    if any(regex.search(data) is not None for regex in REGEXES):
        assert may_hold(data), data


@given(st.text(max_size=80))
def test_a_text_the_gate_refuses_holds_no_secret(text: str) -> None:
    data = _bytes(text)
    if not may_hold(data):
        assert all(regex.search(data) is None for regex in REGEXES), text
        assert redact(text) == text


def test_the_gate_fails_closed_on_text_that_is_not_ascii() -> None:
    # RE2 folds the Kelvin sign to k: "\u212aey" is a key name to the case-insensitive patterns
    kelvin = 'API_\u212aEY = "hunter22hunter22"'
    assert may_hold(kelvin.encode())
    assert detect(kelvin) == "password_assignment"
    assert redact(kelvin) == 'API_\u212aEY = "[REDACTED]"'


def test_the_gate_lets_the_common_texts_skip_the_screen() -> None:
    # what a hard block writes: its command, record keys, ids, stamps, digests
    common = ["git push --force origin main", "session_id", "no-destructive-git"]
    for text in [*common, "2026-12-03T09:18:58.560017+00:00", "3f33515788426f3b10a1e4eef"]:
        assert not may_hold(text.encode()), text
        assert detect(text) == ""


KEYS = st.sampled_from([key for key, _ in NEEDS])


@given(st.lists(st.one_of(KEYS, PIECES, FILLER, st.text(max_size=12)), max_size=8))
def test_the_key_gate_refuses_exactly_the_texts_that_hold_no_key(parts: list[str]) -> None:
    """The warm process's gate (a trie of the keys, asked for after GATE_AFTER calls) says "no key"
    exactly when no key of NEEDS is in the lower-cased text, so may_hold answers as without it
    (the table given explicitly skips the gate)."""
    search = _key_gate()
    assert search is not None
    text = "".join(parts)
    lower = text.lower()
    assert (search(lower) is None) == (not any(key in lower for key, _ in NEEDS)), text
    if text.isascii():
        assert may_hold(text.encode()) == may_hold(text.encode(), NEEDS), text
