"""The files an ``apply_patch`` of a tool call writes, for the facts that judge writes
(:mod:`forge_policy.facts.governance`) and the files a call names
(:mod:`forge_policy.facts.files`): one reading of Codex's patch format
(:mod:`forge_policy.commands.patches`) for Codex's tool and for ``apply_patch`` run from a shell.
"""

from __future__ import annotations

import os

from forge_policy._budget import truncated
from forge_policy.facts._io import event_commands, event_cwd, read_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.model import Event


def event_patches(event: Event) -> list[tuple[str, str, str, dict[str, object]]]:
    """Every file an ``apply_patch`` of the call writes or deletes, read as Codex reads the
    patch (:mod:`forge_policy.commands.patches`): from Codex's tool (``tool_input.patch``, as
    the Codex adapter gives it) and from each ``apply_patch`` a shell command runs (a
    here-document, an argument, a pipe from ``echo``; ``bash -lc``, ``cd DIR &&``).

    Each item is ``(tool, absolute path, patch path as written, tool input)``, shaped like the
    catalog's own write tools so that a reader judges it as one: an added file is a ``Write``
    with its ``content``; an updated file a ``MultiEdit`` whose ``edits`` are its chunks, when
    every chunk's old text is in the file as it is (else ``apply_patch``: Codex matches
    loosely, so the result cannot be told); a deleted file, and both names of a moved one,
    ``apply_patch``. A patch that cannot be read (a parse error on a text that starts a patch,
    a patch fed from a file or a program this reading cannot see) marks the running fact
    incomplete: blocking behaviors decide as if it matched.
    """
    texts: list[tuple[str, str | None]] = []
    patch = event.tool_input.get("patch")
    if isinstance(patch, str) and "*** Begin Patch" in patch:
        texts.append((event_cwd(event), patch))
    for command in event_commands(event):
        if not any(name in command for name in ("apply_patch", "applypatch", "apply-patch")):
            continue  # the common case: nothing to import, nothing to read
        from forge_policy.commands import stdin_text
        from forge_policy.commands.patches import applied
        from forge_policy.facts.commands import command_runs

        for run in command_runs(event, command, event_cwd(event)):
            if not run.cwd:
                continue
            stdin = stdin_text(run.command, run.cwd) if run.command is not None else None
            is_patch, text = applied(list(run.argv), stdin)
            if is_patch:
                texts.append((run.cwd, text))
    out: list[tuple[str, str, str, dict[str, object]]] = []
    if not texts:
        return out
    from forge_policy.commands.patches import PatchError, mentioned, parse

    for base, text in texts:
        if text is None:
            truncated("apply_patch reads a patch this reading cannot see")
            continue
        try:
            changes = parse(text).changes
            extra = mentioned(text)
        except PatchError as error:
            truncated(f"apply_patch: {error}")
            changes, extra = [], mentioned(text)
        seen: set[str] = set()
        for change in changes:
            path = os.path.normpath(os.path.join(base, change.path))
            seen.add(path)
            if change.kind == "add":
                out.append(("Write", path, change.path, {"content": change.content}))
            elif change.kind == "delete" or change.move_to:
                out.append(("apply_patch", path, change.path, {}))
            else:
                tool, edit = _patch_update(path, change.chunks)
                out.append((tool, path, change.path, edit))
            if change.move_to:
                target = os.path.normpath(os.path.join(base, change.move_to))
                seen.add(target)
                out.append(("apply_patch", target, change.move_to, {}))
        for name in extra:
            path = os.path.normpath(os.path.join(base, name))
            if path not in seen:
                seen.add(path)
                out.append(("apply_patch", path, name, {}))
    return out


def _patch_update(path: str, chunks: list[tuple[str, str]]) -> tuple[str, dict[str, object]]:
    """An updated file as a ``MultiEdit`` when each chunk's old text is in the file exactly,
    else as ``apply_patch``."""
    current = read_text(path) if chunks else None
    if current is None or any(not old or old not in current for old, _new in chunks):
        return "apply_patch", {}
    edits = [{"old_string": old, "new_string": new} for old, new in chunks]
    return "MultiEdit", {"edits": edits}
