"""What each harness can enforce of the active catalog (``forge-policy doctor``), and the
``validate`` lint for tools no supported harness has.

A behavior is written once, in Claude Code's vocabulary (SPEC §8); each harness sends a subset
of its events and tools (:mod:`forge_policy.harness.registry`) and can express a subset of its
outcomes. For every harness the project has set up or shows signs of, each active behavior is:

* ``enforced``: every trigger can fire and every level it reaches reads as written;
* ``limited``: enforced with a difference the user should know of (``ask-as-deny``: an
  ``override: user`` block is a deny because the harness cannot ask; ``some-tools-missing``,
  ``some-events-missing``: some triggers cannot fire, the others do; ``prompt-not-blocked``,
  ``stop-not-blocked``: one of the events it blocks at cannot be blocked);
* ``not enforced``: no trigger can fire (``tool-missing``, ``event-missing``), or every block
  it exists for cannot be expressed (``cannot-block-prompt``, ``cannot-block-stop``).

The codes are stable (``--json``); the texts say why.

With ``run`` (``doctor`` always), every configured hook command is run as the harness would
(:mod:`forge_policy.ops.hook_check`): where one does not start or answers wrongly, *every*
behavior is ``not enforced`` (``hook-fails``): an entry that cannot run enforces nothing.

Findings about forge-policy's own hook entries (``hook_findings``): ``fails-open``, an entry
without the key that makes a hook failure block where the harness has one (Claude Code
``onFailure: "block"`` on ``PreToolUse``, Cursor ``failClosed: true``): a hook that cannot start
or times out would let the call through.

>>> from forge_policy.catalog.behavior import Behavior
>>> b = Behavior({"id": "no-cat", "name": "N", "default_level": "soft_block",
...     "override": "user", "triggers": [{"event": "PreToolUse", "matcher": "Bash"}]})
>>> for finding in assess(b, "codex", installed=("PreToolUse",)):
...     print(finding.code, "-", finding.reason)
ask-as-deny - override: user is enforced as a deny: OpenAI Codex CLI cannot ask the user
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import attrs

from forge_policy.events import GIT_HOOK_EVENTS
from forge_policy.harness import registry
from forge_policy.levels import Level
from forge_policy.ops import harness_config
from forge_policy.ops.hook_check import HookRun

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from forge_policy.catalog.behavior import Behavior

#: Codes of findings that leave a behavior enforced (with a difference).
LIMITED = frozenset(
    {
        "ask-as-deny",
        "some-tools-missing",
        "some-events-missing",
        "prompt-not-blocked",
        "stop-not-blocked",
    }
)
#: The catalog events a block is expressed at only where the harness can (``can_block_*``).
_PROMPT, _STOP = "UserPromptSubmit", "Stop"
_TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest"})
_MCP_PREFIX = "mcp__"


@attrs.frozen
class Finding:
    """Why a harness cannot enforce a behavior (or enforces it differently)."""

    code: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        """A JSON-ready form."""
        return {"code": self.code, "reason": self.reason}


@attrs.frozen
class HarnessCoverage:
    """One harness: where it is set up, and which active behaviors it enforces."""

    name: str
    title: str
    config: str
    #: the events whose hook list holds forge-policy's hook (empty: not set up)
    installed: tuple[str, ...]
    detected: bool
    enforced: tuple[str, ...]
    limited: dict[str, tuple[Finding, ...]]
    not_enforced: dict[str, tuple[Finding, ...]]
    notes: tuple[str, ...]
    #: what is wrong with forge-policy's own entries in the harness's file (``fails-open``)
    hook_findings: tuple[Finding, ...] = ()
    #: each configured hook command, run as the harness would (:mod:`forge_policy.ops.hook_check`)
    hook_runs: tuple[HookRun, ...] = ()

    @property
    def runs(self) -> bool:
        """Whether every configured hook command that was run answered."""
        return all(r.ok for r in self.hook_runs)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        return {
            "harness": self.name,
            "title": self.title,
            "config": self.config,
            "installed": bool(self.installed),
            "events": list(self.installed),
            "detected": self.detected,
            "enforced": list(self.enforced),
            "limited": {k: [f.to_dict() for f in v] for k, v in self.limited.items()},
            "not_enforced": {k: [f.to_dict() for f in v] for k, v in self.not_enforced.items()},
            "notes": list(self.notes),
            "hook_findings": [f.to_dict() for f in self.hook_findings],
            "hook_runs": [r.to_dict() for r in self.hook_runs],
            "hook_answers": self.runs,
        }


def active(behaviors: Iterable[Behavior], profile: str) -> list[Behavior]:
    """The enabled behaviors of ``profile`` (``applies_to.profiles``; ``bypass: never`` ones
    belong to every profile) that a harness hook decides: one that triggers on git hook events
    only (``pre-commit``, …) is the git side's, whichever agent runs."""
    return [
        b
        for b in behaviors
        if b.enabled
        and (not b.applies_profiles or profile in b.applies_profiles or b.bypass == "never")
        and not b.events <= GIT_HOOK_EVENTS
    ]


