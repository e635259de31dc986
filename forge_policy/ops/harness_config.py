"""Each harness's own hook file, as ``forge-policy init --harness NAME`` writes it.

The one owner of what every harness's project config looks like: which file
(:attr:`~forge_policy.harness.registry.Harness.config`), which of its events forge-policy
registers, the shape of its hook lists and the keys of one handler. The registry says what a
harness *is* (its events, tools and capabilities); this module says how to install the hook in
it. Checked against each harness's newest public docs (2026):

==============  ================================  ==============================================
harness         file                              shape
==============  ================================  ==============================================
claude-code     ``.claude/settings.json``         ``hooks.<Event>[].hooks[]``: ``type``,
                                                  ``command``, ``args`` (exec form: no shell,
                                                  :data:`~forge_policy.ops.launcher.EXEC_REFS`),
                                                  ``timeout`` (s), ``onFailure``
codex           ``.codex/hooks.json``             the same, no ``args`` (root keys:
                                                  ``description``, ``hooks`` only); ``[hooks]`` in
                                                  ``.codex/config.toml`` is read, not written
gemini          ``.gemini/settings.json``         the same, plus ``name``; ``timeout`` in ms
cursor          ``.cursor/hooks.json``            ``version: 1``, ``hooks.<event>[]``:
                                                  ``command``, ``timeout`` (s), ``failClosed``
copilot         ``.github/hooks/forge-policy.json``  ``version: 1``, ``hooks.<event>[]``:
                                                  ``type``, ``bash``, ``timeoutSec``
antigravity     ``.agents/hooks.json``            one named hook ``forge-policy``: tool events
                                                  nested with a matcher (others would be flat)
opencode        ``.opencode/plugins/              no hook file: forge-policy's plugin
                forge-policy.js``                 (:mod:`forge_policy.ops.opencode_plugin`)
==============  ================================  ==============================================

A hook that cannot start, crashes or times out lets the call through in most harnesses. Two can be
told otherwise per entry (:attr:`HookFile.fail_closed`): Cursor's ``failClosed: true`` on every
event, and Claude Code's ``onFailure: "block"`` (since v2.1.295) on ``PreToolUse`` only, the one
event where a refusal protects anything: the call has not run yet. Elsewhere it would cost the user
without stopping the agent: on ``UserPromptSubmit`` a broken hook would refuse every prompt the
*user* types (the agent does not write those), on ``Stop`` it would keep the agent going, and
``PostToolUse`` and ``SessionStart`` come after the fact. An older Claude Code 2.1 drops the key:
its settings schema strips unknown keys of a hook entry (anthropics/claude-code#88113: they do not
survive its rewrites); an unknown *event name* is what rejected the whole file, before 2.1.101.
Where the payload does not name its event (Copilot CLI's camelCase events,
Antigravity) the command carries ``--event NAME``.

>>> spec("cursor").events
('preToolUse', 'postToolUse', 'sessionStart', 'beforeSubmitPrompt', 'stop')
>>> spec("copilot").handler("forge-policy hook --harness copilot", "agentStop")["bash"]
'forge-policy hook --harness copilot --event agentStop'
"""

from __future__ import annotations

from pathlib import Path

from forge_policy.errors import SetupError
from forge_policy.harness import registry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

#: Seconds the harness waits for the hook (Gemini CLI: in ms): above the largest
#: ``FORGE_HOOK_DEADLINE`` (``config.env.MAX_HOOK_DEADLINE``, 20 s) with margin for an interpreter
#: start on a loaded machine, since a hook the harness times out does not block (SPEC §9).
HOOK_TIMEOUT = 30
#: Harnesses that also run the hooks of ``.claude/settings.json`` (Copilot CLI always, Cursor
#: with its "third-party configs" setting on): with Claude Code set up too, forge-policy would
#: decide, and count, each of their calls twice.
READS_CLAUDE_HOOKS = {"copilot": "", "cursor": " when its third-party hooks setting is on"}
#: The one named hook forge-policy owns in Antigravity's ``hooks.json``.
HOOK_NAME = "forge-policy"
CODEX_TOML = Path(registry.HOOK_SWITCHES["codex"][0])  # [hooks], [features] hooks
_TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})
#: The catalog events the hook is registered for, in the order Claude Code's file lists them.
_CLAUDE_LIKE = ("PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit", "Stop")


