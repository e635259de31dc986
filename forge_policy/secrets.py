"""Secrets: the one pattern table behind detection and redaction (SPEC §7, §9).

``facts.secret_in_files`` (:mod:`forge_policy.facts.secrets`) *detects* with this table, and
everything written to state or audit is *redacted* with it, so the two can never disagree: a
text holds a secret exactly when redaction changes it.

- :func:`scan` finds the secrets of a text, left to right, without overlaps. For a
  ``password = "…"`` assignment the secret is the quoted value, for every other pattern the
  whole match. A value that is already :data:`REDACTED` is no secret, so redacting twice
  changes nothing more.
- :func:`detect` is the id of the first pattern of :data:`SECRET_PATTERNS`, in table order,
  that has a secret in the text (``""`` when :func:`scan` finds none).
- :func:`redact` replaces each span :func:`scan` finds by :data:`REDACTED`.

Patterns run with RE2, in linear time whatever the text, and RE2 is imported on first use.

>>> detect('db_password = "superSecretAdmin123"'), detect('secret = "short"')
('password_assignment', '')
>>> redact('export OPENAI_API_KEY=sk-' + 'a' * 48 + ' token="hunter22"')
'export OPENAI_API_KEY=[REDACTED] token="[REDACTED]"'
>>> redact('token="abcd1"')  # five characters are too short to be a secret
'token="abcd1"'
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

REDACTED = "[REDACTED]"
"""What :func:`redact` writes in place of a secret."""

# The name of a quoted assignment: a key word after a non-letter (``db_password``, ``MY_TOKEN``,
# so that ``monkey``, ``turkey``, ``compass`` and ``xtoken`` do not count), or a camelCase word
# that names a credential (``dbPassword``, ``myApiKey``, ``authToken``; not ``schemaKey`` or
# ``publicToken``, which peers' secret scanners allow).
_WORDS = (
    r"passw(?:or)?d|passphrase|pass|contrase[nñ]a|secret|token|key|(?:api|access|private)[_-]?key"
    r"|(?:auth|access|api|refresh)[_-]?token"
)
_CAMEL = (
    r"Passw(?:or)?d|Passphrase|Secret|SecretKey|ApiKey|AccessKey|PrivateKey"
    r"|AuthToken|AccessToken|ApiToken|SecretToken|RefreshToken"
)
_KEYWORD = rf"(?:(?:^|[^A-Za-z])(?i:{_WORDS})|[a-z0-9](?:{_CAMEL}))"

#: ``(id, RE2 pattern)`` in AgentShield's order (seed-systems a.4, SPEC §7); detection reports
#: the first id that matches. A pattern's ``(?P<value>…)`` group, when it has one, is the
#: part that is secret (the rest is context such as the variable name).
SECRET_PATTERNS: tuple[tuple[str, str], ...] = (
    ("openai_key", r"\bsk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{20,})"),
    # Anthropic's own shape: a lookalike of another length is a test fixture, not a key
    ("anthropic_key", r"\bsk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{93}AA"),
    ("google_api_key", r"AIzaSy[A-Za-z0-9_-]{33,}"),
    # a key id starts a word: ``TODAYINASIAASACKOFRICE`` holds no key
    ("aws_access_key", r"\b(?:AKIA|ASIA)[A-Z0-9]{16}"),
    ("slack_token", r"xox[baprs]-[A-Za-z0-9]{10}[A-Za-z0-9-]*"),
    ("jwt", r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"),
    (
        "password_assignment",
        _KEYWORD + r"[\"']?[ \t]*(?::=|=>|[:=])[ \t]*[\"'](?P<value>[^\"'\r\n]{6,})[\"']",
    ),
    (
        # the header, and the key material up to the footer (or the base64 lines that follow)
        "private_key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"
        r"(?:[A-Za-z0-9+/=\s:,.-]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----"
        r"|(?:[ \t]*\r?\n[A-Za-z0-9+/=]{16,})*)",
    ),
)

#: At most this many redaction passes run over one text (see :func:`redact`).
MAX_PASSES = 8

_REDACTED_BYTES = REDACTED.encode()
_compiled: list[Any] = []  # [combined regex, {group of a pattern: (its id, group of its secret)}]


def _combined() -> tuple[Any, dict[int, tuple[str, int]]]:
    if not _compiled:
        from forge_policy.catalog.dsl import compile_regex

        parts = [
            f"(?P<{pid}>{pattern.replace('(?P<value>', f'(?P<{pid}__value>')})"
            for pid, pattern in SECRET_PATTERNS
        ]
        regex = compile_regex("|".join(parts))
        index = regex.groupindex
        groups = {
            index[pid]: (pid, index.get(f"{pid}__value", index[pid])) for pid, _ in SECRET_PATTERNS
        }
        _compiled.extend((regex, groups))
    return _compiled[0], _compiled[1]


def _as_bytes(text: str | bytes) -> bytes:
    # lone surrogates survive the round trip, so redaction never alters what it keeps
    return text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text


def _spans(data: bytes) -> Iterator[tuple[str, int, int]]:
    regex, groups = _combined()
    pos = 0
    while True:
        match = regex.search(data, pos)
        if match is None:
            return
        pid, secret = groups[match.lastindex]  # the outermost group that matched: one pattern's
        start, end = match.span(secret)
        # Resume after the secret, not after the match: the closing quote of one assignment may
        # be the non-letter before the next one's key. A match whose secret is already REDACTED
        # is skipped; any later match starting inside it would hold the same quoted value.
        pos = end
        if data[start:end] != _REDACTED_BYTES:
            yield pid, start, end


def scan(text: str | bytes) -> list[tuple[str, int, int]]:
    """``(pattern id, start, end)`` of each secret in ``text``, spans in UTF-8 bytes.

    >>> scan('key: "hunter22" and AKIA' + 'Z' * 16)
    [('password_assignment', 6, 14), ('aws_access_key', 20, 40)]
    """
    return list(_spans(_as_bytes(text)))


def detect(text: str | bytes) -> str:
    """The first id of :data:`SECRET_PATTERNS` with a secret in ``text`` (table order), or ``""``.

    A clean text costs one linear pass over all patterns combined.

    >>> detect("-----BEGIN OPENSSH PRIVATE KEY-----"), detect('password = "[REDACTED]"')
    ('private_key', '')
    """
    rank = {pid: i for i, (pid, _) in enumerate(SECRET_PATTERNS)}
    best = len(SECRET_PATTERNS)
    for pid, _start, _end in _spans(_as_bytes(text)):
        best = min(best, rank[pid])
        if best == 0:
            break  # nothing ranks higher
    return SECRET_PATTERNS[best][0] if best < len(SECRET_PATTERNS) else ""


def redact(text: str) -> str:
    """Replace every secret :func:`scan` finds by :data:`REDACTED`, until none is left.

    One pass usually suffices. A second is needed when a replaced secret was the only thing
    that hid a key name: in ``AKIA…ZKEY="…"`` the name follows a letter, after the first pass
    it follows ``]``. A pass only uncovers names right after a new :data:`REDACTED`, never one
    after a value (a quote ends it), so the passes are few; :data:`MAX_PASSES` bounds them.

    >>> redact('password = "hunter22" and key sk-' + 'x' * 48)
    'password = "[REDACTED]" and key [REDACTED]'
    """
    original = _as_bytes(text)
    data = original
    for _pass in range(MAX_PASSES):
        spans = list(_spans(data))
        if not spans:
            return text if data is original else data.decode("utf-8", "surrogatepass")
        pieces: list[bytes] = []
        kept = 0
        for _pid, start, end in spans:
            pieces += (data[kept:start], _REDACTED_BYTES)
            kept = end
        pieces.append(data[kept:])
        data = b"".join(pieces)
    # still a secret after MAX_PASSES passes (never seen): hide the whole text, fail closed
    return REDACTED if next(_spans(data), None) else data.decode("utf-8", "surrogatepass")


def summarize(tool_name: str, tool_input: object, limit: int = 100) -> str:
    """A redacted one-line summary of a call, at most ``limit`` characters.

    >>> summarize("Bash", {"command": "curl -H 'X-Key: AKIA" + "Q" * 16 + "'  x"})
    "Bash: curl -H 'X-Key: [REDACTED]' x"
    """
    if isinstance(tool_input, dict):
        for key in ("command", "file_path", "path", "pattern", "url", "query", "prompt"):
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                text = value
                break
        else:
            from forge_policy.model import canonical_json

            text = canonical_json(tool_input)
    else:
        text = str(tool_input or "")
    text = " ".join(redact(text).split())
    summary = f"{tool_name}: {text}" if tool_name else text
    return summary if len(summary) <= limit else summary[: limit - 1] + "…"
