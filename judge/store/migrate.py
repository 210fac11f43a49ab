"""Run the packaged Alembic migrations on an engine (no alembic.ini needed)."""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine

SCRIPT_LOCATION = "judge.store:migrations"


def config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", SCRIPT_LOCATION)
    return cfg


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Migrate the database to ``revision``. On PostgreSQL an advisory lock keeps concurrent starts apart."""
    cfg = config()
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.exec_driver_sql("SELECT pg_advisory_xact_lock(7305412001)")
        cfg.attributes["connection"] = connection
        command.upgrade(cfg, revision)


def current(engine: Engine) -> str | None:
    """The revision the database is at (None before the first migration)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()
