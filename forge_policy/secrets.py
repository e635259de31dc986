"""Secrets: the one pattern table behind detection and redaction (SPEC §7, §9).

``facts.secret_in_files`` (:mod:`forge_policy.facts.secrets`) *detects* with this table, and
everything written to state, audit or output is *redacted* with it, so the two can never
disagree: a text holds a secret exactly when redaction changes it. That is why there is no
redaction-only pattern: whatever is worth hiding (any ``sk-ant-`` token, a key cut short) is
also reported as a secret of the file that holds it.

- :func:`scan` finds the secrets of a text, left to right. Each pattern is searched on its own,
  so that no pattern's context (the ``mysql … -p`` before a password) hides another's secret,
  and secrets of several patterns that overlap make one span. For an assignment
  (``password = "…"``, ``pass: …``, ``-pPASS``, ``aws_secret_access_key=…``) the secret is the
  value, for every other pattern the whole match. A value that is already :data:`REDACTED` is
  no secret, so redacting twice changes nothing more; nor is a token whose random part is one
  repeated character (``ghp_xxxx…``), a placeholder.
- :func:`detect` is the id of the first pattern of :data:`SECRET_PATTERNS`, in table order,
  that has a secret in the text (``""`` when :func:`scan` finds none).
- :func:`redact` replaces each span :func:`scan` finds by :data:`REDACTED`;
  :func:`redact_json` does it to every string of a JSON value (the stores' write path).

Patterns run with RE2, in linear time whatever the text, and RE2 is imported on first use. A
clean text costs one search of all patterns combined; only a text it hits is searched pattern
by pattern.

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

# An unquoted ``password: value`` (YAML, a log line) names a credential with a stronger word
# than a quoted one: not ``key`` or ``token`` alone, which are everyday YAML keys.
_STRONG_WORDS = (
    r"passw(?:or)?d|passphrase|pass|contrase[nñ]a|secret|client[_-]?secret"
    r"|(?:api|access|private|secret)[_-]?key|(?:auth|access|api|refresh|bearer)[_-]?token"
)
_STRONG_CAMEL = (
    r"Passw(?:or)?d|Passphrase|Secret|SecretKey|ApiKey|AccessKey|PrivateKey|ClientSecret"
    r"|AuthToken|AccessToken|ApiToken|RefreshToken"
)
# ... and its value is one plain word of six characters or more, up to the end of the line (or a
# closing quote), with a digit or a symbol in it: ``str``, ``SecretStr``, ``this.password``,
# ``${PW}``, ``*alias``, ``!vault``, ``Joi.string(),`` and ``process.env.PW`` are code, not
# passwords. _PLAIN may follow the first character, _MARK is the digit or symbol.
_PLAIN = r"[A-Za-z0-9_+/=.~^@!#%&*?:$-]"
_MARK = r"[0-9!@#%^&*+=?~$]"
_YAML_VALUE = (
    rf"[0-9+~^@]{_PLAIN}{{5,}}"
    rf"|[A-Za-z0-9_+~^@-](?:{_MARK}{_PLAIN}{{4,}}|{_PLAIN}{_MARK}{_PLAIN}{{3,}}"
    rf"|{_PLAIN}{{2}}{_MARK}{_PLAIN}{{2,}}|{_PLAIN}{{3}}{_MARK}{_PLAIN}+|{_PLAIN}{{4,}}{_MARK}{_PLAIN}*)"
)

# A PEM private key: the header, then the key material up to the footer, or (a key cut short)
# the base64 lines that follow the header. Line breaks may be escaped (``\n`` inside a JSON
# string), and an encrypted key's ``Proc-Type:``/``DEK-Info:`` lines are part of it.
_PEM_LABEL = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_NL = r"[ \t]*(?:\r?\n|\\r?\\n)[ \t]*"
_PEM_BEGIN = r"-----BEGIN " + _PEM_LABEL
_PEM_WHOLE = r"[A-Za-z0-9+/=\s:,.\\-]*?-----END " + _PEM_LABEL
_PEM_HEADERS = rf"(?:{_NL}[A-Za-z-]+: [^\r\n\\]*)*"
_PEM_LINES = rf"(?:(?:(?:{_NL})+[A-Za-z0-9+/=]{{16,}})+(?:(?:{_NL})+[A-Za-z0-9+/=]+)?)?"

#: ``(id, RE2 pattern)``: AgentShield's patterns in its order (seed-systems a.4, SPEC §7), then
#: the other credentials forge_policy knows; detection reports the first id that matches. A
#: pattern's ``(?P<value…>…)`` group, when one takes part in the match, is the part that is
#: secret (the rest is context such as the variable name); a ``(?P<body…>…)`` group is a
#: token's random part, and a body of one repeated character (``ghp_xxxx…``) is a placeholder.
SECRET_PATTERNS: tuple[tuple[str, str], ...] = (
    ("openai_key", r"\bsk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{20,})"),
    # any token of Anthropic's prefix, whatever its length: a key cut short is still secret
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    ("google_api_key", r"AIzaSy[A-Za-z0-9_-]{33,}"),
    # a key id starts a word: ``TODAYINASIAASACKOFRICE`` holds no key
    ("aws_access_key", r"\b(?:AKIA|ASIA)[A-Z0-9]{16}"),
    ("slack_token", r"xox[a-z]-[A-Za-z0-9]{10}[A-Za-z0-9-]*"),
    ("jwt", r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"),
    (
        "password_assignment",
        _KEYWORD + r"[\"']?[ \t]*(?::=|=>|[:=])[ \t]*[\"'](?P<value>[^\"'\r\n]{6,})[\"']",
    ),
    ("private_key", rf"{_PEM_BEGIN}(?:{_PEM_WHOLE}|{_PEM_HEADERS}{_PEM_LINES})"),
    # the 40 characters of an AWS secret access key after its variable or option name
    (
        "aws_secret_key",
        r"(?i:(?:aws[_-]?)?secret[_-]?access[_-]?key|aws[_-]?secret[_-]?key)[\"']?"
        r"(?:[ \t]*(?::=|=>|[:=])[ \t]*|[ \t]+)[\"']?(?P<value>[A-Za-z0-9/+]{40})"
        r"(?:[^A-Za-z0-9/+=]|\z)",
    ),
    (
        "github_token",
        r"gh[pousr]_(?P<body>[A-Za-z0-9]{36,})|github_pat_(?P<body2>[A-Za-z0-9_]{22,})",
    ),
    ("gitlab_token", r"glpat-(?P<body>[A-Za-z0-9_-]{20,})"),
    # the password glued to a MySQL/MariaDB client's -p (``-p PASS`` would be a database name)
    (
        "mysql_password",
        r"\b(?:mysql(?:dump|admin|import|show|check|slap|pump|sh|binlog)?"
        r"|mariadb(?:-?(?:dump|admin|import|show|check|slap))?)(?:[ \t][^\r\n;&|]*?)?"
        r"[ \t](?:-p|--password=)(?P<value>'[^'\r\n]+'|\"[^\"\r\n$][^\"\r\n]*\""
        r"|[^\s'\"$;&|<>()`\\][^\s'\";&|<>()`]*)",
    ),
    (
        "password_yaml",
        r"(?:(?m:^)|[ \t\"'`])(?:-[ \t]+)?[\"']?"
        rf"(?:(?:[A-Za-z0-9_.-]*[0-9_.-])?(?i:{_STRONG_WORDS})|[A-Za-z0-9_.-]*[a-z0-9](?:{_STRONG_CAMEL}))"
        rf"[\"']?[ \t]*:[ \t]+(?P<value>{_YAML_VALUE})"
        r"(?:(?:[ \t]+#[^\r\n]*)?[ \t]*\r?(?m:$)|[\"'`])",
    ),
)

#: At most this many redaction passes run over one text (see :func:`redact`).
MAX_PASSES = 8

_REDACTED_BYTES = REDACTED.encode()
# [the table as one regex (a text it misses holds no secret), [(id, regex, secret groups, body
# groups), ...] in table order]; compiled on first use, the second only for a text the first hits
_compiled: list[Any] = []


def _any_match(data: bytes) -> bool:
    """Whether any pattern matches ``data`` at all: one linear pass, the common case's only one."""
    if not _compiled:
        import re

        from forge_policy.catalog.dsl import compile_regex

        plain = [re.sub(r"\(\?P<\w+>", "(?:", pattern) for _pid, pattern in SECRET_PATTERNS]
        _compiled.append(compile_regex("|".join(f"(?:{p})" for p in plain)))
    return _compiled[0].search(data) is not None


