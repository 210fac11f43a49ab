"""Idempotency keys of submissions (``Idempotency-Key``): the live record of a key, and their expiry.
``Store.idempotency``; a key is written with its submission (``Submissions.create``)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    delete,
    select,
)

from judge.store.database import Database
from judge.store.models import (
    IdempotencyRecord,
)
from judge.store.records import (
    IdempotencyHit,
)


class IdempotencyKeys:
    """Rows of ``idempotency_keys``."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def live(self, scope: str, key: str, since: datetime) -> IdempotencyHit | None:
        """The live record (created at or after ``since``) of an idempotency key in ``scope``, if any."""
        query = select(IdempotencyRecord).where(
            IdempotencyRecord.scope == scope,
            IdempotencyRecord.key == key,
            IdempotencyRecord.created_at >= since,
        )
        with self.db.transaction() as session:
            row = session.scalar(query)
            return None if row is None else IdempotencyHit(row.submission_id, row.body_hash, row.created_at)

    def expire(self, before: datetime, scope: str | None = None, key: str | None = None) -> int:
        """Forget idempotency keys created before ``before`` (only that one key when given); how many."""
        query = delete(IdempotencyRecord).where(IdempotencyRecord.created_at < before)
        if scope is not None and key is not None:
            query = query.where(IdempotencyRecord.scope == scope, IdempotencyRecord.key == key)
        with self.db.transaction() as session:
            return int(getattr(session.execute(query), "rowcount", 0) or 0)
