"""The hand-rolled ISO 8601 conversions agree with :mod:`datetime` everywhere."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from forge_policy._time import iso, parse_iso

MOMENTS = st.integers(min_value=-2_000_000_000_000_000, max_value=4_000_000_000_000_000).map(
    lambda micros: micros / 1_000_000
)


@given(MOMENTS)
def test_iso_matches_datetime(ts: float) -> None:
    assert iso(ts) == datetime.fromtimestamp(ts, UTC).isoformat(timespec="microseconds")


@given(MOMENTS)
def test_parse_round_trips(ts: float) -> None:
    text = iso(ts)
    assert abs(parse_iso(text) - datetime.fromisoformat(text).timestamp()) < 1e-6


@given(st.text(max_size=40))
def test_parse_never_raises(text: str) -> None:
    assert isinstance(parse_iso(text, default=-1.0), float)


@given(MOMENTS, st.lists(st.integers(0, 999_999), min_size=1, max_size=4))
def test_stamps_of_one_second_share_its_text_and_nothing_else(
    ts: float, fractions: list[int]
) -> None:
    second = ts // 1
    for micros in fractions:  # iso formats a second's date once; each stamp keeps its fraction
        moment = second + micros / 1_000_000
        assert iso(moment) == datetime.fromtimestamp(moment, UTC).isoformat(timespec="microseconds")
