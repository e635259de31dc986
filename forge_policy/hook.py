"""The hook process: one harness event on stdin, one decision on stdout (SPEC §8, §9).

The straight line (:func:`respond`): read stdin (at most :data:`MAX_INPUT` bytes) → parse the
JSON object → the harness adapter's :meth:`~forge_policy.harness.base.HookAdapter.to_event` →
:meth:`~forge_policy.Evaluator.evaluate` (the :class:`~forge_policy.config.env.Config` from
``FORGE_*``, the catalog through the compiled cache; the store and the audit log written) →
the floor (:mod:`forge_policy.floor.rewrite`: an allowed shell call rewritten to run under
forge_policy's own sandbox where the harness's does not hold it, the floor audited) → the
adapter's :meth:`~forge_policy.harness.base.HookAdapter.render`. :func:`answer` is that line for one
Claude Code payload.

``--harness NAME`` (:mod:`forge_policy.harness.registry`, default ``claude-code``) chooses the
adapter at both ends: it reads the payload into an :class:`~forge_policy.Event` in the catalog's
vocabulary, words the decision (stdout and exit code), and gives the ``FORGE_ON_ERROR`` answer
(its ``failure``). ``--event NAME`` names the event for harnesses whose payload does not
(Copilot CLI's camelCase entries, Antigravity CLI).

A project catalog (or ``floor:`` in ``config.yaml``) that stops loading does not stop the line:
the last one that loaded keeps enforcing, and every answer carries a notice naming the first
error's ``file:line`` and ``forge-policy validate`` (SPEC §10,
:mod:`forge_policy.config.last_good`).
Anything that stops the line — unreadable input, a bad variable, a broken catalog with no last
known good one, any unexpected exception — gives one diagnostic line on stderr and the
``FORGE_ON_ERROR`` answer: ``deny`` (the default) refuses events at which a tool call can still
be refused, naming the problem (with ``file:line`` and the recovery step for a broken catalog or
configuration); every other event, and ``allow``, lets the event through with a
``systemMessage`` telling the user that forge-policy could not decide. Nothing is written to
state when the line stops before evaluation, and no traceback is ever printed. The exit code is
the adapter's (0 for every harness so far: each one reads its decision from JSON on exit 0), and
2 for a command-line usage error.

**The deadline** (SPEC §9, ``FORGE_HOOK_DEADLINE``, 10 s by default, well below the timeout
``init`` writes for the harness): the whole call answers within it, counted from the start of
the hook process (the warm-worker client passes its own start, so the worker's wait counts too).
Lock waits and fact runs end before it (:mod:`forge_policy._budget`); a hard block waits for no
lock at all (:mod:`forge_policy.engine.evaluator`).

A payload without ``session_id`` is evaluated under a stable id derived from its
``transcript_path`` (else its ``cwd``), and an audit record of kind ``diagnostic`` says so.

This module is the hook's hot path: it imports no argparse, no typing, no dataclasses, and (when
the catalog cache is warm) no YAML parser; nor OpenTelemetry, unless ``FORGE_OTEL=hook`` asks
this in-process hook to export its decision (:mod:`forge_policy.telemetry`), and then only
after the answer is written: the decision is noted, and exported within a bound.

>>> import io
>>> out = io.StringIO()
>>> main(io.BytesIO(b'{"hook_event_name": "PreToolUse"'), out, io.StringIO(), {}, [])
0
>>> print(out.getvalue())  # doctest: +ELLIPSIS
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",...
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

from forge_policy._budget import hook_deadline
from forge_policy._infra import attrs_code
from forge_policy._infra.lean_attrs import load as lean_attrs
from forge_policy._lazy import kept
from forge_policy.errors import ConfigError, HookInputError, UnknownEventError
from forge_policy.harness.payload import MAX_INPUT, check_size, parse, sniff_event
from forge_policy.worker.protocol import USAGE, HookOptions, OptionsError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import IO, Any

    from forge_policy.audit.base import AuditSink
    from forge_policy.engine.evaluator import DecisionObserver, Evaluator
    from forge_policy.harness.base import HookAdapter
    from forge_policy.model import Decision, Event


def main(
    stdin: IO[Any] | None = None,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
    environ: Mapping[str, str] | None = None,
    argv: Sequence[str] | None = None,
    *,
    started: float | None = None,
) -> int:
    """Run the hook once; return the process exit code (the adapter's, or 2 for a usage error).

    ``argv`` are the arguments after ``hook`` (default: ``sys.argv[1:]``): ``--harness NAME``
    (default ``claude-code``), ``--event NAME`` (the harness's event, for payloads that do not
    name it) and ``--via-serve`` (ask the warm ``forge-policy serve`` first; evaluate here when it
    does not answer; Claude Code payloads only: the server answers in Claude Code's format, so
    for other harnesses the flag is noted on stderr and the event is evaluated here).
    ``started``: the :func:`time.monotonic` instant the hook's deadline counts from (default:
    once the event is read; the warm-worker client passes the instant it read it).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr
    env = os.environ if environ is None else environ
    from forge_policy.harness.registry import HARNESSES

    try:
        options = HookOptions.parse(args, HARNESSES)
    except OptionsError as exc:
        print(exc, file=stderr)
        return 2
    if options.help:
        print(USAGE, file=stdout)
        return 0
    harness, event = options.harness, options.event
    lean_attrs()  # before anything imports attrs: without inspect and platform
    text: str | None = None
    code = 0
    # FORGE_OTEL=hook: the decisions, noted for the export after the answer
    noted: list[tuple[Decision, float, int]] | None = None
    if env.get("FORGE_OTEL"):  # unset, the usual case: the switch's module is not even imported
        from forge_policy.telemetry.switch import mode

        if mode(env) == "hook":
            noted = []
    try:
        raw = _read(stdin)
        started = time.monotonic() if started is None else started
    except Exception as exc:  # an unreadable stdin is bad input like any other
        text, code = _failure(harness, event, _on_error(env), _describe(exc), stderr)
    else:
        if options.via_serve:
            if harness == "claude-code":
                text = _via_serve(raw, env, stderr)
            else:
                with contextlib.suppress(OSError, ValueError):
                    print(
                        f"forge-policy: --via-serve answers Claude Code payloads only; "
                        f"evaluating this {harness} event in-process",
                        file=stderr,
                    )
        if text is None:
            text, code = respond(
                raw,
                harness=harness,
                event=event,
                environ=env,
                stderr=stderr,
                deadline=(time.monotonic() if started is None else started)
                + _deadline_seconds(env),
                deadline_seconds=_deadline_seconds(env),
                observers=() if noted is None else (_noter(noted),),
            )
    try:
        _write(stdout, text)
    except (OSError, ValueError):
        return 1
    finally:
        if noted is not None:  # the answer is out: the export costs the harness a bounded wait
            _export(noted, started, env, stderr)
    attrs_code.save()  # the answer is out: what attrs compiled here, for the next process
    return code


