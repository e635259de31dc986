"""``forge-policy uninstall [--purge]``: the inverse of ``init`` (and of ``git install``).

* Every harness file forge-policy writes hooks into (shared and local,
  :func:`forge_policy.ops.harness_config.files`) loses forge-policy's handlers and nothing else:
  :func:`forge_policy.ops.harness_config.remove` keeps every other hook, key and key order and
  the file's indent, drops what only held ours (a matcher group, an event list, the hook map,
  a file ``init`` created). A file it cannot rewrite losslessly is named and left as it is.
  Hooks in Codex's ``config.toml`` (which ``init`` never writes) are named for removal by hand.
* Claude Code's ``statusLine`` loses forge-policy's (``init --statusline``); a user's stays.
* The git hooks ``forge-policy git install`` wrote lose their marked block.
* The project's warm worker is asked to stop.
* The launcher ``<FORGE_ROOT>/bin/forge-policy-hook`` and this machine's record go.
* ``<FORGE_ROOT>`` itself stays (configuration, a copied catalog, the audit log are the
  project's) unless ``purge``: then it is deleted with the ``.gitignore`` lines ``init`` added.

Claude Code's ``sandbox`` block that ``init --floor harness`` wrote is left in place (it is
settings of Claude Code's own, worth keeping without forge-policy): the report says so.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from forge_policy.errors import GitHookError, SetupError
from forge_policy.harness import registry
from forge_policy.ops import harness_config, launcher, settings_file, statusline_config
from forge_policy.ops.init import GITIGNORE_HEADER, OLD_GITIGNORE_HEADER, Report, per_machine


def uninstall(project: Path, root: Path, *, purge: bool = False) -> Report:
    """Take forge-policy out of ``project`` (see the module docstring); returns what was done."""
    report = Report()
    for relative in harness_config.files(harness_config.spec("claude-code")):
        try:
            if statusline_config.remove(project / relative):
                gone = not (project / relative).exists()
                verb = "removed" if gone else "updated"
                report.add(verb, project / relative, "forge-policy's statusLine taken out")
        except SetupError as exc:
            report.notes.append(f"{exc}: take forge-policy's statusLine out by hand")
    for name in registry.names():
        hook_file = harness_config.spec(name)
        for relative in harness_config.files(hook_file):
            path = project / relative
            try:
                changed = harness_config.remove(project, hook_file, relative)
            except SetupError as exc:
                report.notes.append(f"{exc}: take forge-policy's hook out by hand")
                continue
            if changed:
                gone = not path.exists()
                detail = "forge-policy's hook taken out" + (
                    ", nothing else was in it" if gone else ""
                )
                report.add("removed" if gone else "updated", path, detail)
        if name == "codex" and harness_config.codex_toml_hooks(project):
            report.notes.append(
                f"{harness_config.CODEX_TOML}: its [hooks] hold forge-policy's hook; take it out "
                "by hand (forge-policy never rewrites that file)"
            )
    sandbox = project / harness_config.spec("claude-code").path
    if _has_sandbox(sandbox):
        report.notes.append(
            f"{settings_file.shown(sandbox)}: its sandbox block (init --floor harness) is kept: "
            "Claude Code's own protection; delete the sandbox key if you do not want it"
        )
    _git_hooks(project, report)
    stopped = stop_worker(root)
    if stopped:
        report.add("stopped", root / "runtime" / "worker", stopped)
    for path in (launcher.path(root), root / launcher.RECORD):
        if path.is_file():
            path.unlink()
            report.add("removed", path)
    with_bin = launcher.path(root).parent
    if with_bin.is_dir() and not any(with_bin.iterdir()):
        with_bin.rmdir()
    if purge:
        _purge(project, root, report)
    elif root.is_dir():
        report.add(
            "unchanged", root, "kept: configuration, catalog, audit log (--purge deletes it)"
        )
    return report


def _has_sandbox(path: Path) -> bool:
    try:
        document, _ = settings_file.read(path)
    except (SetupError, OSError):
        return False
    return "sandbox" in document


def _git_hooks(project: Path, report: Report) -> None:
    from forge_policy.ops.git_install import uninstall_git_hooks

    if not (project / ".git").exists():
        return
    try:
        changes = uninstall_git_hooks(str(project))
    except GitHookError as exc:
        report.notes.append(str(exc))
        return
    for change in changes:
        if change.action in ("removed", "updated"):
            report.add(change.action, change.path, change.detail or "forge-policy's git hook")
        elif change.action == "skipped":
            report.notes.append(f"{change.path}: {change.detail}")


def stop_worker(root: Path, wait: float = 5.0) -> str:
    """Ask every warm worker of the project (one per environment, each in its fingerprint's
    folder under ``runtime/worker``) to stop and wait for them; returns what happened (empty
    when none was running)."""
    import json
    import time

    from forge_policy.worker.client import Unavailable, exchange
    from forge_policy.worker.protocol import encode_request, folder_of, is_fingerprint

    folder = folder_of(os.fsencode(root.absolute()))
    try:
        slots = [
            folder + b"/" + name for name in sorted(os.listdir(folder)) if is_fingerprint(name)
        ]
    except OSError:
        slots = []
    pids: list[int] = []
    for slot in [folder, *slots]:
        try:
            status, out, _, _ = exchange(slot, encode_request([b"status"]), 2.0)
            pid = int(json.loads(out)["pid"]) if status == b"A" else 0
            exchange(slot, encode_request([b"stop"]), 2.0)
        except (Unavailable, OSError, ValueError, KeyError, TypeError):
            continue
        if pid:
            pids.append(pid)
    if not pids:
        return ""
    deadline = time.monotonic() + wait
    pending = set(pids)
    while pending and time.monotonic() < deadline:
        for pid in sorted(pending):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                pending.discard(pid)
        if pending:
            time.sleep(0.02)
    listed = ", ".join(str(pid) for pid in sorted(pids))
    if pending:
        return f"the warm worker was asked to stop (pid {listed})"
    return f"the warm worker stopped (pid {listed})"


def _purge(project: Path, root: Path, report: Report) -> None:
    """Delete ``root`` (never through a symlink, never a folder above the project) and the
    ``.gitignore`` lines ``init`` wrote."""
    inside = os.path.commonpath([root.absolute(), project.absolute()]) == str(project.absolute())
    if root.is_symlink():
        root.unlink()
        report.add("removed", root, "a symlink: its target is left alone")
    elif root.is_dir() and inside and root.absolute() != project.absolute():
        shutil.rmtree(root)
        report.add("removed", root, "configuration, catalog, state and audit log")
    elif root.exists():
        report.notes.append(f"{root} is outside the project: delete it yourself if you mean to")
    gitignore = project / ".gitignore"
    if not gitignore.is_file():
        return
    ours = {GITIGNORE_HEADER, OLD_GITIGNORE_HEADER}
    for target in per_machine(project, root):
        relative = os.path.relpath(target.absolute(), project.absolute()).replace(os.sep, "/")
        ours |= {relative, relative + "/"}
    text = gitignore.read_text(encoding="utf-8")
    kept = [line for line in text.splitlines(keepends=True) if line.strip() not in ours]
    if len(kept) != len(text.splitlines()):
        if "".join(kept).strip():
            gitignore.write_text("".join(kept), encoding="utf-8")
            report.add("updated", gitignore, "forge-policy's lines taken out")
        else:
            gitignore.unlink()
            report.add("removed", gitignore, "it held only forge-policy's lines")
