"""``forge-policy worker status|stop|settle``: the project's warm workers
(:mod:`forge_policy.worker`).

One worker runs per environment that called the hook (:mod:`forge_policy.worker.server`), so
``status`` lists each with what tells their environments apart, and then the calls the hook
clients evaluated in-process although the worker was on, counted by reason (the client records
them in ``refusals.log``: a worker that silently goes unused shows there).
"""

from __future__ import annotations

from forge_policy.cli.context import OK, REFUSED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Callable
    from typing import Any

    from forge_policy.cli.context import Context

STOP_WAIT = 10.0


def register(command: Callable[..., Any]) -> None:
    """Add ``worker`` and its subcommands to the parser."""
    p = command(
        "worker",
        cmd_worker_status,
        "The warm workers that answer this project's hook clients, one per environment "
        "(FORGE_WORKER=off disables them, FORGE_WORKER_MAX bounds them): status shows them and "
        "why calls were evaluated in-process, stop stops them (the next hook call starts one).",
    )
    sub = p.add_subparsers(dest="worker_command", metavar="SUBCOMMAND", required=True)
    q = sub.add_parser(
        "settle",
        help="wait until no worker has a request in flight: a warm answer is sent before its "
        "session state and seen record are written (tests that read them right after a call)",
    )
    q.add_argument(
        "--timeout", type=float, default=STOP_WAIT, help="seconds to wait at most (default 10)"
    )
    q.set_defaults(handler=cmd_worker_settle)
    q = sub.add_parser(
        "status",
        help="each worker (environment, pid, age, requests) and the calls evaluated in-process "
        "with their reason and count",
    )
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(handler=cmd_worker_status)
    q = sub.add_parser("stop", help="stop every worker after the requests in flight")
    q.set_defaults(handler=cmd_worker_stop)


def ask_slot(slot: bytes, kind: bytes, timeout: float = 2.0) -> dict[str, Any] | str:
    """The answer of the worker in ``slot`` (its folder) to a ``status`` or ``stop`` request, or
    why there is none."""
    import json

    from forge_policy.worker.client import Unavailable, exchange
    from forge_policy.worker.protocol import encode_request

    try:
        status, out, _, _ = exchange(slot, encode_request([kind]), timeout)
    except Unavailable as exc:
        return f"not running ({exc.reason})" if exc.start else f"not answering: {exc.reason}"
    if status != b"A":
        return f"not answering: refused: {out.decode('utf-8', 'replace')}"
    if kind != b"status":
        return {"answer": out.decode("utf-8", "replace")}
    try:
        answer: dict[str, Any] = json.loads(out)
    except ValueError:
        return "not answering: malformed status"
    return answer


def census(root: str, kind: bytes = b"status") -> list[tuple[str, dict[str, Any] | str]]:
    """``(fingerprint, answer)`` of every worker folder of ``root``, most recently used first
    (:func:`ask_slot` with ``kind``)."""
    import os

    from forge_policy.worker.protocol import folder_of, is_fingerprint

    folder = folder_of(os.fsencode(root))
    try:
        names = sorted(name for name in os.listdir(folder) if is_fingerprint(name))
    except OSError:
        return []
    found = [(os.fsdecode(n), ask_slot(folder + b"/" + n, kind)) for n in names]
    return sorted(found, key=lambda item: _idle(item[1]))


def _idle(answer: dict[str, Any] | str) -> float:
    if isinstance(answer, dict):
        try:
            return float(answer.get("idle", 0.0))
        except (TypeError, ValueError):
            return 0.0
    return float("inf")


def settle(root: str, timeout: float = 10.0) -> bool:
    """Wait until no worker of ``root`` has a request in flight but this one's ``status``: a
    warm answer is sent before its session state and ``seen`` record are written
    (:mod:`forge_policy._infra.answer_first`), so a reader of the state or the audit log that
    must see a call's writes (a test, right after the hook returned) waits here first, as the
    session's next call waits for its lock. False when ``timeout`` passed first.

    >>> import tempfile
    >>> settle(tempfile.mkdtemp())  # no worker: nothing to wait for
    True
    """
    import time

    deadline = time.monotonic() + timeout
    while True:
        busy = [a for _, a in census(root) if isinstance(a, dict) and a.get("in_flight", 0) > 1]
        if not busy:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)


def ask(root: str, kind: bytes, timeout: float = 2.0) -> dict[str, Any] | str:
    """The most recently used worker's answer to ``status`` (``stop`` stops every worker), or
    why none answers.

    >>> import tempfile
    >>> ask(tempfile.mkdtemp(), b"status")
    'not running (no worker folder)'
    """
    import os

    from forge_policy.worker.protocol import folder_of, private_folder

    if not private_folder(folder_of(os.fsencode(root))):
        return ask_slot(folder_of(os.fsencode(root)) + b"/0", kind, timeout)  # says why
    found = census(root, kind)
    answers = [answer for _, answer in found if isinstance(answer, dict)]
    if answers:
        return answers[0] if kind == b"status" else {"answer": "stopping", "stopped": len(answers)}
    return found[0][1] if found else "not running (no worker)"


