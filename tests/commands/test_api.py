"""The command analyser's public API (``forge_policy.commands``): every name it lists loads, each
from the submodule that defines it, and none is shadowed by a submodule of the same name."""

from __future__ import annotations

import importlib
import pkgutil

import forge_policy.commands as commands


def test_every_public_name_loads_from_its_module() -> None:
    for name in commands.__all__:
        value = getattr(commands, name)
        module = commands._LAZY[name]
        assert getattr(importlib.import_module(module), name) is value, name
    assert set(commands._LAZY) == set(commands.__all__)
    assert set(commands.__all__) <= set(dir(commands))


def test_no_public_name_is_also_a_submodule() -> None:
    # importing a submodule sets the package attribute of its name, which would hide a lazy
    # export of that name (``from forge_policy.commands import deletes`` giving the module)
    submodules = {info.name for info in pkgutil.iter_modules(commands.__path__)}
    for name in submodules:
        importlib.import_module(f"forge_policy.commands.{name}")
    assert submodules >= {"shell", "lines", "execution", "git_argv", "deletes", "interpreters"}
    assert submodules.isdisjoint(commands.__all__)
    assert callable(commands.recursive_deletes)
