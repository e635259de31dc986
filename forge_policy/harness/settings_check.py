"""A harness settings file judged as the harness would read it: what a Write, Edit or MultiEdit
of one changes in what governs the agent (protect-governance, SPEC §7).

:func:`changes` takes the call, applies it to the current file and returns, one string each,
what the result changes: empty when the harness would read the new file exactly as it enforces
the old one. Three questions, in order:

1. **Would the harness read the file at all?** Parsed as the harness parses it, not as Python's
   ``json`` does: JavaScript's ``JSON.parse`` (Claude Code, Cursor, Copilot CLI, Antigravity),
   the same after ``strip-json-comments`` (Gemini CLI, ``packages/cli/src/config/settings.ts``),
   ``serde_json``/TOML 1.0 (Codex). ``NaN``, ``Infinity``, trailing commas, comments (except for
   Gemini CLI), a byte order mark, control characters in strings: rejected, and a rejected file
   loads no hooks at all (``tests/real_clients/test_claude_code_hazards.py``), so the write is a
   change. ``JSON.parse`` keeps the last of two equal keys; other readers of the same file (Copilot
   CLI and Cursor read ``.claude/settings.json``; Rust's ``serde`` refuses duplicate fields) need
   not, so a duplicate key counts as a rejection too.
2. **Does it still match the harness's own schema?** The published JSON Schema where there is one,
   vendored in ``forge_policy/harness/schemas`` with its commit and licence (``SOURCES.md``):
   SchemaStore's ``claude-code-settings.json`` and ``codex-hooks.json``, gemini-cli's
   ``schemas/settings.schema.json``; a small hand schema from the documented shape for Cursor's
   ``hooks.json``, Copilot CLI's hook and settings files and Antigravity's ``hooks.json``
   (the harnesses' docs, as :mod:`forge_policy.ops.harness_config` cites them).
   Claude Code rejects a file of a wrong type (``"permissions": 5``); a schema violation the
   current file did not already have is a change (a file already off-schema stays editable).
   Where a schema is stricter than its harness (SchemaStore's hook handlers take no unknown
   key; Claude Code drops one; Gemini CLI only warns about a file off its schema), the schema
   decides: fail closed, and such an edit changes ``hooks`` anyway.
   SchemaStore's schema does not know a handler's ``onFailure`` (Claude Code 2.1.295, written by
   ``init``): it is added when the schema loads (:data:`_ON_FAILURE`); so is the top-level
   ``description`` Codex documents for ``hooks.json``, unknown to SchemaStore's
   ``codex-hooks.json``. The validator is :class:`_Validator`, the subset of JSON Schema the
   vendored schemas use (importing ``jsonschema`` would cost the hook ~110 ms; the tests check
   the two agree).
3. **Does it change a key that decides enforcement?** Every top-level key is compared, added,
   removed or altered, except the harmless ones of :data:`HARMLESS`: display and model choices
   that run nothing and allow nothing. Everything else is enforcement, named in the result by its
   path (``permissions.defaultMode``, ``env.PYTHONPATH``, ``hooks.PreToolUse``):

   ======================================  ====================================================
   key (Claude Code)                       why it is governance
   ======================================  ====================================================
   ``permissions`` (``defaultMode``,       what runs without asking; ``bypassPermissions`` turns
   ``allow``, ``ask``, ``additional…``)    the user's asks into allows. Only adding ``deny``
                                           rules passes: it can only refuse more.
   ``env``                                 every variable (``PYTHONPATH``, ``FORGE_*``,
                                           ``BASH_ENV``…) reaches the hook and the agent's shell
   ``hooks`` (any event, any entry)        a hook is a command the harness runs unchecked; one
                                           that answers ``allow`` may pre-approve calls
   ``disableAllHooks``,                    switch hooks off or keep only others
   ``allowManagedHooksOnly``
   ``sandbox`` (``enabled``,               the floor under the hook (SPEC §13) that ``init``
   ``failIfUnavailable``, ``allow…``,      writes: any change to it, stricter or weaker, is
   ``excludedCommands``, ``filesystem``)   governance (``sandbox.enabled``, ``sandbox.filesystem``)
   ``statusLine``, ``subagentStatusLine``, commands the harness runs outside any hook
   ``fileSuggestion``, ``apiKeyHelper``,
   ``awsAuthRefresh``, ``otelHeadersHelper``…
   ``enableAllProjectMcpServers``,         MCP servers are programs started outside the hook;
   ``enabledMcpjsonServers``,              plugins bring hooks and servers
   ``enabledPlugins``, marketplaces
   any key not in :data:`HARMLESS`         unknown: fail closed
   ======================================  ====================================================

   ==============  ===============================================================================
   harness         harmless top-level keys (:data:`HARMLESS`)
   ==============  ===============================================================================
   Claude Code     ``$schema``, ``model``, ``effortLevel``, ``alwaysThinkingEnabled``,
                   ``outputStyle``, ``theme``, ``language``, ``verbose``, ``viewMode``, ``tui``,
                   ``editorMode``, spinner and motion settings, ``showTurnDuration``,
                   ``includeCoAuthoredBy``, ``attribution``
   Gemini CLI      ``$schema``, ``ui``, ``model``, ``output``
   Codex           ``description`` (``hooks.json``); ``model``, ``model_reasoning_effort``,
                   ``model_reasoning_summary``, ``model_verbosity``, ``file_opener``, ``tui``,
                   ``hide_agent_reasoning`` (``config.toml``)
   Copilot CLI     ``$schema``, ``model``, ``theme`` (``.github/copilot/settings.json``)
   others          ``$schema``
   ==============  ===============================================================================

Fails closed: a current file that cannot be read or is over :data:`MAX_BYTES`, a result over
it, an Edit whose ``old_string`` is not in the file (the harness would fail it, but a parallel
call could have changed the file first) or is empty on a non-empty file, a schema that does not
load, a tool other than Write/Edit/MultiEdit: each is a change, with its reason.

>>> changes("/p/.claude/settings.json", "Write", {"content": '{"model": "opus"}'}, current="{}")
[]
>>> changes("/p/.claude/settings.json", "Write", {"content": '{"x": NaN}'}, current="{}")
['rejected by Claude Code: NaN is not JSON']
>>> changes("/p/.claude/settings.json", "Edit", {"old_string": '"model": "opus"',
...         "new_string": '"permissions": {"defaultMode": "bypassPermissions"}'},
...         current='{"model": "opus"}')
['permissions.defaultMode']
"""

