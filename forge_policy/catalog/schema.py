"""Behavior schema v1 (SPEC §5) as attrs classes: the documents cattrs structures YAML into.

The classes mirror a ``behavior.yaml`` and an ``index.yaml`` entry key for key. Each constrained
value has its own ``NewType`` (``LevelName``, ``Operator``, ``Matcher``…), so that one structure
hook in :mod:`forge_policy.catalog.structuring` owns its check and its message. Unknown keys are
not fields: they are ignored and stay untouched in the source document.

This module imports attrs and :mod:`typing`; only the YAML load path imports it.

>>> StepDoc(After(3), LevelName("warning"))
StepDoc(after=3, level='warning')
"""

from __future__ import annotations

import re
from typing import Any, NewType

import attrs

from forge_policy.catalog.behavior import ACTIONS, CATEGORIES
from forge_policy.catalog.dsl import OPERATORS
from forge_policy.catalog.tuning import TUNINGS
from forge_policy.levels import LEVEL_NAMES
from forge_policy.templates import TEMPLATE_LIMITS

ID_PATTERN = re.compile(r"^[a-z][a-z0-9-]*[a-z0-9]$")
SCHEMA_VERSION = "1"
RESERVED_SCOPES = ("task", "project")

# --- value types: each NewType has one structure hook that owns its message ---------------------

SchemaVersion = NewType("SchemaVersion", str)
BehaviorId = NewType("BehaviorId", str)
ScopeName = NewType("ScopeName", str)
EventName = NewType("EventName", str)
#: a non-empty string
Text = NewType("Text", str)
#: a non-empty string in a list (its message says so)
Item = NewType("Item", str)
#: any string, empty included (a matcher: empty selects everything)
Matcher = NewType("Matcher", str)
After = NewType("After", int)
NudgeTemplate = NewType("NudgeTemplate", str)
WarningTemplate = NewType("WarningTemplate", str)
BlockReason = NewType("BlockReason", str)
OverridePrompt = NewType("OverridePrompt", str)
Category = NewType("Category", str)
LevelName = NewType("LevelName", str)
Operator = NewType("Operator", str)
Action = NewType("Action", str)
Logic = NewType("Logic", str)
OverrideMode = NewType("OverrideMode", str)
Mode = NewType("Mode", str)
Bypass = NewType("Bypass", str)
OnPresent = NewType("OnPresent", str)
OnAbsent = NewType("OnAbsent", str)
Profile = NewType("Profile", str)
Tuning = NewType("Tuning", str)
#: a behavior test's expected outcome (:data:`OUTCOMES`)
Outcome = NewType("Outcome", str)
#: a behavior test's ``files``: relative path -> text, or ``{bytes: N}`` of filler
Files = NewType("Files", dict)  # type: ignore[type-arg]

#: what a behavior test may expect of one event: ``Decision.outcome``'s values
OUTCOMES = ("allow", "nudge", "warning", "soft_block", "hard_block")

#: closed vocabularies: (allowed values, how the message names the field)
CHOICES: dict[object, tuple[tuple[str, ...], str]] = {
    Category: (CATEGORIES, "category"),
    LevelName: (LEVEL_NAMES, "level"),
    Operator: (OPERATORS, "operator"),
    Action: (ACTIONS, "action"),
    Logic: (("all", "any"), "logic"),
    OverrideMode: (("agent", "user"), "override mode"),
    Mode: (("enforce", "shadow"), "mode"),
    Bypass: (("allowed", "never"), "bypass"),
    OnPresent: (("consume", "keep"), "on_present value"),
    OnAbsent: (("skip", "violate"), "on_absent value"),
    Tuning: (TUNINGS, "tuning"),
    Outcome: (OUTCOMES, "outcome"),
}
TEMPLATE_TYPES: dict[object, int] = {
    NudgeTemplate: TEMPLATE_LIMITS["nudge_template"],
    WarningTemplate: TEMPLATE_LIMITS["warning_template"],
    BlockReason: TEMPLATE_LIMITS["block_reason"],
    OverridePrompt: TEMPLATE_LIMITS["override_prompt"],
}


# --- the document model -------------------------------------------------------------------------


