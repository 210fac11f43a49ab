"""Gradings of a submission in the judge's database (a problem's regrade: ``judge.store.regrade_jobs``).

A regrade grades the same submission again with the problem as it is now; it stores no new submission.
The submission row always holds its current grading's status, verdict, result and manifest (``grading``
names its number); once a submission is regraded, ``gradings`` keeps every grading in order: number 1
is the one it had (copied when the first regrade is asked for), then one row per regrade. A result is
stored once: the current grading's in the submission row (its grading row has none), each earlier one's in
its grading row (moved there when a regrade supersedes it).

    gradings = GradingStore(store)
    gradings.request(id, target, notify=..., owner_cap=...)  done|failed -> queued, a ``queued`` grading
    gradings.pending(id)                                    the regrade a claim of it grades (the worker)
    gradings.finish(claim, pending, result, verdict, manifest, final)   running -> done, grading done
    gradings.fail(claim, pending, error, final)             running -> the status it had: the earlier
                                                            grading stays the current one
    gradings.history(id)                                    every stored grading, oldest first
    gradings.request_in(session, id, ...)                   ``request`` inside a caller's transaction

Every change is a conditional UPDATE, as the repository's: a regrade is asked for only of a finished
submission (``RegradeRefused`` otherwise: one grading at a time), and its result is written only by the
claim of the attempt that holds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import case, delete, func, insert, select, update
from sqlalchemy.orm import Session

from judge.store.models import Grading, Submission, SubmissionEvent, utcnow
from judge.store.records import CallbackState, Claim, Status
from judge.store.repository import Store

FINISHED = (Status.DONE.value, Status.FAILED.value)
#: A grading's own states: ``queued`` from the request until it ends (the submission says whether it is
#: being graded), then ``done`` or ``failed``.
GRADING_QUEUED, GRADING_DONE, GRADING_FAILED = "queued", "done", "failed"
#: The event that opens a regrade's stream (``judge.dispatch.events.STATUS``).
STATUS_EVENT = "status"


@dataclass(frozen=True)
class ProblemVersion:
    """The version of a problem a regrade is graded with: its content hash and revision."""

    hash: str
    revision: int | None


@dataclass(frozen=True)
class PendingGrading:
    """A regrade waiting for (or under) its grading: the grading's number, whether its end sends the
    callback, the submission's attempt number its first try took, the version it was asked for and when."""

    submission_id: str
    number: int
    notify: bool
    first_attempt: int
    accepted: ProblemVersion
    job_id: str | None
    #: When the regrade was asked for (how long it has waited for a grader with its version).
    asked_at: datetime


@dataclass(frozen=True)
class GradingRecord:
    number: int
    status: str
    verdict: str | None
    result: dict[str, Any] | None
    error: str | None
    manifest: dict[str, Any] | None
    accepted_hash: str | None
    accepted_revision: int | None
    job_id: str | None
    notify: bool
    created_at: datetime
    finished_at: datetime | None


class _Stale(Exception):
    """Rolls back a grading's end whose claim turned out stale."""


class RegradeRefused(Exception):
    """The submission is not finished (queued or running: its grading, or a regrade, is under way), or
    is gone; nothing was changed. ``status``: what it is (None: gone)."""

    def __init__(self, status: str | None) -> None:
        super().__init__(f"the submission is {status or 'gone'}")
        self.status = status


class RegradeOverCap(Exception):
    """The caller already has ``count`` submissions queued or running (regrades included), its cap."""

    def __init__(self, count: int) -> None:
        super().__init__(f"{count} unfinished")
        self.count = count


@dataclass(frozen=True)
class OwnerCap:
    """A learner's own regrade counts against its owner's ``unfinished`` cap (submissions_per_client):
    the owner is the key's id, or a keyless caller's address."""

    key_id: str | None
    address: str | None
    unfinished: int


def _grading(row: Grading) -> GradingRecord:
    return GradingRecord(
        number=row.number,
        status=row.status,
        verdict=row.verdict,
        result=row.result,
        error=row.error,
        manifest=row.manifest,
        accepted_hash=row.accepted_hash,
        accepted_revision=row.accepted_revision,
        job_id=row.job_id,
        notify=bool(row.notify),
        created_at=row.created_at,
        finished_at=row.finished_at,
    )


