"""Limits on the documents forge_policy reads (catalog and config YAML, hook and settings JSON).

A deeply nested document is refused with a clear error before any recursive walk can reach
Python's recursion limit: a 2 KB catalog nested 1,000 levels deep once gave a 3,000-line
traceback. The walk here is iterative.

>>> too_deep([[[1]]], 2), too_deep({"a": [1]}, 2)
(True, False)
"""

from __future__ import annotations

#: The deepest nesting of mappings and lists accepted in a file a person writes (a behavior
#: file needs 6).
MAX_DEPTH = 64
#: The same for a harness's JSON (an MCP tool's input may nest more; later walks recurse).
MAX_JSON_DEPTH = 128


def too_deep(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests dicts and lists more than ``limit`` levels deep."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: list[object] = list(node.values())
        elif isinstance(node, list | tuple):
            children = list(node)
        else:
            continue
        if depth + 1 > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False
