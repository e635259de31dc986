"""The one lazy facade (PEP 562) behind the package's public namespaces.

A package lists ``name -> module`` and gets ``__getattr__`` and ``__dir__`` that import the
module on first use, so ``import forge_policy`` stays cheap for hook processes.

>>> getattr_, dir_ = lazy_exports("demo", {"Level": "forge_policy.levels"}, ["Level"], {})
>>> getattr_("Level").HARD_BLOCK.label
'hard_block'
>>> getattr_("nope")
Traceback (most recent call last):
AttributeError: module 'demo' has no attribute 'nope'
>>> dir_()
['Level']
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Mapping, MutableMapping, Sequence
    from typing import TypeVar

    T = TypeVar("T")


def lazy_exports(
    package: str,
    exports: Mapping[str, str],
    public: Sequence[str],
    namespace: MutableMapping[str, object],
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: each name of ``exports`` is imported
    from its module on first access and cached in ``namespace`` (the package's globals)."""

    def __getattr__(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        from importlib import import_module

        value = getattr(import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        # each name once (a public name is in the namespace too once it was loaded), and only
        # names that resolve: the namespace's own, and the public names the exports can load
        return sorted({*namespace, *(name for name in public if name in exports)})

    return __getattr__, __dir__


def kept(load: Callable[[], T]) -> Callable[[], T]:
    """``load`` run on the first call and its value kept for every later one: the hot path's
    way to import a name on first use (``@kept`` on a function whose body is the import). An
    import statement of a module's names inside a function costs ~0.6 us on every call (a
    module, not a package, is asked for the ``__path__`` it lacks: an AttributeError made and
    dropped), ~1 us for a module with a ``__getattr__``; the import stays a plain statement, so
    the layering checks see it.

    >>> @kept
    ... def answer() -> int:
    ...     print("loading")
    ...     return 42
    >>> answer(), answer()
    loading
    (42, 42)
    """
    found: list[T] = []

    def get() -> T:
        if not found:  # two threads may both load it once: the same value either way
            found.append(load())
        return found[0]

    return get


def lazy_pattern(pattern: str, flags: int = 0) -> Callable[[], re.Pattern[str]]:
    """A pattern compiled on its first use (``_NAME().search(text)``), not at import: a module's
    patterns that most calls never reach cost a hook process nothing (issue 28: ``re``'s first
    compile of a pattern is 0.1-0.5 ms). A pattern every call uses stays a plain ``re.compile``.

    >>> digits = lazy_pattern(r"[0-9]+")
    >>> digits().findall("a1b22"), digits() is digits()
    (['1', '22'], True)
    """

    def compiled() -> re.Pattern[str]:
        import re

        return re.compile(pattern, flags)

    return kept(compiled)
