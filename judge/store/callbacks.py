"""Callbacks of finished submissions: their state, leases of their senders, hand-offs to API nodes and
every delivery attempt. ``Store.callbacks``."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    and_,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session

from judge.store.database import Database
from judge.store.models import (
    CallbackAttempt,
    Submission,
    utcnow,
)
from judge.store.records import (
    CallbackState,
    Status,
)

#: Seconds a callback sender holds a callback it took (``take``), by default; and how long a
#: finished submission's pending callback may wait for its first try before an API node takes it over.
CALLBACK_LEASE_S = 120.0


class Callbacks:
    """The callback columns of ``submissions`` and the rows of ``callback_attempts``."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def record_attempt(
        self, submission_id: str, attempt: int, url: str, status_code: int | None, error: str | None
    ) -> None:
        with self.db.transaction() as session:
            session.add(
                CallbackAttempt(
                    submission_id=submission_id,
                    attempt=attempt,
                    url=url,
                    status_code=status_code,
                    error=error,
                    created_at=utcnow(),
                )
            )

    def set_state(self, submission_id: str, state: CallbackState) -> None:
        """Set the callback's state; its sender's lease ends (a redelivery's sender takes a new one)."""
        with self.db.transaction() as session:
            session.execute(
                update(Submission)
                .where(Submission.id == submission_id)
                .values(callback_state=state.value, callback_sender=None, callback_lease_until=None)
            )

    def reopen(self, submission_id: str) -> bool:
        """Set a settled (delivered or failed) callback pending again, for a redelivery: a conditional
        update, so of several API nodes asked at once exactly one reopens it (True); False when it was
        not settled (a delivery is under way)."""
        settled = [CallbackState.DELIVERED.value, CallbackState.FAILED.value]
        with self.db.transaction() as session:
            updated = session.execute(
                update(Submission)
                .where(Submission.id == submission_id, Submission.callback_state.in_(settled))
                .values(
                    callback_state=CallbackState.PENDING.value,
                    callback_sender=None,
                    callback_lease_until=None,
                )
            )
            return bool(getattr(updated, "rowcount", 0))

    def lease(self, submission_id: str, sender: str, lease_s: float) -> bool:
        """Hold a pending callback for ``sender`` for ``lease_s`` seconds from now (before each try, and
        over the wait for the next): True when it was free (no lease, or one that has passed) or already
        ``sender``'s; False while another sender's lease runs (that one delivers it) or it is no longer
        pending."""
        now = utcnow()
        free = or_(
            Submission.callback_lease_until.is_(None),
            Submission.callback_lease_until < now,
            Submission.callback_sender == sender,
        )
        with self.db.transaction() as session:
            pending = Submission.callback_state == CallbackState.PENDING.value
            return _lease(session, submission_id, sender, now + timedelta(seconds=lease_s), pending, free)

    def release_leases(self, sender: str, submission_ids: Sequence[str]) -> int:
        """End ``sender``'s leases on these callbacks (it stops without sending them): another sender may
        take them at once. How many it held."""
        if not submission_ids:
            return 0
        with self.db.transaction() as session:
            updated = session.execute(
                update(Submission)
                .where(Submission.id.in_(list(submission_ids)), Submission.callback_sender == sender)
                .values(callback_sender=None, callback_lease_until=utcnow())
            )
            return int(getattr(updated, "rowcount", 0) or 0)

    def hand_off(self, submission_id: str, url: str, note: str) -> bool:
        """Leave a pending callback to an API node (the caller cannot send it): its state becomes
        ``handed_off`` and ``note`` is recorded as try 0 (not a delivery try). False when it was not
        pending (delivered, failed, deleted)."""
        with self.db.transaction() as session:
            if not _move_callback(session, submission_id, CallbackState.PENDING, CallbackState.HANDED_OFF):
                return False
            session.add(
                CallbackAttempt(
                    submission_id=submission_id,
                    attempt=0,
                    url=url,
                    status_code=None,
                    error=note,
                    created_at=utcnow(),
                )
            )
        return True

    def handed_off(
        self, limit: int, orphaned_after_s: float = CALLBACK_LEASE_S
    ) -> list[tuple[str, datetime | None]]:
        """(id, finished_at) of at most ``limit`` finished submissions whose callback an API node may take
        (``take``), the longest finished first: handed off by a grading node without callback
        settings, or pending with its sender gone: a lease that has passed (the sender died mid-delivery),
        or no lease though it finished over ``orphaned_after_s`` ago (it died before its first try)."""
        query = (
            select(Submission.id, Submission.finished_at)
            .where(_takeable(utcnow(), orphaned_after_s))
            .order_by(Submission.finished_at, Submission.id)
            .limit(limit)
        )
        with self.db.transaction() as session:
            return [(sid, finished) for sid, finished in session.execute(query)]

    def take(
        self,
        submission_id: str,
        sender: str = "api",
        lease_s: float = CALLBACK_LEASE_S,
        orphaned_after_s: float = CALLBACK_LEASE_S,
    ) -> bool:
        """Take a callback to send it (state ``pending``, leased to ``sender`` for ``lease_s`` seconds):
        a handed-off one, or a pending one whose sender is gone (``handed_off``). True for
        exactly one of the API nodes asking (a conditional update), False for the others."""
        now = utcnow()
        with self.db.transaction() as session:
            return _lease(
                session,
                submission_id,
                sender,
                now + timedelta(seconds=lease_s),
                _takeable(now, orphaned_after_s),
            )

    def attempts(self, submission_id: str) -> list[tuple[int, int | None, str | None, datetime]]:
        """(attempt, HTTP status, error, time) of every delivery attempt, in order (try 0: a note of a
        node that could not send it, ``hand_off``)."""
        query = (
            select(CallbackAttempt)
            .where(CallbackAttempt.submission_id == submission_id)
            .order_by(CallbackAttempt.id)
        )
        with self.db.transaction() as session:
            return [(r.attempt, r.status_code, r.error, r.created_at) for r in session.scalars(query)]

    def pending(self) -> list[str]:
        """Finished submissions whose callback has not been delivered or given up on yet."""
        query = (
            select(Submission.id)
            .where(
                Submission.callback_state == CallbackState.PENDING.value,
                Submission.status.in_([Status.DONE.value, Status.FAILED.value]),
            )
            .order_by(Submission.finished_at)
        )
        with self.db.transaction() as session:
            return list(session.scalars(query))


