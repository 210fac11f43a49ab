"""Deletion of submissions with everything that names them (events, callback attempts, idempotency keys,
account links, gradings, tags); the store's files are scrubbed after (``judge.store.scrub``).
``Store.deletion``."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import (
    ColumnElement,
    delete,
    select,
)
from sqlalchemy.orm import Session

from judge.store.database import Database
from judge.store.models import (
    AccountSubmission,
    CallbackAttempt,
    Grading,
    IdempotencyRecord,
    Submission,
    SubmissionEvent,
    SubmissionTag,
)
from judge.store.records import (
    Status,
)


class Deletion:
    """Removes submissions: one, the finished ones of before a time, one external user's."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def delete_ids(self, session: Session, ids: Sequence[str]) -> int:
        """Remove these submissions with their events, callback attempts, idempotency keys and account
        links, inside ``session``'s transaction; how many submissions went."""
        return self._delete_ids(session, ids) if ids else 0

    def _delete_ids(self, session: Session, ids: Sequence[str]) -> int:
        # Explicit rather than relying on ON DELETE CASCADE alone (SQLite needs foreign_keys=ON for it).
        for model in (
            SubmissionEvent,
            CallbackAttempt,
            IdempotencyRecord,
            AccountSubmission,
            Grading,
            SubmissionTag,
        ):
            session.execute(delete(model).where(model.submission_id.in_(ids)))
        result = session.execute(delete(Submission).where(Submission.id.in_(ids)))
        return int(getattr(result, "rowcount", 0) or 0)

    def delete(self, submission_id: str) -> bool:
        """Remove a submission with its events, callback attempts and idempotency key; False if absent.
        Like every deletion, it is gone from the store's files too when this returns (``scrub``)."""
        with self.db.transaction() as session:
            removed = self._delete_ids(session, [submission_id]) == 1
        if removed:
            self.db.scrub()
        return removed

    def purge_finished(self, before: datetime, batch: int = 500) -> int:
        """Remove finished submissions (done or failed) that finished before ``before``; how many."""
        finished = Submission.status.in_([Status.DONE.value, Status.FAILED.value])
        return self._delete_where([finished, Submission.finished_at < before], batch)

    def erase_user(self, key_id: str | None, external_user: str, batch: int = 500) -> int:
        """Remove every submission of one external user of one API key (its id; any status); how many."""
        owner = Submission.key_id.is_(None) if key_id is None else Submission.key_id == key_id
        return self._delete_where([owner, Submission.external_user == external_user], batch)

    def _delete_where(self, conditions: list[ColumnElement[bool]], batch: int) -> int:
        """Remove the submissions that meet every condition, ``batch`` per transaction; how many."""
        total = 0
        while True:
            with self.db.transaction() as session:
                ids = list(session.scalars(select(Submission.id).where(*conditions).limit(batch)))
                if not ids:
                    break
                total += self._delete_ids(session, ids)
        if total:
            self.db.scrub()
        return total
