"""search-first gives credit per file looked at (issue 11), with its escalation unchanged.

A Read credits its file; a Grep, Glob or LS every file under the folder it searched, new files
included. A Write or Edit no look covered is a violation: nudge, nudge, warning, warning, then a
soft block. The credit is kept (no flag the next write spends) and bounded per session.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

import forge_policy as fp
from forge_policy.engine.keyed_flags import KEY_LIMIT
from forge_policy.facts.search import provide_search_credits, provide_write_credits
from forge_policy.model import Event

# a real project: a Grep's path is a file or a folder according to the disk
ROOT = str(Path(tempfile.mkdtemp(prefix="search-first-")).resolve())
atexit.register(shutil.rmtree, ROOT, True)
for _name in ("setup.cfg", "src/a.py"):
    (Path(ROOT) / _name).parent.mkdir(parents=True, exist_ok=True)
    (Path(ROOT) / _name).write_text("x = 1\n")


def call(tool: str, cwd: str = ROOT, **tool_input: Any) -> Event:
    return Event("PreToolUse", "s1", tool_name=tool, tool_input=tool_input, cwd=cwd)


def outcomes(calls: list[Event]) -> list[str]:
    """search-first's level for each call in one session ("" when it says nothing)."""
    catalog = fp.builtin_catalog()
    ev = fp.Evaluator(catalog.with_enabled({i: i == "search-first" for i in catalog.ids}))
    seen = []
    for event in calls:
        decision = ev.evaluate(event)
        levels = [v.level.label for v in decision.violations if v.behavior_id == "search-first"]
        seen.append(levels[0] if levels else "")
    return seen


GREP_SRC = call("Grep", pattern="def create_order", path=f"{ROOT}/src")
READ_A = call("Read", file_path=f"{ROOT}/src/a.py")


