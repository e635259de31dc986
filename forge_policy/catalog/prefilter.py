"""The literals any match of a regex must contain, so most texts are refused without RE2.

A call into the RE2 binding costs microseconds; ``in`` on a short str costs nanoseconds. Most
commands an agent runs match none of a catalog's regexes, and most regexes name a word
(``git``, ``push``, ``rm``) that such a command does not contain.

:func:`required_literals` reads a pattern once and returns its requirement as alternatives of
literals: some alternative must have all its literals in the text, or the pattern cannot match.
The reading is conservative: any construct it does not fully understand (``\\p{..}``, ``\\x41``,
``\\Q..\\E``, an odd ``{``) gives no requirement at all (None), and an optional or repeated part
only ever drops literals, never adds one. A case-insensitive pattern is compared on the
``casefold()`` of both sides, and only while its literals are ASCII, whose RE2 case-fold orbits
(``k K`` U+212A, ``s S`` U+017F, ...) ``str.casefold`` maps to one character.

>>> required_literals(r"(?:^|\\s)git\\s+push\\b")
Requirement(alternatives=(('git', 'push'),), casefold=False)
>>> required_literals(r"(?i)\\bcurl|wget").alternatives
(('curl',), ('wget',))
>>> required_literals(r"a*|b") is None  # the first branch matches any text
True
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

#: what :func:`required_literals` gives for a pattern, as data: ``(alternatives, casefold)``, or
#: None for no requirement (the form the compiled catalog cache stores)
Known = tuple[tuple[tuple[str, ...], ...], bool] | None

#: alternatives of conjunctions; ``[()]`` means "no requirement"
_Dnf = list[tuple[str, ...]]
_NONE: _Dnf = [()]
#: past this many alternatives a part's requirement is dropped (sound: it only weakens)
MAX_ALTERNATIVES = 32

_META = frozenset("\\.^$|?*+()[]{}")
_ESCAPED_CHARS = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_CLASS_ESCAPES = frozenset("dDsSwW")
_ZERO_WIDTH_ESCAPES = frozenset("bBAz")
_FLAGS = frozenset("imsU-")


#: requirements read from a sealed compiled catalog cache (:mod:`forge_policy.catalog.cache`),
#: by pattern: derived by :func:`derive_literals` when the cache was written, with this module
#: among the files whose change invalidates every cache, so a cold hook reads them instead of
#: parsing its patterns again
_KNOWN: dict[str, Known] = {}


def remember(known: Iterable[tuple[str, Known]]) -> None:
    """Take the requirements of ``known``'s patterns (each derived by :func:`derive_literals`
    with the default limit) as read: :func:`required_literals` then answers them from memory."""
    _KNOWN.update(known)


class _GiveUp(Exception):
    """The pattern uses something this reader does not model: no prefilter."""


class Requirement:
    """What a match needs: all literals of some alternative (on the casefolded text if
    ``casefold``). Built by :func:`required_literals`.

    >>> requirement = required_literals(r"rm\\s+-rf")
    >>> requirement.admits("sudo rm  -rf /"), requirement.admits("ls -la")
    (True, False)
    """

    __slots__ = ("alternatives", "casefold", "keys")

    def __init__(self, alternatives: tuple[tuple[str, ...], ...], casefold: bool) -> None:
        self.alternatives = alternatives
        self.casefold = casefold
        #: :func:`hitting_literals`, found on the first :meth:`admits` (the literal index of a
        #: large catalog builds a requirement per behavior and never asks it to admit)
        self.keys: tuple[str, ...] | None = None

    def __repr__(self) -> str:
        return f"Requirement(alternatives={self.alternatives!r}, casefold={self.casefold!r})"

    def admits(self, text: str) -> bool:
        """False only when no match of the pattern can exist in ``text``."""
        if self.casefold:
            text = text.casefold()
        keys = self.keys
        if keys is None:
            keys = self.keys = hitting_literals(self.alternatives)
        for key in keys:  # most texts hold none of them: a few ``in``, not one per literal
            if key in text:
                break
        else:
            return False
        for literals in self.alternatives:
            for literal in literals:
                if literal not in text:
                    break
            else:
                return True
        return False

    def as_test(self) -> Callable[[str], bool]:
        """:meth:`admits` as the fastest equivalent callable (one literal: ``str.__contains__``
        bound to it)."""
        if not self.casefold and len(self.alternatives) == 1 and len(self.alternatives[0]) == 1:
            literal = self.alternatives[0][0]
            return lambda text: literal in text
        return self.admits


def hitting_literals(alternatives: tuple[tuple[str, ...], ...]) -> tuple[str, ...]:
    """A few literals such that every alternative holds one of them: a text with none of them
    satisfies no alternative. Chosen greedily (the literal in the most alternatives left),
    preferring literals of three characters or more (a ``-`` or a ``|`` is in many commands,
    and a text holding one is then checked in full). Linear in the literals but for the
    choices: it runs on a hook's first event.

    >>> hitting_literals((("npm", "install"), ("npm", "add"), ("rm", "-", "--no-preserve-root")))
    ('npm', '--no-preserve-root')
    >>> hitting_literals(())
    ()
    """
    holders: dict[str, list[int]] = {}  # literal -> the alternatives that hold it
    for index, literals in enumerate(alternatives):
        for literal in set(literals):
            holders.setdefault(literal, []).append(index)
    #: how many uncovered alternatives hold each literal (a literal that covers none is gone)
    left = {literal: len(indexes) for literal, indexes in holders.items()}
    covered = [False] * len(alternatives)
    uncovered = len(alternatives)
    chosen: list[str] = []
    while uncovered:
        best = max(left, key=lambda c: (len(c) >= 3, left[c], len(c), c))
        chosen.append(best)
        for index in holders[best]:
            if not covered[index]:
                covered[index] = True
                uncovered -= 1
                for literal in set(alternatives[index]):
                    left[literal] -= 1
                    if not left[literal]:
                        del left[literal]
    return tuple(chosen)


def required_literals(pattern: str, limit: int = MAX_ALTERNATIVES) -> Requirement | None:
    """The requirement of ``pattern`` (a valid RE2 pattern), or None when there is none; a part
    with more than ``limit`` alternatives is dropped (a larger one keeps more of a long
    alternation such as the secret patterns', for a reading done once, not on a hook's path).
    A pattern whose requirement was :func:`remember`-ed is not read again.

    >>> required_literals(r"\\.(py|ts)$").alternatives
    (('.', 'py'), ('.', 'ts'))
    >>> required_literals(r"\\p{Greek}+x") is None  # not modelled: no prefilter
    True
    """
    if limit == MAX_ALTERNATIVES and pattern in _KNOWN:
        known = _KNOWN[pattern]
        return None if known is None else Requirement(*known)
    return _read(pattern, limit)


def derive_literals(pattern: str) -> Known:
    """The requirement of ``pattern`` read from the pattern itself (never from memory), as
    data: what a compiled catalog cache stores for it.

    >>> derive_literals(r"(?i)git\\s+push"), derive_literals(r".*")
    (((('git', 'push'),), True), None)
    """
    requirement = _read(pattern, MAX_ALTERNATIVES)
    return None if requirement is None else (requirement.alternatives, requirement.casefold)


def _read(pattern: str, limit: int) -> Requirement | None:
    reader = _Reader(pattern, limit)
    try:
        dnf = reader.alternation()
        if reader.pos != len(pattern):
            raise _GiveUp  # an unbalanced ")": RE2 refused it already, but stay safe
    except (_GiveUp, IndexError, ValueError):
        return None
    if any(not literals for literals in dnf):
        return None
    if reader.casefold:
        if any(not literal.isascii() for literals in dnf for literal in literals):
            return None
        dnf = [tuple(literal.casefold() for literal in literals) for literals in dnf]
    return Requirement(tuple(dnf), reader.casefold)


def _product(left: _Dnf, right: _Dnf, limit: int) -> _Dnf:
    if left == _NONE:
        return right
    if right == _NONE:
        return left
    if len(left) * len(right) > limit:
        # keep the side with fewer alternatives: dropping a conjunct only weakens
        return left if len(left) <= len(right) else right
    return [tuple(dict.fromkeys(a + b)) for a in left for b in right]


def _union(branches: list[_Dnf], limit: int) -> _Dnf:
    out: _Dnf = []
    for branch in branches:
        if any(not literals for literals in branch):
            return _NONE  # a branch with no requirement: the whole alternation has none
        out += branch
    if len(out) > limit:
        return _NONE
    return out


class _Reader:
    """A recursive-descent reading of the subset of RE2 syntax that carries literals."""

    def __init__(self, pattern: str, limit: int) -> None:
        self.pattern = pattern
        self.limit = limit
        self.pos = 0
        self.casefold = False

    def alternation(self) -> _Dnf:
        branches = [self.sequence()]
        while self.pos < len(self.pattern) and self.pattern[self.pos] == "|":
            self.pos += 1
            branches.append(self.sequence())
        return _union(branches, self.limit)

    def sequence(self) -> _Dnf:
        """A concatenation: the product of its parts; literal characters join into runs."""
        pattern, limit = self.pattern, self.limit
        result: _Dnf = _NONE
        run = ""
        while self.pos < len(pattern) and pattern[self.pos] not in "|)":
            part, char = self.atom()
            min_repeat = self.quantifier()
            if char is not None:
                if min_repeat == 0:
                    result, run = _product(result, [(run,)] if run else _NONE, limit), ""
                elif min_repeat == 1:
                    run += char  # "ab" then a plain atom: the run goes on
                else:  # "x+", "x{2,}": one x is certain, what follows may be another
                    result, run = _product(result, [(run + char,)], limit), ""
                continue
            result, run = _product(result, [(run,)] if run else _NONE, limit), ""
            if min_repeat != 0:
                result = _product(result, part, limit)
        return _product(result, [(run,)] if run else _NONE, limit)

    def atom(self) -> tuple[_Dnf, str | None]:
        """One atom: (its requirement, or the literal character it is)."""
        pattern = self.pattern
        char = pattern[self.pos]
        self.pos += 1
        if char == "(":
            return self.group(), None
        if char == "[":
            self.skip_class()
            return _NONE, None
        if char in ".^$":
            return _NONE, None
        if char == "\\":
            escaped = pattern[self.pos]
            self.pos += 1
            if escaped in _ESCAPED_CHARS:
                return _NONE, _ESCAPED_CHARS[escaped]
            if escaped in _CLASS_ESCAPES or escaped in _ZERO_WIDTH_ESCAPES:
                return _NONE, None
            if escaped.isascii() and not escaped.isalnum():
                return _NONE, escaped
            raise _GiveUp
        if char in "?*+{":
            raise _GiveUp  # a quantifier with nothing before it, or a literal "{"
        return _NONE, char

    def group(self) -> _Dnf:
        pattern = self.pattern
        if pattern.startswith("?", self.pos):
            self.pos += 1
            if pattern.startswith("P<", self.pos) or pattern.startswith("<", self.pos):
                end = pattern.index(">", self.pos)
                self.pos = end + 1
            else:
                start = self.pos
                while pattern[self.pos] in _FLAGS:
                    self.pos += 1
                flags = pattern[start : self.pos]
                if "i" in flags.split("-")[0]:
                    self.casefold = True  # for the whole pattern: sound, if coarser
                if pattern[self.pos] == ")":
                    self.pos += 1
                    if pattern[self.pos : self.pos + 1] in ("*", "+", "?", "{"):
                        raise _GiveUp  # RE2 applies it to the atom before the flags
                    return _NONE
                if pattern[self.pos] != ":":
                    raise _GiveUp  # lookaround and the like (RE2 refuses them anyway)
                self.pos += 1
        inner = self.alternation()
        if pattern[self.pos] != ")":
            raise _GiveUp
        self.pos += 1
        return inner

    def skip_class(self) -> None:
        """Move past a character class: ``[]a]``, ``[^]a]``, ``[\\]]``, ``[[:alpha:]]``."""
        pattern = self.pattern
        if pattern[self.pos] == "^":
            self.pos += 1
        if pattern[self.pos] == "]":
            self.pos += 1
        while True:
            char = pattern[self.pos]
            if char == "]":
                self.pos += 1
                return
            if char == "\\":
                self.pos += 2
            elif pattern.startswith("[:", self.pos):
                self.pos = pattern.index(":]", self.pos + 2) + 2
            else:
                self.pos += 1

    def quantifier(self) -> int:
        """The least repeat count of the quantifier here (1: none); a lazy ``?`` is skipped."""
        pattern = self.pattern
        if self.pos >= len(pattern):
            return 1
        char = pattern[self.pos]
        if char in "*?":
            least = 0
        elif char == "+":
            least = 2  # "at least one, maybe more": see sequence()
        elif char == "{":
            end = pattern.find("}", self.pos)
            body = pattern[self.pos + 1 : end] if end > 0 else ""
            low, _, high = body.partition(",")
            if not low.isdigit() or not (high == "" or high.isdigit()):
                raise _GiveUp  # RE2 reads an odd "{" as a literal; not modelled
            # "{0,..}" is optional, "{1}" and "{1,1}" plain, anything else present and repeatable
            if int(low) == 0:
                least = 0
            elif body in ("1", "1,1"):
                least = 1
            else:
                least = 2
            self.pos = end
        else:
            return 1
        self.pos += 1
        if self.pos < len(pattern) and pattern[self.pos] == "?":
            self.pos += 1
        if self.pos < len(pattern) and pattern[self.pos] in "*+?{":
            raise _GiveUp  # a repeated repeat: RE2 refuses it, stay safe
        return least
