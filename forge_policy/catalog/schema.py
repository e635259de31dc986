"""Behavior schema v1 (SPEC §5): validate a parsed YAML document into a normalised spec.

Validation is a separate pass that collects every problem at once (Cedar's validator); each
problem names the file, line, column and the field path. The output, the *normalised spec*, is
plain JSON: what :class:`~forge_policy.catalog.behavior.Behavior` compiles and what the compiled
cache stores. Unknown keys are ignored here and stay untouched in the source document.
"""

from __future__ import annotations

import re
from typing import Any

from forge_policy.catalog.behavior import (
    ACTIONS,
    CATEGORIES,
    PROFILES,
    TEMPLATE_LIMITS,
)
from forge_policy.catalog.dsl import (
    NUMERIC_OPERATORS,
    OPERATORS,
    REGEX_OPERATORS,
    VALUELESS_OPERATORS,
    as_number,
    compile_regex,
    matcher_kind,
)
from forge_policy.errors import Issue, RegexError
from forge_policy.events import EVENTS, MATCHER_SUBJECT
from forge_policy.levels import LEVEL_NAMES, Level, Step, escalation_problems

ID_PATTERN = re.compile(r"^[a-z][a-z0-9-]*[a-z0-9]$")
SCHEMA_VERSION = "1"
RESERVED_SCOPES = ("task", "project")


def _near(word: str, choices: tuple[str, ...] | frozenset[str]) -> str:
    from difflib import get_close_matches

    close = get_close_matches(word, sorted(choices), n=1, cutoff=0.75)
    return f"; did you mean {close[0]!r}?" if close else ""


class Node:
    """A position-aware handle on a YAML value: its path, and where it sits in the file."""

    __slots__ = ("column", "line", "path", "value")

    def __init__(self, value: Any, path: str, line: int, column: int) -> None:
        self.value = value
        self.path = path
        self.line = line
        self.column = column

    def child(self, key: str) -> Node | None:
        """The value under ``key`` of a mapping node, or None when absent."""
        mapping = self.value
        if not isinstance(mapping, dict) or key not in mapping:
            return None
        line, column = self.line, self.column
        lc = getattr(mapping, "lc", None)
        if lc is not None:
            try:
                line, column = lc.value(key)
                line, column = line + 1, column + 1
            except (KeyError, TypeError, IndexError):
                pass
        path = f"{self.path}.{key}" if self.path else key
        return Node(mapping[key], path, line, column)

    def items(self) -> list[Node]:
        """The items of a sequence node."""
        seq = self.value
        out = []
        lc = getattr(seq, "lc", None)
        for index, item in enumerate(seq):
            line, column = self.line, self.column
            if lc is not None:
                try:
                    line, column = lc.item(index)
                    line, column = line + 1, column + 1
                except (KeyError, TypeError, IndexError):
                    pass
            out.append(Node(item, f"{self.path}[{index}]", line, column))
        return out


def root_node(document: Any) -> Node:
    """The node of a whole document (line 1 column 1 unless ruamel knows better)."""
    lc = getattr(document, "lc", None)
    line = lc.line + 1 if lc is not None and lc.line is not None else 1
    column = lc.col + 1 if lc is not None and lc.col is not None else 1
    return Node(document, "", line, column)