# each case: the looks before, then the write judged; True: credited (no violation)
CASES: list[tuple[str, list[Event], Event, bool]] = [
    # --- must pass: the write is covered by a look ---
    ("grep, read, edit, write a new file in the folder (issue 11)",
     [GREP_SRC, READ_A, call("Edit", file_path=f"{ROOT}/src/a.py", old_string="a",
                             new_string="b")],
     call("Write", file_path=f"{ROOT}/src/new.py", content="x"), True),
    ("read then edit the same file twice: credit is kept",
     [READ_A, call("Edit", file_path=f"{ROOT}/src/a.py", old_string="a", new_string="b")],
     call("Edit", file_path=f"{ROOT}/src/a.py", old_string="b", new_string="c"), True),
    ("a grep with no path searched the working directory",
     [call("Grep", pattern="TODO")], call("Write", file_path=f"{ROOT}/pkg/deep/x.py"), True),
    ("a glob's pattern folder covers a new file under it",
     [call("Glob", pattern="tests/**/*.py")],
     call("Write", file_path=f"{ROOT}/tests/unit/test_new.py"), True),
    ("a grep with a glob narrows to its folder, which covers the write",
     [call("Grep", pattern="x", glob="src/*.ts")], call("Edit", file_path=f"{ROOT}/src/b.ts"),
     True),
    ("a relative Write path resolves against the cwd",
     [GREP_SRC], call("Write", file_path="src/rel.py"), True),
    ("an LS of the folder", [call("LS", path=f"{ROOT}/docs")],
     call("Write", file_path=f"{ROOT}/docs/guide.md"), True),
    ("a grep of one file credits that file", [call("Grep", pattern="x", path=f"{ROOT}/setup.cfg")],
     call("Edit", file_path=f"{ROOT}/setup.cfg"), True),
    ("a shell search of the folder", [call("Bash", command="rg -n create_order src")],
     call("Write", file_path=f"{ROOT}/src/new.py"), True),
    ("a shell listing after cd", [call("Bash", command="cd src && ls -la")],
     call("Write", file_path=f"{ROOT}/src/new.py"), True),
    ("a shell read of the file", [call("Bash", command="sed -n 1,20p src/a.py; cat src/a.py")],
     call("Edit", file_path=f"{ROOT}/src/a.py"), True),
    ("find under the root", [call("Bash", command=f"find {ROOT} -name '*.py'")],
     call("Write", file_path=f"{ROOT}/pkg/x.py"), True),
    # --- must violate: nothing looked at what is written ---
    ("a shell command that looks at nothing", [call("Bash", command="echo src/new.py; pytest")],
     call("Write", file_path=f"{ROOT}/src/new.py"), False),
    ("a plain grep of stdin looks at no folder", [call("Bash", command="ps aux | grep src")],
     call("Write", file_path=f"{ROOT}/src/new.py"), False),
    ("a shell read of another file", [call("Bash", command="cat setup.cfg")],
     call("Write", file_path=f"{ROOT}/src/new.py"), False),
    ("no look at all", [], call("Write", file_path=f"{ROOT}/src/a.py"), False),
    ("a read of another file in the folder is not a search of it",
     [READ_A], call("Write", file_path=f"{ROOT}/src/new.py"), False),
    ("a search of a sibling folder", [GREP_SRC], call("Write", file_path=f"{ROOT}/lib/x.py"),
     False),
    ("a search of a subfolder does not cover its parent",
     [call("Grep", pattern="x", path=f"{ROOT}/src/sub")],
     call("Edit", file_path=f"{ROOT}/src/a.py"), False),
    ("a glob narrowed to tests/ does not cover src/", [call("Glob", pattern="tests/*.py")],
     call("Write", file_path=f"{ROOT}/src/x.py"), False),
    ("a folder whose name extends the searched one", [GREP_SRC],
     call("Write", file_path=f"{ROOT}/src2/x.py"), False),
    ("a grep of one file does not cover its folder",
     [call("Grep", pattern="x", path=f"{ROOT}/setup.cfg")],
     call("Write", file_path=f"{ROOT}/other.cfg"), False),
    ("looks in another session do not count", [],
     call("Write", file_path=f"{ROOT}/src/new.py"), False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("looks", "write", "credited"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_credit_per_file(looks: list[Event], write: Event, credited: bool) -> None:
    results = outcomes([*looks, write])
    assert results[:-1] == [""] * len(looks)  # the looks themselves never violate
    assert (results[-1] == "") is credited


def test_escalation_is_unchanged_for_real_violations() -> None:
    writes = [call("Write", file_path=f"{ROOT}/lib/m{i}.py", content="x") for i in range(5)]
    assert outcomes([GREP_SRC, READ_A, *writes]) == [
        "", "", "nudge", "nudge", "warning", "warning", "soft_block"
    ]  # fmt: skip


def test_the_credit_is_bounded_and_recent_paths_keep_it() -> None:
    catalog = fp.builtin_catalog()
    ev = fp.Evaluator(catalog.with_enabled({i: i == "search-first" for i in catalog.ids}))
    first = call("Read", file_path=f"{ROOT}/keep.py")
    ev.evaluate(first)
    for i in range(KEY_LIMIT * 3):
        ev.evaluate(call("Read", file_path=f"{ROOT}/f{i}.py"))
        if i % 100 == 0:
            ev.evaluate(first)  # read again now and then: it stays among the recent keys
    flags = ev.status("s1").flags
    assert len(flags) == KEY_LIMIT
    assert f"searched:{ROOT}/keep.py" in flags
    assert f"searched:{ROOT}/f{KEY_LIMIT * 3 - 1}.py" in flags
    assert f"searched:{ROOT}/f0.py" not in flags  # the oldest were dropped
    edit = ev.evaluate(call("Edit", file_path=f"{ROOT}/f0.py"))
    assert [v.behavior_id for v in edit.violations] == ["search-first"]


def test_facts_name_the_keys() -> None:
    assert provide_search_credits(call("Glob", pattern="/abs/x/**/*.md")) == ["/abs/x/"]
    assert provide_search_credits(call("Glob", pattern="**/*.md", path="docs")) == [f"{ROOT}/docs/"]
    assert provide_search_credits(call("Bash", command="grep -r x .")) == [f"{ROOT}/"]
    assert provide_search_credits(call("Read", file_path="")) == []
    assert provide_write_credits(call("Read", file_path="/a")) == []
    assert provide_write_credits(call("NotebookEdit", notebook_path="/n/b.ipynb")) == [
        "/n/b.ipynb", "/n/", "/"
    ]  # fmt: skip
    assert provide_write_credits(call("Write", file_path="x\0y")) == []
