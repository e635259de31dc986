"""Environment bypasses (SPEC §7): ``FORGE_DISABLE=id,id`` switches behaviors off for a process.

A :class:`Bypass` is an input of the evaluator (``Evaluator(catalog, disable=...)``, built by
:meth:`forge_policy.config.env.Config.build_evaluator` from ``FORGE_DISABLE``). Every bypass is
recorded by :meth:`~forge_policy.engine.evaluator.Evaluator.evaluate`, **once per event where it
mattered**: when an event reaches a behavior that ``FORGE_DISABLE`` switched off, the behavior is
dry-run against the session state (nothing is written, no flag is consumed), and if it would
have produced a violation an audit record of kind ``bypass`` says which behavior, which
variable, and what level it would have reached. Events that a bypassed behavior would have let
pass leave no record, so the audit log shows what the bypass actually let through rather than
one line per hook process.

Behaviors marked ``bypass: never`` (``policy.enforcement.bypass``) cannot be switched off this
way; naming one is refused with a diagnostic, as is naming an unknown id.

>>> import forge_policy as fp
>>> disable = {"search-first": "FORGE_DISABLE", "nope": "FORGE_DISABLE"}
>>> bypass = Bypass(fp.builtin_catalog(), disable)
>>> [b.id for b in bypass.bypassed], bypass.catalog["search-first"].enabled
(['search-first'], False)
>>> bypass.notes
["FORGE_DISABLE: no behavior 'nope' in the catalog; nothing to bypass"]
"""

from __future__ import annotations

from forge_policy.catalog.catalog import Catalog

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from forge_policy.catalog.behavior import Behavior
    from forge_policy.engine.inputs import FactCache, Settings
    from forge_policy.engine.overrides import AutoApprove
    from forge_policy.model import Event
    from forge_policy.state import SessionState


class Bypass:
    """A catalog with ``disable`` (behavior id -> the variable naming it) applied.

    ``catalog`` is what the evaluator runs; ``bypassed`` the behaviors it switched off (only those
    the catalog had on); ``notes`` one line per refused or unknown id.
    """

    __slots__ = ("_dry", "bypassed", "catalog", "notes", "via")

    def __init__(self, catalog: Catalog, disable: Mapping[str, str]) -> None:
        self.via = dict(disable)
        self.notes: list[str] = []
        bypassed: list[Behavior] = []
        for behavior_id, variable in disable.items():
            behavior = catalog.get(behavior_id)
            if behavior is None:
                self.notes.append(
                    f"{variable}: no behavior {behavior_id!r} in the catalog; nothing to bypass"
                )
            elif behavior.bypass == "never":
                self.notes.append(
                    f"{variable}: {behavior_id} cannot be bypassed (bypass: never); it stays on"
                )
            elif behavior.enabled:
                bypassed.append(behavior)
        self.bypassed = tuple(bypassed)
        self.catalog = (
            catalog.with_enabled({b.id: False for b in bypassed}) if bypassed else catalog
        )
        self._dry: dict[str, Catalog] = {}

    def records(
        self,
        event: Event,
        state: SessionState,
        now: float,
        settings: Settings,
        facts: FactCache,
        auto_approve: AutoApprove | None,
    ) -> list[dict[str, Any]]:
        """The ``bypass`` audit records for ``event``: one per bypassed behavior that would have
        produced a violation on ``state`` (the session before the event). A dry run, pure: the
        evaluator passes what it decides with (the same ``facts``: providers run once) and
        appends what this returns (:meth:`~forge_policy.engine.evaluator.Evaluator.evaluate`).
        """
        profile = settings.profile
        relevant = [
            b
            for b in self.bypassed
            if event.event_name in b.events and b.applies_to(event, profile)
        ]
        if not relevant:
            return []
        from forge_policy._time import iso
        from forge_policy.engine.decide import decide
        from forge_policy.secrets import summarize

        records: list[dict[str, Any]] = []
        for behavior in relevant:
            dry = self._dry.get(behavior.id)
            if dry is None:
                dry = self._dry[behavior.id] = Catalog([behavior])
            outcome = decide(dry, event, state, now, settings, facts, auto_approve=auto_approve)
            for violation in outcome.decision.violations:
                records.append(
                    {
                        "kind": "bypass",
                        "timestamp": iso(now),
                        "session_id": event.session_id,
                        "behavior_id": violation.behavior_id,
                        "variable": self.via.get(violation.behavior_id, "FORGE_DISABLE"),
                        "event": event.event_name,
                        "tool_name": event.tool_name,
                        "input_summary": summarize(event.tool_name, event.tool_input),
                        "level": violation.level.label,
                        "counter": violation.counter,
                    }
                )
        return records