class HookFile:
    """How one harness's project hook file is laid out.

    ``events``: the harness events forge-policy registers (the registry's ``install_events``).
    ``nested``: the events whose list holds matcher groups (the others hold handlers);
    ``matcher``: the nested events whose group takes ``matcher: "*"``. ``container``: the key
    path of the event map. ``root``: keys a file must have (set when absent). ``note``: what
    the user still has to do in the harness itself. ``fail_closed``: the handler key and value
    that make a hook failure (cannot start, crash, timeout) block, on ``fail_closed_events``
    (``None``: every event). ``local``: the harness's per-machine, git-ignored settings file
    beside the shared one (Claude Code's ``.claude/settings.local.json``; ``None``: the harness
    has none), where ``init --local`` writes a command that names this machine's paths. A
    plain class (no attrs, TOML or JSON merging imported).
    """

    __slots__ = (
        "command_key",
        "container",
        "extra",
        "fail_closed",
        "fail_closed_events",
        "harness",
        "local",
        "matcher",
        "nested",
        "note",
        "root",
        "timeout",
        "timeout_key",
    )

    def __init__(
        self,
        harness: str,
        *,
        nested: frozenset[str],
        matcher: frozenset[str],
        container: tuple[str, ...] = ("hooks",),
        root: tuple[tuple[str, Any], ...] = (),
        command_key: str = "command",
        timeout_key: str = "timeout",
        timeout: int = HOOK_TIMEOUT,
        extra: tuple[tuple[str, Any], ...] = (),
        fail_closed: tuple[str, Any] | None = None,
        fail_closed_events: frozenset[str] | None = None,
        note: str = "",
        local: str | None = None,
    ) -> None:
        self.harness = harness
        self.nested = nested
        self.matcher = matcher
        self.container = container
        self.root = root
        self.command_key = command_key
        self.timeout_key = timeout_key
        self.timeout = timeout
        self.extra = extra
        self.fail_closed = fail_closed
        self.fail_closed_events = fail_closed_events
        self.note = note
        self.local = None if local is None else Path(local)

    def __repr__(self) -> str:
        return f"<HookFile {self.harness} {self.path}>"

    @property
    def events(self) -> tuple[str, ...]:
        """The harness events the hook is registered for (the registry's ``install_events``),
        in the order of the catalog events they carry (Claude Code's file keeps its order)."""
        h = registry.get(self.harness)
        order = {event: i for i, event in enumerate(_CLAUDE_LIKE)}
        return tuple(
            sorted(h.install_events, key=lambda e: order.get(h.events.get(e, ""), len(order)))
        )

    @property
    def path(self) -> Path:
        """The file, relative to the project."""
        return Path(registry.get(self.harness).config)

    def handler(self, command: str, event: str) -> dict[str, Any]:
        """The handler that runs ``command`` (``--event`` appended where the payload needs
        it) on ``event``."""
        if registry.get(self.harness).event_from_argv:
            command = f"{command} --event {event}"
        out: dict[str, Any] = {"type": "command", self.command_key: command}
        out[self.timeout_key] = self.timeout
        out.update(self.extra)
        out.update(self.closing(event))
        return out

    def closing(self, event: str) -> dict[str, Any]:
        """The handler key that makes a failure of the hook on ``event`` block (``{}``: none).

        >>> spec("claude-code").closing("PreToolUse"), spec("claude-code").closing("Stop")
        ({'onFailure': 'block'}, {})
        """
        if self.fail_closed is None:
            return {}
        if self.fail_closed_events is not None and event not in self.fail_closed_events:
            return {}
        key, value = self.fail_closed
        return {key: value}


