"""Submissions: a new one stored (with its idempotency key and its owner's quota, in one transaction),
one read, counted, listed by id. ``Store.submissions``."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import (
    func,
    select,
)
from sqlalchemy.exc import IntegrityError

from judge.store.database import Database
from judge.store.models import (
    IdempotencyRecord,
    Submission,
    SubmissionTag,
    utcnow,
)
from judge.store.records import (
    CallbackState,
    IdempotencyKey,
    IdempotencyTaken,
    NewSubmission,
    Quota,
    QuotaExceeded,
    Status,
    SubmissionRecord,
)
from judge.store.rows import Refused, lock_owner, owner_of, record, status_counts


class Submissions:
    """Rows of ``submissions``: written once when accepted (``queued``), read by id."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def create(
        self,
        new: NewSubmission,
        idempotency: IdempotencyKey | None = None,
        quota: Quota | None = None,
    ) -> SubmissionRecord:
        """Store an accepted submission as ``queued`` and return it (with its new id).

        ``idempotency``: stored in the same transaction, naming the new submission; raises
        IdempotencyTaken (nothing stored) when a live record of that key exists already (a concurrent
        request won: look it up). Call ``IdempotencyKeys.expire`` first so that an expired one is gone.

        ``quota``: its owner's caps, counted with the new row in the same transaction (the row is
        written first, which takes SQLite's write lock; PostgreSQL takes an advisory lock per owner),
        so concurrent API nodes cannot pass them together; raises QuotaExceeded (nothing stored).
        """
        row = Submission(
            id=str(uuid.uuid4()),
            problem=new.problem,
            code=new.code,
            status=Status.QUEUED.value,
            attempts=0,
            manifest=new.manifest,
            key_name=new.key_name,
            key_id=new.key_id if new.key_id is not None else new.key_name,
            client_address=new.client_address,
            callback_url=new.callback_url,
            callback_state=CallbackState.PENDING.value if new.callback_url else None,
            created_at=utcnow(),
            external_user=new.external_user,
            tags=dict(new.tags) if new.tags else None,
            regrade_of=new.regrade_of,
        )
        owner = owner_of(row.key_id, row.client_address)
        try:
            with self.db.transaction() as session:
                session.add(row)
                session.add_all(
                    SubmissionTag(
                        submission_id=row.id,
                        name=name,
                        value=value,
                        key_id=row.key_id,
                        problem=row.problem,
                        created_at=row.created_at,
                        status=row.status,
                        verdict=row.verdict,
                    )
                    for name, value in (row.tags or {}).items()
                )
                if quota is not None and owner is not None:
                    session.flush()
                    lock_owner(self.db.dialect, session, row.key_id, row.client_address)
                    counts = status_counts(session, owner)
                    unfinished = counts.get(Status.QUEUED.value, 0) + counts.get(Status.RUNNING.value, 0)
                    if unfinished > quota.unfinished:
                        raise Refused(
                            QuotaExceeded("submissions_per_client", unfinished - 1, quota.unfinished)
                        )
                    if counts.get(Status.QUEUED.value, 0) > quota.queued:
                        queued = counts[Status.QUEUED.value] - 1
                        raise Refused(QuotaExceeded("queue_share", queued, quota.queued))
                if idempotency is not None:
                    session.flush()  # the submission first: the key's foreign key names it
                    session.add(
                        IdempotencyRecord(
                            scope=idempotency.scope,
                            key=idempotency.key,
                            body_hash=idempotency.body_hash,
                            submission_id=row.id,
                            created_at=row.created_at,
                        )
                    )
        except IntegrityError:
            if idempotency is None:
                raise
            raise IdempotencyTaken(idempotency.key) from None
        except Refused as refused:
            assert isinstance(refused.outcome, QuotaExceeded)
            raise refused.outcome from None
        return record(row)

    def owner_counts(self, key_id: str | None, address: str | None) -> dict[Status, int]:
        """Queued and running submissions of one owner (an API key's id, or a keyless address)."""
        owner = owner_of(key_id, address)
        if owner is None:
            return {Status.QUEUED: 0, Status.RUNNING: 0}
        with self.db.transaction() as session:
            counts = status_counts(session, owner)
        return {s: counts.get(s.value, 0) for s in (Status.QUEUED, Status.RUNNING)}

    def get(self, submission_id: str) -> SubmissionRecord | None:
        with self.db.transaction() as session:
            row = session.get(Submission, submission_id)
            return None if row is None else record(row)

    def count(self, status: Status | None = None) -> int:
        query = select(func.count()).select_from(Submission)
        if status is not None:
            query = query.where(Submission.status == status.value)
        with self.db.transaction() as session:
            return int(session.scalar(query) or 0)

    def ids(self, problem: str | None = None) -> Sequence[str]:
        """Every submission id (oldest first), for tests and maintenance."""
        query = select(Submission.id).order_by(Submission.created_at, Submission.id)
        if problem is not None:
            query = query.where(Submission.problem == problem)
        with self.db.transaction() as session:
            return list(session.scalars(query))