class Validator:
    """Collects :class:`~forge_policy.errors.Issue` values for one file."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.issues: list[Issue] = []

    def fail(self, node: Node, message: str, field: str | None = None) -> None:
        self.issues.append(
            Issue(self.file, node.line, node.column, node.path if field is None else field, message)
        )

    # small typed accessors; each returns None (after recording an issue) when the value is bad

    def field(self, parent: Node, key: str, *, required: bool) -> Node | None:
        node = parent.child(key)
        if node is None or node.value is None:
            if required:
                path = f"{parent.path}.{key}" if parent.path else key
                self.fail(parent, "required field missing", field=path)
            return None
        return node

    def text(
        self,
        parent: Node,
        key: str,
        *,
        required: bool = False,
        empty: bool = False,
        limit: int | None = None,
    ) -> str | None:
        node = self.field(parent, key, required=required)
        if node is None:
            return None
        if not isinstance(node.value, str):
            self.fail(node, f"expected a string, got {_kind(node.value)}")
            return None
        value = str(node.value)
        if not empty and not value.strip():
            self.fail(node, "must not be empty")
            return None
        if limit is not None and len(value) > limit:
            self.fail(node, f"at most {limit} characters, got {len(value)}")
            return None
        return value

    def choice(
        self, parent: Node, key: str, choices: tuple[str, ...], *, required: bool, what: str
    ) -> str | None:
        node = self.field(parent, key, required=required)
        if node is None:
            return None
        value = node.value
        if not isinstance(value, str) or value not in choices:
            shown = value if isinstance(value, str) else _kind(value)
            suggestion = _near(value, choices) if isinstance(value, str) else ""
            self.fail(
                node, f"unknown {what} {shown!r}: expected one of {', '.join(choices)}{suggestion}"
            )
            return None
        return value

    def mapping(self, parent: Node, key: str, *, required: bool) -> Node | None:
        node = self.field(parent, key, required=required)
        if node is None:
            return None
        if not isinstance(node.value, dict):
            self.fail(node, f"expected a mapping, got {_kind(node.value)}")
            return None
        return node

    def sequence(self, parent: Node, key: str, *, required: bool) -> Node | None:
        node = self.field(parent, key, required=required)
        if node is None:
            return None
        if not isinstance(node.value, list):
            self.fail(node, f"expected a list, got {_kind(node.value)}")
            return None
        return node

    def string_list(self, parent: Node, key: str) -> list[str]:
        node = self.sequence(parent, key, required=False)
        if node is None:
            return []
        out = []
        for item in node.items():
            if isinstance(item.value, str) and item.value:
                out.append(str(item.value))
            else:
                self.fail(item, f"expected a non-empty string, got {_kind(item.value)}")
        return out

    def boolean(self, parent: Node, key: str) -> bool | None:
        node = self.field(parent, key, required=False)
        if node is None:
            return None
        if not isinstance(node.value, bool):
            self.fail(node, f"expected true or false, got {_kind(node.value)}")
            return None
        return bool(node.value)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _plain(value: Any) -> Any:
    """ruamel's commented containers and scalars to plain JSON values."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)


def validate_behavior(document: Any, file: str) -> tuple[dict[str, Any] | None, list[Issue]]:
    """Validate one parsed behavior document; return its normalised spec (None if invalid)."""
    v = Validator(file)
    root = root_node(document)
    if not isinstance(document, dict):
        v.fail(root, f"a behavior file must be a mapping, got {_kind(document)}")
        return None, v.issues
    spec: dict[str, Any] = {"source": file}

    version = v.field(root, "schema_version", required=True)
    if version is not None and (
        not isinstance(version.value, str) or version.value != SCHEMA_VERSION
    ):
        v.fail(version, f'unsupported schema_version {_plain(version.value)!r}: expected "1"')

    behavior_id = v.text(root, "id", required=True)
    if behavior_id is not None:
        if ID_PATTERN.match(behavior_id):
            spec["id"] = behavior_id
        else:
            v.fail(
                root.child("id") or root,
                f"invalid id {behavior_id!r}: lowercase letters, digits and '-', starting "
                "with a letter and not ending with '-'",
            )
    spec["name"] = v.text(root, "name", required=True)
    spec["description"] = v.text(root, "description", required=True)
    spec["category"] = v.choice(root, "category", CATEGORIES, required=True, what="category")
    scope = v.field(root, "scope", required=True)
    if scope is not None:
        if scope.value == "session":
            spec["scope"] = "session"
        elif scope.value in RESERVED_SCOPES:
            v.fail(scope, f"scope {scope.value!r} is reserved: only 'session' is supported")
        else:
            v.fail(scope, f"unknown scope {_plain(scope.value)!r}: expected 'session'")
    enabled = v.boolean(root, "enabled")
    spec["enabled"] = True if enabled is None else enabled

    policy = v.mapping(root, "policy", required=True)
    if policy is not None:
        _validate_policy(v, policy, spec)
    _validate_rendering(v, root, spec)
    applies = v.mapping(root, "applies_to", required=False)
    applies_to: dict[str, list[str]] = {"tools": [], "agents": [], "profiles": []}
    if applies is not None:
        applies_to["tools"] = v.string_list(applies, "tools")
        applies_to["agents"] = v.string_list(applies, "agents")
        profiles = applies.child("profiles")
        applies_to["profiles"] = v.string_list(applies, "profiles")
        for item in (
            profiles.items() if profiles is not None and isinstance(profiles.value, list) else []
        ):
            if isinstance(item.value, str) and item.value and item.value not in PROFILES:
                v.fail(
                    item,
                    f"unknown profile {item.value!r}: expected one of "
                    f"{', '.join(PROFILES)}{_near(item.value, PROFILES)}",
                )
    spec["applies_to"] = applies_to
    v.mapping(root, "metadata", required=False)
    if v.issues:
        return None, v.issues
    return {k: val for k, val in spec.items() if val is not None}, v.issues


