"""What the self-contained HTML reports share (``replay --html``, ``shadow report --html``): their
data embedded as JSON in the page, and the page written to a file atomically.

>>> embed_json({"x": "</script><!-- \\u2028"})
'{"x":"\\\\u003c/script>\\\\u003c!-- \\\\u2028"}'
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def embed_json(data: Any) -> str:
    """``data`` as JSON text safe inside a ``<script type="application/json">`` element: no
    ``</script>``, ``<!--`` or U+2028/U+2029 can end or bend it (every ``<`` escaped)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def write_page(path: str, page: str, *, prefix: str) -> None:
    """Write ``page`` to ``path`` (UTF-8), replacing it atomically (a temporary file named
    ``prefix…`` beside it, renamed over it; removed when anything fails)."""
    import os
    import tempfile

    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".html", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(page)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
