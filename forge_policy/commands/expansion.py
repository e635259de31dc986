"""The word expansions the command model reads exactly: braces, parameters and ``$IFS``.

The reading is an allowlist (SPEC §6, "Reading fails closed"): a form listed here is expanded
as bash would; a form that is not (``${!X}`` indirection, ``${X@Q}``, a pattern operation whose
pattern the reading cannot apply) marks the running fact incomplete with a reason naming it
(:func:`~forge_policy._budget.truncated`), so a blocking behavior that could match decides as
matched.

- :func:`braces`: ``{a,b}``, ``f{,.bak}``, ``{1..3}``, ``{a..e..2}``, nested, at most
  :data:`MAX_WORDS` words (past it, incomplete);
- :func:`parameters`: ``$X``, ``${X}``, ``${X:-d}``/``${X-d}``, ``${X:=d}`` (assigns),
  ``${X:+w}``, ``${X:?m}``, ``${#X}``, ``${X:1:2}``, ``${X#p}``/``${X##p}``/``${X%p}``/``${X%%p}``,
  ``${X/a/b}``/``${X//a/b}``, ``${X^^}``/``${X,,}``; an unset variable keeps its text (an
  opaque word), ``$IFS`` and ``${IFS}`` become word breaks (:data:`BREAK`).

>>> braces("cp f{,.bak}"), braces("{rm,-rf,~}"), braces("{1..3}")
(['cp f', 'cp f.bak'], ['rm', '-rf', '~'], ['1', '2', '3'])
>>> parameters("${X:0:2} -rf", {"X": "rmx"}.get)
'rm -rf'
"""

from __future__ import annotations

import functools
import re
from fnmatch import fnmatchcase

from forge_policy._budget import truncated
from forge_policy._lazy import lazy_pattern

#: the word a process substitution (``<(CMD)``) leaves among its command's words, as bash
#: names the file it reads from
PROCESS_SUBSTITUTION = "/dev/fd/63"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Lookup = Callable[[str], "str | None"]

#: A brace expansion gives at most this many words; past it the reading is incomplete.
MAX_WORDS = 256
#: Where ``$IFS`` splits a word (a character no shell word holds).
BREAK = "\0"
#: A value longer than this is not matched against a pattern (the work would grow with it).
_MAX_PATTERN_VALUE = 4096
_SEQUENCE = lazy_pattern(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-]"
_PARAMETER = lazy_pattern(r"\$(?:\{([^{}]*)\}|([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]))")
_BODY = lazy_pattern(rf"(#)?({_NAME})(.*)", re.S)
_SLICE = lazy_pattern(r":[ \t]*(-?[0-9]*)[ \t]*(?::[ \t]*(-?[0-9]+)[ \t]*)?")
_LISTS = lazy_pattern(r"![A-Za-z_][A-Za-z0-9_]*(?:\[[@*]\]|[@*])")
_ELEMENT = lazy_pattern(r"\[([^\]]*)\]")
_TWO_CHAR_OPS = frozenset({":-", ":=", ":+", ":?", "##", "%%", "//", "^^", ",,"})
_GLOB = lazy_pattern(r"[*?\[\\]")


def braces(word: str) -> list[str]:
    """The words bash's brace expansion makes of ``word`` (``${…}`` is not one), in order.

    >>> braces("a{b,c{d,e}}f"), braces("{x}"), braces("${HOME}/{a,b}")
    (['abf', 'acdf', 'acef'], ['{x}'], ['${HOME}/a', '${HOME}/b'])
    """
    if "{" not in word:
        return [word]
    out, cut = _braces(word)
    if cut:
        truncated(cut)
    return list(out)


