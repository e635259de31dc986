"""``forge-policy worker status|stop``: the project's warm worker (:mod:`forge_policy.worker`)."""

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
        "The warm worker that answers this project's hook clients (FORGE_WORKER=off disables "
        "it): status shows it, stop stops it (the next hook call starts a new one).",
    )
    sub = p.add_subparsers(dest="worker_command", metavar="SUBCOMMAND", required=True)
    q = sub.add_parser("status", help="whether the worker answers: pid, uptime, requests")
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(handler=cmd_worker_status)
    q = sub.add_parser("stop", help="stop the worker after the requests in flight")
    q.set_defaults(handler=cmd_worker_stop)


def ask(root: str, kind: bytes, timeout: float = 2.0) -> dict[str, Any] | str:
    """The worker's answer to a ``status`` or ``stop`` request, or why there is none.

    >>> import tempfile
    >>> ask(tempfile.mkdtemp(), b"status")
    'not running (no worker folder)'
    """
    import json
    import os

    from forge_policy.worker.client import Unavailable, exchange
    from forge_policy.worker.protocol import encode_request, folder_of

    try:
        status, out, _, _ = exchange(folder_of(os.fsencode(root)), encode_request([kind]), timeout)
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


def cmd_worker_status(args: Namespace, ctx: Context) -> int:
    """``forge-policy worker status [--json]``: exit 0 when it answers, 1 otherwise."""
    found = ask(ctx.config.root, b"status")
    if getattr(args, "json", False):
        ctx.print_json({"running": isinstance(found, dict), "detail": found})
    elif isinstance(found, str):
        ctx.print(f"worker: {found}")
    else:
        ctx.print(
            f"worker: answering (pid {found['pid']}, version {found['version']}, up "
            f"{found['uptime']:.0f} s, {found['requests']} requests, catalog {found['catalog']}, "
            f"idle exit after {found['idle_exit']:g} s)"
        )
        if found.get("catalog_error"):
            ctx.print(f"catalog error: {found['catalog_error']}")
    return OK if isinstance(found, dict) else REFUSED


def cmd_worker_stop(args: Namespace, ctx: Context) -> int:
    """``forge-policy worker stop``: waits until the worker is gone."""
    import os
    import time

    root = ctx.config.root
    found = ask(root, b"status")
    if isinstance(found, str):
        ctx.print(f"worker: {found}; nothing to stop")
        return OK
    pid = int(found["pid"])
    ask(root, b"stop")
    deadline = time.monotonic() + STOP_WAIT
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            ctx.print(f"worker: stopped (pid {pid})")
            return OK
        time.sleep(0.02)
    ctx.note(f"worker pid {pid} did not stop within {STOP_WAIT:g} s")
    return REFUSED
