"""Behavior catalogs: schema v1, loading and validation, the built-in catalog.

Reading YAML takes :mod:`~forge_policy.catalog.yaml_io` (ruamel.yaml), the schema's attrs
classes (:mod:`~forge_policy.catalog.schema`) and their cattrs structuring
(:mod:`~forge_policy.catalog.structuring`); the loader imports them only when a catalog is
actually read from YAML. Compiled behaviors (:mod:`~forge_policy.catalog.behavior`) are attrs
classes and need none of them; the compiled cache (:mod:`~forge_policy.catalog.cache`) reads its
JSON document with a cattrs converter of its own, never ruamel or the schema.
"""

from __future__ import annotations

from forge_policy.catalog.behavior import Behavior, Trigger
from forge_policy.catalog.catalog import Catalog

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os


def load_catalog(path: str | os.PathLike[str] | None = None) -> Catalog:
    """Load a catalog folder or one behavior file (see :mod:`forge_policy.catalog.loader`)."""
    from forge_policy.catalog.loader import load_catalog as _load

    return _load(path)


def builtin_catalog() -> Catalog:
    """The catalog shipped with forge_policy."""
    from forge_policy.catalog.loader import builtin_catalog as _builtin

    return _builtin()


__all__ = ["Behavior", "Catalog", "Trigger", "builtin_catalog", "load_catalog"]