def _noter(noted: list[tuple[Decision, float, int]]) -> DecisionObserver:
    """An observer that notes each decision for :func:`_export`."""
    return lambda decision, seconds: noted.append((decision, seconds, time.time_ns()))


def _export(
    noted: list[tuple[Decision, float, int]],
    started: float | None,
    env: Mapping[str, str],
    stderr: IO[str],
) -> None:
    """``FORGE_OTEL=hook``, once the answer is written: export the noted decisions and the
    answer's latency within :data:`~forge_policy.telemetry.HOOK_FLUSH_SECONDS`; when the export
    cannot start (the extra missing), one line on stderr."""
    try:
        from forge_policy import telemetry

        otel = telemetry.start(env, "hook")
        if otel is None:
            return
        for decision, seconds, end in noted:
            otel.recorder.record(decision, seconds, end)
        if started is not None and noted:
            otel.answered(time.monotonic() - started)
        otel.close(telemetry.HOOK_FLUSH_SECONDS)
    except Exception as exc:  # the answer is written: nothing here can change it
        with contextlib.suppress(OSError, ValueError):
            print(f"forge-policy: telemetry off: {_describe(exc)}", file=stderr)


def _write(stdout: IO[str], text: str | None) -> None:
    """UTF-8 whatever the console's encoding (Claude Code reads UTF-8; a cp1252 stdout would
    fail on the first non-Latin character and lose the decision)."""
    if text:
        buffer = getattr(stdout, "buffer", None)
        if buffer is not None:
            stdout.flush()
            buffer.write(text.encode("utf-8", "surrogatepass") + b"\n")
            buffer.flush()
            return
        stdout.write(text + "\n")
    stdout.flush()


