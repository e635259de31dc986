"""Lints of a catalog that loads: what ``forge-policy validate`` warns about (``--strict``: fails).

A catalog that loads may still not do what its author meant: a field no event carries is
always empty, a trigger whose flag nothing sets never fires, a ``{countr}`` is printed as
written. Each lint is one :class:`~forge_policy.errors.Issue` at the place in the YAML it is
about. Like Cedar's validator this is a separate pass that collects everything and never runs
the evaluator; it reads the YAML again (for positions and unknown keys), so the hook never pays
for it.

Lints (each names what to change):

- an unknown key (a near miss of a known one fails to load instead, see
  :mod:`forge_policy.catalog.structuring`);
- a field or fact no event or provider can produce;
- a trigger that can never fire, a behavior none of whose triggers can;
- a block text (or ``override: user``) of a behavior that never blocks;
- a template variable that does not exist;
- a behavior folder or file with no ``index.yaml`` entry;
- a behavior enabled but excluded by the active profile;
- a matcher naming a tool in the wrong case (``bash``: matchers are case-sensitive);
- an MCP glob (``mcp__*__write*``, in a matcher or ``applies_to.tools``) that can match no
  ``mcp__<server>__<tool>`` name, and a ``*`` outside an MCP glob (``Write*``, read as a
  regular expression in a matcher, as a literal name in ``applies_to.tools``).

>>> [str(i) for i in lint_catalog(BUILTIN_DIR, profile="strict")]
[]
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args, get_type_hints

import attrs

from forge_policy.catalog.catalog import BEHAVIOR_FILE, INDEX_FILE
from forge_policy.catalog.dsl import compile_names, is_mcp_glob, matcher_kind, matcher_names
from forge_policy.catalog.loader import BUILTIN_DIR, read_catalog
from forge_policy.catalog.schema import BehaviorDoc, BehaviorTestEventDoc, IndexEntryDoc
from forge_policy.catalog.structuring import dotted, near, validate_behavior
from forge_policy.catalog.yaml_io import display, position, read_yaml
from forge_policy.errors import Issue
from forge_policy.events import (
    COMMON_FIELDS,
    EVENT_FIELDS,
    MATCHER_SUBJECT,
    TOOL_EVENTS,
    TOOL_INPUT_FIELDS,
)
from forge_policy.levels import Level
from forge_policy.templates import TEMPLATE_VARIABLES

__all__ = ["BUILTIN_DIR", "inactive_note", "lint_behavior_file", "lint_catalog"]

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.-]*)\}")
_BLOCK_TEXTS = ("block_reason", "override_prompt")


@attrs.define
class _Context:
    """What the lints of one behavior need from the whole catalog."""

    profile: str
    flags_set: set[str] = attrs.field(factory=set)
    totals_added: set[str] = attrs.field(factory=set)
    facts: frozenset[str] = frozenset()


def _fact_names() -> frozenset[str]:
    from forge_policy.facts import builtin_facts

    return frozenset(builtin_facts())


# --- unknown keys -------------------------------------------------------------------------------


def _nested(type_: Any) -> type | None:
    """The attrs class a field holds (directly, in a list, or optional), if any."""
    for candidate in (type_, *get_args(type_)):
        if attrs.has(candidate):
            return candidate
        for inner in get_args(candidate):
            if attrs.has(inner):
                return inner
    return None


#: Documents whose other keys are data, not fields: a test event is a Claude Code payload
#: (its own structuring hook already refuses a near miss of a payload key).
FREE_FORM: tuple[type, ...] = (BehaviorTestEventDoc,)


def unknown_keys(
    value: Any, cls: type, document: Any, file: str, path: tuple[str | int, ...] = ()
) -> list[Issue]:
    """Every key of ``value`` (as ruamel read it) that ``cls`` does not know, recursively.

    They are kept in the file and ignored by the engine; a near miss already failed to load.
    """
    if not isinstance(value, dict) or cls in FREE_FORM:
        return []
    hints = get_type_hints(cls)
    known = {a.name for a in attrs.fields(cls)}
    issues: list[Issue] = []
    for key, item in value.items():
        where = (*path, str(key))
        if key not in known:
            line, column = position(document, where)
            message = f"unknown key {str(key)!r} is ignored"
            issues.append(Issue(file, line, column, dotted(where), message))
            continue
        inner = _nested(hints.get(str(key)))
        if inner is None:
            continue
        items = list(enumerate(item)) if isinstance(item, list) else [(None, item)]
        for index, element in items:
            at = where if index is None else (*where, index)
            issues += unknown_keys(element, inner, document, file, at)
    return issues


# --- fields and triggers ------------------------------------------------------------------------


def _field_problem(field: str, trigger: dict[str, Any], ctx: _Context) -> str | None:
    """Why no event or provider produces ``field`` for this trigger, or None."""
    path = field.split(".")
    head = path[0]
    if len(path) >= 2 and head == "facts":
        name = ".".join(path[1:])
        if name in ctx.facts:
            return None
        return (
            f"no built-in fact provider {name!r} (unless your embedding registers one)"
            f"{near(name, ctx.facts)}"
        )
    if head == "session":
        if field == "session.counter":
            return None
        if len(path) >= 3 and path[1] == "flags":
            name = ".".join(path[2:])
            if name in ctx.flags_set:
                return None
            return f"no set_flag trigger sets flag {name!r}{near(name, ctx.flags_set)}"
        if len(path) >= 3 and path[1] == "totals":
            name = ".".join(path[2:])
            if name in ctx.totals_added:
                return None
            return f"no accumulate trigger adds to total {name!r}{near(name, ctx.totals_added)}"
        return "session has counter, flags.NAME and totals.NAME only"
    event = trigger["event"]
    allowed = set(COMMON_FIELDS) | set(EVENT_FIELDS.get(event, ()))
    if event in TOOL_EVENTS:
        names = matcher_names(trigger.get("matcher"))
        if names is None or not names <= TOOL_INPUT_FIELDS.keys():
            return None  # any tool (an MCP tool's input has any keys): cannot judge
        inputs = set().union(*(TOOL_INPUT_FIELDS[name] for name in names))
        subject = f"{'/'.join(sorted(names))} at {event}"
        if head == "tool_input" and len(path) > 1:  # the explicit spelling of the same keys
            if path[1] in inputs:
                return None
            return f"no {subject} event has tool_input.{path[1]}{near(path[1], inputs)}"
        allowed |= inputs
    elif event in EVENT_FIELDS:
        subject = event
    else:
        return None
    if head in allowed:
        return None
    return f"no {subject} event has field {head!r}{near(head, allowed)}"


#: operators that hold on an empty (missing) field: a condition with them still matches
_TRUE_WHEN_EMPTY = frozenset({"not_regex_match", "not_contains", "not_exists"})


def _never_fires(
    trigger: dict[str, Any], spec: dict[str, Any], bad: set[int], ctx: _Context
) -> str | None:
    """Why this trigger can never fire (``bad``: its conditions on a field nothing produces)."""
    conditions = trigger.get("conditions", ())
    dead = [
        i
        for i in bad
        if conditions[i]["operator"] not in _TRUE_WHEN_EMPTY
        and not (conditions[i]["operator"] == "equals" and conditions[i].get("value") == "")
    ]
    logic = trigger.get("logic", "all")
    if dead and (logic == "all" or len(dead) == len(conditions)):
        return "it can never fire: a condition it needs reads a field that is always empty"
    flag = trigger.get("flag")
    check = trigger.get("action") == "check_flag" and trigger.get("on_absent") == "skip"
    if check and flag not in ctx.flags_set:
        return f"it can never fire: no set_flag trigger sets flag {flag!r}"
    names = matcher_names(trigger.get("matcher"))
    tools = spec["applies_to"]["tools"]
    on_tools = MATCHER_SUBJECT.get(trigger["event"]) == "tool_name"
    if names is not None and tools and on_tools and not any(map(compile_names(tools), names)):
        return f"it can never fire: its matcher names none of applies_to.tools ({', '.join(tools)})"
    return None


def _unknown_tool(name: str) -> str | None:
    """Why no supported harness produces a call of tool ``name``, or None: with the catalog's
    name when it is some harness's own spelling (Cursor's ``Shell``), else the nearest tool."""
    from forge_policy.harness import registry

    harnesses = registry.HARNESSES.values()
    known = frozenset().union(*(h.catalog_tools() for h in harnesses))
    if not name or name in known or name.startswith("mcp__"):
        return None
    native = [
        f"{h.title}'s {own!r} is {catalog!r}"
        for h in harnesses
        for own, catalog in h.tools.items()
        if own == name and own != catalog
    ]
    if native:
        spellings = "; ".join(native)
        return f"no supported harness has a tool {name!r} ({spellings} in the catalog's vocabulary)"
    return f"no supported harness has a tool {name!r}{near(name, sorted(known))}"


def _unknown_tools(names: Any) -> list[str]:
    return [p for name in sorted(names or ()) if (p := _unknown_tool(name)) is not None]


def _glob_problem(entry: str, where: str) -> str | None:
    """Why one alternative of a matcher (``where="matcher"``) or one ``applies_to.tools``
    entry with a ``*`` does not do what a glob would: an MCP glob that no
    ``mcp__<server>__<tool>`` name can match (each ``*`` tried as ``x``, ``x_x`` and
    ``x__x``), or a ``*`` in anything else.

    >>> _glob_problem("mcp____*", "matcher").startswith("matches no MCP tool")
    True
    >>> _glob_problem("mcp__*__write*", "matcher") is None
    True
    >>> _glob_problem("Write*", "matcher").split(" (")[0]
    "'Write*' is read as a regular expression"
    """
    if "*" not in entry or entry == "*":
        return None
    if not is_mcp_glob(entry):
        if where == "matcher" and set(entry) - set("*") <= _NAME_LIKE:
            return (
                f"{entry!r} is read as a regular expression (a * repeats the character before "
                f"it): globs are for MCP names only (mcp__server__*); for any run of characters "
                f"write {entry.replace('*', '.*')!r}"
            )
        if where == "tools":
            return (
                f"{entry!r} names a tool literally: applies_to.tools takes names and MCP globs "
                "(mcp__server__*) only"
            )
        return None
    from itertools import product

    from forge_policy.facts.mcp import split_name

    parts = entry.split("*")
    if len(parts) > 4:
        return None  # more than three stars: not worth the search
    for fillers in product(("x", "x_x", "x__x"), repeat=len(parts) - 1):
        name = parts[0] + "".join(f + p for f, p in zip(fillers, parts[1:], strict=True))
        server, tool = split_name(name)
        if server and tool:
            return None
    return (
        f"matches no MCP tool: {entry!r} leaves the server or the tool of every "
        "mcp__<server>__<tool> name empty"
    )


_NAME_LIKE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def _matcher_case(trigger: dict[str, Any]) -> str | None:
    """A matcher name that is a known tool in another case (matchers are case-sensitive)."""
    if MATCHER_SUBJECT.get(trigger["event"]) != "tool_name":
        return None
    folded = {name.casefold(): name for name in TOOL_INPUT_FIELDS}
    for name in sorted(matcher_names(trigger.get("matcher")) or ()):
        tool = folded.get(name.casefold())
        if tool is not None and tool != name:
            return (
                f"matcher {name!r} names no tool (matchers are case-sensitive); "
                f"did you mean {tool!r}?"
            )
    return None


# --- levels and templates -----------------------------------------------------------------------


def _highest(spec: dict[str, Any]) -> Level:
    levels = [Level.parse(spec["default_level"])]
    levels += [Level.parse(name) for _, name in spec.get("escalation", ())]
    top = max(levels)
    cap = spec.get("level_cap")
    return min(top, Level.parse(cap)) if cap else top


def _template_problems(template: str, ctx: _Context) -> list[str]:
    problems: list[str] = []
    for name in _PLACEHOLDER.findall(template):
        if name in TEMPLATE_VARIABLES:
            continue
        if name.startswith("facts.") and name[6:] in ctx.facts:
            continue
        if name.startswith("session.totals.") and name[15:] in ctx.totals_added:
            continue
        choices = [*TEMPLATE_VARIABLES, *(f"facts.{f}" for f in ctx.facts)]
        problems.append(
            f"template variable {{{name}}} does not exist: it is printed as written"
            f"{near(name, choices)}"
        )
    return problems


# --- one behavior -------------------------------------------------------------------------------


def _lint_behavior(spec: dict[str, Any], document: Any, file: str, ctx: _Context) -> list[Issue]:
    issues = unknown_keys(document, BehaviorDoc, document, file)

    def add(path: tuple[str | int, ...], message: str) -> None:
        line, column = position(document, path)
        issues.append(Issue(file, line, column, dotted(path), message))

    firing = 0
    for t_index, trigger in enumerate(spec["triggers"]):
        at: tuple[str | int, ...] = ("policy", "triggers", t_index)
        bad: set[int] = set()
        for c_index, condition in enumerate(trigger.get("conditions", ())):
            problem = _field_problem(condition["field"], trigger, ctx)
            if problem is not None:
                bad.add(c_index)
                add((*at, "conditions", c_index, "field"), f"always empty: {problem}")
        case = _matcher_case(trigger)
        if case is not None:
            add((*at, "matcher"), case)
        elif MATCHER_SUBJECT.get(trigger["event"]) == "tool_name":
            for problem in _unknown_tools(matcher_names(trigger.get("matcher"))):
                add((*at, "matcher"), problem)
        if MATCHER_SUBJECT.get(trigger["event"]) == "tool_name":
            matcher = trigger.get("matcher") or ""
            alternatives = [a.strip() for a in matcher.replace(",", "|").split("|")]
            if matcher_kind(matcher) in ("globs", "regex"):
                for alternative in alternatives:
                    problem = _glob_problem(alternative, "matcher")
                    if problem is not None:
                        add((*at, "matcher"), problem)
        never = _never_fires(trigger, spec, bad, ctx)
        if never is not None or case is not None:
            if never is not None:
                add(at, never)
        elif trigger.get("action", "evaluate") in ("evaluate", "check_flag", "accumulate"):
            firing += 1
    violating = [
        t
        for t in spec["triggers"]
        if t.get("action", "evaluate") not in ("set_flag", "reset_total")
    ]
    if violating and not firing:
        add(
            ("policy", "triggers"),
            "no trigger can fire: the behavior never acts, its escalation is never reached",
        )
    for problem in _unknown_tools(spec["applies_to"]["tools"]):
        add(("applies_to", "tools"), problem)
    for index, entry in enumerate(spec["applies_to"]["tools"]):
        problem = _glob_problem(entry, "tools")
        if problem is not None:
            add(("applies_to", "tools", index), problem)
    blocks = _highest(spec) >= Level.SOFT_BLOCK
    for key in _BLOCK_TEXTS:
        if key in (document.get("rendering") or {}) and not blocks:
            add(
                ("rendering", key),
                f"never shown: the behavior never blocks ({_highest(spec).label} at most)",
            )
    if spec["override"] == "user" and not blocks:
        add(("policy", "enforcement", "override"), "has no effect: the behavior never blocks")
    for key, template in spec["templates"].items():
        for problem in _template_problems(template, ctx):
            add(("rendering", key), problem)
    profiles = spec["applies_to"]["profiles"]
    if spec["enabled"] and profiles and ctx.profile not in profiles and spec["bypass"] != "never":
        add(("applies_to", "profiles"), inactive_note(spec, ctx.profile))
    return issues


def inactive_note(spec: Mapping[str, Any], profile: str) -> str:
    """Why an enabled behavior does not run under ``profile``."""
    wanted = ", ".join(spec["applies_to"]["profiles"])
    return (
        f"enabled but inactive under profile {profile!r}: it applies to {wanted} only "
        f"(set FORGE_PROFILE={spec['applies_to']['profiles'][0]} to run it)"
    )


def _context(specs: list[dict[str, Any]], profile: str) -> _Context:
    ctx = _Context(profile=profile, facts=_fact_names())
    for spec in specs:
        for trigger in spec["triggers"]:
            if trigger.get("action") == "set_flag":
                ctx.flags_set.add(trigger["flag"])
            if trigger.get("action") == "accumulate":
                ctx.totals_added.add(trigger["total"])
    return ctx


def lint_behavior_file(path: str | os.PathLike[str], *, profile: str) -> list[Issue]:
    """The lints of one behavior file that loads (its load errors are not repeated here)."""
    shown = display(path)
    document, issues = read_yaml(path, shown)
    spec, issues = (None, issues) if issues else validate_behavior(document, shown)
    if spec is None:
        return []
    return _lint_behavior(spec, document, shown, _context([spec], profile))


def lint_catalog(root: str | os.PathLike[str], *, profile: str) -> list[Issue]:
    """The lints of a catalog folder that loads, in file order (empty when it does not load)."""
    root = Path(root)
    specs, _, errors = read_catalog(root)
    if errors:
        return []
    ctx = _context(specs, profile)
    index_path = root / INDEX_FILE
    index_shown = display(index_path)
    index, _ = read_yaml(index_path, index_shown)
    issues: list[Issue] = []
    if isinstance(index, dict):
        extra = {"schema_version", "behaviors"}
        for key in index:
            if key not in extra:
                line, column = position(index, (str(key),))
                message = f"unknown key {str(key)!r} is ignored"
                issues.append(Issue(index_shown, line, column, str(key), message))
        for place, entry in enumerate(index.get("behaviors") or ()):
            issues += unknown_keys(entry, IndexEntryDoc, index, index_shown, ("behaviors", place))
    listed = {spec["id"] for spec in specs}
    for spec in specs:
        path = root / spec["id"] / BEHAVIOR_FILE
        shown = display(path)
        document, _ = read_yaml(path, shown)
        issues += _lint_behavior(spec, document, shown, ctx)
    for entry in sorted(root.iterdir()):
        if entry.is_dir() and (entry / BEHAVIOR_FILE).is_file() and entry.name not in listed:
            message = f"behavior folder {entry.name!r} has no index.yaml entry: it never runs"
            issues.append(Issue(display(entry / BEHAVIOR_FILE), 0, 0, "", message))
        elif entry.suffix in (".yaml", ".yml") and entry.name != INDEX_FILE and entry.is_file():
            message = (
                "a behavior file beside index.yaml never runs: "
                f"move it to {entry.stem}/{BEHAVIOR_FILE} and list it in index.yaml"
            )
            issues.append(Issue(display(entry), 0, 0, "", message))
    return issues
