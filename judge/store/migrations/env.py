"""Alembic environment: migrates the connection ``judge.store.repository.migrate`` hands over.

Run by the judge itself at start-up (``Store.migrate``); to write a new revision from a checkout:
``.venv/bin/python -m judge.store.revision "message"`` (``judge/store/revision.py``).
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from judge.store.models import Base

connection = context.config.attributes.get("connection")
if not isinstance(connection, Connection):
    raise RuntimeError("judge.store migrations run through judge.store.Store.migrate(), not the alembic CLI")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
