"""One database of the judge: its engines, its transactions and what concerns the whole of it (migration,
a ping, the scrub after deletions). Every store class (``judge.store.repository``'s aggregates, accounts,
gradings, regrade jobs, problem versions) runs its transactions here, so they share one connection pool
and one notion of a transaction: each ``transaction()`` is one short transaction, committed on exit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry

from judge.store.scrub import SECURE_DELETE, scrub

#: Seconds a SQLite writer waits for another writer's lock before it fails.
SQLITE_BUSY_TIMEOUT_S = 30


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def database_url(configured: str | None, data_dir: Path) -> str:
    """The database of a service or grading node: the ``database_url`` setting, else the SQLite file in its
    ``data_dir``."""
    return configured or sqlite_url(data_dir.resolve() / "judge.sqlite3")


def _sqlite_pragmas(synchronous: str) -> Callable[[Any, ConnectionPoolEntry], None]:
    def apply(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA synchronous={synchronous}")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(SECURE_DELETE)
            cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_S * 1000}")
        finally:
            cursor.close()

    return apply


def make_engine(url: str, *, durable: bool = True) -> Engine:
    """An SQLAlchemy engine for ``url``; SQLite files get WAL, foreign keys and a busy timeout.

    ``durable``: SQLite syncs every commit to disk (``synchronous=FULL``), so what a 202 promised survives
    a power cut. Without it (``NORMAL``) a commit survives a killed process but maybe not a power cut:
    good enough for progress events, which a regrade rewrites anyway.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False})
        event.listen(engine, "connect", _sqlite_pragmas("FULL" if durable else "NORMAL"))
        return engine
    return create_engine(url, pool_pre_ping=True)


class Database:
    """The engines of one database URL and its transactions."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        # Progress events are many small commits: on SQLite they go through connections that do not
        # fsync each one (the final event is written with the result, durably); on PostgreSQL their
        # transactions do not wait for the WAL flush (synchronous_commit off, ``Events.append``).
        self._events_engine = make_engine(url, durable=False) if self.dialect == "sqlite" else self.engine
        self._event_sessions = sessionmaker(self._events_engine, expire_on_commit=False)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def migrate(self) -> None:
        """Apply every Alembic migration that this database has not seen yet."""
        from judge.store.migrate import upgrade

        upgrade(self.engine)

    def close(self) -> None:
        self.engine.dispose()
        self._events_engine.dispose()

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """One short transaction: committed when the block ends, rolled back if it raises."""
        with self._sessions() as session, session.begin():
            yield session

    @contextmanager
    def event_transaction(self) -> Iterator[Session]:
        """One short transaction of progress events (not synced to disk one by one on SQLite)."""
        with self._event_sessions() as session, session.begin():
            yield session

    def ping(self) -> None:
        """Raise (an SQLAlchemy error) unless the database answers."""
        with self.engine.connect() as connection:
            connection.execute(text("SELECT 1"))

    def scrub(self) -> bool:
        """Take what deletions left out of the store's files (``judge.store.scrub``)."""
        return scrub(self.engine)
