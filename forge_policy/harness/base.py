"""The harness adapter seam: what ``forge-policy hook --harness NAME`` asks of a CLI's adapter.

A :class:`HookAdapter` stands at both ends of the hook's line, as httpx's ``BaseTransport``
stands between a client and the wire: the hook reads the payload, the adapter turns it into an
:class:`~forge_policy.Event` in the catalog's vocabulary (:meth:`~HookAdapter.to_event`), the
evaluator decides, and the adapter words the :class:`~forge_policy.Decision` the way the harness
reads it (:meth:`~HookAdapter.render`), or, when no decision could be made, gives the
``FORGE_ON_ERROR`` answer (:meth:`~HookAdapter.failure`). Every answer is ``(stdout text, exit
code)``; an empty text writes nothing.

Each supported CLI has one class, listed with its wire facts in
:mod:`forge_policy.harness.registry` (``get(name).adapter`` is its instance); the five whose
payloads differ from Claude Code's share the skeleton
:class:`~forge_policy.harness.common.CommandHookAdapter` and keep only their differences.

>>> from forge_policy.harness.registry import get
>>> adapter = get("gemini").adapter
>>> isinstance(adapter, HookAdapter), adapter.harness.title
(True, 'Gemini CLI')
>>> adapter.failure("BeforeTool", "deny", "store is down")[0][:19]
'{"decision":"deny",'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from forge_policy.harness.registry import Harness
    from forge_policy.model import Decision, Event


@runtime_checkable
class HookAdapter(Protocol):
    """One coding-agent CLI's command-hook wire format, both ways.

    Implementations never write to stdout or stderr themselves and keep no per-call state: one
    instance serves every call (and every thread) of its harness.
    """

    @property
    def harness(self) -> Harness:
        """The registry entry this adapter speaks for (name, title, events, tools)."""
        ...

    def to_event(
        self,
        payload: dict[str, Any],
        event: str = "",
        *,
        notes: list[dict[str, Any]] | None = None,
    ) -> Event:
        """The :class:`~forge_policy.Event` of one parsed hook payload.

        ``event`` is the harness's name of the event from ``--event`` (it wins over the
        payload's own, which some harnesses leave out). ``notes``: when a list is given, a
        payload without a session id is evaluated under one derived from its
        ``transcript_path`` (else ``cwd``) and the ``diagnostic`` audit record saying so is
        appended (the hook's behaviour); without it such a payload is an
        :class:`~forge_policy.EventError`. Bad input raises
        :class:`~forge_policy.errors.HookInputError` or :class:`~forge_policy.EventError`
        naming the field.
        """
        ...

    def render(self, decision: Decision, event: Event) -> tuple[str, int]:
        """``(stdout, exit code)``: ``decision`` on ``event`` as the harness reads it."""
        ...

    def failure(self, event_name: str, on_error: str, problem: str) -> tuple[str, int]:
        """``(stdout, exit code)`` when no decision could be made: ``on_error`` is
        ``FORGE_ON_ERROR`` (``deny`` refuses a call that can still be refused; ``allow`` and
        events that cannot be refused get a notice where the harness shows one),
        ``event_name`` the harness's own name of the event (``""`` when unknown), ``problem``
        one line saying what went wrong."""
        ...