SPECS: dict[str, HookFile] = {
    s.harness: s
    for s in (
        HookFile(
            "claude-code",
            nested=frozenset(_CLAUDE_LIKE),
            matcher=frozenset({*_TOOL_EVENTS, "SessionStart"}),
            fail_closed=("onFailure", "block"),
            fail_closed_events=frozenset({"PreToolUse"}),
            local=".claude/settings.local.json",
        ),
        HookFile(
            "codex",
            nested=frozenset(_CLAUDE_LIKE),
            matcher=frozenset({*_TOOL_EVENTS, "SessionStart"}),
            note="Codex runs project hooks once the project is trusted and the hook is "
            "reviewed and trusted in /hooks (its hash is pinned: re-run after an upgrade)",
        ),
        HookFile(
            "gemini",
            nested=frozenset(
                {"BeforeTool", "AfterTool", "SessionStart", "BeforeAgent", "AfterAgent"}
            ),
            matcher=frozenset({"BeforeTool", "AfterTool"}),
            timeout=HOOK_TIMEOUT * 1000,  # milliseconds
            extra=(("name", HOOK_NAME),),
            note="Gemini CLI fingerprints project hooks: it asks once before running a new "
            "or changed one",
        ),
        HookFile(
            "cursor",
            nested=frozenset(),
            matcher=frozenset(),
            root=(("version", 1),),
            fail_closed=("failClosed", True),
            note="Cursor runs project hooks in trusted workspaces only",
        ),
        HookFile(
            "copilot",
            nested=frozenset(),
            matcher=frozenset(),
            root=(("version", 1),),
            command_key="bash",
            timeout_key="timeoutSec",
            extra=(("cwd", "."),),  # the repository root: where the launcher's path starts
        ),
        HookFile(
            "antigravity",
            nested=_TOOL_EVENTS,
            matcher=_TOOL_EVENTS,
            container=(HOOK_NAME,),
        ),
        HookFile(  # a plugin, not a hook file: written by forge_policy.ops.opencode_plugin
            "opencode",
            nested=frozenset(),
            matcher=frozenset(),
            note="OpenCode loads project plugins at startup: restart it to load the plugin",
        ),
    )
}
#: The harness whose "hook file" is forge-policy's plugin (:mod:`forge_policy.ops.opencode_plugin`).
PLUGIN_HARNESS = "opencode"


def spec(harness: str) -> HookFile:
    """The hook file of ``harness`` (a :func:`forge_policy.harness.registry.get` name)."""
    registry.get(harness)  # the error naming the supported ones
    return SPECS[harness]


def detect(project: Path) -> list[str]:
    """The harnesses ``project`` shows signs of (their folders or files), in table order.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> (folder / ".cursor").mkdir(); (folder / ".codex").mkdir()
    >>> detect(folder)
    ['codex', 'cursor']
    """
    return [
        h.name
        for h in registry.HARNESSES.values()
        if any((project / marker).exists() for marker in h.markers)
    ]


def _events(document: dict[str, Any], hook_file: HookFile, path: Path) -> dict[str, Any]:
    """The event map inside ``document`` (created when absent)."""
    from forge_policy.ops import settings_file

    value: Any = document
    for key in hook_file.container:
        value = value.setdefault(key, {})
        if not isinstance(value, dict):
            raise SetupError(
                f"{settings_file.shown(path)}: {'.'.join(hook_file.container)}: expected an "
                "object of event lists; nothing was changed"
            )
    return value  # type: ignore[no-any-return]


def install(
    project: Path,
    hook_file: HookFile,
    handlers: dict[str, dict[str, Any]],
    *,
    local: bool = False,
) -> bool:
    """Merge ``{event: handler}`` into ``hook_file`` below ``project`` (its :attr:`HookFile.local`
    file with ``local``); returns whether the file changed. Refuses
    (:class:`~forge_policy.errors.SetupError`) a file it cannot rewrite losslessly, naming it
    with line and column."""
    from forge_policy.ops import settings_file

    path = project / (hook_file.local if local and hook_file.local else hook_file.path)
    lists = [(*hook_file.container, event) for event in handlers]
    document, indent = settings_file.read(path, lists)
    changed = merge(document, hook_file, handlers, path)
    if changed:
        settings_file.write(path, document, indent)
    return changed


def merge(
    document: dict[str, Any], hook_file: HookFile, handlers: dict[str, dict[str, Any]], path: Path
) -> bool:
    """Merge ``{event: handler}`` into ``document``, a hook file of ``hook_file``'s shape read
    from ``path`` (named in errors), as :func:`install` does; returns whether it changed. Also
    the owner of a Claude Code plugin's ``hooks/hooks.json`` (:mod:`forge_policy.ops.plugin`),
    which has the settings file's shape.

    >>> document = {}
    >>> handler = {"type": "command", "command": "forge-policy hook"}
    >>> merge(document, spec("claude-code"), {"PreToolUse": handler}, Path("x.json"))
    True
    >>> document["hooks"]["PreToolUse"][0]["matcher"]
    '*'
    """
    from forge_policy.ops import settings_file

    changed = False
    for key, value in hook_file.root:
        if key not in document:
            document[key] = value
            changed = True
    events = _events(document, hook_file, path)
    for event, handler in handlers.items():
        entries = events.setdefault(event, [])
        if event in hook_file.nested:
            matcher = "*" if event in hook_file.matcher else None
            changed |= settings_file.place(entries, handler, matcher=matcher)
        else:
            changed |= settings_file.place_flat(entries, handler)
    return changed


