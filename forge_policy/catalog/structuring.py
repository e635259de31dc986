"""Structuring YAML documents into the schema's attrs classes with cattrs, and its errors.

:func:`converter` structures a parsed document with cattrs' detailed validation, which collects
every problem at once (Cedar's validator). Each problem carries cattrs' path
(``policy.triggers[0].action``), which :func:`issues_of` maps onto ruamel's marks to name the file,
line and column. Rules that span several fields (a check_flag trigger needs ``flag``,
``on_present`` and ``on_absent``; an operator needs a value of its kind; SPEC §3.10 escalation
order) run in the hook of the class that holds those fields, after its own fields, so they are
reported together with everything else. An unknown key that is a near miss of a known one
(``condtions``) fails with "did you mean": a typo must not silently change a rule (SPEC §5).

:func:`validate_behavior` returns the *normalised spec*, plain JSON: what
:class:`~forge_policy.catalog.behavior.Behavior` compiles and what the compiled cache stores.

This module imports cattrs; only the YAML load path imports it.

>>> spec, issues = validate_behavior({"schema_version": "1", "id": "x-y", "name": "X",
...     "description": "d", "category": "core", "scope": "session",
...     "policy": {"triggers": [{"event": "Stop"}],
...                "enforcement": {"default_level": "nudge"},
...                "recovery": {"hint": "h"}}}, "x.yaml")
>>> issues, spec["default_level"], spec["triggers"][0]["action"]
([], 'nudge', 'evaluate')
"""

from __future__ import annotations

from difflib import get_close_matches
from typing import Any, get_origin

import attrs
import cattrs
from cattrs.errors import AttributeValidationNote, ClassValidationError, IterableValidationNote

from forge_policy._limits import MAX_DEPTH
from forge_policy.catalog.behavior import PROFILES, SCOPES
from forge_policy.catalog.dsl import (
    NUMERIC_OPERATORS,
    OPERATORS,
    REGEX_OPERATORS,
    VALUELESS_OPERATORS,
    as_number,
    compile_regex,
    matcher_kind,
)
from forge_policy.catalog.schema import (
    CHOICES,
    ID_PATTERN,
    OUTCOMES,
    RESERVED_SCOPES,
    SCHEMA_VERSION,
    TEMPLATE_TYPES,
    After,
    BehaviorDoc,
    BehaviorId,
    BehaviorTestDoc,
    BehaviorTestEventDoc,
    ConditionDoc,
    EnforcementDoc,
    EventName,
    Files,
    IndexEntryDoc,
    Item,
    Matcher,
    PolicyDoc,
    Profile,
    RecoveryDoc,
    SchemaVersion,
    ScopeName,
    StepDoc,
    Text,
    TriggerDoc,
)
from forge_policy.catalog.yaml_io import plain, position
from forge_policy.errors import Issue, RegexError
from forge_policy.events import EVENTS, MATCHER_SUBJECT, TOOL_EVENTS
from forge_policy.levels import LEVEL_NAMES, Level, Step, escalation_problems
from forge_policy.templates import TEMPLATE_LIMITS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterator, Sequence


def near(word: str, choices: Collection[str], cutoff: float = 0.75) -> str:
    """A "did you mean" suffix for a near miss, else ``""``.

    >>> near("regex_matches", ("regex_match", "contains"))
    "; did you mean 'regex_match'?"
    """
    close = get_close_matches(word, sorted(choices), n=1, cutoff=cutoff)
    return f"; did you mean {close[0]!r}?" if close else ""


def kind(value: object) -> str:
    """How a message names an unexpected value: ``the string 'x'``, ``a list``, ``null``…"""
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


# --- structure hooks ----------------------------------------------------------------------------


def _at(exc: Exception, *steps: str | int) -> Exception:
    """Address ``exc`` below the current value, in cattrs' own path notes."""
    for step in steps:
        if isinstance(step, int):
            exc.add_note(IterableValidationNote(f"@ index {step}", step, object))
        else:
            exc.add_note(AttributeValidationNote(f"@ attribute {step}", step, object))
    return exc


