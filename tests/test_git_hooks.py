"""Git-side checks in real temporary repositories: ``forge-policy git commit-msg|pre-commit``,
the installed hooks under real ``git commit``, and hook installation."""

from __future__ import annotations

import functools
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forge_policy.errors import GitHookError
from forge_policy.ops.git_hooks import (
    install_git_hooks,
    read_commit_message,
    run_commit_msg,
    run_pre_commit,
)

SCRIPT = Path(sys.executable).with_name("forge-policy")


@functools.cache
def hook_command() -> tuple[str, ...]:
    """``forge-policy`` once ``git`` is registered in the CLI, else the module entry point."""
    if SCRIPT.exists():
        probe = subprocess.run([str(SCRIPT), "git", "--help"], capture_output=True, check=False)
        if probe.returncode == 0:
            return (str(SCRIPT),)
    return (sys.executable, "-m", "forge_policy.cli.git_cmds")


class Repo:
    """A git work tree in a temporary folder, with a clean environment."""

    def __init__(self, base: Path, cache: Path | None = None) -> None:
        self.dir = base / "repo"
        self.dir.mkdir()
        home = base / "home"
        home.mkdir()
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("FORGE_", "DISABLE_", "CLAUDE_", "GIT_"))
        }
        self.env.update(
            HOME=str(home),
            XDG_CACHE_HOME=str(cache or base / "xdg"),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_AUTHOR_NAME="Dev",
            GIT_AUTHOR_EMAIL="dev@example.com",
            GIT_COMMITTER_NAME="Dev",
            GIT_COMMITTER_EMAIL="dev@example.com",
        )
        self.git("init", "-q", "-b", "main")
        self.git("commit", "-q", "--allow-empty", "-m", "init")

    def git(self, *args: str, check: bool = True, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", *args],
            cwd=self.dir,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            check=check,
            timeout=60,
        )

    def check(self, *args: str, **env: str) -> tuple[int, str]:
        """``git commit-msg FILE`` or ``git pre-commit`` in-process: (exit code, stderr)."""
        err = io.StringIO()
        environ = {**self.env, **env}
        if args[0] == "commit-msg":
            path = str(self.dir / args[1])
            code = run_commit_msg(path, cwd=str(self.dir), environ=environ, err=err)
        else:
            code = run_pre_commit(cwd=str(self.dir), environ=environ, err=err)
        return code, err.getvalue()

    def forge(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        """The command line, in a subprocess."""
        return subprocess.run(
            [*hook_command(), "git", *args],
            cwd=self.dir,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )

    def write(self, name: str, text: str = "x = 1\n") -> Path:
        path = self.dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def stage(self, *names: str) -> None:
        for name in names:
            if not (self.dir / name).exists():
                self.write(name)
        self.git("add", *names)

    def strict(self, extra: str = "") -> None:
        self.write(".forge/config.yaml", f"testing:\n  tdd_mode: strict\n{extra}")

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").stdout.strip()


@pytest.fixture(scope="session")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One compiled-catalog cache for the whole run: each test need not parse the YAML again."""
    return tmp_path_factory.mktemp("xdg")


@pytest.fixture
def repo(tmp_path: Path, cache: Path) -> Repo:
    return Repo(tmp_path, cache)


# --- commit-msg ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("feat: parser\n", 0),
        ("fix: mensaje coherente\n\nSin bombardeo.\n", 0),
        ("feat: x\n\nCo-Authored-By: Claude <noreply@anthropic.com>\n", 1),
        ("🤖 Generated with a tool\n", 1),
        ("docs: explain the GPT-4 limits\n", 1),
    ],
)
def test_commit_msg(repo: Repo, message: str, expected: int) -> None:
    repo.write("MSG", message)
    code, stderr = repo.check("commit-msg", "MSG")
    assert code == expected, stderr
    if code:
        assert "forge-policy: commit refused by no-model-attribution" in stderr
        assert "Offending line" in stderr and "git commit --no-verify" in stderr
        assert "Traceback" not in stderr and len(stderr.splitlines()) <= 12
    else:
        assert stderr == ""


def test_the_command_line(repo: Repo) -> None:
    repo.write("MSG", "feat: x\n\nCo-Authored-By: Claude\n")
    done = repo.forge("commit-msg", "MSG")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("forge-policy: commit refused by no-model-attribution\n")
    repo.write("MSG", "feat: x\n")
    assert repo.forge("commit-msg", "MSG").returncode == 0
    repo.strict()
    repo.stage("app.py")
    done = repo.forge("pre-commit", "app.py")  # the pre-commit framework's file names: ignored
    assert done.returncode == 1 and "app.py" in done.stderr


def test_comment_lines_and_the_diff_under_the_scissors_are_ignored(repo: Repo) -> None:
    repo.write(
        "MSG",
        "feat: parser\n"
        "# Co-Authored-By: Claude\n"
        "# ------------------------ >8 ------------------------\n"
        "+ client = anthropic.Client()\n",
    )
    assert repo.check("commit-msg", "MSG")[0] == 0
    assert read_commit_message(str(repo.dir / "MSG")) == "feat: parser"


def test_core_comment_char_is_honoured(repo: Repo) -> None:
    repo.git("config", "core.commentChar", ";")
    repo.write("MSG", "feat: parser\n; generated by claude\n# claude, not a comment now\n")
    code, stderr = repo.check("commit-msg", "MSG")
    assert code == 1 and 'Offending line 2: "# claude' in stderr


@pytest.mark.parametrize(
    "env",
    [
        {"DISABLE_OSPEC_ATTRIBUTION_CHECK": "true"},
        {"FORGE_DISABLE": "no-model-attribution"},
    ],
)
def test_bypasses_work_on_the_git_side_and_are_audited(repo: Repo, env: dict[str, str]) -> None:
    (repo.dir / ".forge").mkdir()
    repo.write("MSG", "feat: x\n\nCo-Authored-By: Claude\n")
    code, stderr = repo.check("commit-msg", "MSG", **env)
    assert code == 0, stderr
    variable = next(iter(env))
    assert f"bypassed by {variable}" in stderr
    log = repo.dir / ".forge" / "audit" / "overrides.log"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["kind"], r["behavior_id"], r["variable"]) for r in records] == [
        ("bypass", "no-model-attribution", variable)
    ]


def test_no_forge_folder_means_nothing_is_written(repo: Repo) -> None:
    repo.write("MSG", "feat: claude\n")
    assert repo.check("commit-msg", "MSG")[0] == 1
    assert repo.git("status", "--porcelain", "--ignored").stdout == "?? MSG\n"


def test_an_unreadable_message_file_refuses_unless_on_error_allows(repo: Repo) -> None:
    code, stderr = repo.check("commit-msg", "missing.txt")
    assert code == 1 and "cannot read the commit message file" in stderr
    assert repo.check("commit-msg", "missing.txt", FORGE_ON_ERROR="allow")[0] == 0


def test_installed_hooks_under_real_commits(repo: Repo) -> None:
    install_git_hooks(str(repo.dir), command=list(hook_command()))
    before = repo.head()
    done = repo.git(
        "commit", "--allow-empty", "-m", "feat: x\n\nCo-Authored-By: Claude", check=False
    )
    assert done.returncode != 0 and "no-model-attribution" in done.stderr
    assert repo.head() == before
    assert repo.git("commit", "-q", "--allow-empty", "-m", "feat: coherente").returncode == 0
    # with an editor, git strips the comment lines after the hook: they are not checked
    repo.write(".git/MSG", "feat: edited\n# generated with claude\n")
    repo.git("commit", "-q", "--allow-empty", "-e", "-F", ".git/MSG", GIT_EDITOR="true")
    assert repo.git("log", "-1", "--format=%B").stdout.strip() == "feat: edited"
    # --no-verify skips git hooks, as git documents
    repo.git("commit", "-q", "--allow-empty", "--no-verify", "-m", "claude")


# --- pre-commit: strict TDD ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("staged", "expected"),
    [
        (["src/app.py", "README.md"], 1),
        (["cmd/main.go", "internal/x.go", "web/ui.tsx"], 1),
        (["src/app.py", "tests/test_app.py"], 0),
        (["src/app.py", "src/app_test.py"], 0),
        (["internal/x.go", "internal/x_test.go"], 0),
        (["web/ui.ts", "web/ui.test.ts"], 0),
        (["web/ui.ts", "web/ui.spec.js"], 0),
        (["src/app.py", "openspec/changes/x/tasks.md"], 0),
        (["README.md", "openspec/config.yaml"], 0),
        (["docs/guide.md"], 0),
    ],
)
def test_strict_tdd(repo: Repo, staged: list[str], expected: int) -> None:
    repo.strict()
    repo.stage(*staged)
    code, stderr = repo.check("pre-commit")
    assert code == expected, stderr
    if code:
        assert "commit refused by strict-tdd" in stderr
        production = [p for p in staged if not p.endswith(".md")]
        assert f"no test file and no tasks.md: {', '.join(production)}" in stderr


@pytest.mark.parametrize(
    "config",
    [
        None,
        "testing:\n  tdd_mode: standard\n",
        "testing:\n  tdd_mode: focused\n",
        "strict_tdd: true\n",  # the legacy key is not honoured (as upstream HEAD)
        "other_tool:\n  tdd_mode: strict\n",  # only testing.tdd_mode counts
    ],
)
def test_not_strict_lets_everything_through(repo: Repo, config: str | None) -> None:
    if config is not None:
        repo.write(".forge/config.yaml", config)
    repo.stage("src/app.py")
    assert repo.check("pre-commit")[0] == 0


def test_globs_are_configurable(repo: Repo) -> None:
    repo.strict(
        '  production_globs: ["lib/**/*.rb"]\n  test_globs: ["*_spec.rb"]\n'
        "  planning_globs: [PLAN.md]\n"
    )
    repo.stage("src/app.py", "lib/a/b.rb")
    code, stderr = repo.check("pre-commit")
    assert code == 1 and "tasks.md: lib/a/b.rb" in stderr
    repo.stage("PLAN.md")
    assert repo.check("pre-commit")[0] == 0


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        ("testing:\n  tdd_mode: [strict\n", "invalid YAML"),
        ("testing:\n  tdd_mode: stric\n", ":2: testing.tdd_mode: unknown value 'stric'"),
        ("testing:\n  test_globs: 3\n", ":2: testing.test_globs: expected a list"),
    ],
)
def test_a_broken_config_is_reported(repo: Repo, config: str, problem: str) -> None:
    repo.write(".forge/config.yaml", config)
    repo.stage("src/app.py")
    code, stderr = repo.check("pre-commit")
    assert code == 1 and problem in stderr and "config.yaml" in stderr
    assert repo.check("pre-commit", FORGE_ON_ERROR="allow")[0] == 0


def test_precommit_bypass(repo: Repo) -> None:
    repo.strict()
    repo.stage("src/app.py")
    code, stderr = repo.check("pre-commit", DISABLE_OSPEC_PRECOMMIT="true")
    assert code == 0 and "bypassed by DISABLE_OSPEC_PRECOMMIT" in stderr


def test_strict_tdd_under_a_real_commit(repo: Repo) -> None:
    repo.strict()
    install_git_hooks(str(repo.dir), command=list(hook_command()))
    repo.stage("pkg/core.py")
    done = repo.git("commit", "-m", "feat: core", check=False)
    assert done.returncode != 0 and "pkg/core.py" in done.stderr
    repo.stage("pkg/test_core.py")
    repo.git("commit", "-q", "-m", "feat: core with tests")


# --- installation -------------------------------------------------------------------------------


def test_install_is_idempotent(repo: Repo) -> None:
    first = install_git_hooks(str(repo.dir), command=["/opt/fp/bin/forge-policy"])
    assert [(c.hook, c.action) for c in first] == [
        ("commit-msg", "created"),
        ("pre-commit", "created"),
    ]
    hook = repo.dir / ".git" / "hooks" / "commit-msg"
    text = hook.read_text()
    assert text.startswith("#!/bin/sh\n# >>> forge-policy >>>\n")
    assert '/opt/fp/bin/forge-policy git commit-msg "$1" || exit $?' in text
    assert os.access(hook, os.X_OK)
    again = install_git_hooks(str(repo.dir), command=["/opt/fp/bin/forge-policy"])
    assert [c.action for c in again] == ["unchanged", "unchanged"]
    assert hook.read_text() == text
    moved = install_git_hooks(str(repo.dir), command=["/new/forge-policy"])
    assert [c.action for c in moved] == ["updated", "updated"]
    assert hook.read_text().count("# >>> forge-policy >>>") == 1
    assert "/opt/fp" not in hook.read_text()


def test_install_keeps_a_foreign_shell_hook(repo: Repo) -> None:
    mine = "#!/usr/bin/env bash\n# my checks\necho mine >> hook.log\nexit 0\n"
    hook = repo.write(".git/hooks/commit-msg", mine)
    hook.chmod(0o700)
    (change, _) = install_git_hooks(str(repo.dir), command=list(hook_command()))
    assert change.action == "updated"
    text = hook.read_text()
    assert text.startswith("#!/usr/bin/env bash\n# >>> forge-policy >>>\n")
    assert text.endswith("# <<< forge-policy <<<\n# my checks\necho mine >> hook.log\nexit 0\n")
    assert [c.action for c in install_git_hooks(str(repo.dir), command=list(hook_command()))] == [
        "unchanged",
        "unchanged",
    ]
    # both run: ours first (the trailing exit 0 cannot skip it), then the user's
    assert repo.git("commit", "--allow-empty", "-m", "Claude", check=False).returncode != 0
    repo.git("commit", "-q", "--allow-empty", "-m", "feat: ok")
    assert (repo.dir / "hook.log").read_text() == "mine\n"


def test_install_never_edits_a_hook_in_another_language(repo: Repo) -> None:
    python_hook = "#!/usr/bin/env python3\nimport sys\nsys.exit(0)\n"
    hook = repo.write(".git/hooks/pre-commit", python_hook)
    changes = install_git_hooks(str(repo.dir), command=["/x/forge-policy"])
    assert [(c.hook, c.action) for c in changes] == [
        ("commit-msg", "created"),
        ("pre-commit", "skipped"),
    ]
    assert "not a shell script" in changes[1].detail and "git pre-commit" in changes[1].detail
    assert hook.read_text() == python_hook


def test_install_adds_a_shebang_to_a_hook_without_one(repo: Repo) -> None:
    hook = repo.write(".git/hooks/pre-commit", "echo legacy\n")
    install_git_hooks(str(repo.dir), command=["/x/forge-policy"])
    text = hook.read_text()
    assert text.startswith("#!/bin/sh\n# >>> forge-policy >>>") and text.endswith("echo legacy\n")


def test_install_honours_core_hooks_path(repo: Repo) -> None:
    repo.git("config", "core.hooksPath", ".githooks")
    changes = install_git_hooks(str(repo.dir), command=["/x/forge-policy"])
    assert {Path(c.path).parent for c in changes} == {repo.dir / ".githooks"}


def test_install_outside_a_repository(tmp_path: Path) -> None:
    with pytest.raises(GitHookError, match="not a git repository"):
        install_git_hooks(str(tmp_path))


def test_install_command(repo: Repo) -> None:
    done = repo.forge("install")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[::2] == ["created", "created"]
    assert repo.forge("install").stdout.split()[::2] == ["unchanged", "unchanged"]
