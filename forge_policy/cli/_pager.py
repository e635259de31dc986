"""Long output through a pager on a terminal, as git does; straight to stdout otherwise.

The pager is ``$FORGE_PAGER``, else ``$PAGER``, else ``less``; ``less`` gets ``LESS=FRX``
when ``LESS`` is unset (quit when the text fits one screen, keep colours, leave the text on the
screen). No pager when stdout is not a terminal (a pipe, a file, a test), with ``--no-pager``,
or when the pager is empty or ``cat``; a pager that cannot be started is skipped, and the
text printed.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from forge_policy.cli.context import Context


def pager_command(environ: Mapping[str, str]) -> list[str] | None:
    """The pager's argv from the environment, or None for none.

    >>> pager_command({"PAGER": "less -S"}), pager_command({"PAGER": "cat"})
    (['less', '-S'], None)
    >>> pager_command({"FORGE_PAGER": "", "PAGER": "more"}) is None
    True
    """
    import shlex

    text = environ.get("FORGE_PAGER", environ.get("PAGER", "less"))
    try:
        argv = shlex.split(text)
    except ValueError:
        return None
    return argv if argv and argv[0] != "cat" else None


def page(ctx: Context, text: str, *, allowed: bool = True) -> None:
    """``text`` (redacted, as :meth:`Context.print`) through the pager on a terminal; else on
    stdout."""
    import os
    import shutil
    import subprocess
    import sys

    from forge_policy.secrets import redact

    argv = pager_command(os.environ) if allowed and _is_terminal(ctx) else None
    program = shutil.which(argv[0]) if argv else None
    if argv is None or program is None:
        ctx.print(text)
        return
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    body = redact(text) + "\n"
    try:
        sys.stdout.flush()
        pager = subprocess.Popen([program, *argv[1:]], stdin=subprocess.PIPE, env=env)
    except OSError:
        ctx.print(text)
        return
    assert pager.stdin is not None
    try:
        pager.stdin.write(body.encode("utf-8", "replace"))
        pager.stdin.close()
    except BrokenPipeError:  # the user quit the pager before the end: that is fine
        pass
    try:
        pager.wait()
    except KeyboardInterrupt:
        pager.wait()


def _is_terminal(ctx: Context) -> bool:
    import sys

    if ctx.out is not sys.stdout:
        return False
    try:
        return sys.stdout.isatty()
    except (ValueError, OSError):
        return False
