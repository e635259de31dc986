"""Recursive deletes and their scope (``commands.deletes``), both directions.

The project is :data:`CWD`; each row gives the scopes the command's recursive deletes get, in
order (``[]``: nothing is deleted recursively).
"""

from __future__ import annotations

import os

import pytest

from forge_policy.commands.deletes import recursive_deletes, scope
from forge_policy.commands.execution import runs

CWD = "/srv/project"
HOME = os.path.expanduser("~")

SCOPES = [
    ("rm -rf /", ["root forced"]),
    ("rm -r /*", ["root"]),
    ("rm -rf ~", ["home forced"]),
    ("rm -rf $HOME/*", ["home forced"]),
    ("find / -delete", ["root forced"]),
    ("find ~ -exec rm -rf {} \\;", ["home forced"]),
    ("echo / | xargs rm -rf", ["root forced"]),
    ("parallel busybox rm -rf {} ::: /", ["root forced"]),
    # the project itself, and what holds it
    ("rm -rf .", ["project forced"]),
    ("rm -rf *", ["project forced"]),
    ("rm -rf .*", ["project forced"]),
    ("rm -rf ..", ["project forced"]),
    ("find . -delete", ["project forced"]),
    ("find . -exec rm -rf {} \\;", ["project forced"]),
    # inside the project
    ("rm -rf build/", ["inside forced"]),
    ("rm -rf ./dist node_modules", ["inside forced", "inside forced"]),
    ("cd sub && rm -rf out", ["inside forced"]),
    ("rm -r build", ["inside"]),
    # temporary directories, written as such
    ("rm -rf /tmp/build", ["temp forced"]),
    ("rm -rf /var/tmp/*", ["temp forced"]),
    ("rm -rf $TMPDIR/x", ["temp forced"]),
    ("rm -rf ${TMPDIR:-/tmp}/x", ["temp forced"]),
    ("TMPDIR=/tmp/sub rm -rf $TMPDIR/x", ["temp forced"]),
    # outside
    ("rm -rf /etc", ["outside forced"]),
    ("rm -rf ../other", ["outside forced"]),
    ("cd .. && rm -rf build", ["outside forced"]),
    ("rm -rf /tmp/../etc", ["outside forced"]),
    ("TMPDIR=/tmp/../root rm -rf $TMPDIR/x", ["outside forced"]),
    ("TMPDIR= rm -rf $TMPDIR/x", ["outside forced"]),
    ("rm -rf ~/Documents", ["outside forced"]),
    ("ssh host rm -rf /tmp/data", ["outside forced"]),
    ("env -C /etc rm -rf x", ["outside forced"]),
    ("sudo --chdir=/ rm -rf x", ["outside forced"]),
    ("env --chdir sub rm -rf x", ["inside forced"]),
    ("rsync -a --delete empty/ /", ["root forced"]),
    ("rsync -a --delete-after src/ ../mirror", ["outside forced"]),
    ("rsync -a --delete src/ build/", ["inside forced"]),
    ("rsync -a src/ /backup", []),
    # not decided by the command line
    ("rm -rf $NOPE/x", ["unknown forced"]),
    ("rm -rf `pwd`/x", ["unknown forced"]),
    ("find . | xargs rm -rf", ["unknown forced"]),
    ("find . -name '*.pyc' -delete", ["unknown forced"]),
    ("ssh host 'rm -rf ./build'", ["unknown forced"]),
    ("rm -rf ~nosuchuser-here/x", ["unknown forced"]),
    # no recursive delete
    ("rm -f a b", []),
    ("rm -rf", []),
    ("rm -- -rf /tmp/safe", []),
    ("find . -name -delete -print", []),
    ("find . -exec echo -delete + -print", []),
    ("find . -exec rm -f {} \\;", []),
    ('echo "rm -rf /"', []),
    ("rmdir -p a/b", []),
]


@pytest.mark.parametrize(("command", "expected"), SCOPES)
def test_scopes(command: str, expected: list[str]) -> None:
    found = [str(d).split(":", 1)[0] for r in runs(command, CWD) for d in recursive_deletes(r, CWD)]
    assert found == expected


def test_a_delete_names_its_target_and_the_command_as_read() -> None:
    (delete,) = [d for r in runs("echo / | xargs rm -rf", CWD) for d in recursive_deletes(r, CWD)]
    assert str(delete) == "root forced: / by rm -r -f / reached through xargs"


def test_a_project_under_a_temporary_directory_is_still_the_project() -> None:
    assert scope("/tmp", "/tmp/p", "/tmp/p")[1] == "project"
    assert scope("/tmp/*", "/tmp/p", "/tmp/p")[1] == "project"
    assert scope("/tmp/q", "/tmp/p", "/tmp/p")[1] == "temp"
    assert scope("../q", "/tmp/p", "/tmp/p")[1] == "outside"  # relative: leaves the project


def test_home_is_the_expanded_home() -> None:
    assert scope("~/", CWD, CWD) == (HOME, "home")


def test_a_cwd_of_root_or_home_is_no_project_boundary() -> None:
    assert scope("/etc", "/", "/")[1] == "outside"
    assert scope("Documents", HOME, HOME)[1] == "outside"
    assert scope(".", HOME, HOME)[1] == "home"
