"""Small text helpers shared by the command modules."""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Left-aligned columns, two spaces apart; ``None`` shows as ``-``.

    >>> print(table(["id", "n"], [["a", 1], ["bcd", None]]))
    id   n
    a    1
    bcd  -
    """
    cells = [[_cell(v) for v in row] for row in [header, *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    )


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def dumps(value: object) -> str:
    """Indented JSON for ``--json`` output; typed results are unstructured first (see
    :func:`to_json`), and every string (keys too) is redacted
    (:func:`forge_policy.audit.verify.clean`): a secret never reaches the output.

    >>> from forge_policy.reports.insights import SessionTally
    >>> print(dumps({"tally": SessionTally(2, 1, 0)}))
    {
      "tally": {
        "violations": 2,
        "blocks": 1,
        "overrides": 0
      }
    }
    """
    from forge_policy.audit.verify import clean

    return json.dumps(clean(to_json(value)), indent=2, ensure_ascii=False)


def to_json(value: object) -> Any:
    """The JSON-ready form of a value (:func:`forge_policy.reports.json.to_json`; imported
    here on first use, since it brings cattrs)."""
    from forge_policy.reports.json import to_json as unstructure

    return unstructure(value)


def short(value: object, limit: int = 60) -> str:
    """``repr``-like, redacted, then cut to ``limit`` characters (cutting first could leave a
    secret its pattern no longer recognizes).

    >>> short("x" * 80, 10)
    "'xxxxxxx…'"
    >>> print(short('password="correct horse battery staple"', 20))
    'password="[REDACT…'
    """
    from forge_policy.audit.verify import clean

    value = clean(value)
    text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 2] + "…" + text[-1]