def answer(
    raw: bytes,
    *,
    environ: Mapping[str, str] | None = None,
    stderr: IO[str] | None = None,
    evaluator: Evaluator | None = None,
) -> str:
    """What the hook prints for one raw payload (``""`` for nothing to say); never raises.

    ``evaluator`` lets a long-lived process (``forge-policy serve``) reuse a warm evaluator;
    by default it is built from ``environ`` for this payload (an evaluator records its own
    ``FORGE_DISABLE`` bypasses).

    >>> import tempfile
    >>> env = {"FORGE_ROOT": tempfile.mkdtemp(), "FORGE_STORE": "memory"}
    >>> answer(b'{"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",'
    ...        b' "tool_input": {"command": "git push --force"}}', environ=env)[:79]
    '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"'
    """
    return respond(raw, environ=environ, stderr=stderr, evaluator=evaluator)[0]


def respond(
    raw: bytes,
    *,
    harness: str = "claude-code",
    event: str = "",
    environ: Mapping[str, str] | None = None,
    stderr: IO[str] | None = None,
    evaluator: Evaluator | None = None,
    deadline: float | None = None,
    deadline_seconds: float | None = None,
    observers: Sequence[DecisionObserver] = (),
) -> tuple[str, int]:
    """``(stdout text, exit code)`` of the hook for one raw payload of ``harness``; never
    raises. ``event`` is the harness's event name from ``--event`` (it wins over the payload's
    own, which some harnesses leave out). See :func:`answer` for ``evaluator``. ``deadline``:
    the :func:`time.monotonic` instant by which it answers (default: ``FORGE_HOOK_DEADLINE``
    seconds from now), ``deadline_seconds`` long (default: the time left before it).
    ``observers``: the decision observers of the evaluator built here (not of ``evaluator``).

    >>> import tempfile
    >>> env = {"FORGE_ROOT": tempfile.mkdtemp(), "FORGE_STORE": "memory"}
    >>> respond(b'{"session_id": "s", "hook_event_name": "BeforeTool", "tool_name":'
    ...         b' "run_shell_command", "tool_input": {"command": "git push --force"}}',
    ...         harness="gemini", environ=env)[0][:19]
    '{"decision":"deny",'
    """
    env = os.environ if environ is None else environ
    err = sys.stderr if stderr is None else stderr
    if deadline is None:
        deadline_seconds = _deadline_seconds(env)
        deadline = time.monotonic() + deadline_seconds
    with hook_deadline(deadline, deadline_seconds):
        return _respond(raw, harness, event, env, err, evaluator, observers)


def _respond(
    raw: bytes,
    harness: str,
    event: str,
    env: Mapping[str, str],
    err: IO[str],
    evaluator: Evaluator | None,
    observers: Sequence[DecisionObserver] = (),
) -> tuple[str, int]:
    adapter = _adapter(harness)
    event_name = event
    on_error = "deny"
    sniff = False  # input that is too large or no JSON: its event name is sniffed from the bytes
    try:
        on_error = _on_error(env)
        sniff = True  # sniffed on failure only: the regex costs a parsed call nothing
        check_size(raw)
        payload = parse(raw)
        sniff = False
        event_name = event or _own_event_name(payload)  # parsed: only an object's own counts
        notes: list[dict[str, Any]] = []
        try:
            hook_event = adapter.to_event(_object(payload), event, notes=notes)
        except UnknownEventError:
            if not _carries_call(payload):
                return "", 0  # a newer CLI's lifecycle event: nothing to refuse, said nothing
            raise  # a call under a name no behavior reads: refused (the adapter's failure)
        decision, audit = _evaluate(hook_event, notes, env, err, evaluator, observers)
        decision = _floor(decision, harness, payload, env, err, audit)
        return adapter.render(decision, hook_event)
    except Exception as exc:  # the hook never crashes: it fails closed, with one line
        if sniff:
            event_name = event or sniff_event(raw)
        return _failure(harness, event_name, on_error, _describe(exc), err)


