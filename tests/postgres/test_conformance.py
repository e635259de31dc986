"""The PostgreSQL store and audit sink pass the public conformance suites by subclassing alone,
against a real server (``tests/pg_server.py``): row and advisory locking, one connection and a
pool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from forge_policy.testing.conformance import AuditSinkSuite, RuntimeStoreSuite

pytest.importorskip("psycopg", reason="psycopg not installed (the postgres extra)")

from forge_policy.audit.postgres import PostgresAuditSink
from forge_policy.stores.postgres import PostgresStore

#: Each way the store can run: row or advisory locking, one connection or a pool.
VARIANTS = {
    "row": {"locking": "row"},
    "advisory": {"locking": "advisory"},
    "pooled": {"locking": "row", "pool_size": 4},
}


@pytest.fixture(params=sorted(VARIANTS))
def variant(request: pytest.FixtureRequest) -> dict[str, Any]:
    return VARIANTS[request.param]


class TestPostgresStore(RuntimeStoreSuite):
    @pytest.fixture
    def make_store(self, pg_dsn: str, variant: dict[str, Any]) -> Callable[[], PostgresStore]:
        return lambda: PostgresStore(pg_dsn, lock_timeout=5.0, **variant)


class TestPostgresAuditSink(AuditSinkSuite):
    @pytest.fixture
    def make_sink(self, pg_dsn: str) -> Callable[[], Any]:
        return lambda: PostgresAuditSink(pg_dsn, lock_timeout=5.0)
