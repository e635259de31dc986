"""``init --floor harness|own|off``: the project's choice of floor (SPEC §13) and what it writes.

The choice is recorded as ``floor: <mode>`` in ``<FORGE_ROOT>/config.yaml`` (the key
:func:`forge_policy.floor.status.configured_mode` reads; the file is merged as text: every other
line, comment and key order kept). With ``harness`` (the default: a governance tool's defaults are
the safe ones) each harness that has a sandbox gets it configured from the floor
(:mod:`forge_policy.ops.harness_sandbox`); with ``own`` or ``off`` nothing is written into a
harness's settings (a block written earlier is left as it is: init never loosens a sandbox).
Turning the floor off, or on again from off, is written to the audit log (:func:`record`).
:func:`plan` reads and checks every file first, so a broken one stops ``init`` before anything is
written.

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> merged_mode("# mine\\nprofile: strict\\n", "own", "config.yaml")
'# mine\\nprofile: strict\\nfloor: own\\n'
>>> merged_mode("floor: harness  # default\\n", "off", "config.yaml")
'floor: off  # default\\n'
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from forge_policy.errors import SetupError
from forge_policy.ops import harness_sandbox

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from forge_policy.audit.base import AuditSink
    from forge_policy.floor.model import Floor

MODES = ("harness", "own", "off")
DEFAULT = "harness"
CONFIG = "config.yaml"
_FLOOR_LINE = re.compile(r"^floor[ \t]*:[ \t]*([^#\n]*?)([ \t]*(?:#[^\n]*)?)$", re.MULTILINE)


def merged_mode(text: str, mode: str, shown: str) -> str:
    """``text`` (a config.yaml) with its top-level ``floor:`` set to ``mode``, or added at the
    end; :class:`SetupError` with ``file:line:col`` when the YAML is broken."""
    from forge_policy.catalog.yaml_io import parse_yaml

    if text.strip():
        document, issues = parse_yaml(text, shown)
        if issues:
            raise SetupError(f"{issues[0]}; fix it first, nothing was changed")
        if document is not None and not isinstance(document, dict):
            raise SetupError(f"{shown}: expected a mapping; nothing was changed")
    match = _FLOOR_LINE.search(text)
    if match:
        return text[: match.start(1)] + mode + text[match.end(1) :]
    prefix = "" if not text or text.endswith("\n") else "\n"
    return f"{text}{prefix}floor: {mode}\n"


class Plan:
    """What ``init`` writes for the floor: the file changes, the lines it tells the user, and
    ``(before, after)`` when the recorded mode changes (audited: :func:`record`)."""

    __slots__ = ("changes", "mode_change", "notes")

    def __init__(self) -> None:
        self.changes: list[harness_sandbox.Change] = []
        self.notes: list[str] = []
        self.mode_change: tuple[str, str] | None = None


def record(sink: AuditSink, before: str, after: str, *, now: float | None = None) -> None:
    """Write the project's change of floor to the audit log (a ``diagnostic`` record,
    ``code: "floor_mode"``): turning the floor off is the project's choice, and it is seen.

    >>> from forge_policy.audit.memory import MemoryAuditSink
    >>> sink = MemoryAuditSink()
    >>> record(sink, "harness", "off", now=0)
    >>> next(sink.records())["message"]
    'init --floor off: the enforcement floor is off for this project (was harness)'
    """
    import time

    from forge_policy._time import iso
    from forge_policy.audit import records
    from forge_policy.audit.base import write

    entry = records.Diagnostic(
        code="floor_mode",
        timestamp=iso(time.time() if now is None else now),
        session_id="",
        message=f"init --floor {after}: the enforcement floor is {after} for this project "
        f"(was {before})",
    )
    write(sink, [records.to_dict(entry)])


def plan(
    project: Path,
    root: Path,
    harnesses: Sequence[str],
    mode: str,
    environ: Mapping[str, str],
    *,
    where: str = "project",
) -> Plan:
    """The floor's changes for ``harnesses`` under ``mode`` (module doc); reads only."""
    from forge_policy.ops import settings_file

    if mode not in MODES:
        raise SetupError(f"unknown floor {mode!r}: expected one of {', '.join(MODES)}")
    out = Plan()
    config = root / CONFIG
    text = config.read_text(encoding="utf-8") if config.exists() else ""
    new = merged_mode(text, mode, settings_file.shown(config))
    if new != text:
        out.changes.append(harness_sandbox.Change(config, text=new))
        out.mode_change = (_previous(root, text), mode)
    if mode != "harness":
        if new == text:  # told when it was chosen
            pass
        elif mode == "own":
            out.notes.append(
                "floor: own: no harness sandbox is configured; forge-policy runs each shell "
                "call under its own sandbox (bubblewrap, Landlock or sandbox-exec)"
            )
        else:
            out.notes.append(
                f"floor: off: no sandbox holds the floor; the hook alone decides (the choice is "
                f"recorded in {settings_file.shown(config)}, which the agent cannot change)"
            )
        return out
    from forge_policy.floor.derive import floor_for

    floor = floor_for(str(project.absolute()), environ)
    home = os.path.normpath(environ.get("HOME", "") or os.path.expanduser("~"))
    for name in harnesses:
        if name == "claude-code":
            changes = harness_sandbox.plan_claude(project, floor, home, where)
            out.changes += changes
            out.notes += _claude_notes(project, floor, home, where) if changes else []
        elif name == "codex":
            changes = harness_sandbox.plan_codex(project, floor, environ.get("TMPDIR", ""))
            out.changes += changes
            out.notes += (
                []
                if not changes
                else [
                    f'Codex: sandbox_mode = "{harness_sandbox.CODEX_MODE}" in '
                    f"{harness_sandbox.CODEX_FILE} (read once the project is trusted): commands "
                    "write only to the workspace and temp, .git and .codex stay read-only, no "
                    "network; it keeps neither .forge nor secret files, and sandboxes do not "
                    "nest, so those stay the hook's alone (`forge-policy floor --json` lists "
                    'them; `floor: own` with sandbox_mode = "danger-full-access" has '
                    "forge-policy's own sandbox hold them instead)"
                ]
            )
    return out


