"""The floor's shape (SPEC §13): which paths the operating system keeps unwritten and unread.

A :class:`Floor` is plain data, absolute paths only, so every enforcer reads the same thing: the
harness sandboxes ``init`` configures (Claude Code ``sandbox.filesystem``, Codex writable roots),
forge_policy's own launcher (bubblewrap, Landlock, ``sandbox-exec``), ``doctor --probe`` and
``forge-policy floor``. It round-trips through JSON (:meth:`Floor.to_json`,
:meth:`Floor.from_json`) with built-ins only, because the launcher that applies it imports
nothing else. Each :class:`FloorPath` says why it is there (``reason``: a behavior id, or
``installation`` / ``git`` / ``temp`` / ``project``), so ``doctor`` and ``floor`` can show it.

Precedence, as every enforcer applies it: a path in :attr:`Floor.never_read` is neither read nor
written; one in :attr:`Floor.never_written` is not written (it may be read); writes go only under
:attr:`Floor.writable`; reads are otherwise unrestricted.

>>> floor = Floor(
...     project="/p",
...     writable=(FloorPath("/p", "project"), FloorPath("/tmp", "temp")),
...     never_written=(FloorPath("/p/.forge", "protect-governance"),),
...     never_read=(FloorPath("/home/u/.ssh", "agent-shield"),),
... )
>>> Floor.from_json(floor.to_json()) == floor
True
>>> [floor.writes_allowed(p) for p in ("/p/src/a.py", "/p/.forge/x", "/etc/x")]
[True, False, False]
>>> floor.reads_allowed("/home/u/.ssh/id_ed25519"), floor.reads_allowed("/home/u/.bashrc")
(False, True)
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Version of :meth:`Floor.to_json`'s document; a launcher refuses (fails closed on) any other.
FLOOR_FORMAT = 1


class FloorPath:
    """One absolute path of the floor and the reason it is there (a behavior id or a kind)."""

    __slots__ = ("path", "reason")

    def __init__(self, path: str, reason: str) -> None:
        if not path.startswith("/"):
            raise ValueError(f"floor path must be absolute: {path!r}")
        self.path = path.rstrip("/") or "/"
        self.reason = reason

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FloorPath) and (self.path, self.reason) == (
            other.path,
            other.reason,
        )

    def __hash__(self) -> int:
        return hash((self.path, self.reason))

    def __repr__(self) -> str:
        return f"FloorPath({self.path!r}, {self.reason!r})"

    def covers(self, path: str) -> bool:
        """Whether ``path`` (absolute, normalized) is this path or lies under it."""
        return path == self.path or path.startswith(self.path.rstrip("/") + "/")


class Floor:
    """What the operating system holds for one project under one catalog (SPEC §13).

    ``project``: the project root (absolute). ``writable``: the roots writes may go to (the
    project, the temp directories). ``never_written``: paths kept read-only even under a
    writable root (governance per SPEC §7, the engine's installation, git hooks and config).
    ``never_read``: paths hidden altogether (agent-shield's deny set, secret files).
    """

    __slots__ = ("never_read", "never_written", "project", "writable")

    def __init__(
        self,
        project: str,
        writable: tuple[FloorPath, ...],
        never_written: tuple[FloorPath, ...] = (),
        never_read: tuple[FloorPath, ...] = (),
    ) -> None:
        self.project = project
        self.writable = tuple(writable)
        self.never_written = tuple(never_written)
        self.never_read = tuple(never_read)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Floor) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"Floor(project={self.project!r}, writable={len(self.writable)}, "
            f"never_written={len(self.never_written)}, never_read={len(self.never_read)})"
        )

    def _key(self) -> tuple[object, ...]:
        return (self.project, self.writable, self.never_written, self.never_read)

    def writes_allowed(self, path: str) -> bool:
        """Whether the floor lets ``path`` (absolute, normalized) be written."""
        if any(p.covers(path) for p in self.never_read + self.never_written):
            return False
        return any(p.covers(path) for p in self.writable)

    def reads_allowed(self, path: str) -> bool:
        """Whether the floor lets ``path`` (absolute, normalized) be read."""
        return not any(p.covers(path) for p in self.never_read)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (``format``, ``project`` and three lists of ``{path, reason}``)."""

        def rows(paths: tuple[FloorPath, ...]) -> list[dict[str, str]]:
            return [{"path": p.path, "reason": p.reason} for p in paths]

        return {
            "format": FLOOR_FORMAT,
            "project": self.project,
            "writable": rows(self.writable),
            "never_written": rows(self.never_written),
            "never_read": rows(self.never_read),
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as compact, key-sorted JSON."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_dict(cls, document: Any) -> Floor:
        """The floor of a :meth:`to_dict` document; :class:`ValueError` naming the field when
        it is anything else (an enforcer refuses to run then: it fails closed)."""
        if not isinstance(document, dict):
            raise ValueError("floor: expected a JSON object")
        if document.get("format") != FLOOR_FORMAT:
            got = document.get("format")
            raise ValueError(f"floor: format: expected {FLOOR_FORMAT}, got {got!r}")
        project = document.get("project")
        if not isinstance(project, str) or not project.startswith("/"):
            raise ValueError("floor: project: expected an absolute path")

        def paths(field: str) -> tuple[FloorPath, ...]:
            rows = document.get(field, [])
            if not isinstance(rows, list):
                raise ValueError(f"floor: {field}: expected a list")
            out = []
            for i, row in enumerate(rows):
                if not (
                    isinstance(row, dict)
                    and isinstance(row.get("path"), str)
                    and isinstance(row.get("reason"), str)
                ):
                    raise ValueError(f"floor: {field}[{i}]: expected {{path, reason}} strings")
                try:
                    out.append(FloorPath(row["path"], row["reason"]))
                except ValueError as exc:
                    raise ValueError(f"floor: {field}[{i}].path: {exc}") from None
            return tuple(out)

        return cls(project, paths("writable"), paths("never_written"), paths("never_read"))

    @classmethod
    def from_json(cls, text: str) -> Floor:
        """The floor of a :meth:`to_json` text (:class:`ValueError` on bad JSON, too)."""
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"floor: not JSON: {exc}") from None
        return cls.from_dict(document)
