"""The rewrite's text (SPEC §13): bubblewrap's mount order and path rules, the exact quoting
of any command, the Landlock launcher's command line and floor check, the ``sandbox-exec``
profile (generated and read here, never run: this is Linux) and the method probe."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forge_policy.floor import landlock
from forge_policy.floor.model import Floor, FloorPath
from forge_policy.floor.sandbox import (
    BWRAP_BASE,
    LAUNCHER,
    bwrap_argv,
    command_for,
    methods_available,
    seatbelt_profile,
    unheld,
)


def mounts(argv: list[str]) -> list[tuple[str, str]]:
    """(option, destination) of each mount after :data:`BWRAP_BASE`."""
    rest = argv[1 + len(BWRAP_BASE) :]
    out = []
    i = 0
    while i < len(rest):
        option = rest[i]
        if option in ("--bind", "--ro-bind"):
            out.append((option, rest[i + 2]))
            i += 3
        else:
            out.append((option, rest[i + 1]))
            i += 2
    return out


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path.resolve()
    (root / "p" / ".forge").mkdir(parents=True)
    (root / "p" / ".claude").mkdir()
    (root / "p" / ".git" / "hooks").mkdir(parents=True)
    (root / "p" / ".git" / "config").write_text("[core]\n")
    (root / "home" / ".ssh").mkdir(parents=True)
    (root / "home" / ".netrc").write_text("machine x\n")
    return root


def floor_of(root: Path, *, kept: tuple[str, ...] = (), hidden: tuple[str, ...] = ()) -> Floor:
    project = str(root / "p")
    return Floor(
        project,
        # inner before outer on purpose: the order of the floor must not matter
        (FloorPath(project, "project"), FloorPath(str(root), "temp")),
        tuple(FloorPath(str(root / "p" / k), "protect-governance") for k in kept),
        tuple(FloorPath(str(root / h), "agent-shield") for h in hidden),
    )


def test_writable_binds_come_first_outer_before_inner(tree: Path) -> None:
    floor = floor_of(tree, kept=(".forge", ".git/hooks"), hidden=("home/.ssh",))
    seen = mounts(bwrap_argv(floor))
    binds = [d for o, d in seen if o == "--bind"]
    assert binds[0] == str(tree) and str(tree / "p") in binds
    for i, outer in enumerate(binds):  # outer before inner
        assert not any(outer.startswith(inner + "/") for inner in binds[i + 1 :])
    first_ro = min(i for i, (o, _) in enumerate(seen) if o != "--bind")
    assert all(o == "--bind" for o, _ in seen[:first_ro])
    assert all(o != "--bind" for o, _ in seen[first_ro:])  # nothing writable after a kept path
    assert ("--ro-bind", str(tree / "p" / ".forge")) in seen
    assert ("--tmpfs", str(tree / "home" / ".ssh")) in seen


def test_folders_above_a_mount_inside_a_writable_root_are_pinned(tree: Path) -> None:
    seen = mounts(bwrap_argv(floor_of(tree, kept=(".git/hooks",), hidden=("home/.ssh",))))
    order = [d for _, d in seen]
    assert ("--bind", str(tree / "p" / ".git")) in seen  # renaming .git would carry hooks away
    assert ("--bind", str(tree / "home")) in seen
    assert order.index(str(tree / "p" / ".git")) < order.index(str(tree / "p" / ".git" / "hooks"))


def test_never_read_folders_get_an_empty_read_only_tmpfs_and_files_dev_null(tree: Path) -> None:
    argv = bwrap_argv(floor_of(tree, hidden=("home/.ssh", "home/.netrc")))
    text = shlex.join(argv)
    ssh = str(tree / "home" / ".ssh")
    assert f"--tmpfs {ssh} --remount-ro {ssh}" in text
    assert f"--ro-bind /dev/null {tree / 'home' / '.netrc'}" in text


def test_a_symlinked_floor_path_is_held_where_it_points(tree: Path) -> None:
    (tree / "dotfiles" / "ssh").mkdir(parents=True)
    (tree / "dotfiles" / "ssh" / "id_rsa").write_text("SECRET\n")
    (tree / "home" / ".ssh").rmdir()
    (tree / "home" / ".ssh").symlink_to(tree / "dotfiles" / "ssh")
    project = str(tree / "p")
    floor = Floor(
        project,
        (FloorPath(project, "project"),),  # home and dotfiles are not writable
        (),
        (FloorPath(str(tree / "home" / ".ssh"), "agent-shield"),),
    )
    argv = bwrap_argv(floor)
    assert ("--tmpfs", str(tree / "dotfiles" / "ssh")) in mounts(argv)
    if os.path.exists("/usr/bin/bwrap") and "bwrap" in methods_available({"PATH": "/usr/bin"}):
        for path in (tree / "home" / ".ssh" / "id_rsa", tree / "dotfiles" / "ssh" / "id_rsa"):
            text = command_for(floor, f"cat {shlex.quote(str(path))}", "bwrap")
            done = subprocess.run(["/bin/bash", "-c", text], capture_output=True, text=True)
            assert done.returncode != 0 and "SECRET" not in done.stdout, done


def test_a_symlink_a_sandbox_could_replace_is_refused(tree: Path) -> None:
    (tree / "real-claude").mkdir()
    (tree / "p" / ".claude").rmdir()
    (tree / "p" / ".claude").symlink_to(tree / "real-claude")
    floor = floor_of(tree, kept=(".claude",))
    with pytest.raises(ValueError, match="symbolic link in a folder the sandbox may write"):
        bwrap_argv(floor)
    with pytest.raises(ValueError, match="cannot be held"):
        command_for(floor, "ls", "bwrap")
    (tree / "p" / "link").symlink_to(tree / "p" / ".git")  # a link above the held path
    with pytest.raises(ValueError, match="link is a symbolic link"):
        bwrap_argv(floor_of(tree, kept=("link/hooks",)))


def test_a_missing_path_under_a_pointer_file_keeps_the_file(tree: Path) -> None:
    (tree / "p" / ".git" / "config").unlink()
    (tree / "p" / ".git" / "hooks").rmdir()
    (tree / "p" / ".git").rmdir()
    (tree / "p" / ".git").write_text("gitdir: /elsewhere/.git/worktrees/p\n")  # a worktree
    seen = mounts(bwrap_argv(floor_of(tree, kept=(".git/hooks", ".git/config"))))
    assert ("--ro-bind", str(tree / "p" / ".git")) in seen
    assert not any(d.startswith(str(tree / "p" / ".git") + "/") for _, d in seen)


def test_a_missing_path_is_covered_by_a_kept_ancestor_or_left_to_the_hook(tree: Path) -> None:
    floor = floor_of(tree, kept=(".claude", ".claude/settings.local.json", ".cursor", ".x/y/z"))
    seen = mounts(bwrap_argv(floor))
    destinations = [d for _, d in seen]
    assert str(tree / "p" / ".claude" / "settings.local.json") not in destinations
    # no placeholder mount: it would leave an empty folder behind in the project for good
    assert not any(
        d.startswith((str(tree / "p" / ".cursor"), str(tree / "p" / ".x"))) for d in destinations
    )
    assert not (tree / "p" / ".cursor").exists()
    left = {p.path for p in unheld(floor, "bwrap")}
    assert left == {str(tree / "p" / ".cursor"), str(tree / "p" / ".x" / "y" / "z")}


def test_paths_outside_every_writable_root_need_no_mount(tree: Path) -> None:
    floor = Floor(str(tree / "p"), (FloorPath(str(tree / "p"), "project"),))
    floor = Floor(floor.project, floor.writable, (FloorPath("/usr/lib", "installation"),))
    assert ("--ro-bind", "/usr/lib") not in mounts(bwrap_argv(floor))


def test_command_for_rejects_what_it_cannot_run(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    floor = floor_of(tree)
    with monkeypatch.context() as patch:
        patch.setenv("PATH", str(tree / "empty"))
        with pytest.raises(ValueError, match="not installed"):
            command_for(floor, "ls", "bwrap")
    with pytest.raises(ValueError, match="unknown floor method"):
        command_for(floor, "ls", "chroot")
    with pytest.raises(ValueError, match="NUL"):
        command_for(floor, "ls\0", "bwrap")
    everything = Floor("/", (FloorPath("/", "project"),))
    with pytest.raises(ValueError, match="writable inside the sandbox"):
        command_for(everything, "ls", "bwrap")
    with pytest.raises(ValueError, match="writable inside the sandbox"):
        command_for(floor, "ls", "landlock", python=str(tree / "p" / ".venv" / "bin" / "python"))


def dump_argv(text: str, program: str, tmp: Path) -> list[str]:
    """Run ``text`` with ``bash -c`` as a harness would, its first word replaced by a program
    that prints its arguments: what bubblewrap (or the launcher) receives."""
    words = shlex.split(text)
    assert words[0] == program
    dumper = tmp / "dump"
    dumper.write_text(
        f"#!{sys.executable}\nimport sys, json\nprint(json.dumps(sys.argv[1:]))\n", "utf-8"
    )
    dumper.chmod(0o755)
    swapped = shlex.quote(str(dumper)) + text[len(shlex.quote(program)) :]
    done = subprocess.run(["/bin/bash", "-c", swapped], capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr
    parsed: list[str] = json.loads(done.stdout)
    return parsed


COMMANDS = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=200
)


@settings(max_examples=60, deadline=None)
@given(command=COMMANDS)
def test_the_inner_shell_receives_the_command_byte_for_byte(command: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        floor = Floor(folder, (FloorPath(folder, "project"),))
        for method in ("bwrap", "landlock", "sandbox-exec"):
            text = command_for(floor, command, method)
            program = shlex.split(text)[0]
            received = dump_argv(text, program, tmp)
            assert received[-3:-1] == ["/bin/bash", "-c"] or method == "landlock"
            assert received[-1] == command
            assert received[-1].encode("utf-8") == command.encode("utf-8")


def test_the_landlock_rewrite_runs_the_launcher_with_the_floor_inline(tree: Path) -> None:
    floor = floor_of(tree, kept=(".forge",))
    words = shlex.split(command_for(floor, "make test", "landlock", python="/usr/bin/python3"))
    assert words[:4] == ["/usr/bin/python3", "-I", "-S", LAUNCHER]
    assert Floor.from_json(words[4]) == floor and words[5] == "make test"


DOCUMENTS = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 3) | st.sampled_from(["", "/p", "p", "/"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["format", "project", "writable", "never_read", "path", "reason"]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(document=DOCUMENTS)
def test_the_launcher_accepts_exactly_the_documents_the_model_accepts(document: object) -> None:
    text = json.dumps(document)
    try:
        model = Floor.from_dict(json.loads(text))
    except ValueError:
        model = None
    try:
        read = landlock.parse(text)
    except landlock.SetupError:
        read = None
    assert (model is None) == (read is None)
    if model is not None and read is not None:
        assert read["writable"] == [p.path for p in model.writable]
        assert read["never_written"] == [p.path for p in model.never_written]


def test_the_seatbelt_profile_denies_by_path_without_order_mattering(tree: Path) -> None:
    (tree / 'we"ird').mkdir()
    floor = Floor(
        str(tree / "p"),
        (FloorPath(str(tree / "p"), "project"), FloorPath(str(tree / 'we"ird'), "temp")),
        (FloorPath(str(tree / "p" / ".git" / "hooks"), "git"),),
        (FloorPath(str(tree / "home" / ".ssh"), "agent-shield"),),
    )
    profile = seatbelt_profile(floor)
    lines = profile.splitlines()
    assert lines[:4] == [
        "(version 1)",
        "(allow default)",
        "(deny file-write*",
        "  (require-not (require-any",
    ]
    assert f'    (subpath "{tree}/p")' in lines
    assert f'    (subpath "{tree}/we\\"ird")' in lines
    assert '    (literal "/dev/null")' in lines
    assert f'(deny file-write*\n  (subpath "{tree}/p/.git/hooks")\n)' in profile
    assert f'(deny file-read* file-write*\n  (subpath "{tree}/home/.ssh")\n)' in profile
    assert f'(deny file-write-unlink\n  (literal "{tree}/p/.git")\n)' in profile
    assert all(line.startswith(("(", "  ")) or line == ")" for line in lines)
    text = command_for(floor, "ls", "sandbox-exec")
    assert shlex.split(text) == ["/usr/bin/sandbox-exec", "-p", profile, "/bin/bash", "-c", "ls"]


def test_unheld_names_what_landlock_leaves_to_the_hook(tree: Path) -> None:
    floor = floor_of(tree, kept=(".forge",), hidden=("home/.ssh",))
    floor = Floor(
        floor.project,
        floor.writable,
        (*floor.never_written, FloorPath("/usr", "i")),
        floor.never_read,
    )
    assert unheld(floor, "bwrap") == () == unheld(floor, "sandbox-exec")
    assert unheld(floor, "landlock") == (floor.never_written[0], *floor.never_read)


def test_methods_available_probes_bubblewrap_for_real(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    found = methods_available({"PATH": str(tmp_path)})  # a bwrap that cannot run
    assert "bwrap" not in found
    assert methods_available({"PATH": str(tmp_path)}) is found  # cached
    assert ("landlock" in found) == (landlock.abi() >= landlock.ABI_MIN)
    if os.path.exists("/usr/bin/bwrap"):
        real = methods_available({"PATH": "/usr/bin"})
        done = subprocess.run(["/usr/bin/bwrap", *BWRAP_BASE, "--", "/bin/true"], check=False)
        assert ("bwrap" in real) == (done.returncode == 0)


def test_the_launcher_imports_only_the_standard_library(tmp_path: Path) -> None:
    if landlock.abi() < landlock.ABI_MIN:
        pytest.skip(f"this kernel offers Landlock ABI {landlock.abi()}, the launcher needs 3")
    floor = Floor(str(tmp_path), (FloorPath(str(tmp_path), "project"),))
    words = shlex.split(command_for(floor, "echo ran", "landlock"))
    done = subprocess.run(
        [words[0], "-X", "importtime", *words[1:]], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout == "ran\n", done.stderr
    imported = {
        line.split("|")[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "imported package" not in line
    }
    assert "landlock" in imported and "_json" in imported and "json" not in imported
    outside = {m for m in imported - {"landlock"} if m.split(".")[0] not in sys.stdlib_module_names}
    assert outside == set()


def test_the_memoised_command_line_follows_the_file_system(tree: Path) -> None:
    """``bwrap_argv`` is memoised per floor; any path of the floor (or an ancestor) that
    appears, disappears or is replaced by a link makes it compute the command line again."""
    floor = floor_of(tree, kept=(".cursor", ".forge"), hidden=("home/.aws",))
    before = mounts(bwrap_argv(floor))
    assert ("--ro-bind", str(tree / "p" / ".cursor")) not in before  # missing: the hook's
    assert mounts(bwrap_argv(floor)) == before
    (tree / "p" / ".cursor").mkdir()
    (tree / "home" / ".aws").mkdir()
    after = mounts(bwrap_argv(floor))
    assert ("--ro-bind", str(tree / "p" / ".cursor")) in after
    assert ("--tmpfs", str(tree / "home" / ".aws")) in after
    # the governance folder swapped for a link to a folder elsewhere: refused, not served stale
    (tree / "p" / ".forge").rename(tree / "elsewhere")
    (tree / "p" / ".forge").symlink_to(tree / "elsewhere")
    with pytest.raises(ValueError, match="symbolic link"):
        bwrap_argv(floor)