def _validate_policy(v: Validator, policy: Node, spec: dict[str, Any]) -> None:
    triggers = v.sequence(policy, "triggers", required=True)
    if triggers is not None:
        items = triggers.items()
        if not items:
            v.fail(triggers, "at least one trigger is required")
        spec["triggers"] = [_validate_trigger(v, item) for item in items]

    enforcement = v.mapping(policy, "enforcement", required=True)
    if enforcement is not None:
        default = v.choice(enforcement, "default_level", LEVEL_NAMES, required=True, what="level")
        spec["default_level"] = default
        steps: list[Step] = []
        step_nodes: list[Node] = []
        escalation = v.sequence(enforcement, "escalation", required=False)
        for item in escalation.items() if escalation is not None else []:
            if not isinstance(item.value, dict):
                v.fail(item, f"expected a mapping with after and level, got {_kind(item.value)}")
                continue
            after_node = v.field(item, "after", required=True)
            level = v.choice(item, "level", LEVEL_NAMES, required=True, what="level")
            after = after_node.value if after_node is not None else None
            if after_node is not None and (not isinstance(after, int) or isinstance(after, bool)):
                v.fail(after_node, f"expected a whole number >= 1, got {_kind(after)}")
                continue
            if after is None or level is None:
                continue
            steps.append(Step(int(after), Level.parse(level)))
            step_nodes.append(item)
        if default is not None and len(step_nodes) == len(
            escalation.items() if escalation is not None else []
        ):
            for index, key, message in escalation_problems(Level.parse(default), steps):
                node = step_nodes[index].child(key) or step_nodes[index]
                v.fail(node, message)
        spec["escalation"] = [[s.after, s.level.label] for s in steps]
        spec["override"] = (
            v.choice(
                enforcement, "override", ("agent", "user"), required=False, what="override mode"
            )
            or "agent"
        )
        spec["mode"] = (
            v.choice(enforcement, "mode", ("enforce", "shadow"), required=False, what="mode")
            or "enforce"
        )
        spec["bypass"] = (
            v.choice(enforcement, "bypass", ("allowed", "never"), required=False, what="bypass")
            or "allowed"
        )

    recovery = v.mapping(policy, "recovery", required=True)
    if recovery is not None:
        spec["hint"] = (v.text(recovery, "hint", required=True) or "").strip()
        spec["suggested_tool"] = v.text(recovery, "suggested_tool") or ""
        spec["suggested_action"] = (v.text(recovery, "suggested_action") or "").strip()


