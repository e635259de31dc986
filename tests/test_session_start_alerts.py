"""AgentShield's SessionStart check (behavior ``agent-shield-startup``, fact
``unignored_secret_files``) on real folders, real ``.gitignore`` files and real git repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import forge_policy as fp
from forge_policy.facts.project import GIT_CONFIG_ITEM, ignored, unignored_secret_files
from forge_policy.model import Event

SECRET = "sk-" + "q" * 48


@pytest.fixture(autouse=True)
def no_global_ignore_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's own core.excludesFile (often listing .env) must not change the answers."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def project(tmp_path: Path, gitignore: str | None, *files: str, git: bool = False) -> Path:
    root = tmp_path / "proj"
    root.mkdir(parents=True)
    if git:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    if gitignore is not None:
        (root / ".gitignore").write_text(gitignore, encoding="utf-8")
    for name in files:
        (root / name).write_text(f"API_KEY={SECRET}\n", encoding="utf-8")
    return root


ALL = (".env", ".env.local", ".env.development", ".env.production", ".npmrc")


@pytest.mark.parametrize(
    ("gitignore", "alerts"),
    [
        (None, list(ALL)),
        ("", list(ALL)),
        (".env\n.env.local\n.env.development\n.env.production\n.npmrc\n", []),
        # upstream (v2.4.7) counted .env as ignored because ".env.local" contains ".env"
        (".env.local\n", [".env", ".env.development", ".env.production", ".npmrc"]),
        (".env*\n", [".npmrc"]),
        ("*.env*\n.npmrc\n", []),
        ("/.env*\n/.npmrc\n", []),
        ("**/.env*\n**/.npmrc\n", []),
        (".env*\n!.env.production\n.npmrc\n", [".env.production"]),  # negation re-includes
        ("!.env\n.env\n.npmrc\n", [".env.local", ".env.development", ".env.production"]),
        (".env\n!.env\n.npmrc\n", [".env", ".env.local", ".env.development", ".env.production"]),
        (".env?local\n.env.[dp]*\n.npmrc\n.env\n", []),
        ("# .env\n  \n.npmrc   \n", [".env", ".env.local", ".env.development", ".env.production"]),
        ("\\#.env\n.npmrc\n", [".env", ".env.local", ".env.development", ".env.production"]),
        (".env/\n.npmrc/\n", list(ALL)),  # directory-only patterns do not match files
        ("sub/.env\n.npm*\n", [".env", ".env.local", ".env.development", ".env.production"]),
        ("env\nnpmrc\n*.local\n", [".env", ".env.development", ".env.production", ".npmrc"]),
    ],
)
def test_gitignore_semantics(tmp_path: Path, gitignore: str | None, alerts: list[str]) -> None:
    root = project(tmp_path, gitignore, *ALL)
    assert unignored_secret_files(str(root)) == alerts


def test_only_present_files_are_named(tmp_path: Path) -> None:
    root = project(tmp_path, ".env.local\n", ".env", ".env.local")
    assert unignored_secret_files(str(root)) == [".env"]
    assert unignored_secret_files(str(project(tmp_path / "b", None))) == []


def test_git_info_exclude_counts_and_gitignore_overrides_it(tmp_path: Path) -> None:
    root = project(tmp_path, "!.npmrc\n", ".env", ".npmrc", git=True)
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text(".env\n.npmrc\n", encoding="utf-8")
    assert unignored_secret_files(str(root)) == [".npmrc"]


def test_git_agrees(tmp_path: Path) -> None:
    """The same patterns through ``git check-ignore``: our answer is git's."""
    patterns = ".env*\n!.env.production\n/.npmrc\n!.env.local\n.env.local\n"
    root = project(tmp_path, patterns, *ALL, git=True)
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", *ALL], cwd=root, capture_output=True, text=True
    )
    git_ignored = set(done.stdout.split())
    assert unignored_secret_files(str(root)) == [f for f in ALL if f not in git_ignored]
    assert git_ignored == {".env", ".env.local", ".env.development", ".npmrc"}