def missing(name: str, reason: str = "") -> Exception:
    """A required key is absent (``reason`` says why it is required here)."""
    return _at(KeyError(name, reason), name)


def _text(value: object, *, empty: bool = False, limit: int | None = None) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {kind(value)}")
    if not empty and not value.strip():
        raise ValueError("must not be empty")
    if limit is not None and len(value) > limit:
        raise ValueError(f"at most {limit} characters, got {len(value)}")
    return value


def _choice(value: object, choices: tuple[str, ...], what: str) -> str:
    if isinstance(value, str) and value in choices:
        return value
    shown = value if isinstance(value, str) else kind(value)
    suggestion = near(value, choices) if isinstance(value, str) else ""
    raise ValueError(f"unknown {what} {shown!r}: expected one of {', '.join(choices)}{suggestion}")


def _nonempty(value: object, _: object) -> str:
    return _text(value)


def _schema_version(value: object, _: object) -> str:
    if isinstance(value, str) and value == SCHEMA_VERSION:
        return value
    raise ValueError(f'unsupported schema_version {value!r}: expected "1"')


def _behavior_id(value: object, _: object) -> str:
    text = _text(value)
    if not ID_PATTERN.match(text):
        raise ValueError(
            f"invalid id {text!r}: lowercase letters, digits and '-', starting with a letter "
            "and not ending with '-'"
        )
    return text


def _scope(value: object, _: object) -> str:
    if isinstance(value, str) and value in SCOPES:
        return value
    supported = " and ".join(repr(s) for s in SCOPES)
    if value in RESERVED_SCOPES:
        raise ValueError(f"scope {value!r} is reserved: only {supported} are supported")
    raise ValueError(f"unknown scope {value!r}: expected {' or '.join(repr(s) for s in SCOPES)}")


def _event(value: object, _: object) -> str:
    if isinstance(value, str) and value in EVENTS:
        return value
    shown = value if isinstance(value, str) else kind(value)
    suggestion = near(value, EVENTS) if isinstance(value, str) else ""
    raise ValueError(f"unknown event {shown!r}{suggestion}")


def _matcher(value: object, _: object) -> str:
    text = _text(value, empty=True)
    if matcher_kind(text) == "regex":
        try:
            compile_regex(text.strip())
        except RegexError as exc:
            raise ValueError(f"invalid regex: {exc}") from None
    return text


def _after(value: object, _: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"expected a whole number >= 1, got {kind(value)}")
    return value