def _carries_call(payload: object) -> bool:
    """Whether a payload names a tool call (``tool_name`` or ``tool_input``): one under an event
    name the engine does not know is refused, never passed unread."""
    return isinstance(payload, dict) and any(
        payload.get(key) not in (None, "", {}) for key in ("tool_name", "tool_input")
    )


def _own_event_name(payload: object) -> str:
    """The event a parsed payload names itself (``""`` when it is no object or names none)."""
    name = payload.get("hook_event_name") if isinstance(payload, dict) else None
    return name if isinstance(name, str) else ""


def _object(payload: object) -> dict[str, Any]:
    """The payload, which must be a JSON object."""
    if not isinstance(payload, dict):
        kind = "an array" if isinstance(payload, list) else type(payload).__name__
        raise HookInputError(f"input must be a JSON object, got {kind}")
    return payload


def _deadline_seconds(env: Mapping[str, str]) -> float:
    """``FORGE_HOOK_DEADLINE`` (its default when unusable: the evaluation reports the error)."""
    from forge_policy.config.env import DEFAULT_HOOK_DEADLINE, hook_deadline_from

    try:
        return hook_deadline_from(env)
    except ConfigError:
        return DEFAULT_HOOK_DEADLINE


@kept
def _on_error_from() -> Any:
    from forge_policy.config.env import on_error_from

    return on_error_from


@kept
def _applies() -> Any:
    from forge_policy.floor.rewrite import applies

    return applies


def _on_error(env: Mapping[str, str]) -> str:
    on_error_from = _on_error_from()
    try:
        choice: str = on_error_from(env)
        return choice
    except ConfigError:
        return "deny"  # and the same error stops the evaluation, which reports it


def _via_serve(raw: bytes, env: Mapping[str, str], stderr: IO[str]) -> str | None:
    """The warm server's answer, or None (after a note on stderr) when it gives none.

    Only an answer the server signed for this request and that is a hook answer counts
    (:func:`forge_policy.serve.ask`); any other outcome, whatever it is, leaves the decision to
    the in-process evaluation: a broken transport never becomes an allow.
    """
    try:
        from forge_policy.config.env import Config
        from forge_policy.serve import ask

        root = Config.from_env(env).root
    except Exception:
        return None  # the in-process evaluation reports the problem
    try:
        return ask(raw, root)
    except Exception as exc:  # ServeUnavailable, or a bug: never a traceback, never an allow
        with contextlib.suppress(OSError, ValueError):
            print(f"forge-policy: serve: {_describe(exc)}; evaluating in-process", file=stderr)
        return None


def _read(stdin: IO[Any]) -> bytes:
    """At most one byte more than :data:`MAX_INPUT` (so that excess is seen)."""
    stream = getattr(stdin, "buffer", stdin)
    data = stream.read(MAX_INPUT + 1)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return bytes(data)


def _evaluate(
    event: Event,
    notes: list[dict[str, Any]],
    env: Mapping[str, str],
    stderr: IO[str],
    warm: Evaluator | None,
    observers: Sequence[DecisionObserver] = (),
) -> tuple[Decision, AuditSink]:
    """The decision on ``event`` and the audit sink it was recorded in; ``notes`` (the derived
    session id's record, then the bypass's) are audited beside it."""
    for note in notes:
        print(f"forge-policy: {note['message']}", file=stderr)
    if warm is not None:
        evaluator = warm
    else:  # the warm worker passes its evaluator: the import is the in-process hook's
        from forge_policy.config.env import Config

        evaluator = Config.from_env(env).build_evaluator(observers=observers)  # and FORGE_DISABLE
        for line in evaluator.bypass.notes if evaluator.bypass is not None else ():
            print(f"forge-policy: {line}", file=stderr)
    decision = evaluator.evaluate(event)  # records its bypasses too
    for line in decision.notices:  # a last known good catalog enforcing: on every call
        print(line, file=stderr)
    if notes:
        try:
            from forge_policy.audit.base import write

            write(evaluator.audit, notes)
        except Exception as exc:  # the decision stands; the record is reported, not lost
            print(f"forge-policy: audit record not written: {_describe(exc)}", file=stderr)
    if decision.diagnostics:
        from forge_policy.secrets import redact

        for line in decision.diagnostics:
            print(f"forge-policy: {redact(line)}", file=stderr)
    return decision, evaluator.audit