def _takeable(now: datetime, orphaned_after_s: float) -> Any:
    """The condition on a submission's callback that an API node may take it: the submission finished,
    and its callback handed off, or pending with its sender's lease passed, or with no lease though
    finished ``orphaned_after_s`` ago."""
    pending = Submission.callback_state == CallbackState.PENDING.value
    return and_(
        Submission.status.in_([Status.DONE.value, Status.FAILED.value]),
        or_(
            Submission.callback_state == CallbackState.HANDED_OFF.value,
            and_(pending, Submission.callback_lease_until < now),
            and_(
                pending,
                Submission.callback_lease_until.is_(None),
                Submission.finished_at < now - timedelta(seconds=orphaned_after_s),
            ),
        ),
    )


def _lease(session: Session, submission_id: str, sender: str, until: datetime, *conditions: Any) -> bool:
    """Lease the submission's callback to ``sender`` until ``until`` (its state ``pending``) where the
    conditions hold (a conditional update): False when they do not, so of several senders one gets it."""
    updated = session.execute(
        update(Submission)
        .where(Submission.id == submission_id, *conditions)
        .values(
            callback_state=CallbackState.PENDING.value, callback_sender=sender, callback_lease_until=until
        )
    )
    return bool(getattr(updated, "rowcount", 0))


def _move_callback(session: Session, submission_id: str, old: CallbackState, new: CallbackState) -> bool:
    """Move a submission's callback from state ``old`` to ``new`` (a conditional update): False when it
    was not in ``old``, so of several callers exactly one moves it."""
    updated = session.execute(
        update(Submission)
        .where(Submission.id == submission_id, Submission.callback_state == old.value)
        .values(callback_state=new.value)
    )
    return bool(getattr(updated, "rowcount", 0))
