"""attrs imported by the cold hook without inspect, platform and its validators
(:mod:`forge_policy._infra.lean_attrs`): the classes it builds are those a plain ``import attrs``
builds, the stand-ins answer what :func:`inspect.signature` and
:func:`platform.python_implementation` answer, and every later import of any of them gets the
real module."""

from __future__ import annotations

import functools
import inspect
import json
import platform
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_policy._infra import lean_attrs

pytestmark = pytest.mark.skipif(sys.version_info >= (3, 14), reason="attrs imported as it is")

#: The classes a cold hook builds with converters, and one whose converter is a builtin, as
#: their ``__init__`` is annotated.
PROBE = """import json, sys
if sys.argv[1] == "lean":
    from forge_policy._infra.lean_attrs import load
    load()
else:
    import inspect, platform
before = sorted(name for name in ("inspect", "platform") if name in sys.modules)
import attrs
from forge_policy.catalog.catalog import Catalog
from forge_policy.config.env import Config
from forge_policy.model import Decision, Event, Violation
kept_out = sorted(
    name for name in ("inspect", "platform", "ast", "dis", "attr.validators", "attrs.validators")
    if name in sys.modules
)
from forge_policy.config.project import TddSettings  # converter=tuple: asks the real inspect
notes = {c.__name__: {k: str(v) for k, v in c.__init__.__annotations__.items()}
         for c in (Catalog, Config, TddSettings, Decision, Event, Violation)}
@attrs.frozen
class Checked:  # the validators, asked through attrs' own name first
    n: int = attrs.field(validator=attrs.validators.instance_of(int))
import attr.validators, attrs.validators, inspect, platform
from attrs.validators import optional
try:
    Checked("1")
    checked = "not checked"
except TypeError:
    checked = "checked"
real = hasattr(inspect, "getsource") and hasattr(platform, "machine")
real = real and sys.modules["attrs.validators"].optional is optional is attr.validators.optional
print(json.dumps({"before": before, "kept_out": kept_out, "notes": notes, "checked": checked,
                  "real": real, "impl": platform.python_implementation()}))
"""


def probe(mode: str) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, check=True)
    result: dict[str, object] = json.loads(out.stdout)
    return result


def test_the_classes_are_those_of_a_plain_import() -> None:
    lean, plain = probe("lean"), probe("plain")
    assert lean["before"] == [] and plain["before"] == ["inspect", "platform"]
    assert lean["kept_out"] == []  # nor did building the classes need the real ones
    assert lean["notes"] == plain["notes"]
    assert lean["notes"]["Event"]  # type: ignore[index]  # converters' annotations were read
    assert lean["real"] and lean["impl"] == plain["impl"] == platform.python_implementation()
    assert lean["checked"] == plain["checked"] == "checked"


def _seen(sig: object, empty: object) -> tuple[list[tuple[str, object]], object]:
    params = [
        (name, "EMPTY" if p.annotation is empty else p.annotation)
        for name, p in sig.parameters.items()  # type: ignore[attr-defined]
    ]
    back = sig.return_annotation  # type: ignore[attr-defined]
    return params, "EMPTY" if back is empty else back


def same_as_inspect(function: object) -> None:
    mine = _seen(lean_attrs._signature(function), lean_attrs.Parameter.empty)  # type: ignore[arg-type]
    assert mine == _seen(inspect.signature(function), inspect.Parameter.empty)  # type: ignore[arg-type]


ANNOTATION = st.sampled_from([None, "int", "str | None", "tuple[str, ...]"])
NAMES = st.lists(st.sampled_from("abcdefgh"), min_size=0, max_size=8, unique=True)


@given(
    names=NAMES,
    notes=st.lists(ANNOTATION, min_size=8, max_size=8),
    kinds=st.lists(st.sampled_from(["posonly", "plain", "kwonly"]), min_size=8, max_size=8),
    star=st.booleans(),
    starstar=st.booleans(),
    back=ANNOTATION,
)
def test_a_plain_function_reads_as_inspect_reads_it(
    names: list[str],
    notes: list[str | None],
    kinds: list[str],
    star: bool,
    starstar: bool,
    back: str | None,
) -> None:
    def param(name: str, note: str | None) -> str:
        return f"{name}: {note!r}" if note else name

    groups: dict[str, list[str]] = {"posonly": [], "plain": [], "kwonly": []}
    for name, note, kind in zip(names, notes, kinds, strict=False):
        groups[kind].append(param(name, note))
    parts = [*groups["posonly"], *(["/"] if groups["posonly"] else []), *groups["plain"]]
    parts.append(param("args", notes[0]) if star else ("*" if groups["kwonly"] else ""))
    parts += groups["kwonly"]
    if starstar:
        parts.append(param("**kw", notes[1]))
    source = f"def f({', '.join(p for p in parts if p)})" + (f" -> {back!r}" if back else "")
    namespace: dict[str, object] = {}
    exec(source + ": pass", namespace)  # a generated signature, nothing else
    same_as_inspect(namespace["f"])


def _wrapped(value: int) -> int:
    return value


@functools.wraps(_wrapped)
def _wrapper(*args: object) -> object:
    return args


class _Callable:
    def __call__(self, value: str) -> bool:
        return bool(value)


@pytest.mark.parametrize(
    "function",
    [_wrapper, _Callable(), _Callable().__call__, functools.partial(_wrapped, 1), lambda x: x],
)
def test_anything_else_is_asked_of_inspect(function: object) -> None:
    same_as_inspect(function)


@pytest.mark.parametrize(("function", "error"), [(max, ValueError), (3, TypeError)])
def test_no_signature_raises_as_inspect_raises(function: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        inspect.signature(function)  # type: ignore[arg-type]
    with pytest.raises(error):  # attrs catches these two: the converter's type is not read
        lean_attrs._signature(function)  # type: ignore[arg-type]


def test_python_implementation() -> None:
    assert lean_attrs._python_implementation() == platform.python_implementation()


def test_an_attrs_the_stand_ins_cannot_serve_is_imported_as_it_is() -> None:
    """A later attrs that asks what no stand-in answers (here: the implementation question
    raises) gets a plain import: the hook goes on, it does not fail on an upgrade."""
    code = """import sys
from forge_policy._infra import lean_attrs
def unanswered():
    raise AttributeError("a question the stand-in does not know")
lean_attrs._python_implementation = unanswered
lean_attrs.load()
import attrs, attr.validators, inspect, platform
@attrs.frozen
class Point:
    x: int = attrs.field(validator=attrs.validators.instance_of(int))
assert Point(1).x == 1 and hasattr(inspect, "getsource") and hasattr(platform, "machine")
assert not any(isinstance(m, lean_attrs._StandIn) for m in sys.modules.values())
print("plain")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (out.returncode, out.stdout.strip()) == (0, "plain"), out.stderr