def _floor(
    decision: Decision,
    harness: str,
    payload: Any,
    env: Mapping[str, str],
    stderr: IO[str],
    audit: AuditSink,
) -> Decision:
    """The decision with its floor applied (SPEC §13, :mod:`forge_policy.floor.rewrite`): an
    allowed shell call rewritten to run under forge_policy's own sandbox where the harness's
    does not hold it, and the floor it runs under audited beside the decision (the original
    command). Only a shell call before it runs is concerned; anything else passes untouched."""
    applies = _applies()
    if not applies(decision):
        return decision
    from forge_policy.config.env import Config
    from forge_policy.floor.rewrite import apply
    from forge_policy.harness.common import native_event

    config = Config.from_env(env)
    decision, records = apply(
        decision,
        harness=harness,
        project=config.project_dir,
        forge_root=config.root,
        environ=env,
        tool_input=payload.get("tool_input") if isinstance(payload, dict) else None,
        native_event=native_event(decision.event),
    )
    if records:
        try:
            from forge_policy.audit.base import write

            write(audit, records)
        except Exception as exc:  # the decision stands; the record is reported, not lost
            print(f"forge-policy: audit record not written: {_describe(exc)}", file=stderr)
    return decision


@kept
def _get() -> Any:
    from forge_policy.harness.registry import get

    return get


def _adapter(harness: str) -> HookAdapter:
    """The adapter of ``harness`` (its module imported now: only the one in use is loaded)."""
    get = _get()
    adapter: HookAdapter = get(harness).adapter
    return adapter


def _describe(exc: BaseException) -> str:
    """One line naming the problem; a broken catalog gives its first issue's file:line."""
    from forge_policy.errors import CatalogError, ForgePolicyError, ProjectConfigError
    from forge_policy.secrets import redact

    if isinstance(exc, CatalogError) and exc.issues:
        from forge_policy.config.last_good import recovery

        more = len(exc.issues) - 1
        extra = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        # the note says why no last known good catalog enforces instead (SPEC §10)
        why = "; ".join(getattr(exc, "__notes__", ()))
        text = f"catalog does not load: {exc.issues[0]}{extra}{f'; {why}' if why else ''}"
        text = recovery(" ".join(redact(text).split()))
        return text if len(text) <= 600 else text[:599] + "…"
    elif isinstance(exc, ProjectConfigError):
        from forge_policy.config.last_good import recovery

        problems = str(exc).splitlines() or [""]
        more = len(problems) - 1
        extra = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        # the note says why no last known good configuration enforces instead (SPEC §10)
        why = "; ".join(getattr(exc, "__notes__", ()))
        text = f"configuration does not load: {problems[0]}{extra}{f'; {why}' if why else ''}"
        text = recovery(" ".join(redact(text).split()))
        return text if len(text) <= 600 else text[:599] + "…"
    elif isinstance(exc, HookInputError | ForgePolicyError):
        text = str(exc)
    else:
        text = f"internal error: {type(exc).__name__}: {exc}"
    text = " ".join(redact(text).split())  # redacted first: a PEM key spans lines
    return text if len(text) <= 400 else text[:399] + "…"


def _failure(
    harness: str, event_name: str, on_error: str, problem: str, stderr: IO[str]
) -> tuple[str, int]:
    """The ``FORGE_ON_ERROR`` answer (the harness adapter's) for an event that could not be
    decided; ``event_name`` is the harness's own name of it, or ``""``."""
    with contextlib.suppress(OSError, ValueError):
        print(f"forge-policy: {problem}", file=stderr)
    return _adapter(harness).failure(event_name, on_error, problem)


if __name__ == "__main__":
    sys.exit(main())
