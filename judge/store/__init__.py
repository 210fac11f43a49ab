"""Storage of submissions: SQLAlchemy 2 models, repository functions and Alembic migrations.

``Store`` is the only way the service and the dispatchers touch the database: every status change is a
conditional UPDATE (``queued -> running -> done|failed``), so a submission's result is written exactly once
whatever the number of threads, processes or nodes. SQLite (WAL) by default, PostgreSQL by URL; the
migrations ship inside this package (``judge.store:migrations``) so an installed judge can migrate itself.
"""

from judge.store.records import (
    CallbackState,
    Claim,
    Cursor,
    Deferred,
    EventRecord,
    IdempotencyHit,
    IdempotencyKey,
    IdempotencyTaken,
    NewSubmission,
    NodeBeat,
    NodeRecord,
    NodeState,
    Quota,
    QuotaExceeded,
    Status,
    SubmissionFilter,
    SubmissionRecord,
)
from judge.store.repository import Store, database_url, sqlite_url

__all__ = [
    "CallbackState",
    "Claim",
    "Cursor",
    "Deferred",
    "EventRecord",
    "IdempotencyHit",
    "IdempotencyKey",
    "IdempotencyTaken",
    "NewSubmission",
    "NodeBeat",
    "NodeRecord",
    "NodeState",
    "Quota",
    "QuotaExceeded",
    "Status",
    "Store",
    "SubmissionFilter",
    "SubmissionRecord",
    "database_url",
    "sqlite_url",
]
