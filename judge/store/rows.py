"""What the store's aggregates share about submission rows: a row as a record, the conditions that select
one owner's submissions (an API key's id or a keyless address), counting them under a lock per owner (the
quotas of ``Submissions.create`` and ``Attempts.claim_within``), and ``Refused``, which rolls a transaction
back with the outcome that refused it."""

from __future__ import annotations

import hashlib
from typing import Any

from sqlalchemy import func, inspect, select, text
from sqlalchemy.orm import Session

from judge.store.models import Submission
from judge.store.records import CallbackState, Deferred, QuotaExceeded, Status, SubmissionRecord


def record(row: Submission) -> SubmissionRecord:
    """The row as a record; a listing's deferred columns (``HEAVY_COLUMNS``) read as empty."""
    unloaded = inspect(row).unloaded
    return SubmissionRecord(
        id=row.id,
        problem=row.problem,
        code="" if "code" in unloaded else row.code,
        status=Status(row.status),
        verdict=row.verdict,
        result=None if "result" in unloaded else row.result,
        error=row.error,
        attempts=row.attempts,
        manifest=row.manifest,
        key_name=row.key_name,
        key_id=row.key_id,
        client_address=row.client_address,
        callback_url=row.callback_url,
        callback_state=CallbackState(row.callback_state) if row.callback_state else None,
        created_at=row.created_at,
        started_at=row.started_at,
        finished_at=row.finished_at,
        node=row.node,
        external_user=row.external_user,
        tags=row.tags,
        regrade_of=row.regrade_of,
        grading=row.grading or 1,
    )


def owner_of(key_id: str | None, address: str | None) -> list[Any] | None:
    """The conditions that select one owner's submissions: an API key's id, or a keyless client's
    address (kept while unfinished); None when there is no owner to count (a keyless regrade)."""
    if key_id is not None:
        return [Submission.key_id == key_id]
    if address is not None:
        return [Submission.key_id.is_(None), Submission.client_address == address]
    return None


def owner_lock_key(key_id: str | None, address: str | None) -> int:
    """A signed 64-bit advisory-lock key for one owner (PostgreSQL)."""
    owner = f"key:{key_id}" if key_id is not None else f"address:{address}"
    return int.from_bytes(hashlib.sha256(f"judge-owner:{owner}".encode()).digest()[:8], "big", signed=True)


class Refused(Exception):
    """Rolls a transaction back from inside a ``transaction()`` block."""

    def __init__(self, outcome: Deferred | QuotaExceeded) -> None:
        super().__init__()
        self.outcome = outcome


def lock_owner(dialect: str, session: Session, key_id: str | None, address: str | None) -> None:
    """Serialize one owner's quota checks until the transaction ends (PostgreSQL; SQLite's single
    writer already does)."""
    if dialect == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": owner_lock_key(key_id, address)})


def status_counts(session: Session, owner: list[Any]) -> dict[str, int]:
    """The owner's queued and running submissions, regrades left out (a submission graded before has
    a ``finished_at``): an operator's regrade of a problem never holds a learner's own submissions
    back (the submit caps, ``gradings_per_client``); a learner's own regrade is counted when it is
    asked for (``judge.store.gradings``)."""
    unfinished = Submission.status.in_((Status.QUEUED.value, Status.RUNNING.value))
    first = Submission.finished_at.is_(None)
    query = (
        select(Submission.status, func.count()).where(unfinished, first, *owner).group_by(Submission.status)
    )
    return {status: int(n) for status, n in session.execute(query)}
