"""The bounded condition language of behavior files (SPEC §5), compiled to plain callables.

A behavior file is data, not code: fields are looked up, never evaluated; regexes run on RE2 so
that no pattern can take more than linear time; every operator is a small total function that
returns False instead of raising on odd input.

Compilation happens once per catalog load. Evaluating an event only calls the closures built here.

**Undetermined facts (three-valued logic).** A fact whose provider failed, ran out of budget or
was cut by a size cap is an :class:`~forge_policy.values.Unknown` (or, for a list, a
:class:`~forge_policy.values.Partial`: the items found, with the reason). A condition on it is
neither true nor false but *unknown* (``None``), whatever its operator: ``not_contains``,
``not_regex_match`` and ``not_exists`` of an unknown are unknown too, so a negation cannot turn a
failure into a match or a pass. On a partial list a condition is decided when the items found
decide it (one of them matches ``regex_match``, so ``not_regex_match`` is false), and unknown
otherwise. A trigger combines its conditions as Kleene logic does (``all``: one false is false,
else one unknown is unknown; ``any``: one true is true, else one unknown is unknown), and
:meth:`~forge_policy.catalog.behavior.Trigger.test` resolves an unknown trigger by
:attr:`Scope.fail_closed`: matched when the behavior would block (soft_block, hard_block, ask),
not matched when it would only nudge, warn or stay silent.

>>> from forge_policy.values import Unknown
>>> from forge_policy.model import Event
>>> scope = Scope(Event("Stop", "s"), 0, {}, {}, lambda name: Unknown("fact 'x' timed out"))
>>> Condition("facts.x", "not_contains", "rm")(scope)
(None, '')
"""

from __future__ import annotations

import json
from fnmatch import fnmatchcase

import attrs

from forge_policy.errors import RegexError
from forge_policy.events import MCP_PREFIX
from forge_policy.values import Partial, Unknown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from forge_policy.catalog.prefilter import Requirement
    from forge_policy.model import Event

    Test = Callable[[object, object], bool]

OPERATORS: tuple[str, ...] = (
    "regex_match",
    "not_regex_match",
    "contains",
    "not_contains",
    "equals",
    "starts_with",
    "ends_with",
    "in",
    "glob",
    "exists",
    "not_exists",
    "gt",
    "gte",
    "lt",
    "lte",
)
REGEX_OPERATORS = frozenset({"regex_match", "not_regex_match"})
#: the operators that hold when their positive twin does not (``not_exists`` of ``exists``)
NEGATED_OPERATORS = frozenset({"not_regex_match", "not_contains", "not_exists"})
VALUELESS_OPERATORS = frozenset({"exists", "not_exists"})
NUMERIC_OPERATORS = frozenset({"gt", "gte", "lt", "lte"})

_MISSING = ""  # SPEC §5: a missing or null field is the empty string
#: a list longer than this is first searched whole for a regex's required literals
_JOIN_ABOVE = 8


_RE2: list[Any] = []  # [module, options], filled on the first compile


def _re2() -> tuple[Any, Any]:
    # imported on first use: a hook whose event reaches no regex never loads RE2
    if not _RE2:
        import re2

        options = re2.Options()
        options.log_errors = False  # RE2 would otherwise print to the hook's stderr
        _RE2.extend((re2, options))
    return _RE2[0], _RE2[1]


def compile_regex(pattern: str) -> Any:
    """Compile with RE2 (linear time); ``re`` syntax such as ``(?i)``, ``\\b``, ``\\s`` works.

    >>> bool(compile_regex(r"(?i)\\bgit\\s+push").search("GIT push"))
    True
    >>> compile_regex("(?=x)")
    Traceback (most recent call last):
    ...
    forge_policy.errors.RegexError: invalid perl operator: (?=
    """
    re2, options = _re2()
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "invalid pattern"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise RegexError(str(reason)) from None


