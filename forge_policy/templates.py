"""Message templates (SPEC §5): their defaults and length limits, the variables a template
may name, and the one substitution that fills them in.

A leaf: it imports nothing of the package when loaded (a fact quoted in a message is redacted
through :mod:`forge_policy.secrets`, imported on first use). It also holds the rule by which a
message or an explain shows a fact that may hold text read from a file (:func:`fact_shown`,
:class:`EventText`, :data:`NOT_SHOWN`; issue 23). The catalog reads the defaults and
limits when it compiles a behavior, its lints check the variables, and
:mod:`forge_policy.render.messages` renders a violation's text with :func:`render` and
:class:`TemplateValues`.

>>> render(DEFAULT_TEMPLATES["nudge_template"],
...        {"behavior_name": "Search first", "counter": 1, "hint": "read before writing"})
'Search first (1): read before writing'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from forge_policy.model import Event

#: Used where a behavior file has no template of its own. ``{hint}`` (the recovery hint) is an
#: extra variable beside SPEC §5's six.
DEFAULT_TEMPLATES: dict[str, str] = {
    "nudge_template": "{behavior_name} ({counter}): {hint}",
    "warning_template": "[{behavior_id}] {behavior_name}: violation {counter} in this session "
    "(next escalation at {threshold}).",
    "block_reason": "[{behavior_id}] {behavior_name}: this call is refused.",
    "override_prompt": "",
}
TEMPLATE_LIMITS: dict[str, int] = {
    "nudge_template": 120,
    "warning_template": 500,
    "block_reason": 200,
    "override_prompt": 500,
}
#: The fixed template variables (``{counter}``…); ``{facts.NAME}`` and
#: ``{session.totals.NAME}`` come beside them. ``validate`` warns about any other.
TEMPLATE_VARIABLES = (
    "behavior_id",
    "behavior_name",
    "counter",
    "tool_name",
    "level",
    "threshold",
    "hint",
)


#: what an explain or a message shows in place of text a fact read from a file
NOT_SHOWN = "[not shown: read from a file]"
#: what a message shows for a fact that could not be computed (its reason follows in the note)
UNDETERMINED = "[not determined]"
_WORD = re.compile(r"\w+")
#: a long option as the command model spells a short one out (``git push -f`` read as
#: ``--force``): not a word the event must show
_LONG_OPTION = re.compile(r"(?<!\S)--[a-z][a-z0-9-]*(?=[=\s]|$)")
#: the route the command model adds to a reading (``rm -r -f / reached through xargs``, ``…
#: through awk code``, ``… through the de-obfuscated text``): its own labels of the programs
_ROUTE = re.compile(r"(?<=\S) reached through \S[^\n]*$", re.MULTILINE)
#: the built-in facts whose values can hold text read from a file (``git commit -F FILE``,
#: ``sh < FILE``, ``cat FILE | sh``): shown only as far as the event's own input shows it. The
#: other built-in facts are engine-made labels, numbers and paths, and an orchestrator's own
#: facts are what its provider chose to return: shown redacted
_FILE_TEXT_FACTS = frozenset(
    {
        "facts.commit_message",
        "facts.shell_commands",
        "facts.git_commands",
        "facts.executed_commands",
        "facts.command_readings",
        "facts.shell_data",
    }
)
#: more distinct words than this not found whole in the event's input: not shown either (keeps
#: the substring look-ups few on a large event)
_MAX_LOOKUPS = 256


class EventText:
    """The words of an event's own input (tool input, prompt, payload), to tell a fact value
    the event shows from one a fact read from a file.

    >>> seen = EventText.of_values([{"command": "git commit -m 'fix: a typo'"}])
    >>> seen.shows("fix: a typo"), seen.shows("TOP SECRET plan")
    (True, False)
    """

    def __init__(self, text: str) -> None:
        self.text = text.lower()
        self.words = frozenset(_WORD.findall(self.text))

    @classmethod
    def of_event(cls, event: Event) -> EventText:
        """The input of ``event``."""
        return cls.of_values([event.tool_input, event.prompt, event.cwd, event.payload])

    @classmethod
    def of_values(cls, values: Sequence[object]) -> EventText:
        """The strings held by ``values`` (mappings and lists walked; keys too)."""
        parts: list[str] = []
        stack: list[object] = list(values)
        while stack:
            value = stack.pop()
            if isinstance(value, str):
                parts.append(value)
            elif isinstance(value, dict):
                stack.extend(str(k) for k in value)
                stack.extend(value.values())
            elif isinstance(value, list | tuple):
                stack.extend(value)
        return cls("\n".join(parts))

    def shows(self, text: str) -> bool:
        """Whether every word of ``text`` is in the event's input (whole, or within a word:
        ``rm -r -f`` read from ``rm -rf``); the redaction marker, long options and the route
        a reading names (``reached through``) do not count.

        >>> EventText("sudo git push -f origin").shows("git push --force origin")
        True
        >>> EventText("echo / | xargs rm -rf").shows("rm -r -f / reached through xargs")
        True
        >>> EventText("sh < x").shows("SECRET reached through the de-obfuscated text")
        False
        """
        from forge_policy.secrets import REDACTED

        marker = REDACTED.strip("[]").lower()
        words = _WORD.findall(_ROUTE.sub(" ", _LONG_OPTION.sub(" ", text.lower())))
        missing = {w for w in words if w not in self.words} - {marker}
        if len(missing) > _MAX_LOOKUPS:
            return False
        return all(word in self.text for word in missing)


def fact_shown(field: str, actual: Any, seen: EventText | None) -> Any:
    """What a condition on ``field`` read, as an explain or a message may show it: strings
    redacted; for a fact that may hold text read from a file, any string the event's input
    (``seen``; ``None``: nothing shown) does not show replaced by :data:`NOT_SHOWN`.

    >>> seen = EventText.of_values(["git commit -F msg.txt", "cat .env"])
    >>> fact_shown("facts.executed_commands", ["cat .env", "RAWLINE from msg.txt"], seen)
    ['cat .env', '[not shown: read from a file]']
    >>> fact_shown("facts.sensitive_file", "env_file", seen), fact_shown("command", "a=x", seen)
    ('env_file', 'a=x')
    >>> fact_shown("facts.commit_message", "fix: a typo", None)
    '[not shown: read from a file]'
    """
    if field not in _FILE_TEXT_FACTS:
        return _shown(actual, None)
    return _shown(actual, seen if seen is not None else EventText(""))


def _shown(actual: Any, seen: EventText | None) -> Any:
    from forge_policy.secrets import redact

    if isinstance(actual, str):
        text = redact(actual)
        return text if seen is None or seen.shows(text) else NOT_SHOWN
    if isinstance(actual, dict):
        return {_shown(str(k), seen): _shown(v, seen) for k, v in actual.items()}
    if isinstance(actual, list | tuple):
        return [_shown(v, seen) for v in actual]
    if actual is None or isinstance(actual, bool | int | float):
        return actual
    return _shown(str(actual), seen)


def render(template: str, values: Mapping[str, object]) -> str:
    """Literal ``{name}`` substitution: values are inserted verbatim, never re-interpreted.

    Unknown ``{names}`` and stray braces are kept as written.

    >>> render("{tool_name} x{counter}", {"tool_name": "a{b}&|\\\\", "counter": 2})
    'a{b}&|\\\\ x2'
    """
    out: list[str] = []
    i = 0
    n = len(template)
    while i < n:
        start = template.find("{", i)
        if start < 0:
            out.append(template[i:])
            break
        end = template.find("}", start + 1)
        if end < 0:
            out.append(template[i:])
            break
        name = template[start + 1 : end]
        out.append(template[i:start])
        if name in values:
            out.append(str(values[name]))
            i = end + 1
        else:
            out.append("{")
            i = start + 1
    return "".join(out)


class TemplateValues(Mapping[str, object]):
    """Template variables: the fixed ones, plus ``{facts.NAME}`` and ``{session.totals.NAME}``
    computed when a template names them (numbers with thousands separators, lists joined by
    commas), so a message can say what the rule measured.

    A fact is filled by the rule an explain uses (:func:`fact_shown`): redacted, and text the
    ``event``'s own input does not show (a line read from a file: ``sh < .env``) replaced by
    :data:`NOT_SHOWN`, one marker for a run of such items (issue 23). Without an ``event`` such
    a fact is not shown at all; the event's words are read only when a template names one.

    >>> values = TemplateValues({"counter": 2}, lambda name: [".env", ".npmrc"], {"t": 151000})
    >>> render("{counter}: {facts.paths}; {session.totals.t}; {facts}", values)
    '2: .env, .npmrc; 151,000; {facts}'
    >>> render("{facts.command_readings}", values)
    '[not shown: read from a file]'
    >>> from forge_policy.values import Unknown
    >>> render("({facts.x})", TemplateValues({}, lambda name: Unknown("timed out"), None))
    '([not determined])'
    """

    __slots__ = ("_base", "_event", "_facts", "_seen", "_totals")

    def __init__(
        self,
        base: dict[str, object],
        facts: Callable[[str], object] | None,
        totals: Mapping[str, Any] | None,
        event: Event | None = None,
    ) -> None:
        self._base = base
        self._facts = facts
        self._totals = totals
        self._event = event
        self._seen: EventText | None = None

    def __getitem__(self, name: str) -> object:
        if name in self._base:
            return self._base[name]
        if name.startswith("facts.") and len(name) > 6 and self._facts is not None:
            from forge_policy.secrets import redact  # a fact may quote the call's input

            raw = self._facts(name[6:])
            if type(raw).__name__ == "Unknown":  # not computed: say so, never an empty "()"
                return UNDETERMINED
            value = fact_shown(name, raw, self._event_text())
            if isinstance(value, list):
                value = [
                    v for i, v in enumerate(value) if v != NOT_SHOWN or value[i - 1 : i] != [v]
                ]
            return redact(shown(value))
        if name.startswith("session.totals.") and len(name) > 15 and self._totals is not None:
            return shown(self._totals.get(name[15:], 0))
        raise KeyError(name)

    def _event_text(self) -> EventText | None:
        if self._seen is None and self._event is not None:
            self._seen = EventText.of_event(self._event)
        return self._seen

    def __contains__(self, name: object) -> bool:
        try:
            self[str(name)]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(self._base)

    def __len__(self) -> int:
        return len(self._base)


def shown(value: object) -> str:
    """A fact or total as message text.

    >>> shown(True), shown(1234.0), shown(2.25), shown(list(range(12))), shown(None)
    ('yes', '1,234', '2.2', '0, 1, 2, 3, 4, 5, 6, 7, 8, 9, …', '')
    """
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"
    if isinstance(value, list | tuple):
        items = [str(item) for item in value[:10]]
        return ", ".join(items + (["…"] if len(value) > 10 else []))
    return "" if value is None else str(value)