def files(hook_file: HookFile) -> tuple[Path, ...]:
    """The files, relative to the project, where ``hook_file``'s harness reads project hooks:
    the shared one, then the local one where it has one.

    >>> [str(p) for p in files(spec("claude-code"))]
    ['.claude/settings.json', '.claude/settings.local.json']
    >>> [str(p) for p in files(spec("opencode"))]
    ['.opencode/plugins/forge-policy.js', '.opencode/plugin/forge-policy.js']
    """
    if hook_file.harness == PLUGIN_HARNESS:
        from forge_policy.ops import opencode_plugin

        return (opencode_plugin.PLUGIN, opencode_plugin.OLD_PLUGIN)
    return (hook_file.path,) + ((hook_file.local,) if hook_file.local else ())


def remove(project: Path, hook_file: HookFile, relative: Path) -> bool:
    """Take forge-policy's handlers out of ``relative`` (one of :func:`files`), the inverse of
    :func:`install`: every other hook, key and key order is kept; a matcher group, event list or
    hook map that only held ours goes with them, and so do the root keys ``install`` adds
    (``version``) when nothing else is left; a file left empty is deleted. Returns whether
    anything changed; refuses a file it cannot rewrite losslessly (nothing changed).

    >>> import tempfile, json
    >>> folder = Path(tempfile.mkdtemp())
    >>> mine = {"type": "command", "command": "forge-policy hook"}
    >>> theirs = {"type": "command", "command": "./guard.sh"}
    >>> (folder / ".claude").mkdir()
    >>> _ = (folder / ".claude/settings.json").write_text(json.dumps({"model": "x", "hooks": {
    ...     "PreToolUse": [{"matcher": "Bash", "hooks": [theirs]}, {"hooks": [mine]}],
    ...     "Stop": [{"hooks": [mine]}]}}))
    >>> remove(folder, spec("claude-code"), Path(".claude/settings.json"))
    True
    >>> left = json.loads((folder / ".claude/settings.json").read_text())
    >>> left["model"], left["hooks"] == {"PreToolUse": [{"matcher": "Bash", "hooks": [theirs]}]}
    ('x', True)
    """
    from forge_policy.ops import settings_file

    if hook_file.harness == PLUGIN_HARNESS:
        from forge_policy.ops import opencode_plugin

        return opencode_plugin.remove(project, relative)
    path = project / relative
    if not path.exists():
        return False
    document, indent = settings_file.read(path)
    value: Any = document
    parents: list[tuple[dict[str, Any], str]] = []
    for key in hook_file.container:
        if not isinstance(value, dict) or not isinstance(value.get(key), dict):
            return False
        parents.append((value, key))
        value = value[key]
    events: dict[str, Any] = value
    changed = False
    for event in list(events):
        entries = events[event]
        if not isinstance(entries, list):
            continue
        kept: list[Any] = []
        for entry in entries:
            inner = entry.get("hooks") if isinstance(entry, dict) else None
            if isinstance(inner, list):
                rest = [h for h in inner if not settings_file.is_ours(h)]
                if len(rest) != len(inner):
                    changed = True
                    if not rest:
                        continue  # the group held only ours
                    entry["hooks"] = rest
                kept.append(entry)
            elif settings_file.is_ours(entry):
                changed = True
            else:
                kept.append(entry)
        if len(kept) != len(entries):
            if kept:
                events[event] = kept
            else:
                del events[event]
    if not changed:
        return False
    for parent, key in reversed(parents):  # a hook map left empty goes
        if parent[key] == {}:
            del parent[key]
    if all(document.get(k) == v for k, v in hook_file.root) and set(document) <= {
        k for k, _ in hook_file.root
    }:
        document.clear()
    if document:
        settings_file.write(path, document, indent)
    else:
        path.unlink()
    return True


def installed(project: Path, harness: str) -> tuple[str, ...]:
    """The events of ``harness`` whose hook list in the project holds forge-policy's handler
    (read only; an unreadable file counts as none)."""
    hook_file = spec(harness)
    found = [_ours_in(project / path, hook_file) for path in files(hook_file)]
    if harness == "codex":
        found.append(codex_toml_hooks(project))
    return tuple(e for e in hook_file.events if any(e in events for events in found))


