"""The plain record classes are attrs classes that keep their constructors, reprs and equality."""

from __future__ import annotations

import os
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_policy.audit.insights import _Sum
from forge_policy.audit.verify import VerifyReport
from forge_policy.commands.git_commit import Commit, commits
from forge_policy.commands.shell import Command, Redirect, lex
from forge_policy.config.env import Config
from forge_policy.engine.inputs import Settings
from forge_policy.facts.files import Collected
from forge_policy.ops.git_install import HookChange
from forge_policy.ops.init import Action, Report
from forge_policy.serve.warm import _Snapshot
from forge_policy.state import touch_interval

FROZEN = (Action, Commit, Config, HookChange, Settings, VerifyReport, _Snapshot)
MUTABLE = (Collected, Command, Redirect, Report, _Sum)


@pytest.mark.parametrize("cls", [*FROZEN, *MUTABLE], ids=lambda cls: cls.__name__)
def test_records_are_slotted_attrs_classes(cls: type) -> None:
    assert attrs.has(cls), cls
    assert "__slots__" in vars(cls), cls
    assert "__dict__" not in dir(cls), cls  # no per-instance dict: slots only


def frozen_instances() -> list[object]:
    return [
        Action("created", "p"),
        Commit("/r", "m", all_=False),
        Config(root="/p/.forge", store="memory"),
        HookChange("pre-commit", "p", "created"),
        Settings(),
        VerifyReport(1, [], False),
        _Snapshot([], (), None, ""),
    ]


@pytest.mark.parametrize("instance", frozen_instances(), ids=lambda i: type(i).__name__)
def test_frozen_records_refuse_assignment(instance: object) -> None:
    name = attrs.fields(type(instance))[0].name  # type: ignore[arg-type]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        setattr(instance, name, getattr(instance, name))


def fresh(cls: Any) -> object:
    """A new instance of ``cls``, equal field by field to any other from here."""
    if cls in MUTABLE:
        return cls("<") if cls is Redirect else cls()
    return next(i for i in frozen_instances() if type(i) is cls)


@pytest.mark.parametrize("cls", [*FROZEN, *MUTABLE], ids=lambda cls: cls.__name__)
def test_equality_stays_by_identity_and_instances_stay_hashable(cls: type) -> None:
    # before attrs none of these defined __eq__: equal-looking records were distinct
    first, second = fresh(cls), fresh(cls)
    assert first == first and first != second
    assert len({first, second}) == 2


def test_constructors_keep_their_signatures() -> None:
    assert Redirect("<<").target == "" and Redirect("<<").body is None
    command = Command()
    assert (command.words, command.redirects, command.piped_from) == ([], [], None)
    commit = Commit("/r", "fix: x", True)  # positional, ``all_`` third
    assert (commit.cwd, commit.message, commit.all) == ("/r", "fix: x", True)
    assert Commit("/r", "m", all_=False).all is False
    assert (Action("created", "p").detail, HookChange("h", "p", "a").detail) == ("", "")
    with pytest.raises(TypeError):
        Config("/p/.forge")  # type: ignore[call-arg]  # keyword-only, as before
    with pytest.raises(TypeError):
        Settings(60.0)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Settings(touch_interval=1.0)  # type: ignore[call-arg]  # derived, never passed


def test_reprs_and_strings_the_cli_prints_are_unchanged() -> None:
    assert str(Action("created", ".forge/runtime")) == "created   .forge/runtime"
    assert str(Action("unchanged", "x", "kept")) == "unchanged x: kept"
    assert (
        repr(HookChange("commit-msg", "p", "skipped", "why")) == "<HookChange commit-msg skipped>"
    )
    assert repr(VerifyReport(2, ["line 3: torn tail"], True)) == (
        "VerifyReport(ok=False, records=2, problems=['line 3: torn tail'], torn_tail=True)"
    )
    assert VerifyReport(2, ["x"], False).to_dict() == {
        "ok": False,
        "records": 2,
        "problems": ["x"],
        "torn_tail": False,
    }
    # the hook-path records keep object's repr (a generated one costs import time per hook)
    for record in (Redirect("<"), Command(), Commit("/r", "m", False), Collected(), Settings()):
        assert repr(record).startswith(f"<{type(record).__module__}.{type(record).__name__} object")
    config = Config(root="/p/.forge", store="memory", environ={"API_TOKEN": "s3cret"})
    assert repr(config) == "<Config root='/p/.forge' store='memory' profile='standard'>"


def test_config_keeps_its_derived_attributes() -> None:
    disable = {"a": "FORGE_DISABLE"}
    config = Config(root="rel/.forge", disable=disable)
    assert config.root == os.path.abspath("rel/.forge")
    assert config.project_dir == os.path.dirname(config.root)
    assert config.disable == disable and config.disable is not disable  # a copy
    assert config.environ == {}
    explicit = Config(root="/p/.forge", project_dir="/elsewhere", environ={"X": "1"})
    assert (explicit.project_dir, explicit.environ) == ("/elsewhere", {"X": "1"})
    assert Config(root="/p/.forge", project_dir=None).project_dir == "/p"
    assert Config(root="/p/.forge", project_dir="").project_dir == "/p"


paths = st.lists(st.sampled_from(["a", "b", ".forge", "..", "."]), min_size=1, max_size=5)


@given(parts=paths, absolute=st.booleans())
def test_config_root_is_absolute_and_project_dir_its_parent(
    parts: list[str], absolute: bool
) -> None:
    root = os.path.join("/" if absolute else "", *parts)
    config = Config(root=root)
    assert config.root == os.path.abspath(root)
    assert config.project_dir == os.path.dirname(os.path.abspath(root))


@given(ttl=st.floats(min_value=0.0, max_value=1e9, allow_nan=False))
def test_settings_touch_interval_follows_ttl(ttl: float) -> None:
    assert Settings(ttl=ttl).touch_interval == touch_interval(ttl)


def test_the_lexer_and_commit_parser_still_fill_the_records() -> None:
    first, second = lex("echo hi | cat > out <<E\nbody\nE\n")
    assert second.piped_from is first
    assert [(r.op, r.target, r.body) for r in second.redirects] == [
        (">", "out", None),
        ("<<", "E", "body\n"),
    ]
    (commit,) = commits("git -C sub commit -am 'feat: x'", "/r")
    assert (commit.cwd, commit.message, commit.all) == ("/r/sub", "feat: x", True)


def test_report_collects_actions_in_order() -> None:
    report = Report()
    report.add("unchanged", "a")
    assert not report.changed
    report.add("created", "b", "new")
    assert [str(a) for a in report.actions] == ["unchanged a", "created   b: new"]
    assert report.changed
    assert Report().actions == [] and Report().actions is not Report().actions
