"""What one evaluation takes in besides the event and the state: the settings, the event's
fact cache, and the identity an override-by-retry compares.

>>> Settings(override_window=30.0).override_window
30.0
"""

from __future__ import annotations

import attrs

from forge_policy.catalog.behavior import DEFAULT_PROFILE
from forge_policy.events import MCP_PREFIX
from forge_policy.model import Event, call_hash
from forge_policy.state import touch_interval

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    FactProvider = Callable[[Event], object]

DEFAULT_TTL = 86400.0
DEFAULT_WINDOW = 60.0
#: How long an explicit grant lives (``FORGE_GRANT_SECONDS``, SPEC §4).
DEFAULT_GRANT_SECONDS = 600.0


# no generated repr: it would cost class-creation time in every hook process
@attrs.frozen(kw_only=True, eq=False, repr=False)
class Settings:
    """The knobs of one evaluation (SPEC §10 defaults).

    ``touch_interval`` is derived from ``ttl``, never passed.

    >>> Settings(ttl=60.0).touch_interval
    0.6
    """

    ttl: float = DEFAULT_TTL
    override_window: float = DEFAULT_WINDOW
    grant_seconds: float = DEFAULT_GRANT_SECONDS
    profile: str = DEFAULT_PROFILE
    record_violations: bool = True
    #: the configuration's exceptions (:mod:`forge_policy.engine.exceptions`)
    exceptions: tuple[Any, ...] = ()
    touch_interval: float = attrs.field(init=False)

    @touch_interval.default
    def _touch_interval(self) -> float:
        return touch_interval(self.ttl)


#: :func:`forge_policy.facts.call_provider`, imported on first use (importing this module stays
#: cheap) and then kept: an import statement costs a microsecond on every fact of every event
_CALL_PROVIDER: list[Callable[..., tuple[object, list[str]]]] = []


def _call_provider() -> Callable[..., tuple[object, list[str]]]:
    if not _CALL_PROVIDER:
        from forge_policy.facts import call_provider

        _CALL_PROVIDER.append(call_provider)
    return _CALL_PROVIDER[0]


class FactCache:
    """Fact providers for one event: computed on first use, memoised, never raising.

    A provider that fails, runs out of budget or is cut gives an
    :class:`~forge_policy.facts.Unknown` (or :class:`~forge_policy.facts.Partial`) value, which
    conditions read as undetermined; a fact with no provider is plainly empty (a catalog
    naming a fact the host does not provide is a configuration choice, not a failure).

    >>> facts = FactCache(Event("Stop", "s"), {"n": lambda event: 3, "x": lambda event: 1 // 0})
    >>> facts("n"), facts("missing"), facts.diagnostics
    (3, '', ["fact 'missing' has no provider; it is empty"])
    >>> type(facts("x")).__name__, facts.undetermined
    ('Unknown', ["fact 'x' failed: ZeroDivisionError: integer division or modulo by zero"])
    """

    __slots__ = ("_event", "_providers", "_shared", "diagnostics", "values")

    def __init__(self, event: Event, providers: Mapping[str, FactProvider]) -> None:
        # providers see an MCP call as the built-in tool it reads as (facts.mcp.read_as)
        self._event = read_as(event)
        self._providers = providers
        self.values: dict[str, object] = {}
        self.diagnostics: list[str] = []
        #: the work this event's providers share (forge_policy.facts._runtime.shared)
        self._shared: dict[str, Any] = {}

    def __call__(self, name: str) -> object:
        values = self.values
        if name in values:
            return values[name]
        try:  # not .get(): a FactRegistry's is Mapping's, two Python calls per fact
            provider: FactProvider | None = self._providers[name]
        except KeyError:
            provider = None
        value: object = ""
        if provider is None:
            self.diagnostics.append(f"fact {name!r} has no provider; it is empty")
        elif getattr(provider, "commands_only", False) and not _commands_in(self._event):
            value = []  # a built-in command fact of a call without commands: nothing to run
        else:
            call = _CALL_PROVIDER[0] if _CALL_PROVIDER else _call_provider()
            value, notes = call(name, provider, self._event, self._shared)
            self.diagnostics.extend(notes)
        self.values[name] = value
        return value

    @property
    def undetermined(self) -> list[str]:
        """Why each fact computed so far that failed or was cut is not fully known."""
        from forge_policy.values import undetermined

        return [reason for value in self.values.values() if (reason := undetermined(value))]


def _commands_in(event: Event) -> bool:
    """Whether ``event``'s input names shell commands (``command`` or ``commands``: what
    :func:`~forge_policy.facts._io.event_commands` reads, an unreadable one included)."""
    tool_input = event.tool_input
    return "command" in tool_input or "commands" in tool_input


def read_as(event: Event) -> Event:
    """The event the rules judge: an MCP call read as the built-in tool it acts like
    (:func:`forge_policy.facts.mcp.read_as`), any other event as it is (one prefix test).

    >>> read_as(Event("PreToolUse", "s", tool_name="mcp__fs__write_file",
    ...                tool_input={"path": "a"})).tool_name
    'Write'
    """
    if not event.tool_name.startswith(MCP_PREFIX):
        return event
    from forge_policy.facts.mcp import read_as as mcp_read_as

    return mcp_read_as(event)


def event_identity(event: Event) -> str:
    """The hash an override-by-retry compares: tool name + canonical input, or the prompt; in
    a subagent, with its ``agent_id``: the same call from another agent is another call, so a
    soft block in one subagent (its pending block, a grant bound to it with ``--call``) is
    never let through by another agent's call (issue 27). The root thread's hash is SPEC §4's.

    >>> event_identity(Event("UserPromptSubmit", "s", prompt="hi")) == event_identity(
    ...     Event("UserPromptSubmit", "t", prompt="hi"))
    True
    >>> call = {"tool_name": "Bash", "tool_input": {"command": "ls"}}
    >>> root = Event("PreToolUse", "s", **call)
    >>> sub = Event("PreToolUse", "s", agent_id="a1", **call)
    >>> event_identity(root) == root.call_hash(), event_identity(sub) == event_identity(root)
    (True, False)
    """
    if event.tool_name:
        identity = call_hash(event.tool_name, event.tool_input)
    else:
        identity = call_hash(f"<{event.event_name}>", {"prompt": event.prompt})
    if event.agent_id:
        return call_hash(f"<agent {event.agent_id}>", identity)
    return identity