class GradingStore:
    def __init__(self, store: Store) -> None:
        self.store = store

    # ------------------------------------------------------------------------------------ one regrade

    def request(
        self,
        submission_id: str,
        target: ProblemVersion,
        *,
        notify: bool = False,
        owner_cap: OwnerCap | None = None,
    ) -> int:
        """Queue a regrade of a finished submission: it becomes ``queued`` (its verdict and result stay
        the current grading's until the regrade ends), a ``queued`` grading is added and its stream starts
        over with a ``status`` event saying so. The new grading's number. Raises RegradeRefused (not
        finished, or gone) or RegradeOverCap (``owner_cap`` reached); nothing is changed then."""
        with self.store.transaction() as session:
            return self.request_in(session, submission_id, target, notify, None, owner_cap)

    def request_in(
        self,
        session: Session,
        submission_id: str,
        target: ProblemVersion,
        notify: bool,
        job_id: str | None,
        owner_cap: OwnerCap | None,
    ) -> int:
        """``request`` inside ``session``'s transaction (a problem regrade queues a batch in one);
        ``job_id``: the problem regrade asking for it. Writes nothing when it raises."""
        now = utcnow()
        # Written first (SQLite's write lock, PostgreSQL's row lock), read after: nothing changes it between.
        taken = session.execute(
            update(Submission)
            .where(Submission.id == submission_id, Submission.status.in_(FINISHED))
            .values(enqueued_at=now)
            .execution_options(synchronize_session=False)
        )
        if not getattr(taken, "rowcount", 0):
            status = session.scalar(select(Submission.status).where(Submission.id == submission_id))
            raise RegradeRefused(status)
        row = session.execute(
            select(
                Submission.status,
                Submission.verdict,
                Submission.error,
                Submission.manifest,
                Submission.grading,
                Submission.attempts,
                Submission.created_at,
                Submission.finished_at,
            ).where(Submission.id == submission_id)
        ).one()
        previous = row.status
        # One statement each (Core, not the unit of work): a problem regrade queues many in a transaction.
        values: dict[str, Any] = {"status": Status.QUEUED.value, "node": None}
        if owner_cap is not None and owner_cap.key_id is None:
            values["client_address"] = owner_cap.address  # counted by address while unfinished
        session.execute(update(Submission).where(Submission.id == submission_id).values(**values))
        if owner_cap is not None:
            self._check_cap(session, owner_cap)
        last = session.scalar(select(func.max(Grading.number)).where(Grading.submission_id == submission_id))
        rows: list[dict[str, Any]] = []
        if last is None:  # its first regrade: keep the grading it had as number 1 (or the one it names)
            last = row.grading or 1
            manifest = row.manifest or {}
            rows.append(
                {
                    "number": last,
                    "status": previous,
                    "verdict": row.verdict,
                    "result": None,  # the current grading's: in the submission row until superseded
                    "error": row.error,
                    "manifest": row.manifest,
                    "accepted_hash": manifest.get("accepted_problem_hash") or manifest.get("problem_hash"),
                    "accepted_revision": manifest.get("accepted_problem_revision")
                    or manifest.get("problem_revision"),
                    "job_id": None,
                    "notify": False,
                    "first_attempt": 1,
                    "previous_status": None,
                    "created_at": row.created_at,
                    "finished_at": row.finished_at,
                }
            )
        number = last + 1
        rows.append(
            {
                "number": number,
                "status": GRADING_QUEUED,
                "verdict": None,
                "result": None,
                "error": None,
                "manifest": None,
                "accepted_hash": target.hash,
                "accepted_revision": target.revision,
                "job_id": job_id,
                "notify": notify,
                "first_attempt": row.attempts + 1,
                "previous_status": previous,
                "created_at": now,
                "finished_at": None,
            }
        )
        for values in rows:
            session.execute(insert(Grading).values(submission_id=submission_id, **values))
        # The stream follows the regrade from here (the claim drops the events of earlier attempts too).
        session.execute(delete(SubmissionEvent).where(SubmissionEvent.submission_id == submission_id))
        session.execute(
            insert(SubmissionEvent).values(
                submission_id=submission_id,
                attempt=row.attempts,
                kind=STATUS_EVENT,
                data={"status": Status.QUEUED.value, "regrade": True, "grading": number},
                created_at=now,
            )
        )
        return number

    def _check_cap(self, session: Session, cap: OwnerCap) -> None:
        """Raise RegradeOverCap (the transaction rolls back) when the owner now has more than its cap of
        unfinished submissions, regrades included (this one is counted already)."""
        if cap.key_id is not None:
            owner = [Submission.key_id == cap.key_id]
        else:
            owner = [Submission.key_id.is_(None), Submission.client_address == cap.address]
        unfinished = Submission.status.in_((Status.QUEUED.value, Status.RUNNING.value))
        query = select(func.count()).select_from(Submission).where(unfinished, *owner)
        count = int(session.scalar(query) or 0)
        if count > cap.unfinished:
            raise RegradeOverCap(count - 1)

    def pending(self, submission_id: str) -> PendingGrading | None:
        """The regrade a claim of this submission grades (None: its first grading)."""
        query = (
            select(Grading)
            .where(Grading.submission_id == submission_id, Grading.status == GRADING_QUEUED)
            .order_by(Grading.number.desc())
            .limit(1)
        )
        with self.store.transaction() as session:
            row = session.scalar(query)
            if row is None:
                return None
            return PendingGrading(
                submission_id=submission_id,
                number=row.number,
                notify=bool(row.notify),
                first_attempt=row.first_attempt,
                accepted=ProblemVersion(row.accepted_hash or "", row.accepted_revision),
                job_id=row.job_id,
                asked_at=row.created_at,
            )

    def finish(
        self,
        claim: Claim,
        pending: PendingGrading,
        result: dict[str, Any],
        verdict: str,
        manifest: dict[str, Any],
        final: tuple[str, dict[str, Any]],
    ) -> bool:
        """Store the regrade's result as the submission's current grading and in its grading row, with the
        final event, in one transaction: ``running -> done``. With ``notify`` the submission's callback is
        pending again (a new delivery). False (nothing written) when the claim is stale."""
        now = utcnow()
        values: dict[str, Any] = {
            "status": Status.DONE.value,
            "result": result,
            "verdict": verdict,
            "manifest": manifest,
            "error": None,
            "finished_at": now,
            "client_address": None,
            "grading": pending.number,
        }
        grading = {  # its result stays in the submission row while it is the current grading
            "status": GRADING_DONE,
            "verdict": verdict,
            "manifest": manifest,
            "finished_at": now,
        }
        if pending.notify:  # the callback is pending again: a new delivery (none without a callback_url)
            values |= {
                "callback_state": case(
                    (Submission.callback_url.is_not(None), CallbackState.PENDING.value),
                    else_=Submission.callback_state,
                ),
                "callback_sender": None,
                "callback_lease_until": None,
            }
        return self._settle(claim, pending, values, grading, final)

    def fail(
        self, claim: Claim, pending: PendingGrading, error: str, final: tuple[str, dict[str, Any]]
    ) -> bool:
        """The judge could not grade the regrade: the grading is ``failed`` with the reason, and the
        submission goes back to the status it had, its current grading unchanged."""
        with self.store.transaction() as session:
            previous = session.scalar(
                select(Grading.previous_status).where(
                    Grading.submission_id == claim.submission_id, Grading.number == pending.number
                )
            )
        values = {"status": previous or Status.DONE.value, "client_address": None}
        grading = {"status": GRADING_FAILED, "error": error, "finished_at": utcnow()}
        return self._settle(claim, pending, values, grading, final)

    def _settle(
        self,
        claim: Claim,
        pending: PendingGrading,
        values: dict[str, Any],
        grading: dict[str, Any],
        final: tuple[str, dict[str, Any]],
    ) -> bool:
        sid = claim.submission_id
        held = (
            (Submission.id == sid)
            & (Submission.status == Status.RUNNING.value)
            & (Submission.attempts == claim.attempt)
        )
        try:
            with self.store.transaction() as session:
                if "result" in values:
                    # The grading it supersedes takes its result along from the submission row (a
                    # current grading's result is kept there only, not twice), while the claim holds.
                    current = select(func.coalesce(Submission.grading, 1)).where(Submission.id == sid)
                    session.execute(
                        update(Grading)
                        .where(
                            Grading.submission_id == sid,
                            Grading.number == current.scalar_subquery(),
                            select(Submission.id).where(held).exists(),
                        )
                        .values(
                            result=select(Submission.result).where(Submission.id == sid).scalar_subquery()
                        )
                    )
                done = session.scalar(
                    update(Submission).where(held).values(**values).returning(Submission.id)
                )
                if done is None:
                    raise _Stale  # the claim is stale: roll back what was moved
                self._record_end(session, claim, pending, grading, final)
        except _Stale:
            return False
        return True

    @staticmethod
    def _record_end(
        session: Session,
        claim: Claim,
        pending: PendingGrading,
        grading: dict[str, Any],
        final: tuple[str, dict[str, Any]],
    ) -> None:
        """The grading row's end and the final event."""
        session.execute(
            update(Grading)
            .where(
                Grading.submission_id == claim.submission_id,
                Grading.number == pending.number,
                Grading.status == GRADING_QUEUED,
            )
            .values(**grading)
        )
        kind, data = final
        session.execute(
            insert(SubmissionEvent).values(
                submission_id=claim.submission_id,
                attempt=claim.attempt,
                kind=kind,
                data=data,
                created_at=utcnow(),
            )
        )

    def history(self, submission_id: str) -> list[GradingRecord]:
        """Every grading stored for the submission, oldest first (none until it is first regraded); the
        current grading's ``result`` is None here: it is the submission's."""
        query = select(Grading).where(Grading.submission_id == submission_id).order_by(Grading.number)
        with self.store.transaction() as session:
            return [_grading(row) for row in session.scalars(query)]
