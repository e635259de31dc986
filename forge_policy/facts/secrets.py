"""Secret patterns (AgentShield, seed-systems a.4, plus SPEC §7) scanned with RE2 in linear time.

>>> find_secret('db_password = "superSecretAdmin123"'), find_secret('secret = "short"')
('password_assignment', '')
>>> find_secret('contraseña = "miClaveSegura"'), find_secret("password = superSecretAdmin123")
('password_assignment', '')
"""

from __future__ import annotations

from forge_policy.facts import check_deadline, note
from forge_policy.facts.files import read_bounded

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Files of this size or more are not scanned for secrets (AgentShield's limit).
MAX_SCAN_BYTES = 1 << 20
#: ``(id, RE2 pattern)`` in AgentShield's order. The first pattern that matches in a file wins.
SECRET_PATTERNS: tuple[tuple[str, str], ...] = (
    ("openai_key", r"sk-[a-zA-Z0-9]{48}|sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{32,}"),
    ("google_api_key", r"AIzaSy[a-zA-Z0-9_-]{33}"),
    ("aws_access_key", r"AKIA[A-Z0-9]{16}"),
    ("slack_token", r"xox[baprs]-[0-9a-zA-Z]{10,48}"),
    ("jwt", r"eyJ[a-zA-Z0-9_-]+\.eyJ[a-zA-Z0-9_-]+\.[a-zA-Z0-9_-]+"),
    (
        "password_assignment",
        r"(?i:(?:^|[^a-z])(?:password|passwd|pass|contrase[nñ]a|secret|key|token|private_key)"
        r"[ \t]*[:=][ \t]*[\"'][^\"'\n]{6,}[\"'])",
    ),
    ("private_key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"),
)

_compiled: list[tuple[str, Any]] | None = None


def _patterns() -> list[tuple[str, Any]]:
    global _compiled
    if _compiled is None:
        from forge_policy.catalog.dsl import compile_regex

        combined = "|".join(f"(?:{pattern})" for _id, pattern in SECRET_PATTERNS)
        _compiled = [("", compile_regex(combined))]
        _compiled += [(pid, compile_regex(pattern)) for pid, pattern in SECRET_PATTERNS]
    return _compiled


def find_secret(text: str | bytes) -> str:
    """The id of the first pattern of :data:`SECRET_PATTERNS` found in ``text``, else ``""``.

    RE2 scans in linear time. A clean text takes one pass (all patterns combined).
    """
    data = text.encode("utf-8", "replace") if isinstance(text, str) else text
    compiled = _patterns()
    if compiled[0][1].search(data) is None:
        return ""
    return next((pid for pid, regex in compiled[1:] if regex.search(data) is not None), "")


def scan_files(files: list[tuple[str, int]]) -> str:
    """The first secret id found in files under 1 MiB. Others are skipped with a note."""
    for path, size in files:
        check_deadline()
        if size >= MAX_SCAN_BYTES:
            note(f"secret scan skipped {path}: too large ({size} bytes, limit {MAX_SCAN_BYTES})")
            continue
        data = read_bounded(path, MAX_SCAN_BYTES - 1)
        found = find_secret(data) if data is not None else ""
        if found:
            return found
    return ""
