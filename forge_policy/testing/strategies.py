"""Hypothesis strategies for property-testing catalogs and harness adapters: Claude Code
events, valid behavior documents, compiled behaviors and catalogs.

The vocabulary is deliberately small (a few tools, commands and paths, some destructive), so
random events hit random triggers often. Every behavior document is valid: it loads through
the same validation as a behavior file.

>>> from hypothesis import given, settings
>>> @settings(max_examples=10)
... @given(catalogs(), claude_code_events())
... def test_never_raises(catalog, event):
...     import forge_policy as fp
...     fp.Evaluator(catalog, clock=lambda: 1e9).evaluate(event)
>>> test_never_raises()
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from forge_policy.levels import Level
from forge_policy.testing.events import claude_code_event, claude_code_prompt

if TYPE_CHECKING:
    from forge_policy.catalog.behavior import Behavior
    from forge_policy.catalog.catalog import Catalog
    from forge_policy.model import Event

TOOLS = ("Bash", "Read", "Write", "Edit", "Grep", "Glob")
COMMANDS = ("ls", "git status", "git push --force", "rm -rf build", "make test", "curl x.io")
PATHS = ("/home/user/project/src/app.py", "/home/user/project/.env", "/tmp/notes.md")
PATTERNS = ("TODO", "def main", "password")
PROMPTS = ("fix the bug", "run the tests", "delete everything")
SESSIONS = ("s1", "s2")
#: a condition per field the events fill, with values that sometimes match
_CONDITIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("tool_input.command", "contains", ("rm", "git", "push")),
    ("tool_input.command", "regex_match", ("^git ", "--force", "^rm ")),
    ("tool_input.file_path", "contains", (".env", "/src/")),
    ("tool_input.pattern", "equals", PATTERNS),
    ("prompt", "contains", ("delete", "tests")),
    ("tool_name", "equals", TOOLS),
)
_MATCHERS = ("*", "Bash", "Read|Write", "Write|Edit", "Grep,Glob", "^B")


def _tool_input(tool: str) -> st.SearchStrategy[dict[str, str]]:
    if tool == "Bash":
        return st.fixed_dictionaries({"command": st.sampled_from(COMMANDS)})
    if tool in ("Grep", "Glob"):
        return st.fixed_dictionaries({"pattern": st.sampled_from(PATTERNS)})
    content = {"content": st.sampled_from(("x = 1\n", "API_KEY=changeme\n"))}
    extra = content if tool in ("Write", "Edit") else {}
    return st.fixed_dictionaries({"file_path": st.sampled_from(PATHS), **extra})


@st.composite
def claude_code_events(
    draw: st.DrawFn,
    *,
    tools: tuple[str, ...] = TOOLS,
    sessions: tuple[str, ...] = SESSIONS,
    prompts: bool = True,
) -> Event:
    """Claude Code events (``PreToolUse`` of ``tools``; ``UserPromptSubmit`` too unless
    ``prompts=False``), built by :func:`~forge_policy.testing.claude_code_event` from valid
    payloads."""
    session = draw(st.sampled_from(sessions))
    if prompts and draw(st.integers(0, 5)) == 0:
        return claude_code_prompt(draw(st.sampled_from(PROMPTS)), session_id=session)
    tool = draw(st.sampled_from(tools))
    return claude_code_event(tool, session_id=session, **draw(_tool_input(tool)))


#: The pre-tool and prompt events of each other coding-agent CLI, by its own names.
_HARNESS_EVENTS = {
    "codex": ("PreToolUse", "UserPromptSubmit"),
    "gemini": ("BeforeTool", "BeforeAgent"),
    "cursor": ("preToolUse", "beforeSubmitPrompt"),
    "copilot": ("preToolUse", "userPromptSubmitted"),
    "antigravity": ("PreToolUse", ""),
}


@st.composite
def harness_payloads(
    draw: st.DrawFn, harness: str, *, sessions: tuple[str, ...] = SESSIONS, prompts: bool = True
) -> tuple[str, dict[str, Any], str, dict[str, Any]]:
    """``(event, payload, catalog tool, catalog tool_input)``: a valid pre-tool (or prompt)
    payload of ``harness`` in its own shape and names (:mod:`forge_policy.testing.harnesses`),
    with the call it stands for in the catalog's vocabulary (``("", {})`` for a prompt, whose
    text is then ``tool_input["prompt"]``)."""
    from forge_policy.testing import harnesses

    pre, prompt_event = _HARNESS_EVENTS[harness]
    session = draw(st.sampled_from(sessions))
    build = getattr(harnesses, f"{harness}_payload")
    if prompts and prompt_event and draw(st.integers(0, 5)) == 0:
        text = draw(st.sampled_from(PROMPTS))
        return (
            prompt_event,
            build(event=prompt_event, session_id=session, prompt=text),
            "",
            {"prompt": text},
        )
    tool = draw(st.sampled_from(sorted(harnesses.NATIVE[harness])))
    tool_input = draw(_tool_input(tool))
    if tool == "Edit":
        tool_input = {**tool_input, "old_string": "a", "new_string": "b"}
        tool_input.pop("content", None)
    name, args = harnesses.native_call(harness, tool, tool_input)
    if harness == "antigravity":
        return pre, build(name, session_id=session, **args), tool, tool_input
    return pre, build(name, event=pre, session_id=session, **args), tool, tool_input


@st.composite
def harness_events(draw: st.DrawFn, /, harness: str, **kwargs: Any) -> Event:
    """Events of ``harness`` built by its adapter from :func:`harness_payloads`."""
    from forge_policy.harness.registry import get

    event, payload, _, _ = draw(harness_payloads(harness, **kwargs))
    return get(harness).adapter.to_event(payload, event)


@st.composite
def escalations(draw: st.DrawFn, default: Level) -> list[dict[str, object]]:
    """A valid ``escalation`` list: ``after`` strictly increasing from 1, levels
    non-decreasing and never below ``default``."""
    size = draw(st.integers(0, 3))
    afters = sorted(draw(st.sets(st.integers(1, 8), min_size=size, max_size=size)))
    above = [level for level in Level if level >= default]
    levels = sorted(draw(st.lists(st.sampled_from(above), min_size=size, max_size=size)))
    return [{"after": a, "level": lv.label} for a, lv in zip(afters, levels, strict=True)]


@st.composite
def _trigger(draw: st.DrawFn) -> dict[str, object]:
    event = draw(st.sampled_from(("PreToolUse", "PreToolUse", "PreToolUse", "UserPromptSubmit")))
    trigger: dict[str, object] = {"event": event}
    if event == "PreToolUse":
        trigger["matcher"] = draw(st.sampled_from(_MATCHERS))
    conditions = []
    for _ in range(draw(st.integers(0, 2))):
        field, operator, values = draw(st.sampled_from(_CONDITIONS))
        conditions.append(
            {"field": field, "operator": operator, "value": draw(st.sampled_from(values))}
        )
    if conditions:
        trigger["conditions"] = conditions
        trigger["logic"] = draw(st.sampled_from(("all", "any")))
    return trigger


_IDS = st.from_regex(r"[a-z][a-z0-9]{1,6}(-[a-z0-9]{1,6})?", fullmatch=True)


@st.composite
def behavior_documents(draw: st.DrawFn, behavior_id: str | None = None) -> dict[str, Any]:
    """A valid behavior file (schema v1) as a dict: ``forge_catalog(doc)`` loads it, and so
    does :func:`~forge_policy.load_catalog` once it is written as YAML or JSON."""
    bid = behavior_id or draw(_IDS)
    default = draw(st.sampled_from((Level.SOFT_BLOCK, *Level)))
    enforcement: dict[str, object] = {
        "default_level": default.label,
        "escalation": draw(escalations(default)),
        "mode": draw(st.sampled_from(("enforce", "enforce", "shadow"))),
    }
    return {
        "schema_version": "1",
        "id": bid,
        "name": f"Rule {bid}",
        "description": f"generated behavior {bid}",
        "category": "core",
        "scope": "session",
        "policy": {
            "triggers": draw(st.lists(_trigger(), min_size=1, max_size=3)),
            "enforcement": enforcement,
            "recovery": {"hint": f"fix {bid} first"},
        },
    }


def compile_document(document: dict[str, Any]) -> Behavior:
    """The :class:`~forge_policy.Behavior` of a behavior document, validated as the loader
    validates a file (raises :class:`~forge_policy.CatalogError` naming the field)."""
    from forge_policy.catalog.behavior import Behavior
    from forge_policy.catalog.structuring import validate_behavior
    from forge_policy.errors import CatalogError

    source = f"<generated {document.get('id')}>"
    spec, issues = validate_behavior(document, source)
    if spec is None:
        raise CatalogError(issues)
    return Behavior(spec)


def behaviors(behavior_id: str | None = None) -> st.SearchStrategy[Behavior]:
    """Compiled behaviors (see :func:`behavior_documents`)."""
    return behavior_documents(behavior_id).map(compile_document)


@st.composite
def catalogs(draw: st.DrawFn, *, min_size: int = 1, max_size: int = 4) -> Catalog:
    """Catalogs of ``min_size`` to ``max_size`` generated behaviors with distinct ids."""
    from forge_policy.catalog.catalog import Catalog

    ids = draw(st.lists(_IDS, min_size=min_size, max_size=max_size, unique=True))
    return Catalog([draw(behaviors(bid)) for bid in ids])
