"""``forge-policy``: the command line of forge_policy (the overview is
:data:`forge_policy.cli.context.OVERVIEW`, printed by ``forge-policy --help``)."""

from __future__ import annotations

import os
import sys

from forge_policy.cli.context import (
    INTEGRITY_FAILURE,
    OK,
    OVERVIEW,
    REFUSED,
    STDOUT_CLOSED,
    STORE_FAILURE,
    USAGE,
)

__doc__ = f"{__doc__}\n\n{OVERVIEW}"
__all__ = [
    "INTEGRITY_FAILURE",
    "OK",
    "REFUSED",
    "STDOUT_CLOSED",
    "STORE_FAILURE",
    "USAGE",
    "main",
]


def main(argv: list[str] | None = None) -> int:
    """Run ``forge-policy`` with ``argv`` (default: the process arguments); return the exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["hook"] and not {"-h", "--help"} & set(args):
        if argv is None:  # the process's own command: one hook call, then the process ends
            import gc

            # a process this short frees its memory by ending: the collector's passes over
            # what the imports allocate (a tenth of the cold path) buy it nothing
            gc.disable()
        from forge_policy.hook import main as hook_main

        code = hook_main(sys.stdin, sys.stdout, sys.stderr, os.environ, args[1:])
        if argv is None:
            _end(code)
        return code
    from forge_policy.cli.app import run

    try:
        code = run(args)
        sys.stdout.flush()  # a reader gone (``| head``) shows here when the output was buffered
    except BrokenPipeError:
        return _stdout_closed()
    return code


def _end(code: int) -> None:
    """End the hook's process now with ``code`` when nothing is left to do at exit: the answer
    is written and flushed, every file the call wrote was closed (and fsynced) where it was
    written, no ``atexit`` callback is registered and no non-daemon thread runs. The
    interpreter's teardown (freeing every module, a last collection) would otherwise cost the
    harness's tool call several milliseconds for nothing. Anything else (a callback, a
    thread, a stream that cannot be flushed) returns, and the process ends as usual."""
    import atexit

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    ncallbacks = getattr(atexit, "_ncallbacks", None)  # CPython's; elsewhere: end as usual
    if ncallbacks is None or ncallbacks():
        return
    threading = sys.modules.get("threading")
    if threading is not None and any(
        not thread.daemon
        for thread in threading.enumerate()
        if thread is not threading.main_thread()
    ):
        return
    os._exit(code)


def _stdout_closed() -> int:
    """Stdout's reader went away (``forge-policy status | head -1``): stop quietly, as a
    process killed by SIGPIPE would, and keep Python from complaining when it flushes stdout
    at exit (point it at ``/dev/null``)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return STDOUT_CLOSED
