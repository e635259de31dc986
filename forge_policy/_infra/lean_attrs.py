"""attrs imported without :mod:`inspect`, :mod:`platform` and its validators: the cold hook's
first import.

attrs' ``_compat`` imports :mod:`inspect` and :mod:`platform` at its top: ``platform`` for one
question at import (``platform.python_implementation() == "PyPy"``), ``inspect`` for
``inspect.signature`` of a converter or an ``__attrs_pre_init__`` when a class is built (the
annotation of the generated ``__init__``'s argument; whether the pre-init takes arguments).
``attr.validators`` (and ``attrs.validators``, its re-export) builds a dozen attrs classes at
import; no class of forge_policy uses them, and building a class never reads them. In a cold
hook process the three cost ~42M instructions (``ast``, ``dis``, nine regexes compiled, 13
classes' methods generated and compiled), 11% of a hard block.

:func:`load` imports attrs with stand-ins under those names, then takes the stand-ins out of
:data:`sys.modules`: every later import of any of them gets the real module, and only attrs
keeps a stand-in (``attrs.validators`` is one until something imports the real module). A
stand-in answers what attrs asks exactly as the real module would: ``python_implementation()``
from :data:`sys.implementation`, the signature of a plain Python function from its code object
and ``__annotations__`` (what :func:`inspect.signature` itself reads for one); any other
callable, or any other name (``attrs.validators.instance_of``), is asked of the real module,
imported then. Python 3.14 reads annotations through ``annotationlib`` instead, so there attrs is
imported as it is.

It also puts :mod:`forge_policy._infra.attrs_code`'s compile in place, for attrs' own classes
(as it is imported), then for every class it builds and every forward reference :mod:`typing`
checks: the generated methods are read back compiled instead of compiled anew.

>>> def convert(value: int, *rest: str, flag: bool = False, **more: int) -> str: ...
>>> sig = _signature(convert)
>>> [(name, p.annotation) for name, p in sig.parameters.items()], sig.return_annotation
([('value', 'int'), ('rest', 'str'), ('flag', 'bool'), ('more', 'int')], 'str')
>>> _signature(lambda x: x).parameters["x"].annotation is Parameter.empty
True
"""

from __future__ import annotations

import builtins
import sys
from types import FunctionType, ModuleType  # attrs imports types too

from forge_policy._infra import attrs_code

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_CO_VARARGS = 0x04
_CO_VARKEYWORDS = 0x08


class _Empty:
    """The stand-in's ``Parameter.empty`` and ``Signature.empty`` (attrs compares with ``is``)."""


class Parameter:
    """What attrs reads of :class:`inspect.Parameter`: ``empty`` and a parameter's
    ``annotation``."""

    empty = _Empty
    __slots__ = ("annotation",)

    def __init__(self, annotation: object) -> None:
        self.annotation = annotation


class Signature:
    """What attrs reads of :class:`inspect.Signature`: ``empty``, ``parameters`` (in order)
    and ``return_annotation``."""

    empty = _Empty
    __slots__ = ("parameters", "return_annotation")

    def __init__(self, parameters: dict[str, Parameter], return_annotation: object) -> None:
        self.parameters = parameters
        self.return_annotation = return_annotation


def _signature(obj: Callable[..., object]) -> Signature:
    """:func:`inspect.signature` as attrs reads it. A plain function with nothing set on it
    (no ``__wrapped__``, ``__signature__`` or partialmethod mark: those live in its
    ``__dict__``) is read from its code, as :func:`inspect.signature` reads it; anything else is
    asked of the real :mod:`inspect`, its empty marker translated."""
    if type(obj) is FunctionType and not obj.__dict__:
        code = obj.__code__
        names = code.co_varnames
        positional, keyword = code.co_argcount, code.co_kwonlyargcount
        star = positional + keyword  # where *args' name is, then **kwargs'
        order = list(names[:positional])
        if code.co_flags & _CO_VARARGS:
            order.append(names[star])
            star += 1
        order += names[positional : positional + keyword]
        if code.co_flags & _CO_VARKEYWORDS:
            order.append(names[star])
        notes = obj.__annotations__
        params = {name: Parameter(notes.get(name, _Empty)) for name in order}
        return Signature(params, notes.get("return", _Empty))
    real = _real("inspect")
    sig = real.signature(obj)
    empty = real.Parameter.empty

    def mine(annotation: object) -> object:
        return _Empty if annotation is empty else annotation

    params = {name: Parameter(mine(p.annotation)) for name, p in sig.parameters.items()}
    return Signature(params, mine(sig.return_annotation))


def _python_implementation() -> str:
    """:func:`platform.python_implementation` (``'CPython'`` read from
    :data:`sys.implementation`; any other interpreter asks the real module)."""
    if sys.implementation.name == "cpython":
        return "CPython"
    return str(_real("platform").python_implementation())


class _StandIn(ModuleType):
    """A module that takes any name it lacks from the real module, imported then (the
    validators' stand-ins lack every name)."""

    def __getattr__(self, name: str) -> object:
        return getattr(_real(self.__name__), name)


def _real(name: str) -> ModuleType:
    module = sys.modules.get(name)
    if isinstance(module, _StandIn):  # asked during attrs' own import: the real one from now on
        sys.modules.pop(name, None)  # (two threads may both get here)
        module = None
    if module is None:
        __import__(name)
        module = sys.modules[name]
    return module


def load() -> None:
    """Import attrs (once; nothing when it is already imported) with the stand-ins."""
    if "attr" in sys.modules or sys.version_info >= (3, 14):
        return
    names = ("inspect", "platform", "attr.validators", "attrs.validators")
    stand_ins = {name: _StandIn(name) for name in names if name not in sys.modules}
    if "inspect" in stand_ins:  # (one already imported is attrs' at no cost)
        stand_ins["inspect"].__dict__.update(
            signature=_signature, Parameter=Parameter, Signature=Signature
        )
    if "platform" in stand_ins:
        stand_ins["platform"].__dict__["python_implementation"] = _python_implementation
    sys.modules.update(stand_ins)
    # attrs' own classes are built as it is imported: their methods from the code cache too
    builtins.compile = attrs_code.compile_  # type: ignore[assignment]
    try:
        import attrs
    except Exception:  # an attrs that asks what no stand-in answers: imported as it is
        for name in [name for name in sys.modules if name.partition(".")[0] in ("attr", "attrs")]:
            del sys.modules[name]
        _drop(stand_ins)
        import attrs  # noqa: F401
    finally:
        builtins.compile = attrs_code._compile
        _drop(stand_ins)
    # and from now on (attrs_code): attrs' classes and typing's forward references
    make = sys.modules.get("attr._make")
    if make is not None and "_compile_and_eval" in make.__dict__:  # the name it compiles with
        make.__dict__["compile"] = attrs_code.compile_
    typing = sys.modules.get("typing")
    if typing is not None and "ForwardRef" in typing.__dict__:
        typing.__dict__["compile"] = attrs_code.compile_


def _drop(stand_ins: dict[str, _StandIn]) -> None:
    for name, stand_in in stand_ins.items():
        if sys.modules.get(name) is stand_in:
            del sys.modules[name]
