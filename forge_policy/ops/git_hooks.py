"""Git-side entry points (SPEC §7): the catalog evaluated on git's own hooks.

``forge-policy git commit-msg FILE`` evaluates the catalog on a ``commit-msg`` event whose
``facts.commit_message`` is the message (comment lines and everything under git's scissors line
dropped): ``no-model-attribution`` refuses attribution there too. ``forge-policy git pre-commit``
evaluates it on a ``pre-commit`` event with the staged files: ``strict-tdd`` refuses production
code without tests when ``.forge/config.yaml`` sets ``testing.tdd_mode: strict``. A refusal
prints one screen on stderr and exits 1; anything else exits 0.

These events are the human's own commits, not an agent's, so ``FORGE_DISABLE`` and the seeds'
``DISABLE_*`` switches apply to every behavior here, ``bypass: never`` ones included; each
bypass that lets something through is recorded in the audit log (when the project has a
``.forge`` folder; otherwise nothing is written to the repository and state stays in memory).

:func:`install_git_hooks` writes ``commit-msg`` and ``pre-commit`` hooks that call these
commands (:mod:`forge_policy.ops.git_install`); ``.pre-commit-hooks.yaml`` at the repository root
offers the same two checks to the ``pre-commit`` framework.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

from forge_policy.config.env import LEGACY_DISABLE
from forge_policy.config.project import load_project_config
from forge_policy.errors import GitHookError, ProjectConfigError
from forge_policy.ops.git_install import HookChange, install_git_hooks

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import IO, Any

    from forge_policy.config.env import Config
    from forge_policy.model import Decision

__all__ = [
    "SEED_ALIASES",
    "GitHookError",
    "HookChange",
    "ProjectConfigError",
    "install_git_hooks",
    "load_project_config",
    "read_commit_message",
    "run_commit_msg",
    "run_pre_commit",
]

COMMIT_MSG, PRE_COMMIT = "commit-msg", "pre-commit"
#: The seeds' environment switches and the behaviors each one disables (SPEC §7).
SEED_ALIASES = LEGACY_DISABLE
NO_VERIFY = "To skip forge-policy's git checks for one commit: git commit --no-verify"
_MAX_MESSAGE = 1 << 20


def read_commit_message(path: str, comment_char: str = "#") -> str:
    """The message in a ``commit-msg`` file: comment lines dropped, and everything from git's
    scissors line on (``git commit -v`` puts the diff there).

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", delete=False) as f:
    ...     _ = f.write("feat: x\\n# Please enter...\\n# ------------------------ >8 ---"
    ...                 "---------------------\\n+ claude\\n")
    >>> read_commit_message(f.name)
    'feat: x'
    """
    with open(path, "rb") as handle:
        data = handle.read(_MAX_MESSAGE + 1)[:_MAX_MESSAGE]
    lines: list[str] = []
    scissors = f"{comment_char} ------------------------ >8 ------------------------"
    for line in data.decode("utf-8", "replace").splitlines():
        if line.rstrip() == scissors:
            break
        if not line.startswith(comment_char):
            lines.append(line)
    return "\n".join(lines).strip("\n")


def run_commit_msg(
    path: str,
    *,
    cwd: str | None = None,
    environ: Mapping[str, str] | None = None,
    err: IO[str] | None = None,
) -> int:
    """``forge-policy git commit-msg FILE``: 0 to accept the message, 1 to refuse it."""
    env, stream, root = _context(cwd, environ, err)
    try:
        message = read_commit_message(path, _comment_char(root, env))
    except OSError as exc:
        return _failure(env, stream, f"cannot read the commit message file {path}: {exc}")
    return _run(COMMIT_MSG, root, {"commit_message": message}, env, stream)


def run_pre_commit(
    *,
    cwd: str | None = None,
    environ: Mapping[str, str] | None = None,
    err: IO[str] | None = None,
) -> int:
    """``forge-policy git pre-commit``: 0 to let the commit go on, 1 to refuse it."""
    from forge_policy.facts import staged_files

    env, stream, root = _context(cwd, environ, err)
    return _run(PRE_COMMIT, root, {"staged_files": staged_files(root)}, env, stream)


def _context(
    cwd: str | None, environ: Mapping[str, str] | None, err: IO[str] | None
) -> tuple[Mapping[str, str], IO[str], str]:
    env = os.environ if environ is None else environ
    here = os.path.abspath(cwd or os.getcwd())
    return env, sys.stderr if err is None else err, _toplevel(here, env) or here


def _git(args: list[str], cwd: str, env: Mapping[str, str]) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env={**env, "GIT_OPTIONAL_LOCKS": "0"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.decode("utf-8", "replace").strip() if done.returncode == 0 else None


def _toplevel(cwd: str, env: Mapping[str, str]) -> str | None:
    return _git(["rev-parse", "--show-toplevel"], cwd, env) or None


def _comment_char(root: str, env: Mapping[str, str]) -> str:
    value = _git(["config", "--get", "core.commentChar"], root, env) or "#"
    return value if len(value) == 1 else "#"  # "auto" and odd values: git's default


def _run(
    event_name: str, root: str, payload: dict[str, Any], env: Mapping[str, str], err: IO[str]
) -> int:
    from forge_policy.config.env import Config
    from forge_policy.errors import ConfigError, ForgePolicyError

    try:
        config = Config.from_env(env, cwd=root)
        if event_name == PRE_COMMIT:
            load_project_config(config.root)  # a broken config file is reported, not ignored
        decision = _decide(config, event_name, root, payload, err)
    except (ConfigError, ProjectConfigError, ForgePolicyError, OSError) as exc:
        return _failure(env, err, _describe(exc))
    return _report(decision, err)


def _decide(
    config: Config, event_name: str, root: str, payload: dict[str, Any], err: IO[str]
) -> Decision:
    from forge_policy.catalog.behavior import Behavior
    from forge_policy.catalog.catalog import Catalog
    from forge_policy.engine.evaluator import Evaluator
    from forge_policy.model import Event

    # no .forge folder: write nothing into the repository (the catalog cache goes to the user's
    # cache folder only, state stays in memory)
    local = config.store == "file" and not os.path.isdir(config.root)
    catalog = config.load_catalog()  # without the folder, cache_paths() leaves the project out
    disable = dict(config.disable)
    for variable, ids in SEED_ALIASES.items():
        if config.environ.get(variable, "").strip().lower() in ("true", "1"):
            for behavior_id in ids:
                disable.setdefault(behavior_id, variable)
    # git events are not agent events: bypass: never does not hold here (SPEC §7)
    relaxed = Catalog(
        (
            Behavior({**b.spec, "bypass": "allowed"}) if b.id in disable else b
            for b in catalog.behaviors
        ),
        root=catalog.root,
        sources=catalog.sources,
    )
    if local:
        evaluator = Evaluator(relaxed, profile=config.profile, disable=disable)
    else:
        evaluator = config.build_evaluator(catalog=relaxed, disable=disable)
    for line in evaluator.bypass.notes if evaluator.bypass is not None else ():
        err.write(f"forge-policy: {line}\n")
    digest = hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    event = Event(
        event_name,
        f"git-{digest}",
        cwd=root,
        harness="git",
        payload={"hook_event_name": event_name, "forge_root": config.root, **payload},
    )
    decision = evaluator.evaluate(event)  # records its bypasses
    for record in decision.bypasses:
        err.write(
            f"forge-policy: {record['behavior_id']} would have refused this commit; "
            f"bypassed by {record['variable']} (recorded in the audit log)\n"
        )
    return decision


def _report(decision: Decision, err: IO[str]) -> int:
    from forge_policy.secrets import redact

    for line in decision.diagnostics:
        err.write(f"forge-policy: {redact(line)}\n")
    blocking = decision.blocking
    if blocking is None:
        for message in decision.messages:
            err.write(f"forge-policy: {message}\n")
        return 0
    lines = [f"forge-policy: commit refused by {blocking.behavior_id}"]
    for line in decision.message.splitlines():
        if line.strip() and line.strip() != "This block cannot be overridden.":
            lines.append(f"  {line}")
    lines.extend(_offending(blocking))
    lines.append(NO_VERIFY)
    err.write("\n".join(lines) + "\n")
    return 1


def _offending(violation: Any) -> list[str]:
    """``Offending line N: "…"``: the first line of the text a regex condition matched."""
    from forge_policy.catalog.dsl import compile_regex
    from forge_policy.secrets import redact

    for condition in violation.conditions:
        if condition.operator != "regex_match" or not isinstance(condition.actual, str):
            continue
        regex = compile_regex(str(condition.value))
        for number, line in enumerate(condition.actual.splitlines(), 1):
            if regex.search(line) is not None:
                shown = redact(line.strip())  # before the cut, which could hide a secret
                shown = shown if len(shown) <= 100 else shown[:99] + "…"
                return [f'  Offending line {number}: "{shown}"']
    return []


def _failure(env: Mapping[str, str], err: IO[str], problem: str) -> int:
    from forge_policy.config.env import on_error_from
    from forge_policy.errors import ConfigError

    try:
        on_error = on_error_from(env)
    except ConfigError:
        on_error = "deny"
    err.write(f"forge-policy: {problem}\n")
    if on_error == "allow":
        err.write("forge-policy: commit allowed unchecked (FORGE_ON_ERROR=allow)\n")
        return 0
    err.write("forge-policy: commit refused: nothing was checked (FORGE_ON_ERROR=deny)\n")
    err.write(NO_VERIFY + "\n")
    return 1


def _describe(exc: BaseException) -> str:
    from forge_policy.errors import CatalogError

    if isinstance(exc, CatalogError) and exc.issues:
        return f"catalog does not load: {exc.issues[0]}"
    return " ".join(str(exc).split()) or type(exc).__name__
