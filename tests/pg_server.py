"""A throwaway PostgreSQL cluster for the tests: ``initdb`` + ``pg_ctl`` on a free loopback port.

The binaries are looked for on PATH, then in ``/usr/lib/postgresql/*/bin`` (Debian installs
them there); none found is a skip ("initdb not found on PATH"), which fails in CI
(``tests/optional.py``). ``initdb`` refuses to run as root, so as root the cluster runs as the
``postgres`` user the Debian package creates (through ``runuser``). Password authentication
(scram) on TCP, so the tests see a password actually being needed.

Use the ``pg`` fixture (session-scoped, from ``tests/conftest.py``) and ``pg.database()`` for a
fresh database per test.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from tests.optional import need_binary

PASSWORD = "pg-test-pw"  # a throwaway cluster's, on loopback only
_counter = itertools.count()


def _binary(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)
    return need_binary(name, *found)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    """One cluster: ``start``/``stop``/``restart`` (a real server restart), ``database()``."""

    def __init__(self, *, fsync: bool = False) -> None:
        self.initdb = _binary("initdb")
        self.pg_ctl = _binary("pg_ctl")
        self.as_user: list[str] = []
        self.base = Path(tempfile.mkdtemp(prefix="forge-pg-"))
        if os.geteuid() == 0:
            runuser = shutil.which("runuser") or "runuser"
            self.as_user = [runuser, "-u", "postgres", "--"]
            entry = pwd.getpwnam("postgres")
            os.chown(self.base, entry.pw_uid, entry.pw_gid)
        self.data = self.base / "data"
        self.port = _free_port()
        pwfile = self.base / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self.as_user:
            os.chown(pwfile, pwd.getpwnam("postgres").pw_uid, -1)
        self._run(
            self.initdb,
            "-D",
            str(self.data),
            "-U",
            "postgres",
            f"--pwfile={pwfile}",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
        )
        self.options = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} "
            f"-c unix_socket_directories={self.base} -c max_connections=200 "
            f"-c fsync={'on' if fsync else 'off'} -c full_page_writes=off"
        )
        self.start()

    def _run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.as_user, *argv], check=check, capture_output=True, text=True, timeout=120
        )

    def start(self) -> None:
        log = self.base / "server.log"
        self._run(
            self.pg_ctl, "-D", str(self.data), "-l", str(log), "-o", self.options, "-w", "start"
        )

    def stop(self, mode: str = "fast") -> None:
        self._run(self.pg_ctl, "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def restart(self) -> None:
        self.stop()
        self.start()

    def dsn(
        self, dbname: str = "postgres", *, user: str = "postgres", password: str | None = PASSWORD
    ) -> str:
        auth = f"{user}:{password}" if password is not None else user
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{dbname}"

    def admin(self, dbname: str = "postgres") -> Any:
        """An autocommit superuser connection (the caller closes it)."""
        import psycopg

        return psycopg.connect(self.dsn(dbname), autocommit=True)

    def database(self) -> str:
        """A new, empty database; its DSN (with the superuser's password)."""
        name = f"t{os.getpid()}_{next(_counter)}"
        with self.admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}"'.encode())
        return self.dsn(name)

    def close(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.base, ignore_errors=True)
