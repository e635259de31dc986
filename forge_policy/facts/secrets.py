"""``facts.secret_in_files``: the secret patterns of :mod:`forge_policy.secrets` over file contents.

Detection and redaction share one table (:data:`SECRET_PATTERNS`), so a file reported as holding
a secret is exactly a file whose text :func:`forge_policy.secrets.redact` would change.

>>> find_secret('db_password = "superSecretAdmin123"'), find_secret('secret = "short"')
('password_assignment', '')
>>> find_secret('contraseña = "miClaveSegura"'), find_secret("password = superSecretAdmin123")
('password_assignment', '')
"""

from __future__ import annotations

from forge_policy.facts._io import read_bounded
from forge_policy.facts._runtime import check_deadline, note
from forge_policy.secrets import SECRET_PATTERNS
from forge_policy.secrets import detect as find_secret

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["MAX_SCAN_BYTES", "SECRET_PATTERNS", "find_secret", "scan_files"]

#: Files of this size or more are not scanned for secrets (AgentShield's limit).
MAX_SCAN_BYTES = 1 << 20


def scan_files(
    files: list[tuple[str, int]], read: Callable[[str, int], bytes | None] = read_bounded
) -> str:
    """The first secret id found in files under 1 MiB. Others are skipped with a note.
    ``read``: how a file is read (:func:`~forge_policy.facts._io.read_bounded`'s signature).

    >>> scan_files([("/nonexistent/x", 10)])
    ''
    """
    for path, size in files:
        check_deadline()
        if size >= MAX_SCAN_BYTES:
            note(f"secret scan skipped {path}: too large ({size} bytes, limit {MAX_SCAN_BYTES})")
            continue
        data = read(path, MAX_SCAN_BYTES - 1)
        found = find_secret(data) if data is not None else ""
        if found:
            return found
    return ""