from __future__ import annotations

import json
import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    #: A keyword's check: (validator, value, the keyword's value, the schema, where, errors).
    _Rule = Callable[["_Validator", object, object, dict[str, object], str, list[str]], None]

#: The largest settings file read or judged (a bigger one is a change).
MAX_BYTES = 1 << 20
#: At most this many reasons are returned (then ``"…"``).
MAX_REASONS = 12

_HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemas")

_CLAUDE_HARMLESS = frozenset(
    {"$schema", "model", "effortLevel", "alwaysThinkingEnabled", "outputStyle", "theme",
     "language", "verbose", "viewMode", "tui", "editorMode", "spinnerTipsEnabled", "spinnerVerbs",
     "spinnerTipsOverride", "prefersReducedMotion", "terminalProgressBarEnabled",
     "syntaxHighlightingDisabled", "autoScrollEnabled", "showTurnDuration",
     "showThinkingSummaries", "includeCoAuthoredBy", "attribution"}
)  # fmt: skip

#: Per harness file kind: the top-level keys whose change leaves enforcement as it is.
HARMLESS: dict[str, frozenset[str]] = {
    "claude-code": _CLAUDE_HARMLESS,
    "codex-hooks": frozenset({"$schema", "description"}),
    "codex-config": frozenset(
        {
            "model",
            "model_reasoning_effort",
            "model_reasoning_summary",
            "model_verbosity",
            "file_opener",
            "tui",
            "hide_agent_reasoning",
        }
    ),
    "gemini": frozenset({"$schema", "ui", "model", "output"}),
    "cursor": frozenset({"$schema"}),
    "copilot-hooks": frozenset({"$schema"}),
    "copilot-settings": frozenset({"$schema", "model", "theme"}),
    "antigravity": frozenset({"$schema"}),
}

