"""The relaxed secret patterns (issue 28): the one regex that first screens a text for secrets
is compiled from :func:`forge_policy.secrets.relaxed` patterns, so it must match every text a
real pattern matches, or a secret would pass unredacted and a read of it unblocked."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from test_secrets import NOT_SECRETS, SECRETS
from test_secrets_families import FOUND, NOT_FOUND

from forge_policy.catalog.dsl import compile_regex
from forge_policy.secrets import RELAXED_COUNT, SECRET_PATTERNS, detect, relaxed

PAIRS = [(pid, compile_regex(p), compile_regex(relaxed(p))) for pid, p in SECRET_PATTERNS]
SAMPLES = [t for t, _ in SECRETS] + [t for t, *_ in FOUND] + NOT_SECRETS + NOT_FOUND


def test_every_relaxed_pattern_has_no_count_above_the_bound() -> None:
    for _pid, pattern in SECRET_PATTERNS:
        counts = re.findall(r"(?<!\\)\{(\d+)(?:,\d*)?\}", relaxed(pattern))
        assert all(int(n) <= RELAXED_COUNT for n in counts), pattern


def test_a_relaxed_pattern_matches_wherever_its_pattern_does() -> None:
    hits = 0
    for text in SAMPLES:
        data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
        for pid, regex, loose in PAIRS:
            if regex.search(data) is not None:
                hits += 1
                assert loose.search(data) is not None, (pid, text)
    assert hits > len(SECRETS)  # the samples did exercise the patterns


def test_the_screen_still_finds_every_secret_sample() -> None:
    for text, expected in SECRETS:
        assert detect(text) != "" or not expected, text


#: pieces of secrets (prefixes, separators, key names) and filler, shuffled into texts
PIECES = st.sampled_from(
    ["sk-", "sk-ant-api03-", "AKIA", "ghp_", "github_pat_", "glpat-", "xoxb-", "eyJ", ".", "-",
     "_", "=", ":", " ", '"', "'", "\n", "password", "token", "key", "secret", "://", "@",
     "hooks.slack.com/services/", "npm_", "hf_", "-----BEGIN RSA PRIVATE KEY-----", "AIzaSy"]
)  # fmt: skip
FILLER = st.text(alphabet="abcXYZ0189+/_-", min_size=1, max_size=60)


@given(st.lists(st.one_of(PIECES, FILLER), max_size=12))
def test_relaxing_never_loses_a_match(parts: list[str]) -> None:
    data = "".join(parts).encode()
    for pid, regex, loose in PAIRS:
        if regex.search(data) is not None:
            assert loose.search(data) is not None, (pid, data)