def highest_level(behavior: Behavior) -> Level:
    """The highest level ``behavior`` can reach (its escalation, under its cap)."""
    top = max([behavior.default_level, *(s.level for s in behavior.escalation)])
    cap = behavior.level_cap
    return min(top, cap) if cap is not None else top


def assess(behavior: Behavior, harness: str, installed: Sequence[str]) -> list[Finding]:
    """Every finding for ``behavior`` under ``harness`` with forge-policy's hook on the
    harness events ``installed`` (none: it cannot fire there)."""
    h = registry.get(harness)
    sent = {h.events[e] for e in installed if e in h.events}
    tools = h.catalog_tools()
    findings: list[Finding] = []
    fires = False
    missing_tools: set[str] = set()
    for trigger in behavior.triggers:
        if trigger.event not in sent:
            continue
        names = trigger.subject_names if trigger.event in _TOOL_EVENTS else None
        if harness != "claude-code" and names is not None:
            have = {n for n in names if n in tools or n.startswith(_MCP_PREFIX)}
            missing_tools |= names - have
            if not have:
                continue
        fires = True
    if not fires:
        wanted = sorted(behavior.events - GIT_HOOK_EVENTS)
        absent = [e for e in wanted if e not in sent]
        if absent:
            verb = "has no" if not set(absent) & h.catalog_events() else "is not hooked on"
            findings.append(Finding("event-missing", f"{h.title} {verb} {', '.join(absent)} event"))
        if missing_tools:
            findings.append(
                Finding(
                    "tool-missing",
                    f"names tools {h.title} does not have: {', '.join(sorted(missing_tools))}",
                )
            )
        return findings
    if missing_tools:
        findings.append(
            Finding(
                "some-tools-missing",
                f"{h.title} has no {', '.join(sorted(missing_tools))}: the other tools it "
                "names are governed",
            )
        )
    unsent = sorted(behavior.events - sent - GIT_HOOK_EVENTS)
    if unsent:
        findings.append(
            Finding(
                "some-events-missing",
                f"its {', '.join(unsent)} trigger{'s' if len(unsent) > 1 else ''} cannot fire "
                f"under {h.title}",
            )
        )
    if highest_level(behavior) < Level.SOFT_BLOCK:
        return findings
    ask_at = set(h.ask_events) & set(installed)
    if behavior.override == "user" and "PreToolUse" in sent and not ask_at:
        findings.append(
            Finding(
                "ask-as-deny",
                f"override: user is enforced as a deny: {h.title} cannot ask the user"
                + (" at the events forge-policy is hooked on" if h.ask_events else ""),
            )
        )
    blocks_at = {t.event for t in behavior.triggers if t.action == "evaluate"} & sent
    lost = {_PROMPT} if not h.can_block_prompt else set()
    lost |= {_STOP} if not h.can_block_stop else set()
    for event, what, code in (
        (_PROMPT, "block a prompt", "prompt"),
        (_STOP, "keep the agent going at Stop", "stop"),
    ):
        if event in blocks_at and event in lost:
            every = blocks_at <= lost
            findings.append(
                Finding(
                    f"cannot-block-{code}" if every else f"{code}-not-blocked",
                    f"{h.title} cannot {what}",
                )
            )
    return findings


def coverage(
    project: Path,
    behaviors: Iterable[Behavior],
    harnesses: Sequence[str] | None = None,
    *,
    run: bool = False,
    environ: Mapping[str, str] | None = None,
) -> list[HarnessCoverage]:
    """The coverage of each harness set up in, or detected in, ``project`` (or of
    ``harnesses``); a harness not set up is assessed as ``init`` would set it up.

    With ``run``, each configured hook command is run as the harness would run it, in
    ``environ`` (:func:`forge_policy.ops.hook_check.run_hooks`): where one does not answer,
    no behavior is enforced (``hook-fails``), whatever the file says."""
    from forge_policy.ops.hook_check import run_hooks

    detected = harness_config.detect(project)
    active = list(behaviors)
    chosen = list(harnesses or [])
    if not chosen:
        chosen = [
            name
            for name in registry.names()
            if name in detected or harness_config.installed(project, name)
        ]
    out = []
    for name in chosen:
        h = registry.get(name)
        installed = harness_config.installed(project, name)
        events = installed or harness_config.spec(name).events
        enforced: list[str] = []
        limited: dict[str, tuple[Finding, ...]] = {}
        missing: dict[str, tuple[Finding, ...]] = {}
        runs = tuple(run_hooks(project, name, environ)) if run and installed else ()
        broken = [r for r in runs if not r.ok]
        for behavior in active:
            findings = tuple(assess(behavior, name, events))
            if broken:
                missing[behavior.id] = (Finding("hook-fails", "the hook does not answer"),)
            elif not findings:
                enforced.append(behavior.id)
            elif all(f.code in LIMITED for f in findings):
                limited[behavior.id] = findings
            else:
                missing[behavior.id] = findings
        out.append(
            HarnessCoverage(
                name=name,
                title=h.title,
                config=h.config,
                installed=installed,
                detected=name in detected,
                enforced=tuple(enforced),
                limited=limited,
                not_enforced=missing,
                notes=tuple(_notes(project, name, installed, environ)),
                hook_findings=tuple(hook_findings(project, name)),
                hook_runs=runs,
            )
        )
    return out