def _previous(root: Path, text: str) -> str:
    """The mode recorded before (``none`` when the file did not name one)."""
    from forge_policy.floor.status import FloorConfigError, configured_mode

    if _FLOOR_LINE.search(text) is None:
        return "none"
    try:
        return configured_mode(str(root))
    except FloorConfigError:
        return "invalid"


def _some(entries: list[str], shown: int = 6) -> str:
    """The first ``shown`` of ``entries`` and how many more.

    >>> _some(["a", "b", "c"], 2), _some(["a"]), _some([])
    ('a, b and 1 more', 'a', 'none')
    """
    entries = list(dict.fromkeys(entries))
    if not entries:
        return "none"
    more = len(entries) - shown
    return ", ".join(entries[:shown]) + (f" and {more} more" if more > 0 else "")


def _claude_notes(project: Path, floor: Floor, home: str, where: str) -> list[str]:
    """What changes for the user of Claude Code (the sandboxing docs, 2026-08-22)."""
    file = harness_sandbox.CLAUDE_FILES[where]
    kept = _some([harness_sandbox.spelled(p.path, floor.project, home)[0]
                  for p in floor.never_written if p.reason != "installation"])  # fmt: skip
    hidden = _some([harness_sandbox.spelled(p.path, floor.project, home)[0]
                    for p in floor.never_read])  # fmt: skip
    packages = " ".join(harness_sandbox.LINUX_PACKAGES)
    notes = [
        f"Claude Code: sandbox on ({file}): Bash commands run sandboxed, writing only to the "
        f"project and temp; kept read-only: {kept}; unreadable: {hidden}",
        "Claude Code: a sandboxed command that reaches a host outside sandbox.network."
        "allowedDomains asks you first (auto mode: the classifier decides); commands cannot "
        "retry outside the sandbox (allowUnsandboxedCommands: false)",
        f"Claude Code: failIfUnavailable: Claude Code refuses to start when the sandbox cannot; "
        f"on Linux and WSL2 it needs bubblewrap and socat (Debian/Ubuntu: sudo apt-get install "
        f"{packages})",
    ]
    for weaker in harness_sandbox.claude_overrides(project, where):
        notes.append(
            f"Claude Code: {harness_sandbox.CLAUDE_FILES['local']} sets {weaker}, which "
            f"overrides {file}; init leaves it to you"
        )
    return notes
