"""The floor of one project under the active catalog (SPEC §13): :func:`floor_for`.

First cut: the project and the temp directories are writable; the governance folders, git's
hooks and config and the engine's installation are never written; the home folders that hold
credentials are never read. Growing this from the catalog's path rules is issue 24's work.

>>> floor = floor_for("/p", {"HOME": "/home/u"})
>>> floor.writes_allowed("/p/src/a.py"), floor.writes_allowed("/p/.forge/state.json")
(True, False)
>>> floor.reads_allowed("/home/u/.ssh/id_rsa")
False
"""

from __future__ import annotations

import os

from forge_policy.floor.model import Floor, FloorPath

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

_GOVERNANCE = (".forge", ".claude", ".codex", ".gemini", ".cursor")
_GIT = (".git/hooks", ".git/config")
_SECRET_HOME = (".ssh", ".aws", ".gnupg", ".kube", ".config/gcloud", ".netrc")


def floor_for(project: str, environ: Mapping[str, str]) -> Floor:
    """The floor for ``project`` (absolute) with ``environ``'s ``HOME`` and ``TMPDIR``."""
    from forge_policy.facts.controls import installation

    project = os.path.normpath(project)
    home = environ.get("HOME", "") or os.path.expanduser("~")
    temps = {"/tmp", "/var/tmp", environ.get("TMPDIR", "") or "/tmp"}
    writable = (FloorPath(project, "project"), *(FloorPath(t, "temp") for t in sorted(temps)))
    never_written = [FloorPath(os.path.join(project, p), "protect-governance") for p in _GOVERNANCE]
    never_written += [FloorPath(os.path.join(project, p), "git") for p in _GIT]
    place = installation(home, project)
    for path in sorted({place.package, *place.site_dirs, *place.bin_dirs} - {""}):
        never_written.append(FloorPath(os.path.abspath(path), "installation"))
    never_read = tuple(FloorPath(os.path.join(home, p), "agent-shield") for p in _SECRET_HOME)
    return Floor(project, writable, tuple(never_written), never_read)