def ours_in(path: Path, hook_file: HookFile) -> set[str]:
    """The events whose hook list in the file ``path`` holds forge-policy's handler (read
    only; an unreadable file counts as none)."""
    return _ours_in(path, hook_file)


def _ours_in(path: Path, hook_file: HookFile) -> set[str]:
    from forge_policy.ops import settings_file

    if hook_file.harness == PLUGIN_HARNESS:
        from forge_policy.ops import opencode_plugin

        return set(hook_file.events) if opencode_plugin.is_ours(path) else set()
    try:
        document, _ = settings_file.read(path)
    except (SetupError, OSError):
        return set()
    return _ours_by_event(document, hook_file.container)


def _ours_by_event(document: dict[str, Any], container: tuple[str, ...]) -> set[str]:
    from forge_policy.ops import settings_file

    value: Any = document
    for key in container:
        value = value.get(key) if isinstance(value, dict) else None
    if not isinstance(value, dict):
        return set()
    found = set()
    for event, entries in value.items():
        if not isinstance(entries, list):
            continue
        for entry in entries:
            inner = entry.get("hooks") if isinstance(entry, dict) else None
            handlers = inner if isinstance(inner, list) else [entry]
            if any(settings_file.is_ours(h) for h in handlers):
                found.add(event)
    return found


def fails_open(project: Path, harness: str) -> tuple[str, ...]:
    """The events of ``harness`` where one of forge-policy's handlers in the project lacks
    :attr:`HookFile.fail_closed` (``onFailure: "block"``, ``failClosed: true``), so a hook that
    cannot start or times out lets the call through (read only; an unreadable file, or a
    harness without such a key, gives none).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> mine = {"type": "command", "command": "forge-policy hook"}
    >>> import json; (folder / ".claude").mkdir()
    >>> _ = (folder / ".claude/settings.json").write_text(json.dumps(
    ...     {"hooks": {"PreToolUse": [{"hooks": [mine]}], "Stop": [{"hooks": [mine]}]}}))
    >>> fails_open(folder, "claude-code")
    ('PreToolUse',)
    """
    from forge_policy.ops import settings_file

    hook_file = spec(harness)
    if hook_file.fail_closed is None:
        return ()
    key, value = hook_file.fail_closed
    found: list[str] = []
    for relative in files(hook_file):
        try:
            document, _ = settings_file.read(project / relative)
        except (SetupError, OSError):
            continue
        events: Any = document
        for part in hook_file.container:
            events = events.get(part) if isinstance(events, dict) else None
        if not isinstance(events, dict):
            continue
        for event in hook_file.events:
            if not hook_file.closing(event) or event in found:
                continue
            entries = events.get(event)
            for entry in entries if isinstance(entries, list) else []:
                inner = entry.get("hooks") if isinstance(entry, dict) else None
                handlers = inner if isinstance(inner, list) else [entry]
                if any(settings_file.is_ours(h) and h.get(key) != value for h in handlers):
                    found.append(event)
                    break
    return tuple(e for e in hook_file.events if e in found)


def double_hooks(project: Path, harnesses: Sequence[str]) -> list[str]:
    """A warning per harness of ``harnesses`` set up in ``project`` that also runs the Claude
    Code hook forge-policy wrote there (see :data:`READS_CLAUDE_HOOKS`)."""
    if not installed(project, "claude-code"):
        return []
    claude = spec("claude-code").path
    return [
        f"{registry.get(name).title} also runs the hooks in {claude}{READS_CLAUDE_HOOKS[name]}: "
        f"each call is evaluated twice; keep one (forge-policy's entries in {claude} or "
        f"{spec(name).path})"
        for name in harnesses
        if name in READS_CLAUDE_HOOKS and installed(project, name)
    ]


def codex_toml(project: Path) -> dict[str, Any]:
    """``.codex/config.toml`` (``{}`` when absent); a broken one is refused with its line."""
    import tomllib

    from forge_policy.ops import settings_file

    path = project / CODEX_TOML
    if not path.exists():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise SetupError(
            f"{settings_file.shown(path)}: not valid TOML ({exc}); fix it first, nothing was "
            "changed"
        ) from None


def codex_toml_hooks(project: Path) -> set[str]:
    """The Codex events whose ``[hooks]`` in ``.codex/config.toml`` hold forge-policy's hook
    (an unreadable file counts as none)."""
    try:
        return _ours_by_event(codex_toml(project), ("hooks",))
    except (SetupError, OSError):
        return set()