@functools.lru_cache(maxsize=256)
def _braces(word: str) -> tuple[tuple[str, ...], str]:
    """:func:`braces`' words, and why they were cut (or ``""``); cached: padding repeats."""
    out: list[str] = []
    cut = ""
    pending = [word]
    while pending:
        current = pending.pop()
        found = _first(current)
        if found is None:
            out.append(current)
        else:
            start, end, items = found
            if len(items) > MAX_WORDS:
                cut = f"a brace sequence gives more than {MAX_WORDS} words: the rest was not read"
                del items[MAX_WORDS:]
            head, tail = current[:start], current[end + 1 :]
            pending.extend(head + item + tail for item in reversed(items))
        if len(out) + len(pending) > MAX_WORDS:
            cut = f"a brace expansion gives more than {MAX_WORDS} words: the rest was not read"
            break
    # a word the expansion leaves empty is removed, as bash does ("{rm,}" is "rm")
    return tuple(w for w in out[:MAX_WORDS] if w), cut


def _first(word: str) -> tuple[int, int, list[str]] | None:
    """``(start, end, items)`` of the first brace expression of ``word`` that expands."""
    i = 0
    while True:
        i = word.find("{", i)
        if i < 0:
            return None
        end = _closing(word, i)
        if end is None:
            return None
        if i > 0 and word[i - 1] == "$":  # a parameter, not a brace expression
            i = end + 1
            continue
        inner = word[i + 1 : end]
        items = _alternatives(inner)
        if len(items) > 1:
            return i, end, items
        sequence = _sequence(inner)
        if sequence is not None:
            return i, end, sequence
        i += 1


def _closing(word: str, start: int) -> int | None:
    depth = 0
    for j in range(start, len(word)):
        c = word[j]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return j
    return None


def _alternatives(inner: str) -> list[str]:
    """``inner`` split at its top-level commas."""
    items: list[str] = []
    depth = start = 0
    for j, c in enumerate(inner):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            items.append(inner[start:j])
            start = j + 1
    items.append(inner[start:])
    return items


