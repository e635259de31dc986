"""Credentials never appear in output: the DSN's password is masked in ``repr``, errors,
diagnostics and ``status``; a password can come from ``PGPASSFILE``/``PGPASSWORD`` or a
``password_env`` reference instead of the URL."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

import forge_policy as fp
from forge_policy._infra.pg import mask, resolve
from forge_policy.config.env import Config
from forge_policy.errors import ConfigError
from tests.hookrun import SCRIPT, Project
from tests.pg_server import PASSWORD

pytest.importorskip("psycopg", reason="psycopg not installed (the postgres extra)")

from forge_policy.stores.postgres import PostgresStore


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("postgresql://u:pw@h:5/d", "postgresql://u:****@h:5/d"),
        (
            "postgres://u@h/d?password=pw&sslmode=require",
            "postgres://u@h/d?password=****&sslmode=require",
        ),
        ("host=h password='p w' user=u", "host=h password=**** user=u"),
        ("postgresql://u@h/d?password_env=PW", "postgresql://u@h/d?password_env=PW"),
    ],
)
def test_mask(dsn: str, shown: str) -> None:
    assert mask(dsn) == shown


def test_a_password_env_reference_is_resolved_only_to_connect(pg: Any, pg_dsn: str) -> None:
    reference = pg_dsn.replace(f":{PASSWORD}@", "@") + "?password_env=FORGE_TEST_PGPW"
    store = PostgresStore(reference, environ={"FORGE_TEST_PGPW": PASSWORD})
    assert store.session_ids() == []
    assert PASSWORD not in repr(store) and "password_env=FORGE_TEST_PGPW" in repr(store)
    store.close()
    with pytest.raises(ConfigError, match=r"FORGE_STORE: .*'FORGE_TEST_PGPW', which is not set"):
        Config.from_env({"FORGE_STORE": reference}, cwd=str(pg.base)).open_store()
    assert resolve("host=h password_env=X", {"X": "it's"}) == "host=h password='it\\'s'"


def test_pgpassfile_supplies_the_password(
    pg: Any, pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"127.0.0.1:{pg.port}:*:postgres:{PASSWORD}\n")
    passfile.chmod(0o600)
    bare = pg_dsn.replace(f":{PASSWORD}@", "@")
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    with PostgresStore(bare) as store:
        assert store.session_ids() == []
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "none"))
    with PostgresStore(bare) as store, pytest.raises(fp.StoreError, match="cannot connect"):
        store.session_ids()


def test_a_wrong_password_is_an_error_that_does_not_show_it(pg: Any, pg_dsn: str) -> None:
    wrong = pg_dsn.replace(f":{PASSWORD}@", ":Wr0ng-s3cret@")
    store = PostgresStore(wrong)
    with pytest.raises(fp.StoreError) as caught:
        store.session_ids()
    assert "password authentication failed" in str(caught.value)
    assert "Wr0ng-s3cret" not in str(caught.value) and "****" in str(caught.value)


def test_status_and_the_hook_never_print_the_password(pg_dsn: str, tmp_path: Path) -> None:
    project = Project(tmp_path, catalog={})
    project.env.update(FORGE_STORE=pg_dsn, FORGE_AUDIT=pg_dsn, FORGE_WORKER="off")
    answer, stderr = project.run(project.bash("git push --force origin main"))
    assert answer is not None and "deny" in str(answer)
    status = subprocess.run(
        [str(SCRIPT), "status"], capture_output=True, text=True, env=project.env, cwd=project.dir
    )
    assert status.returncode == 0, status.stderr
    assert f"store: PostgresStore {mask(pg_dsn)}" in status.stdout
    assert f"audit: PostgresAuditSink {mask(pg_dsn)}" in status.stdout
    # the server unreachable: the hook decides statelessly, and says so without the password
    dead = pg_dsn.rsplit(":", 1)[0] + ":1/nothing"
    project.env.update(FORGE_STORE=dead, FORGE_AUDIT="file")
    answer, stderr = project.run(project.bash("git push --force origin main"))
    assert answer is not None and "deny" in str(answer)
    assert "decided statelessly" in stderr and "****" in stderr
    for text in (status.stdout, status.stderr, stderr, str(answer)):
        assert PASSWORD not in text
    assert os.environ.get("PGPASSWORD") != PASSWORD  # nothing leaked into this process either