@attrs.frozen
class ConditionDoc:
    """One ``{field, operator, value}`` of a trigger."""

    field: Text
    operator: Operator
    value: Any = None


@attrs.frozen
class RecoveryDoc:
    """``policy.recovery``, and a trigger's own ``recovery`` (extension: what to do instead
    when that trigger is the one that matched; it replaces the behavior's as a whole)."""

    hint: Text
    suggested_tool: Text | None = None
    suggested_action: Text | None = None


@attrs.frozen
class TriggerDoc:
    """One entry of ``policy.triggers``; which of the flag keys are required depends on action."""

    event: EventName
    matcher: Matcher | None = None
    conditions: list[ConditionDoc] = attrs.field(factory=list)
    logic: Logic = Logic("all")
    action: Action = Action("evaluate")
    flag: Text | None = None
    on_present: OnPresent | None = None
    on_absent: OnAbsent | None = None
    total: Text | None = None
    value: Text | None = None
    #: extension: a field whose strings key a flag per item (a flag per file read, say)
    keys: Text | None = None
    #: extension: an ``accumulate`` that counts for this event only and saves nothing
    preview: bool = False
    #: extension: the correction shown when this trigger is the one that matched
    recovery: RecoveryDoc | None = None


@attrs.frozen
class StepDoc:
    """One ``policy.enforcement.escalation`` entry."""

    after: After
    level: LevelName


@attrs.frozen
class EnforcementDoc:
    """``policy.enforcement``; the SPEC §3.10 order of ``escalation`` is checked in its hook."""

    default_level: LevelName
    escalation: list[StepDoc] = attrs.field(factory=list)
    override: OverrideMode = OverrideMode("agent")
    mode: Mode = Mode("enforce")
    bypass: Bypass = Bypass("allowed")


@attrs.frozen
class PolicyDoc:
    """``policy``."""

    triggers: list[TriggerDoc]
    enforcement: EnforcementDoc
    recovery: RecoveryDoc


@attrs.frozen
class RenderingDoc:
    """``rendering``: optional templates, each with its length limit."""

    nudge_template: NudgeTemplate | None = None
    warning_template: WarningTemplate | None = None
    block_reason: BlockReason | None = None
    override_prompt: OverridePrompt | None = None


@attrs.frozen
class AppliesToDoc:
    """``applies_to``: empty lists admit everything."""

    tools: list[Item] = attrs.field(factory=list)
    agents: list[Item] = attrs.field(factory=list)
    profiles: list[Profile] = attrs.field(factory=list)


@attrs.frozen
class BehaviorTestEventDoc:
    """One event of a behavior test: a Claude Code payload without ``session_id`` (``payload``),
    the outcome it must get (``expect``) and the seconds the fake clock moves before it
    (``advance``). Structured by a hook of its own: every other key is the payload's."""

    expect: Outcome
    payload: dict[str, Any] = attrs.field(factory=dict)
    advance: float = 0.0


@attrs.frozen
class BehaviorTestDoc:
    """One entry of a behavior's ``tests``: events run in order over a fresh session."""

    name: Text
    events: list[BehaviorTestEventDoc]
    #: files written into the test's project folder (the events' ``cwd``) before it runs
    files: Files = attrs.field(factory=lambda: Files({}))
    #: the profile the test runs under (default ``standard``)
    profile: Profile | None = None


@attrs.frozen
class BehaviorDoc:
    """A whole ``behavior.yaml``."""

    schema_version: SchemaVersion
    id: BehaviorId
    name: Text
    description: Text
    category: Category
    scope: ScopeName
    policy: PolicyDoc
    enabled: bool = True
    rendering: RenderingDoc = attrs.field(factory=RenderingDoc)
    applies_to: AppliesToDoc = attrs.field(factory=AppliesToDoc)
    metadata: dict[str, Any] = attrs.field(factory=dict)
    #: behavior tests (``forge-policy test``); never compiled into the normalised spec
    tests: list[BehaviorTestDoc] = attrs.field(factory=list)


@attrs.frozen
class IndexEntryDoc:
    """One ``behaviors`` entry of ``index.yaml`` (a bare id is ``IndexEntryDoc(id)``)."""

    id: Text
    enabled: bool | None = None
    tuning: Tuning | None = None
