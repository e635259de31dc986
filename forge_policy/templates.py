"""Message templates (SPEC §5): their defaults and length limits, the variables a template
may name, and the one substitution that fills them in.

A leaf: it imports nothing of the package when loaded (a fact quoted in a message is redacted
through :mod:`forge_policy.secrets`, imported on first use). The catalog reads the defaults and
limits when it compiles a behavior, its lints check the variables, and
:mod:`forge_policy.render.messages` renders a violation's text with :func:`render` and
:class:`TemplateValues`.

>>> render(DEFAULT_TEMPLATES["nudge_template"],
...        {"behavior_name": "Search first", "counter": 1, "hint": "read before writing"})
'Search first (1): read before writing'
"""

from __future__ import annotations

from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

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

    >>> values = TemplateValues({"counter": 2}, lambda name: [".env", ".npmrc"], {"t": 151000})
    >>> render("{counter}: {facts.files}; {session.totals.t}; {facts}", values)
    '2: .env, .npmrc; 151,000; {facts}'
    """

    __slots__ = ("_base", "_facts", "_totals")

    def __init__(
        self,
        base: dict[str, object],
        facts: Callable[[str], object] | None,
        totals: Mapping[str, Any] | None,
    ) -> None:
        self._base = base
        self._facts = facts
        self._totals = totals

    def __getitem__(self, name: str) -> object:
        if name in self._base:
            return self._base[name]
        if name.startswith("facts.") and len(name) > 6 and self._facts is not None:
            from forge_policy.secrets import redact  # a fact may quote the call's input

            return redact(shown(self._facts(name[6:])))
        if name.startswith("session.totals.") and len(name) > 15 and self._totals is not None:
            return shown(self._totals.get(name[15:], 0))
        raise KeyError(name)

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
