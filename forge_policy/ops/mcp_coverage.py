"""What ``doctor`` says about MCP tools (issue 27): the MCP servers the project configures for
each harness, and the MCP tools the audit log has seen, with how :mod:`forge_policy.facts.mcp`
read their calls. A tool none of whose calls read as a command, a file write or read, or a
fetch is governed by its name only: the rules written for ``Bash``, ``Write``, ``Read`` and
``WebFetch`` do not see what it does.

The servers come from ``.mcp.json`` and ``.claude/settings*.json`` (``mcpServers``, Claude
Code), ``.cursor/mcp.json`` (``mcpServers``), ``.codex/config.toml`` (``[mcp_servers.NAME]``)
and ``.gemini/settings.json`` (``mcpServers``); a file that cannot be read is a note, never an
error. The tools come from the ``reading`` of the log's ``seen`` records (one per call; written
for MCP tools only, never with the input), or, in a log without them (``coverage: false``), of
its ``violation`` and ``block`` records.

>>> report = McpReport.of([], [
...     {"kind": "seen", "tool_name": "mcp__shell__run", "reading": "shell"},
...     {"kind": "seen", "tool_name": "mcp__github__create_issue", "reading": "none"},
...     {"kind": "seen", "tool_name": "Bash"}])
>>> [(t.name, t.readings, t.by_name_only) for t in report.tools]
[('mcp__github__create_issue', {'none': 1}, True), ('mcp__shell__run', {'shell': 1}, False)]
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from forge_policy.events import MCP_PREFIX

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

#: Where each harness configures the project's MCP servers: (file, format, harness).
SERVER_FILES = (
    (".mcp.json", "json", "claude-code"),
    (".claude/settings.json", "json", "claude-code"),
    (".claude/settings.local.json", "json", "claude-code"),
    (".cursor/mcp.json", "json", "cursor"),
    (".codex/config.toml", "toml", "codex"),
    (".gemini/settings.json", "json", "gemini"),
)
#: The kinds of record that carry a ``reading``.
_READ_KINDS = frozenset({"seen", "violation", "block"})
#: Readings that leave a call governed by its name only.
_NAME_ONLY = frozenset({"none", "unreadable"})


@attrs.frozen
class Server:
    """One MCP server configured in the project: its name, the file and the harness."""

    name: str
    file: str
    harness: str

    def to_dict(self) -> dict[str, str]:
        """A JSON-ready form."""
        return {"name": self.name, "file": self.file, "harness": self.harness}


@attrs.frozen
class Tool:
    """One MCP tool the audit log has seen, with how many of its calls read how."""

    name: str
    readings: dict[str, int]

    @property
    def by_name_only(self) -> bool:
        """Whether no call of it was read as a command, a file or a fetch."""
        return all(reading in _NAME_ONLY for reading in self.readings)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        return {"tool": self.name, "readings": self.readings, "by_name_only": self.by_name_only}


@attrs.frozen
class McpReport:
    """The project's MCP servers and the MCP tools the audit log has seen."""

    servers: tuple[Server, ...]
    tools: tuple[Tool, ...]
    notes: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        servers: Iterable[Server],
        records: Iterable[Mapping[str, Any]],
        notes: tuple[str, ...] = (),
    ) -> McpReport:
        """The report of ``servers`` and the audit ``records``."""
        counts: dict[str, dict[str, int]] = {}
        kept = [r for r in records if r.get("kind") in _READ_KINDS]
        if any(r.get("kind") == "seen" for r in kept):
            # one seen record per call: a blocked call's block record would count it twice
            kept = [r for r in kept if r.get("kind") == "seen"]
        for record in kept:
            name = record.get("tool_name")
            if not isinstance(name, str):
                continue
            if not name.startswith(MCP_PREFIX):
                continue
            reading = record.get("reading")
            reading = reading if isinstance(reading, str) and reading else "none"
            tool = counts.setdefault(name, {})
            tool[reading] = tool.get(reading, 0) + 1
        tools = tuple(Tool(name, dict(sorted(r.items()))) for name, r in sorted(counts.items()))
        return cls(tuple(servers), tools, notes)

    def noted(self, note: str) -> McpReport:
        """A copy with one more note."""
        return attrs.evolve(self, notes=(*self.notes, note))

    def lines(self) -> list[str]:
        """The text ``doctor`` prints (empty when there is nothing to say)."""
        if not self.servers and not self.tools and not self.notes:
            return []
        out = ["MCP tools:"]
        for server in self.servers:
            out.append(f"  server {server.name} ({server.harness}, {server.file})")
        blind = [t for t in self.tools if t.by_name_only]
        for tool in self.tools:
            said = ", ".join(f"{n} {r}" for r, n in tool.readings.items())
            out.append(f"  {tool.name}: {said}")
        if blind:
            names = ", ".join(t.name for t in blind)
            out.append(
                f"  governed by name only: {names}: forge-policy could not read what these "
                "calls do (no command, file path or URL argument it knows), so only rules that "
                "name these tools (or match every tool) apply to them; see docs/how-to/mcp-tools.md"
            )
        if self.servers and not self.tools:
            out.append(
                "  no call of these servers' tools is in the audit log yet: what they do is read "
                "when they are called (docs/how-to/mcp-tools.md)"
            )
        out += [f"  note: {note}" for note in self.notes]
        return out

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        return {
            "servers": [s.to_dict() for s in self.servers],
            "tools": [t.to_dict() for t in self.tools],
            "by_name_only": [t.name for t in self.tools if t.by_name_only],
            "notes": list(self.notes),
        }


def configured_servers(project: Path) -> tuple[list[Server], list[str]]:
    """The MCP servers the project's harness files configure (:data:`SERVER_FILES`), and a note
    per file that exists but cannot be read.

    >>> configured_servers(Path("/nonexistent"))
    ([], [])
    """
    servers: list[Server] = []
    notes: list[str] = []
    for relative, form, harness in SERVER_FILES:
        path = project / relative
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
            if form == "toml":
                import tomllib

                document: Any = tomllib.loads(text)
                table = document.get("mcp_servers") if isinstance(document, dict) else None
            else:
                document = json.loads(text)
                table = document.get("mcpServers") if isinstance(document, dict) else None
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            notes.append(f"{relative}: its MCP servers cannot be read ({exc})")
            continue
        if isinstance(table, dict):
            servers += [Server(str(name), relative, harness) for name in table]
    return servers, notes


def mcp_report(project: Path, records: Iterable[Mapping[str, Any]]) -> McpReport:
    """The project's MCP servers and the MCP tools among the audit ``records``."""
    servers, notes = configured_servers(project)
    return McpReport.of(servers, records, tuple(notes))
