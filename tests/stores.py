"""The store fixtures the storage tests share: every test that takes ``store`` runs on SQLite and on a
real PostgreSQL server (started once per test module from Debian's packages, skipped where it cannot run).

    pytest_plugins = ("tests.stores",)     # in the test module
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from judge.store import Store, sqlite_url
from tests.postgres import PostgresServer, why_unavailable


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    reason = why_unavailable()
    if reason is not None:
        pytest.skip(reason)
    server = PostgresServer()
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty database of each kind."""
    if request.param == "sqlite":
        return sqlite_url(tmp_path / "judge.sqlite3")
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.new_database()


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    """A store migrated to head on each kind of database."""
    store = Store(database_url)
    store.migrate()
    try:
        yield store
    finally:
        store.close()
