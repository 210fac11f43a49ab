"""Operators' problem regrades: jobs in the judge's database that queue regrades in bounded batches.

    jobs = RegradeJobs(store)
    jobs.create(problem, target, force=..., notify=..., batch=..., requested_by=...)  -> JobRecord
    jobs.advance(job_id, room)      queue its next batch (``GradingStore.request_in``): the ids, to dispatch
    jobs.job(job_id) / running_jobs() / cancel(job_id)

A job grades again every finished submission of the problem made until it started (graded with another
version than the one it grades with, or every one with ``force``), oldest first, at most ``batch`` of its
gradings unfinished at once. Its cursor (``after_created``, ``after_id``: the last submission looked at)
is in its row, so any process resumes it where it stopped; the row is written first in each ``advance``,
so of several API nodes one at a time moves it on.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, or_, select, tuple_, update

from judge.store.gradings import (
    FINISHED,
    GRADING_DONE,
    GRADING_FAILED,
    GRADING_QUEUED,
    GradingStore,
    ProblemVersion,
    RegradeRefused,
)
from judge.store.models import Grading, RegradeJob, Submission, utcnow
from judge.store.repository import Store

#: A problem regrade's states.
JOB_RUNNING, JOB_DONE, JOB_CANCELLED = "running", "done", "cancelled"


@dataclass(frozen=True)
class JobRecord:
    """A problem regrade and where it stands: ``queued`` gradings asked for so far (of ``total``), of which
    ``graded`` ended done, ``failed`` failed in the judge and ``in_flight`` are still to end."""

    id: str
    problem: str
    problem_hash: str
    problem_revision: int | None
    force: bool
    notify: bool
    batch: int
    state: str
    total: int
    queued: int
    graded: int
    failed: int
    in_flight: int
    requested_by: str | None
    created_at: datetime
    finished_at: datetime | None


def _targets(problem: str, current_hash: str, force: bool, until: datetime) -> list[Any]:
    """The submissions a problem regrade grades again: the problem's finished ones made up to ``until``
    (rows made by the old regrades, ``regrade_of`` set, are left as they are), graded with another
    version than ``current_hash`` (every one with ``force``)."""
    conditions: list[Any] = [
        Submission.problem == problem,
        Submission.regrade_of.is_(None),
        Submission.status.in_(FINISHED),
        Submission.created_at <= until,
    ]
    if not force:
        graded_with = Submission.manifest["problem_hash"].as_string()
        conditions.append(or_(graded_with.is_(None), graded_with != current_hash))
    return conditions


class RegradeJobs:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.gradings = GradingStore(store)

    def create(
        self,
        problem: str,
        target: ProblemVersion,
        *,
        force: bool,
        notify: bool,
        batch: int,
        requested_by: str | None,
    ) -> JobRecord:
        """Start an operator's regrade of ``problem``: what it will grade again is counted now (``total``:
        the finished submissions made until now, graded with another version unless ``force``)."""
        now = utcnow()
        job_id = str(uuid.uuid4())
        targets = _targets(problem, target.hash, force, now)
        count = select(func.count()).select_from(Submission).where(*targets)
        with self.store.transaction() as session:  # read apart from the write (SQLite's snapshots)
            total = int(session.scalar(count) or 0)
        with self.store.transaction() as session:
            session.add(
                RegradeJob(
                    id=job_id,
                    problem=problem,
                    problem_hash=target.hash,
                    problem_revision=target.revision,
                    force=force,
                    notify=notify,
                    batch=batch,
                    state=JOB_RUNNING if total else JOB_DONE,
                    total=total,
                    queued=0,
                    requested_by=requested_by,
                    created_at=now,
                    updated_at=now,
                    finished_at=None if total else now,
                )
            )
        job = self.job(job_id)
        assert job is not None
        return job

    def advance(self, job_id: str, room: int) -> list[str]:
        """Queue the job's next regrades: as many as its batch has room for (it has at most ``batch``
        unfinished at once) and at most ``room`` (the queue's free places), oldest first from its cursor.
        The ids queued, to dispatch. A job with nothing left to queue and nothing unfinished is done.
        Several API nodes may call it at once: the job's row is written first, so one at a time goes on."""
        with self.store.transaction() as session:
            touched = session.execute(
                update(RegradeJob)
                .where(RegradeJob.id == job_id, RegradeJob.state == JOB_RUNNING)
                .values(updated_at=utcnow())
            )
            if not getattr(touched, "rowcount", 0):
                return []
            job = session.get(RegradeJob, job_id)
            assert job is not None
            in_flight = int(
                session.scalar(
                    select(func.count())
                    .select_from(Grading)
                    .where(Grading.job_id == job_id, Grading.status == GRADING_QUEUED)
                )
                or 0
            )
            want = min(room, job.batch - in_flight)
            if want <= 0:
                return []
            conditions = _targets(job.problem, job.problem_hash, job.force, job.created_at)
            if job.after_created is not None and job.after_id is not None:
                cursor = tuple_(job.after_created, job.after_id)
                conditions.append(tuple_(Submission.created_at, Submission.id) > cursor)
            candidates = session.execute(
                select(Submission.id, Submission.created_at)
                .where(*conditions)
                .order_by(Submission.created_at, Submission.id)
                .limit(want)
            ).all()
            target = ProblemVersion(job.problem_hash, job.problem_revision)
            queued: list[str] = []
            for submission_id, created_at in candidates:
                try:  # writes nothing when it refuses
                    self.gradings.request_in(session, submission_id, target, job.notify, job_id, None)
                except RegradeRefused:  # being graded, or gone, since it was read: graded as it is now
                    pass
                else:
                    queued.append(submission_id)
                job.after_created, job.after_id = created_at, submission_id
            job.queued += len(queued)
            if len(candidates) < want and not queued and in_flight == 0:
                job.state, job.finished_at = JOB_DONE, utcnow()
            return queued

    def cancel(self, job_id: str) -> bool:
        """Stop queueing the job's regrades (those queued still end); False when it was not running."""
        with self.store.transaction() as session:
            stopped = session.execute(
                update(RegradeJob)
                .where(RegradeJob.id == job_id, RegradeJob.state == JOB_RUNNING)
                .values(state=JOB_CANCELLED, finished_at=utcnow(), updated_at=utcnow())
            )
            return bool(getattr(stopped, "rowcount", 0))

    def job(self, job_id: str) -> JobRecord | None:
        with self.store.transaction() as session:
            row = session.get(RegradeJob, job_id)
            if row is None:
                return None
            counts = {
                status: int(n)
                for status, n in session.execute(
                    select(Grading.status, func.count())
                    .where(Grading.job_id == job_id)
                    .group_by(Grading.status)
                )
            }
            return JobRecord(
                id=row.id,
                problem=row.problem,
                problem_hash=row.problem_hash,
                problem_revision=row.problem_revision,
                force=row.force,
                notify=row.notify,
                batch=row.batch,
                state=row.state,
                total=row.total,
                queued=row.queued,
                graded=counts.get(GRADING_DONE, 0),
                failed=counts.get(GRADING_FAILED, 0),
                in_flight=counts.get(GRADING_QUEUED, 0),
                requested_by=row.requested_by,
                created_at=row.created_at,
                finished_at=row.finished_at,
            )

    def running_jobs(self) -> Sequence[str]:
        """Ids of the jobs still queueing regrades, oldest first."""
        query = (
            select(RegradeJob.id)
            .where(RegradeJob.state == JOB_RUNNING)
            .order_by(RegradeJob.created_at, RegradeJob.id)
        )
        with self.store.transaction() as session:
            return list(session.scalars(query))