def _table() -> list[tuple[str, Any, list[int], list[int]]]:
    if len(_compiled) < 2:
        from forge_policy.catalog.dsl import compile_regex

        table = []
        for pid, pattern in SECRET_PATTERNS:
            regex = compile_regex(pattern)
            names = sorted(regex.groupindex.items(), key=lambda item: item[1])
            table.append(
                (
                    pid,
                    regex,
                    [i for name, i in names if name.startswith("value")],
                    [i for name, i in names if name.startswith("body")],
                )
            )
        _compiled.append(table)
    compiled: list[tuple[str, Any, list[int], list[int]]] = _compiled[1]
    return compiled


def _secrets(
    regex: Any, values: list[int], bodies: list[int], data: bytes
) -> Iterator[tuple[int, int]]:
    """The ``(start, end)`` of each secret of one pattern in ``data``, left to right."""
    pos = 0
    while True:
        match = regex.search(data, pos)
        if match is None:
            return
        start, end = next(
            ((match.start(g), match.end(g)) for g in values if match.start(g) >= 0), match.span()
        )
        # Resume after the secret, not after the match: the closing quote of one assignment may
        # be the non-letter before the next one's key. A match whose secret is already REDACTED
        # is skipped; any later match starting inside it would hold the same quoted value.
        pos = max(end, match.start() + 1)
        if data[start:end] == _REDACTED_BYTES:
            continue
        body = next((match.group(g) for g in bodies if match.start(g) >= 0), None)
        if body is not None and len(set(body.translate(None, b"_-"))) < 2:
            continue  # a placeholder: ghp_xxxxxxxx…
        yield start, end