def compile_literal_set(patterns: list[str]) -> Any:
    """One unanchored ``re2.Set`` of ``patterns``: ``Match(text)`` lists every one found.

    >>> sorted(compile_literal_set(["tool1", "tool10", "x"]).Match("run tool10"))
    [0, 1]
    """
    re2, options = _re2()
    literal_set = re2.Set.SearchSet(options)
    for pattern in patterns:
        literal_set.Add(pattern)
    literal_set.Compile()
    return literal_set


class LazyRegex:
    """A pattern already validated at load time, compiled on first use (keeps cold starts cheap).

    Before RE2 is asked, the literals every match must contain are looked for with ``in``
    (:mod:`forge_policy.catalog.prefilter`); a text without them is refused without compiling
    or calling RE2. The answer is the same either way.

    >>> regex = LazyRegex(r"git\\s+push")
    >>> regex.search("ls -la"), regex.compiled  # refused by the prefilter: never compiled
    (False, False)
    >>> regex.search("git  push"), regex.compiled
    (True, True)
    """

    __slots__ = ("_admits", "_compiled", "_joinable", "_requirement", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._compiled: Any = None
        self._admits: Callable[[str], bool] | None = None
        self._joinable = False
        self._requirement: Requirement | None = None

    @property
    def compiled(self) -> bool:
        """Whether RE2 compiled the pattern yet in this process."""
        return self._compiled is not None

    def _admitter(self) -> Callable[[str], bool]:
        admits = self._admits
        if admits is None:
            from forge_policy.catalog.prefilter import required_literals

            requirement = required_literals(self.pattern)
            admits = self._admits = _always if requirement is None else requirement.as_test()
            self._joinable = requirement is not None and not any(
                "\n" in literal for literals in requirement.alternatives for literal in literals
            )
            self._requirement = requirement
        return admits

    def joinable_requirement(self) -> Requirement | None:
        """The literals every match needs (:func:`~forge_policy.catalog.prefilter.
        required_literals`) when none of them holds a newline, so that they can be looked for
        in several texts joined by newlines at once; else None.

        >>> LazyRegex(r"^rm\\s").joinable_requirement()
        Requirement(alternatives=(('rm',),), casefold=False)
        >>> LazyRegex(r".").joinable_requirement() is None
        True
        """
        self._admitter()
        return self._requirement if self._joinable else None

    def may_match_any(self, items: list[object]) -> bool:
        """False only when no item of a list of strings can match: the literals a match needs
        are looked for once, in the items joined by newlines (none of the literals holds one),
        instead of once per item.

        >>> LazyRegex(r"^rm\\s").may_match_any(["ls", "cd x"]), LazyRegex("x").may_match_any([1])
        (False, True)
        """
        admits = self._admitter()
        if not self._joinable:
            return True
        try:
            joined = "\n".join(items)  # type: ignore[arg-type]
        except TypeError:  # not all strings
            return True
        return admits(joined)

    def search(self, text: str) -> bool:
        admits = self._admits or self._admitter()
        if not admits(text):
            return False
        if self._compiled is None:
            self._compiled = compile_regex(self.pattern)
        return self._compiled.search(text) is not None


# --- tool-name matchers -------------------------------------------------------------------------

_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
_GLOB_CHARS = _NAME_CHARS | {"*"}


def is_mcp_glob(part: str) -> bool:
    """Whether one alternative of a matcher is an MCP glob: it starts with ``mcp__``, holds a
    ``*`` and otherwise only name characters. Such a text was never a useful regex (``_*``
    repeats the underscore), and no matcher of the built-in or the dotforge catalogs has one.

    >>> is_mcp_glob("mcp__*__write*"), is_mcp_glob("mcp__memory__.*"), is_mcp_glob("Write*")
    (True, False, False)
    """
    return part.startswith(MCP_PREFIX) and "*" in part and set(part) <= _GLOB_CHARS


def _alternatives(matcher: str | None) -> list[str]:
    text = (matcher or "").strip()
    return [part.strip() for part in text.replace(",", "|").split("|")]


def matcher_kind(matcher: str | None) -> str:
    """``all``, ``names``, ``globs`` or ``regex``, by Claude Code's matcher rule (SPEC §5)
    extended by one case: alternatives that are names or MCP globs (:func:`is_mcp_glob`),
    one glob at least, are ``globs``, each glob anchored at both ends with ``*`` standing for
    any run of characters. Anything else that is not names is a regex, as before.

    >>> matcher_kind("Bash|mcp__shell__*"), matcher_kind("mcp__memory__.*")
    ('globs', 'regex')
    """
    text = (matcher or "").strip()
    if text in ("", "*"):
        return "all"
    names = _alternatives(text)
    if all(name and set(name) <= _NAME_CHARS for name in names):
        return "names"
    if all(name and (set(name) <= _NAME_CHARS or is_mcp_glob(name)) for name in names):
        return "globs"
    return "regex"


def matcher_names(matcher: str | None) -> frozenset[str] | None:
    """The exact subjects a ``names`` matcher selects; None for ``all``, ``globs`` and
    ``regex`` matchers.

    >>> sorted(matcher_names("Write | Edit"))
    ['Edit', 'Write']
    >>> matcher_names("*") is None, matcher_names("Edit.*") is None
    (True, True)
    """
    if matcher_kind(matcher) != "names":
        return None
    return frozenset(_alternatives(matcher))


def compile_names(entries: frozenset[str] | list[str] | tuple[str, ...]) -> Callable[[str], bool]:
    """A predicate for a list of names and MCP globs (``applies_to.tools``).

    >>> admits = compile_names(["Bash", "mcp__shell__*"])
    >>> admits("Bash"), admits("mcp__shell__run"), admits("mcp__fs__write")
    (True, True, False)
    """
    exact = frozenset(e for e in entries if not is_mcp_glob(e))
    globs = [e for e in entries if is_mcp_glob(e)]
    if not globs:
        return exact.__contains__
    import re
    from fnmatch import translate

    pattern = re.compile("|".join(f"(?:{translate(g)})" for g in globs))

    def admits(subject: str) -> bool:
        return subject in exact or pattern.match(subject) is not None

    return admits


def compile_matcher(matcher: str | None) -> Callable[[str], bool]:
    """A predicate on the matched subject (the tool name for tool events).

    >>> m = compile_matcher("Write|Edit")
    >>> m("Write"), m("NotebookEdit")
    (True, False)
    >>> compile_matcher("Edit.*")("NotebookEdit")  # a regex is unanchored, as in Claude Code
    True
    >>> g = compile_matcher("mcp__*__write*")  # an MCP glob is anchored at both ends
    >>> g("mcp__fs__write_file"), g("mcp__fs__rewrite"), g("xmcp__fs__write")
    (True, False, False)
    """
    kind = matcher_kind(matcher)
    if kind == "all":
        return _always
    names = matcher_names(matcher)
    if names is not None:
        return names.__contains__
    if kind == "globs":
        return compile_names(_alternatives(matcher))
    regex = LazyRegex((matcher or "").strip())
    return regex.search


def _always(_subject: str) -> bool:
    return True


# --- field resolution ---------------------------------------------------------------------------


class Scope:
    """What a condition can see while one behavior is evaluated for one event.

    ``fail_closed``: whether an undetermined trigger counts as matched (the behavior would
    block this event if it matched); True unless the caller knows the behavior would not block,
    so that a scope built without thinking about it never lets a failure through.
    """

    __slots__ = ("counter", "event", "facts", "fail_closed", "flags", "totals")

    def __init__(
        self,
        event: Event,
        counter: int,
        flags: Mapping[str, Any],
        totals: Mapping[str, Any],
        facts: Callable[[str], object],
        fail_closed: bool = True,
    ) -> None:
        self.event = event
        self.counter = counter
        self.flags = flags
        self.totals = totals
        self.facts = facts
        self.fail_closed = fail_closed

    def seen_at(self, counter: int) -> Scope:
        """This scope for a behavior whose counter is ``counter`` (one scope per event serves
        every behavior the event visits: its flags and totals are the event's scratch)."""
        self.counter = counter
        return self


def _dig(root: object, path: list[str]) -> tuple[bool, object]:
    node = root
    for key in path:
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return False, None
    return True, node


def event_only_field(field: str) -> bool:
    """Whether ``field`` resolves from the event alone (no ``session.*`` or ``facts.*``
    fallback), the rule :func:`compile_field` follows.

    >>> event_only_field("command"), event_only_field("facts.paths")
    (True, False)
    """
    path = field.split(".")
    head = path[0]
    if field == "session.counter":
        return False
    if len(path) >= 3 and head == "session" and path[1] in ("flags", "totals"):
        return False
    return not (len(path) >= 2 and head == "facts")


def compile_field(field: str) -> Callable[[Scope], object]:
    """SPEC §5: ``tool_input`` key (dotted path), then a top-level event key, then the
    ``session.counter``, ``session.flags.NAME``, ``session.totals.NAME`` and ``facts.NAME``
    namespaces — except that those namespaces are reserved: a field naming one resolves from
    it alone, never from a same-named key of the agent's tool input (issue 10: an MCP call
    with ``{"facts": {"shell_commands": ""}}`` must not switch a rule off). Missing or null
    resolves to the empty string.
    """
    path = field.split(".")
    head = path[0]

    namespace: Callable[[Scope], object] | None = None
    if field == "session.counter":

        def namespace(scope: Scope) -> object:
            return scope.counter
    elif len(path) >= 3 and head == "session" and path[1] == "flags":
        name = ".".join(path[2:])

        def namespace(scope: Scope) -> object:
            return bool(scope.flags.get(name))
    elif len(path) >= 3 and head == "session" and path[1] == "totals":
        name = ".".join(path[2:])

        def namespace(scope: Scope) -> object:
            return scope.totals.get(name, 0)
    elif len(path) >= 2 and head == "facts":
        fact = ".".join(path[1:])

        # reserved too (below), in one call: conditions on facts are most of a catalog's
        def resolve_fact(scope: Scope) -> object:
            value = scope.facts(fact)
            return _MISSING if value is None else value

        return resolve_fact

    if namespace is not None:
        # the engine's own namespaces are reserved: a ``facts`` or ``session`` key in the tool
        # input (which the agent writes) must never stand in for what the engine measured
        reserved = namespace

        def resolve_reserved(scope: Scope) -> object:
            value = reserved(scope)
            return _MISSING if value is None else value

        return resolve_reserved

    def resolve(scope: Scope) -> object:
        event = scope.event
        found, value = _dig(event.tool_input, path)
        if not found:
            top = event.top_level(head)
            if top is not None:
                found, value = _dig(top, path[1:]) if len(path) > 1 else (True, top)
        return _MISSING if value is None else value

    if len(path) == 1:  # ``command``, ``tool_name``: most fields of most catalogs

        def resolve_key(scope: Scope) -> object:
            event = scope.event
            tool_input = event.tool_input
            if not isinstance(tool_input, dict):
                return resolve(scope)
            value = tool_input[head] if head in tool_input else event.top_level(head)
            return _MISSING if value is None else value

        return resolve_key

    return resolve


# --- operators ----------------------------------------------------------------------------------


def as_text(value: object) -> str:
    """The text an operator sees: strings as they are, JSON for everything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else str(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def as_number(value: object) -> float | None:
    """A number for numeric operators, or None (booleans and non-numeric text are not numbers)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if number == number else None  # NaN is not a number here


def _scalar_test(
    operator: str, expected: object, regex: LazyRegex | None = None
) -> Callable[[object], bool] | tuple[Callable[[object], bool], LazyRegex]:
    """The positive form of an operator on one value (``not_*`` use their positive twin);
    a regex operator's comes with its :class:`LazyRegex` (``regex``, when given)."""
    if operator in REGEX_OPERATORS:
        if regex is None:
            regex = LazyRegex(as_text(expected))
        return (lambda actual: regex.search(as_text(actual))), regex
    if operator in NUMERIC_OPERATORS:
        bound = as_number(expected)
        if bound is None:
            return lambda actual: False
        compare: Callable[[float, float], bool] = {
            "gt": float.__gt__,
            "gte": float.__ge__,
            "lt": float.__lt__,
            "lte": float.__le__,
        }[operator]

        def numeric(actual: object) -> bool:
            number = as_number(actual)
            return number is not None and compare(number, bound)

        return numeric
    if operator == "in":
        if not isinstance(expected, list):
            return lambda actual: False
        choices = frozenset(as_text(v) for v in expected)
        return lambda actual: as_text(actual) in choices
    text = as_text(expected)
    if operator in ("contains", "not_contains"):
        return lambda actual: text in as_text(actual)
    if operator == "equals":
        return lambda actual: as_text(actual) == text
    if operator == "starts_with":
        return lambda actual: as_text(actual).startswith(text)
    if operator == "ends_with":
        return lambda actual: as_text(actual).endswith(text)
    if operator == "glob":
        return lambda actual: fnmatchcase(as_text(actual), text)
    raise ValueError(f"unknown operator {operator!r}")


def _present(actual: object) -> bool:
    return actual != _MISSING and actual != []


def compile_operator(
    operator: str, expected: object, regex: LazyRegex | None = None
) -> Callable[[object], bool]:
    """A total predicate ``actual -> bool`` for one operator and its configured value.

    A list value (e.g. ``facts.paths``) matches when any element matches; the negated operators
    (``not_regex_match``, ``not_contains``) when no element does; an empty list counts as missing.

    >>> compile_operator("regex_match", "id_rsa$")(["/a/notes.txt", "/home/u/.ssh/id_rsa"])
    True
    >>> compile_operator("not_contains", "x")(["abc", "def"])
    True
    """
    if operator == "exists":
        return _present
    if operator == "not_exists":
        return lambda actual: not _present(actual)
    negated = operator in ("not_regex_match", "not_contains")
    compiled = _scalar_test(operator[4:] if negated else operator, expected, regex)
    regex = None
    if isinstance(compiled, tuple):
        compiled, regex = compiled
    test = compiled
    lifted = _lift_regex(regex) if regex is not None else _lift(test)

    if negated:
        return lambda actual: not lifted(actual)
    return lifted


def _lift(test: Callable[[object], bool]) -> Callable[[object], bool]:
    """``test`` on a value, or on any item of a list."""

    def lifted(actual: object) -> bool:
        if isinstance(actual, list):
            return any(test(item) for item in actual)
        return test(actual)

    return lifted


def _lift_regex(regex: LazyRegex) -> Callable[[object], bool]:
    """A regex search on a value, or on any item of a list: :func:`_lift` of the search, with
    it inlined (regexes on a fact's list of commands are most of what a catalog evaluates on
    each event) and a long list refused at once when it lacks the literals a match needs."""
    search = regex.search

    def lifted(actual: object) -> bool:
        if isinstance(actual, list):
            if len(actual) > _JOIN_ABOVE and not regex.may_match_any(actual):
                return False  # a long list (facts.shell_commands) without the literals
            for item in actual:  # noqa: SIM110 (a loop: no generator frame per item)
                if search(item if type(item) is str else as_text(item)):
                    return True
            return False
        return search(actual if type(actual) is str else as_text(actual))

    return lifted


@attrs.frozen
class Condition:
    """One compiled ``{field, operator, value}``.

    A frozen attrs value, equal by its three declared parts; ``resolve`` and ``test`` are the
    closures compiled from them (not compared, not in the repr).

    >>> Condition("command", "contains", "rm")
    Condition(field='command', operator='contains', value='rm')
    >>> Condition("command", "contains", "rm") == Condition("command", "contains", "rm")
    True
    """

    field: str
    operator: str
    value: object
    resolve: Callable[[Scope], object] = attrs.field(init=False, eq=False, repr=False)
    test: Callable[[object], bool] = attrs.field(init=False, eq=False, repr=False)
    #: a regex operator's pattern (the one ``test`` searches with), else None
    regex: LazyRegex | None = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        # frozen: the compiled closures are set once, here, through object.__setattr__
        regex = LazyRegex(as_text(self.value)) if self.operator in REGEX_OPERATORS else None
        object.__setattr__(self, "regex", regex)
        object.__setattr__(self, "resolve", compile_field(self.field))
        object.__setattr__(self, "test", compile_operator(self.operator, self.value, regex))

    def __call__(self, scope: Scope) -> tuple[bool | None, object]:
        """``(matched, actual)``; ``matched`` is None when an undetermined fact leaves the
        condition unknown (see the module doc)."""
        actual = self.resolve(scope)
        if isinstance(actual, str):
            if type(actual) is Unknown:
                return None, actual
        elif type(actual) is Partial:
            matched = self.test(actual)
            # an item found decides a positive operator when it matches, a negated one when it
            # matches the positive twin; the items not listed could decide anything else
            if self.operator in NEGATED_OPERATORS:
                return (None if matched else False), actual
            return (True if matched else None), actual
        return self.test(actual), actual


def compile_verdict(condition: Condition) -> Callable[[Scope], bool | None]:
    """What :meth:`Condition.__call__` decides, without its actual value: the engine asks
    this of most conditions of a catalog on every event, to skip the behaviors that cannot
    fire (compiled when a behavior first plans that, not with the catalog: a cold start
    builds every condition). A fact is read from the fact cache at once, and an empty text or
    list (most facts of most calls: no recursive delete, no commit message) is answered by
    what ``test`` gave it the first time (``test`` is a function of the value alone).

    >>> from forge_policy.model import Event
    >>> values = {"n": Unknown("timed out"), "l": Partial(["rm x"], "cut"), "e": []}
    >>> scope = Scope(Event("Stop", "s"), 0, {}, {}, values.get)
    >>> [compile_verdict(Condition(f"facts.{n}", "regex_match", "^rm"))(scope) for n in "nle"]
    [None, True, False]
    >>> compile_verdict(Condition("facts.l", "not_regex_match", "^rm"))(scope)
    False
    """
    test = condition.test
    negated = condition.operator in NEGATED_OPERATORS
    #: ``test`` of the empty str and the empty list, by type, kept on first need (computed
    #: when loading, a regex without literals would be compiled by every cold start)
    on_empty: dict[type, bool] = {}

    def empty(actual: str | list[object]) -> bool:
        found = on_empty.get(type(actual))
        if found is None:
            found = on_empty[type(actual)] = test(actual)
        return found

    path = condition.field.split(".")

    def decided(actual: object) -> bool | None:  # the rare cases: undetermined, odd types
        if isinstance(actual, str):
            if type(actual) is Unknown:
                return None
        elif type(actual) is Partial:
            matched = test(actual)
            if negated:
                return None if matched else False
            return True if matched else None
        return test(actual)

    if len(path) >= 2 and path[0] == "facts":
        fact = ".".join(path[1:])

        def verdict_of_fact(scope: Scope) -> bool | None:
            actual = scope.facts(fact)
            kind = type(actual)
            if kind is list or kind is str:
                return test(actual) if actual else empty(actual)  # type: ignore[arg-type]
            if actual is None:  # a missing fact is the empty string
                return empty(_MISSING)
            return decided(actual)

        return verdict_of_fact

    resolve = condition.resolve

    def verdict(scope: Scope) -> bool | None:
        actual = resolve(scope)
        kind = type(actual)
        if kind is list or kind is str:
            return test(actual) if actual else empty(actual)  # type: ignore[arg-type]
        return decided(actual)

    return verdict
