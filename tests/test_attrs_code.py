"""The code cache of attrs' generated methods (:mod:`forge_policy._infra.attrs_code`): what it
answers, compiled anew or read back from its file in a process with another hash seed, is what
:func:`compile` makes of the script; a damaged file is an empty cache."""

from __future__ import annotations
import __future__

import os
import subprocess
import sys
from types import CodeType

import attr._make
import attrs

from forge_policy._infra import attrs_code

FLAGS = __future__.annotations.compiler_flag  # attr._make's compile() inherits it


def _scripts() -> list[tuple[str, str]]:
    """The scripts attrs compiles for a few kinds of class (frozen and hashed, slotted with a
    converter and a default, plain with eq and order, a cached hash)."""
    seen: list[tuple[str, str]] = []

    def record(source: str, filename: str, mode: str) -> CodeType:
        seen.append((source, filename))
        return compile(source, filename, mode, FLAGS, True)

    attr._make.__dict__["compile"] = record
    try:

        @attrs.frozen
        class Frozen:
            a: int
            b: tuple[str, ...] = ()

        @attrs.define
        class Slotted:
            a: int = attrs.field(converter=int)
            b: list[int] = attrs.Factory(list)

        @attrs.define(order=True, slots=False)
        class Ordered:
            a: str = "x"

        @attrs.frozen(cache_hash=True)
        class Cached:
            a: int

    finally:
        attr._make.__dict__.pop("compile", None)
    return seen


def _same(a: CodeType, b: CodeType) -> None:
    """Same bytecode, names and constants (nested code alike); line tables aside."""
    assert (a.co_code, a.co_names, a.co_varnames, a.co_flags, a.co_filename) == (
        b.co_code, b.co_names, b.co_varnames, b.co_flags, b.co_filename
    )  # fmt: skip
    assert len(a.co_consts) == len(b.co_consts)
    for x, y in zip(a.co_consts, b.co_consts, strict=True):
        if isinstance(x, CodeType):
            assert isinstance(y, CodeType)
            _same(x, y)
        else:
            assert type(x) is type(y) and x == y


def test_the_cache_answers_what_compile_makes(tmp_path, monkeypatch) -> None:
    target = str(tmp_path / "attrs-code.marshal")
    monkeypatch.setattr(attrs_code, "path", lambda: target)
    monkeypatch.setattr(attrs_code, "_cache", None)
    monkeypatch.setattr(attrs_code, "_new", {})
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    scripts = _scripts()
    assert any("def __hash__(" in source for source, _ in scripts)
    for source, filename in scripts:  # compiled: a miss
        _same(
            attrs_code.compile_(source, filename, "exec", FLAGS, True),
            compile(source, filename, "exec", FLAGS, True),
        )
    assert attrs_code._new
    attrs_code.save()
    assert os.path.exists(target) and not attrs_code._new
    monkeypatch.setattr(attrs_code, "_cache", None)
    for source, filename in scripts:  # read back: hits, nothing new
        _same(
            attrs_code.compile_(source, filename, "exec", FLAGS, True),
            compile(source, filename, "exec", FLAGS, True),
        )
    assert not attrs_code._new
    # another process, another hash seed: its __hash__ scripts hold another number, the cache
    # still answers them, with that number
    code = (
        "import sys; from forge_policy._infra import attrs_code as c\n"
        f"c.path = lambda: {target!r}\n"
        "from forge_policy._infra.lean_attrs import load; load()\n"
        "import attrs\n"
        "@attrs.frozen\nclass H:\n    a: int\n"
        "expected = hash((hash('<attrs generated hash __main__.H>'), 1))\n"
        "assert hash(H(1)) == expected, (hash(H(1)), expected)\n"
        "print(len(c._new))\n"
        "c.save()\n"
    )
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0"  # the second process found everything in the file


def test_a_damaged_file_is_an_empty_cache(tmp_path, monkeypatch) -> None:
    target = tmp_path / "attrs-code.marshal"
    monkeypatch.setattr(attrs_code, "path", lambda: str(target))
    for data in (b"", b"junk", attrs_code.MAGIC_NUMBER + attrs_code._HEADER + b"\x00\x01"):
        target.write_bytes(data)
        assert attrs_code._read() == {}
