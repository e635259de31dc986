"""forge_policy's own floor: a shell command rewritten to run under an OS sandbox (SPEC §13).

:func:`command_for` is the rewrite the hook hands the harness (``updatedInput`` and its kin):
the original command, unchanged, run by ``bash -c`` inside the sandbox. First cut: bubblewrap
only — the whole file system read-only, the writable roots bound read-write, the never-written
paths bound read-only over them, the never-read folders hidden under an empty tmpfs and files
under ``/dev/null``. Paths that do not exist are skipped (bubblewrap cannot bind them).

>>> from forge_policy.floor.model import Floor, FloorPath
>>> floor = Floor("/p", (FloorPath("/p", "project"),))
>>> command_for(floor, "echo hi", "bwrap").endswith("-- /bin/bash -c 'echo hi'")
True
"""

from __future__ import annotations

import os
import shlex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.floor.model import Floor

METHODS = ("bwrap",)


def bwrap_argv(floor: Floor) -> list[str]:
    """bubblewrap's arguments (without the program) that apply ``floor``."""
    argv = ["bwrap", "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev"]
    for root in floor.writable:
        if os.path.isdir(root.path):
            argv += ["--bind", root.path, root.path]
    for kept in floor.never_written:
        if os.path.exists(kept.path):
            argv += ["--ro-bind", kept.path, kept.path]
    for hidden in floor.never_read:
        if os.path.isdir(hidden.path):
            argv += ["--tmpfs", hidden.path, "--remount-ro", hidden.path]
        elif os.path.exists(hidden.path):
            argv += ["--ro-bind", "/dev/null", hidden.path]
    return argv


def command_for(floor: Floor, command: str, method: str) -> str:
    """The shell text that runs ``command`` under ``floor`` with ``method`` (one of
    :data:`METHODS`); :class:`ValueError` for any other method."""
    if method != "bwrap":
        raise ValueError(f"unknown floor method {method!r}; expected one of {METHODS}")
    return shlex.join([*bwrap_argv(floor), "--", "/bin/bash", "-c", command])
