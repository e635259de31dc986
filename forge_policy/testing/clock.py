"""A clock a test moves by hand, for the ``clock=`` of :class:`~forge_policy.Evaluator`.

>>> clock = FakeClock(1000.0)
>>> clock.advance(30)
>>> clock()
1030.0
"""

from __future__ import annotations

# a fixed, recent instant: far from 0 so windows and TTLs never reach before the epoch
DEFAULT_START = 1_800_000_000.0


class FakeClock:
    """Callable returning the current fake time (seconds since the epoch); ``advance`` moves it.

    Time never runs backwards in a real session, so a negative step is refused.
    """

    def __init__(self, start: float = DEFAULT_START) -> None:
        self.now = float(start)

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward.

        >>> FakeClock().advance(-1)
        Traceback (most recent call last):
        ValueError: FakeClock.advance: seconds must be >= 0, got -1
        """
        if seconds < 0:
            raise ValueError(f"FakeClock.advance: seconds must be >= 0, got {seconds!r}")
        self.now += seconds

    def __repr__(self) -> str:
        return f"FakeClock({self.now!r})"
