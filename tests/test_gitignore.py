"""git's ignore rules (:mod:`forge_policy.facts.gitignore`) against ``git check-ignore`` itself,
in real temporary repositories: nested ``.gitignore`` files, ``.git/info/exclude``,
``core.excludesFile`` and git's XDG default."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forge_policy.facts.gitignore import GitIgnore, excludes_file
from forge_policy.facts.project import unignored_secret_files


@pytest.fixture(autouse=True)
def isolated_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No ignore file or config of the developer's machine takes part."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return home


def repository(root: Path, files: dict[str, str], paths: list[str]) -> Path:
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    for path in paths:
        target = root / path.rstrip("/")
        if path.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.touch()
    return root


def git_ignores(root: Path, path: str) -> bool:
    done = subprocess.run(["git", "check-ignore", "-q", path], cwd=root, check=False)
    assert done.returncode in (0, 1), f"git check-ignore failed for {path!r}"
    return done.returncode == 0


CASES: list[tuple[dict[str, str], list[str]]] = [
    ({".gitignore": "*.log\n!keep.log\n"}, ["a.log", "keep.log", "sub/b.log", "sub/keep.log"]),
    ({".gitignore": "/build\n"}, ["build/x.o", "src/build/x.o", "build2/x"]),
    ({".gitignore": "build/\n"}, ["build/x.o", "src/build/x.o", "build"]),
    ({".gitignore": "a/**/b\n"}, ["a/b", "a/x/b", "a/x/y/b", "b", "x/a/b"]),
    ({".gitignore": "a/**\n!a/keep\n"}, ["a/keep", "a/other", "a/sub/keep"]),
    ({".gitignore": "a/**/\n"}, ["a/file", "a/sub/x"]),  # directories below a, not a
    ({".gitignore": "*\n!*/\n!*.py\n"}, ["x.txt", "src/x.py", "src/x.txt"]),
    ({".gitignore": "*\n!sub/\n"}, ["sub/x", "y"]),
    ({".gitignore": "b/\n!.env\n"}, ["a/b/.env", "a/.env"]),
    ({".gitignore": "foo/*\n!foo/bar\n"}, ["foo/bar", "foo/qux"]),
    ({".gitignore": "foo/*\n!foo/bar\n"}, ["foo/bar/baz", "foo/qux"]),
    ({".gitignore": "/*\n!/sub/\n"}, ["sub/x", "top"]),
    ({".gitignore": "[!y].txt\nab?.md\n"}, ["x.txt", "y.txt", "abc.md", "ab/.md"]),
    ({".gitignore": "weird[.txt\n\\#hash\n\\!bang\n"}, ["weird[.txt", "#hash", "!bang"]),
    ({".gitignore": "trailing\\ \nspaces   \n"}, ["trailing ", "spaces"]),
    ({".gitignore": "\ufeff.env\n"}, [".env"]),  # a byte order mark is skipped
    ({".gitignore": "**/logs/**/*.log\n"}, ["logs/a.log", "x/logs/y/z.log", "logs.log"]),
    # nested files: relative to their directory, deeper files win, ignored dirs are not read
    (
        {".gitignore": "*.tmp\n", "sub/.gitignore": "!keep.tmp\n/local\n"},
        ["x.tmp", "sub/keep.tmp", "sub/y.tmp", "sub/local", "local", "sub/deep/local"],
    ),
    (
        {".gitignore": "sub/\n", "sub/.gitignore": "!x\n"},
        ["sub/x", "sub/y"],
    ),
    (
        {"a/.gitignore": "b/c\n", "a/b/.gitignore": "!c\n"},
        ["a/b/c", "b/c", "a/x/b/c"],
    ),
    # .git/info/exclude sits below .gitignore: a .gitignore line overrides it
    (
        {".git/info/exclude": ".env\n*.secret\n", ".gitignore": "!keep.secret\n"},
        [".env", "a.secret", "keep.secret"],
    ),
]


@pytest.mark.parametrize(("files", "paths"), CASES)
def test_the_same_answer_as_git_check_ignore(
    tmp_path: Path, files: dict[str, str], paths: list[str]
) -> None:
    root = repository(tmp_path / "repo", files, paths)
    rules = GitIgnore(str(root))
    for path in paths:
        assert rules.ignored(path) is git_ignores(root, path), path


def test_core_excludes_file_from_git_config(tmp_path: Path, isolated_git: Path) -> None:
    root = repository(tmp_path / "repo", {".gitignore": "!.npmrc\n"}, [".env", ".npmrc"])
    excludes = tmp_path / "my-excludes"
    excludes.write_text(".env\n.npmrc\n", encoding="utf-8")
    subprocess.run(["git", "config", "core.excludesFile", str(excludes)], cwd=root, check=True)
    assert excludes_file(str(root)) == str(excludes)
    assert [git_ignores(root, p) for p in (".env", ".npmrc")] == [True, False]
    assert unignored_secret_files(str(root)) == [".npmrc"]  # .gitignore overrides the global


def test_core_excludes_file_with_a_tilde(tmp_path: Path, isolated_git: Path) -> None:
    root = repository(tmp_path / "repo", {}, [".env"])
    (isolated_git / "ignores").write_text(".env\n", encoding="utf-8")
    (isolated_git / ".gitconfig").write_text("[core]\n\texcludesFile = ~/ignores\n")
    assert excludes_file(str(root)) == str(isolated_git / "ignores")
    assert git_ignores(root, ".env") and unignored_secret_files(str(root)) == []


def test_git_default_global_file_under_home(tmp_path: Path, isolated_git: Path) -> None:
    root = repository(tmp_path / "repo", {}, [".env", ".npmrc"])
    default = isolated_git / ".config" / "git" / "ignore"
    default.parent.mkdir(parents=True)
    default.write_text(".env*\n", encoding="utf-8")
    assert excludes_file(str(root)) == str(default)
    assert git_ignores(root, ".env")
    assert unignored_secret_files(str(root)) == [".npmrc"]


def test_git_default_global_file_under_xdg_config_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repository(tmp_path / "repo", {}, [".env", ".npmrc"])
    xdg = tmp_path / "xdg"
    (xdg / "git").mkdir(parents=True)
    (xdg / "git" / "ignore").write_text(".npmrc\n", encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    assert git_ignores(root, ".npmrc")
    assert unignored_secret_files(str(root)) == [".env"]


def test_a_directory_is_asked_as_a_directory(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo", {".gitignore": "out/\n"}, ["out/"])
    rules = GitIgnore(str(root))
    assert rules.ignored("out") and rules.ignored("out", is_dir=True)
    assert not rules.ignored("out", is_dir=False)  # a file named "out" would not be


def test_pathspec_is_imported_only_when_a_rule_is_compiled() -> None:
    code = (
        "import sys, forge_policy.facts, forge_policy.facts.gitignore, forge_policy.facts.project\n"
        "assert 'pathspec' not in sys.modules\n"
        "forge_policy.facts.gitignore.compile_rule('*.log')\n"
        "assert 'pathspec' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- any pattern file: the same answers as git ---------------------------------------------------

PATHS = ["a", "b.txt", "a/b", "a/b.txt", "a/b/c.txt", "b/a/c", "ab/c.txt", "x/a/b/a.txt"]
TOKENS = st.sampled_from(["a", "b", "c", "*", "?", ".txt", "[ab]", "[!a]", "x", "***"])
# "**" only as a whole segment, its documented meaning: git reads "a**/b" through a shortcut of
# its own (the literal prefix "a", then "**/b" as if at the start), which is not emulated
SEGMENTS = st.one_of(
    st.just("**"),
    st.lists(TOKENS, min_size=1, max_size=3).map("".join).filter(lambda seg: "**" not in seg),
)
LINES = st.tuples(
    st.sampled_from(["", "!"]),
    st.sampled_from(["", "/"]),
    st.lists(SEGMENTS, min_size=1, max_size=3).map("/".join),
    st.sampled_from(["", "/"]),
).map("".join)


@settings(max_examples=60, deadline=None)
@given(st.lists(LINES, min_size=1, max_size=4), st.lists(LINES, max_size=3))
def test_random_pattern_files_agree_with_git(lines: list[str], nested: list[str]) -> None:
    root = Path(tempfile.mkdtemp(prefix="forge-gitignore-"))
    try:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        (root / ".gitignore").write_text("\n".join(lines) + "\n", encoding="utf-8")
        if nested:  # a/.gitignore, relative to a/
            (root / "a").mkdir()
            (root / "a" / ".gitignore").write_text("\n".join(nested) + "\n", encoding="utf-8")
        done = subprocess.run(
            ["git", "check-ignore", "--no-index", "--stdin", "-z"],
            cwd=root,
            input="\0".join(PATHS).encode(),
            capture_output=True,
            check=False,
        )
        assert done.returncode in (0, 1), done.stderr
        by_git = {p for p in done.stdout.decode().split("\0") if p}
        rules = GitIgnore(str(root), global_file="")
        assert {p for p in PATHS if rules.ignored(p)} == by_git, (lines, nested)
    finally:
        shutil.rmtree(root)