def _sequence(inner: str) -> list[str] | None:
    m = _SEQUENCE().fullmatch(inner)
    if m is None:
        return None
    first, last, step_text = m.groups()
    step = abs(int(step_text)) if step_text else 1
    step = step or 1
    if first.lstrip("-").isdigit() != last.lstrip("-").isdigit():
        return None
    numeric = first.lstrip("-").isdigit()
    a, b = (int(first), int(last)) if numeric else (ord(first), ord(last))
    count = min(abs(b - a) // step + 1, MAX_WORDS + 1)  # past MAX_WORDS: cut by the caller
    direction = step if b >= a else -step
    values = [a + k * direction for k in range(count)]
    if not numeric:
        return [chr(v) for v in values]
    width = (
        max(len(first), len(last))
        if first.lstrip("-").startswith("0") or (last.lstrip("-").startswith("0"))
        else 0
    )
    return [str(v).zfill(width) if width else str(v) for v in values]


def parameters(word: str, lookup: Lookup, assign: Callable[[str, str], None] | None = None) -> str:
    """``word`` with its parameter expansions applied where ``lookup`` knows the value (see the
    module doc); ``$IFS`` and ``${IFS}`` become :data:`BREAK`. A form the reading does not model
    keeps its text and marks the reading incomplete.

    >>> parameters("${F%.py}.txt ${#F} ${F/a/b} ${U:-d} $U", {"F": "a.py"}.get)
    'a.txt 4 b.py d $U'
    >>> parameters("rm${IFS}-rf", {}.get) == "rm" + BREAK + "-rf"
    True
    """
    if "$" not in word:
        return word
    start = word.find("${")
    while start >= 0:
        if _PARAMETER().match(word, start) is None:  # nested or unclosed: ${X:-${Y}}, ${X
            truncated(f"the parameter expansion in {word[start:start + 40]!r} is not one the "
                      "reading models")  # fmt: skip
            break
        start = word.find("${", start + 2)

    def one(m: re.Match[str]) -> str:
        body = m.group(1)
        if body is None:
            name = m.group(2)
            if name == "IFS":
                return BREAK
            value = lookup(name)
            return m.group() if value is None else value
        out = _operation(body, lookup, assign)
        return m.group() if out is None else out

    return _PARAMETER().sub(one, word)


def _operation(body: str, lookup: Lookup, assign: Callable[[str, str], None] | None) -> str | None:
    """The value of ``${body}``, or None when it stays as written (an unset variable, or a form
    the reading does not model: then the reading is marked incomplete)."""
    if _LISTS().fullmatch(body):  # the keys of an array, the names with a prefix: unknown words
        return None
    m = _BODY().fullmatch(body)
    if m is None:
        return _unmodelled(body)
    length, name, rest = m.groups()
    if name == "IFS" and not rest and not length:
        return BREAK
    value = lookup(name)
    if length:
        if rest and not _ELEMENT().fullmatch(rest):
            return _unmodelled(body)
        return None if value is None else str(len(value))
    if not rest:
        return value
    element = _ELEMENT().match(rest)
    if element is not None:  # an array element: arrays are not modelled, a scalar is element 0
        if value is not None and element.group(1) not in ("0", "@", "*"):
            return _unmodelled(body)
        rest = rest[element.end() :]
        if not rest:
            return value
        if value is None:
            return None
    op = rest[:2] if rest[:2] in _TWO_CHAR_OPS else rest[:1]
    arg = rest[len(op) :]
    if op in (":-", "-", ":=", "=", ":+", "+", ":?", "?"):
        empty = value is None or (op.startswith(":") and value == "")
        if op in (":+", "+"):
            return None if value is None and op == "+" else ("" if empty else arg)
        if not empty:
            return value
        if op in (":=", "=") and assign is not None:
            assign(name, arg)
        return None if op in (":?", "?") else arg
    if op == ":":
        sliced = _SLICE().fullmatch(rest)
        if sliced is None:
            return _unmodelled(body)
        if value is None:
            return None
        start = int(sliced.group(1) or "0")
        start = max(len(value) + start, 0) if start < 0 else start
        if sliced.group(2) is None:
            return value[start:]
        count = int(sliced.group(2))
        stop = len(value) + count if count < 0 else start + count
        return value[start:stop]
    if op in ("^^", ",,", "^", ","):
        if arg:
            return _unmodelled(body)
        if value is None:
            return None
        if op == "^^":
            return value.upper()
        if op == ",,":
            return value.lower()
        return (value[:1].upper() if op == "^" else value[:1].lower()) + value[1:]
    if op in ("#", "##", "%", "%%"):
        return None if value is None else _trim(value, op, arg, body)
    if op in ("/", "//"):
        return None if value is None else _replace(value, op, arg, body)
    return _unmodelled(body)


def _trim(value: str, op: str, pattern: str, body: str) -> str | None:
    if len(value) > _MAX_PATTERN_VALUE or "\\" in pattern or "[" in pattern:
        return _unmodelled(body)
    sizes = range(len(value) + 1)
    if op in ("##", "%%"):
        sizes = range(len(value), -1, -1)
    for k in sizes:
        if op.startswith("#") and fnmatchcase(value[:k], pattern):
            return value[k:]
        if op.startswith("%") and fnmatchcase(value[len(value) - k :], pattern):
            return value[: len(value) - k]
    return value


def _replace(value: str, op: str, arg: str, body: str) -> str | None:
    pattern, _slash, replacement = arg.partition("/")
    anchor = pattern[:1] if pattern[:1] in ("#", "%") else ""
    pattern = pattern[len(anchor) :]
    if _GLOB().search(pattern) or _GLOB().search(replacement) or not pattern:
        return _unmodelled(body)
    if anchor == "#":
        return replacement + value[len(pattern) :] if value.startswith(pattern) else value
    if anchor == "%":
        return value[: -len(pattern)] + replacement if value.endswith(pattern) else value
    return value.replace(pattern, replacement, -1 if op == "//" else 1)


def _unmodelled(body: str) -> str | None:
    """Mark the reading incomplete: ``${body}`` is not a form it models (its text stays)."""
    truncated(f"the parameter expansion ${{{body}}} is not one the reading models")
    return None
