"""The queue and the grading attempts of submissions: every status change is a conditional UPDATE
(``judge.store.repository`` lists them), so a submission's result is written exactly once.
``Store.attempts``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    delete,
    func,
    or_,
    select,
    update,
)

from judge.store.database import Database
from judge.store.eventlog import fold
from judge.store.models import (
    GradingNode,
    Submission,
    SubmissionEvent,
    utcnow,
)
from judge.store.records import (
    Claim,
    Deferred,
    NodeState,
    Status,
)
from judge.store.rows import Refused, lock_owner, owner_of, status_counts


class Attempts:
    """Claims of queued submissions, their results, and the work of grading nodes that stopped."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def oldest_queued_age(self) -> float:
        """Seconds since the oldest queued submission was created (0 when none is queued)."""
        query = select(func.min(Submission.created_at)).where(Submission.status == Status.QUEUED.value)
        with self.db.transaction() as session:
            oldest = session.scalar(query)
        if oldest is None:
            return 0.0
        if oldest.tzinfo is None:  # SQLite's MIN() bypasses the column type: naive UTC
            oldest = oldest.replace(tzinfo=UTC)
        return max(0.0, (utcnow() - oldest).total_seconds())

    def unfinished(self) -> list[str]:
        """Ids of queued submissions, oldest first."""
        query = (
            select(Submission.id)
            .where(Submission.status == Status.QUEUED.value)
            .order_by(Submission.created_at, Submission.id)
        )
        with self.db.transaction() as session:
            return list(session.scalars(query))

    def recover(self) -> list[str]:
        """Queue again what was running when its grader died; then every queued id, oldest first.

        Only for a dispatcher that knows no other grader is alive (the in-process one, at start).
        """
        with self.db.transaction() as session:
            session.execute(
                update(Submission)
                .where(Submission.status == Status.RUNNING.value)
                .values(status=Status.QUEUED.value)
            )
        return self.unfinished()

    def claim(self, submission_id: str, node: str | None = None) -> Claim | None:
        """``queued -> running`` for one grader; None when it is not queued (taken, finished, unknown).

        ``node``: the grading node that takes it (distributed dispatch), recorded so that its work is
        queued again if it dies. The earlier attempt's progress events are dropped: a stream shows the
        attempt that counts.
        """
        claimed = self.claim_within(submission_id, node, None)
        assert not isinstance(claimed, Deferred)
        return claimed

    def claim_within(
        self, submission_id: str, node: str | None, gradings_cap: int | None
    ) -> Claim | Deferred | None:
        """``claim``, unless its owner already has ``gradings_cap`` gradings running (on any node): then
        Deferred, and it stays queued. The claim is written first and the owner's running gradings
        counted after it in the same transaction (under an advisory lock per owner on PostgreSQL), so
        nodes claiming at once cannot pass the cap together."""
        try:
            with self.db.transaction() as session:
                claimed = session.execute(
                    update(Submission)
                    .where(Submission.id == submission_id, Submission.status == Status.QUEUED.value)
                    .values(
                        status=Status.RUNNING.value,
                        attempts=Submission.attempts + 1,
                        started_at=utcnow(),
                        node=node,
                    )
                    .returning(Submission.attempts, Submission.key_id, Submission.client_address)
                ).first()
                if claimed is None:
                    return None
                attempt, key_id, address = claimed
                owner = owner_of(key_id, address)
                if gradings_cap is not None and owner is not None:
                    lock_owner(self.db.dialect, session, key_id, address)
                    running = status_counts(session, owner).get(Status.RUNNING.value, 0)
                    if running > gradings_cap:
                        raise Refused(Deferred(running - 1))
                session.execute(delete(SubmissionEvent).where(SubmissionEvent.submission_id == submission_id))
                return Claim(submission_id, int(attempt))
        except Refused as refused:
            assert isinstance(refused.outcome, Deferred)
            return refused.outcome

    def _settle(self, claim: Claim, values: dict[str, Any], final: tuple[str, dict[str, Any]] | None) -> bool:
        with self.db.transaction() as session:
            done = session.scalar(
                update(Submission)
                .where(
                    Submission.id == claim.submission_id,
                    Submission.status == Status.RUNNING.value,
                    Submission.attempts == claim.attempt,
                )
                .values(**values)
                .returning(Submission.id)
            )
            if done is None:
                return False
            if final is not None:
                # The attempt's progress events are folded into the final one (``eventlog``).
                attempt = (SubmissionEvent.submission_id == claim.submission_id) & (
                    SubmissionEvent.attempt == claim.attempt
                )
                earlier = session.execute(
                    select(SubmissionEvent.id, SubmissionEvent.kind, SubmissionEvent.data)
                    .where(attempt)
                    .order_by(SubmissionEvent.id)
                ).all()
                if earlier:
                    session.execute(delete(SubmissionEvent).where(attempt))
                kind, data = final
                session.add(
                    SubmissionEvent(
                        submission_id=claim.submission_id,
                        attempt=claim.attempt,
                        kind=kind,
                        data=fold(data, [(i, k, d) for i, k, d in earlier], values.get("result")),
                        created_at=utcnow(),
                    )
                )
            return True

    def finish(
        self,
        claim: Claim,
        result: dict[str, Any],
        verdict: str,
        manifest: dict[str, Any],
        final: tuple[str, dict[str, Any]],
    ) -> bool:
        """Store the result and the final event together: ``running -> done``. False (nothing written)
        when the claim is stale (another attempt owns the submission, or it is finished)."""
        values = {
            "status": Status.DONE.value,
            "result": result,
            "verdict": verdict,
            "manifest": manifest,
            "finished_at": utcnow(),
            "client_address": None,  # kept only while the per-client cap counts it (unfinished)
        }
        return self._settle(claim, values, final)

    def fail(self, claim: Claim, error: str, final: tuple[str, dict[str, Any]]) -> bool:
        """The judge could not grade it: ``running -> failed`` with the reason (no user data in it)."""
        values = {
            "status": Status.FAILED.value,
            "error": error,
            "finished_at": utcnow(),
            "client_address": None,
        }
        return self._settle(claim, values, final)

    def release(self, claim: Claim, *, refund: bool = False) -> bool:
        """Give the submission back to the queue (``running -> queued``) for another attempt. ``refund``:
        the attempt does not count (the judge had no capacity to grade it: it never really began), so the
        next claim has the same attempt number; the caller writes nothing more with ``claim``."""
        values: dict[str, Any] = {"status": Status.QUEUED.value}
        if refund:
            values["attempts"] = Submission.attempts - 1
        return self._settle(claim, values, None)

    def release_node(self, node: str, submission_id: str | None = None) -> list[str]:
        """``running -> queued`` for the work ``node`` holds (or only ``submission_id`` of it): the node
        hands it back. The attempt number stays, so a late result of the handed-back attempt is refused."""
        conditions = [Submission.status == Status.RUNNING.value, Submission.node == node]
        if submission_id is not None:
            conditions.append(Submission.id == submission_id)
        with self.db.transaction() as session:
            return list(
                session.scalars(
                    update(Submission)
                    .where(*conditions)
                    .values(status=Status.QUEUED.value, node=None, enqueued_at=utcnow())
                    .returning(Submission.id)
                )
            )

    def held_by(self, node: str) -> list[str]:
        """The submissions ``node`` is grading now (``running`` claims recorded with its name)."""
        running = Submission.status == Status.RUNNING.value
        query = select(Submission.id).where(running, Submission.node == node)
        with self.db.transaction() as session:
            return list(session.scalars(query))

    def reclaim_lost(self, cutoff: datetime) -> list[str]:
        """Queue again (``running -> queued``) what nodes hold whose last heartbeat is older than
        ``cutoff`` (or that stopped without handing it back); mark those nodes ``lost``. The ids, to be
        published again."""
        gone = select(GradingNode.name).where(
            or_(
                GradingNode.last_seen < cutoff,
                GradingNode.state.in_([NodeState.STOPPED.value, NodeState.LOST.value]),
            )
        )
        with self.db.transaction() as session:
            ids = list(
                session.scalars(
                    update(Submission)
                    .where(Submission.status == Status.RUNNING.value, Submission.node.in_(gone))
                    .values(status=Status.QUEUED.value, node=None, enqueued_at=utcnow())
                    .returning(Submission.id)
                    .execution_options(synchronize_session=False)
                )
            )
            session.execute(
                update(GradingNode)
                .where(
                    GradingNode.last_seen < cutoff,
                    GradingNode.state.not_in([NodeState.STOPPED.value, NodeState.LOST.value]),
                )
                .values(state=NodeState.LOST.value)
            )
        return ids

    def requeue_stale(self, cutoff: datetime, limit: int) -> list[str]:
        """Up to ``limit`` queued submissions (oldest first) whose queue message was last published before
        ``cutoff`` (or never, by creation time); their publish time becomes now. The ids, to publish."""
        last = func.coalesce(Submission.enqueued_at, Submission.created_at)
        oldest = (
            select(Submission.id)
            .where(Submission.status == Status.QUEUED.value, last < cutoff)
            .order_by(Submission.created_at, Submission.id)
            .limit(limit)
        )
        with self.db.transaction() as session:
            return list(
                session.scalars(
                    update(Submission)
                    .where(
                        Submission.id.in_(oldest.scalar_subquery()),
                        Submission.status == Status.QUEUED.value,
                        last < cutoff,
                    )
                    .values(enqueued_at=utcnow())
                    .returning(Submission.id)
                    .execution_options(synchronize_session=False)
                )
            )
