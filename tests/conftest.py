"""Shared fixtures: a clean FORGE_* environment and Hypothesis profiles."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile(
    "long", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

#: Skip reasons that mean a component CI installs is missing: in CI (``CI`` set) they fail.
MISSING_COMPONENT = ("could not import", "not installed", "not found on PATH")


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--update-golden``: rewrite ``tests/golden`` from what the hook prints now."""
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite the golden message files (tests/golden) instead of comparing them",
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """In CI a test skipped for a missing extra or service fails: ``.ci/run`` installs them all,
    so such a skip means the install is broken, not that the test does not apply."""
    outcome = yield
    _fail_missing_in_ci(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """The same for a module skipped at import (``pytest.importorskip``)."""
    outcome = yield
    _fail_missing_in_ci(outcome.get_result())


def _fail_missing_in_ci(report: Any) -> None:
    if not os.environ.get("CI") or not report.skipped:
        return
    longrepr = report.longrepr
    reason = str(longrepr[-1]) if isinstance(longrepr, tuple) else str(longrepr)
    if any(marker in reason for marker in MISSING_COMPONENT):
        report.outcome = "failed"
        report.longrepr = f"CI installs every optional component, but: {reason}"


SHARED = Path(__file__).resolve().parents[2] / "shared"
DOTFORGE = SHARED / "compat" / "dotforge"


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """No FORGE_* (or seed bypass) variable of the developer's shell leaks into a test, nor an
    agent harness's marker (the suite run from an agent's shell tool runs as from a terminal's:
    governance commands would refuse, see forge_policy.cli.guard)."""
    from forge_policy.cli.guard import AGENT_MARKERS

    for name in list(os.environ):
        if name.startswith(("FORGE_", "DISABLE_")) or name in AGENT_MARKERS:
            monkeypatch.delenv(name)


@pytest.fixture
def dotforge_dir() -> Path:
    """The public dotforge catalog from ../shared (skips with a reason when absent)."""
    if not (DOTFORGE / "index.yaml").is_file():
        pytest.skip(f"dotforge compatibility data not found at {DOTFORGE}")
    return DOTFORGE


@pytest.fixture(scope="session")
def pg() -> Any:
    """A throwaway PostgreSQL cluster for the whole run (``tests/pg_server.py``); a skip
    naming what is missing when psycopg or the server binaries are absent."""
    pytest.importorskip("psycopg", reason="psycopg not installed (the postgres extra)")
    from tests.pg_server import PgServer

    server = PgServer()
    yield server
    server.close()


@pytest.fixture
def pg_dsn(pg: Any) -> str:
    """The DSN of a new, empty database on the test cluster."""
    return str(pg.database())