@pytest.mark.parametrize(
    ("url", "alert"),
    [
        ("https://alice:s3cr3t@github.com/o/r.git", True),
        ("http://ci:token123@git.example.com/r.git", True),
        ("https://ghp_" + "a" * 36 + "@github.com/o/r.git", True),
        ("https://x-access-token:ghs_abc@github.com/o/r", True),
        ("https://github.com/o/r.git", False),
        ("git@github.com:o/r.git", False),
        ("ssh://git@host:22/r.git", False),
        ("https://org@dev.azure.com/org/p/_git/r", False),  # a user name alone is no secret
    ],
)
def test_credentials_in_remote_urls(tmp_path: Path, url: str, alert: bool) -> None:
    root = project(tmp_path, None, git=True)
    subprocess.run(["git", "remote", "add", "origin", url], cwd=root, check=True)
    assert unignored_secret_files(str(root)) == ([GIT_CONFIG_ITEM] if alert else [])


def test_a_worktree_reads_the_common_config(tmp_path: Path) -> None:
    main = project(tmp_path, ".env*\n.npmrc\n", git=True)
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=t"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "init"], cwd=main, check=True)
    subprocess.run(["git", "remote", "add", "origin", "https://u:p4ss@h/r"], cwd=main, check=True)
    worktree = tmp_path / "wt"
    subprocess.run(["git", "worktree", "add", "-q", str(worktree)], cwd=main, check=True)
    assert (worktree / ".git").is_file()
    assert unignored_secret_files(str(worktree)) == [GIT_CONFIG_ITEM]


@pytest.mark.parametrize(
    ("path", "patterns", "expected"),
    [
        ("a/b/.env", [".env"], True),
        ("a/b/.env", ["/.env"], False),
        ("a/b/.env", ["a/**/.env"], True),
        ("a/.env", ["a/**/.env"], True),
        ("a/b/.env", ["b/"], True),  # inside an ignored directory
        ("a/b/.env", ["b/", "!.env"], True),  # a parent directory's exclusion cannot be undone
        ("a/b/c.txt", ["a/**"], True),
        ("a/b/c.txt", ["a/*"], True),
        ("ab.txt", ["a?.txt"], True),
        ("a/.txt", ["a?.txt"], False),
        ("[x].txt", ["\\[x\\].txt"], True),
        ("x.txt", ["[!y].txt"], True),
        ("y.txt", ["[!y].txt"], False),
        ("weird[.txt", ["weird[.txt"], False),  # git: an unclosed "[" never matches
        ("trailing ", ["trailing\\ "], True),
    ],
)
def test_ignore_patterns(path: str, patterns: list[str], expected: bool) -> None:
    assert ignored(path, patterns) is expected


def start(root: Path, source: str = "startup") -> fp.Decision:
    event = Event("SessionStart", "s1", cwd=str(root), payload={"source": source})
    return fp.Evaluator(fp.builtin_catalog(), clock=lambda: 1.0).evaluate(event)


def test_the_warning_names_the_files_and_never_their_contents(tmp_path: Path) -> None:
    root = project(tmp_path, ".env.local\n", ".env", ".env.local", ".npmrc", git=True)
    subprocess.run(["git", "remote", "add", "origin", "https://u:hunter22@h/r"], cwd=root)
    decision = start(root)
    assert decision.outcome == "warning" and not decision.blocked
    (message,) = decision.messages
    assert message.startswith("[agent-shield-startup] Secrets at risk in this project: ")
    assert ".env, .npmrc, .git/config (a remote URL holds a password or token)" in message
    assert ".env.local" not in message
    assert SECRET not in message and "hunter22" not in message and "API_KEY" not in message


@pytest.mark.parametrize(
    ("source", "warns"), [("startup", True), ("resume", True), ("clear", True), ("compact", False)]
)
def test_not_repeated_after_a_compaction(tmp_path: Path, source: str, warns: bool) -> None:
    root = project(tmp_path, None, ".env")
    assert bool(start(root, source).messages) is warns


def test_a_clean_project_says_nothing(tmp_path: Path) -> None:
    root = project(tmp_path, ".env*\n.npmrc\n", ".env", ".npmrc", git=True)
    assert not start(root).violations