def _boolean(value: object, _: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {kind(value)}")
    return value


def _profile(value: object, _: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"expected a non-empty string, got {kind(value)}")
    return _choice(value, PROFILES, "profile")


def _item(value: object, _: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"expected a non-empty string, got {kind(value)}")
    return value


#: how "expected …, got …" names a mapping, where a class asks for more than "a mapping"
_MAPPING_NAMES: dict[type, str] = {
    StepDoc: "a mapping with after and level",
    ConditionDoc: "a mapping with field, operator and value",
}


def _condition_checks(raw: dict[str, Any]) -> Iterator[Exception]:
    """An operator needs a value of its kind (checked once field and operator are valid)."""
    operator, field = raw.get("operator"), raw.get("field")
    if operator not in OPERATORS or not isinstance(field, str) or not field.strip():
        return
    value = raw.get("value")
    if operator not in VALUELESS_OPERATORS and value is None:
        yield missing("value", f"operator {operator!r} needs a value")
        return
    if operator == "in" and not isinstance(value, list):
        yield _at(ValueError(f"operator 'in' needs a list, got {kind(value)}"), "value")
    elif operator in NUMERIC_OPERATORS and as_number(value) is None:
        yield _at(ValueError(f"operator {operator!r} needs a number, got {kind(value)}"), "value")
    elif operator in REGEX_OPERATORS:
        if not isinstance(value, str):
            yield _at(ValueError(f"expected a regex string, got {kind(value)}"), "value")
            return
        try:
            compile_regex(value)
        except RegexError as exc:
            yield _at(ValueError(f"invalid regex: {exc}"), "value")
    elif operator != "in" and isinstance(value, dict | list):
        yield _at(
            ValueError(f"operator {operator!r} needs a scalar value, got {kind(value)}"), "value"
        )


def _trigger_checks(raw: dict[str, Any]) -> Iterator[Exception]:
    """The keys a trigger's event and action make required."""
    event = raw.get("event")
    if (
        isinstance(event, str)
        and MATCHER_SUBJECT.get(event) == "tool_name"
        and "matcher" not in raw
    ):
        yield missing("matcher", "a tool event needs a matcher; '*' matches all")
    action = raw.get("action", "evaluate")
    required: tuple[str, ...] = {
        "set_flag": ("flag",),
        "check_flag": ("flag", "on_present", "on_absent"),
        "accumulate": ("total", "value"),
        "reset_total": ("total",),
    }.get(action if isinstance(action, str) else "", ())
    for name in required:
        if raw.get(name) is None:
            yield missing(name)
    # the extensions' keys belong to one kind of action each: elsewhere they would do nothing
    if raw.get("keys") is not None and action not in ("set_flag", "check_flag"):
        yield _at(ValueError("keys is for set_flag and check_flag triggers"), "keys")
    if raw.get("preview") and action != "accumulate":
        yield _at(ValueError("preview is for accumulate triggers"), "preview")
    if raw.get("recovery") is not None and action not in ("evaluate", "check_flag"):
        yield _at(
            ValueError("recovery is for the triggers that can violate (evaluate, check_flag)"),
            "recovery",
        )


def _enforcement_checks(raw: dict[str, Any]) -> Iterator[Exception]:
    """SPEC §3.10, judged only when the default level and every entry are well-formed."""
    default = raw.get("default_level")
    entries = raw.get("escalation") or []
    if default not in LEVEL_NAMES or not isinstance(entries, list):
        return
    steps: list[Step] = []
    for entry in entries:
        if not isinstance(entry, dict):
            return
        after, level = entry.get("after"), entry.get("level")
        if not isinstance(after, int) or isinstance(after, bool) or level not in LEVEL_NAMES:
            return
        steps.append(Step(after, Level.parse(level)))
    for index, key, message in escalation_problems(Level.parse(default), steps):
        yield _at(ValueError(message), "escalation", index, key)


def _policy_checks(raw: dict[str, Any]) -> Iterator[Exception]:
    if raw.get("triggers") == []:
        yield _at(ValueError("at least one trigger is required"), "triggers")


def _behavior_checks(raw: dict[str, Any]) -> Iterator[Exception]:
    """Test names are unique in a behavior: they name a test in reports."""
    tests = raw.get("tests")
    if not isinstance(tests, list):
        return
    seen: dict[str, int] = {}
    for index, test in enumerate(tests):
        name = test.get("name") if isinstance(test, dict) else None
        if not isinstance(name, str):
            continue
        if name in seen:
            yield _at(
                ValueError(f"duplicate test name {name!r} (also tests[{seen[name]}])"),
                "tests",
                index,
                "name",
            )
        seen.setdefault(name, index)


def _test_checks(raw: dict[str, Any]) -> Iterator[Exception]:
    if raw.get("events") == []:
        yield _at(ValueError("a test needs at least one event"), "events")


_CHECKS: dict[type, Callable[[dict[str, Any]], Iterator[Exception]]] = {
    ConditionDoc: _condition_checks,
    TriggerDoc: _trigger_checks,
    EnforcementDoc: _enforcement_checks,
    PolicyDoc: _policy_checks,
    BehaviorDoc: _behavior_checks,
    BehaviorTestDoc: _test_checks,
}


# --- behavior tests: a test event is a Claude Code payload plus expect and advance -------------

#: the keys of a test event that are not the payload's
TEST_EVENT_KEYS = ("expect", "advance")
#: payload keys a near miss is checked against (a payload may hold any other key)
PAYLOAD_KEYS = (
    "hook_event_name",
    "tool_name",
    "tool_input",
    "tool_use_id",
    "tool_response",
    "prompt",
    "cwd",
    "permission_mode",
    "agent_type",
    "source",
    "commit_message",
    "staged_files",
)
#: payload fields Event.from_claude_code reads as strings
_STRING_FIELDS = ("prompt", "cwd", "agent_type", "tool_use_id", "permission_mode", "source")


def _test_event_problems(value: dict[str, Any]) -> Iterator[Exception]:
    expect = value.get("expect")
    if expect is None:
        yield missing("expect", ", ".join(OUTCOMES))
    else:
        try:
            _choice(expect, OUTCOMES, "outcome")
        except ValueError as exc:
            yield _at(exc, "expect")
    advance = value.get("advance", 0)
    if isinstance(advance, bool) or not isinstance(advance, int | float) or advance < 0:
        yield _at(ValueError(f"expected seconds >= 0, got {kind(advance)}"), "advance")
    if "session_id" in value:
        message = "a test runs in a fresh session of its own: remove session_id"
        yield _at(ValueError(message), "session_id")
    event, tool_name = value.get("hook_event_name"), value.get("tool_name")
    if event is None and tool_name is None:
        yield missing("hook_event_name", "or tool_name, for a PreToolUse")
    elif event is not None:
        try:
            _event(event, None)
        except ValueError as exc:
            yield _at(exc, "hook_event_name")
    if tool_name is not None and (not isinstance(tool_name, str) or not tool_name):
        yield _at(ValueError(f"expected a tool name, got {kind(tool_name)}"), "tool_name")
    elif tool_name is None and event in TOOL_EVENTS:
        yield missing("tool_name", f"a {event} names its tool")
    tool_input = value.get("tool_input")
    if tool_input is not None and not isinstance(tool_input, dict):
        yield _at(ValueError(f"expected a mapping, got {kind(tool_input)}"), "tool_input")
    for key in _STRING_FIELDS:
        field = value.get(key)
        if field is not None and not isinstance(field, str):
            yield _at(ValueError(f"expected a string, got {kind(field)}"), key)
    for key in value:
        if isinstance(key, str) and key not in TEST_EVENT_KEYS and key not in PAYLOAD_KEYS:
            suggestion = near(key, (*TEST_EVENT_KEYS, *PAYLOAD_KEYS, "session_id"), cutoff=0.8)
            if suggestion:
                yield _at(ValueError(f"unknown key {key!r}{suggestion}"), key)


def _test_event(value: Any, _: Any) -> BehaviorTestEventDoc:
    if not isinstance(value, dict):
        raise ValueError(
            f"expected a mapping (a Claude Code payload and expect), got {kind(value)}"
        )
    problems = list(_test_event_problems(value))
    if problems:
        raise ClassValidationError("While structuring a test event", problems, BehaviorTestEventDoc)
    payload = {k: v for k, v in value.items() if k not in TEST_EVENT_KEYS}
    return BehaviorTestEventDoc(value["expect"], payload, float(value.get("advance", 0)))


#: the most filler a test file may ask for (``{bytes: N}``)
MAX_TEST_FILE_BYTES = 8 << 20


def _file_problem(path: object, content: object) -> Exception | None:
    if not isinstance(path, str) or not path.strip():
        return ValueError(f"expected a relative file path, got {kind(path)}")
    parts = path.replace("\\", "/").split("/")
    if path.startswith(("/", "~")) or ".." in parts:
        return ValueError(f"{path!r}: a path inside the test's project folder, not above it")
    if isinstance(content, str):
        return None
    size = content.get("bytes") if isinstance(content, dict) and len(content) == 1 else None
    if isinstance(size, int) and not isinstance(size, bool) and 0 <= size <= MAX_TEST_FILE_BYTES:
        return None
    return ValueError(
        f"expected the file's text or {{bytes: N}} (0 to {MAX_TEST_FILE_BYTES}), "
        f"got {kind(content)}"
    )


def _files(value: Any, _: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"expected a mapping of relative paths to contents, got {kind(value)}")
    problems = [
        _at(problem, str(path))
        for path, content in value.items()
        if (problem := _file_problem(path, content)) is not None
    ]
    if problems:
        raise ClassValidationError("While structuring files", problems, dict)
    return dict(value)


def _unknown_key_checks(cls: type, raw: dict[str, Any]) -> Iterator[Exception]:
    """SPEC §5: an unknown key that is a near miss of a known one fails (fail closed); the
    others are warnings of ``validate`` (:mod:`forge_policy.catalog.lints`)."""
    known = tuple(a.name for a in attrs.fields(cls))
    for key in raw:
        if key not in known and isinstance(key, str):
            suggestion = near(key, known, cutoff=0.8)
            if suggestion:
                yield _at(ValueError(f"unknown key {key!r}{suggestion}"), key)


def _mapping_hook(cls: type, conv: cattrs.Converter) -> Callable[[Any, Any], Any]:
    """Structure ``cls`` from a mapping: its fields by cattrs, then its cross-field checks.

    A null value counts as an absent key for the fields; the checks see the mapping as written.
    """
    from cattrs.gen import make_dict_structure_fn

    base: Any = make_dict_structure_fn(cls, conv)
    checks = _CHECKS.get(cls)
    what = _MAPPING_NAMES.get(cls, "a mapping")

    def structure(value: Any, _: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError(f"expected {what}, got {kind(value)}")
        problems: list[Exception] = []
        result = None
        try:
            result = base({k: v for k, v in value.items() if v is not None}, cls)
        except ClassValidationError as exc:
            problems.extend(exc.exceptions)
        except Exception as exc:  # a class' own __init__ refusing: still one problem
            problems.append(exc)
        problems.extend(_unknown_key_checks(cls, value))
        if checks is not None:
            problems.extend(checks(value))
        if problems:
            raise ClassValidationError(f"While structuring {cls.__name__}", problems, cls)
        return result

    return structure


def _list_hook(cls: Any, conv: cattrs.Converter) -> Callable[[Any, Any], Any]:
    from cattrs.cols import list_structure_factory

    base: Any = list_structure_factory(cls, conv)

    def structure(value: Any, _: Any) -> Any:
        if not isinstance(value, list):
            raise ValueError(f"expected a list, got {kind(value)}")
        return base(value, cls)

    return structure


def _index_entry(conv: cattrs.Converter) -> Callable[[Any, Any], IndexEntryDoc]:
    mapping = _mapping_hook(IndexEntryDoc, conv)

    def structure(value: Any, _: Any) -> IndexEntryDoc:
        if isinstance(value, str):
            return IndexEntryDoc(Text(value))
        if not isinstance(value, dict):
            raise ValueError("expected an id or a mapping with id and enabled")
        result: IndexEntryDoc = mapping(value, IndexEntryDoc)
        return result

    return structure


def _choice_hook(choices: tuple[str, ...], what: str) -> Callable[[Any, Any], str]:
    def structure(value: Any, _: Any) -> str:
        return _choice(value, choices, what)

    return structure


def _template_hook(limit: int) -> Callable[[Any, Any], str]:
    def structure(value: Any, _: Any) -> str:
        return _text(value, limit=limit)

    return structure


def _is_list(type_: Any) -> bool:
    origin: Any = get_origin(type_)
    return origin is list


def _is_dict(type_: Any) -> bool:
    origin: Any = get_origin(type_)
    return origin is dict


def make_converter() -> cattrs.Converter:
    """The converter of the schema: detailed validation, one hook per value type."""
    conv = cattrs.Converter(detailed_validation=True)
    simple: dict[object, Callable[[Any, Any], Any]] = {
        SchemaVersion: _schema_version,
        BehaviorId: _behavior_id,
        ScopeName: _scope,
        EventName: _event,
        Text: _nonempty,
        Matcher: _matcher,
        After: _after,
        Profile: _profile,
        Item: _item,
        bool: _boolean,
    }
    for kind_, (choices, what) in CHOICES.items():
        simple[kind_] = _choice_hook(choices, what)
    for kind_, limit in TEMPLATE_TYPES.items():
        simple[kind_] = _template_hook(limit)
    for type_, hook in simple.items():
        conv.register_structure_hook(type_, hook)
    conv.register_structure_hook_factory(attrs.has, lambda cls: _mapping_hook(cls, conv))
    conv.register_structure_hook_factory(_is_list, lambda t: _list_hook(t, conv))
    conv.register_structure_hook_factory(_is_dict, lambda _: _mapping_of_anything)
    conv.register_structure_hook(IndexEntryDoc, _index_entry(conv))
    conv.register_structure_hook(BehaviorTestEventDoc, _test_event)
    conv.register_structure_hook(Files, _files)
    return conv


def _mapping_of_anything(value: Any, _: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"expected a mapping, got {kind(value)}")
    return dict(value)


_CONVERTER: list[cattrs.Converter] = []


def converter() -> cattrs.Converter:
    """The schema's converter, built on first use (a local, never cattrs' global one)."""
    if not _CONVERTER:
        _CONVERTER.append(make_converter())
    return _CONVERTER[0]


# --- cattrs paths onto ruamel marks --------------------------------------------------------------


def _steps(exc: BaseException) -> list[str | int]:
    steps: list[str | int] = []
    for note in getattr(exc, "__notes__", ()):
        if isinstance(note, AttributeValidationNote):
            steps.append(note.name)
        elif isinstance(note, IterableValidationNote):
            steps.append(note.index)
    return steps


def _leaves(
    exc: BaseException, path: tuple[str | int, ...]
) -> Iterator[tuple[tuple[Any, ...], BaseException]]:
    here = (*path, *_steps(exc))
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            yield from _leaves(sub, here)
    else:
        yield here, exc


def dotted(path: Sequence[str | int]) -> str:
    """``("policy", "triggers", 0)`` as ``policy.triggers[0]``."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        else:
            out += f".{step}" if out else step
    return out


def issues_of(
    exc: BaseException, document: Any, file: str, prefix: Sequence[str | int] = ()
) -> list[Issue]:
    """Every problem of a cattrs structuring error as an Issue at its place in ``document``.

    A missing key is reported at the mapping that lacks it; anything else at the value itself.
    Issues come in document order.
    """
    found: list[tuple[tuple[int, int], int, Issue]] = []
    for order, (path, leaf) in enumerate(_leaves(exc, tuple(prefix))):
        if isinstance(leaf, KeyError):
            reason = leaf.args[1] if len(leaf.args) > 1 and leaf.args[1] else ""
            message = f"required field missing ({reason})" if reason else "required field missing"
            line, column = position(document, path[:-1])
        else:
            message = str(leaf.args[0]) if leaf.args else type(leaf).__name__
            line, column = position(document, path)
        found.append(((line, column), order, Issue(file, line, column, dotted(path), message)))
    return [issue for _, _, issue in sorted(found, key=lambda item: (item[0], item[1]))]


def structure(
    value: Any, cls: type[Any], document: Any, file: str, prefix: Sequence[str | int] = ()
) -> tuple[Any, list[Issue]]:
    """``value`` (plain data, see :func:`~forge_policy.catalog.yaml_io.plain`) structured as
    ``cls``, or None and every issue, addressed by the marks of ``document`` (what ruamel read).
    """
    try:
        return converter().structure(value, cls), []
    except Exception as exc:  # cattrs raises groups, or a hook's ValueError at the top
        return None, issues_of(exc, document, file, prefix)


# --- behavior documents to normalised specs ------------------------------------------------------


def validate_behavior(document: Any, file: str) -> tuple[dict[str, Any] | None, list[Issue]]:
    """Validate one parsed behavior document; return its normalised spec (None if invalid)."""
    doc, issues = structure_behavior(document, file)
    if doc is None:
        return None, issues
    return normalise(doc, file), []


def structure_behavior(document: Any, file: str) -> tuple[BehaviorDoc | None, list[Issue]]:
    """One parsed behavior document as a :class:`BehaviorDoc` (its tests too), or None and
    every issue."""
    if not isinstance(document, dict):
        line, column = position(document, ())
        return None, [
            Issue(
                file, line, column, "", f"a behavior file must be a mapping, got {kind(document)}"
            )
        ]
    try:
        value = plain(document)
    except RecursionError:
        return None, [Issue(file, 0, 0, "", f"nested deeper than {MAX_DEPTH} levels: refused")]
    doc, issues = structure(value, BehaviorDoc, document, file)
    return doc, issues


def _trigger_spec(trigger: TriggerDoc) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "event": trigger.event,
        "matcher": trigger.matcher,
        "conditions": [
            {"field": c.field, "operator": c.operator, "value": c.value} for c in trigger.conditions
        ],
        "logic": trigger.logic,
        "action": trigger.action,
    }
    if trigger.action in ("set_flag", "check_flag"):
        spec["flag"] = trigger.flag
        spec["keys"] = trigger.keys
    if trigger.action == "check_flag":
        spec["on_present"], spec["on_absent"] = trigger.on_present, trigger.on_absent
    if trigger.action in ("accumulate", "reset_total"):
        spec["total"] = trigger.total
    if trigger.action == "accumulate":
        spec["value"] = trigger.value
        spec["preview"] = trigger.preview or None
    if trigger.recovery is not None:
        spec["recovery"] = _recovery_spec(trigger.recovery)
    return {k: v for k, v in spec.items() if v is not None}


def _recovery_spec(recovery: RecoveryDoc) -> dict[str, str]:
    """``hint``, ``suggested_tool`` and ``suggested_action`` as the compiled spec holds them."""
    return {
        "hint": recovery.hint.strip(),
        "suggested_tool": recovery.suggested_tool or "",
        "suggested_action": (recovery.suggested_action or "").strip(),
    }


def normalise(doc: BehaviorDoc, source: str) -> dict[str, Any]:
    """The plain-JSON spec of a structured behavior (see the module docstring)."""
    policy, rendering = doc.policy, doc.rendering
    templates = {
        key: str(getattr(rendering, key)).strip()
        for key in TEMPLATE_LIMITS
        if getattr(rendering, key) is not None
    }
    return {
        "source": source,
        "id": doc.id,
        "name": doc.name,
        "description": doc.description,
        "category": doc.category,
        "scope": doc.scope,
        "enabled": doc.enabled,
        "triggers": [_trigger_spec(t) for t in policy.triggers],
        "default_level": policy.enforcement.default_level,
        "escalation": [[s.after, s.level] for s in policy.enforcement.escalation],
        "override": policy.enforcement.override,
        "mode": policy.enforcement.mode,
        "bypass": policy.enforcement.bypass,
        **_recovery_spec(policy.recovery),
        "templates": templates,
        "applies_to": {
            "tools": list(doc.applies_to.tools),
            "agents": list(doc.applies_to.agents),
            "profiles": list(doc.applies_to.profiles),
        },
    }