_TITLES = {
    "claude-code": "Claude Code",
    "codex-hooks": "Codex",
    "codex-config": "Codex",
    "gemini": "Gemini CLI",
    "cursor": "Cursor",
    "copilot-hooks": "Copilot CLI",
    "copilot-settings": "Copilot CLI",
    "antigravity": "Antigravity",
}

#: File (relative to a project or the home folder) → kind.
_FILES = {
    ".claude/settings.json": "claude-code",
    ".claude/settings.local.json": "claude-code",
    ".codex/hooks.json": "codex-hooks",
    ".codex/config.toml": "codex-config",
    ".gemini/settings.json": "gemini",
    ".cursor/hooks.json": "cursor",
    ".github/copilot/settings.json": "copilot-settings",
    ".github/copilot/settings.local.json": "copilot-settings",
    ".agents/hooks.json": "antigravity",
}

# --- hand schemas (documented shapes: harness-protocols.md §3, ops.harness_config) -------------

_CURSOR_EVENTS = [
    "sessionStart", "sessionEnd", "preToolUse", "postToolUse", "postToolUseFailure",
    "subagentStart", "subagentStop", "beforeShellExecution", "afterShellExecution",
    "beforeMCPExecution", "afterMCPExecution", "beforeReadFile", "afterFileEdit",
    "beforeSubmitPrompt", "preCompact", "stop", "afterAgentResponse", "afterAgentThought",
    "beforeTabFileRead", "afterTabFileEdit", "workspaceOpen",
]  # fmt: skip
_HAND_SCHEMAS: dict[str, dict[str, object]] = {
    # cursor.com/docs/agent/hooks (mid-2026): version 1, hooks.<event>[] of script options
    "cursor": {
        "type": "object",
        "properties": {
            "version": {"type": "integer"},
            "hooks": {
                "type": "object",
                "propertyNames": {"enum": _CURSOR_EVENTS},
                "additionalProperties": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "command": {"type": "string"},
                            "type": {"enum": ["command", "prompt"]},
                            "prompt": {"type": "string"},
                            "model": {"type": "string"},
                            "timeout": {"type": "number", "exclusiveMinimum": 0},
                            "loop_limit": {"type": ["integer", "null"]},
                            "failClosed": {"type": "boolean"},
                            "matcher": {"type": "string"},
                        },
                    },
                },
            },
        },
    },
    # GitHub Copilot CLI hooks (.github/hooks/*.json): version 1, hooks.<event>[] of commands
    "copilot-hooks": {
        "type": "object",
        "properties": {
            "version": {"type": "integer"},
            "hooks": {
                "type": "object",
                "additionalProperties": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "type": {"const": "command"},
                            "bash": {"type": "string"},
                            "powershell": {"type": "string"},
                            "cwd": {"type": "string"},
                            "timeoutSec": {"type": "number", "exclusiveMinimum": 0},
                            "env": {"type": "object", "additionalProperties": {"type": "string"}},
                            "comment": {"type": "string"},
                        },
                    },
                },
            },
        },
    },
    "copilot-settings": {
        "type": "object",
        "properties": {"disableAllHooks": {"type": "boolean"}},
    },
    # Antigravity: named hooks, each an object (events nested with a matcher, or flat)
    "antigravity": {
        "type": "object",
        "properties": {"$schema": {"type": "string"}},
        "additionalProperties": {"type": "object"},
    },
}
_SCHEMA_FILES = {
    "claude-code": "claude-code-settings.json",
    "codex-hooks": "codex-hooks.json",
    "gemini": "gemini-cli-settings.schema.json",
}
#: Claude Code 2.1.295's ``onFailure`` (https://github.com/anthropics/claude-code/releases/tag/
#: v2.1.295), unknown to SchemaStore's schema of 2026-08-03: added to these handler types.
_ON_FAILURE = {"type": "string", "enum": ["continue", "block"]}
_ON_FAILURE_TYPES = frozenset({"command", "http", "mcp_tool"})