def _validate_trigger(v: Validator, node: Node) -> dict[str, Any]:
    trigger: dict[str, Any] = {}
    if not isinstance(node.value, dict):
        v.fail(node, f"expected a mapping, got {_kind(node.value)}")
        return trigger
    event = v.field(node, "event", required=True)
    if event is not None:
        if isinstance(event.value, str) and event.value in EVENTS:
            trigger["event"] = str(event.value)
        else:
            shown = event.value if isinstance(event.value, str) else _kind(event.value)
            hint = _near(event.value, EVENTS) if isinstance(event.value, str) else ""
            v.fail(event, f"unknown event {shown!r}{hint}")
    matcher = v.text(node, "matcher", empty=True)
    is_tool_event = MATCHER_SUBJECT.get(trigger.get("event", "")) == "tool_name"
    if matcher is None and is_tool_event and node.child("matcher") is None:
        v.fail(
            node,
            "required field missing (a tool event needs a matcher; '*' matches all)",
            field=f"{node.path}.matcher",
        )
    if matcher is not None:
        if matcher_kind(matcher) == "regex":
            try:
                compile_regex(matcher.strip())
            except RegexError as exc:
                v.fail(node.child("matcher") or node, f"invalid regex: {exc}")
        trigger["matcher"] = matcher

    conditions = v.sequence(node, "conditions", required=False)
    trigger["conditions"] = [
        c
        for c in (
            _validate_condition(v, item)
            for item in (conditions.items() if conditions is not None else [])
        )
        if c is not None
    ]
    trigger["logic"] = (
        v.choice(node, "logic", ("all", "any"), required=False, what="logic") or "all"
    )
    action = v.choice(node, "action", ACTIONS, required=False, what="action") or "evaluate"
    trigger["action"] = action
    if action in ("set_flag", "check_flag"):
        flag = v.text(node, "flag", required=True)
        if flag is not None:
            trigger["flag"] = flag
    if action == "check_flag":
        trigger["on_present"] = v.choice(
            node, "on_present", ("consume", "keep"), required=True, what="on_present value"
        )
        trigger["on_absent"] = v.choice(
            node, "on_absent", ("skip", "violate"), required=True, what="on_absent value"
        )
    if action in ("accumulate", "reset_total"):
        trigger["total"] = v.text(node, "total", required=True)
    if action == "accumulate":
        trigger["value"] = v.text(node, "value", required=True)
    return {k: val for k, val in trigger.items() if val is not None}


def _validate_condition(v: Validator, node: Node) -> dict[str, Any] | None:
    if not isinstance(node.value, dict):
        v.fail(node, f"expected a mapping with field, operator and value, got {_kind(node.value)}")
        return None
    field = v.text(node, "field", required=True)
    operator = v.choice(node, "operator", OPERATORS, required=True, what="operator")
    value_node = node.child("value")
    if operator is None or field is None:
        return None
    value = _plain(value_node.value) if value_node is not None else None
    if operator not in VALUELESS_OPERATORS and value is None:
        v.fail(
            node,
            f"required field missing (operator {operator!r} needs a value)",
            field=f"{node.path}.value",
        )
        return None
    where = value_node or node
    if operator == "in" and not isinstance(value, list):
        v.fail(where, f"operator 'in' needs a list, got {_kind(value)}")
        return None
    if operator in NUMERIC_OPERATORS and as_number(value) is None:
        v.fail(where, f"operator {operator!r} needs a number, got {_kind(value)}")
        return None
    if operator in REGEX_OPERATORS:
        if not isinstance(value, str):
            v.fail(where, f"expected a regex string, got {_kind(value)}")
            return None
        try:
            compile_regex(value)
        except RegexError as exc:
            v.fail(where, f"invalid regex: {exc}")
            return None
    if (
        operator not in REGEX_OPERATORS
        and operator not in ("in",)
        and isinstance(value, dict | list)
    ):
        v.fail(where, f"operator {operator!r} needs a scalar value, got {_kind(value)}")
        return None
    return {"field": field, "operator": operator, "value": value}


def _validate_rendering(v: Validator, root: Node, spec: dict[str, Any]) -> None:
    rendering = v.mapping(root, "rendering", required=False)
    templates: dict[str, str] = {}
    if rendering is not None:
        for key, limit in TEMPLATE_LIMITS.items():
            text = v.text(rendering, key, limit=limit)
            if text is not None:
                templates[key] = text.strip()
    spec["templates"] = templates
