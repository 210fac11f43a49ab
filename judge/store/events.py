"""Progress events of a grading attempt: appended while it runs (not synced one by one), read after an id
(a finished attempt's events folded into its final one: ``judge.store.eventlog``). ``Store.events``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sqlalchemy import (
    select,
    text,
)

from judge.store.database import Database
from judge.store.eventlog import folded, unfold
from judge.store.models import (
    Submission,
    SubmissionEvent,
    utcnow,
)
from judge.store.records import (
    Claim,
    EventRecord,
    Status,
)


class Events:
    """Rows of ``submission_events``."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def append(self, claim: Claim, kind: str, data: dict[str, Any]) -> int | None:
        """Record a progress event of the claimed attempt; None (not recorded) when the claim is stale."""
        with self.db.event_transaction() as session:
            if self.db.dialect == "postgresql":
                session.execute(text("SET LOCAL synchronous_commit TO OFF"))
            current = session.scalar(
                select(Submission.attempts).where(
                    Submission.id == claim.submission_id, Submission.status == Status.RUNNING.value
                )
            )
            if current != claim.attempt:
                return None
            row = SubmissionEvent(
                submission_id=claim.submission_id,
                attempt=claim.attempt,
                kind=kind,
                data=data,
                created_at=utcnow(),
            )
            session.add(row)
            session.flush()
            return row.id

    def after(self, submission_id: str, after: int = 0, limit: int = 500) -> list[EventRecord]:
        """Events of the submission with an id above ``after``, in order (a finished grading's folded
        events unfolded: ``eventlog``)."""
        query = (
            select(SubmissionEvent)
            .where(SubmissionEvent.submission_id == submission_id, SubmissionEvent.id > after)
            .order_by(SubmissionEvent.id)
            .limit(limit)
        )
        events: list[EventRecord] = []
        with self.db.transaction() as session:
            rows = list(session.scalars(query))
            result = None
            if any(folded(row.data) for row in rows):
                result = session.scalar(select(Submission.result).where(Submission.id == submission_id))
            for row in rows:
                for ident, kind, data in unfold(row.id, row.kind, row.data, result):
                    if ident > after:
                        events.append(replace(_event(row), id=ident, kind=kind, data=data))
        return events[:limit]


def _event(row: SubmissionEvent) -> EventRecord:
    return EventRecord(
        id=row.id,
        submission_id=row.submission_id,
        attempt=row.attempt,
        kind=row.kind,
        data=row.data,
        created_at=row.created_at,
    )
