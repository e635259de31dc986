"""Sensitive files by name: which files agent-shield refuses, which agent-shield-ask asks about,
and which it leaves alone (an environment file's template), then the same through the real
``forge-policy hook`` with Claude Code payloads, by tool and by shell reader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hookrun import Project

from forge_policy.facts.files import classify, most_sensitive


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        # environment files with values: the user decides
        ("/r/.env", "env_file"),
        ("/r/.env.local", "env_file"),
        ("/r/.env.production", "env_file"),
        ("/r/.env.development.local", "env_file"),
        ("/r/.envrc", "env_file"),
        ("/r/.ENV", "env_file"),
        # their templates, without values: what the hint tells the agent to read
        ("/r/.env.example", ""),
        ("/r/.env.sample", ""),
        ("/r/.env.template", ""),
        ("/r/.env.dist", ""),
        ("/r/.env.local.example", ""),
        ("/r/.env.production.sample", ""),
        ("/r/.ENV.EXAMPLE", ""),
        # credential files
        ("/r/secrets.json", "secrets_file"),
        ("/h/.aws/credentials", "secrets_file"),
        ("/r/credentials.json", "secrets_file"),
        ("/h/.netrc", "secrets_file"),
        ("/h/.git-credentials", "secrets_file"),
        ("/h/.pgpass", "secrets_file"),
        # refused whatever the tool
        ("/h/.ssh/id_rsa", "private_key"),
        ("/h/.ssh/id_deploy.pem", "private_key"),
        ("/r/.git/config", "git_config"),
        ("/r/.npmrc", "npmrc"),
        # names that only look alike
        ("/h/.ssh/id_rsa.pub", ""),
        ("/r/id_card.md", ""),
        ("/r/config", ""),
        ("/r/environment.md", ""),
        ("/r/credentials.md", ""),
        ("/r/example.env.md", ""),
    ],
)
def test_classify(path: str, expected: str) -> None:
    assert classify(path) == expected


def test_a_deny_class_wins_and_a_template_adds_nothing() -> None:
    assert most_sensitive(["/r/.env.example", "/r/.env", "/h/.ssh/id_rsa"]) == "private_key"
    assert most_sensitive(["/r/.env.example", "/r/.env.sample"]) == ""
    assert most_sensitive(["/r/.env.example", "/h/.netrc"]) == "secrets_file"


# --- end to end ----------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A project with no .forge/behaviors: the built-in catalog applies."""
    p = Project(tmp_path, catalog={})
    p.env["HOME"] = str(tmp_path / "home")
    return p


def verdict(project: Project, payload: dict[str, Any]) -> str:
    out, _ = project.run(payload)
    specific = (out or {}).get("hookSpecificOutput", {})
    return str(specific.get("permissionDecision", "allow"))


def read(project: Project, name: str) -> dict[str, Any]:
    path = str(project.dir / name)
    return project.payload(tool_name="Read", tool_input={"file_path": path})


def test_an_env_template_is_read_freely_and_the_env_file_is_asked_about(project: Project) -> None:
    (project.dir / ".env").write_text("DB_PASSWORD=Vb8qT3xLw9\n")
    (project.dir / ".env.example").write_text("DB_PASSWORD=\nAPI_KEY=<your key>\n")
    (project.dir / ".env.sample").write_text("DB_PASSWORD=changeme\n")
    assert verdict(project, read(project, ".env.example")) == "allow"
    assert verdict(project, project.bash("cat .env.sample .env.example")) == "allow"
    assert verdict(project, read(project, ".env")) == "ask"
    assert verdict(project, project.bash("head -n 3 .env.example .env")) == "ask"


def test_a_template_holding_a_real_key_is_still_asked_about(project: Project) -> None:
    (project.dir / ".env.example").write_text(
        "GITHUB_TOKEN=ghp_" + "Vb8qT3xLw9zR4mK7pN2s" * 2 + "\n"
    )
    assert verdict(project, read(project, ".env.example")) == "ask"


def test_placeholders_in_a_file_are_not_asked_about(project: Project) -> None:
    (project.dir / "config.yaml").write_text(
        'db:\n  url: "postgres://${PGUSER}:${PGPASSWORD}@db/app"\n'
        '  password: "{{ vault_db_password }}"\naws_access_key_id: AKIA' + "IOSFODNN7EXAMPLE\n"
    )
    assert verdict(project, read(project, "config.yaml")) == "allow"
    (project.dir / "deploy.sh").write_text("git push https://ci:Vb8qT3xLw9@git.example.org/r\n")
    assert verdict(project, read(project, "deploy.sh")) == "ask"


def test_more_credential_files_are_asked_about(project: Project) -> None:
    home = Path(project.env["HOME"])
    home.mkdir(parents=True)
    (home / ".netrc").write_text("machine example.org login me password Vb8qT3xLw9\n")
    (home / ".git-credentials").write_text("https://me:Vb8qT3xLw9@example.org\n")
    assert verdict(project, project.bash("cat ~/.netrc")) == "ask"
    assert (
        verdict(
            project,
            project.payload(
                tool_name="Read", tool_input={"file_path": str(home / ".git-credentials")}
            ),
        )
        == "ask"
    )
