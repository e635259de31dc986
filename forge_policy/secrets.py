"""Secret redaction before anything reaches state or audit (SPEC §9).

The patterns are agent-shield's key patterns (SPEC §7): values that look like API keys, tokens or
quoted password/secret/token assignments are replaced by ``[REDACTED]``.
"""

from __future__ import annotations

import re

_SECRET = re.compile(
    r"""sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}"""  # OpenAI / Anthropic style keys
    r"""|AIzaSy[A-Za-z0-9_\-]{20,}"""  # Google API keys
    r"""|(?:AKIA|ASIA)[A-Z0-9]{16}"""  # AWS access key ids
    r"""|xox[baprs]-[A-Za-z0-9\-]{10,}"""  # Slack tokens
    r"""|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"""  # JWT
    r"""|-----BEGIN [A-Z ]*PRIVATE KEY-----"""
)
_ASSIGNMENT = re.compile(
    r"""(?i)((?:password|passwd|contraseña|secret|token|api[_-]?key|access[_-]?key)"""
    r"""["']?\s*[:=]\s*)(["'])[^"'\s]{4,}\2"""
)

REDACTED = "[REDACTED]"


def redact(text: str) -> str:
    """Replace secret-looking values.

    >>> redact('password = "hunter22" and key sk-abcdefghijklmnopqrstu')
    'password = "[REDACTED]" and key [REDACTED]'
    """
    text = _SECRET.sub(REDACTED, text)
    return _ASSIGNMENT.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}{m.group(2)}", text)


def summarize(tool_name: str, tool_input: object, limit: int = 100) -> str:
    """A redacted one-line summary of a call, at most ``limit`` characters."""
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