def _spans(data: bytes) -> list[tuple[str, int, int]]:
    """Every pattern's secrets, merged where they overlap, in text order; a merged span is
    named after its leftmost part (table order breaks ties)."""
    if not _any_match(data):
        return []
    found = sorted(
        (start, rank, end, pid)
        for rank, (pid, regex, values, bodies) in enumerate(_table())
        for start, end in _secrets(regex, values, bodies, data)
    )
    merged: list[tuple[str, int, int]] = []
    for start, _rank, end, pid in found:
        if merged and start < merged[-1][2]:
            last = merged[-1]
            merged[-1] = (last[0], last[1], max(last[2], end))
        else:
            merged.append((pid, start, end))
    return merged


def _as_bytes(text: str | bytes) -> bytes:
    # lone surrogates survive the round trip, so redaction never alters what it keeps
    return text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text


def scan(text: str | bytes) -> list[tuple[str, int, int]]:
    """``(pattern id, start, end)`` of each secret in ``text``, spans in UTF-8 bytes, left to
    right; secrets of several patterns that overlap are one span.

    >>> scan('key: "hunter22" and AKIA' + 'Z' * 16)
    [('password_assignment', 6, 14), ('aws_access_key', 20, 40)]
    """
    return _spans(_as_bytes(text))


def detect(text: str | bytes) -> str:
    """The first id of :data:`SECRET_PATTERNS` with a secret in ``text`` (table order), or ``""``.

    A clean text costs one linear pass over all patterns combined.

    >>> detect("-----BEGIN OPENSSH PRIVATE KEY-----"), detect('password = "[REDACTED]"')
    ('private_key', '')
    >>> detect("mysql -u root -pS3cret db"), detect("mysql -u root -p db")
    ('mysql_password', '')
    """
    data = _as_bytes(text)
    if not _any_match(data):
        return ""
    for pid, regex, values, bodies in _table():
        if next(_secrets(regex, values, bodies, data), None) is not None:
            return pid
    return ""


def redact(text: str) -> str:
    """Replace every secret :func:`scan` finds by :data:`REDACTED`, until none is left.

    One pass usually suffices. A second is needed when a replaced secret was the only thing
    that hid a key name: in ``AKIA…ZKEY="…"`` the name follows a letter, after the first pass
    it follows ``]``. A pass only uncovers names right after a new :data:`REDACTED`, never one
    after a value (a quote ends it), so the passes are few; :data:`MAX_PASSES` bounds them.

    >>> redact('password = "hunter22" and key sk-' + 'x' * 48)
    'password = "[REDACTED]" and key [REDACTED]'
    >>> redact("pass: c0rrect-horse  # prod")
    'pass: [REDACTED]  # prod'
    """
    original = _as_bytes(text)
    data = original
    for _pass in range(MAX_PASSES):
        spans = _spans(data)
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
    return REDACTED if _spans(data) else data.decode("utf-8", "surrogatepass")


def redact_json(value: Any) -> Any:
    """A copy of a JSON value with every string value redacted (keys are kept: they are ids the
    catalog and the harness chose, and two keys must never become one).

    >>> redact_json({"grant": {"reason": "ok, ghp_" + "aZ09" * 9}, "n": [1, None, "x"]})
    {'grant': {'reason': 'ok, [REDACTED]'}, 'n': [1, None, 'x']}
    """
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_json(v) for v in value]
    return value


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
        else:  # canonical JSON (SPEC §4), as forge_policy.model writes it, which imports this
            import json

            text = json.dumps(
                tool_input, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
            )
    else:
        text = str(tool_input or "")
    text = " ".join(redact(text).split())
    summary = f"{tool_name}: {text}" if tool_name else text
    return summary if len(summary) <= limit else summary[: limit - 1] + "…"