def _notes(
    project: Path, name: str, installed: Sequence[str], environ: Mapping[str, str] | None = None
) -> list[str]:
    h = registry.get(name)
    notes = []
    from forge_policy.ops import plugin

    by_plugin = plugin.enabled_in(project, environ) if name == "claude-code" else []
    if not installed and by_plugin:
        notes.append(
            f"no project hook: the forge-policy plugin is enabled ({'; '.join(by_plugin)}) and "
            "decides each event; forge-policy init --harness claude-code would make it twice"
        )
    elif not installed:
        notes.append(f"not set up: run forge-policy init --harness {name}")
    elif set(harness_config.spec(name).events) - set(installed):
        rest = [e for e in harness_config.spec(name).events if e not in installed]
        notes.append(f"no hook on {', '.join(rest)}: run forge-policy init --harness {name}")
    closed = harness_config.spec(name).fail_closed is not None  # else: hook_findings
    if installed and h.fails_open and not closed:
        notes.append(
            f"{h.title} lets the call through when the hook crashes or times out: forge-policy "
            "answers its own failures with a deny (FORGE_ON_ERROR), not a hook killed at the "
            "timeout"
        )
    notes.extend(harness_config.double_hooks(project, [name]))
    if by_plugin:
        notes.extend(plugin.double_registration(project, environ))
    return notes


def hook_findings(project: Path, name: str) -> list[Finding]:
    """A ``fails-open`` finding per event where forge-policy's entry for harness ``name`` lacks
    the key that makes a hook failure block (:func:`harness_config.fails_open`)."""
    linked = symlinked_state(project)
    hook_file = harness_config.spec(name)
    if name == harness_config.PLUGIN_HARNESS:
        return plugin_findings(project) + linked
    if hook_file.fail_closed is None:
        return linked
    key, value = hook_file.fail_closed
    wanted = json.dumps({key: value})[1:-1]
    title = registry.get(name).title
    return [
        Finding(
            "fails-open",
            f"{hook_file.path}: forge-policy's {event} hook has no {wanted}: {title} lets the "
            "call through when the hook cannot start or times out; run forge-policy init "
            f"--harness {name}",
        )
        for event in harness_config.fails_open(project, name)
    ] + linked


def plugin_findings(project: Path) -> list[Finding]:
    """A ``plugin-stale`` finding per copy of forge-policy's OpenCode plugin that is not the
    one this forge-policy writes (an older version, an edited copy, or one in the folder older
    OpenCode builds read: OpenCode runs them as they are)."""
    from forge_policy.ops import opencode_plugin

    found = []
    for relative in harness_config.files(harness_config.spec(harness_config.PLUGIN_HARNESS)):
        path = project / relative
        if not opencode_plugin.is_ours(path):
            continue
        target = opencode_plugin.launcher_of(path)
        current = target is not None and path.read_text(encoding="utf-8") == (
            opencode_plugin.text(target)
        )
        if current and relative == opencode_plugin.PLUGIN:
            continue
        version = opencode_plugin.version(path)
        found.append(
            Finding(
                "plugin-stale",
                f"{relative}: forge-policy's OpenCode plugin is not the one this forge-policy "
                f"writes (its version {version}, this one {opencode_plugin.VERSION}, or "
                "edited, or in an older folder); run forge-policy init --harness opencode",
            )
        )
    return found


def symlinked_state(project: Path) -> list[Finding]:
    """A ``symlinked-state`` finding per symlink among ``.forge`` and the folders the hook
    writes (SPEC §9, the Harness Home contract): the hook refuses to write state, audit, the
    catalog cache or its key through one, so it decides without them (failing closed)."""
    root = project / ".forge"
    return [
        Finding(
            "symlinked-state",
            f"{folder.relative_to(project)} is a symlink (to {os.readlink(folder)}): the hook "
            "refuses to keep its state, audit log and catalog cache outside the project, so it "
            "decides without them; replace the link with a real folder",
        )
        for folder in (root, root / "runtime", root / "audit")
        if folder.is_symlink()
    ]