def refusals(root: str) -> dict[str, Any]:
    """The calls evaluated in-process although the worker was on: ``since`` (unix time of the
    first recorded) and ``reasons`` (reason → count, most frequent first)."""
    import os

    from forge_policy.worker.protocol import REFUSALS, folder_of

    path = os.path.join(os.fsdecode(folder_of(os.fsencode(root))), os.fsdecode(REFUSALS))
    counts: dict[str, int] = {}
    since: float | None = None
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            lines = file.read(1 << 22).splitlines()
    except OSError:
        lines = []
    for line in lines:
        stamp, _, reason = line.partition(" ")
        if not stamp.isdigit() or not reason:
            continue
        since = float(stamp) if since is None else since
        counts[reason] = counts.get(reason, 0) + 1
    ordered = dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
    return {"since": since, "reasons": ordered}


def _summary(answer: dict[str, Any], others: list[dict[str, Any]], mine: dict[str, str]) -> str:
    """What tells this worker's environment apart: its working directory, the shown variables
    and the names whose value differs from another worker's."""
    env: dict[str, str] = answer.get("environment") or {}
    parts = [f"cwd {answer.get('cwd', '?')}"]
    for name in ("CLAUDE_PROJECT_DIR", "FORGE_ROOT", "FORGE_PROFILE"):
        if name in env:
            parts.append(f"{name}={env[name]}")
    if "CLAUDE_PROJECT_DIR" not in env:
        parts.append("no CLAUDE_PROJECT_DIR")
    differing: set[str] = set()
    for other in others:
        theirs = other.get("environment") or {}
        differing |= {n for n in set(env) | set(theirs) if env.get(n) != theirs.get(n)}
    if differing:
        parts.append("differs in " + ", ".join(sorted(differing)))
    if env == mine:
        parts.append("this shell's environment")
    return "; ".join(parts)


def cmd_worker_status(args: Namespace, ctx: Context) -> int:
    """``forge-policy worker status [--json]``: exit 0 when a worker answers, 1 otherwise."""
    import os
    import time

    from forge_policy.worker.protocol import MAX_WORKERS, relevant
    from forge_policy.worker.server import environment

    root = ctx.config.root
    found = census(root)
    live = [(fp, answer) for fp, answer in found if isinstance(answer, dict)]
    counted = refusals(root)
    if getattr(args, "json", False):
        first = live[0][1] if live else (found[0][1] if found else ask(root, b"status"))
        ctx.print_json(
            {
                "running": bool(live),
                "detail": first,
                "workers": [{"fingerprint": fp, **answer} for fp, answer in live],
                "refusals": counted,
            }
        )
        return OK if live else REFUSED
    bound = os.environ.get("FORGE_WORKER_MAX", "").strip()
    bound = bound if bound.isdigit() and int(bound) > 0 else str(MAX_WORKERS)
    if not live:
        ctx.print(f"worker: {ask(root, b'status')}")
    else:
        ctx.print(
            f"worker: {len(live)} answering, one per environment (at most {bound}; the least "
            "recently used stops), most recently used first"
        )
        mine = environment(relevant(os.environb))
        for fp, answer in live:
            others = [other for key, other in live if key != fp]
            ctx.print(
                f"  {fp}  pid {answer['pid']}, version {answer['version']}, up "
                f"{answer['uptime']:.0f} s, {answer['requests']} requests, idle "
                f"{answer.get('idle', 0):.0f} s (exits after {answer['idle_exit']:g} s), "
                f"catalog {answer['catalog']}"
            )
            ctx.print(f"    {_summary(answer, others, mine)}")
            if answer.get("catalog_error"):
                ctx.print(f"    catalog error: {answer['catalog_error']}")
    if counted["reasons"]:
        since = time.strftime("%Y-%m-%d %H:%M", time.localtime(counted["since"]))
        total = sum(counted["reasons"].values())
        calls = "1 call" if total == 1 else f"{total} calls"
        ctx.print(
            f"evaluated in-process although the worker is on: {calls} since {since} (count, reason)"
        )
        for reason, n in counted["reasons"].items():
            ctx.print(f"  {n:>5}  {reason}")
    return OK if live else REFUSED


def cmd_worker_stop(args: Namespace, ctx: Context) -> int:
    """``forge-policy worker stop``: stops every worker and waits until they are gone."""
    import os
    import time

    root = ctx.config.root
    live = [(fp, a) for fp, a in census(root) if isinstance(a, dict)]
    if not live:
        ctx.print(f"worker: {ask(root, b'status')}; nothing to stop")
        return OK
    from forge_policy.worker.protocol import folder_of

    for fp, _ in live:
        ask_slot(folder_of(os.fsencode(root)) + b"/" + os.fsencode(fp), b"stop")
    deadline = time.monotonic() + STOP_WAIT
    pending = {int(answer["pid"]) for _, answer in live}
    while pending and time.monotonic() < deadline:
        for pid in sorted(pending):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                pending.discard(pid)
                ctx.print(f"worker: stopped (pid {pid})")
        if pending:
            time.sleep(0.02)
    for pid in sorted(pending):
        ctx.note(f"worker pid {pid} did not stop within {STOP_WAIT:g} s")
    return REFUSED if pending else OK


def cmd_worker_settle(args: Namespace, ctx: Context) -> int:
    """``forge-policy worker settle``: waits until the workers have written what follows their
    answers (exit 1 when ``--timeout`` passed first)."""
    if settle(ctx.config.root, args.timeout):
        return OK
    ctx.note(f"worker: still busy after {args.timeout:g} s")
    return REFUSED
