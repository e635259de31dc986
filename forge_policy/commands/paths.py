"""``~`` and ``$HOME`` in a path word: all a file tool's path needs of the shell's expansions.

Its own module (issue 28) so that reading a path (a Read's ``file_path``) does not load the
lexer, with its patterns and its expansion and launcher tables.
"""

from __future__ import annotations

import os

from forge_policy._budget import read_outside


def expand_path(word: str) -> str:
    """``~``, ``~/x``, ``$HOME/x`` and ``${HOME}/x`` expanded; other words unchanged."""
    for prefix in ("${HOME}", "$HOME"):
        if word == prefix or word.startswith(prefix + "/"):
            read_outside()  # the environment's $HOME
            return os.path.expanduser("~") + word[len(prefix) :]
    if not word.startswith("~"):
        return word
    read_outside()
    try:
        return os.path.expanduser(word)
    except (KeyError, ValueError):  # a user name with NUL or a lone surrogate
        return word
