"""Colour for a person at a terminal, and none for anything else.

Colour is on when stdout is a terminal, ``NO_COLOR`` is unset or empty (https://no-color.org)
and ``TERM`` is not ``dumb``; ``FORCE_COLOR`` (set, not empty) turns it on for a pipe (a pager
that keeps colour, ``less -R``), and ``NO_COLOR`` wins over it. Plain ANSI SGR codes: nothing
is imported for them, and nothing here is on the hook's path (the hook prints no colour).

>>> paint = Paint(True)
>>> paint.red("block")
'\\x1b[31mblock\\x1b[0m'
>>> Paint(False).red("block")
'block'
>>> enabled(None, {"NO_COLOR": "1", "FORCE_COLOR": "1"})
False
>>> enabled(None, {"FORCE_COLOR": "1"})
True
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import IO, Any

_RESET = "\x1b[0m"
#: How an outcome, an audit record's kind or a level is shown: refusals red, asks and warnings
#: yellow, what went through green, the rest plain.
_TONES = {
    "deny": "red",
    "block": "red",
    "hard_block": "red",
    "soft_block": "yellow",
    "ask": "yellow",
    "warning": "yellow",
    "override": "cyan",
    "grant": "cyan",
    "bypass": "magenta",
    "integrity": "red",
    "recovery": "magenta",
    "allow": "green",
}


def enabled(stream: IO[Any] | None, environ: Mapping[str, str]) -> bool:
    """Whether to colour what is written to ``stream`` (see the module docstring)."""
    if environ.get("NO_COLOR", ""):
        return False
    if environ.get("FORCE_COLOR", ""):
        return True
    if environ.get("TERM", "") == "dumb":
        return False
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


class Paint:
    """Wraps text in SGR codes when ``on``; returns it unchanged otherwise."""

    __slots__ = ("on",)

    def __init__(self, on: bool) -> None:
        self.on = on

    def _sgr(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}{_RESET}" if self.on and text else text

    def bold(self, text: str) -> str:
        return self._sgr("1", text)

    def dim(self, text: str) -> str:
        return self._sgr("2", text)

    def red(self, text: str) -> str:
        return self._sgr("31", text)

    def green(self, text: str) -> str:
        return self._sgr("32", text)

    def yellow(self, text: str) -> str:
        return self._sgr("33", text)

    def magenta(self, text: str) -> str:
        return self._sgr("35", text)

    def cyan(self, text: str) -> str:
        return self._sgr("36", text)

    def tone(self, word: str, text: str | None = None) -> str:
        """``text`` (default ``word``) in the colour of an outcome, kind or level ``word``.

        >>> Paint(True).tone("ask", "ask by search-first")
        '\\x1b[33mask by search-first\\x1b[0m'
        """
        shown = word if text is None else text
        colour = _TONES.get(word)
        return getattr(self, colour)(shown) if colour else shown

    def count(self, n: int, text: str, key: str) -> str:
        """A counter of the ``status`` summary: blocks red, violations yellow, overrides cyan,
        when not zero."""
        if not n:
            return text
        return {"blocks": self.red, "violations": self.yellow, "overrides": self.cyan}.get(
            key, str
        )(text)


def colors(stream: IO[Any] | None) -> Paint:
    """The :class:`Paint` for ``stream`` in this process's environment."""
    import os

    return Paint(enabled(stream, os.environ))
