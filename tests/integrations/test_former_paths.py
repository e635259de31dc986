"""The integrations' former paths (``forge_policy.harness.claude_agent_sdk``, ``…openai_agents``,
``…langchain``) still import, and hand out the very objects of the canonical
``forge_policy.integrations`` modules: every public name, none missing."""

from __future__ import annotations

import importlib
import types

import pytest

MOVED = ("claude_agent_sdk", "openai_agents", "langchain")


def public_names(module: types.ModuleType) -> set[str]:
    """The functions and classes a module defines, and its constants, without leading ``_``."""
    names = set()
    for name, value in vars(module).items():
        if name.startswith("_") or name == "TYPE_CHECKING":
            continue
        if getattr(value, "__module__", None) == module.__name__ or (
            name.isupper() and isinstance(value, str | int | tuple)
        ):
            names.add(name)
    return names


@pytest.mark.parametrize("name", MOVED)
def test_the_former_path_re_exports_every_public_name(name: str) -> None:
    old = importlib.import_module(f"forge_policy.harness.{name}")
    new = importlib.import_module(f"forge_policy.integrations.{name}")
    assert set(old.__all__) == public_names(new)
    for attribute in old.__all__:
        assert getattr(old, attribute) is getattr(new, attribute), attribute
    assert f"forge_policy.integrations.{name}" in (old.__doc__ or "")  # says which is canonical
