"""The JSON form of every result, as the ``--json`` options print it: :func:`to_json` owns this
package's only :class:`cattrs.Converter`, built on the first call (cattrs is never imported by
``import forge_policy`` nor on the hook's path).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from forge_policy.levels import Level
from forge_policy.model import Decision
from forge_policy.reports.explain import ExplainReport, TraceEntry

TYPE_CHECKING = False
if TYPE_CHECKING:
    import cattrs


# -- JSON ------------------------------------------------------------------------------------


def to_json(value: object) -> Any:
    """The JSON-ready form of a result (plain dicts, lists, strings, numbers), as ``--json``
    prints it: levels by their label, a decision by :meth:`Decision.to_dict`, an explain
    report as its decision's keys plus ``trace`` and ``behaviors``.

    >>> from forge_policy.reports.status import BehaviorStatus
    >>> to_json(BehaviorStatus(enabled=True, counter=1, level=Level.WARNING, next_threshold=None))
    ... # doctest: +NORMALIZE_WHITESPACE
    {'enabled': True, 'counter': 1, 'level': 'warning', 'next_threshold': None,
     'pending_block': False, 'overrides': 0, 'blocks': 0, 'session_disabled': False,
     'override_granted': None, 'inactive_under': None, 'level_shown': None}
    """
    return _converter().unstructure(value)


@cache
def _converter() -> cattrs.Converter:
    """This package's one converter, built on first use (cattrs is not imported before)."""
    import cattrs

    converter = cattrs.Converter()
    converter.register_unstructure_hook(Level, lambda level: level.label)
    # a predicate hook: registering the class itself would make cattrs resolve its annotations,
    # which name types the model imports only for type checking
    converter.register_unstructure_hook_func(
        lambda cls: cls is Decision, lambda decision: decision.to_dict()
    )

    def explain(report: ExplainReport) -> dict[str, Any]:
        result: dict[str, Any] = report.decision.to_dict()
        result["trace"] = converter.unstructure(report.trace, tuple[TraceEntry, ...])
        result["behaviors"] = converter.unstructure(report.behaviors)
        return result

    converter.register_unstructure_hook(ExplainReport, explain)
    # a session without subagents keeps the shape it always had: no ``agents`` keys
    from cattrs.gen import make_dict_unstructure_fn, override

    from forge_policy.reports.status import BehaviorStatus, Status

    for cls in (BehaviorStatus, Status):
        quiet = override(omit_if_default=True)
        converter.register_unstructure_hook(
            cls, make_dict_unstructure_fn(cls, converter, agents=quiet)
        )
    return converter