class SettingsRejected(ValueError):
    """The harness would not read the file (the message says why)."""


class SchemaError(Exception):
    """A schema uses a keyword :class:`_Validator` does not implement (fail closed)."""


def kind_of(path: str) -> str | None:
    """The kind of harness file ``path`` is (``claude-code``, ``gemini``, …), None for a file
    this module does not know (the caller treats any write of it as a change).

    >>> kind_of("/home/u/.claude/settings.local.json"), kind_of("/p/.cursor/hooks.json")
    ('claude-code', 'cursor')
    >>> kind_of("/p/.github/hooks/forge-policy.json"), kind_of("/p/README.md")
    ('copilot-hooks', None)
    """
    normal = path.replace(os.sep, "/")
    for rel, kind in _FILES.items():
        if normal.endswith("/" + rel) or normal == rel:
            return kind
    folder, _, name = normal.rpartition("/")
    if name.endswith(".json") and (folder.endswith("/.github/hooks") or folder == ".github/hooks"):
        return "copilot-hooks"
    return None


# --- the judgement ------------------------------------------------------------------------------


def changes(
    path: str,
    tool: str,
    tool_input: Mapping[str, object],
    *,
    current: str | bool | None = True,
) -> list[str]:
    """What a Write/Edit/MultiEdit of the harness file ``path`` changes in governance (module
    doc); empty when nothing. ``current``: the file's text (None: it does not exist); by default
    read from ``path``."""
    if tool not in ("Write", "Edit", "MultiEdit"):
        return [f"written by {tool}"]
    kind = kind_of(path)
    if kind is None:
        return ["not a known harness file"]
    if current is True:
        try:
            current = _read(path)
        except OSError as error:
            return [f"the current file cannot be read ({type(error).__name__})"]
        if current is False:
            return [f"the current file is over {MAX_BYTES} bytes"]
    text = current if isinstance(current, str) else None
    new = _new_content(text, tool, tool_input)
    if not isinstance(new, str) or new.startswith("!"):
        return [new[1:] if isinstance(new, str) else "the edit cannot be applied"]
    if len(new.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        return [f"the new file is over {MAX_BYTES} bytes"]
    title = _TITLES[kind]
    try:
        after = parse(new, kind)
    except SettingsRejected as why:
        return [f"rejected by {title}: {why}"]
    try:
        before = parse(text, kind) if text is not None else {}
        before_ok = True
    except SettingsRejected:
        before, before_ok = {}, False  # the harness reads nothing of it today
    found: list[str] = []
    try:
        validator = _validator(kind)
        if validator is not None:
            new_errors = validator.errors(after)
            if new_errors and before_ok and text is not None:
                new_errors = [e for e in new_errors if e not in set(validator.errors(before))]
            found += [
                f"rejected by {title}'s schema at {where or '(root)'}" for where in new_errors
            ]
    except (SchemaError, OSError, ValueError, RecursionError) as error:
        return [f"{title}'s schema cannot be checked ({error})"]
    found += _key_changes(before, after, HARMLESS[kind])
    if len(found) > MAX_REASONS:
        found = [*found[:MAX_REASONS], "…"]
    return found


def _read(path: str) -> str | bool | None:
    """The file's text; None when it does not exist, False when it is over :data:`MAX_BYTES`."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    if len(data) > MAX_BYTES:
        return False
    return data.decode("utf-8", "replace")


def _new_content(current: str | None, tool: str, tool_input: Mapping[str, object]) -> str:
    """The file after the call; a reason starting with ``!`` when it cannot be told."""
    if tool == "Write":
        content = tool_input.get("content")
        return content if isinstance(content, str) else "!the Write has no text content"
    edits = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
    if not isinstance(edits, list) or not edits:
        return "!the edit cannot be read"
    text = current or ""
    for edit in edits:
        if not isinstance(edit, dict):
            return "!the edit cannot be read"
        old, new = edit.get("old_string"), edit.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            return "!the edit cannot be read"
        if old == "":
            if text:
                return "!an empty old_string on a file that is not empty"
            text = new
        elif old in text:
            text = text.replace(old, new) if _every(edit) else text.replace(old, new, 1)
        else:
            return "!old_string is not in the file (fail closed: the file may change first)"
    return text


def _every(edit: Mapping[str, object]) -> bool:
    """Whether an edit replaces every occurrence: Claude Code's ``replace_all``, Gemini CLI's
    ``replace`` with ``allow_multiple`` or ``expected_replacements`` above 1."""
    count = edit.get("expected_replacements")
    return (
        edit.get("replace_all") is True
        or edit.get("allow_multiple") is True
        or (isinstance(count, int) and count > 1)
    )


def parse(text: str, kind: str) -> object:
    """The file's data as the harness of ``kind`` reads it; :class:`SettingsRejected` when it
    would not read it.

    >>> parse('{"a": 1, "a": 2}', "claude-code")
    Traceback (most recent call last):
    ...
    forge_policy.harness.settings_check.SettingsRejected: duplicate key 'a'
    >>> parse('{"a": 1 /* one */}', "gemini")
    {'a': 1}
    """
    if kind == "codex-config":
        import tomllib

        try:
            return tomllib.loads(text)
        except (tomllib.TOMLDecodeError, RecursionError) as error:
            raise SettingsRejected(f"not TOML ({error})") from None
    if text.startswith("\ufeff"):
        raise SettingsRejected("a byte order mark before the JSON")
    if kind == "gemini":
        text = _strip_comments(text)
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except SettingsRejected:
        raise
    except RecursionError:
        raise SettingsRejected("nested too deeply") from None
    except ValueError as error:  # JSONDecodeError
        raise SettingsRejected(f"not JSON ({error})") from None


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    data = dict(pairs)
    if len(data) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise SettingsRejected(f"duplicate key {key!r}")
            seen.add(key)
    return data


def _no_constant(name: str) -> object:
    raise SettingsRejected(f"{name} is not JSON")


def _strip_comments(text: str) -> str:
    """``strip-json-comments`` (Gemini CLI's reader): ``//`` and ``/* */`` comments outside
    strings become spaces (line breaks kept); an unclosed block comment is rejected."""
    out: list[str] = []
    i, n, start = 0, len(text), 0
    in_string = False
    while i < n:
        char = text[i]
        if in_string:
            if char == "\\":
                i += 2
                continue
            if char == '"':
                in_string = False
            i += 1
        elif char == '"':
            in_string = True
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out += [text[start:i], " " * (end - i)]
            i = start = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise SettingsRejected("an unclosed /* comment")
            comment = text[i : end + 2]
            out += [text[start:i], re.sub(r"[^\n]", " ", comment)]
            i = start = end + 2
        else:
            i += 1
    out.append(text[start:])
    return "".join(out)


def _key_changes(before: object, after: object, harmless: frozenset[str]) -> list[str]:
    """Top-level keys (one level deeper where both sides are objects) that differ, outside
    ``harmless``; only additions of ``permissions.deny`` rules pass."""
    old = before if isinstance(before, dict) else {}
    new = after if isinstance(after, dict) else {}
    found: list[str] = []
    for key in dict.fromkeys([*old, *new]):
        if key in harmless or _same(old.get(key, _MISSING), new.get(key, _MISSING)):
            continue
        a, b = old.get(key, {}), new.get(key, {})
        if isinstance(a, dict) and isinstance(b, dict):
            for sub in dict.fromkeys([*a, *b]):
                x, y = a.get(sub, _MISSING), b.get(sub, _MISSING)
                if _same(x, y) or (key == "permissions" and sub == "deny" and _only_added(x, y)):
                    continue
                found.append(f"{key}.{sub}")
        else:
            found.append(str(key))
    return found


_MISSING = object()


def _only_added(before: object, after: object) -> bool:
    """Whether the list ``after`` holds every rule of ``before`` (missing: none)."""
    if before is _MISSING:
        before = []
    if not isinstance(before, list) or not isinstance(after, list):
        return False
    have = {_canon(item) for item in after}
    return all(_canon(item) in have for item in before)


def _same(a: object, b: object) -> bool:
    return (a is _MISSING) == (b is _MISSING) and (a is _MISSING or _canon(a) == _canon(b))


def _canon(value: object) -> object:
    """A hashable form under JSON equality (``1 == 1.0``, ``true != 1``, key order ignored)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if isinstance(value, int | float):
        return ("number", float(value) if isinstance(value, int) and abs(value) < 2**53 else value)
    if isinstance(value, list):
        return ("array", tuple(_canon(item) for item in value))
    if isinstance(value, dict):
        return ("object", frozenset((str(k), _canon(v)) for k, v in value.items()))
    return ("other", repr(value))


# --- the schemas and their validator -----------------------------------------------------------

_validators: dict[str, _Validator | None] = {}


def _validator(kind: str) -> _Validator | None:
    """The validator of ``kind``'s schema (loaded once per process)."""
    if kind not in _validators:
        schema = load_schema(kind)
        _validators[kind] = None if schema is None else _Validator(schema)
    return _validators[kind]


def load_schema(kind: str) -> dict[str, object] | None:
    """``kind``'s schema: the vendored file (with :data:`_ON_FAILURE` added to Claude Code's),
    the hand schema, or None (Codex's ``config.toml``: TOML, no published schema)."""
    if kind in _HAND_SCHEMAS:
        return _HAND_SCHEMAS[kind]
    name = _SCHEMA_FILES.get(kind)
    if name is None:
        return None
    with open(os.path.join(_HERE, name), encoding="utf-8") as handle:
        schema: dict[str, object] = json.load(handle)
    if kind == "claude-code":
        _add_on_failure(schema)
    elif kind == "codex-hooks":  # documented (developers.openai.com/codex/hooks), not in the schema
        props = schema.get("properties")
        if isinstance(props, dict):
            props.setdefault("description", {"type": "string"})
    return schema


def _add_on_failure(schema: dict[str, object]) -> None:
    defs = schema.get("$defs")
    handler = defs.get("hookCommand") if isinstance(defs, dict) else None
    options = handler.get("anyOf") if isinstance(handler, dict) else None
    for option in options if isinstance(options, list) else ():
        props = option.get("properties", {}) if isinstance(option, dict) else {}
        kind = props.get("type", {}).get("const") if isinstance(props, dict) else None
        if kind in _ON_FAILURE_TYPES:
            props.setdefault("onFailure", dict(_ON_FAILURE))


#: Keywords that only annotate (ignored, as JSON Schema says ``format`` may be).
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "$defs", "definitions", "title", "description",
     "markdownDescription", "default", "examples", "format", "deprecated", "readOnly",
     "writeOnly", "allowTrailingCommas", "ref"}
)  # fmt: skip
# ("ref": a stray keyword of gemini-cli's generated schema, $defs.ModelPolicyChain.items; JSON
# Schema ignores unknown keywords, this validator only those named here)
_TYPES: dict[str, Callable[[object], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
}


class _Validator:
    """The part of JSON Schema (draft-07 and 2020-12) the vendored schemas use: ``$ref`` (local),
    ``type``, ``enum``, ``const``, ``properties``, ``patternProperties``,
    ``additionalProperties``, ``required``, ``propertyNames``, ``min/maxProperties``, ``items``,
    ``min/maxItems``, ``uniqueItems``, ``min/maxLength``, ``pattern``, ``minimum``, ``maximum``,
    ``exclusiveMinimum/Maximum``, ``anyOf``, ``oneOf``, ``allOf``, ``not``. Any other validation
    keyword raises :class:`SchemaError`. :meth:`errors` lists where the value fails, as dotted
    paths."""

    def __init__(self, schema: dict[str, object]) -> None:
        self.root = schema
        self._patterns: dict[str, re.Pattern[str]] = {}

    def errors(self, value: object) -> list[str]:
        found: list[str] = []
        self._check(value, self.root, "", found)
        return list(dict.fromkeys(found))

    def valid(self, value: object, schema: object) -> bool:
        found: list[str] = []
        self._check(value, schema, "", found)
        return not found

    def _resolve(self, ref: str) -> object:
        if not ref.startswith("#"):
            raise SchemaError(f"a remote $ref {ref!r}")
        node: object = self.root
        for part in ref[1:].split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                raise SchemaError(f"an unresolvable $ref {ref!r}")
            node = node[part]
        return node

    def _check(self, value: object, schema: object, where: str, found: list[str]) -> None:
        if schema is True:
            return
        if schema is False:
            found.append(where)
            return
        if not isinstance(schema, dict):
            raise SchemaError(f"a schema that is not an object at {where or '(root)'}")
        for keyword, rule in schema.items():
            if keyword in _ANNOTATIONS:
                continue
            check = _KEYWORDS.get(keyword)
            if check is None:
                raise SchemaError(f"the keyword {keyword!r}")
            check(self, value, rule, schema, where, found)

    def _pattern(self, pattern: str) -> re.Pattern[str]:
        compiled = self._patterns.get(pattern)
        if compiled is None:
            compiled = self._patterns[pattern] = re.compile(pattern)
        return compiled


def _k_ref(
    v: _Validator, value: object, rule: object, _s: object, where: str, out: list[str]
) -> None:
    v._check(value, v._resolve(str(rule)), where, out)


def _k_type(
    v: _Validator, value: object, rule: object, _s: object, where: str, out: list[str]
) -> None:
    names = rule if isinstance(rule, list) else [rule]
    for name in names:
        test = _TYPES.get(str(name))
        if test is None:
            raise SchemaError(f"the type {name!r}")
        if test(value):
            return
    out.append(where)


def _k_enum(
    v: _Validator, value: object, rule: object, _s: object, where: str, out: list[str]
) -> None:
    if _canon(value) not in {_canon(item) for item in _list(rule)}:
        out.append(where)


def _k_const(
    v: _Validator, value: object, rule: object, _s: object, where: str, out: list[str]
) -> None:
    if _canon(value) != _canon(rule):
        out.append(where)


def _join(where: str, key: object) -> str:
    return f"{where}.{key}" if where else str(key)


def _k_properties(
    v: _Validator, value: object, rule: object, _s: object, where: str, out: list[str]
) -> None:
    if isinstance(value, dict) and isinstance(rule, dict):
        for key, sub in rule.items():
            if key in value:
                v._check(value[key], sub, _join(where, key), out)


def _k_pattern_properties(
    v: _Validator, value: object, rule: object, _s: object, where: str, out: list[str]
) -> None:
    if isinstance(value, dict) and isinstance(rule, dict):
        for pattern, sub in rule.items():
            for key, item in value.items():
                if v._pattern(pattern).search(key):
                    v._check(item, sub, _join(where, key), out)


def _k_additional(
    v: _Validator,
    value: object,
    rule: object,
    schema: dict[str, object],
    where: str,
    out: list[str],
) -> None:
    if not isinstance(value, dict):
        return
    known = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    for key, item in value.items():
        if isinstance(known, dict) and key in known:
            continue
        if isinstance(patterns, dict) and any(v._pattern(p).search(key) for p in patterns):
            continue
        v._check(item, rule, _join(where, key), out)


def _k_required(
    v: _Validator, value: object, rule: object, _s: object, where: str, out: list[str]
) -> None:
    if isinstance(value, dict):
        for key in _list(rule):
            if key not in value:
                out.append(_join(where, key))


def _k_property_names(
    v: _Validator, value: object, rule: object, _s: object, where: str, out: list[str]
) -> None:
    if isinstance(value, dict):
        for key in value:
            v._check(key, rule, _join(where, key), out)


def _k_items(
    v: _Validator, value: object, rule: object, _s: object, where: str, out: list[str]
) -> None:
    if not isinstance(value, list):
        return
    if isinstance(rule, list):
        raise SchemaError("tuple items")
    for i, item in enumerate(value):
        v._check(item, rule, f"{where}[{i}]", out)


def _k_unique(
    v: _Validator, value: object, rule: object, _s: object, where: str, out: list[str]
) -> None:
    if rule is True and isinstance(value, list) and len({_canon(i) for i in value}) != len(value):
        out.append(where)


def _k_pattern(
    v: _Validator, value: object, rule: object, _s: object, where: str, out: list[str]
) -> None:
    if isinstance(value, str) and not v._pattern(str(rule)).search(value):
        out.append(where)


def _k_any_of(
    v: _Validator, value: object, rule: object, _s: object, where: str, out: list[str]
) -> None:
    if not any(v.valid(value, sub) for sub in _list(rule)):
        out.append(where)


def _k_one_of(
    v: _Validator, value: object, rule: object, _s: object, where: str, out: list[str]
) -> None:
    if sum(v.valid(value, sub) for sub in _list(rule)) != 1:
        out.append(where)


def _k_all_of(
    v: _Validator, value: object, rule: object, _s: object, where: str, out: list[str]
) -> None:
    for sub in _list(rule):
        v._check(value, sub, where, out)


def _k_not(
    v: _Validator, value: object, rule: object, _s: object, where: str, out: list[str]
) -> None:
    if v.valid(value, rule):
        out.append(where)


def _list(rule: object) -> list[object]:
    if not isinstance(rule, list):
        raise SchemaError("a list keyword that is not a list")
    return rule


def _bound(kind: tuple[type, ...], test: Callable[[float, float], bool], *, size: bool) -> _Rule:
    """A bound keyword: on numbers (``size`` False) or on the length of a ``kind`` value."""

    def check(
        v: _Validator, value: object, rule: object, _s: object, where: str, out: list[str]
    ) -> None:
        if not isinstance(rule, int | float) or isinstance(rule, bool):
            raise SchemaError(f"a bound that is not a number: {rule!r}")
        if isinstance(value, bool) or not isinstance(value, kind):
            return
        measured = len(value) if size else value  # type: ignore[arg-type]
        if not test(float(measured), float(rule)):  # type: ignore[arg-type]
            out.append(where)

    return check


_KEYWORDS: dict[str, _Rule] = {
    "$ref": _k_ref,
    "type": _k_type,
    "enum": _k_enum,
    "const": _k_const,
    "properties": _k_properties,
    "patternProperties": _k_pattern_properties,
    "additionalProperties": _k_additional,
    "required": _k_required,
    "propertyNames": _k_property_names,
    "items": _k_items,
    "uniqueItems": _k_unique,
    "pattern": _k_pattern,
    "anyOf": _k_any_of,
    "oneOf": _k_one_of,
    "allOf": _k_all_of,
    "not": _k_not,
    "minimum": _bound((int, float), lambda a, b: a >= b, size=False),
    "maximum": _bound((int, float), lambda a, b: a <= b, size=False),
    "exclusiveMinimum": _bound((int, float), lambda a, b: a > b, size=False),
    "exclusiveMaximum": _bound((int, float), lambda a, b: a < b, size=False),
    "minLength": _bound((str,), lambda a, b: a >= b, size=True),
    "maxLength": _bound((str,), lambda a, b: a <= b, size=True),
    "minItems": _bound((list,), lambda a, b: a >= b, size=True),
    "maxItems": _bound((list,), lambda a, b: a <= b, size=True),
    "minProperties": _bound((dict,), lambda a, b: a >= b, size=True),
    "maxProperties": _bound((dict,), lambda a, b: a <= b, size=True),
}
